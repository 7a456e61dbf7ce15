"""Small indexes of the catalog that some requests need, built once per catalog (or per
filter) and shared through the :class:`~service.planning.memo.PlanCache`, so that
no request walks the catalog for them: the regions providers sell in (to validate a
region constraint), the cheapest monthly price per type (the break-even shown to jobs of
unknown length), each type's on-demand prices whatever the filters (the break-even and
on-demand total of a monthly option shown when ``billing`` left out on-demand) and which
accelerators a type holds N of on one node (``"8 GPUs"`` is one
8-GPU node when one exists).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

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


class OnDemandQuote(NamedTuple):
    """One on-demand price of a type in the catalog (per node and hour)."""

    price_per_hour: float
    estimated: bool
    """Suanli's estimate, not a price a cloud published."""
    regions: tuple[str, ...]
    """Where it is sold at this price (empty: not said)."""


def on_demand_quote(
    buckets: Sequence[OfferBucket], cache: PlanCache, key: tuple[str, str], regions: Sequence[str]
) -> OnDemandQuote | None:
    """The cheapest on-demand price of type ``key`` (provider, instance type) in the
    whole catalog, whatever a request's filters, sold in one of ``regions`` (a price whose
    regions are unknown, or ``regions`` empty, counts as sold there): what the same server
    costs by the hour where a monthly option is shown. ``None``: the catalog sells it on
    demand at no known price there.

    Why: the planner's on-demand prices are the rows that pass the request's filters
    (:meth:`~service.planning.lanes.LaneIndex.on_demand`), and ``billing: ["monthly"]``
    filters them all out: the option had no break-even and no word of the on-demand
    total (review 9 K12). The index is built once per catalog, on the first monthly
    option shown; a ranking never reads it."""
    quotes = on_demand_quotes(buckets, cache).get(key, ())
    asked = set(regions)
    return next(
        (q for q in quotes if not asked or not q.regions or asked.intersection(q.regions)), None
    )


def on_demand_quotes(
    buckets: Sequence[OfferBucket], cache: PlanCache
) -> dict[tuple[str, str], tuple[OnDemandQuote, ...]]:
    """Every priced on-demand group per (provider, instance type), cheapest first."""

    def build() -> dict[tuple[str, str], tuple[OnDemandQuote, ...]]:
        index: dict[tuple[str, str], list[OnDemandQuote]] = {}
        for bucket in buckets:
            offer = bucket.offer
            if offer.billing != "on_demand":
                continue
            key = (offer.provider, offer.instance.instance_type)
            for group in bucket.groups:
                price = group.offer.price
                if price is not None and price.price_per_hour:
                    quote = OnDemandQuote(price.price_per_hour, price.estimated, group.regions)
                    index.setdefault(key, []).append(quote)
        return {key: tuple(sorted(found)) for key, found in index.items()}

    return cache.catalog_shared(buckets, ("on_demand_quotes",), build)


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
