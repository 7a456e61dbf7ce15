"""Stage 5, rank: the (offer group, placement) candidates that can make the top
``top_k``, and the best of them.

``/v1/recommend`` must stay fast on catalogs of 10k+ offers (benchmark target: 10 ms
p50 on 10k), so the work is split by what it depends on:

* per catalog (at load): offers grouped into buckets, cheapest first
  (:func:`service.catalog.aggregate.bucket_offers`);
* per filter (cached): the buckets that pass (:func:`service.planning.filters.passing`);
* per workload shape and filter (cached, :mod:`service.planning.lanes`): their
  placements and a lower bound on their cost per unit of work (:mod:`bounds`);
* per request: the lanes that can still rank (branch and bound), each timed for this job
  and priced (:mod:`service.planning.price`) — arithmetic and one key per candidate;
* per answer (``top_k``): :class:`Candidate` objects with everything the response shows.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Callable, Generator, Sequence

from service.catalog.aggregate import OfferBucket
from service.catalog.models import Offer
from service.catalog.names import outside_mainland
from service.planning.bounds import (
    BOUND_SLACK,
    OPEN_MODES,
    BoundMode,
    LaneBound,
    LazyBounds,
    LazyList,
    Order,
    order_lanes,
    place_held,
    training_cost_order,
)
from service.planning.candidates import Candidate, Cheapest, CheapestUnit
from service.planning.cost import break_even_hours, per_million_tokens, ranked_money_scale
from service.planning.filters import Groups, OfferFilter
from service.planning.lanes import Lane, LaneIndex, lane_index
from service.planning.place import Placer, Variant
from service.planning.price import (
    Entry,
    Plan,
    Pricer,
    balanced_premium,
    balanced_speed,
    cents,
    spot_of,
    training_hours_per_token,
)
from service.planning.resolve import Job
from service.planning.schema import Objective, RecommendRequest

INF = math.inf


def plan_for(
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    placer: Placer,
    req: RecommendRequest,
    relax: str | None = None,
    count_removed: bool = False,
    index: LaneIndex | None = None,
) -> Plan:
    """:func:`make_plan` for ``req`` (``relax``: the budget or deadline lifted; ``index``:
    the lanes of ``flt`` and ``placer``'s workload, when the caller holds them)."""
    c = req.constraints
    return make_plan(
        buckets,
        flt,
        placer,
        req.objective,
        None if relax == "budget" else c.budget,
        None if relax == "deadline_hours" else c.deadline_hours,
        req.top_k,
        count_removed,
        index,
    )


def make_plan(
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    placer: Placer,
    objective: Objective,
    budget: float | None,
    deadline_hours: float | None,
    top_k: int,
    count_removed: bool = False,
    index: LaneIndex | None = None,
    within: tuple[float, float] | None = None,
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

    ``balanced`` is two of these rankings (:func:`balanced_plan`); ``within`` (with
    ``time``) is its second: only candidates whose cost key starts at most at that
    (tier, money), fastest first.
    """
    if objective == "balanced":
        return balanced_plan(
            buckets, flt, placer, budget, deadline_hours, top_k, count_removed, index
        )
    if index is None:
        index = lane_index(buckets, flt, placer)
    on_demand = index.on_demand(placer)
    pricer = Pricer(
        placer.job.open_ended,
        objective,
        budget,
        deadline_hours,
        on_demand,
        placer.job.to_target,
        price_cap=flt.max_price_per_hour,
        monthly_asked=flt.billing_asked is not None and "monthly" in flt.billing_asked,
        demoted=demoted(placer, flt),
        within=within,
        batch_job=placer.job.serving and not placer.job.open_ended,
    )
    mode, work = _bound_mode(placer.job)
    if count_removed:
        _every_group(buckets, flt, placer, pricer)
    elif _bounded(placer, flt):
        assert work is not None
        # Shrunk by the slack in every mode: a bound computed as log(a / b) may exceed the
        # key's log(a) - log(b) by an ulp, and exact ties (one 8-GPU node vs eight 1-GPU
        # replicas) must still be priced to be ranked by their later key elements.
        scale = (1.0 if mode in OPEN_MODES else work) * BOUND_SLACK
        totals = mode not in OPEN_MODES
        if within is not None:  # the few lanes that cost at most that, by cost
            order = _order(index, placer, "cost", mode)
            _lanes_within(index, placer, pricer, order, scale, top_k, totals, within)
        else:
            order = _order(index, placer, objective, mode)
            _bounded_lanes(index, placer, pricer, order, scale, top_k, totals)
    else:
        _lanes_in_order(index, placer, pricer, objective, top_k)
    plan = pricer.plan(placer.job.serving)
    plan.on_demand = on_demand
    plan.hidden_spot = _hidden_spot(index, placer)
    return plan


def _bounded(placer: Placer, flt: OfferFilter) -> bool:
    """Whether a ranking walks the lanes by branch and bound (the job's amount of work is
    known, and it runs on accelerators); else every priced lane is priced."""
    work = _bound_mode(placer.job)[1]
    return work is not None and work > 0 and not flt.cpu_only


def balanced_plan(
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    placer: Placer,
    budget: float | None,
    deadline_hours: float | None,
    top_k: int,
    count_removed: bool = False,
    index: LaneIndex | None = None,
) -> Plan:
    """``balanced`` as an architect means it: not much more money than the cheapest
    option, and as fast as possible for that (review 7 J27: by cost x hours a 16-minute
    LoRA went to 8 nodes at ¥625, where one did it for ¥288; with near-linear scaling the
    bill stays flat as the hours fall, so the widest cluster always won).

    The options whose cost is within :func:`~service.planning.price.balanced_premium` of
    the cheapest rank first, fastest first (ties: cheaper, then fewer devices); then the
    others by cost; unpriced ones last, as under cost. "Cost" is what the cost ranking
    weighs: a finite job's total; training of unknown length, its cost per training token
    (fastest: fewest hours per token); open-ended serving, its price per output token
    (fastest: the highest throughput), or per hour when sized to a throughput target
    (every option serves the target). With nothing priced, the order is the cost one.

    Two exact rankings, both bounded: ``cost`` (its first key is the cheapest; its
    ``top_k`` are the best of the rest), then ``time`` over the candidates within the
    premium only (:attr:`~service.planning.price.Pricer.within`, :func:`_lanes_within`:
    the cost order walked only as far as a lane can cost that little). The Pareto front
    is over what either priced: any option that dominates a shown one is cheaper (the
    cost ranking priced it) or, for one within the premium, within it and faster (the
    second ranking priced it)."""
    cost = make_plan(buckets, flt, placer, "cost", budget, deadline_hours, top_k,
                     count_removed, index)  # fmt: skip
    cost.objective = "balanced"
    if not cost.keys:
        return cost
    first = min(cost.keys)
    if first[0] >= 2.0 or not 0.0 < first[1] < INF:  # nothing priced to weigh
        return cost
    premium = balanced_premium(placer.job.serving)
    cap = (first[0], first[1] * (1 + premium))
    serving = cost.serving
    entries: list[Entry] = []
    keys: list[tuple[float, ...]] = []
    seen: set[tuple[object, ...]] = set()
    for key, entry in zip(cost.keys, cost.entries, strict=True):
        seen.add(_identity(entry))
        offer, v, _per_hour, _total, hours, _regions = entry
        speed = balanced_speed(offer, v, hours, serving)
        if key[0] == cap[0] and key[1] <= cap[1] and speed < INF:
            keys.append((0.0, speed, key[1], v.devices, v.nodes, key[-2], len(keys)))
        else:
            keys.append((1.0, *key[:-1], len(keys)))
        entries.append(entry)
    if not count_removed and _bounded(placer, flt):
        fast = make_plan(buckets, flt, placer, "time", budget, deadline_hours, top_k,
                         index=index, within=cap)  # fmt: skip
        for key, entry in zip(fast.keys, fast.entries, strict=True):
            identity = _identity(entry)
            if identity not in seen:
                seen.add(identity)
                keys.append((0.0, *key[:-1], len(keys)))
                entries.append(entry)
    cost.entries, cost.keys = entries, keys
    chosen = cost.entries[int(first[-1])]
    cost.cheapest = Cheapest(_shown(first[1], chosen, serving, placer.job.to_target),
                             _unit(chosen, serving, placer.job.to_target), premium)  # fmt: skip
    return cost


def _identity(entry: Entry) -> tuple[object, ...]:
    """What tells two plan entries apart for the answer: the offer and what runs on it."""
    offer, v, per_hour, total, hours, _regions = entry
    return id(offer), v.nodes, v.devices, v.throughput, per_hour, total, hours


def _unit(entry: Entry, serving: bool, to_target: bool) -> CheapestUnit:
    """The unit of the cheapest figure ``balanced`` weighs against (see :func:`_shown`)."""
    if serving:
        return "hourly" if to_target else "per_million"
    if entry[3] is not None:
        return "total"
    return "per_million_training" if entry[1].hours_per_token else "hourly"


def _shown(money: float, entry: Entry, serving: bool, to_target: bool) -> float:
    """The cost key's money (``money``, as the ranking counts it) in the unit the answer
    shows: per hour per token/s → per million tokens; per training token → per million."""
    unit = _unit(entry, serving, to_target)
    if unit == "per_million":
        return money / 3600 * 1e6
    if unit == "per_million_training":
        return money * 1e6
    return money


def demoted(placer: Placer, flt: OfferFilter) -> Callable[[str | None], bool] | None:
    """Serving: the accelerators ranked after the others because the engine's current
    release does not run on them, unless the request names them (review 4 F8)."""
    if not placer.job.serving:
        return None
    asked = flt.accelerators
    if asked is None:
        return placer.outdated
    return lambda accelerator: accelerator not in asked and placer.outdated(accelerator)


def _hidden_spot(index: LaneIndex, placer: Placer) -> int:
    """How many spot offers the pricer leaves out as no cheaper than on-demand, counted
    over every passing lane (not just those the bound priced), once per lane index."""

    return index.derived(("hidden_spot",), lambda: index.hidden_spot(placer))


def _order(index: LaneIndex, placer: Placer, objective: Objective, mode: BoundMode) -> Order:
    """The lanes by their lower bounds for ``objective`` (see :mod:`bounds`), kept with
    the lane index (time ranks unpriced lanes too)."""

    def build() -> Order:
        if objective == "cost" and mode == "train":  # places shapes as the ranking reads
            return training_cost_order(index.rows.priced(), placer)
        priced = index.priced(placer)
        lanes = index.lanes(placer) if objective == "time" else index.priced_lanes(placer)
        return order_lanes(objective, mode, lanes, priced)

    return index.derived(("order", objective, mode), build)


def _bound_mode(wl: Job) -> tuple[BoundMode, float | None]:
    """How the job's cost scales, and its amount of work (``None``: unknown)."""
    if wl.open_ended:
        return ("capacity" if wl.to_target else "open"), 1.0
    if wl.serving:
        return "batch", wl.output_tokens
    return "train", wl.rw.tokens


def _bounded_lanes(
    index: LaneIndex,
    placer: Placer,
    pricer: Pricer,
    order: Order,
    scale: float,
    top_k: int,
    totals: bool = True,
) -> None:
    """Branch and bound over the lanes by the lowest key their candidates can have
    (``totals``: the job's total is known, and the cost key holds it in cents).

    The order's two lists are merged by priority (at most each lane's bound); once
    ``top_k`` candidates have keys below a lane's bound, that lane cannot rank, and once
    they are below the merge's next priority, no later lane can — nor dominate a ranked
    option on the cost-time front, since it would have to be at least as cheap and as
    fast. A request then prices tens of candidates, not the catalog. Lanes outside the
    lists rank only when the lists cannot fill the answer with finite keys.

    A lazy list's head may be only a lower bound of its priority (the next shape to
    place, :meth:`~service.planning.bounds.LazyList.peek`): the merge compares it like a
    priority, and places that shape only when the head must be known — when it is the
    lower head and can still rank — so the lanes merge in the same order as if every
    head were known, and a ranking that stops there places nothing more.

    The job's fixed hours (start-up, final save) are in every key but not in the
    priorities (their share changes with the work), so after the answer fills, lanes of
    the first list whose priority is below the ``top_k``-th key were read only to be
    ruled out by their own bound (for a small job, most lanes read). Adding the fixed
    hours at the list's lowest rate to its head rules out the whole rest of the list at
    once: every lane left there has a priority at least the head's and a rate at least
    that one, so its own bound would have ruled it out too.
    """
    # The bounds cover the key's first two elements under cost (tier, money), the first
    # under time (speed); the heap keeps the top_k best of them, negated.
    two = order.objective == "cost"
    in_cents = two and totals
    fixed = placer.fixed_hours() if totals else 0.0
    # what the fixed hours add at least to a key of the first list (Order.key_bound adds
    # them at the lane's own rate; Order.first_rate is at most each lane's)
    extra = order.first_rate * fixed * BOUND_SLACK if two else 0.0
    best: list[tuple[float, float]] = []
    kth: tuple[float, ...] = ()
    # Each "beyond kth" test below is `kth < b and (over < b[-1] or _beyond(...))`: a
    # bound at most kth as a tuple is never beyond it, and one above it with money over
    # ``over`` is beyond it without rounding (see _beyond): a cent above kth's total
    # when the key holds cents, -inf when it does not (the tuple order decides alone);
    # only the rest pays a call.
    over = INF
    keys = pricer.keys
    key_bound = order.key_bound
    full = False
    merge = _merged(order, placer, scale)
    price = _lane_pricer(index, placer, pricer, top_k)
    firsts = _known(order.first)
    at_first = -1  # the first list's position of the last head read from it
    drop: bool | int | None = None  # None primes the merge
    while (head := merge.send(drop)) is not None:
        if drop.__class__ is int:
            at_first += drop - 1  # the heads it moved past beyond the last one
        drop = False
        priority, bound, which = head
        if not which and bound is not None:
            at_first += 1
        if full:  # the answer is full: what can no longer rank is skipped, or ends the walk
            if kth < priority and (over < priority[-1] or _beyond(priority, kth, in_cents)):
                break
            if not which and extra:
                # no lane left in the first list can rank, fixed hours added: drop the list
                closed = (priority[0], priority[1] + extra)
                if kth < closed and (over < closed[1] or _beyond(closed, kth, in_cents)):
                    drop = True
                    continue
            if bound is None:  # a lower bound that can still rank: the merge places it
                continue
            lowest = key_bound(bound, scale, fixed)
            if kth < lowest and (over < lowest[-1] or _beyond(lowest, kth, in_cents)):
                if two and not which:  # and the lanes after it its own way: one step
                    drop = 1 + _ruled_out(firsts, at_first + 1, scale, fixed, kth, over, in_cents)
                continue
        elif bound is None:  # a held shape while the answer fills: the merge places it
            continue
        start = len(keys)
        price(bound.lane)
        if len(keys) == start:
            continue
        for key in keys[start:]:
            heapq.heappush(best, (-key[0], -key[1] if two else 0.0))
            if len(best) > top_k:
                heapq.heappop(best)
        if len(best) >= top_k:
            full = True
            kth = (-best[0][0], -best[0][1]) if two else (-best[0][0],)
            over = _cent_above(kth) if in_cents else -INF
    if len(best) < top_k or math.isinf(kth[-1]):
        start = index.priced(placer) if order.rest_from is None else order.rest_from
        for lane in index.lanes(placer, start):
            price(lane)


def _lanes_within(
    index: LaneIndex,
    placer: Placer,
    pricer: Pricer,
    order: Order,
    scale: float,
    top_k: int,
    totals: bool,
    within: tuple[float, float],
) -> None:
    """``balanced``'s second ranking: the fastest ``top_k`` of the candidates whose cost
    key starts at most at ``within`` (the pricer enters only those, keyed by speed).

    Walks the cost ``order`` (its lists merged by priority, as :func:`_bounded_lanes`
    does) only as far as a lane can cost that little: past it, every lane left costs
    more. On the way, a lane whose lowest cost is over it, or (once ``top_k`` are found)
    whose fastest candidate is slower than the ``top_k``-th, is not priced. The lanes
    about as cheap as the cheapest are few; walking by speed instead would read every
    fast cluster to find them over the premium one by one."""
    fixed = placer.fixed_hours() if totals else 0.0
    keys = pricer.keys
    merge = _merged(order, placer, scale)
    price = _lane_pricer(index, placer, pricer, top_k)
    slowest: list[float] = []  # the top_k fastest speeds, negated
    while (head := merge.send(None)) is not None:
        priority, bound, _which = head
        if _over_money(priority[0], priority[1], within):
            break  # the lower head costs more: so does every lane left in both lists
        if bound is None:  # a lower bound that can still be within: the merge places it
            continue
        if _over(bound, scale, fixed, within):
            continue
        fastest = bound.speed * scale if bound.speed > 0 else bound.speed
        if len(slowest) >= top_k and fastest > -slowest[0]:
            continue
        start = len(keys)
        price(bound.lane)
        for key in keys[start:]:
            heapq.heappush(slowest, -key[0])
            if len(slowest) > top_k:
                heapq.heappop(slowest)


def _over_money(tier: float, money: float, within: tuple[float, float]) -> bool:
    """Whether a cost key starting at least at (``tier``, ``money``) is above ``within``
    (a cent over: the key rounds a total to the cent)."""
    if tier != within[0]:
        return tier > within[0]
    return money > within[1] + 0.01


def _over(bound: LaneBound, scale: float, fixed: float, within: tuple[float, float]) -> bool:
    """Whether every candidate of the lane has a cost key above ``within``: its lowest
    (tier, money) as the cost order bounds it
    (:meth:`~service.planning.bounds.Order.key_bound`)."""
    money = max(bound.floor, bound.money * scale + bound.fixed_rate * fixed * BOUND_SLACK)
    return _over_money(bound.tier, money, within)


CENTS_EXACT = 2.0**40
"""Below this (about ¥1.1 trillion) floats are spaced well under half a cent apart, so
that money more than a cent above a total in cents rounds above it (:func:`_cent_above`)."""


def _cent_above(kth: tuple[float, ...]) -> float:
    """Money above which a known total is in cents above ``kth``'s (a total in cents, the
    key's): a cent more, where floats are that fine (:data:`CENTS_EXACT`); ``inf``
    otherwise or when ``kth`` is not a known total."""
    if kth[0] != 0.0 or not kth[1] < CENTS_EXACT:
        return INF
    return kth[1] + 0.01


def _beyond(bound: tuple[float, ...], kth: tuple[float, ...], in_cents: bool) -> bool:
    """Whether ``bound``, as the key holds it (``in_cents``: a known total to the cent,
    :func:`~service.planning.price.cents`), is above ``kth``, the ``top_k``-th key —
    for a ``bound`` above ``kth`` as a tuple (the walks test that first).

    Rounding costs more than the rest of a lane's check (a float rounded to 2 digits is
    correctly rounded through its decimal digits), so the walks call this only when the
    plain money cannot decide: money at most ``kth``'s total in cents rounds to at most it
    (rounding is monotone and a total in cents rounds to itself), so only a bound above
    ``kth`` as a tuple can be beyond it, and money more than a cent above it
    (:func:`_cent_above`) rounds above it."""
    if in_cents and bound[0] == 0.0 and kth[0] == 0.0:
        return cents(bound[1]) > kth[1]
    return bound > kth


Peek = Callable[[int, float], "LaneBound | tuple[float, ...] | None"]
Head = tuple[tuple[float, ...], "LaneBound | None", int]
"""(priority, bound or ``None`` for a held shape, which list) of a merge's lower head."""


def _merged(
    order: Order, placer: Placer, scale: float
) -> Generator[Head | None, bool | int | None, None]:
    """An order's two lists read as one, by priority (what :func:`_bounded_lanes` and
    :func:`_lanes_within` walk): each value is the lower head (ties go to the first
    list), ``None`` once both lists are read. Sent ``True``, the merge drops the rest of
    the first list; sent an ``int`` n, it moves n bounds down the head's list (the head
    and the n - 1 after it, known to be ruled out); else it moves past the head it gave,
    or, for a held shape (known only by a lower bound of its priority), places it so that
    its priority is known.

    A generator rather than an object with take/place methods: a ranking reads a few
    dozen heads, and one resume per head costs a fraction of the calls (head, peek,
    priority, refresh) a method-per-step merge made. For the same reason a bound the
    list has already built is read from it (:meth:`~service.planning.bounds.LazyList.known`,
    what its ``peek`` would return)."""
    lists = (order.first, order.second)
    peeks = (_peeker(lists[0]), _peeker(lists[1]))
    knowns = (_known(lists[0]), _known(lists[1]))
    priority = order.priority
    at = [0, 0]
    heads: list[tuple[tuple[float, ...], LaneBound | None] | None] = [None, None]
    unread: tuple[int, ...] = (0, 1)  # the lists whose head is to be read
    while True:
        for which in unread:
            i, known = at[which], knowns[which]
            # a bound already built is read from the list (what peek would return)
            found: LaneBound | tuple[float, ...] | None = known[i] if i < len(known) else None
            if found is None:
                found = peeks[which](i, scale)
            if found is None:
                heads[which] = None
            elif isinstance(found, tuple):
                heads[which] = found, None
            else:
                heads[which] = priority(found, not which, scale), found
        head_1, head_2 = heads
        if head_2 is None:
            if head_1 is None:
                break
            which = 0
        else:
            which = 0 if head_1 is not None and head_1[0] <= head_2[0] else 1
        head = heads[which]
        assert head is not None
        sent = yield head[0], head[1], which
        if sent is True:
            heads[0] = None
            unread = ()
            continue
        if head[1] is None:
            place_held(lists[which], placer)
        else:
            at[which] += sent if sent.__class__ is int else 1
        unread = (which,)
    while True:
        yield None


def _known(bounds: Sequence[LaneBound]) -> Sequence[LaneBound | None]:
    """The bounds of a list already built, by position (``None`` where one is not yet,
    and past them), without building any: what :func:`_ruled_out` may read."""
    if isinstance(bounds, LazyList | LazyBounds):
        return bounds.known()
    return bounds


def _ruled_out(
    known: Sequence[LaneBound | None],
    start: int,
    scale: float,
    fixed: float,
    kth: tuple[float, ...],
    over: float,
    in_cents: bool,
) -> int:
    """How many built bounds of the first list from ``start`` on are, one after the
    other, ruled out by their own lowest cost key (:meth:`Order.key_bound`, the same
    arithmetic) against the ``top_k``-th key ``kth``.

    Such a run is what a walk reads after the answer fills when the fixed hours close
    the list late (the cheap slow servers deep in it keep its lowest rate low): each
    lane read through the merge only to be ruled out costs a resume, a peek, a priority
    and a bound; here a few float operations. Moving past them changes nothing a walk
    decides: the key only falls as the walk goes on, so a lane ruled out now is ruled
    out when the merge would have reached it, and the priority of a later head of the
    list is at least theirs (a stop or a close they would have caused, it causes)."""
    n = 0
    for i in range(start, len(known)):
        bound = known[i]
        if bound is None:
            break
        money = bound.money * scale + bound.fixed_rate * fixed * BOUND_SLACK
        lowest = (bound.tier, money if money > bound.floor else bound.floor)
        if not (kth < lowest and (over < lowest[1] or _beyond(lowest, kth, in_cents))):
            break
        n += 1
    return n


def _peeker(bounds: Sequence[LaneBound]) -> Peek:
    """How to read ``bounds`` by :func:`~service.planning.bounds.peek` (a lazy list's own
    method, looked up once per ranking)."""
    if isinstance(bounds, LazyList):
        return bounds.peek
    return lambda i, _scale: bounds[i] if i < len(bounds) else None


def _lanes_in_order(
    index: LaneIndex, placer: Placer, pricer: Pricer, objective: Objective, top_k: int
) -> None:
    """Every lane in catalog order, for rankings no bound applies to (CPU-only jobs, or
    a job of unknown length). Under "cost" and "balanced" an unpriced candidate ranks
    after every priced one, and the catalog puts unpriced buckets last: if the priced
    ones fill the answer, stop there."""
    start = 0
    price = _lane_pricer(index, placer, pricer, top_k)
    if objective != "time":
        for lane in index.priced_lanes(placer):
            price(lane)
        if len(pricer.keys) >= top_k:
            return
        start = index.priced(placer)  # filling with unpriced: all of them compete
    for lane in index.lanes(placer, start):
        price(lane)


def _lane_pricer(
    index: LaneIndex, placer: Placer, pricer: Pricer, top_k: int
) -> Callable[[Lane], None]:
    """How a ranking prices a lane: time it for this job and price its first ``top_k``
    groups (one call per lane, what every walk makes).

    A bucket has one billing mode, so only a spot lane can have all its groups left out
    (estimates no cheaper than on-demand): then it is neither timed nor priced. Which
    groups a lane offers a ranking of ``top_k`` (none for such a lane) depends on the
    lane index and ``top_k`` alone, not on the job's length, so it is worked out once
    per lane and kept with the index (:meth:`~service.planning.lanes.LaneIndex.derived`):
    a warm class's every request read the lane's groups, billing and hidden count again
    (about a tenth of a request's ranking stage at another token count)."""
    memo: dict[int, tuple[Lane, Groups]] = index.derived(("lane_groups", top_k), dict)
    add, timed, hidden = pricer.add, placer.timed, pricer.hidden

    def price(lane: Lane) -> None:
        found = memo.get(id(lane))
        if found is None or found[0] is not lane:  # (an id is a lane's only while it lives)
            found = memo[id(lane)] = lane, _lane_groups(lane, index, hidden, top_k)
        groups = found[1]
        if not groups:
            return
        placed = lane.placements
        variants = timed(placed) if placed is not None else placer.build(lane.row)
        if isinstance(variants, str):
            return
        for offer, regions, offers, abroad in groups:
            add(offer, regions, variants, offers, abroad)

    return price


def _lane_groups(
    lane: Lane, index: LaneIndex, hidden: Callable[[Offer], bool], top_k: int
) -> Groups:
    """The groups of ``lane`` a ranking of ``top_k`` prices: its first ``top_k``, or none
    when they are all spot estimates the pricer leaves out (``hidden``,
    :meth:`~service.planning.lanes.LaneIndex.hidden_groups`)."""
    passing = lane.passing
    groups = passing.groups
    if passing.cheapest.billing == "spot" and index.hidden_groups(lane, hidden) >= min(
        top_k, len(groups)
    ):
        return ()
    return groups[:top_k]


def _every_group(
    buckets: Sequence[OfferBucket], flt: OfferFilter, placer: Placer, pricer: Pricer
) -> None:
    """Every bucket and group, each removal charged to its constraint (no memo, no
    bound: what the shortcuts must agree with, and what explains an empty answer)."""
    removed = pricer.removed
    for bucket in buckets:
        offer = bucket.offer
        verdict = flt.row_reason(offer) or flt.billing_reason(offer)
        variants: list[Variant] | str = verdict or placer.build(offer.instance)
        if isinstance(variants, str):
            removed[variants] += bucket.offers
            continue
        for group in bucket.groups:
            reason = flt.group_reason(group)
            if reason:
                removed[reason] += group.offers
                continue
            regions = flt.allowed_regions(group)
            abroad = outside_mainland(group.offer.provider, regions)
            pricer.add(group.offer, regions, variants, group.offers, abroad)


def with_best_spot(
    top: list[Candidate],
    plan: Plan,
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    placer: Placer,
    req: RecommendRequest,
) -> list[Candidate]:
    """``top`` with the best spot option last, when the user opted in to spot (marked
    the job interruptible, or asked for spot among other billing modes) but every spot
    estimate was left out as no cheaper than on-demand (review 4 F10).

    Without a published spot price the estimate is a range up to the on-demand price,
    ranked at its top: it never wins, yet an interruptible batch job is the textbook
    case for spot, which often costs a fraction of on-demand. So the answer shows the
    best of the spot options — ranked among spot alone, over the spot-only filter's own
    lanes (cached like any filter's) — in its last place, with its range, and says why.
    Only for such requests, once per answer."""
    c = req.constraints
    opted_in = c.interruptible or (c.billing is not None and "spot" in c.billing)
    if not opted_in or not top or not plan.hidden_spot or req.top_k < 2:
        return top
    if "spot" not in flt.billing:
        return top
    if flt.billing == frozenset({"spot"}) or any(c.offer.billing == "spot" for c in top):
        return top
    spot_flt = dataclasses.replace(flt, billing=frozenset({"spot"}))
    spot_plan = make_plan(buckets, spot_flt, placer, req.objective, c.budget, c.deadline_hours, 1)
    best = select(spot_plan, 1)
    if not best:
        return top
    best[0].pareto = False  # the front is the main ranking's
    best[0].shown_spot = True
    kept = top[: req.top_k - 1] if len(top) >= req.top_k else top
    return [*kept, best[0]]


def select(plan: Plan, top_k: int) -> list[Candidate]:
    """The ``top_k`` best candidates, Pareto-marked (entries are already distinct)."""
    if not plan.entries:
        return []
    keys = plan.keys
    # The keys are distinct (their last element is the entry's index), so sorting gives
    # nsmallest's order; a bounded ranking keeps a few keys, where one C sort is cheaper
    # than the heap, and an exhaustive walk thousands, where the heap is.
    best = sorted(keys)[:top_k] if len(keys) <= SORT_KEYS else heapq.nsmallest(top_k, keys)
    front = _pareto_front(plan)
    entries, cheapest, demoted = plan.entries, plan.cheapest, plan.demoted
    inference, serving = plan.inference, plan.serving
    result = []
    for k in best:
        offer, v, per_hour, total, hours, regions = entries[int(k[-1])]
        candidate = Candidate(
            offer, v.nodes, v.devices, v.fit, hours, per_hour, total, regions=list(regions)
        )
        if cheapest is not None:
            candidate.balanced = (k[0] == 0.0, cheapest)
        candidate.outdated_engine = demoted is not None and demoted(offer.instance.accelerator)
        candidate.width_bound = v.width_bound
        scale = ranked_money_scale(offer)  # the front is over ranked money
        candidate.pareto = (
            total is not None and hours is not None and front.get(hours) == total * scale
        )
        if inference and v.throughput is not None:
            if serving:
                candidate.pareto = (
                    per_hour is not None and front.get(-v.throughput) == per_hour * scale
                )
            candidate.throughput_tokens_per_s = v.throughput
            if per_hour is not None:
                candidate.price_per_million_tokens = per_million_tokens(per_hour, v.throughput)
        if hours is None and per_hour is not None and v.hours_per_token:
            per_token_hours = training_hours_per_token(offer, v)
            candidate.price_per_million_training_tokens = per_hour * per_token_hours * 1e6
        if offer.billing == "spot":
            candidate.spot = spot_of(offer, v) if v.spot is not None else None
        price = offer.price
        if offer.billing == "monthly" and price is not None and price.price_per_month:
            od = plan.on_demand.get((offer.provider, offer.instance.instance_type))
            if od:
                candidate.break_even_hours = break_even_hours(price.price_per_month, od)
        result.append(candidate)
    return result


SORT_KEYS = 256
"""Up to this many keys :func:`select` sorts them all rather than keep a heap."""


def _pareto_front(plan: Plan) -> dict[float, float]:
    """speed → money of the points on the cost–time front (priced, time known).

    Within one speed only the cheapest point can be on the front, so the front is found
    over distinct speeds (a few hundred), not over every offer.
    """
    cheapest: dict[float, float] = {}
    serving = plan.serving
    for offer, v, per_hour, total, hours, _regions in plan.entries:
        if serving:
            if per_hour is None or v.throughput is None:
                continue
            speed, money = -v.throughput, per_hour * ranked_money_scale(offer)
        else:
            if total is None or hours is None:
                continue
            speed, money = hours, total * ranked_money_scale(offer)
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
