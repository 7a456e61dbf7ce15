"""Admin routes: anything that changes server state. Closed unless a key is configured.

``Authorization: Bearer <SUANLI_API_KEY>`` is compared in constant time. Without a
configured key the routes answer 404, as if they did not exist: never open by default.
"""

from __future__ import annotations

import asyncio
import hmac
from typing import Annotated, Any

import msgspec
from litestar import Controller, post
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, NotFoundException
from litestar.handlers.base import BaseRouteHandler

from service.catalog import CatalogSnapshot
from service.metrics import CATALOG_RELOADS
from service.overrides import OverrideError, load_overrides
from service.state import STATE_KEY, Suanli, SuanliDep


def require_api_key(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard: 404 when no key is configured, 401 unless the bearer token matches."""
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
            description="`reloaded`, or `kept_previous` when the new catalog or the overrides "
            "were unusable."
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
        """Re-read every provider's catalog and the override file. A reload that fails
        (bad override file, every provider failing) keeps the previous catalog."""
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
        await suanli.publish_catalog_change()
        return _result(status, snapshot, previous.fingerprint, errors)


def _result(
    status: str, snapshot: CatalogSnapshot, previous: str, errors: list[str]
) -> ReloadResult:
    return ReloadResult(
        status=status,
        fingerprint=snapshot.fingerprint,
        previous_fingerprint=previous,
        providers=[p.name for p in snapshot.providers],
        offers=len(snapshot.offers),
        errors=errors,
    )
