"""The cold path's shortcuts compute what the plain walk over the lanes computes.

A never-seen job shape builds its lanes and their cost order from scratch, so those
steps take shortcuts (:mod:`service.planning.lanes`, :mod:`service.planning.bounds`): the
rows joined to placements by shape number, the on-demand index kept per filter and shape,
the cost order sorting sort keys and building a lane's bound only when it is read. Each
is checked here against the definition it shortcuts — every lane's own
:func:`~service.planning.bounds.lane_bound`, a stable sort, a walk over the priced lanes
— on the real catalog and on one where an instance type is sold with two shapes.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from service.catalog.aggregate import CatalogSnapshot, OfferBucket
from service.catalog.models import Offer
from service.planning.bounds import (
    FLOOR_SLACK,
    LaneBound,
    LazyList,
    Order,
    lane_bound,
    order_lanes,
    training_cost_order,
)
from service.planning.filters import spot_above_on_demand
from service.planning.lanes import Lane, LaneIndex, lane_index
from service.planning.memo import PlanCache
from service.planning.place import Placer
from service.planning.recommend import PlanContext
from service.planning.resolve import resolve
from service.planning.schema import RecommendRequest
from service.sizing import time_for
from service.sizing.compute import Cluster, dequant_micro_step_seconds, device_hours_floor
from tests.conftest import builtin_plan_context

WORKLOADS: list[dict[str, Any]] = [
    {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024,
     "tokens": 2e7},
    {"kind": "finetune", "model": "qwen2.5-14b", "method": "lora", "seq_len": 3000,
     "tokens": 3e7},
    {"kind": "finetune", "model": "llama-2-70b", "method": "full", "tokens": 1e9},
    {"kind": "pretrain", "model": "llama-2-7b", "tokens": 2e11},
    {"kind": "inference", "model": "llama-2-7b", "output_tokens": 5e8},
    {"kind": "inference", "model": "llama-2-13b", "precision": "int4"},
]  # fmt: skip
CONSTRAINTS: list[dict[str, Any]] = [
    {},
    {"billing": ["spot", "on_demand"]},
    {"billing": ["monthly", "on_demand"]},
    {"max_nodes": 4, "deadline_hours": 1000},  # node doublings: lanes of several placements
]


@pytest.fixture(scope="module")
def real() -> CatalogSnapshot:
    return builtin_plan_context().snapshot


@pytest.fixture(scope="module")
def two_shapes(real: CatalogSnapshot) -> CatalogSnapshot:
    """Every other priced on-demand GPU bucket followed by a copy of it whose rows have half
    the device memory: one (provider, instance type) on demand in two buckets of two
    shapes, so that some jobs fit only one of them. :func:`bucket_offers` makes one
    bucket per (provider, type, billing) today; the planner's indexes must not rely on
    it (they take any buckets)."""

    def halved(offer: Offer) -> Offer:
        memory = offer.instance.accelerator_memory_gib
        assert memory is not None
        row = msgspec.structs.replace(offer.instance, accelerator_memory_gib=memory / 2)
        return msgspec.structs.replace(offer, instance=row)

    buckets: list[OfferBucket] = []
    eligible = 0
    for bucket in real.buckets:
        buckets.append(bucket)
        offer = bucket.offer
        if (
            offer.billing == "on_demand"
            and offer.price_per_hour is not None
            and offer.instance.accelerator_memory_gib is not None
        ):
            eligible += 1
            if eligible % 2:
                continue
            groups = tuple(msgspec.structs.replace(g, offer=halved(g.offer)) for g in bucket.groups)
            buckets.append(msgspec.structs.replace(bucket, offer=halved(offer), groups=groups))
    return msgspec.structs.replace(real, buckets=tuple(buckets), fingerprint="two-shapes")


def _index(ctx: PlanContext, body: dict[str, Any]) -> tuple[LaneIndex, Placer]:
    req = msgspec.convert(body, RecommendRequest)
    cache = ctx.cache()
    resolved = resolve(req, ctx, cache)
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    return lane_index(ctx.snapshot.buckets, resolved.flt, placer), placer


def _requests() -> list[dict[str, Any]]:
    return [
        {"workload": workload, "constraints": constraints}
        for workload in WORKLOADS
        for constraints in CONSTRAINTS
    ]


def _eager_cost_order(
    lanes: Sequence[Lane], priced: int, mode: Any
) -> tuple[list[LaneBound], list[LaneBound]]:
    """The cost order by definition: every priced lane's bound, linear ones (tier 0, no
    floor) stably sorted by money, the others by (tier, floor)."""
    timings: dict[Any, Any] = {}
    bounds = [lane_bound(lane, mode, timings) for lane in lanes[:priced]]
    linear = [b for b in bounds if b.tier == 0.0 and b.floor == 0.0]
    other = [b for b in bounds if not (b.tier == 0.0 and b.floor == 0.0)]
    linear.sort(key=operator.attrgetter("money"))
    other.sort(key=operator.attrgetter("tier", "floor"))
    return linear, other


def _same(got: Sequence[LaneBound], want: list[LaneBound]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.lane is w.lane or g.lane == w.lane
        for field in ("tier", "floor", "money", "speed", "fixed_rate"):
            a, b = getattr(g, field), getattr(w, field)
            assert a == b or (math.isnan(a) and math.isnan(b)), field


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_cost_order_is_the_sorted_bounds(catalog: str, request: pytest.FixtureRequest) -> None:
    ctx = builtin_plan_context(request.getfixturevalue(catalog))
    checked = 0
    for body in _requests():
        index, placer = _index(ctx, body)
        lanes, priced = index.priced_lanes(placer), index.priced(placer)
        for mode in ("train", "batch", "open"):
            order = order_lanes("cost", mode, lanes, priced)
            assert isinstance(order, Order)
            assert order.rest_from == priced
            linear, other = _eager_cost_order(lanes, priced, mode)
            # read out of order first: a bound built late is the bound built in order
            if len(order.first) > 2:
                assert order.first[-1] == order.first[len(order.first) - 1]
            _same(order.first, linear)
            _same(order.second, other)
            checked += len(linear) + len(other)
    assert checked > 1000  # the catalogs have lanes of every kind to order


def _walked_on_demand(lanes: Sequence[Lane]) -> dict[tuple[str, str], float]:
    """The definition: the cheapest passing on-demand price per (provider, instance
    type) over the priced lanes."""
    index: dict[tuple[str, str], float] = {}
    for lane in lanes:
        offer: Offer = lane.passing.cheapest
        if offer.billing == "on_demand" and offer.price_per_hour:
            key = (offer.provider, lane.row.instance_type)
            index[key] = min(offer.price_per_hour, index.get(key, math.inf))
    return index


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_on_demand_index_is_the_walk_over_lanes(
    catalog: str, request: pytest.FixtureRequest
) -> None:
    ctx = builtin_plan_context(request.getfixturevalue(catalog))
    differs = 0
    for body in _requests():
        index, placer = _index(ctx, body)
        lanes = index.priced_lanes(placer)
        walked = _walked_on_demand(lanes)
        assert index.on_demand(placer) == walked
        everything = _walked_on_demand([Lane(p.row, None, p) for p in index.rows.priced().rows])
        differs += walked != everything
    # some jobs fit only some shapes, so the index must drop the others' prices
    assert differs > 0


def test_two_shapes_catalog_has_types_with_two_shapes(two_shapes: CatalogSnapshot) -> None:
    """Types sold on demand in rows of two shapes are exercised (not only one shape per
    type): the on-demand price of such a type depends on which of its shapes hold the job."""
    ctx = builtin_plan_context(two_shapes)
    index, _ = _index(ctx, {"workload": WORKLOADS[0]})
    shapes_per_type = [
        len({number for number, _ in found}) for found in index.rows.on_demand_rows().values()
    ]
    assert 2 in shapes_per_type
    assert 1 in shapes_per_type


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_hidden_spot_count_is_the_walk_over_lanes(
    catalog: str, request: pytest.FixtureRequest
) -> None:
    """The hidden-spot count, taken over the filter's candidates and sizing only their
    shapes, is the definition: every spot group of the priced lanes whose estimate is at
    or above the walked on-demand price of its type."""
    ctx = builtin_plan_context(request.getfixturevalue(catalog))
    hidden = 0
    for workload in WORKLOADS:
        for billing in (["spot", "on_demand"], ["spot"], ["spot", "on_demand", "monthly"]):
            body = {"workload": workload,
                    "constraints": {"billing": billing, "interruptible": True}}  # fmt: skip
            index, placer = _index(ctx, body)
            walked = _walked_on_demand(index.priced_lanes(placer))
            want = sum(
                offers
                for lane in index.priced_lanes(placer)
                if lane.passing.cheapest.billing == "spot"
                for offer, _regions, offers, _abroad in lane.groups
                if spot_above_on_demand(offer, walked)
            )
            # a fresh index of the same job: counted before any lane is indexed
            fresh, fresh_placer = _index(builtin_plan_context(ctx.snapshot), body)
            assert fresh.hidden_spot(fresh_placer) == want
            assert index.hidden_spot(placer) == want
            hidden += want
    assert hidden > 0  # the catalogs have spot estimates above on-demand to hide


TRAINING = [w for w in WORKLOADS if w["kind"] != "inference"] + [
    {"kind": "finetune", "model": "qwen2.5-7b", "method": "full", "seq_len": 8192,
     "tokens": 5e7},
    {"kind": "finetune", "model": "glm-4-9b", "method": "qlora", "seq_len": 394,
     "tokens": 3e7},
]  # fmt: skip


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_training_cost_order_placing_as_read_is_the_sorted_bounds(
    catalog: str, request: pytest.FixtureRequest
) -> None:
    """The lazy cost order (shapes placed only as a ranking reads down its lists) hands
    out, list for list, the bounds of every priced lane sorted: shapes held back under
    their floors never jump the queue."""
    ctx = builtin_plan_context(request.getfixturevalue(catalog), memo=PlanCache())
    checked = held_back = 0
    for workload in TRAINING:
        for constraints in CONSTRAINTS:
            index, placer = _index(ctx, {"workload": workload, "constraints": constraints})
            rows = index.rows.priced()
            order = training_cost_order(rows, placer)
            assert order.rest_from is None
            head = next(iter(order.first), None)  # read a little first
            held_back += sum(shape not in placer.table for shape, _ in rows.shapes)
            linear, other = _eager_cost_order(index.priced_lanes(placer), index.priced(placer),
                                              "train")  # fmt: skip
            assert head is None or head == order.first[0]
            _same(list(order.second), other)
            _same(list(order.first), linear)
            checked += len(linear) + len(other)
    assert checked > 1000
    assert held_back > 0  # reading the head alone left shapes unplaced


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_peeking_a_lazy_cost_order_hands_out_the_sorted_bounds(
    catalog: str, request: pytest.FixtureRequest
) -> None:
    """Read as a ranking reads it — a head that would place a shape is only a lower bound
    of its priority, and the shape is placed when the ranking asks — each list hands out
    the same bounds in the same order as when read in full, every lower bound is at most
    the priority it stands for, and peeking alone places nothing."""
    snapshot = request.getfixturevalue(catalog)
    lows = 0
    for workload in TRAINING:
        for constraints in CONSTRAINTS:
            ctx = builtin_plan_context(snapshot, memo=PlanCache())
            index, placer = _index(ctx, {"workload": workload, "constraints": constraints})
            rows = index.rows.priced()
            order = training_cost_order(rows, placer)
            scale = 3e7
            read: list[list[LaneBound]] = []
            held = 0
            for which, lazy in enumerate((order.first, order.second)):
                assert isinstance(lazy, LazyList)
                got: list[LaneBound] = []
                pending: list[tuple[float, ...]] = []
                while True:
                    placed = len(placer.table)
                    found = lazy.peek(len(got), scale)
                    assert len(placer.table) == placed  # peeking places no shape
                    if found is None:
                        break
                    if isinstance(found, tuple):
                        pending.append(found)
                        held += 1
                        lazy.place_held(placer)
                        continue
                    priority = order.priority(found, not which, scale)
                    assert all(low <= priority for low in pending)
                    pending.clear()
                    got.append(found)
                read.append(got)
            want = training_cost_order(rows, placer)  # read in full (shapes placed by now)
            _same(read[0], list(want.first))
            _same(read[1], list(want.second))
            lows += held
    assert lows > 0  # some heads were only lower bounds


CLUSTERS = (None, Cluster(per_node=8, network_gbps=32.0), Cluster(per_node=4, network_gbps=3200.0))
"""No servers named, a slow eRDMA network (Alibaba gn8v-8x.16xlarge) and a fast one."""


def test_device_hours_floor_bounds_every_layout() -> None:
    """A shape's floor is below the hours of every device count and layout, on every
    accelerator and server network (what lets the lazy cost order leave a shape
    unplaced): the network only adds exposed seconds."""
    ctx = builtin_plan_context()
    compared = 0
    for workload in TRAINING:
        req = msgspec.convert({"workload": workload}, RecommendRequest)
        resolved = resolve(req, ctx, ctx.cache())
        rw = dataclasses.replace(resolved.job.rw, tokens=1.0)
        for spec in ctx.accelerators.all():
            floor = device_hours_floor(rw, spec)
            if floor is None:
                continue
            for devices, pp, tp, zero, cluster in itertools.product(
                (1, 2, 4, 8, 16, 64), (1, 2, 4), (1, 2, 8), (None, 0, 1, 2, 3), CLUSTERS
            ):
                estimate = time_for(rw, spec, devices, pipeline_parallel=pp,
                                    tensor_parallel=tp, zero_stage=zero,
                                    cluster=cluster)  # fmt: skip
                assert estimate is not None
                assert floor * FLOOR_SLACK <= estimate.hours * devices, (spec.name, devices)
                compared += 1
    assert compared > 1000


@pytest.mark.parametrize("catalog", ["real", "two_shapes"])
def test_placeable_verdicts_are_the_placements(
    catalog: str, request: pytest.FixtureRequest
) -> None:
    """Whether a training job can be placed on a shape, said without timing it (and, for
    a shape with as much memory as one seen to hold the job, without sizing it), is what
    building that shape's placements from scratch says."""
    snapshot = request.getfixturevalue(catalog)
    checked = inferred = 0
    for workload in TRAINING:
        for constraints, descending in itertools.product(CONSTRAINTS, (False, True)):
            body = {"workload": workload, "constraints": constraints}
            ctx = builtin_plan_context(snapshot, memo=PlanCache())
            index, placer = _index(ctx, body)
            # smallest memory first, every bigger shape of a holder's kind is inferred;
            # biggest first, none is (a smaller one may not hold the job)
            shapes = sorted(
                index.rows.priced().shapes, key=lambda s: s[0][1] or 0.0, reverse=descending
            )
            holders: set[tuple[int, bool]] = set()
            for shape, row in shapes:
                fresh = Placer(placer.job, ctx.accelerators, PlanCache(), placer.signature)
                want = not isinstance(fresh.placements(row, shape), str)
                assert placer.placeable(row, shape) == want, (workload, constraints, shape)
                checked += 1
                if want and not descending:
                    inferred += (shape[2], shape[3]) in holders
                    holders.add((shape[2], shape[3]))
    assert checked > 1000
    assert inferred > 50  # shapes answered from a smaller holder, not sized


def test_a_qlora_floor_holds_its_dequantization() -> None:
    """QLoRA's dequantization is a fixed cost per micro-step on every device
    (:mod:`service.sizing.dequant`), at least tokens / tokens per micro-step x one device's
    micro-step over the whole base in device-seconds, whatever the layout. Without it in
    the floor, the lazy cost order of a QLoRA job placed shapes it could have ruled out
    (session 14: 37 % more placements per new QLoRA shape). On one device the floor is the
    job's own device-hours up to the rounding (it missed them by the whole dequantization
    before)."""
    ctx = builtin_plan_context()
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora", "seq_len": 1024}
    req = msgspec.convert({"workload": workload}, RecommendRequest)
    rw = dataclasses.replace(resolve(req, ctx, ctx.cache()).job.rw, tokens=1.0)
    assert rw.training is not None
    for name in ("A10", "A100-80GB", "T4"):
        spec = ctx.accelerators.resolve(name)
        assert spec is not None
        floor = device_hours_floor(rw, spec)
        estimate = time_for(rw, spec, 1)
        assert floor is not None
        assert estimate is not None
        dequant_hours = dequant_micro_step_seconds(rw, spec, 1) / rw.training.tokens_per_step / 3600
        assert dequant_hours > 0.3 * estimate.hours  # a large share at 1,024 tokens
        assert 0 <= estimate.hours - floor < 0.01 * dequant_hours, name
