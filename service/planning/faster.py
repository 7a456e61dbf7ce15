"""The faster plan at about the same cost (review 5 G7).

Ranking by cost alone puts a 14B pre-train on one 8-NPU server for 78 days, while 8
servers finish in 10 days for 0.1 % more: data parallel over an RDMA network scales
nearly linearly, so the node-hours, and the bill, hardly change with the node count. An
expert shows that plan beside the cheapest. The rule: when the cheapest plan runs at
least :data:`LONG_HOURS`, the fastest plan that costs at most :data:`SAME_COST` more
and takes at most half its time is shown in the answer's last place, with both figures.

Why 3 %: well inside the estimate's own uncertainty (the utilisation priors alone are
worth ±20 %), so to the estimate the two plans cost the same, yet small enough that no
one pays visibly more for the speed. Why a week: below that, days of calendar time are
not what the choice is about, and the cheapest answer stays the plain one.

Cost: one more bounded ranking (objective ``time`` under a budget of 1.03 × the cheapest
total, ``top_k`` 1), only for such long plans; the cost ranking itself is unchanged, so
its bounds stay exact.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.catalog.aggregate import OfferBucket
from service.planning.candidates import Candidate
from service.planning.filters import OfferFilter
from service.planning.place import Placer
from service.planning.rank import make_plan, select
from service.planning.schema import RecommendRequest

SAME_COST = 0.03
"""At most this much more than the cheapest plan counts as about the same cost."""
LONG_HOURS = 168.0
"""A week: from here the cheapest plan is shown with its faster equal-cost twin."""
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
    budget = first.total_cost * (1 + SAME_COST)
    plan = make_plan(buckets, flt, wide, "time", budget, req.constraints.deadline_hours, 1)
    best = select(plan, 1)
    if not best or best[0].hours is None or best[0].hours > first.hours * FASTER_BY:
        return top
    twin = best[0]
    if any(c.offer is twin.offer and c.nodes == twin.nodes for c in top):
        return top
    twin.pareto = False  # the front is the main ranking's
    twin.same_cost_as = (first.total_cost, first.hours)
    kept = top[: req.top_k - 1] if len(top) >= req.top_k else top
    return [*kept, twin]
