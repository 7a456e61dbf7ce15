"""The catalog as one request's filters and workload see it: lanes, the filter stage's
passing buckets joined with the place stage's placements.

A :class:`LaneIndex` is what stays the same between requests that differ only in the
job's length, budget, ``top_k`` or language: which buckets pass the filters, their
placements, and (kept here for the rank stage) per objective an order of the lanes by
the lowest key their candidates can have. It lives in the :class:`PlanCache`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import TypeVar, cast

import msgspec

from service.catalog.aggregate import OfferBucket
from service.catalog.models import InstanceType, Offer
from service.planning.filters import (
    Groups,
    OfferFilter,
    Passing,
    PassingRows,
    ShapedRows,
    TypeKey,
    passing,
)
from service.planning.memo import PlanCache
from service.planning.place import Placements, Placer

INF = math.inf
T = TypeVar("T")


class Lane(msgspec.Struct, frozen=True, gc=False):
    """A bucket that survives a request's filters (see
    :class:`~service.planning.filters.Passing` for the fields), with its placements.

    Built per workload for every passing row, so it holds only what the workload adds
    (its placements); the row's prices are read through :attr:`passing`."""

    row: InstanceType
    placements: Placements | None
    """``None`` for CPU-only rows (sized per request from the job's data)."""
    passing: Passing

    @property
    def groups(self) -> Groups:
        return self.passing.groups

    @property
    def priced_bucket(self) -> bool:
        return self.passing.priced_bucket

    @property
    def rank_hourly(self) -> float | None:
        return self.passing.rank_hourly

    @property
    def rank_monthly(self) -> float | None:
        return self.passing.rank_monthly

    @property
    def spot_rate(self) -> float | None:
        return self.passing.spot_rate


class LaneIndex:
    """The lanes of one filter and one workload, in catalog order (priced first).

    Indexed as far as some request has needed: ranking by cost or balance needs the
    priced buckets, the unpriced tail only when a request asks for it (``time``
    objective, or too few priced candidates).
    """

    def __init__(self, buckets: Sequence[OfferBucket], flt: OfferFilter, cache: PlanCache) -> None:
        self.flt = flt
        self._rows = passing(buckets, flt, cache)
        self._lanes: list[Lane] = []
        self._priced: int | None = None
        """How many lanes the priced rows gave, once indexed."""
        self._complete = False
        """The unpriced rows are indexed too."""
        self._derived: dict[Hashable, object] = {}
        self._on_demand: dict[TypeKey, float | None] = {}
        """:meth:`cheapest_on_demand` per type asked about."""
        self._placed: list[bool] = []
        """Per shape number of the priced rows, whether it holds the job (once indexed)."""
        self._holds: list[bool | None] | None = None
        self._hidden: dict[int, int] = {}
        """:meth:`hidden_groups` per spot lane (by identity: the index holds its lanes, and
        the orders kept with it theirs, as long as the dict)."""
        """:meth:`holds` per priced shape number, before the priced rows are indexed."""
        self._lock = threading.Lock()
        """Indexing extends shared lists (see :class:`PlanCache` on threads)."""

    @property
    def rows(self) -> PassingRows:
        """The filter's passing rows the lanes are joined from (shared by workloads)."""
        return self._rows

    def lanes(self, placer: Placer, start: int = 0) -> list[Lane]:
        """Every lane from the ``start``-th (indexing the rest of the catalog)."""
        if not self._complete:
            self.priced(placer)
            with self._lock:
                if not self._complete:
                    self._extend(placer, self._rows.unpriced())
                    self._complete = True
        return self._lanes[start:]

    def priced_lanes(self, placer: Placer) -> list[Lane]:
        """The lanes of buckets with a price (indexing only those)."""
        return self._lanes[: self.priced(placer)]

    def priced(self, placer: Placer) -> int:
        """Index every bucket with a price; how many lanes that gave (the unpriced
        lanes, if any, follow from there)."""
        if self._priced is None:
            with self._lock:
                if self._priced is None:
                    self._placed = self._extend(placer, self._rows.priced())
                    self._priced = len(self._lanes)
        return self._priced

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """A value the rank stage derives from these lanes (orders by bound), kept as
        long as the index."""
        value = self._derived.get(key)
        if value is None:
            value = self._derived[key] = build()
        return cast(T, value)

    def on_demand(self, placer: Placer) -> OnDemandPrices:
        """Cheapest passing on-demand hourly price per (provider, instance type), over
        the priced lanes: the rows whose shape holds the job (see
        :class:`OnDemandPrices`, a view that looks up only the types asked about)."""
        return OnDemandPrices(self, placer)

    def cheapest_on_demand(self, key: TypeKey, placer: Placer) -> float | None:
        """:meth:`on_demand`'s price for ``key`` (``None``: no priced lane sells it on
        demand), worked out on first use from the rows of that type alone."""
        known = self._on_demand
        if key in known:
            return known[key]
        entries = self._rows.on_demand_rows().get(key, ())
        kept = [price for number, price in entries if self.holds(number, placer)]
        found = known[key] = min(kept) if kept else None
        return found

    def holds(self, number: int, placer: Placer) -> bool:
        """Whether the job can be placed on priced shape ``number``: the lanes' verdict
        once the priced rows are indexed, else
        :meth:`~service.planning.place.Placer.placeable` for that shape alone (memory,
        not time, for a shape no ranking has read)."""
        if self._priced is not None or self.flt.cpu_only:
            self.priced(placer)
            return self._placed[number]
        verdicts = self._holds
        if verdicts is None:
            verdicts = self._holds = [None] * len(self._rows.priced().shapes)
        found = verdicts[number]
        if found is None:
            shape, row = self._rows.priced().shapes[number]
            found = verdicts[number] = placer.placeable(row, shape)
        return found

    def hidden_groups(self, lane: Lane, hidden: Callable[[Offer], bool]) -> int:
        """How many of a spot lane's groups, cheapest first, the pricer leaves out in a
        row as estimates no cheaper than on-demand (``hidden``: its test,
        :meth:`~service.planning.price.Pricer.hidden`, over this index's on-demand prices,
        whatever the job's length): a lane with no more groups than that within a
        request's ``top_k`` needs no timing or pricing. Worked out once per lane: a warm
        class's every request would check the same groups again."""
        found = self._hidden.get(id(lane))
        if found is None:
            found = 0
            for offer, _regions, _offers, _abroad in lane.passing.groups:
                if not hidden(offer):
                    break
                found += 1
            self._hidden[id(lane)] = found
        return found

    def hidden_spot(self, placer: Placer) -> int:
        """How many spot offers of the priced lanes the pricer leaves out as no cheaper
        than on-demand (:func:`~service.planning.filters.spot_above_on_demand`), counted
        over the filter's few candidates (:meth:`PassingRows.spot_candidates`): a shape
        is sized only when one of its spot estimates could be hidden, and a filter
        without spot sizes none (it sized every priced shape's memory before: ~17 % of
        a new job shape's answer).

        A candidate whose type's on-demand rows are all of its own shape (every type of
        the real catalog) hides a count known per filter
        (:meth:`~service.planning.filters.PassingRows.spot_counts`) once its shape holds
        the job; only the others fold their type's on-demand rows per workload
        (:meth:`cheapest_on_demand`)."""
        hidden = 0
        for number, fixed, (_number, key, estimates) in self._rows.spot_counts():
            if not self.holds(number, placer):
                continue
            if fixed is not None:
                hidden += fixed
                continue
            cheapest = self.cheapest_on_demand(key, placer)
            if cheapest is not None:
                hidden += sum(offers for hourly, offers in estimates if hourly >= cheapest)
        return hidden

    def _extend(self, placer: Placer, shaped: ShapedRows) -> list[bool]:
        """Join ``shaped`` rows with their placements (under the lock: the lists are
        shared): each shape placed once, then the rows whose shape holds the job; per
        shape number, whether it does."""
        rows = shaped.rows
        if self.flt.cpu_only:
            self._lanes.extend([Lane(p.row, None, p) for p in rows])
            return [True] * len(shaped.shapes)
        table = placer.table
        placed = [table.get(shape) or placer.placements(row, shape) for shape, row in shaped.shapes]
        self._lanes.extend(
            [
                Lane(p.row, placements, p)
                for p, number in zip(rows, shaped.ids, strict=True)
                if not isinstance(placements := placed[number], str)
            ]
        )
        return [not isinstance(placements, str) for placements in placed]


def lane_index(buckets: Sequence[OfferBucket], flt: OfferFilter, placer: Placer) -> LaneIndex:
    """The request's :class:`LaneIndex`, shared through the cache with other requests
    for the same workload and filter."""
    cache = placer.cache
    return cache.catalog_shared(
        buckets, ("lanes", flt, placer.prefix), lambda: LaneIndex(buckets, flt, cache)
    )


class OnDemandPrices(Mapping[TypeKey, float]):
    """:meth:`LaneIndex.on_demand` as a mapping for one request's placer: a type's price
    is worked out when it is looked up (the pricer asks for its spot estimates' types,
    the answer for its subscriptions'), and kept in the index for the requests after.

    It replaced an index built over every priced shape, which needed whether each shape
    holds the job — a memory fit of every shape of the catalog for a new job shape
    (~17 % of its answer) — although a job that is not interruptible looks up a type or
    two, or none. Iterating it (tests) works the whole index out."""

    __slots__ = ("_index", "_placer")

    def __init__(self, index: LaneIndex, placer: Placer) -> None:
        self._index = index
        self._placer = placer

    def get(self, key: TypeKey, default: float | None = None) -> float | None:  # type: ignore[override]
        found = self._index.cheapest_on_demand(key, self._placer)
        return default if found is None else found

    def __getitem__(self, key: TypeKey) -> float:
        found = self._index.cheapest_on_demand(key, self._placer)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[TypeKey]:
        return iter([key for key in self._index.rows.on_demand_rows() if key in self])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.get(cast(TypeKey, key)) is not None
