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

from collections.abc import Iterable, Mapping, Sequence

from service.live.adapter import Clock, utc_now
from service.live.merge import merge_prices
from service.live.status import LivePriceState, live_state, source_availability
from service.live.store import LiveSnapshot, PriceSnapshotStore, RefreshStatus
from service.providers import LivePriceSource, Price


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
        provider has no adapter); see :func:`service.live.discovery.discover_live_jobs`."""
        self._store = store
        self._sources = dict(sources)
        self._ttl_s = ttl_s
        self._max_age_s = max_age_s
        self._clock = clock
        self._available = {name: source_availability(s) for name, s in self._sources.items()}
        self._snapshots: dict[str, LiveSnapshot] = {}
        self._statuses: dict[str, RefreshStatus] = {}

    async def load(self, providers: Iterable[str] | None = None) -> None:
        """Re-read snapshots and statuses from the shared store (never raises: an
        unreadable store leaves what is in memory, last good, in place)."""
        for name in self._sources if providers is None else providers:
            snapshot = await self._store.read(name)
            if snapshot is not None:
                self._snapshots[name] = snapshot
            status = await self._store.read_status(name)
            if status is not None:
                self._statuses[name] = status

    def snapshot(self, provider: str) -> LiveSnapshot | None:
        return self._snapshots.get(provider)

    def price_layer(self, provider: str, prices: Sequence[Price]) -> Sequence[Price]:
        """A ``CatalogService`` price layer: live prices over the provider's own."""
        merged, _ = merge_prices(
            prices,
            self._snapshots.get(provider),
            self._clock(),
            self._ttl_s,
            max_age_s=self._max_age_s,
        )
        return merged

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
