"""Constraint filters over offers, counting what each constraint removed.

The counts drive the explanation when nothing fits ("regions removed 40 offers; without
that constraint the nearest option would be …"), so every offer that is dropped is
charged to exactly one constraint: the first one, in the order the checks run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from service.providers import ALL_REGIONS, Billing, Offer


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Resolved constraints (names already canonical)."""

    cpu_only: bool
    providers: frozenset[str] | None
    regions: frozenset[str] | None
    accelerators: frozenset[str] | None
    excluded_accelerators: frozenset[str]
    """Accelerators ruled out by ``cuda_required`` (Ascend)."""
    billing: frozenset[Billing]
    max_price_per_hour: float | None

    def reject_reason(self, offer: Offer) -> str | None:
        """The constraint that removes ``offer``, or ``None`` when it passes."""
        row = offer.instance
        if row.is_cpu_only != self.cpu_only:
            return "workload"
        if self.providers is not None and offer.provider not in self.providers:
            return "providers"
        if self.regions is not None and not self._in_regions(offer):
            return "regions"
        if row.accelerator in self.excluded_accelerators:
            return "cuda_required"
        if self.accelerators is not None and row.accelerator not in self.accelerators:
            return "accelerators"
        if offer.billing not in self.billing:
            return "billing"
        if self.max_price_per_hour is not None:
            price = offer.price_per_hour
            if price is None or price > self.max_price_per_hour:
                return "max_price_per_hour"
        return None

    def _in_regions(self, offer: Offer) -> bool:
        assert self.regions is not None
        if offer.region != ALL_REGIONS:
            return offer.region in self.regions
        return any(region in self.regions for region in offer.instance.regions)


def apply_filter(offers: Iterable[Offer], flt: OfferFilter) -> tuple[list[Offer], Counter[str]]:
    """Offers that pass, and how many each constraint removed."""
    kept: list[Offer] = []
    removed: Counter[str] = Counter()
    for offer in offers:
        reason = flt.reject_reason(offer)
        if reason is not None:
            removed[reason] += 1
        else:
            kept.append(offer)
    return kept, removed


def relaxed(flt: OfferFilter, constraint: str) -> OfferFilter:
    """The filter with one user constraint lifted (for "did you mean")."""
    if constraint == "providers":
        return replace(flt, providers=None)
    if constraint == "regions":
        return replace(flt, regions=None)
    if constraint == "accelerators":
        return replace(flt, accelerators=None)
    if constraint == "cuda_required":
        return replace(flt, excluded_accelerators=frozenset())
    if constraint == "max_price_per_hour":
        return replace(flt, max_price_per_hour=None)
    if constraint == "billing":
        return replace(flt, billing=flt.billing | {"on_demand", "monthly"})
    return flt


USER_CONSTRAINTS: Sequence[str] = (
    "providers",
    "regions",
    "accelerators",
    "cuda_required",
    "billing",
    "max_price_per_hour",
)
