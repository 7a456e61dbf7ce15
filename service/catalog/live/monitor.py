"""The request path's view of live prices: the shared snapshots, held in memory.

The catalog layers prices synchronously (``CatalogService(price_layer=...)``) and
``GET /v1/providers`` reads status synchronously, so neither may touch Redis or a cloud
API. :class:`LivePriceMonitor` keeps the last snapshot and refresh status per provider in
memory; :meth:`LivePriceMonitor.load` re-reads them from the shared store (at start-up,
and whenever the shared catalog generation moves, which the refresh job bumps after it
publishes). Everything else is a pure function of that memory and the clock, so the
age and the ``stale`` flag are always current even between loads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from service.catalog.live.adapter import Clock, parse_iso_utc, utc_now
from service.catalog.live.merge import merge_prices
from service.catalog.live.status import LivePriceState, live_state, source_availability
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore, RefreshStatus
from service.catalog.live.validate import validate_prices
from service.catalog.models import InstanceType, LivePriceSource, Price
from service.runtime.metrics import CORRUPT_ENTRIES

log = logging.getLogger(__name__)

CLOCK_SKEW_S = 300.0
"""How far in the future a snapshot's ``fetched_at`` may be (clocks of two hosts)."""


class LivePriceMonitor:
    """In-memory live snapshots and statuses of a set of providers."""

    def __init__(
        self,
        store: PriceSnapshotStore,
        sources: Mapping[str, LivePriceSource | None],
        ttl_s: float,
        *,
        max_age_s: float | None = None,
        clock: Clock = utc_now,
    ) -> None:
        """``sources`` maps every provider name to its live source (``None`` when the
        provider has no adapter); see :func:`service.catalog.live.discovery.discover_live_jobs`."""
        self._store = store
        self._sources = dict(sources)
        self._ttl_s = ttl_s
        self._max_age_s = max_age_s
        self._clock = clock
        self._available = {name: source_availability(s) for name, s in self._sources.items()}
        self._snapshots: dict[str, LiveSnapshot] = {}
        self._statuses: dict[str, RefreshStatus] = {}

    async def load(self, providers: Iterable[str] | None = None) -> None:
        """Re-read snapshots and statuses from the shared store (never raises).

        What is read is checked like any outside data (:meth:`snapshot_problem`): a
        snapshot that fails is ignored and counted, as if nothing were published. A key
        that is gone stops being used; an unreadable store leaves what is in memory, last
        good, in place."""
        for name in self._sources if providers is None else providers:
            snapshot, reachable = await self._store.read_checked(name)
            if snapshot is not None:
                problem = self.snapshot_problem(name, snapshot)
                if problem is not None:
                    CORRUPT_ENTRIES.labels(kind="live_snapshot").inc()
                    log.warning("ignoring the shared live snapshot of %s: %s", name, problem)
                    snapshot = None
            if snapshot is not None:
                self._snapshots[name] = snapshot
            elif reachable:
                self._snapshots.pop(name, None)
            status = await self._store.read_status(name)
            if status is not None:
                self._statuses[name] = status
            elif self._store.reachable:
                self._statuses.pop(name, None)

    def snapshot_problem(self, provider: str, snapshot: LiveSnapshot) -> str | None:
        """Why a snapshot read from the shared store cannot be used, or ``None``."""
        if provider not in self._sources or snapshot.provider != provider:
            return f"it names provider {snapshot.provider!r}"
        try:
            fetched = parse_iso_utc(snapshot.fetched_at)
        except ValueError:
            return f"fetched_at {snapshot.fetched_at!r} is not a time"
        if (fetched - self._clock()).total_seconds() > CLOCK_SKEW_S:
            return f"fetched_at {snapshot.fetched_at} is in the future"
        return None

    async def changed(self) -> bool:
        """True when the shared store no longer holds what this process serves (a key
        deleted, a snapshot published without a generation bump): one small read per
        provider, made by the background watch, never by a request."""
        for name in self._sources:
            marker, reachable = await self._store.version_checked(name)
            if not reachable:
                return False
            held = self._snapshots.get(name)
            if held is None:
                if marker is not None:
                    return True
            elif marker is None or (marker.version, marker.fingerprint) != (
                held.version,
                held.fingerprint,
            ):
                return True
        return False

    def snapshot(self, provider: str) -> LiveSnapshot | None:
        return self._snapshots.get(provider)

    def price_layer(
        self,
        provider: str,
        prices: Sequence[Price],
        instances: Sequence[InstanceType] | None = None,
    ) -> Sequence[Price]:
        """A ``CatalogService`` price layer: live prices over the provider's own.

        With the provider's ``instances``, every live row is checked by the refresh
        job's own rules (:func:`service.catalog.live.validate.validate_prices`: CNY, positive,
        plausible against the reference range, a type the catalog knows) and must be a
        live, non-estimated row; rows that fail are dropped and counted."""
        live = self._snapshots.get(provider)
        if live is not None and instances is not None:
            live = self._checked(live, instances)
        merged, _ = merge_prices(
            prices, live, self._clock(), self._ttl_s, max_age_s=self._max_age_s
        )
        return merged

    def _checked(self, live: LiveSnapshot, instances: Sequence[InstanceType]) -> LiveSnapshot:
        rows = [p for p in live.prices if p.price_source == "live" and not p.estimated]
        kept, _ = validate_prices(rows, {row.instance_type: row for row in instances})
        dropped = len(live.prices) - len(kept)
        if not dropped:
            return live
        CORRUPT_ENTRIES.labels(kind="live_price").inc(dropped)
        log.warning(
            "%d of %d shared live prices of %s failed validation and are not used",
            dropped,
            len(live.prices),
            live.provider,
        )
        return LiveSnapshot(
            provider=live.provider,
            fetched_at=live.fetched_at,
            prices=kept,
            errors=live.errors,
            regions=live.regions,
            version=live.version,
            fingerprint=live.fingerprint,
        )

    def stale(self, provider: str) -> bool:
        """True while ``provider``'s live prices are served past their TTL."""
        _, is_stale = merge_prices(
            (), self._snapshots.get(provider), self._clock(), self._ttl_s, max_age_s=self._max_age_s
        )
        return is_stale

    def info(self, provider: str) -> LivePriceState:
        """Status for ``GET /v1/providers``."""
        available = self._available.get(provider, (False, "provider has no live price adapter"))
        return live_state(
            available,
            self._snapshots.get(provider),
            self._statuses.get(provider),
            self._clock(),
            self._ttl_s,
        )
