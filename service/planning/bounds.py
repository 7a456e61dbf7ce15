"""Lower bounds on what a lane's candidates can rank as, for branch and bound.

Every bound is exact arithmetic on the placements and prices, never an estimate:

* hours are linear in the job's work (training: C = 6·N·D, so hours per token is fixed
  for a placement; batch inference: output tokens over throughput), and training on spot
  adds a constant factor (the interruption model, :func:`service.planning.cost.spot_overhead`);
* money is linear in hours on demand and on spot; a subscription costs at least one
  month, and at least its monthly price spread over the hours;
* open-ended serving is ranked by price per token (hourly price over throughput): no work at all.

A :class:`LaneBound` holds those figures per unit of work, so that an ordering of the
lanes built once (per workload shape and filter) holds for every job length: each
objective sorts by a figure whose scaling with the work is the same for every lane of a
list (:class:`Order`), and the planner merges the lists by priority
(:func:`service.planning.rank.rank`).
"""

from __future__ import annotations

import functools
import heapq
import math
import operator
import threading
from collections.abc import Hashable, Iterable, Sequence
from typing import Literal, cast, overload

import msgspec

from service.catalog.models import HOURS_PER_MONTH
from service.planning.cost import spot_overhead
from service.planning.filters import ShapedRows
from service.planning.lanes import Lane
from service.planning.place import Placer
from service.planning.schema import Objective

INF = math.inf

BoundMode = Literal["train", "batch", "open", "capacity"]
OPEN_MODES = ("open", "capacity")
"""Serving with no job length: per token ("open") or sized to a throughput target."""
"""What a job's cost and time scale with: training tokens, inference output tokens, or
nothing (open-ended serving is ranked by price per token)."""

BOUND_SLACK = 1 - 1e-9
"""Bounds are scaled down by this much so that float rounding never makes a bound
exceed the figure it bounds."""


class LaneBound(msgspec.Struct, frozen=True, gc=False):
    """The lowest figures any candidate of ``lane`` can have, per unit of work (W)."""

    lane: Lane
    tier: float
    """Lowest money tier of the ranking key (0 total known, 1 hourly only, 2 unpriced)."""
    floor: float
    """Money below which no candidate of that tier goes, whatever W (a month of a
    subscription; the hourly price when hours are unknown); 0 when none."""
    money: float
    """Money per unit of work (open serving: per hour) for tier 0."""
    speed: float
    """Hours per unit of work (effective: with spot overhead); open serving: minus the
    highest throughput; ``inf`` when unknown."""
    fixed_rate: float = 0.0
    """Lowest price per hour of a tier-0 candidate billed by the hour (all its nodes):
    what each of the job's fixed hours costs at least (training's start-up and final
    save, see :meth:`~service.planning.place.Placer.fixed_hours`); 0 for subscriptions,
    which a month's floor bounds instead."""


Timing = tuple[tuple[tuple[int, float | None, float | None], ...], float]
"""A lane's (nodes, hours per unit of work, throughput) per placement, and the lowest
hours (its ``speed``): what its bound takes from the placements, whatever the price."""


def lane_bound(lane: Lane, mode: BoundMode, timings: dict[Hashable, Timing]) -> LaneBound:
    """``timings``: the placements' timings by (placements, spot rate), shared by the
    lanes of one ordering (many buckets have the same placements)."""
    # the prices ranking uses (an estimate at the top of its range), so the bound holds
    passing = lane.passing
    hourly, monthly = passing.rank_hourly, passing.rank_monthly
    rate = passing.spot_rate if mode == "train" else None  # serving is not interrupted
    key: Hashable = id(lane.placements) if rate is None else (id(lane.placements), rate)
    timing = timings.get(key)
    if timing is None:
        timing = timings[key] = _timing(lane, mode, rate)
    items, speed = timing
    if hourly is None:
        return LaneBound(lane, 2.0, INF, INF, speed)
    if len(items) == 1 and mode not in OPEN_MODES and not monthly:
        # the common lane: one placement billed by the hour (what the loop below gives)
        nodes, hours, _ = items[0]
        per_hour = hourly * nodes
        if hours is None:
            return LaneBound(lane, 1.0, per_hour, INF, speed)
        money = per_hour * hours
        return LaneBound(lane, 0.0, 0.0, money, speed, per_hour)
    tier, floor, money = 2.0, INF, INF
    fixed_rate = INF
    for nodes, hours, throughput in items:
        per_hour = hourly * nodes
        if mode in OPEN_MODES:
            per_token = per_hour / throughput if throughput else INF
            # the cost key's money: per token, or per hour when sized to a target
            item = (0.0, 0.0, per_hour if mode == "capacity" else per_token)
        elif hours is None:
            item = (1.0, per_hour, INF)
        elif monthly:
            month = monthly * nodes
            item = (0.0, month, month / HOURS_PER_MONTH * hours)
        else:
            item = (0.0, 0.0, per_hour * hours)
            fixed_rate = min(fixed_rate, per_hour)
        # Componentwise minimum over the lane's candidates of its lowest tier: a bound
        # on every one of them.
        if item[0] < tier:
            tier, floor, money = item
        elif item[0] == tier:
            floor = min(floor, item[1])
            money = min(money, item[2])
    if tier != 0.0 or monthly or mode in OPEN_MODES or fixed_rate == INF:
        fixed_rate = 0.0
    return LaneBound(lane, tier, floor, money, speed, fixed_rate)


def _timing(lane: Lane, mode: BoundMode, rate: float | None) -> Timing:
    """Hours per unit of work per placement (spot: with the overhead at ``rate``)."""
    speed = INF
    items = []
    for nodes, _devices, _fit, throughput, hours_per_token in (
        lane.placements.items if lane.placements is not None else ()
    ):
        if mode in OPEN_MODES:
            hours = None
            speed = min(speed, -(throughput or 0.0))
        else:
            hours = hours_per_token if mode == "train" else None
            if mode == "batch" and throughput:
                hours = 1 / (throughput * 3600)
            if hours is not None and rate is not None:
                hours *= _spot_factor(nodes, rate)
            speed = min(speed, INF if hours is None else hours)
        items.append((nodes, hours, throughput))
    return tuple(items), speed


@functools.lru_cache(maxsize=1024)
def _spot_factor(nodes: int, rate: float) -> float:
    """Effective hours per hour on spot (:func:`spot_overhead` is linear in hours): a
    catalog has a handful of (node count, reclaim rate) pairs."""
    return spot_overhead(1.0, nodes, rate).effective_hours


class Order(msgspec.Struct, frozen=True):
    """The lanes one objective can rank, in two lists, each in ascending order of a
    figure that scales the same way with the work for all its lanes."""

    objective: Objective
    first: Sequence[LaneBound]
    second: Sequence[LaneBound]
    rest_from: int | None
    """Lanes (in bucket order) from here on are in neither list: they can rank only when
    the lists cannot fill the answer with finite keys (unpriced under cost/balanced);
    ``None``: from the end of the priced lanes
    (:meth:`~service.planning.lanes.LaneIndex.priced`)."""
    first_rate: float = 0.0
    """Cost: at most the :attr:`LaneBound.fixed_rate` of every lane of the first list
    (the lowest hourly price ranking uses among its rows: each of those lanes is billed
    by the hour, on one node at least). A ranking adds the job's fixed hours at this rate
    to the first list's head to close the list once no lane left in it can rank, where
    each lane's own :meth:`key_bound` would rule it out one by one."""

    def priority(self, bound: LaneBound, in_first: bool, scale: float) -> tuple[float, ...]:
        """At most :meth:`key_bound`, and ascending along each list."""
        if self.objective == "cost":
            if in_first:
                return bound.tier, bound.money * scale
            return bound.tier, bound.floor
        return (bound.speed * scale if bound.speed > 0 else bound.speed,)

    def key_bound(
        self, bound: LaneBound, scale: float, fixed_hours: float = 0.0
    ) -> tuple[float, ...]:
        """The lowest leading elements of the ranking key any candidate of the lane has
        (``scale``: the work, or 1 for open serving, shrunk by :data:`BOUND_SLACK`;
        ``fixed_hours``: a training job's hours that do not scale with the work, billed
        at the lane's lowest hourly price at least — ordering cannot take them, since
        their share changes with the work, but pruning a lane can)."""
        if self.objective == "cost":
            fixed = bound.fixed_rate * fixed_hours * BOUND_SLACK
            return bound.tier, max(bound.floor, bound.money * scale + fixed)
        return (bound.speed * scale if bound.speed > 0 else bound.speed,)


def order_lanes(objective: Objective, mode: BoundMode, lanes: Sequence[Lane], priced: int) -> Order:
    """The :class:`Order` of ``lanes`` (all of the index; the first ``priced`` come from
    buckets with a price) for ``objective``: ``cost`` or ``time`` (``balanced`` is a cost
    ranking and a time ranking, :func:`~service.planning.rank.balanced_plan`)."""
    timings: dict[Hashable, Timing] = {}
    if objective == "time":  # speed first: unpriced lanes compete too
        bounds = [lane_bound(lane, mode, timings) for lane in lanes]
        bounds.sort(key=operator.attrgetter("speed"))
        return Order(objective, bounds, [], len(lanes))
    return _cost_order(mode, lanes, priced, timings)


def _cost_order(
    mode: BoundMode, lanes: Sequence[Lane], priced: int, timings: dict[Hashable, Timing]
) -> Order:
    """The cost :class:`Order`: linear lanes (total known, no floor) by money per unit of
    work, the others by (tier, floor).

    A ranking walks the first few lanes of each list, so for the common lane (one
    placement: the fast path of :func:`lane_bound`) only its sort key is computed here,
    with the same arithmetic; its :class:`LaneBound` is built when the ranking reaches it
    (:class:`LazyBounds`). Sorting indices keeps catalog order among equal keys, as a
    stable sort of the bounds would."""
    at: list[int] = []
    money: list[float] = []
    other_at: list[int] = []
    other_key: list[tuple[float, float]] = []
    built: dict[int, LaneBound] = {}
    """Bounds of the other lanes built here (several placements, open serving)."""
    for i in range(priced):
        linear, tier, value, b = _cost_key(lanes[i], mode, timings)
        if linear:
            at.append(i)
            money.append(value)
        else:
            other_at.append(i)
            other_key.append((tier, value))
        if b is not None:
            built[i] = b
    first = sorted(range(len(at)), key=money.__getitem__)
    second = sorted(range(len(other_at)), key=other_key.__getitem__)
    return Order(
        "cost",
        LazyBounds(lanes, [at[j] for j in first], mode, timings, built),
        LazyBounds(lanes, [other_at[j] for j in second], mode, timings, built),
        priced,
        _lowest_rate(lanes[i].passing.rank_hourly for i in at),
    )


def _lowest_rate(hourly: Iterable[float | None]) -> float:
    """:attr:`Order.first_rate` of a first list whose rows rank at the ``hourly`` prices
    (0 when there are none, or a price is unknown: no fixed hours are added then)."""
    rates = list(hourly)
    if not rates or any(rate is None for rate in rates):
        return 0.0
    lowest = min(cast(list[float], rates))
    return lowest if 0.0 < lowest < INF else 0.0


def _cost_key(
    lane: Lane, mode: BoundMode, timings: dict[Hashable, Timing]
) -> tuple[bool, float, float, LaneBound | None]:
    """Where ``lane`` goes in the cost :class:`Order`: (in the first list, tier, money
    per unit of work there or floor in the second, its bound if built on the way)."""
    p = lane.passing
    hourly = p.rank_hourly
    if hourly is None:
        return False, 2.0, INF, None
    if mode not in OPEN_MODES:
        rate = p.spot_rate if mode == "train" else None
        key: Hashable = id(lane.placements) if rate is None else (id(lane.placements), rate)
        timing = timings.get(key)
        if timing is None:
            timing = timings[key] = _timing(lane, mode, rate)
        items = timing[0]
        if len(items) == 1:
            nodes, hours, _ = items[0]
            if hours is None:
                return False, 1.0, hourly * nodes, None
            if p.rank_monthly:
                return False, 0.0, p.rank_monthly * nodes, None
            return True, 0.0, hourly * nodes * hours, None
    b = lane_bound(lane, mode, timings)
    if b.tier == 0.0 and b.floor == 0.0:
        return True, 0.0, b.money, b
    return False, b.tier, b.floor, b


FLOOR_SLACK = 1 - 1e-6
"""A shape's floor (:meth:`~service.planning.place.Placer.hours_floor`) is scaled down
by this much before it is compared with exact keys: the floor and the hours it bounds
are computed in different orders, a few ulps apart."""


def training_cost_order(rows: ShapedRows, placer: Placer) -> Order:
    """The cost :class:`Order` of a training job over the priced ``rows`` (equal, list
    for list, to :func:`order_lanes` over their lanes), placing a shape only when a
    ranking reads that far down a list.

    A shape's rows are held back under a lower bound of their keys — the hourly price
    times the shape's floor on nodes x hours per token (the first list: billed by the
    hour), the monthly price (the second: a subscription costs a month per node at
    least), (2, inf) for rows without a price — and a list hands out an exact key only
    once every held-back bound of that list is above it (a bound equal to it is placed
    first: ties keep catalog order). Shapes without a floor are placed at once. A cheap
    answer then places the few shapes that can hold it, not the catalog's few dozen."""
    expander = _ShapeExpander(rows, placer)
    rate = _lowest_rate(hourly for hourly, _other in rows.price_floors if hourly < INF)
    return Order("cost", LazyList(expander, 0), LazyList(expander, 1), None, rate)


_Exact = tuple[float, float, int, Lane, "LaneBound | None"]
"""A placed row's lane in a list: (tier, key value, row index, lane, its bound if built)."""
_Held = tuple[float, float, int]
"""A shape held back in a list: (tier, bound value, shape number).

Both are flat tuples, ordered as ((tier, value), index, ...) would be: one tuple per
entry, not two. Why: a new job shape's order keeps a few hundred of them (most never
read), and the young collections of the cycle collector walk every container a request
leaves behind."""


def _at_most(held: _Held, exact: _Exact) -> bool:
    """``(tier, value)`` of ``held`` at most that of ``exact``, as tuples compare."""
    return held[0] < exact[0] or (held[0] == exact[0] and held[1] <= exact[1])


def place_held(bounds: Sequence[LaneBound], placer: Placer) -> None:
    """Place the shape a lazy list's :meth:`~LazyList.peek` held back (``bounds`` is
    one: only a lazy list holds shapes back)."""
    assert isinstance(bounds, LazyList)
    bounds.place_held(placer)


class _ShapeExpander:
    """What the two lists of one :func:`training_cost_order` share: the shapes not
    placed yet, each under its bound per list, and the lanes of the placed ones by key
    (under a lock: the order is shared by the requests of one class)."""

    def __init__(self, rows: ShapedRows, placer: Placer) -> None:
        self.rows = rows
        self.placer: Placer | None = placer
        """The placer of the read under way (``None`` between reads)."""
        job = placer.job
        self._placer_of = (job, placer.accelerators, placer.cache, placer.signature)
        self.timings: dict[Hashable, Timing] = {}
        self.lock = threading.Lock()
        self.placed = [False] * len(rows.shapes)
        self.exact: tuple[list[_Exact], list[_Exact]] = ([], [])
        self.pending: tuple[list[_Held], list[_Held]] = ([], [])
        eager = []
        for number, ((_shape, row), (hourly, other)) in enumerate(
            zip(rows.shapes, rows.price_floors, strict=True)
        ):
            floor = placer.hours_floor(row)
            if floor is None:
                eager.append(number)
                continue
            if hourly < INF:
                heapq.heappush(self.pending[0], (0.0, hourly * floor * FLOOR_SLACK, number))
            if other < (INF, INF):
                heapq.heappush(self.pending[1], (other[0], other[1], number))
        for number in eager:
            self._place(number)
        self.placer = None

    def reading(self, placer: Placer | None) -> None:
        """Place with ``placer`` until :meth:`done` (a placer of the order's job)."""
        self.placer = placer if placer is not None else Placer(*self._placer_of)

    def done(self) -> None:
        self.placer = None

    def _place(self, number: int) -> None:
        """Place shape ``number``; its rows' lanes join the lists by exact key."""
        self.placed[number] = True
        shape, first_row = self.rows.shapes[number]
        assert self.placer is not None  # placing only while reading
        placements = self.placer.placements(first_row, shape)
        if isinstance(placements, str):
            return
        rows = self.rows.rows
        for i in self.rows.members[number]:
            p = rows[i]
            lane = Lane(p.row, placements, p)
            linear, tier, value, b = _cost_key(lane, "train", self.timings)
            heapq.heappush(self.exact[0 if linear else 1], (tier, value, i, lane, b))

    def next_bound(self, which: int) -> LaneBound | None:
        """The next bound of list ``which`` (0: first, 1: second), ``None`` at its end
        (called under :attr:`lock`)."""
        while True:
            found = self.peek(which)
            if not isinstance(found, tuple):
                return found
            self.place_held(which)

    def peek(self, which: int) -> LaneBound | tuple[float, float] | None:
        """The next bound of list ``which`` if it can be handed out without placing a
        shape, else the held-back key of the next shape to place (a lower bound of every
        key still to come in that list), ``None`` at its end (called under :attr:`lock`)."""
        exact, pending = self.exact[which], self.pending[which]
        while pending and self.placed[pending[0][2]]:
            heapq.heappop(pending)
        if pending and (not exact or _at_most(pending[0], exact[0])):
            return pending[0][0], pending[0][1]
        if not exact:
            return None
        _tier, _value, _i, lane, bound = heapq.heappop(exact)
        return bound if bound is not None else lane_bound(lane, "train", self.timings)

    def place_held(self, which: int) -> None:
        """Place the shape :meth:`peek` held back in list ``which``, if it still is
        (called under :attr:`lock`, while reading)."""
        exact, pending = self.exact[which], self.pending[which]
        while pending and self.placed[pending[0][2]]:
            heapq.heappop(pending)
        if pending and (not exact or _at_most(pending[0], exact[0])):
            self._place(heapq.heappop(pending)[2])


class _Bounds(Sequence[LaneBound]):
    """A sequence of bounds built as it is read (:meth:`_at`: the ``i``-th)."""

    __slots__ = ()

    def _at(self, i: int) -> LaneBound:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> LaneBound: ...

    @overload
    def __getitem__(self, i: slice) -> list[LaneBound]: ...

    def __getitem__(self, i: int | slice) -> LaneBound | list[LaneBound]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        return self._at(i)


class LazyList(_Bounds):
    """One list of a :func:`training_cost_order`, handed out as far as it is read."""

    __slots__ = ("_expander", "_out", "_which")

    def __init__(self, expander: _ShapeExpander, which: int) -> None:
        self._expander = expander
        self._which = which
        self._out: list[LaneBound] = []

    def _fill(self, upto: int | None, placer: Placer | None = None) -> None:
        """Hand out bounds until ``upto`` are (``None``: all), placing with ``placer``
        (``None``: a placer of the order's job made for this read)."""
        out, expander = self._out, self._expander
        with expander.lock:
            expander.reading(placer)
            try:
                while upto is None or len(out) < upto:
                    bound = expander.next_bound(self._which)
                    if bound is None:
                        return
                    out.append(bound)
            finally:
                expander.done()

    def peek(self, i: int, scale: float) -> LaneBound | tuple[float, ...] | None:
        """The ``i``-th bound (the list read up to ``i`` already) when it can be handed
        out without placing a shape; else a lower bound of its
        :meth:`Order.priority` at ``scale`` (the held-back key of the next shape to
        place), for a ranking to stop at without placing it; ``None`` past the end.

        A ranking that stops below the next held-back bound then places no shape for it:
        the shapes read only to be compared with a bound the answer is already under
        were about a fifth of a new job shape's placements."""
        out = self._out
        if i < len(out):
            return out[i]
        expander = self._expander
        with expander.lock:
            while i >= len(out):
                found = expander.peek(self._which)
                if found is None:
                    return None
                if isinstance(found, tuple):
                    return found if self._which else (found[0], found[1] * scale)
                out.append(found)
            return out[i]

    def place_held(self, placer: Placer) -> None:
        """Place (with ``placer``) the shape :meth:`peek` held back: the next
        :meth:`peek` hands out a bound or holds back another shape."""
        expander = self._expander
        with expander.lock:
            expander.reading(placer)
            try:
                expander.place_held(self._which)
            finally:
                expander.done()

    def __len__(self) -> int:
        self._fill(None)
        return len(self._out)

    def known(self) -> Sequence[LaneBound]:
        """The bounds handed out so far (a list that only grows), building none."""
        return self._out

    def _at(self, i: int) -> LaneBound:
        out = self._out
        if 0 <= i < len(out):
            return out[i]
        self._fill(None if i < 0 else i + 1)
        return out[i]  # IndexError past the end, as a list


class LazyBounds(_Bounds):
    """The bounds of ``lanes`` in a given order (indices into ``lanes``), each built on
    first access by :func:`lane_bound` (two threads may build one twice: the same value)."""

    __slots__ = ("_lanes", "_made", "_mode", "_order", "_timings")

    def __init__(
        self,
        lanes: Sequence[Lane],
        order: list[int],
        mode: BoundMode,
        timings: dict[Hashable, Timing],
        built: dict[int, LaneBound] | None = None,
    ) -> None:
        """``built``: bounds already built, by index into ``lanes``."""
        self._lanes = lanes
        self._order = order
        self._mode: BoundMode = mode
        self._timings = timings
        self._made: list[LaneBound | None] = (
            [built.get(i) for i in order] if built else [None] * len(order)
        )

    def __len__(self) -> int:
        return len(self._order)

    def known(self) -> Sequence[LaneBound | None]:
        """The bounds built so far by position (``None``: not yet), building none."""
        return self._made

    def _at(self, i: int) -> LaneBound:
        bound = self._made[i]
        if bound is None:
            lane = self._lanes[self._order[i]]
            bound = self._made[i] = lane_bound(lane, self._mode, self._timings)
        return bound


_TIER_FLOOR = operator.attrgetter("tier", "floor")
