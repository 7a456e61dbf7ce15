"""What the ranking keeps between requests of one class, or works out once per head, gives
what working it out afresh gives (the warm path of "the same job at another length").

* :func:`~service.planning.rank._lane_pricer` keeps, per lane index and ``top_k``, the
  groups of each lane a ranking prices (none for a spot lane whose estimates are all
  left out): a ranking through a warm index prices the same entries, with the same keys,
  as one through a fresh index, at every length;
* :func:`~service.planning.rank._merged` reads built bounds straight from the list: each
  head it gives has :meth:`~service.planning.bounds.Order.priority`, ascending along each
  list;
* :class:`~service.planning.place.Placements` carry their widest node count.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.catalog.aggregate import CatalogSnapshot, bucket_offers
from service.planning import rank
from service.planning.filters import spot_above_on_demand
from service.planning.lanes import lane_index
from service.planning.memo import PlanCache
from service.planning.place import Placements, Placer
from service.planning.price import Plan
from service.planning.recommend import PlanContext
from service.planning.resolve import resolve
from service.planning.schema import RecommendRequest
from tests.conftest import builtin_plan_context
from tests.test_planner_bounds import _scaled, real  # noqa: F401

QLORA = {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024}
TOKENS = (1e6, 1.0000007e7, 2e7, 5e7, 3e9)
"""Lengths from a short run (fixed hours dominate) to a long one (the loop does)."""


@pytest.fixture(scope="module")
def dense(real: CatalogSnapshot) -> CatalogSnapshot:  # noqa: F811
    """The real catalog with each on-demand offer also sold in two more regions (buckets
    of several groups, so that ``top_k`` limits what a lane prices) and as spot at 30 %,
    as in tests/test_planner_bounds.py."""
    offers = list(real.offers)
    for offer in real.offers:
        price = offer.price
        if price is None or price.price_per_hour is None or offer.billing != "on_demand":
            continue
        for i, factor in enumerate((0.9, 1.3), start=1):
            region = f"test-region-{i}"
            copy = _scaled(price, factor, region=region)
            offers.append(msgspec.structs.replace(offer, region=region, price=copy))
        offers.append(
            msgspec.structs.replace(
                offer, billing="spot", price=_scaled(price, 0.3, billing="spot")
            )
        )
    return msgspec.structs.replace(
        real, offers=tuple(offers), buckets=bucket_offers(offers), fingerprint="dense-memo"
    )


def _request(tokens: float, objective: str, top_k: int, **constraints: Any) -> RecommendRequest:
    return msgspec.convert(
        {"workload": {**QLORA, "tokens": tokens}, "constraints": constraints,
         "objective": objective, "top_k": top_k, "lang": "en"},
        RecommendRequest,
    )  # fmt: skip


def _plan(req: RecommendRequest, ctx: PlanContext) -> tuple[Plan, Placer]:
    cache = ctx.cache()
    resolved = resolve(req, ctx, cache)
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    return rank.plan_for(ctx.snapshot.buckets, resolved.flt, placer, req), placer


def _priced(plan: Plan) -> list[tuple[object, ...]]:
    """Every entry the ranking priced, in order, with its key."""
    return [
        (id(offer), v, per_hour, total, hours, regions, key)
        for (offer, v, per_hour, total, hours, regions), key in zip(
            plan.entries, plan.keys, strict=True
        )
    ]


@pytest.mark.parametrize("catalog", ["real", "dense"])
@pytest.mark.parametrize("objective", ["cost", "time", "balanced"])
@pytest.mark.parametrize("interruptible", [False, True])
def test_a_warm_lane_index_prices_what_a_fresh_one_prices(
    request: pytest.FixtureRequest, catalog: str, objective: str, interruptible: bool
) -> None:
    snapshot: CatalogSnapshot = request.getfixturevalue(catalog)
    warm = builtin_plan_context(snapshot, PlanCache())
    for top_k in (5, 1, 3):  # the memo is per top_k: one filled at 5 must not serve 1
        for tokens in TOKENS:
            req = _request(tokens, objective, top_k, interruptible=interruptible)
            fresh = builtin_plan_context(snapshot, PlanCache())
            got, _ = _plan(req, warm)
            want, _ = _plan(req, fresh)
            assert got.entries, (tokens, top_k)
            assert _priced(got) == _priced(want), (tokens, top_k)
            assert [c.pareto for c in rank.select(got, top_k)] == [
                c.pareto for c in rank.select(want, top_k)
            ]


def test_the_kept_groups_are_each_lanes_first_top_k_or_none_when_hidden(
    real: CatalogSnapshot,  # noqa: F811
) -> None:
    ctx = builtin_plan_context(real, PlanCache())
    req = _request(2e7, "cost", 5, interruptible=True)
    _, placer = _plan(req, ctx)
    resolved = resolve(req, ctx, ctx.cache())
    index = lane_index(real.buckets, resolved.flt, placer)
    memo = index.derived(("lane_groups", 5), dict)
    assert memo, "the ranking kept no lane's groups"
    on_demand = index.on_demand(placer)
    hidden = 0
    for lane, groups in memo.values():
        first = lane.passing.groups[:5]
        if groups == ():  # every group it would price is a spot estimate left out
            hidden += 1
            assert first
            assert all(
                offer.billing == "spot" and spot_above_on_demand(offer, on_demand)
                for offer, *_ in first
            )
        else:
            assert groups == first
    assert hidden, "no spot lane was skipped: the case does not test the hidden path"


@pytest.mark.parametrize("objective", ["cost", "time"])
@pytest.mark.parametrize("tokens", [1e6, 2e7, 3e9])
def test_each_head_of_the_merge_has_the_orders_priority(
    real: CatalogSnapshot,  # noqa: F811
    objective: str,
    tokens: float,
) -> None:
    ctx = builtin_plan_context(real, PlanCache())
    req = _request(tokens, objective, 5)
    _plan(req, ctx)  # builds the index and order as a request does
    resolved = resolve(req, ctx, ctx.cache())
    placer = Placer(resolved.job, ctx.accelerators, ctx.cache(), resolved.signature)
    index = lane_index(real.buckets, resolved.flt, placer)
    mode, work = rank._bound_mode(placer.job)
    assert work is not None
    order = rank._order(index, placer, objective, mode)  # type: ignore[arg-type]
    scale = work * rank.BOUND_SLACK
    merge = rank._merged(order, placer, scale)
    heads = 0
    last: list[tuple[float, ...] | None] = [None, None]
    head = merge.send(None)
    while head is not None and heads < 400:
        priority, bound, which = head
        if bound is not None:
            assert priority == order.priority(bound, not which, scale)
            previous = last[which]
            assert previous is None or previous <= priority  # ascending along each list
            last[which] = priority
            heads += 1
        head = merge.send(False)
    assert heads > 10


def test_placements_carry_their_widest_node_count(real: CatalogSnapshot) -> None:  # noqa: F811
    ctx = builtin_plan_context(real, PlanCache())
    _, placer = _plan(_request(2e7, "time", 50), ctx)
    placed = [p for p in placer.table.values() if isinstance(p, Placements)]
    assert placed
    assert any(len(p.items) > 1 for p in placed)
    for p in placed:
        assert p.widest == max(nodes for nodes, *_ in p.items)
