"""``POST /v1/estimate``: memory, compute, time and host for one workload.

Sizing is CPU-only arithmetic that takes microseconds, so the route answers on the event
loop (a thread hop would cost more than the work). Like ``/v1/recommend`` it is a raw
ASGI route (:mod:`service.api.raw_json`): litestar's POST handling cost more than the
sizing itself. The body is decoded once with the strict rules of every JSON body and the
answer encoded once; the operation is documented from the same msgspec types
(``OPENAPI``, merged by :func:`service.api.openapi.finish_contract`). Input errors below HTTP
(unknown preset or accelerator, inconsistent architecture) are
:class:`~service.runtime.errors.InputError`, which the app maps to a 400 naming the field.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import asgi
from litestar.types import HTTPScope, Receive, Send

from service.api import examples
from service.api.body import decode_json
from service.api.raw_json import json_headers, read_body, refuse_method
from service.api.state import STATE_KEY, Suanli
from service.runtime.bounded import BoundedDict
from service.runtime.observability import send_json
from service.sizing import EstimateResponse, Placement, ResolvedWorkload, Workload, estimate
from service.sizing.presets import ModelRegistry
from service.sizing.resolve import LENGTH_FIELDS, resolve_workload

PATH = "/v1/estimate"
ALLOW = "OPTIONS, POST"
"""What the route answers (``OPTIONS``: a 204 naming them, as litestar's routes do)."""
_encoder = msgspec.json.Encoder()


class EstimateRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A workload and, optionally, where it runs."""

    workload: Annotated[
        Workload,
        msgspec.Meta(
            description="The job to size: pre-training, fine-tuning, inference or preprocessing "
            "(`kind` selects which)."
        ),
    ]
    placement: Annotated[
        Placement | None,
        msgspec.Meta(
            description="Where it runs (accelerator and count); without it the memory is for one "
            "device and `time` is `null`."
        ),
    ] = None


SUMMARY = "Estimate memory, compute, time and host needs of a deep-learning job"
DESCRIPTION = """Size a pre-training, fine-tuning, inference or preprocessing job.

Memory is per device in GiB (2^30 bytes) and its parts add up to
`per_device_gib`. Without a `placement` the memory is for one device and `time` is
null; with one, the ZeRO stage (training) is the smallest that fits and the
tensor-parallel degree (inference) the one that fits and serves the concurrency
fastest, unless given, and `time` uses the accelerator's dense peak and an MFU prior.
Every prior used is stated in `assumptions`."""

OPENAPI = {
    "path": PATH,
    "method": "post",
    "operation_id": "estimate",
    "tags": ["estimate"],
    "summary": SUMMARY,
    "description": DESCRIPTION,
    "body": EstimateRequest,
    "response": EstimateResponse,
    "examples": examples.ESTIMATE,
    "statuses": {"400": "Bad request syntax or unsupported method"},
}
"""What :func:`service.api.openapi.finish_contract` writes into the served contract."""


@asgi(PATH, is_mount=False, copy_scope=False, opt={"openapi": OPENAPI})
async def estimate_route(scope: HTTPScope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await refuse_method(scope, send, ALLOW)
        return
    suanli: Suanli = scope["litestar_app"].state[STATE_KEY]
    headers = json_headers(scope)
    body = await read_body(receive, headers.content_length, suanli.settings.max_body_bytes)
    where = f"POST {scope.get('root_path', '')}{scope['path']}"
    data = decode_json(headers.content_type, body, EstimateRequest, where)
    answer = estimate(
        data.workload, data.placement, suanli.models, suanli.accelerators, resolve=shared_resolution
    )
    await send_json(send, 200, _encoder.encode(answer))


_RESOLVED: BoundedDict[tuple[ModelRegistry, Workload], ResolvedWorkload] = BoundedDict(1024)


def shared_resolution(workload: Workload, models: ModelRegistry) -> ResolvedWorkload:
    """``resolve_workload``, shared by requests for the same job at other lengths: a
    preset's resolution costs about 20 µs, more than the rest of the estimate, and
    nothing in it depends on the length fields (:meth:`ResolvedWorkload.with_length`,
    which the planner's memo relies on too). Keyed by the workload without them."""
    lengths = {name: None for name in LENGTH_FIELDS if hasattr(workload, name)}
    key = (models, msgspec.structs.replace(workload, **lengths))
    try:
        resolved = _RESOLVED.get(key)
    except TypeError:  # a field that cannot be hashed: resolve it alone
        return resolve_workload(workload, models)
    if resolved is None:
        resolved = resolve_workload(workload, models)
        _RESOLVED.put(key, resolved)
        return resolved
    return resolved.with_length(workload)
