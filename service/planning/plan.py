"""The planner's hot path: rank (offer group, placement) candidates for one request.

``/v1/recommend`` must stay fast on catalogs of 10k+ offers (benchmark target: 10 ms
p50 on 10k), so the work is split by what it depends on:

* per catalog (at load): offers grouped into buckets, cheapest first
  (:func:`service.catalog.aggregate.bucket_offers`);
* per workload shape and filter (memoized, :mod:`service.planning.lanes`): the buckets
  that pass, their placements and a lower bound on their cost per unit of work;
* per request: the lanes that can still rank (branch and bound under ``cost``), each
  timed for this job and priced — arithmetic and one sort-key tuple per candidate;
* per answer (``top_k``): :class:`Candidate` objects with everything the response shows.

Ranking keeps every key as a plain tuple and picks the best with ``heapq.nsmallest``.
Unknown prices are never cheap: a key's first money element is a tier (0 = job total
known, 1 = only the hourly price known, 2 = unpriced), and unpriced candidates are
ordered among themselves by :func:`service.planning.unpriced.unpriced_order`.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from service.catalog.aggregate import OfferBucket
from service.catalog.models import Offer
from service.planning.bounds import BOUND_SLACK, BoundMode, LaneBound, Order
from service.planning.candidates import Candidate
from service.planning.cost import (
    SPOT_INTERRUPTIONS_PER_HOUR,
    SpotOverhead,
    break_even_hours,
    monthly_cost,
    per_million_tokens,
    spot_overhead,
)
from service.planning.filters import OfferFilter
from service.planning.lane import Lane
from service.planning.lanes import LaneIndex, lane_index
from service.planning.schema import Objective
from service.planning.unpriced import unpriced_order
from service.planning.variants import Variant, VariantBuilder, Workload

INF = math.inf


Entry = tuple[Offer, Variant, float | None, float | None, float | None, tuple[str, ...]]
"""(offer, variant, price per hour for all nodes, job total, job hours, regions)."""


@dataclass(slots=True)
class Plan:
    entries: list[Entry]
    keys: list[tuple[float, ...]]
    removed: Counter[str]
    objective: Objective
    serving: bool
    """Open-ended serving: ranked per hour and by throughput (no job length)."""
    inference: bool = False
    on_demand: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)
    """Cheapest on-demand hourly price per (provider, instance type) that passes the
    filters: what a subscription's break-even is measured against."""


def make_plan(
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    builder: VariantBuilder,
    objective: Objective,
    budget: float | None,
    deadline_hours: float | None,
    top_k: int,
    count_removed: bool = False,
) -> Plan:
    """The (offer group, variant) candidates that can make the top ``top_k``.

    Works on the catalog's buckets (one per instance type and billing mode, groups
    cheapest first) through a memoized :class:`LaneIndex`: within a bucket at most
    ``top_k`` passing groups are taken, since every group of a bucket has the same
    placements and only the cheaper ones can rank higher. Per request, what is left is
    timing each placement and pricing each (group, placement): the cost depends on the
    number of instance types, not of offers, and not on filters already applied.

    ``removed`` counts only budget and deadline removals, unless ``count_removed``: then
    every bucket is walked and each offer dropped is charged to the constraint that
    dropped it (to explain an empty answer; slower on huge catalogs).
    """
    index = lane_index(buckets, flt, builder)
    pricer = _Pricer(builder.wl.open_ended, objective, budget, deadline_hours)
    mode, work = _bound_mode(builder.wl)
    if count_removed:
        _every_group(buckets, flt, builder, pricer)
    elif work is not None and work > 0 and not flt.cpu_only:
        # Shrunk by the slack in every mode: a bound computed as log(a / b) may exceed the
        # key's log(a) - log(b) by an ulp, and exact ties (one 8-GPU node vs eight 1-GPU
        # replicas) must still be priced to be ranked by their later key elements.
        scale = (1.0 if mode == "open" else work) * BOUND_SLACK
        order = index.order(builder, objective, mode)
        _bounded_lanes(index, builder, pricer, order, scale, top_k)
    else:
        _lanes_in_order(index, builder, pricer, objective, top_k)
    plan = pricer.plan(builder.wl.serving)
    plan.on_demand = index.on_demand(builder)
    return plan


def _bound_mode(wl: Workload) -> tuple[BoundMode, float | None]:
    """How the job's cost scales, and its amount of work (``None``: unknown)."""
    if wl.open_ended:
        return "open", 1.0
    if wl.serving:
        return "batch", wl.output_tokens
    return "train", wl.rw.tokens


def _bounded_lanes(
    index: LaneIndex,
    builder: VariantBuilder,
    pricer: _Pricer,
    order: Order,
    scale: float,
    top_k: int,
) -> None:
    """Branch and bound over the lanes by the lowest key their candidates can have.

    The order's two lists are merged by priority (at most each lane's bound); once
    ``top_k`` candidates have keys below a lane's bound, that lane cannot rank, and once
    they are below the merge's next priority, no later lane can — nor dominate a ranked
    option on the cost-time front, since it would have to be at least as cheap and as
    fast. A request then prices tens of candidates, not the catalog. Lanes outside the
    lists rank only when the lists cannot fill the answer with finite keys.
    """
    # The bounds cover the key's first two elements under cost (tier, money), the first
    # under time and balanced; the heap keeps the top_k best of them, negated.
    two = order.objective == "cost"
    best: list[tuple[float, float]] = []
    kth: tuple[float, ...] = ()
    for priority, bound in _merged(order, scale):
        if len(best) >= top_k:
            if priority > kth:
                break
            if order.key_bound(bound, scale) > kth:
                continue
        start = len(pricer.keys)
        _price_lane(bound.lane, builder, pricer, top_k)
        for key in pricer.keys[start:]:
            heapq.heappush(best, (-key[0], -key[1] if two else 0.0))
            if len(best) > top_k:
                heapq.heappop(best)
        if len(best) >= top_k:
            kth = (-best[0][0], -best[0][1]) if two else (-best[0][0],)
    if len(best) < top_k or math.isinf(kth[-1]):
        for lane in index.lanes(builder, start=order.rest_from):
            _price_lane(lane, builder, pricer, top_k)


def _merged(order: Order, scale: float) -> Iterator[tuple[tuple[float, ...], LaneBound]]:
    """Both lists of ``order`` in ascending priority."""
    first, second = order.first, order.second
    i = j = 0
    head_1 = order.priority(first[0], True, scale) if first else None
    head_2 = order.priority(second[0], False, scale) if second else None
    while head_1 is not None or head_2 is not None:
        if head_2 is None or (head_1 is not None and head_1 <= head_2):
            assert head_1 is not None
            yield head_1, first[i]
            i += 1
            head_1 = order.priority(first[i], True, scale) if i < len(first) else None
        else:
            yield head_2, second[j]
            j += 1
            head_2 = order.priority(second[j], False, scale) if j < len(second) else None


def _lanes_in_order(
    index: LaneIndex, builder: VariantBuilder, pricer: _Pricer, objective: Objective, top_k: int
) -> None:
    """Every lane in catalog order, for rankings no bound applies to (CPU-only jobs, or
    a job of unknown length). Under "cost" and "balanced" an unpriced candidate ranks
    after every priced one, and the catalog puts unpriced buckets last: if the priced
    ones fill the answer, stop there."""
    stop_at_unpriced = objective != "time"
    for lane in index.lanes(builder):
        if stop_at_unpriced and not lane.priced_bucket:
            if len(pricer.keys) >= top_k:
                return
            stop_at_unpriced = False  # filling with unpriced: all of them compete
        _price_lane(lane, builder, pricer, top_k)


def _price_lane(lane: Lane, builder: VariantBuilder, pricer: _Pricer, top_k: int) -> None:
    placed = lane.placements
    variants = builder.timed(placed) if placed is not None else builder.build(lane.row)
    if isinstance(variants, str):
        return
    for offer, regions, offers in lane.groups[:top_k]:
        pricer.add(offer, regions, variants, offers)


def _every_group(
    buckets: Sequence[OfferBucket], flt: OfferFilter, builder: VariantBuilder, pricer: _Pricer
) -> None:
    """Every bucket and group, each removal charged to its constraint (no memo, no
    bound: what the shortcuts must agree with, and what explains an empty answer)."""
    removed = pricer.removed
    for bucket in buckets:
        offer = bucket.offer
        verdict = flt.row_reason(offer)
        if not verdict and offer.billing not in flt.billing:
            verdict = "billing"
        variants: list[Variant] | str = verdict or builder.build(offer.instance)
        if isinstance(variants, str):
            removed[variants] += bucket.offers
            continue
        for group in bucket.groups:
            reason = flt.group_reason(group)
            if reason:
                removed[reason] += group.offers
                continue
            pricer.add(group.offer, flt.allowed_regions(group), variants, group.offers)


class _Pricer:
    """Prices (group, variant) pairs into plan entries and their ranking keys.

    The planner's innermost loop (once per candidate), so the economics and the key are
    written out here rather than spread over helpers. Money first when ranking by cost;
    unknown prices are never cheap: a key's money tier is 0 when the job's total is known
    (or, when serving, its hourly price), 1 when only the hourly price is, 2 unpriced.
    """

    def __init__(
        self,
        serving: bool,
        objective: Objective,
        budget: float | None,
        deadline_hours: float | None,
    ) -> None:
        self.serving = serving
        self.objective = objective
        self.budget = budget
        self.deadline_hours = deadline_hours
        self.entries: list[Entry] = []
        self.keys: list[tuple[float, ...]] = []
        self.removed: Counter[str] = Counter()

    def add(
        self, offer: Offer, regions: tuple[str, ...], variants: list[Variant], offers: int
    ) -> None:
        """One entry per variant, unless the deadline or budget rules it out (charged
        ``offers`` removals)."""
        serving, objective = self.serving, self.objective
        deadline = None if serving else self.deadline_hours
        budget = None if serving else self.budget
        keys, entries = self.keys, self.entries
        price = offer.price
        hourly = None if price is None else price.price_per_hour
        monthly = (
            price.price_per_month if price is not None and offer.billing == "monthly" else None
        )
        rank_scale = _rank_scale(offer)
        spot = offer.billing == "spot"
        row = offer.instance
        for v in variants:
            hours = v.hours
            per_hour = total = None
            if hourly is not None:
                per_hour = hourly * v.nodes
                if spot and v.spot is not None:
                    hours = _spot(offer, v).effective_hours
                if hours is not None:
                    total = monthly_cost(monthly, v.nodes, hours) if monthly else per_hour * hours
            if deadline is not None and (hours or INF) > deadline:
                self.removed["deadline_hours"] += offers
                continue
            if budget is not None and (total or INF) > budget:
                self.removed["budget"] += offers
                continue
            if per_hour is None:
                tier, money = 2.0, INF
            elif serving or total is None:
                tier, money = (0.0 if serving else 1.0), per_hour * rank_scale
            else:
                tier, money = 0.0, total * rank_scale
            speed = -(v.throughput or 0.0) if serving else (INF if hours is None else hours)
            if objective == "time":
                key: tuple[float, ...] = (speed, tier, money, v.nodes, len(keys))
            elif tier == 2.0:  # unknown price: smallest sufficient first (one rule, one place)
                order = unpriced_order(
                    v.devices, row.accelerator_memory_gib, row.vcpus, row.memory_gib, v.nodes,
                    speed,
                )  # fmt: skip
                key = (tier, money, *order, len(keys))
                if objective != "cost":
                    key = (INF, *key)
            elif objective == "cost":
                key = (tier, money, speed, v.nodes, len(keys))
            else:
                key = (_balance(tier, money, speed, serving), tier, money, v.nodes, len(keys))
            keys.append(key)
            entries.append((offer, v, per_hour, total, hours, regions))

    def plan(self, inference: bool) -> Plan:
        return Plan(self.entries, self.keys, self.removed, self.objective, self.serving, inference)


def _spot(offer: Offer, v: Variant) -> SpotOverhead:
    """The variant's spot overhead at the reclaim rate its price states (the provider's
    spot rules), else the model's default rate."""
    assert v.spot is not None
    price = offer.price
    rate = None if price is None else price.interruption_rate_per_hour
    if rate is None or rate == SPOT_INTERRUPTIONS_PER_HOUR or v.hours is None:
        return v.spot
    return spot_overhead(v.hours, v.nodes, rate)


def _rank_scale(offer: Offer) -> float:
    """Ranking counts an estimate at the top of its range, so it goes ahead of a confirmed
    price only when clearly cheaper; shown figures stay the point estimate. This is the
    factor from the shown money to the ranked money (1 for confirmed prices)."""
    price = offer.price
    if price is None or not price.estimated or not price.price_per_hour:
        return 1.0
    return (price.ranking_price or price.price_per_hour) / price.price_per_hour


def _balance(tier: float, money: float, speed: float, serving: bool) -> float:
    """Scale-free balance of cost and time: the log of their geometric mean (serving: of
    cost per token); ``inf`` when either is unknown or degenerate (no throughput)."""
    if tier != 0 or money <= 0:
        return INF
    if serving:
        return math.log(money) - math.log(-speed) if -INF < speed < 0 else INF
    return math.log(money) + math.log(speed) if 0 < speed < INF else INF


def select(plan: Plan, top_k: int) -> list[Candidate]:
    """The ``top_k`` best candidates, Pareto-marked (entries are already distinct)."""
    if not plan.entries:
        return []
    best = heapq.nsmallest(top_k, plan.keys)
    front = _pareto_front(plan)
    chosen = [plan.entries[int(k[-1])] for k in best]
    result = []
    for offer, v, per_hour, total, hours, regions in chosen:
        candidate = Candidate(offer, v.nodes, v.devices, v.fit, hours, per_hour, total)
        candidate.regions = list(regions)
        scale = _rank_scale(offer)  # the front is over ranked money
        candidate.pareto = (
            total is not None and hours is not None and front.get(hours) == total * scale
        )
        if plan.inference and v.throughput is not None:
            if plan.serving:
                candidate.pareto = (
                    per_hour is not None and front.get(-v.throughput) == per_hour * scale
                )
            candidate.throughput_tokens_per_s = v.throughput
            if per_hour is not None:
                candidate.price_per_million_tokens = per_million_tokens(per_hour, v.throughput)
        if offer.billing == "spot":
            candidate.spot = _spot(offer, v) if v.spot is not None else None
        price = offer.price
        if offer.billing == "monthly" and price is not None and price.price_per_month:
            od = plan.on_demand.get((offer.provider, offer.instance.instance_type))
            if od:
                candidate.break_even_hours = break_even_hours(price.price_per_month, od)
        result.append(candidate)
    return result


def _pareto_front(plan: Plan) -> dict[float, float]:
    """speed → money of the points on the cost–time front (priced, time known).

    Within one speed only the cheapest point can be on the front, so the front is found
    over distinct speeds (a few hundred), not over every offer.
    """
    cheapest: dict[float, float] = {}
    for offer, v, per_hour, total, hours, _regions in plan.entries:
        if plan.serving:
            if per_hour is None or v.throughput is None:
                continue
            speed, money = -v.throughput, per_hour * _rank_scale(offer)
        else:
            if total is None or hours is None:
                continue
            speed, money = hours, total * _rank_scale(offer)
        if money < cheapest.get(speed, INF):
            cheapest[speed] = money
    front: dict[float, float] = {}
    best_money = INF
    for speed in sorted(cheapest):
        money = cheapest[speed]
        if money < best_money:
            front[speed] = money
            best_money = money
    return front
