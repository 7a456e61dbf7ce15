"""What ``GET /v1/providers`` says about one provider's live prices.

``enabled`` answers "are live prices in use for this provider": true when this replica
can fetch them (SDK installed, credentials set) or when a snapshot published by another
process (a CronJob with the credentials) is in the shared store. A replica without
credentials still serves the shared live prices, which is how scale-out is meant to
work (one fetch serves all replicas).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from service.catalog.live.merge import snapshot_age_s
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore, RefreshStatus
from service.catalog.models import LivePriceSource


class LivePriceState(msgspec.Struct, frozen=True, kw_only=True):
    """Live price status of one provider."""

    enabled: Annotated[
        bool,
        msgspec.Meta(
            description="True when live prices are in use for this provider (fetched here, or "
            "published by another process into the shared store)."
        ),
    ]
    reason: Annotated[
        str | None,
        msgspec.Meta(
            description="Why live prices are off (no SDK, no credentials, no adapter); `null` "
            "when on."
        ),
    ] = None
    fetched_at: Annotated[
        str | None,
        msgspec.Meta(
            description="When the live prices in use were fetched (ISO 8601 UTC); `null` when "
            "there are none."
        ),
    ] = None
    age_s: Annotated[
        float | None,
        msgspec.Meta(description="Age of those prices in seconds; `null` when there are none."),
    ] = None
    stale: Annotated[
        bool,
        msgspec.Meta(
            description="True when the prices are older than SUANLI_LIVE_PRICE_TTL_S: still "
            "served, marked stale in answers."
        ),
    ] = False
    version: Annotated[
        int | None,
        msgspec.Meta(
            description="Version of the live snapshot in the shared store (increases with every "
            "publication); `null` when none."
        ),
    ] = None
    price_count: Annotated[int, msgspec.Meta(description="Prices in the live snapshot.")] = 0
    last_error: Annotated[
        str | None,
        msgspec.Meta(
            description="The last refresh error; `null` when the last refresh succeeded or none "
            "ran."
        ),
    ] = None
    last_error_at: Annotated[
        str | None,
        msgspec.Meta(description="When that error happened (ISO 8601 UTC); `null` when none."),
    ] = None
    consecutive_failures: Annotated[
        int, msgspec.Meta(description="Refreshes that failed in a row (0 after a success).")
    ] = 0


def live_state(
    available: tuple[bool, str | None],
    snapshot: LiveSnapshot | None,
    status: RefreshStatus | None,
    now: datetime,
    ttl_s: float,
) -> LivePriceState:
    """Combine local availability, the shared snapshot and the last refresh outcome."""
    usable, reason = available
    enabled = usable or snapshot is not None
    age = None if snapshot is None else round(snapshot_age_s(snapshot, now), 3)
    return LivePriceState(
        enabled=enabled,
        reason=None if enabled else reason,
        fetched_at=None if snapshot is None else snapshot.fetched_at,
        age_s=age,
        stale=age is not None and age > ttl_s,
        version=None if snapshot is None else snapshot.version,
        price_count=0 if snapshot is None else len(snapshot.prices),
        last_error=None if status is None else status.last_error,
        last_error_at=None if status is None else status.last_error_at,
        consecutive_failures=0 if status is None else status.consecutive_failures,
    )


def source_availability(source: LivePriceSource | None) -> tuple[bool, str | None]:
    """``live_prices_available()`` guarded: a source that raises counts as unavailable."""
    if source is None:
        return False, "provider has no live price adapter"
    try:
        return source.live_prices_available()
    except Exception as exc:  # a buggy adapter must not break GET /v1/providers
        return False, f"live_prices_available() raised {type(exc).__name__}: {exc}"


async def read_live_state(
    store: PriceSnapshotStore,
    provider: str,
    source: LivePriceSource | None,
    now: datetime,
    ttl_s: float,
) -> LivePriceState:
    """:func:`live_state` for ``provider``, reading the shared store (never raises)."""
    snapshot = await store.read(provider)
    status = await store.read_status(provider)
    return live_state(source_availability(source), snapshot, status, now, ttl_s)
