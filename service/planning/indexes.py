"""Small indexes of the catalog that some requests need, built once per catalog (or per
filter) and shared through the :class:`~service.planning.variants.PlacementMemo`, so that
no request walks the catalog for them: the regions providers sell in (to validate a
region constraint), the cheapest monthly price per type (the break-even shown to jobs of
unknown length) and which accelerators a type holds N of on one node (``"8 GPUs"`` is one
8-GPU node when one exists).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from service.catalog.aggregate import CatalogSnapshot, OfferBucket
from service.planning.filters import OfferFilter
from service.planning.variants import PlacementMemo

T = TypeVar("T")


def _shared(
    memo: PlacementMemo | None,
    buckets: Sequence[OfferBucket],
    key: tuple[object, ...],
    build: Callable[[], T],
) -> T:
    """``build()`` once per catalog (and ``key``) when a memo is shared, else every time."""
    if memo is None:
        return build()
    memo.use_catalog(buckets)
    # id() is safe as a key: the memo drops its values when another catalog is loaded.
    return memo.shared((key[0], id(buckets), *key[1:]), build)


def known_regions_of(snapshot: CatalogSnapshot, memo: PlacementMemo | None) -> frozenset[str]:
    """Every region a loaded provider declares or sells an offer in."""
    buckets = snapshot.buckets

    def build() -> frozenset[str]:
        regions = {r for p in snapshot.providers for r in p.regions}
        for bucket in buckets:
            for group in bucket.groups:
                regions.update(group.regions)
        return frozenset(regions)

    return _shared(memo, buckets, ("regions",), build)


def monthly_prices(
    buckets: Sequence[OfferBucket], memo: PlacementMemo | None
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

    return _shared(memo, buckets, ("monthly",), build)


def single_node(
    buckets: Sequence[OfferBucket], flt: OfferFilter, count: int, memo: PlacementMemo | None
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

    return _shared(memo, buckets, ("single_node", flt, count), build)
