"""The planner as a pure function: memoized placements never change an answer."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from service.planning.memo import PlanCache
from service.planning.recommend import PlanContext, recommend
from service.planning.schema import RecommendRequest
from tests.conftest import builtin_plan_context


@pytest.fixture(scope="module")
def context() -> PlanContext:
    return builtin_plan_context()


def request(tokens: float, objective: str = "cost") -> RecommendRequest:
    return msgspec.convert(
        {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "full",
                      "tokens": tokens},
         "objective": objective, "top_k": 10, "lang": "en"},
        RecommendRequest,
    )  # fmt: skip


@pytest.mark.parametrize("objective", ["cost", "time", "balanced"])
def test_memoized_placements_give_the_same_answer(context: PlanContext, objective: str) -> None:
    memo = PlanCache()
    warm = dataclasses.replace(context, memo=memo)
    recommend(request(5e8, objective), warm, "en")  # fills the memo with another token count
    assert len(memo._placements) > 0
    cold = recommend(request(2e9, objective), context, "en")
    memoized = recommend(request(2e9, objective), warm, "en")
    assert msgspec.json.encode(memoized) == msgspec.json.encode(cold)
    hours = [o.hours for o in cold.options if o.hours is not None]
    assert hours, "time estimated"


def test_same_input_same_output(context: PlanContext) -> None:
    first = msgspec.json.encode(recommend(request(1e9), context, "zh"))
    assert msgspec.json.encode(recommend(request(1e9), context, "zh")) == first


def test_more_tokens_cost_proportionally_more(context: PlanContext) -> None:
    small = recommend(request(1e9), context, "en").options[0]
    large = recommend(request(2e9), context, "en").options[0]
    assert small.instance_type == large.instance_type
    assert large.hours == pytest.approx(2 * small.hours, rel=0.01)
    if small.billing == "on_demand":
        assert large.total_cost == pytest.approx(2 * small.total_cost, rel=0.01)


def test_a_new_catalog_drops_the_memoized_lanes_of_the_old_one(context: PlanContext) -> None:
    memo = PlanCache()
    warm = dataclasses.replace(context, memo=memo)
    recommend(request(5e8), warm, "en")
    old_buckets = context.snapshot.buckets
    assert any(key[0] == "lanes" and key[1] == id(old_buckets) for key in memo._shared)
    reloaded = msgspec.structs.replace(context.snapshot, buckets=tuple(list(old_buckets)))
    recommend(request(5e8), dataclasses.replace(warm, snapshot=reloaded), "en")
    assert not any(key[0] == "lanes" and key[1] == id(old_buckets) for key in memo._shared)
