"""Liveness, readiness and the process's own view of its dependencies."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from service.api.state import SuanliDep


class Health(msgspec.Struct, frozen=True):
    """``GET /healthz`` answer."""

    status: Annotated[
        str, msgspec.Meta(description="Always `ok` while the process serves requests.")
    ]


class Readiness(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /readyz`` answer: ready or not, and why."""

    status: Annotated[
        str,
        msgspec.Meta(
            description="`ready`, or `not_ready` (then `reasons` says why and the status code is "
            "503)."
        ),
    ]
    catalog_loaded: Annotated[
        bool, msgspec.Meta(description="True once the first catalog load finished.")
    ]
    catalog_fingerprint: Annotated[
        str,
        msgspec.Meta(
            description="Fingerprint of the catalog in use (changes when catalogs or prices "
            "change; cache keys include it)."
        ),
    ]
    providers: Annotated[int, msgspec.Meta(description="Providers loaded in the catalog.")]
    redis: Annotated[
        str, msgspec.Meta(description="`ok`, `down` or `not_configured` (no SUANLI_REDIS_URL).")
    ]
    reasons: Annotated[
        list[str], msgspec.Meta(description="Why the replica is not ready; empty when ready.")
    ]


class HealthController(Controller):
    tags = ["health"]
    include_in_schema = True

    @get("/healthz", sync_to_thread=False, summary="Liveness", operation_id="healthz")
    def healthz(self) -> Health:
        """Always 200 while the process serves requests (the liveness probe)."""
        return Health(status="ok")

    @get(
        "/readyz",
        summary="Readiness",
        operation_id="readyz",
        responses={
            503: ResponseSpec(data_container=Readiness, description="Not ready, with reasons")
        },
    )
    async def readyz(self, suanli: SuanliDep) -> Response[Readiness]:
        """200 when the catalog is loaded and, if configured, Redis answers; else 503
        with the reasons. Load balancers stop routing to a replica that is not ready."""
        reasons = []
        if not suanli.catalog.loaded:
            reasons.append("catalog not loaded yet")
        elif not suanli.catalog.snapshot.providers:
            reasons.append("no provider catalog loaded")
        redis = "not_configured"
        if suanli.shared_store is not None:
            redis = "ok" if await suanli.shared_store.ping() else "down"
            if redis == "down":
                # No host, port or driver message: /readyz is public; the log has them.
                reasons.append("shared store unreachable")
        body = Readiness(
            status="not_ready" if reasons else "ready",
            catalog_loaded=suanli.catalog.loaded,
            catalog_fingerprint=suanli.catalog.snapshot.fingerprint,
            providers=len(suanli.catalog.snapshot.providers),
            redis=redis,
            reasons=reasons,
        )
        return Response(body, status_code=HTTP_503_SERVICE_UNAVAILABLE if reasons else HTTP_200_OK)
