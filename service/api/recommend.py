"""``POST /v1/recommend``: plan, price and rank offers; cached by request + catalog.

The product's hot route is a raw ASGI handler inside litestar: routing, middleware
(request id, rate limit, metrics), guards and exception handlers all still apply, but the
request skips litestar's kwargs/DI layer and ``Response`` building. Measured on the
2-core build machine, a POST through that layer costs about twice a GET, while a raw
handler answers at ~0.97x ``/healthz``; a cache hit here is a dictionary or Redis lookup,
so the layer was most of its cost. The body is decoded once with the same strict rules
as every other JSON body (``service.api.body``), errors are the same exceptions (so the
same error shape), and the operation is documented from the same msgspec types
(``OPENAPI`` below, merged by :func:`service.api.openapi.finish_contract`). A body
answered from the cache once — same bytes, Content-Type and Accept-Language — is not
decoded again (:class:`service.runtime.cache.DecodedBodies`): a repeated request goes
straight to the cache. A body seen once is not kept: in a stream of distinct bodies
every decoded request kept would outlive the young generation for nothing (2 of the
5.5 objects per request that reached the old generation under the benchmark's
distinct-tokens load, measured with ``gc.callbacks``).
"""

from __future__ import annotations

import msgspec
from litestar import asgi
from litestar.exceptions import ValidationException
from litestar.types import HTTPScope, Receive, Send

from service.api import examples
from service.api.answer_quality import AnswerQuality
from service.api.body import declared_lang, decode_json, zh_message
from service.api.raw_json import JsonHeaders, json_headers, read_body, refuse_method
from service.api.state import STATE_KEY, Suanli
from service.catalog.aggregate import CatalogSnapshot
from service.planning.recommend import PlanContext, recommend
from service.planning.schema import Lang, RecommendRequest, RecommendResponse
from service.runtime.cache import answer_fingerprint, request_digest, request_key
from service.runtime.errors import InputError, accepted_lang
from service.runtime.observability import send_json

PATH = "/v1/recommend"
CACHE_HEADER = "X-Suanli-Cache"
MAX_ACCEPT_LANGUAGE = 256
_encoder = msgspec.json.Encoder()
QUALITY = AnswerQuality()
"""Process-wide, like the metrics it feeds (labels are keyed by catalog fingerprint)."""

SUMMARY = "Recommend cloud servers for a deep-learning job"
DESCRIPTION = """Rank real offers of every loaded provider for the workload.

Options carry price (`null` = unknown, ranked after priced ones), its source and date,
estimated hours and total cost, memory fit and headroom, Pareto marking, reasons and
warnings in `lang` (default: the `Accept-Language` header, then zh). With nothing left
after the constraints, the answer is 200 with empty `options`, the explanation in
`warnings` and the nearest option per relaxed constraint in `relax`; a request that
contradicts itself is a 422. The `X-Suanli-Cache` header says `hit` or `miss`."""

OPENAPI = {
    "path": PATH,
    "method": "post",
    "operation_id": "recommend",
    "tags": ["recommend"],
    "summary": SUMMARY,
    "description": DESCRIPTION,
    "body": RecommendRequest,
    "response": RecommendResponse,
    "response_headers": {
        CACHE_HEADER: "hit: served from the cache (same request, same catalog); miss"
    },
    "examples": examples.RECOMMEND,
    "statuses": {
        "422": "The request contradicts itself (e.g. spot-only but not interruptible); the "
        "body names the field.",
    },
}
"""What :func:`service.api.openapi.finish_contract` writes into the served contract."""


def negotiate_lang(explicit: Lang | None, accept_language: str | None) -> Lang:
    """``lang`` when given, else the first of zh/en in ``Accept-Language``, else zh."""
    if explicit is not None:
        return explicit
    return accepted_lang(accept_language) or "zh"


def error_lang_of(body: bytes, accept_language: str | None) -> Lang:
    """The language of a refused request's error: the one its answer would have been in
    (review 3 R18f: without ``lang`` an answer is Chinese, so its 400 is too). A ``lang``
    the body does not spell right, or an over-long header, counts as not said."""
    declared = declared_lang(body)
    explicit: Lang | None = "zh" if declared == "zh" else "en" if declared == "en" else None
    if accept_language is not None and len(accept_language) > MAX_ACCEPT_LANGUAGE:
        accept_language = None
    return negotiate_lang(explicit, accept_language)


@asgi(PATH, is_mount=False, copy_scope=False, opt={"openapi": OPENAPI})
async def recommend_route(scope: HTTPScope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await refuse_method(scope, send, "POST")
        return
    suanli: Suanli = scope["litestar_app"].state[STATE_KEY]
    headers = json_headers(scope)
    body = await read_body(receive, headers.content_length, suanli.settings.max_body_bytes)
    try:
        await _answer(scope, send, suanli, headers, body)
    except (InputError, ValidationException):
        # told in the language the answer would have had (read on this path only)
        scope.setdefault("state", {})["lang"] = error_lang_of(body, headers.accept_language)
        raise


async def _answer(
    scope: HTTPScope, send: Send, suanli: Suanli, headers: JsonHeaders, body: bytes
) -> None:
    known: Decoded | None = suanli.decoded.get(body, headers.accept_language)
    if known is not None and headers.content_type == known.content_type:
        decoded, fresh = known, False
    else:
        decoded, fresh = _decode(body, headers), True
    snapshot = suanli.catalog.snapshot
    stale = suanli.stale_live_providers()
    key = request_key(decoded.request, answer_fingerprint(snapshot.fingerprint, stale),
                      decoded.digest)  # fmt: skip

    def compute() -> bytes:
        # Built on a miss only: a hit needs the key, not the planner's context.
        result = recommend(decoded.request, _context(suanli, snapshot, stale), decoded.lang)
        QUALITY.computed(key, result)
        return _encoder.encode(result)

    answer, hit = await suanli.cache.get_or_compute(key, compute)
    if hit and fresh:  # a request that repeats: its bytes skip decoding from now on
        suanli.decoded.put(body, headers.accept_language, decoded)
    QUALITY.served(key, answer)
    scope.setdefault("state", {})["cache"] = "hit" if hit else "miss"
    await send_json(send, 200, answer, _HIT if hit else _MISS)


def _context(suanli: Suanli, snapshot: CatalogSnapshot, stale: frozenset[str]) -> PlanContext:
    """The planner's context for a miss: the last one while nothing it holds changed
    (misses in a row share it; a reload or a live price going stale makes another)."""
    ctx = suanli.last_context
    if (
        ctx is None
        or ctx.snapshot is not snapshot
        or ctx.stale_live is not stale
        or ctx.memo is not suanli.placements
        or ctx.accelerators is not suanli.accelerators
        or ctx.models is not suanli.models
    ):
        ctx = suanli.last_context = PlanContext(
            snapshot=snapshot,
            accelerators=suanli.accelerators,
            models=suanli.models,
            stale_live=stale,
            memo=suanli.placements,
        )
    return ctx


_HIT = ((CACHE_HEADER.lower().encode(), b"hit"),)
_MISS = ((CACHE_HEADER.lower().encode(), b"miss"),)


class Decoded(msgspec.Struct, frozen=True):
    """A body decoded, with defaults and the negotiated language filled, and digested."""

    request: RecommendRequest
    lang: Lang
    digest: str
    content_type: str | None
    """The Content-Type it was decoded under (a repeat under another one is re-checked)."""


def _decode(body: bytes, headers: JsonHeaders) -> Decoded:
    data = decode_json(headers.content_type, body, RecommendRequest, f"POST {PATH}")
    lang = negotiate_lang(data.lang, _accept_language(headers.accept_language))
    canonical = data if data.lang == lang else msgspec.structs.replace(data, lang=lang)
    return Decoded(canonical, lang, request_digest(canonical), headers.content_type)


def _accept_language(value: str | None) -> str | None:
    if value is not None and len(value) > MAX_ACCEPT_LANGUAGE:
        message = f"Expected `str` of length <= {MAX_ACCEPT_LANGUAGE}"
        raise InputError("accept_language", message, source="header", zh=zh_message(message))
    return value
