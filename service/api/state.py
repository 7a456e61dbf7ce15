"""The per-app container handlers receive as the ``suanli`` dependency.

``create_app`` builds exactly one :class:`Suanli` and stores it on ``app.state``; handlers
declare a ``suanli: Suanli`` parameter and get it injected. Nothing here is a module
global, so tests can build as many independent apps as they like.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Protocol

from litestar.datastructures import State
from litestar.di import NamedDependency

from service.planning.memo import PlanCache
from service.runtime.cache import DecodedBodies

if TYPE_CHECKING:
    from service.catalog.accelerators import AcceleratorRegistry
    from service.catalog.aggregate import CatalogService
    from service.catalog.live.status import LivePriceState
    from service.hooks.loader import PluginInfo
    from service.runtime.cache import RequestCache, ResilientStore
    from service.runtime.catalog_sync import CatalogSync
    from service.runtime.settings import Settings
    from service.sizing.presets import ModelRegistry


class LivePriceStatusSource(Protocol):
    def info(self, provider: str) -> LivePriceState | None: ...


class Suanli:
    """Everything a request handler needs, built once per app by ``create_app``.

    A plain class on purpose: litestar converts dataclass-typed dependency values field
    by field, which would copy (and try to re-type) the whole container per request.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        accelerators: AcceleratorRegistry,
        models: ModelRegistry,
        catalog: CatalogService,
        cache: RequestCache,
        shared_store: ResilientStore | None = None,
        sync: CatalogSync,
        plugin_report: list[PluginInfo] | None = None,
        live_prices: LivePriceStatusSource | None = None,
    ) -> None:
        self.settings = settings
        self.accelerators = accelerators
        self.models = models
        self.catalog = catalog
        self.cache = cache
        self.shared_store = shared_store
        """The Redis-backed store when ``SUANLI_REDIS_URL`` is set (readiness pings it)."""
        self.sync = sync
        """Shared catalog generation: every worker of every replica watches it."""
        self.plugin_report = plugin_report or []
        self.live_prices = live_prices
        self.placements = PlanCache()
        """Placements shared by this process's requests (see the planner)."""
        self.decoded = DecodedBodies()
        """``/v1/recommend`` bodies that repeated (later repeats skip decoding and hashing)."""
        self._stale: frozenset[str] = frozenset()
        self._stale_checked_at = -math.inf

    async def publish_catalog_change(self) -> int:
        """Tell every other worker that the catalog changed; returns the generation."""
        return await self.sync.publish()

    def stale_live_providers(self) -> frozenset[str]:
        """Providers whose live prices are served past their TTL right now (re-checked at
        most once a second: staleness moves on a scale of minutes, requests per ms)."""
        now = time.monotonic()
        if now - self._stale_checked_at >= 1.0:
            stale = set()
            for catalog in self.catalog.snapshot.providers:
                info = self.live_price_info(catalog.name)
                if info is not None and info.stale:
                    stale.add(catalog.name)
            self._stale = frozenset(stale)
            self._stale_checked_at = now
        return self._stale

    def live_price_info(self, provider: str) -> LivePriceState | None:
        """Live-price status of one provider for ``GET /v1/providers``."""
        return None if self.live_prices is None else self.live_prices.info(provider)


STATE_KEY = "suanli"

SuanliDep = NamedDependency[Suanli]
"""Handler parameter type: ``suanli: SuanliDep`` injects the app's :class:`Suanli`."""


def provide_suanli(state: State) -> Suanli:
    """Litestar dependency provider: the app's :class:`Suanli` container."""
    suanli: Suanli = state[STATE_KEY]
    return suanli
