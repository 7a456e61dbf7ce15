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
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar, cast

import msgspec

from service.catalog.aggregate import OfferBucket
from service.catalog.models import InstanceType
from service.planning.filters import (
    Groups,
    OfferFilter,
    Passing,
    PassingRows,
    ShapedRows,
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
        self._on_demand: dict[tuple[str, str], float] | None = None
        self._placed: list[bool] = []
        self._placeable: list[bool] | None = None
        """Per shape number of the priced rows, whether the job can be placed on it."""
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

    def on_demand(self, placer: Placer) -> dict[tuple[str, str], float]:
        """Cheapest passing on-demand hourly price per (provider, instance type), over
        the priced lanes (the filter's index, kept for the shapes the job is placed on)."""
        if self._on_demand is None:
            by_shape, mixed = self._rows.on_demand()
            placed = self.placeable(placer)
            index: dict[tuple[str, str], float] = {}
            for number, prices in by_shape.items():
                if placed[number]:
                    index.update(prices)
            for key, found in mixed.items():
                kept = [price for number, price in found if placed[number]]
                if kept:
                    index[key] = min(kept)
            self._on_demand = index
        return self._on_demand

    def placeable(self, placer: Placer) -> list[bool]:
        """Per shape number of the priced rows, whether the job can be placed on it
        (without timing the shapes no ranking has read: see
        :meth:`~service.planning.place.Placer.placeable`)."""
        if self._priced is not None or self.flt.cpu_only:
            self.priced(placer)
            return self._placed
        if self._placeable is None:
            self._placeable = [
                placer.placeable(row, shape) for shape, row in self._rows.priced().shapes
            ]
        return self._placeable

    def placed_rows(self, placer: Placer) -> list[Passing]:
        """The priced rows whose shape holds the job, in catalog order (the priced
        lanes' rows, without building the lanes)."""
        placeable = self.placeable(placer)
        shaped = self._rows.priced()
        return [p for p, number in zip(shaped.rows, shaped.ids, strict=True) if placeable[number]]

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
