"""Catalog changes shared between replicas through Redis.

One replica (an admin reload) or the price-refresh job bumps a *generation* counter in
Redis; every replica checks it every ``SUANLI_REFRESH_INTERVAL_S`` seconds and reloads its
catalog when it moved. Together with cache keys that include the catalog fingerprint,
no replica serves an answer computed on a catalog it no longer holds, and an answer one
replica computed is a hit on another replica holding the same catalog.

Without Redis (single process) the generation lives in memory and nothing is watched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from litestar.stores.base import Store

from service.metrics import CATALOG_RELOADS

log = logging.getLogger(__name__)

GENERATION_KEY = "generation"


class CatalogSync:
    """Publishes and watches the shared catalog generation."""

    def __init__(self, store: Store, interval_s: float) -> None:
        self.store = store
        self.interval_s = interval_s
        self.seen: int | None = None

    async def current(self) -> int | None:
        raw = await self.store.get(GENERATION_KEY)
        try:
            return None if raw is None else int(raw)
        except ValueError:
            return None

    async def publish(self) -> int:
        """Bump the generation so every replica reloads (read-modify-write is fine: a
        lost increment still changes the value every replica compares against)."""
        generation = (await self.current() or 0) + 1
        await self.store.set(GENERATION_KEY, str(generation))
        self.seen = generation
        return generation

    async def remember_current(self) -> None:
        self.seen = await self.current()

    async def check(self, reload: Callable[[], Awaitable[object]]) -> bool:
        """Reload when the shared generation differs from the one this replica holds."""
        generation = await self.current()
        if generation is None or generation == self.seen:
            return False
        log.info("shared catalog generation %s (had %s): reloading", generation, self.seen)
        await reload()
        self.seen = generation
        CATALOG_RELOADS.labels(trigger="shared", outcome="ok").inc()
        return True

    async def watch(self, reload: Callable[[], Awaitable[object]]) -> None:
        """Background loop for the app's lifetime; errors never end it."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.check(reload)
            except Exception:
                log.exception("shared catalog check failed; will retry")
