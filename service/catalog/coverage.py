"""Per-provider coverage: how much of a catalog is placed, priced, estimated or unknown.

One pure function over a loaded :class:`~service.catalog.aggregate.ProviderCatalog`, shared by
``GET /v1/providers`` and the README's provider table, so both report the same counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.catalog.aggregate import ProviderCatalog


@dataclass(frozen=True, slots=True)
class Coverage:
    rows: int
    accelerated: int
    accelerated_with_regions: int
    priced: int
    """Instance types with at least one confirmed (not estimated) price."""
    estimated: int
    """Instance types whose only on-demand or monthly prices are estimates."""
    unknown: int
    """Instance types with neither: their price is unknown."""
    incomplete: tuple[tuple[str, tuple[str, ...]], ...]
    """(instance type, fields the planner needs but no source confirmed)."""


def coverage(catalog: ProviderCatalog) -> Coverage:
    confirmed = {
        p.instance_type for p in catalog.prices if not p.estimated and p.price_per_hour is not None
    }
    estimated = {
        p.instance_type
        for p in catalog.prices
        if p.estimated and p.billing != "spot" and p.instance_type not in confirmed
    }
    rows = catalog.instance_types
    accelerated = [r for r in rows if not r.is_cpu_only]
    return Coverage(
        rows=len(rows),
        accelerated=len(accelerated),
        accelerated_with_regions=sum(1 for r in accelerated if r.regions),
        priced=len(confirmed),
        estimated=len(estimated),
        unknown=sum(1 for r in rows if r.instance_type not in confirmed | estimated),
        incomplete=tuple((r.instance_type, r.missing_fields) for r in rows if r.missing_fields),
    )
