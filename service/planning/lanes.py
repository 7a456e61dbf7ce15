"""The catalog as one request's filters and workload see it: lanes, built lazily.

A :class:`LaneIndex` is what stays the same between requests that differ only in the
job's length, budget, ``top_k`` or language: which buckets pass the filters, their
placements, and per objective an :class:`~service.planning.bounds.Order` of the lanes by
the lowest key their candidates can have. Ranking walks the lanes best-bound first and
stops as soon as no remaining lane can beat the answer so far (see
:func:`service.planning.plan.make_plan`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from service.catalog.aggregate import OfferBucket
from service.catalog.models import Offer
from service.planning.bounds import BoundMode, Order, order_lanes
from service.planning.filters import OfferFilter
from service.planning.lane import Lane
from service.planning.schema import TOP_K_MAX, Objective
from service.planning.variants import VariantBuilder

INF = math.inf


class LaneIndex:
    """The catalog seen through one filter and one workload's placements, built lazily.

    Everything here is independent of the job's length and ``top_k``, so it is memoized
    across requests (in the :class:`PlacementMemo`) under the filter and the workload's
    memory signature. It is extended only as far as some request has needed: ranking by
    cost or balance needs the priced buckets (first in the catalog), the unpriced tail
    only when a request asks for it (``time`` objective, or too few priced candidates).
    """

    def __init__(self, buckets: Sequence[OfferBucket], flt: OfferFilter) -> None:
        self.buckets = buckets
        self.flt = flt
        self._lanes: list[Lane] = []
        self._next_bucket = 0
        self._orders: dict[tuple[Objective, BoundMode], Order] = {}
        self._on_demand: dict[tuple[str, str], float] | None = None

    def lanes(self, builder: VariantBuilder, start: int = 0) -> Iterator[Lane]:
        """The lanes in bucket order from the ``start``-th; ``builder`` places rows not
        yet indexed."""
        i = start
        while True:
            if i < len(self._lanes):
                yield self._lanes[i]
                i += 1
            elif self._next_bucket < len(self.buckets):
                lane = self._lane(self.buckets[self._next_bucket], builder)
                if lane is not None:
                    self._lanes.append(lane)
                self._next_bucket += 1  # only once indexed: a failure is retried next time
            else:
                return

    def priced(self, builder: VariantBuilder) -> int:
        """Index every bucket with a price; how many lanes that gave (the unpriced
        lanes, if any, follow from there)."""
        count = 0
        for lane in self.lanes(builder):
            if not lane.priced_bucket:
                break
            count += 1
        return count

    def order(self, builder: VariantBuilder, objective: Objective, mode: BoundMode) -> Order:
        """The lanes by their lower bounds for ``objective`` (see :mod:`bounds`)."""
        order = self._orders.get((objective, mode))
        if order is None:
            priced = self.priced(builder)
            if objective == "time":
                for _ in self.lanes(builder, start=priced):  # time ranks unpriced lanes too
                    pass
            order = order_lanes(objective, mode, self._lanes, priced)
            self._orders[(objective, mode)] = order
        return order

    def on_demand(self, builder: VariantBuilder) -> dict[tuple[str, str], float]:
        """Cheapest passing on-demand hourly price per (provider, instance type)."""
        if self._on_demand is None:
            index: dict[tuple[str, str], float] = {}
            for lane in self._lanes[: self.priced(builder)]:
                offer = lane.groups[0][0]
                if offer.billing == "on_demand" and offer.price_per_hour:
                    key = (offer.provider, lane.row.instance_type)
                    index[key] = min(offer.price_per_hour, index.get(key, INF))
            self._on_demand = index
        return self._on_demand

    def _lane(self, bucket: OfferBucket, builder: VariantBuilder) -> Lane | None:
        flt = self.flt
        offer = bucket.offer
        if flt.row_reason(offer) or offer.billing not in flt.billing:
            return None
        placements = None
        if not flt.cpu_only:
            placed = builder.placements(offer.instance)
            if isinstance(placed, str):
                return None
            placements = placed
        groups: list[tuple[Offer, tuple[str, ...], int]] = []
        for group in bucket.groups:
            if flt.group_reason(group):
                continue
            groups.append((group.offer, flt.allowed_regions(group), group.offers))
            if len(groups) == TOP_K_MAX:
                break
        if not groups:
            return None
        priced = bucket.groups[0].offer.price_per_hour is not None
        return Lane(offer.instance, placements, tuple(groups), priced)


def lane_index(
    buckets: Sequence[OfferBucket], flt: OfferFilter, builder: VariantBuilder
) -> LaneIndex:
    """The request's :class:`LaneIndex`: from the memo when another request built it."""
    memo = builder.memo
    if memo is None:
        return LaneIndex(buckets, flt)
    memo.use_catalog(buckets)
    # id() is safe as a key: the index keeps ``buckets`` alive, so the id is not reused.
    key = ("lanes", id(buckets), flt, *builder.memo_prefix)
    return memo.shared(key, lambda: LaneIndex(buckets, flt))
