"""What a recommendation depends on besides the request: the catalog, the registries,
the providers whose live prices are stale, and the planner's memo."""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.aggregate import CatalogSnapshot
from service.planning.memo import PlanCache
from service.sizing.presets import ModelRegistry


@dataclass(frozen=True, slots=True)
class PlanContext:
    snapshot: CatalogSnapshot
    accelerators: AcceleratorRegistry
    models: ModelRegistry
    stale_live: frozenset[str] = frozenset()
    """Providers whose live prices are past their TTL (served, marked stale)."""
    memo: PlanCache | None = None
    """What answers share across requests (see :class:`PlanCache`); ``None``: nothing
    (each answer gets a fresh cache)."""

    @property
    def fingerprint(self) -> str:
        """What the answer depends on besides the request (the cache key's other half)."""
        if not self.stale_live:
            return self.snapshot.fingerprint
        return f"{self.snapshot.fingerprint}:stale={','.join(sorted(self.stale_live))}"

    def cache(self) -> PlanCache:
        """The shared memo, or a fresh one for this answer alone."""
        return self.memo if self.memo is not None else PlanCache()
