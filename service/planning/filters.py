"""Constraint filters over offers, counting what each constraint removed.

The counts drive the explanation when nothing fits ("regions removed 40 offers; without
that constraint the nearest option would be …"), so every offer that is dropped is
charged to exactly one constraint: the first one, in the order the checks run (those
that depend only on the instance type first, then region, billing and price).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from service.catalog.aggregate import OfferGroup
from service.catalog.models import Billing, Offer


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
    min_vcpus: int | None = None
    """Host vCPUs per node at least."""
    min_memory_gib: float | None = None
    """Host RAM per node at least (GiB)."""
    accelerator_count: int | None = None
    """Exactly this many accelerators in total: a type must hold it or divide it."""
    max_accelerators: int | None = None
    single_node: frozenset[str] = frozenset()
    """With ``accelerator_count``: accelerators some passing type holds that many of on
    one node; their multi-node placements are not offered ("8 GPUs" is one 8-GPU node
    when one exists)."""

    def row_reason(self, offer: Offer) -> str:
        """The constraint that removes every offer of this offer's instance type, or ``""``
        (depends only on the row and its provider, so callers memoize it per row)."""
        row = offer.instance
        if row.is_cpu_only != self.cpu_only:
            return "workload"
        if self.providers is not None and offer.provider not in self.providers:
            return "providers"
        if row.accelerator in self.excluded_accelerators:
            return "cuda_required"
        if self.accelerators is not None and row.accelerator not in self.accelerators:
            return "accelerators"
        if self.min_vcpus is not None and (row.vcpus or 0) < self.min_vcpus:
            return "min_vcpus"
        if self.min_memory_gib is not None and (row.memory_gib or 0.0) < self.min_memory_gib:
            return "min_memory_gib"
        per_node = row.accelerator_count
        if per_node and self.max_accelerators is not None and per_node > self.max_accelerators:
            return "max_accelerators"
        count = self.accelerator_count
        if (
            per_node
            and count is not None
            and (
                per_node > count
                or count % per_node
                or (per_node < count and row.accelerator in self.single_node)
            )
        ):
            return "accelerator_count"
        return ""

    def group_reason(self, group: OfferGroup) -> str:
        """The constraint on region or price that removes these offers, or ``""`` (billing
        is checked per bucket)."""
        offer = group.offer
        if self.regions is not None and self.regions.isdisjoint(group.regions):
            return "regions"
        if self.max_price_per_hour is not None:
            price = offer.price_per_hour
            if price is None or price > self.max_price_per_hour:
                return "max_price_per_hour"
        return ""

    def allowed_regions(self, group: OfferGroup) -> tuple[str, ...]:
        """The group's regions this request allows (all without a region constraint)."""
        if self.regions is None:
            return group.regions
        return tuple(r for r in group.regions if r in self.regions)


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
    if constraint == "min_vcpus":
        return replace(flt, min_vcpus=None)
    if constraint == "min_memory_gib":
        return replace(flt, min_memory_gib=None)
    if constraint == "max_accelerators":
        return replace(flt, max_accelerators=None)
    if constraint == "accelerator_count":
        return replace(flt, accelerator_count=None, single_node=frozenset())
    return flt


USER_CONSTRAINTS: Sequence[str] = (
    "providers",
    "regions",
    "accelerators",
    "cuda_required",
    "billing",
    "max_price_per_hour",
    "min_vcpus",
    "min_memory_gib",
)
