"""The faster plan at about the same cost (review 5 G7).

Ranking by cost alone puts a 14B pre-train on one 8-NPU server for 78 days, while 8
servers finish in 10 days for 0.1 % more: data parallel over an RDMA network scales
nearly linearly, so the node-hours, and the bill, hardly change with the node count. An
expert shows that plan beside the cheapest. The rule: when the cheapest plan runs at
least :data:`LONG_HOURS`, the fastest plan that costs at most :data:`SAME_COST` more
and takes at most half its time is shown in the answer's last place, with both figures.

A plan of more than :data:`VERY_LONG_HOURS` (a quarter) is another matter (review 11t
T4): a 7B pre-train on 1T tokens put on one monthly 8-GPU server for 19 months, because
no pay-as-you-go multi-server plan came within 3 % of the monthly total; the nearest, 32
servers, cost 27 % more. That far out the calendar time is the problem itself (hardware
fails, the data and the model go stale, the commitment is locked for years), so the twin
may cost up to :data:`~service.planning.price.TRAIN_PREMIUM` more: the calibrated
spread of training time within which the estimate cannot tell two totals apart (the
same premium ``balanced`` ranks by). Its reason says the extra cost in figures.

Why 3 %: well inside the estimate's own uncertainty (the utilisation priors alone are
worth ±20 %), so to the estimate the two plans cost the same, yet small enough that no
one pays visibly more for the speed. Why a week: below that, days of calendar time are
not what the choice is about, and the cheapest answer stays the plain one.

Cost: one more bounded ranking (objective ``time`` under a budget of 1.03 × the cheapest
total, ``top_k`` 1), only for such long plans; the cost ranking itself is unchanged, so
its bounds stay exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from service.catalog.aggregate import OfferBucket
from service.planning.candidates import Candidate
from service.planning.filters import OfferFilter
from service.planning.indexes import on_demand_quote
from service.planning.place import Placer
from service.planning.price import TRAIN_PREMIUM
from service.planning.rank import make_plan, select
from service.planning.schema import RecommendRequest

SAME_COST = 0.03
"""At most this much more than the cheapest plan counts as about the same cost."""
LONG_HOURS = 168.0
"""A week: from here the cheapest plan is shown with its faster equal-cost twin."""
VERY_LONG_HOURS = 2190.0
"""A quarter (365 × 24 / 4 h): from here the twin may cost up to :data:`TRAIN_PREMIUM` more."""
FASTER_BY = 0.5
"""The twin must take at most this fraction of the cheapest plan's hours."""


def with_faster(
    top: list[Candidate],
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    placer: Placer,
    req: RecommendRequest,
) -> list[Candidate]:
    """``top`` with the fastest plan costing within :data:`SAME_COST` of the cheapest in
    its last place, when the rule of this module applies; else ``top`` unchanged."""
    job = placer.job
    if req.objective != "cost" or job.serving or job.cpu_only or job.scale_out:
        return top
    if not top or req.top_k < 2:
        return top
    first = top[0]
    if first.hours is None or first.total_cost is None or first.hours < LONG_HOURS:
        return top
    wide = placer.scaled_out()
    budget = _reference(first, buckets, placer) * (1 + premium(first.hours))
    if req.constraints.budget is not None:
        budget = min(budget, req.constraints.budget)
    # only priced plans: a twin whose cost is unknown cannot be "about the same cost"
    priced = replace(flt, max_price_per_hour=flt.max_price_per_hour or math.inf)
    plan = make_plan(buckets, priced, wide, "time", budget, req.constraints.deadline_hours, 1)
    best = select(plan, 1)
    if not best or best[0].hours is None or best[0].hours > first.hours * FASTER_BY:
        return top
    twin = best[0]
    if twin.total_cost is None:
        return top
    if any(c.offer is twin.offer and c.nodes == twin.nodes for c in top):
        return top
    twin.pareto = False  # the front is the main ranking's
    twin.same_cost_as = (first.total_cost, first.hours)
    kept = top[: req.top_k - 1] if len(top) >= req.top_k else top
    return [*kept, twin]


def premium(hours: float) -> float:
    """How much more than the cheapest plan of ``hours`` its faster twin may cost:
    :data:`SAME_COST`, or :data:`TRAIN_PREMIUM` for a plan longer than a quarter."""
    return max(SAME_COST, TRAIN_PREMIUM) if hours >= VERY_LONG_HOURS else SAME_COST


def _reference(first: Candidate, buckets: Sequence[OfferBucket], placer: Placer) -> float:
    """The total a faster twin of ``first`` is compared with: its own total, or, for a
    monthly plan longer than a quarter, what the same servers cost on demand for the same
    hours when that is more. A twin runs on demand (it is too short for whole months),
    so against the monthly discount no pay-as-you-go plan is ever "about the same cost";
    like is compared with like (review 11t T4)."""
    total = first.total_cost or 0.0
    if first.offer.billing != "monthly" or first.hours is None or first.hours < VERY_LONG_HOURS:
        return total
    offer = first.offer
    key = (offer.provider, offer.instance.instance_type)
    quote = on_demand_quote(buckets, placer.cache, key, first.regions)
    if quote is None:
        return total
    return max(total, quote.price_per_hour * first.nodes * first.hours)
