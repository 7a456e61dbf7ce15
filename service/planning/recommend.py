"""``recommend``: workload + constraints + catalog → ranked, explained options.

Pure: the same request on the same catalog snapshot gives the same answer (no clock, no
I/O), which is what makes answers cacheable by (request, catalog fingerprint).

A pipeline of six stages, each a module with one job and a typed hand-off:

1. **resolve** (:mod:`.resolve`): the workload sized, the constraint names resolved
   into a filter → :class:`~.resolve.Resolved`;
2. **filter** (:mod:`.filters`): the catalog's buckets that pass → ``Passing`` rows;
3. **place** (:mod:`.place`): where the job fits on each instance shape, and for how
   long → ``Placements`` and ``Variant`` s;
4. **price** (:mod:`.price`): each (offer group, variant) priced and keyed → ``Plan``;
5. **rank** (:mod:`.rank`): branch and bound over the lanes (:mod:`.lanes`, the
   filter's rows joined with their placements, ordered by :mod:`.bounds`), pulling 2-4
   as far as the answer needs, then the best ``top_k`` Pareto-marked → ``Candidate`` s;
6. **explain** (:mod:`.explain`): options, estimate, advice, summary; when nothing is
   left, what removed what and the nearest option per lifted constraint.

What answers share across requests sits behind one seam, the
:class:`~service.planning.memo.PlanCache` the stages consult.
"""

from __future__ import annotations

from service.planning.context import PlanContext
from service.planning.explain import Ranked, explain
from service.planning.place import Placer
from service.planning.rank import plan_for, select
from service.planning.resolve import resolve
from service.planning.schema import Lang, RecommendRequest, RecommendResponse

__all__ = ["PlanContext", "recommend"]


def recommend(req: RecommendRequest, ctx: PlanContext, lang: Lang) -> RecommendResponse:
    cache = ctx.cache()
    resolved = resolve(req, ctx, cache)
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    buckets = ctx.snapshot.buckets
    plan = plan_for(buckets, resolved.flt, placer, req)
    top = select(plan, req.top_k)
    if not top:  # explain: count what each constraint removed, offer by offer
        plan = plan_for(buckets, resolved.flt, placer, req, count_removed=True)
    return explain(Ranked(resolved, placer, plan, top), ctx, cache, lang)
