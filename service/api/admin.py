"""Admin routes: anything that changes server state. Closed unless a key is configured.

``Authorization: Bearer <SUANLI_API_KEY>`` is compared in constant time. Without a
configured key the routes answer 404, as if they did not exist: never open by default.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from typing import Annotated, Any

import msgspec
from litestar import Controller, post
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, NotFoundException
from litestar.handlers.base import BaseRouteHandler

from service.api.state import STATE_KEY, Suanli, SuanliDep
from service.catalog.aggregate import CatalogSnapshot
from service.catalog.overrides import OverrideError, load_overrides
from service.runtime.catalog_sync import ReloadOutcome
from service.runtime.metrics import CATALOG_RELOADS

log = logging.getLogger(__name__)


async def require_api_key(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """Guard: 404 when no key is configured, 401 unless the bearer token matches.

    ``async`` although it awaits nothing: litestar runs a synchronous guard in its
    thread pool, and that hand-off (GIL, queue, wake-up) cost more than every other
    step of a refused admin request together."""
    suanli: Suanli = connection.app.state[STATE_KEY]
    expected = suanli.settings.api_key
    if not expected:
        raise NotFoundException(detail="Not Found")
    scheme, _sep, token = connection.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        token.strip().encode(), expected.encode()
    ):
        raise NotAuthorizedException(
            detail="admin route: send Authorization: Bearer <SUANLI_API_KEY>",
            headers={"WWW-Authenticate": 'Bearer realm="suanli-admin"'},
        )


class ReloadResult(msgspec.Struct, frozen=True, kw_only=True):
    """``POST /v1/admin/reload`` answer: what was reloaded, or why the previous catalog was
    kept."""

    status: Annotated[
        str,
        msgspec.Meta(
            description=(
                "`reloaded` when every worker of every replica now serves the new catalog; "
                "`partially_applied` when some did not within the wait (see not_applied); "
                "`kept_previous` when the new catalog or overrides were unusable."
            )
        ),
    ]
    fingerprint: Annotated[str, msgspec.Meta(description="Fingerprint of the catalog now in use.")]
    previous_fingerprint: Annotated[
        str, msgspec.Meta(description="Fingerprint of the catalog before the reload.")
    ]
    providers: Annotated[
        list[str], msgspec.Meta(description="Providers in the catalog now in use.")
    ]
    offers: Annotated[
        int,
        msgspec.Meta(
            description="Offers (instance type x region x billing) in the catalog now in use."
        ),
    ]
    errors: Annotated[
        list[str],
        msgspec.Meta(
            description="Problems found (bad override rows, failing providers); empty when none."
        ),
    ]
    workers: Annotated[
        int,
        msgspec.Meta(description="Worker processes (all replicas) that were asked to reload."),
    ] = 1
    applied: Annotated[
        int,
        msgspec.Meta(description="Of those, how many serve the new catalog now."),
    ] = 1
    not_applied: Annotated[
        list[str],
        msgspec.Meta(description="The workers that did not (yet) apply it, and what they hold."),
    ] = msgspec.field(default_factory=list)


class AdminController(Controller):
    path = "/v1/admin"
    tags = ["admin"]
    guards = [require_api_key]

    @post(
        "/reload",
        status_code=200,
        summary="Reload catalogs and price overrides",
        operation_id="reloadCatalogs",
        raises=[NotAuthorizedException, NotFoundException],
    )
    async def reload(self, suanli: SuanliDep) -> ReloadResult:
        """Re-read every provider's catalog and the override file, in every worker of
        every replica; answers when all of them applied it, or says which did not. A
        reload that fails (bad override file, every provider failing) keeps the previous
        catalog."""
        previous = suanli.catalog.snapshot
        errors: list[str] = []
        overrides = None
        path = suanli.settings.price_overrides
        if path:
            try:
                overrides = load_overrides(path)
            except OverrideError as exc:
                errors.append(str(exc))
        if errors:
            CATALOG_RELOADS.labels(trigger="admin", outcome="rejected").inc()
            return _result("kept_previous", previous, previous.fingerprint, errors)
        snapshot = await asyncio.to_thread(suanli.catalog.load, overrides)
        status = "reloaded" if snapshot is not previous else "kept_previous"
        errors.extend(snapshot.warnings if status == "reloaded" else suanli.catalog.last_rejected)
        CATALOG_RELOADS.labels(trigger="admin", outcome=status).inc()
        outcome = await _spread(suanli)
        if status == "reloaded" and outcome.not_applied:
            status = "partially_applied"
        return _result(status, snapshot, previous.fingerprint, errors, outcome)


async def _spread(suanli: Suanli) -> ReloadOutcome:
    """Publish the change to every worker and wait (bounded) for their reports."""
    settings = suanli.settings
    wait_s = min(settings.request_timeout_s / 2, max(2.0, 3 * settings.refresh_interval_s + 1))
    try:
        generation = await suanli.publish_catalog_change()
        return await suanli.sync.wait_applied(generation, wait_s)
    except Exception as exc:
        log.warning("reload not shared with the other workers: %s", type(exc).__name__)
        return ReloadOutcome(
            generation=0,
            workers=0,
            applied=0,
            not_applied=("other workers: the shared store is unreachable, they were not told",),
        )


def _result(
    status: str,
    snapshot: CatalogSnapshot,
    previous: str,
    errors: list[str],
    outcome: ReloadOutcome | None = None,
) -> ReloadResult:
    return ReloadResult(
        status=status,
        fingerprint=snapshot.fingerprint,
        previous_fingerprint=previous,
        providers=[p.name for p in snapshot.providers],
        offers=len(snapshot.offers),
        errors=errors,
        workers=outcome.workers if outcome else 1,
        applied=outcome.applied if outcome else 0,
        not_applied=list(outcome.not_applied) if outcome else [],
    )
