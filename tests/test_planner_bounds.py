"""The planner's shortcuts never change an answer.

``make_plan`` ranks through a cached :class:`LaneIndex` and, under ``cost``, stops by
branch and bound; ``count_removed=True`` walks every bucket and group with no memo and no
bound. For every request here both must select the same options: the same ranking keys
(cost, hours, nodes), the same Pareto marks and break-even hours, in the same order.

Catalogs: the real one (on-demand and monthly prices, one region each), and a denser
one built from it for the test only — each priced offer also sold in three more regions
at other prices and as spot at 30 % — so that buckets hold several groups, spot bounds
are exercised and regions filter groups, not just buckets.
"""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
import pytest

from service.catalog.aggregate import CatalogService, CatalogSnapshot, bucket_offers
from service.catalog.models import Price
from service.hooks.loader import get_plugin_manager
from service.planning.candidates import Candidate
from service.planning.memo import PlanCache
from service.planning.place import Placer
from service.planning.rank import make_plan, select
from service.planning.recommend import PlanContext, recommend
from service.planning.resolve import Resolved, resolve
from service.planning.schema import RecommendRequest
from tests.conftest import BUILTIN_PROVIDERS, builtin_plan_context

WORKLOADS: dict[str, dict[str, Any]] = {
    "qlora-7b": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora",
                 "seq_len": 1024, "tokens": 2e7},
    "full-70b": {"kind": "finetune", "model": "llama-2-70b", "method": "full",
                 "tokens": 1e9},
    "pretrain-7b-long": {"kind": "pretrain", "model": "llama-2-7b", "tokens": 2e11},
    "lora-7b-open": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora",
                     "seq_len": 2048},
    "serve-13b-int4": {"kind": "inference", "model": "llama-2-13b", "precision": "int4"},
    "batch-7b": {"kind": "inference", "model": "llama-2-7b", "output_tokens": 5e8},
    "serve-14b-target": {"kind": "inference", "model": "qwen2.5-14b", "target_tokens_per_s": 1000},
    "preprocess": {"kind": "preprocess", "data_gb": 500},
    "serve-v3-spans": {"kind": "inference", "model": "deepseek-v3"},
    "batch-405b-spans": {"kind": "inference", "model": "llama-3.1-405b", "output_tokens": 5e8},
}  # fmt: skip
SPANNING = ("deepseek-v3", "llama-3.1-405b")
"""Models no server of the catalog holds in BF16: placed with replicas over several servers
(:meth:`~service.planning.place.Placer.spanning`), as ``recommend`` places them."""
CONSTRAINTS: dict[str, dict[str, Any]] = {
    "none": {},
    "budget": {"budget": 300},
    "deadline": {"deadline_hours": 24},
    "monthly-only": {"billing": ["monthly"]},
    "spot-only": {"billing": ["spot"]},
    "region": {"regions": ["cn-shanghai", "test-region-2"]},
    "cheap": {"max_price_per_hour": 20},
    "two-nodes": {"max_nodes": 2, "providers": ["alibaba", "tencent"]},
    "exact-8": {"accelerator_count": 8},
    "max-2": {"max_accelerators": 2},
    "host": {"min_vcpus": 16, "min_memory_gib": 64},
    "unpriced": {"providers": ["volcengine"]},
}
ACCELERATOR_ONLY = ("exact-8", "max-2")
"""Constraints that a CPU-only job refuses (400)."""


def _context(snapshot: CatalogSnapshot, memo: PlanCache | None = None) -> PlanContext:
    return builtin_plan_context(snapshot, memo)


@pytest.fixture(scope="module")
def real() -> CatalogSnapshot:
    pm = get_plugin_manager(allow=BUILTIN_PROVIDERS)
    return CatalogService(pm.hook.suanli_register_providers).load()


@pytest.fixture(scope="module")
def dense(real: CatalogSnapshot) -> CatalogSnapshot:
    offers = list(real.offers)
    for offer in real.offers:
        price = offer.price
        if price is None or price.price_per_hour is None or offer.billing != "on_demand":
            continue
        for i, factor in enumerate((0.9, 1.0, 1.3), start=1):
            region = f"test-region-{i}"
            copy = _scaled(price, factor, region=region)
            offers.append(msgspec.structs.replace(offer, region=region, price=copy))
        spot = _scaled(price, 0.3, billing="spot")
        offers.append(msgspec.structs.replace(offer, billing="spot", price=spot))
    return msgspec.structs.replace(
        real, offers=tuple(offers), buckets=bucket_offers(offers), fingerprint="dense-test"
    )


def _scaled(price: Price, factor: float, **changes: object) -> Price:
    """A copy of ``price`` at ``factor`` times the money (an estimate's range too)."""

    def times(value: float | None) -> float | None:
        return None if value is None else value * factor

    return msgspec.structs.replace(
        price,
        price_per_hour=times(price.price_per_hour),
        price_low=times(price.price_low),
        price_high=times(price.price_high),
        **changes,
    )


def _request(workload: str, constraints: str, objective: str, top_k: int) -> RecommendRequest:
    return msgspec.convert(
        {"workload": WORKLOADS[workload], "constraints": CONSTRAINTS[constraints],
         "objective": objective, "top_k": top_k, "lang": "en"},
        RecommendRequest,
    )  # fmt: skip


def _placer(req: RecommendRequest, ctx: PlanContext) -> tuple[Resolved, Placer]:
    """The request resolved (with spot allowed, whatever the job) and its placer."""
    cache = ctx.cache()
    spot = msgspec.structs.replace(req.constraints, interruptible=True)
    resolved = resolve(msgspec.structs.replace(req, constraints=spot), ctx, cache)
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    if resolved.job.rw.model_id in SPANNING:
        placer = placer.spanning()
    return resolved, placer


def _selected(req: RecommendRequest, ctx: PlanContext, exhaustive: bool) -> list[Candidate]:
    resolved, placer = _placer(req, ctx)
    c = req.constraints
    plan = make_plan(
        ctx.snapshot.buckets, resolved.flt, placer, req.objective, c.budget, c.deadline_hours,
        req.top_k, count_removed=exhaustive,
    )  # fmt: skip
    return select(plan, req.top_k)


def _ranked(candidates: list[Candidate]) -> list[tuple[object, ...]]:
    """What ranks and what is shown of it (offers tied on every key may swap)."""
    return [
        (c.total_cost, c.hours, c.nodes, c.price_per_hour is None, c.pareto, c.break_even_hours,
         c.devices if c.price_per_hour is None else None, c.price_per_million_training_tokens)
        for c in candidates
    ]  # fmt: skip


CASES = [
    (w, c, o, k)
    for w, c, o, k in itertools.product(
        WORKLOADS, CONSTRAINTS, ("cost", "time", "balanced"), (1, 5, 50)
    )
    if not (
        c == "spot-only"
        and w in ("serve-13b-int4", "batch-7b", "preprocess", "serve-v3-spans", "batch-405b-spans")
    )
    and not (c in ACCELERATOR_ONLY and w == "preprocess")
]


@pytest.mark.parametrize("catalog", ["real", "dense"])
@pytest.mark.parametrize(("workload", "constraints", "objective", "top_k"), CASES)
def test_shortcuts_select_what_the_exhaustive_walk_selects(
    request: pytest.FixtureRequest,
    catalog: str,
    workload: str,
    constraints: str,
    objective: str,
    top_k: int,
) -> None:
    snapshot: CatalogSnapshot = request.getfixturevalue(catalog)
    req = _request(workload, constraints, objective, top_k)
    if catalog == "real" and constraints == "region":  # regions must exist (else a 400)
        req = msgspec.structs.replace(
            req, constraints=msgspec.structs.replace(req.constraints, regions=["cn-shanghai"])
        )
    exhaustive = _selected(req, _context(snapshot), exhaustive=True)
    memo = PlanCache()
    warm = _context(snapshot, memo)
    # Warm the memo with the same job at another length and another top_k first: what
    # it keeps must not depend on the request that filled it.
    other = msgspec.structs.replace(req, top_k=3)
    _selected(other, warm, exhaustive=False)
    for ctx in (_context(snapshot), warm):
        assert _ranked(_selected(req, ctx, exhaustive=False)) == _ranked(exhaustive)


@pytest.mark.parametrize("objective", ["cost", "time", "balanced"])
def test_bound_stops_early_on_the_dense_catalog(dense: CatalogSnapshot, objective: str) -> None:
    """The point of the bound: a ranking prices a small part of the catalog."""
    req = _request("qlora-7b", "none", objective, 5)
    ctx = _context(dense, PlanCache())
    resolved, placer = _placer(req, ctx)
    flt = resolved.flt
    bounded = make_plan(dense.buckets, flt, placer, req.objective, None, None, 5)
    full = make_plan(dense.buckets, flt, placer, req.objective, None, None, 5, count_removed=True)
    assert len(full.entries) > 200
    assert len(bounded.entries) < len(full.entries) / 4


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_whole_answers_match_with_and_without_memo(real: CatalogSnapshot, workload: str) -> None:
    req = _request(workload, "none", "cost", 5)
    warm = _context(real, PlanCache())
    body = msgspec.to_builtins(req)
    for field in ("tokens", "output_tokens"):
        if body["workload"].get(field):
            body["workload"][field] *= 3
    recommend(msgspec.convert(body, RecommendRequest), warm, "en")
    cold = msgspec.json.encode(recommend(req, _context(real), "en"))
    assert msgspec.json.encode(recommend(req, warm, "en")) == cold


def test_a_run_of_lanes_ruled_out_by_their_own_bound_is_skipped_in_one_step() -> None:
    """After the answer fills, the walk moves past the first list's built bounds that
    their own lowest key (fixed hours at the lane's own rate) rules out, in one step: it
    counts them with the arithmetic of ``Order.key_bound`` and stops at the first lane
    that could still rank, and at a bound not built yet."""
    from service.planning.bounds import BOUND_SLACK, LaneBound, Order
    from service.planning.rank import _ruled_out

    def bound(money: float, rate: float) -> LaneBound:
        return LaneBound(None, 0.0, 0.0, money, 1.0, rate)  # type: ignore[arg-type]

    scale, fixed = 10.0, 0.5
    known = [bound(1.0, 1.0), bound(2.0, 50.0), bound(2.5, 60.0), bound(3.0, 1.0), None]
    kth, over = (0.0, 30.0), 30.01
    assert _ruled_out(known, 0, scale, fixed, kth, over, True) == 0  # 10.5 can rank
    assert _ruled_out(known, 1, scale, fixed, kth, over, True) == 3  # 45, 55, 30.5
    assert _ruled_out(known, 4, scale, fixed, kth, over, True) == 0  # not built: stop
    # the last one is a cent over only after the fixed hours: with the key's own bound
    order = Order("cost", [], [], None)
    lowest = order.key_bound(known[3], scale, fixed)  # type: ignore[arg-type]
    assert lowest == (0.0, 3.0 * scale + 1.0 * fixed * BOUND_SLACK)
    assert _ruled_out(known, 3, scale, fixed, (0.0, 30.5), 30.51, True) == 0
