"""The catalog as one request's filters and workload see it: lanes, built lazily.

A :class:`LaneIndex` is what stays the same between requests that differ only in the
job's length, objective, budget, ``top_k`` or language: which buckets pass the filters,
their placements, and a lower bound on what each can cost per unit of work. Ranking by
cost walks the lanes cheapest-bound first and stops as soon as no remaining lane can
beat the answer so far (see :func:`service.planning.plan.make_plan`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from service.catalog import OfferBucket
from service.planning.cost import spot_overhead
from service.planning.filters import OfferFilter
from service.planning.schema import TOP_K_MAX
from service.planning.variants import Placements, VariantBuilder
from service.providers import HOURS_PER_MONTH, InstanceType, Offer

INF = math.inf


@dataclass(frozen=True, slots=True)
class Lane:
    """A bucket that survives a request's filters: its placements and the offer groups
    (cheapest first, regions already narrowed) that pass the region and price checks."""

    row: InstanceType
    placements: Placements | None
    """``None`` for CPU-only rows (sized per request from the job's data)."""
    groups: tuple[tuple[Offer, tuple[str, ...], int], ...]
    """(first offer, regions, offers folded) per group; at most :data:`TOP_K_MAX`, since
    no answer can use more groups of one bucket."""
    priced_bucket: bool
    """The bucket's cheapest offer has a price (buckets are ordered priced first)."""


class LaneIndex:
    """The catalog seen through one filter and one workload's placements, built lazily.

    Everything here is independent of the job's length, objective and ``top_k``, so it
    is memoized across requests (in the :class:`PlacementMemo`) under the filter and the
    workload's memory signature. It is extended only as far as some request has needed:
    ranking by cost stops at the first unpriced bucket, so the unpriced tail is indexed
    only when a request asks for it (``time`` objective, or too few priced candidates).
    """

    def __init__(self, buckets: Sequence[OfferBucket], flt: OfferFilter) -> None:
        self.buckets = buckets
        self.flt = flt
        self._lanes: list[Lane] = []
        self._next_bucket = 0
        self._by_cost: dict[BoundMode, CostOrder] = {}
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

    def by_cost(self, builder: VariantBuilder, mode: BoundMode) -> CostOrder:
        """The priced lanes by their cost bound (see :func:`cost_bound`), for ranking by
        cost, and where the unpriced lanes start."""
        order = self._by_cost.get(mode)
        if order is None:
            count = self.priced(builder)
            bounds = [cost_bound(lane, mode) for lane in self._lanes[:count]]
            linear = [b for b in bounds if b[0] == 0.0 and b[1] == 0.0]
            floored = [b for b in bounds if not (b[0] == 0.0 and b[1] == 0.0)]
            linear.sort(key=lambda b: (b[0], b[2]))
            floored.sort(key=lambda b: (b[0], b[1]))
            order = self._by_cost[mode] = CostOrder(linear, floored, count)
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


BoundMode = Literal["train", "batch", "open"]
"""What a job's cost scales with: training tokens, inference output tokens, or nothing
(open-ended serving is ranked by price per hour)."""

BOUND_SLACK = 1 - 1e-9
"""Bounds are scaled down by this much so that float rounding never makes a bound
exceed the total it bounds."""

Bound = tuple[float, float, float, Lane]
"""(money tier, floor, per unit of work, lane): no candidate of the lane has a ranking
key below ``(tier, max(floor, per_unit × work))``."""


@dataclass(frozen=True, slots=True)
class CostOrder:
    linear: list[Bound]
    """Lanes whose bound is ``per_unit × work`` alone (floor 0), by (tier, per_unit)."""
    floored: list[Bound]
    """The others (subscriptions: at least one month; hours unknown: the hourly price),
    by (tier, floor)."""
    unpriced_from: int
    """Index (in bucket order) of the first lane whose bucket has no price."""


def cost_bound(lane: Lane, mode: BoundMode) -> Bound:
    """The lowest ranking key (tier, money) any candidate of the lane can have.

    Exact scaling, never an estimate: on-demand and spot totals are linear in the job's
    hours (training on spot by the interruption model's constant factor; the planner
    adds no interruption overhead to inference), and hours linear in its
    tokens; a subscription costs at least one month, and at least its monthly price
    spread over the hours. Tiers are those of the ranking key (0 total known, 1 only the
    hourly price known, 2 unpriced).
    """
    offer = lane.groups[0][0]  # the lane's cheapest passing group
    price = offer.price
    if price is None or price.price_per_hour is None or lane.placements is None:
        return 2.0, INF, 0.0, lane
    monthly = price.price_per_month if offer.billing == "monthly" and mode != "open" else None
    best: tuple[float, float, float] = (2.0, INF, 0.0)
    for nodes, _devices, _fit, throughput, hours_per_token in lane.placements.items:
        per_hour = price.price_per_hour * nodes
        hours_per_unit = 1.0 if mode == "open" else hours_per_token
        if mode == "batch":
            hours_per_unit = 1 / (throughput * 3600) if throughput else None
        if hours_per_unit is None:
            bound = (1.0, per_hour, 0.0)
        elif monthly:
            bound = (0.0, monthly * nodes, monthly * nodes / HOURS_PER_MONTH * hours_per_unit)
        elif offer.billing == "spot" and mode == "train":  # (serving is not interrupted)
            bound = (
                0.0,
                0.0,
                per_hour * hours_per_unit * spot_overhead(1.0, nodes).effective_hours,
            )
        else:
            bound = (0.0, 0.0, per_hour * hours_per_unit)
        # The lane's bound: the smallest per component (a bound on every candidate's).
        if bound[0] < best[0]:
            best = bound
        elif bound[0] == best[0]:
            best = (best[0], min(best[1], bound[1]), min(best[2], bound[2]))
    return (*best, lane)


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
