"""The planner's hot path: candidate placements for every offer, ranked, in one pass.

``/v1/recommend`` must stay fast on catalogs of 10k+ offers (benchmark target: 10 ms
p50 on 10k), so the work is split by what it depends on:

* per distinct instance row (a few hundred): which node counts fit and how long the job
  takes — :class:`Variant`, computed once through :class:`FitCache`;
* per offer (thousands): arithmetic only — price × nodes × hours — and one sort-key tuple;
* per answer (``top_k``): :class:`Candidate` objects with everything the response shows.

Ranking keeps every key as a plain tuple and picks the best with ``heapq.nsmallest``
instead of sorting all of them. Unknown prices are never cheap: a key's first money
element is a tier (0 = job total known, 1 = only the hourly price known, 2 = unpriced).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec

from service.accelerators import AcceleratorRegistry
from service.catalog import OfferBucket
from service.planning.candidates import Candidate, FitCache, node_counts, smallest_fitting_nodes
from service.planning.cost import (
    SpotOverhead,
    break_even_hours,
    monthly_cost,
    on_demand_cost,
    per_million_tokens,
    spot_overhead,
)
from service.planning.filters import OfferFilter
from service.planning.schema import Objective
from service.providers import AcceleratorSpec, InstanceType, Offer
from service.sizing import Fit, ResolvedWorkload, host_for, preprocess_hours

INF = math.inf


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to run the job on one instance type: how many nodes, fit, hours."""

    nodes: int
    devices: int
    fit: Fit | None
    """``None`` for CPU-only placements."""
    hours: float | None
    spot: SpotOverhead | None
    throughput: float | None = None
    """Serving: decode tokens/s of all replicas together."""


@dataclass(frozen=True, slots=True)
class Workload:
    """What the variant builder needs to know about the request."""

    rw: ResolvedWorkload
    serving: bool
    cpu_only: bool
    max_nodes: int
    scale_out: bool
    target_tokens_per_s: float | None
    headroom_frac: float
    output_tokens: float | None = None
    """Inference with a known amount of output (a batch job): rank by the job's total."""

    @property
    def open_ended(self) -> bool:
        """Serving with no job length: ranked by price per hour and throughput."""
        return self.serving and not self.output_tokens


Entry = tuple[Offer, Variant, float | None, float | None, float | None, list[str]]
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


Placement = tuple[int, int, Fit, float | None]
"""(nodes, devices, fit, serving throughput): what memory decides, independent of tokens."""


class PlacementMemo:
    """Process-wide memo of placements per (workload memory signature, instance shape).

    Which node counts hold a job depends on the model, precision, method, batch and
    sequence — not on how many tokens it trains on, nor on the constraints that only
    filter or rank. Platforms ask about the same workload again and again with other
    token counts, objectives, budgets or languages; those answers are cache misses, but
    their placements are not. Bounded (oldest entries go first).
    """

    def __init__(self, max_entries: int = 50_000) -> None:
        self.max_entries = max_entries
        self._data: dict[tuple[object, ...], list[Placement] | str] = {}

    def get(self, key: tuple[object, ...]) -> list[Placement] | str | None:
        return self._data.get(key)

    def put(self, key: tuple[object, ...], value: list[Placement] | str) -> None:
        if len(self._data) >= self.max_entries:
            del self._data[next(iter(self._data))]
        self._data[key] = value


def memory_signature(workload: msgspec.Struct) -> bytes:
    """The workload without the fields that change time but never memory."""
    fields = {f: None for f in ("tokens", "output_tokens") if hasattr(workload, f)}
    return _signature_encoder.encode(msgspec.structs.replace(workload, **fields))


_signature_encoder = msgspec.json.Encoder(order="deterministic")


class VariantBuilder:
    """Variants per instance row: placements (memoized per shape, and across requests
    through a :class:`PlacementMemo`) timed for this request's tokens."""

    def __init__(
        self,
        wl: Workload,
        accelerators: AcceleratorRegistry,
        memo: PlacementMemo | None = None,
        signature: bytes = b"",
    ) -> None:
        self.wl = wl
        self.accelerators = accelerators
        self.cache = FitCache(wl.rw, wl.headroom_frac)
        self.need = host_for(wl.rw, 0) if wl.cpu_only else None
        """CPU-only jobs: the host the job needs (what the CPU placements must cover)."""
        self._by_shape: dict[tuple[object, ...], list[Variant] | str] = {}
        self._memo = memo if signature else None
        self._memo_prefix = (signature, wl.max_nodes, wl.scale_out, wl.headroom_frac,
                             wl.target_tokens_per_s)  # fmt: skip

    def build(self, row: InstanceType) -> list[Variant] | str:
        """The row's variants, or the reason it cannot run the job (memoized per shape:
        rows with the same accelerators, memory and network place the job the same way)."""
        shape = (
            row.accelerator,
            row.accelerator_memory_gib,
            row.accelerator_count,
            row.rdma in ("rdma", "erdma"),
            row.vcpus if self.wl.cpu_only else None,
            row.memory_gib if self.wl.cpu_only else None,
        )
        variants = self._by_shape.get(shape)
        if variants is None:
            variants = self._by_shape[shape] = self._build(row, shape)
        return variants

    def _build(self, row: InstanceType, shape: tuple[object, ...]) -> list[Variant] | str:
        if self.wl.cpu_only:
            return self._cpu(row)
        registered = self.accelerators.resolve(row.accelerator or "")
        if registered is None or row.accelerator_memory_gib is None:
            return "unknown_accelerator"
        spec = self.cache.spec_for(registered, row.accelerator_memory_gib)
        placements: list[Placement] | str | None = None
        key = (*self._memo_prefix, shape)
        if self._memo is not None:
            placements = self._memo.get(key)
        if placements is None:
            placements = self._placements(spec, row)
            if self._memo is not None:
                self._memo.put(key, placements)
        if isinstance(placements, str):
            return placements
        variants = []
        for nodes, devices, fit, throughput in placements:
            if self.wl.serving:
                hours = None
                if self.wl.output_tokens and throughput:
                    hours = self.wl.output_tokens / throughput / 3600
                variants.append(Variant(nodes, devices, fit, hours, None, throughput))
                continue
            hours = self.cache.hours(spec, devices)
            spot = None if hours is None else spot_overhead(hours, nodes)
            variants.append(Variant(nodes, devices, fit, hours, spot))
        return variants

    def _placements(self, spec: AcceleratorSpec, row: InstanceType) -> list[Placement] | str:
        per_node = row.accelerator_count
        if self.wl.serving:
            fit = self.cache.fit(spec, per_node)
            if fit is None:
                return "memory"
            tps = self.cache.throughput(spec, per_node)
            replicas = 1
            if self.wl.target_tokens_per_s and tps > 0:
                replicas = max(1, math.ceil(self.wl.target_tokens_per_s / tps))
            if replicas > self.wl.max_nodes:
                return "max_nodes"
            return [(replicas, per_node * replicas, fit, tps * replicas)]
        multi = row.rdma in ("rdma", "erdma")
        found = smallest_fitting_nodes(self.cache, spec, per_node, self.wl.max_nodes, multi)
        if found is None:
            return "memory"
        n_min, fit_min = found
        placements: list[Placement] = []
        for nodes in node_counts(n_min, self.wl.max_nodes, multi, self.wl.scale_out):
            devices = per_node * nodes
            fit = fit_min if nodes == n_min else self.cache.fit(spec, devices)
            if fit is not None:
                placements.append((nodes, devices, fit, None))
        return placements

    def _cpu(self, row: InstanceType) -> list[Variant] | str:
        need = self.need
        assert need is not None
        if not row.vcpus or not row.memory_gib:
            return "unknown_specs"
        nodes = max(math.ceil(need.vcpus / row.vcpus), math.ceil(need.ram_gib / row.memory_gib))
        if nodes > self.wl.max_nodes:
            return "max_nodes"
        hours = preprocess_hours(self.wl.rw, row.vcpus * nodes)
        spot = None if hours is None else spot_overhead(hours, nodes)
        return [Variant(nodes, 0, None, hours, spot)]


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
    cheapest first): row-level checks and variants run once per bucket, and within a
    bucket at most ``top_k`` passing groups are taken, since every group of a bucket
    has the same placements and only the cheaper ones can rank higher. The cost per
    request therefore depends on the number of instance types, not of offers.

    ``count_removed`` walks every group so that ``removed`` counts each offer dropped
    by each constraint (used to explain an empty answer; slower on huge catalogs).
    """
    removed: Counter[str] = Counter()
    row_verdicts: dict[int, str] = {}
    variants_by_row: dict[int, list[Variant] | str] = {}
    serving = builder.wl.open_ended
    key_of = _key_function(objective, serving)
    entries: list[Entry] = []
    keys: list[tuple[float, ...]] = []
    # Under "cost" and "balanced" an unpriced candidate ranks after every priced one, and
    # the catalog puts unpriced buckets last: once top_k candidates exist, stop there.
    stop_at_unpriced = objective != "time" and not count_removed
    for bucket in buckets:
        if (
            stop_at_unpriced
            and len(keys) >= top_k
            and bucket.groups[0].offer.price_per_hour is None
        ):
            break
        offer = bucket.offer
        row_id = id(offer.instance)
        verdict = row_verdicts.get(row_id)
        if verdict is None:
            verdict = row_verdicts[row_id] = flt.row_reason(offer)
        if not verdict and offer.billing not in flt.billing:
            verdict = "billing"
        variants: list[Variant] | str = ""
        if not verdict:
            cached = variants_by_row.get(row_id)
            variants = cached if cached is not None else builder.build(offer.instance)
            variants_by_row[row_id] = variants
            verdict = variants if isinstance(variants, str) else ""
        if verdict:
            removed[verdict] += bucket.offers
            continue
        assert isinstance(variants, list)
        taken = 0
        for group in bucket.groups:
            reason = flt.group_reason(group)
            if reason:
                removed[reason] += group.offers
                continue
            if taken == top_k:
                if not count_removed:
                    break
                continue
            taken += 1
            regions = list(group.regions)
            if flt.regions is not None:
                regions = [r for r in regions if r in flt.regions]
            group_offer = group.offer
            for v in variants:
                per_hour, total, hours = _economics(group_offer, v)
                if deadline_hours is not None and not serving and (hours or INF) > deadline_hours:
                    removed["deadline_hours"] += group.offers
                    continue
                if budget is not None and not serving and (total or INF) > budget:
                    removed["budget"] += group.offers
                    continue
                keys.append(key_of(per_hour, total, hours, v, len(keys)))
                entries.append((group_offer, v, per_hour, total, hours, regions))
    return Plan(entries, keys, removed, objective, serving, builder.wl.serving)


def _economics(offer: Offer, v: Variant) -> tuple[float | None, float | None, float | None]:
    """(price per hour for all nodes, job total, job hours) under the offer's billing."""
    price = offer.price
    if price is None or price.price_per_hour is None:
        return None, None, v.hours
    per_hour = price.price_per_hour * v.nodes
    hours = v.hours
    if offer.billing == "spot" and v.spot is not None:
        hours = v.spot.effective_hours
    if hours is None:
        return per_hour, None, None
    if offer.billing == "monthly" and price.price_per_month:
        return per_hour, monthly_cost(price.price_per_month, v.nodes, hours), hours
    return per_hour, on_demand_cost(price.price_per_hour, v.nodes, hours), hours


KeyFunction = Callable[[float | None, float | None, float | None, Variant, int], tuple[float, ...]]


def _key_function(objective: Objective, serving: bool) -> KeyFunction:
    def money(per_hour: float | None, total: float | None) -> tuple[float, float]:
        if per_hour is None:
            return 2.0, INF
        if serving or total is None:
            return (0.0 if serving else 1.0), per_hour
        return 0.0, total

    def speed(hours: float | None, v: Variant) -> float:
        if serving:
            return -(v.throughput or 0.0)
        return INF if hours is None else hours

    def cost_key(
        per_hour: float | None, total: float | None, hours: float | None, v: Variant, i: int
    ) -> tuple[float, ...]:
        tier, value = money(per_hour, total)
        return (tier, value, speed(hours, v), v.nodes, i)

    def time_key(
        per_hour: float | None, total: float | None, hours: float | None, v: Variant, i: int
    ) -> tuple[float, ...]:
        tier, value = money(per_hour, total)
        return (speed(hours, v), tier, value, v.nodes, i)

    def balanced_key(
        per_hour: float | None, total: float | None, hours: float | None, v: Variant, i: int
    ) -> tuple[float, ...]:
        tier, value = money(per_hour, total)
        s = speed(hours, v)
        score = INF
        if tier == 0 and value > 0 and s != INF:
            # Scale-free balance: the geometric mean of cost and time (or cost per token).
            score = math.log(value) - math.log(-s) if serving else math.log(value) + math.log(s)
        return (score, tier, value, v.nodes, i)

    return {"cost": cost_key, "time": time_key, "balanced": balanced_key}[objective]


def select(plan: Plan, top_k: int) -> list[Candidate]:
    """The ``top_k`` best candidates, Pareto-marked (entries are already distinct)."""
    if not plan.entries:
        return []
    best = heapq.nsmallest(top_k, plan.keys)
    front = _pareto_front(plan)
    chosen = [plan.entries[int(k[-1])] for k in best]
    on_demand = _on_demand_index(plan) if any(e[0].billing == "monthly" for e in chosen) else {}
    result = []
    for offer, v, per_hour, total, hours, regions in chosen:
        candidate = Candidate(offer, v.nodes, v.devices, v.fit, hours, per_hour, total)
        candidate.regions = regions
        candidate.pareto = total is not None and hours is not None and front.get(hours) == total
        if plan.inference and v.throughput is not None:
            if plan.serving:
                candidate.pareto = per_hour is not None and front.get(-v.throughput) == per_hour
            candidate.throughput_tokens_per_s = v.throughput
            if per_hour is not None:
                candidate.price_per_million_tokens = per_million_tokens(per_hour, v.throughput)
        if offer.billing == "spot":
            candidate.spot = v.spot
        price = offer.price
        if offer.billing == "monthly" and price is not None and price.price_per_month:
            od = on_demand.get((offer.provider, offer.instance.instance_type))
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
    for _, v, per_hour, total, hours, _regions in plan.entries:
        if plan.serving:
            if per_hour is None or v.throughput is None:
                continue
            speed, money = -v.throughput, per_hour
        else:
            if total is None or hours is None:
                continue
            speed, money = hours, total
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


def _on_demand_index(plan: Plan) -> dict[tuple[str, str], float]:
    """On-demand hourly price per (provider, instance type), for monthly break-even."""
    index: dict[tuple[str, str], float] = {}
    for offer, *_ in plan.entries:
        price = offer.price
        if offer.billing == "on_demand" and price is not None and price.price_per_hour:
            index[(offer.provider, offer.instance.instance_type)] = price.price_per_hour
    return index
