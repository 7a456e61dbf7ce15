"""``POST /v1/estimate``: memory, compute, time and host for one workload.

Sizing is CPU-only arithmetic that takes microseconds, so the handler is synchronous and
runs on the event loop (``sync_to_thread=False``): a thread hop would cost more than the
work. Input errors below HTTP (unknown preset or accelerator, inconsistent architecture)
are :class:`~service.runtime.errors.InputError`, which the app maps to a 400 naming the field.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, post
from litestar.params import JSONBody

from service.api import examples
from service.api.body import strict_json_body
from service.api.state import SuanliDep
from service.sizing import EstimateResponse, Placement, Workload, estimate


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


class EstimateController(Controller):
    path = "/v1/estimate"
    tags = ["estimate"]
    guards = [strict_json_body]  # every handler with a JSON `data` body has it (tested)

    @post(
        status_code=200,
        summary="Estimate memory, compute, time and host needs of a deep-learning job",
        operation_id="estimate",
        sync_to_thread=False,
        opt={"examples": examples.ESTIMATE},
    )
    def estimate(self, data: JSONBody[EstimateRequest], suanli: SuanliDep) -> EstimateResponse:
        """Size a pre-training, fine-tuning, inference or preprocessing job.

        Memory is per device in GiB (2^30 bytes) and its parts add up to
        `per_device_gib`. Without a `placement` the memory is for one device and `time` is
        null; with one, the ZeRO stage (training) or tensor-parallel degree (inference) is
        the smallest that fits unless given, and `time` uses the accelerator's dense peak
        and an MFU prior. Every prior used is stated in `assumptions`.
        """
        return estimate(data.workload, data.placement, suanli.models, suanli.accelerators)
