"""The scenario suite: 62 expert-judged jobs (and 4 estimates) against the real app and catalogs.

Every answer must meet the invariants an architect checks before signing, whatever the
job: each option fits (memory parts add up, headroom kept), can run (a precision the
device lacks is planned in FP16 and said, FP8 only on FP8 parts), is priced with its
source or honestly unpriced (never ranked before a priced one under cost/balanced), has
the right size (exact counts, multi-node only over RDMA, the host covers a CPU job) and
speaks in sentences (no ``None``, no store ids). Then each case's own expectations
(``cases.py``) about its top option and every option.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from service.planning.resolve import DEADLINE_MAX_NODES, DEFAULT_MAX_NODES
from tests.conftest import app_settings
from tests.scenarios.cases import CASES, ESTIMATES, Case

NO_BF16 = {"P4", "P40", "P100", "V100-16GB", "V100-32GB", "T4", "Ascend-910", "Ascend-310P"}
FP8 = {"H800", "H20", "L20", "L40S", "L4", "H100-80GB", "RTX-4090D"}
_STORE_ID = re.compile(r"@[0-9a-f]{7,}|index id")


@pytest.fixture(scope="module")
def scenario_client() -> Iterator[TestClient[Litestar]]:
    """One real app for the whole suite (the catalogs load once). The experts judged
    sizing and the ranking of quoted and unknown prices, so price estimates are off here
    (SUANLI_PRICE_ESTIMATES=false); tests/test_catalog_truth.py covers them."""
    with TestClient(app=create_app(app_settings(price_estimates=False))) as client:
        yield client


def _devices(option: dict[str, Any]) -> int:
    acc = option["accelerator"]
    return 0 if acc is None else int(acc["count"]) * int(option["nodes"])


def _check_invariants(case: Case, answer: dict[str, Any]) -> None:
    body = case["body"]
    workload = body["workload"]
    constraints = body.get("constraints", {})
    objective = body.get("objective", "cost")
    headroom = constraints.get("min_headroom_pct", 10) / 100
    precision = workload.get("precision", "bf16")
    lang = answer["lang"]
    options = answer["options"]
    texts = [answer["summary"], *answer["warnings"]]
    for option in options:
        texts += option["reasons"] + option["warnings"]
        acc = option["accelerator"]
        # fits
        if acc is not None:
            memory = acc["memory_gib"]
            assert option["per_device_gib"] + option["headroom_gib"] == pytest.approx(
                memory, abs=0.01
            )
            assert option["per_device_gib"] <= (1 - headroom) * memory + 1e-6
        else:
            assert workload["kind"] == "preprocess"
        # can run
        if acc is not None and precision == "bf16" and acc["name"] in NO_BF16:
            assert any("BF16" in w for w in option["warnings"]), option
        if acc is not None and precision == "fp8":
            assert acc["name"] in FP8
        # priced or honestly unpriced
        if option["price_per_hour"] is None:
            assert option["total_cost"] is None
            assert option["price_per_million_tokens"] is None
            assert option["price_source"] is None
        else:
            assert option["price_per_hour"] > 0
            assert option["price_source"] in ("snapshot", "live", "override", "estimated")
            assert option["price_source_ref"]
            assert option["price_as_of"]
        if option["billing"] == "on_demand" and option["total_cost"] is not None:
            # hours are shown to 3 decimals: allow that rounding
            slack = option["price_per_hour"] * 0.0006 + 0.01
            assert option["total_cost"] == pytest.approx(
                option["price_per_hour"] * option["hours"], rel=2e-3, abs=slack
            )
        # right size
        if "accelerator_count" in constraints:
            assert _devices(option) == constraints["accelerator_count"]
        if "max_accelerators" in constraints:
            assert _devices(option) <= constraints["max_accelerators"]
        if option["nodes"] > 1 and acc is not None and workload["kind"] != "inference":
            assert option["rdma"] in ("rdma", "erdma"), option
        # not given: 16, or up to 64 under a deadline (service.planning.resolve.node_limit)
        limit = DEADLINE_MAX_NODES if "deadline_hours" in constraints else DEFAULT_MAX_NODES
        assert option["nodes"] <= constraints.get("max_nodes", limit)
        # words
        assert not any(_STORE_ID.search(r) for r in option["reasons"]), option["reasons"]
    if workload["kind"] == "preprocess" and options:
        need = answer["estimate"]["host"]["vcpus"]
        assert options[0]["vcpus"] >= need
    if objective in ("cost", "balanced"):
        priced = [o["price_per_hour"] is not None for o in options]
        assert priced == sorted(priced, reverse=True), "an unpriced option ranked first"
    assert all("None" not in t for t in texts)
    if lang == "zh":
        assert answer["summary"].startswith(("推荐", "没有"))


def _check_top(expect: dict[str, Any], top: dict[str, Any]) -> None:
    lo_hi = expect.get("devices")
    if lo_hi:
        assert lo_hi[0] <= _devices(top) <= lo_hi[1], top
    if "memory" in expect:
        lo, hi = expect["memory"]
        assert lo <= top["accelerator"]["memory_gib"] <= hi, top
    if "priced" in expect:
        assert (top["price_per_hour"] is not None) is expect["priced"], top
    if "max_total" in expect:
        assert top["total_cost"] is not None
        assert top["total_cost"] <= expect["max_total"]
    if "accelerators" in expect:
        assert top["accelerator"]["name"] in expect["accelerators"], top
    if expect.get("cpu_only"):
        assert top["accelerator"] is None
    if "nodes" in expect:
        assert expect["nodes"][0] <= top["nodes"] <= expect["nodes"][1]
    if "min_vcpus" in expect:
        assert top["vcpus"] >= expect["min_vcpus"]
    if "vcpus_per_device" in expect:
        lo, hi = expect["vcpus_per_device"]
        assert lo <= top["vcpus"] / max(1, _devices(top)) <= hi
    if expect.get("hours_known"):
        assert top["hours"] is not None


def _check_every(expect: dict[str, Any], option: dict[str, Any]) -> None:
    _check_top({k: v for k, v in expect.items() if k in ("devices", "nodes", "priced")},
               option)  # fmt: skip
    acc = option["accelerator"]
    if "accelerators" in expect:
        assert acc["name"] in expect["accelerators"], option
    if "accelerator_prefix" in expect:
        assert acc["name"].startswith(expect["accelerator_prefix"])
    if "min_device_memory_total" in expect:
        assert _devices(option) * acc["memory_gib"] >= expect["min_device_memory_total"]
    if expect.get("multi_node_rdma") and option["nodes"] > 1:
        assert option["rdma"] in ("rdma", "erdma")
    if "billing" in expect:
        assert option["billing"] in expect["billing"]
    if "max_total" in expect:
        assert option["total_cost"] is not None
        assert option["total_cost"] <= expect["max_total"]
    if "max_hours" in expect:
        assert option["hours"] is not None
        assert option["hours"] <= expect["max_hours"]
    if "max_hourly" in expect:
        assert option["price_per_hour"] <= expect["max_hourly"]
    if expect.get("no_ascend"):
        assert acc is None or not acc["name"].startswith("Ascend")
    if "region" in expect:
        assert option["region"] is None or option["region"] == expect["region"]
        assert not option["regions"] or expect["region"] in option["regions"]
    if "providers" in expect:
        assert option["provider"] in expect["providers"]
    for words in expect.get("warns", ()):
        assert any(words in w for w in option["warnings"]), (words, option["warnings"])
    if expect.get("no_throughput"):
        assert option["throughput_tokens_per_s"] is None
        assert option["price_per_million_tokens"] is None
    if "min_throughput" in expect:
        assert option["throughput_tokens_per_s"] >= expect["min_throughput"]
    if "min_vcpus_per_node" in expect:
        assert option["vcpus"] >= expect["min_vcpus_per_node"] * option["nodes"]


def test_the_suite_has_at_least_forty_expert_judged_jobs() -> None:
    assert len(CASES) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all(len(c["expert"]) > 20 for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_scenario(scenario_client: TestClient[Litestar], case: Case) -> None:
    response = scenario_client.post("/v1/recommend", json=case["body"])
    status = case.get("status", 200)
    assert response.status_code == status, response.text
    if status != 200:
        if "suggest" in case:
            assert case["suggest"] in response.json()["extra"][0]["suggestions"]
        return
    answer = response.json()
    assert answer["options"], (case["expert"], answer["warnings"])
    _check_invariants(case, answer)
    if "top" in case:
        _check_top(case["top"], answer["options"][0])
    for option in answer["options"]:
        if "every" in case:
            _check_every(case["every"], option)
    for words in case.get("summary", ()):
        assert words in answer["summary"], answer["summary"]


@pytest.mark.parametrize("case", ESTIMATES, ids=lambda c: c["id"])
def test_estimate_scenario(scenario_client: TestClient[Litestar], case: Case) -> None:
    response = scenario_client.post("/v1/estimate", json=case["body"])
    assert response.status_code == 200, response.text
    answer = response.json()
    expect, placed = case["expect"], answer["placement"]
    for field in ("nodes", "replicas", "fits", "tensor_parallel"):
        if field in expect:
            assert placed[field] == expect[field], (field, placed)
    if "pipeline" in expect:
        assert placed["pipeline_parallel"] == expect["pipeline"], placed
    if "throughput" in expect:
        lo, hi = expect["throughput"]
        assert lo <= answer["throughput_tokens_per_s"] <= hi, answer["throughput_tokens_per_s"]
    if "hours" in expect:
        lo, hi = expect["hours"]
        assert lo <= answer["time"]["hours"] <= hi, answer["time"]
    for words in expect.get("says", ()):
        assert any(words in a for a in answer["assumptions"]), (words, answer["assumptions"])
    assert all("None" not in a for a in answer["assumptions"])
