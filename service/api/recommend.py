"""``POST /v1/recommend``: plan, price and rank offers; cached by request + catalog."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, Response, post
from litestar.datastructures import ResponseHeader
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec

from service.api.body import decode_json_body
from service.cache import request_key
from service.errors import ErrorBody, InputError
from service.planning.recommend import PlanContext, recommend
from service.planning.schema import Lang, RecommendRequest, RecommendResponse
from service.state import STATE_KEY, Suanli

CACHE_HEADER = "X-Suanli-Cache"
_encoder = msgspec.json.Encoder()


def negotiate_lang(explicit: Lang | None, accept_language: str | None) -> Lang:
    """``lang`` when given, else the first of zh/en in ``Accept-Language``, else zh."""
    if explicit is not None:
        return explicit
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("en"):
            return "en"
        if tag.startswith("zh"):
            return "zh"
    return "zh"


MAX_ACCEPT_LANGUAGE = 256


def _accept_language(request: Request[Any, Any, Any]) -> str | None:
    value = request.headers.get("accept-language")
    if value is not None and len(value) > MAX_ACCEPT_LANGUAGE:
        raise InputError(
            "accept_language",
            f"Expected `str` of length <= {MAX_ACCEPT_LANGUAGE}",
            source="header",
        )
    return value


def encoded_json_response(body: bytes, headers: dict[str, str]) -> Response[Any]:
    """A response around JSON the cache already holds encoded (no second encode)."""
    return Response(content=body, media_type="application/json", headers=headers)


class RecommendController(Controller):
    path = "/v1/recommend"
    tags = ["recommend"]

    @post(
        status_code=200,
        summary="Recommend cloud servers for a deep-learning job",
        raises=[ValidationException],
        opt={"body": RecommendRequest},
        response_headers=[
            ResponseHeader(
                name=CACHE_HEADER,
                description="hit: served from the cache (same request, same catalog); miss",
                documentation_only=True,
            )
        ],
        responses={
            422: ResponseSpec(
                data_container=ErrorBody,
                generate_examples=False,
                description="The request contradicts itself (e.g. spot-only but not "
                "interruptible); the body names the field.",
            )
        },
    )
    async def recommend(self, request: Request[Any, Any, Any]) -> Response[RecommendResponse]:
        """Rank real offers of every loaded provider for the workload.

        Options carry price (``null`` = unknown, ranked after priced ones), its source and
        date, estimated hours and total cost, memory fit and headroom, Pareto marking,
        reasons and warnings in ``lang`` (default: the ``Accept-Language`` header, then
        zh). With nothing left after the constraints, the answer is 200 with empty
        ``options``, the explanation in ``warnings`` and the nearest option per relaxed
        constraint in ``relax``. The ``X-Suanli-Cache`` header says ``hit`` or ``miss``.
        """
        # The hot route of the service: it decodes its own body once, strictly, and
        # reads the app state directly, instead of litestar's kwargs and DI machinery.
        data = await decode_json_body(request, RecommendRequest)
        suanli: Suanli = request.app.state[STATE_KEY]
        lang = negotiate_lang(data.lang, _accept_language(request))
        canonical = msgspec.structs.replace(data, lang=lang)
        snapshot = suanli.catalog.snapshot
        ctx = PlanContext(
            snapshot=snapshot,
            accelerators=suanli.accelerators,
            models=suanli.models,
            stale_live=suanli.stale_live_providers(),
            memo=suanli.placements,
        )

        def compute() -> bytes:
            return _encoder.encode(recommend(canonical, ctx, lang))

        body, hit = await suanli.cache.get_or_compute(
            request_key(canonical, ctx.fingerprint), compute
        )
        cache = "hit" if hit else "miss"
        request.scope.setdefault("state", {})["cache"] = cache
        return encoded_json_response(body, {CACHE_HEADER: cache})
