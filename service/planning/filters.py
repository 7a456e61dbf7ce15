"""Stage 2, filter: the constraints over offers, counting what each constraint removed.

:func:`passing` is what the ranking walks: the catalog's buckets that pass a filter,
with their passing groups, whatever the workload (so it is shared by every job asked
with the same constraints).

The counts drive the explanation when nothing fits ("regions removed 40 offers; without
that constraint the nearest option would be …"), so every offer that is dropped is
charged to exactly one constraint: the first one, in the order the checks run (those
that depend only on the instance type first, then region, billing and price).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from service.catalog.aggregate import OfferBucket, OfferGroup
from service.catalog.models import Billing, InstanceType, Offer
from service.catalog.names import outside_mainland
from service.planning.cost import SPOT_INTERRUPTIONS_PER_HOUR
from service.planning.memo import PlanCache
from service.planning.network import node_network
from service.planning.schema import TOP_K_MAX


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Resolved constraints (names already canonical)."""

    cpu_only: bool
    providers: frozenset[str] | None
    regions: frozenset[str] | None
    accelerators: frozenset[str] | None
    excluded_accelerators: frozenset[str]
    """Accelerators ruled out by ``cuda_required`` (Ascend)."""
    billing: frozenset[Billing]
    max_price_per_hour: float | None
    min_vcpus: int | None = None
    """Host vCPUs per node at least."""
    min_memory_gib: float | None = None
    """Host RAM per node at least (GiB)."""
    loader_vcpus: int | None = None
    """Host vCPUs per accelerator at least: what an image model's JPEG pipeline needs
    (:func:`~service.sizing.host.loader_vcpus_per_device`), not a user constraint."""
    accelerator_count: int | None = None
    """Exactly this many accelerators in total: a type must hold it or divide it."""
    max_accelerators: int | None = None
    billing_asked: frozenset[Billing] | None = None
    """The billing modes the user sent (``None``: none sent, the default applies), so a
    removal says why: not asked for, spot on a job that is not interruptible, or monthly
    for a job of unknown length."""
    training: bool = False
    """A training job: rows whose source restricts them to inference (a ModelArts public
    inference pool) are left out."""
    single_node: frozenset[str] = frozenset()
    """With ``accelerator_count``: accelerators some passing type holds that many of on
    one node; their multi-node placements are not offered ("8 GPUs" is one 8-GPU node
    when one exists)."""

    def row_reason(self, offer: Offer) -> str:
        """The constraint that removes every offer of this offer's instance type, or ``""``
        (depends only on the row and its provider, so callers memoize it per row)."""
        row = offer.instance
        if row.is_cpu_only != self.cpu_only:
            return "workload"
        if self.training and not row.runs_training:
            return "usage"
        if self.providers is not None and offer.provider not in self.providers:
            return "providers"
        if row.accelerator in self.excluded_accelerators:
            return "cuda_required"
        if self.accelerators is not None and row.accelerator not in self.accelerators:
            return "accelerators"
        if self.min_vcpus is not None and (row.vcpus or 0) < self.min_vcpus:
            return "min_vcpus"
        if self.min_memory_gib is not None and (row.memory_gib or 0.0) < self.min_memory_gib:
            return "min_memory_gib"
        per_node = row.accelerator_count
        loader = self.loader_vcpus
        if loader and per_node and row.vcpus is not None and row.vcpus < loader * per_node:
            return "loader_vcpus"
        if per_node and self.max_accelerators is not None and per_node > self.max_accelerators:
            return "max_accelerators"
        count = self.accelerator_count
        if (
            per_node
            and count is not None
            and (
                per_node > count
                or count % per_node
                or (per_node < count and row.accelerator in self.single_node)
            )
        ):
            return "accelerator_count"
        return ""

    def billing_reason(self, offer: Offer) -> str:
        """Why this offer's billing mode is left out, or ``""`` when it is allowed."""
        billing = offer.billing
        if billing in self.billing:
            return ""
        asked = self.billing_asked
        if billing == "spot" and (asked is None or "spot" in asked):
            return "spot_not_interruptible"
        if billing == "monthly" and asked is None:
            return "monthly_unknown_length"
        return "billing"

    def group_reason(self, group: OfferGroup) -> str:
        """The constraint on region or price that removes these offers, or ``""`` (billing
        is checked per bucket)."""
        offer = group.offer
        if self.regions is not None and self.regions.isdisjoint(group.regions):
            return "regions"
        if self.max_price_per_hour is not None:
            price = offer.price_per_hour
            if price is None or price > self.max_price_per_hour:
                return "max_price_per_hour"
        return ""

    def allowed_regions(self, group: OfferGroup) -> tuple[str, ...]:
        """The group's regions this request allows (all without a region constraint)."""
        if self.regions is None:
            return group.regions
        return tuple(r for r in group.regions if r in self.regions)


def spot_above_on_demand(offer: Offer, on_demand: Mapping[tuple[str, str], float]) -> bool:
    """A spot *estimate* at or above the on-demand price of the same instance type that
    the request also allows (review P11).

    Without a published spot price the model can only say "10–100 % of on-demand" and
    shows the top of that range; with the reclaim overhead on top, such a row costs more
    than the on-demand row of the same type in every case, so it can never be the better
    buy and only crowds the list. A spot price that is known (or an estimate below
    on-demand) stays. ``on_demand``: the cheapest passing on-demand price per (provider,
    instance type), empty when on-demand is not allowed.
    """
    price = offer.price
    if offer.billing != "spot" or price is None or not price.estimated:
        return False
    hourly = price.price_per_hour
    cheapest = on_demand.get((offer.provider, offer.instance.instance_type))
    return hourly is not None and cheapest is not None and hourly >= cheapest


def relaxed(flt: OfferFilter, constraint: str) -> OfferFilter:
    """The filter with one user constraint lifted (for "did you mean")."""
    if constraint == "providers":
        return replace(flt, providers=None)
    if constraint == "regions":
        return replace(flt, regions=None)
    if constraint == "accelerators":
        return replace(flt, accelerators=None)
    if constraint == "cuda_required":
        return replace(flt, excluded_accelerators=frozenset())
    if constraint == "max_price_per_hour":
        return replace(flt, max_price_per_hour=None)
    if constraint == "billing":
        return replace(flt, billing=flt.billing | {"on_demand", "monthly"})
    if constraint == "min_vcpus":
        return replace(flt, min_vcpus=None)
    if constraint == "min_memory_gib":
        return replace(flt, min_memory_gib=None)
    if constraint == "max_accelerators":
        return replace(flt, max_accelerators=None)
    if constraint == "accelerator_count":
        return replace(flt, accelerator_count=None, single_node=frozenset())
    return flt


USER_CONSTRAINTS: Sequence[str] = (
    "providers",
    "regions",
    "accelerators",
    "cuda_required",
    "billing",
    "max_price_per_hour",
    "min_vcpus",
    "min_memory_gib",
)


Group = tuple[Offer, tuple[str, ...], int, bool]
"""(first offer, regions the request allows, offers folded, every one of those regions
outside mainland China) of a passing group: at an equal price a mainland region ranks
first (review 4 F12), decided here once per filter."""
Groups = tuple[Group, ...]


Shape = tuple[str | None, float | None, int, bool, float | None]
"""(accelerator, memory per device, devices per node, RDMA, network between nodes in
Gbit/s): what a row's placements depend on (:mod:`service.planning.place`)."""


def shape_of(row: InstanceType) -> Shape:
    network = node_network(row)
    return (
        row.accelerator,
        row.accelerator_memory_gib,
        row.accelerator_count,
        network is not None,
        None if network is None else network[0],
    )


class Passing:
    """A bucket that passes a request's filters: its row, what its bound is computed
    from (its cheapest passing group's prices), and its groups (cheapest first, regions
    already narrowed) that pass the region and price checks — at most :data:`TOP_K_MAX`,
    since no answer can use more groups of one bucket. The groups are filtered on first
    use: a ranking prices a few lanes, so most buckets of a large catalog never need
    more than their cheapest group."""

    __slots__ = (
        "_bucket", "_flt", "_groups", "cheapest", "priced_bucket", "rank_hourly",
        "rank_monthly", "row", "shape", "spot_rate",
    )  # fmt: skip

    def __init__(self, bucket: OfferBucket, flt: OfferFilter, cheapest: Offer) -> None:
        self._bucket = bucket
        self._flt = flt
        self._groups: Groups | None = None
        self.row: InstanceType = bucket.offer.instance
        self.shape: Shape = shape_of(self.row)
        self.cheapest = cheapest
        """The offer of the cheapest passing group."""
        self.priced_bucket = bucket.groups[0].offer.price_per_hour is not None
        """The bucket's cheapest offer has a price (buckets are ordered priced first)."""
        self.rank_hourly, self.rank_monthly, self.spot_rate = _ranked_prices(cheapest)
        """The price per hour ranking uses of the cheapest passing group (an estimate at
        the top of its range); the same for a month (``None`` unless billed monthly);
        spot: the reclaim rate per node-hour its price states, else the model's default
        (``None`` unless billed on spot)."""

    @property
    def groups(self) -> Groups:
        groups = self._groups
        if groups is None:  # (two threads may both build it: the same tuple)
            flt = self._flt
            found: list[Group] = []
            for group in self._bucket.groups:
                if flt.group_reason(group):
                    continue
                regions = flt.allowed_regions(group)
                abroad = outside_mainland(group.offer.provider, regions)
                found.append((group.offer, regions, group.offers, abroad))
                if len(found) == TOP_K_MAX:
                    break
            groups = self._groups = tuple(found)
        return groups


class ShapedRows:
    """Passing rows with their instance shapes numbered: a catalog of hundreds of rows
    has a few dozen shapes, and a new workload places each shape once, then joins the
    rows by number (no shape tuple hashed per row)."""

    __slots__ = ("_floors", "_members", "ids", "rows", "shapes")

    def __init__(self, rows: tuple[Passing, ...]) -> None:
        self.rows = rows
        numbers: dict[Shape, int] = {}
        shapes: list[tuple[Shape, InstanceType]] = []
        ids: list[int] = []
        for p in rows:
            number = numbers.get(p.shape)
            if number is None:
                number = numbers[p.shape] = len(shapes)
                shapes.append((p.shape, p.row))
            ids.append(number)
        self.shapes: tuple[tuple[Shape, InstanceType], ...] = tuple(shapes)
        """Each distinct shape with its first row (placements depend on the shape only)."""
        self.ids: tuple[int, ...] = tuple(ids)
        """Per row, the number of its shape in :attr:`shapes`."""
        self._members: tuple[tuple[int, ...], ...] | None = None
        self._floors: tuple[tuple[float, tuple[float, float]], ...] | None = None

    @property
    def members(self) -> tuple[tuple[int, ...], ...]:
        """Per shape number, the indices of its rows in :attr:`rows` (ascending)."""
        if self._members is None:
            members: list[list[int]] = [[] for _ in self.shapes]
            for i, number in enumerate(self.ids):
                members[number].append(i)
            self._members = tuple(tuple(m) for m in members)
        return self._members

    @property
    def price_floors(self) -> tuple[tuple[float, tuple[float, float]], ...]:
        """Per shape number, the lowest ranking price of its rows billed by the hour
        (``inf`` if none), and the lowest (tier, price) of the others: (0, monthly
        price) for subscriptions, (2, inf) for rows without a price ((inf, inf) if
        none) — what a cost ranking's bounds start from, whatever the workload."""
        if self._floors is None:
            floors = []
            for members in self.members:
                hourly = math.inf
                other = (math.inf, math.inf)
                for i in members:
                    p = self.rows[i]
                    if p.rank_hourly is None:
                        other = min(other, (2.0, math.inf))
                    elif p.rank_monthly:
                        other = min(other, (0.0, p.rank_monthly))
                    else:
                        hourly = min(hourly, p.rank_hourly)
                floors.append((hourly, other))
            self._floors = tuple(floors)
        return self._floors


TypeKey = tuple[str, str]
"""(provider, instance type)."""
SpotCandidates = tuple[int, TypeKey, tuple[tuple[float, int], ...]]
"""(shape number, type, (hourly estimate, offers folded) per group) of spot groups that
a workload may hide (:meth:`PassingRows.spot_candidates`)."""
SpotCount = tuple[int, int | None, SpotCandidates]
"""A spot candidate's shape number, the offers it hides once that shape holds the job
(``None``: its type has on-demand rows of other shapes, whose verdicts decide its
on-demand price), and the candidate (:meth:`PassingRows.spot_counts`)."""


class PassingRows:
    """The buckets that pass one filter, in catalog order, found as far as asked: the
    catalog puts the buckets with a price first, and a ranking by cost or balance needs
    only those; the unpriced tail is filtered when a ranking needs it (``time``, or too
    few priced candidates). Each part is filtered once per catalog and filter."""

    def __init__(self, buckets: Sequence[OfferBucket], flt: OfferFilter) -> None:
        self._buckets = buckets
        self._flt = flt
        self._priced_end = next(
            (i for i, b in enumerate(buckets) if b.groups[0].offer.price_per_hour is None),
            len(buckets),
        )
        self._priced: ShapedRows | None = None
        self._unpriced: ShapedRows | None = None
        self._on_demand_rows: dict[TypeKey, list[tuple[int, float]]] | None = None
        self._spot: tuple[SpotCandidates, ...] | None = None
        self._spot_counts: tuple[SpotCount, ...] | None = None

    def priced(self) -> ShapedRows:
        if self._priced is None:
            self._priced = ShapedRows(_passing(self._buckets[: self._priced_end], self._flt))
        return self._priced

    def unpriced(self) -> ShapedRows:
        if self._unpriced is None:
            self._unpriced = ShapedRows(_passing(self._buckets[self._priced_end :], self._flt))
        return self._unpriced

    def on_demand_rows(self) -> dict[TypeKey, list[tuple[int, float]]]:
        """Per (provider, instance type), the on-demand hourly price of each priced row
        (with its shape number): what
        :meth:`~service.planning.lanes.LaneIndex.cheapest_on_demand` folds, type by type."""
        if self._on_demand_rows is None:
            shaped = self.priced()
            entries: dict[TypeKey, list[tuple[int, float]]] = {}
            for p, number in zip(shaped.rows, shaped.ids, strict=True):
                offer = p.cheapest
                if offer.billing == "on_demand" and offer.price_per_hour:
                    key = (offer.provider, p.row.instance_type)
                    entries.setdefault(key, []).append((number, offer.price_per_hour))
            self._on_demand_rows = entries
        return self._on_demand_rows

    def spot_candidates(self) -> tuple[SpotCandidates, ...]:
        """The passing spot groups of the priced rows that a workload can hide as no
        cheaper than on-demand (:func:`spot_above_on_demand`), by shape number and type:
        estimates at or above the cheapest on-demand price of their type over *all*
        priced rows. A workload compares them with the cheapest over the rows whose shape
        holds the job, which is never lower, so the groups left out here are never
        hidden, and a filter without spot has none."""
        if self._spot is None:
            shaped = self.priced()
            lowest = {
                key: min(price for _, price in found)
                for key, found in self.on_demand_rows().items()
            }
            grouped: dict[tuple[int, TypeKey], list[tuple[float, int]]] = {}
            for p, number in zip(shaped.rows, shaped.ids, strict=True):
                if p.cheapest.billing != "spot":
                    continue
                for offer, _regions, offers, _abroad in p.groups:
                    if spot_above_on_demand(offer, lowest):
                        key = (offer.provider, offer.instance.instance_type)
                        hourly = offer.price_per_hour
                        assert hourly is not None  # an estimate above a price has one
                        grouped.setdefault((number, key), []).append((hourly, offers))
            self._spot = tuple((n, key, tuple(found)) for (n, key), found in grouped.items())
        return self._spot

    def spot_counts(self) -> tuple[SpotCount, ...]:
        """The spot candidates (:meth:`spot_candidates`) with what each hides whatever the
        workload, where that is known: when every on-demand row of the candidate's type is
        of the candidate's shape, a workload that holds on that shape holds on all of
        them, so the type's on-demand price is their minimum. Why: a new job shape folded
        each type's rows and summed each candidate's groups again (about a twelfth of its
        answer), for a count that then depends only on its verdicts."""
        if self._spot_counts is None:
            on_demand = self.on_demand_rows()
            counts = []
            for candidate in self.spot_candidates():
                number, key, estimates = candidate
                entries = on_demand.get(key, ())
                fixed = None
                if all(shape == number for shape, _price in entries):
                    cheapest = min((price for _shape, price in entries), default=math.inf)
                    fixed = sum(offers for hourly, offers in estimates if hourly >= cheapest)
                counts.append((number, fixed, candidate))
            self._spot_counts = tuple(counts)
        return self._spot_counts


def passing(buckets: Sequence[OfferBucket], flt: OfferFilter, cache: PlanCache) -> PassingRows:
    """The buckets that pass ``flt`` (one :class:`PassingRows` per catalog and filter)."""
    return cache.catalog_shared(buckets, ("passing", flt), lambda: PassingRows(buckets, flt))


def _passing(buckets: Sequence[OfferBucket], flt: OfferFilter) -> tuple[Passing, ...]:
    out = []
    for bucket in buckets:
        offer = bucket.offer
        if flt.row_reason(offer) or offer.billing not in flt.billing:
            continue
        cheapest = next((g.offer for g in bucket.groups if not flt.group_reason(g)), None)
        if cheapest is not None:
            out.append(Passing(bucket, flt, cheapest))
    return tuple(out)


def _ranked_prices(offer: Offer) -> tuple[float | None, float | None, float | None]:
    price = offer.price
    if price is None:
        return None, None, None
    monthly = price.ranking_month if offer.billing == "monthly" else None
    rate = None
    if offer.billing == "spot":
        rate = price.interruption_rate_per_hour
        if rate is None:
            rate = SPOT_INTERRUPTIONS_PER_HOUR
    return price.ranking_price, monthly, rate
