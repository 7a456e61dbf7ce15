"""Small indexes of the catalog that some requests need, built once per catalog (or per
filter) and shared through the :class:`~service.planning.memo.PlanCache`, so that
no request walks the catalog for them: the regions providers sell in (to validate a
region constraint), the cheapest monthly price per type (the break-even shown to jobs of
unknown length) and which accelerators a type holds N of on one node (``"8 GPUs"`` is one
8-GPU node when one exists).
"""

from __future__ import annotations

from collections.abc import Sequence

from service.catalog.aggregate import CatalogSnapshot, OfferBucket
from service.planning.filters import OfferFilter
from service.planning.memo import PlanCache


def known_regions_of(snapshot: CatalogSnapshot, cache: PlanCache) -> frozenset[str]:
    """Every region a loaded provider declares or sells an offer in."""
    buckets = snapshot.buckets

    def build() -> frozenset[str]:
        regions = {r for p in snapshot.providers for r in p.regions}
        for bucket in buckets:
            for group in bucket.groups:
                regions.update(group.regions)
        return frozenset(regions)

    return cache.catalog_shared(buckets, ("regions",), build)


def monthly_prices(
    buckets: Sequence[OfferBucket], cache: PlanCache
) -> dict[tuple[str, str], float]:
    """Cheapest monthly price per (provider, instance type)."""

    def build() -> dict[tuple[str, str], float]:
        index: dict[tuple[str, str], float] = {}
        for bucket in buckets:
            offer = bucket.offer
            if offer.billing != "monthly":
                continue
            for group in bucket.groups:
                price = group.offer.price
                if price is not None and price.price_per_month:
                    key = (offer.provider, offer.instance.instance_type)
                    index[key] = min(price.price_per_month, index.get(key, price.price_per_month))
        return index

    return cache.catalog_shared(buckets, ("monthly",), build)


def single_node(
    buckets: Sequence[OfferBucket], flt: OfferFilter, count: int, cache: PlanCache
) -> frozenset[str]:
    """Accelerators that a type passing ``flt`` holds exactly ``count`` of on one node."""

    def build() -> frozenset[str]:
        found: set[str] = set()
        for bucket in buckets:
            offer = bucket.offer
            row = offer.instance
            if (
                row.accelerator
                and row.accelerator_count == count
                and row.accelerator not in found
                and not flt.row_reason(offer)
                and offer.billing in flt.billing
                and any(not flt.group_reason(g) for g in bucket.groups)
            ):
                found.add(row.accelerator)
        return frozenset(found)

    return cache.catalog_shared(buckets, ("single_node", flt, count), build)
