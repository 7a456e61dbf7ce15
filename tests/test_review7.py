"""Review 7 (docs/answer-review.md, session 8): what an expert corrected in the answers.

* J5/J26: SGLang refuses to start below compute capability 7.5 (Volta's V100 included),
  so a SGLang plan never lands on a V100, and an empty answer says why;
* J23: a budget below every priced option leaves only unpriced ones: the answer says
  that every option with a known price is over the budget, and names the cheapest;
* J16: a full fine-tune that no allowed layout holds is offered ZeRO-Offload of the
  optimizer states as a lever, with the nearest option it lets through;
* J28: the relax hint of a lifted price cap names the cheapest option, whatever the
  ranking asked;
* every zh fit reason: the device's memory is said per card (每卡/单卡), never as 共
  (a total).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.catalog.capabilities import engine_verdict
from tests.answers import builtin_spec, recommend

SGLANG_7B = {
    "workload": {
        "kind": "inference",
        "model": "qwen2.5-7b",
        "engine": "sglang",
        "concurrency": 32,
        "context_len": 4096,
    },
}


@pytest.mark.parametrize(
    ("accelerator", "engine", "verdict"),
    [
        ("V100-32GB", "sglang", "unsupported"),  # SGLang: sm75 and above
        ("P100", "sglang", "unsupported"),
        ("T4", "sglang", "ok"),  # Turing, SM 7.5
        ("A10", "sglang", "ok"),
        ("V100-32GB", "vllm", "ok"),  # an old vLLM release still runs (engine_outdated)
        ("V100-32GB", "lmdeploy", "ok"),
        ("V100-32GB", "hf", "ok"),
    ],
)
def test_sglang_needs_compute_capability_7_5(accelerator: str, engine: str, verdict: str) -> None:
    assert engine_verdict(builtin_spec(accelerator), engine) == verdict


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sglang_plan_never_lands_on_a_v100(client: TestClient[Litestar], lang: str) -> None:
    body = recommend(client, {**SGLANG_7B, "top_k": 10}, lang)
    assert body["options"]
    names = {o["accelerator"]["name"] for o in body["options"]}
    assert not any(name.startswith(("V100", "P100", "P40", "P4")) for name in names), names


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", ("SGLang", "7.5", "V100", "vLLM")), ("zh", ("SGLang", "7.5", "V100", "vLLM"))],
)
def test_sglang_on_v100_only_says_sglang_needs_7_5(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    body = recommend(client, {**SGLANG_7B, "constraints": {"accelerators": ["V100"]}}, lang)
    assert body["options"] == []
    said = body["summary"]  # first, the reason the V100s asked for are gone (review 9b S4)
    assert all(word in said for word in words), said


LORA_14B_8K = {
    "workload": {
        "kind": "finetune",
        "model": "qwen3-14b",
        "method": "lora",
        "seq_len": 8192,
        "tokens": 40_000_000,
    },
}


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", ("known price", "budget", "¥100")), ("zh", ("已知价格", "预算", "¥100"))],
)
def test_a_budget_below_every_priced_option_is_said(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    cheapest = recommend(client, {**LORA_14B_8K, "top_k": 1}, lang)["options"][0]
    assert cheapest["total_cost"] > 100  # the budget below removes every priced option
    body = recommend(client, {**LORA_14B_8K, "constraints": {"budget": 100}}, lang)
    assert body["options"]
    assert all(o["total_cost"] is None for o in body["options"])
    for text in (body["summary"], " ".join(body["warnings"])):
        assert all(word in text for word in words), text
        assert cheapest["instance_type"] in text, text
        assert f"{cheapest['total_cost']:,.2f}" in text, text


def test_a_budget_some_priced_option_meets_says_nothing_of_it(
    client: TestClient[Litestar],
) -> None:
    body = recommend(client, {**LORA_14B_8K, "constraints": {"budget": 400}}, "en")
    assert body["options"][0]["total_cost"] is not None
    assert not any("known price" in w for w in body["warnings"])


FULL_70B_ON_16 = {
    "workload": {
        "kind": "finetune",
        "model": "llama-3.1-70b",
        "method": "full",
        "seq_len": 4096,
        "tokens": 500_000_000,
    },
    "constraints": {"accelerator_count": 16},
}


@pytest.mark.parametrize(
    ("lang", "words"), [("en", ("ZeRO-Offload", "CPU RAM")), ("zh", ("ZeRO-Offload", "CPU 内存"))]
)
def test_a_full_fine_tune_no_layout_holds_is_offered_zero_offload(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    body = recommend(client, FULL_70B_ON_16, lang)
    assert body["options"] == []
    offload = [h for h in body["relax"] if h["constraint"] == "offload"]
    assert len(offload) == 1, body["relax"]
    assert offload[0]["nearest"], body["relax"]
    said = [w for w in body["warnings"] if "ZeRO-Offload" in w]
    assert len(said) == 1, body["warnings"]
    assert all(word in said[0] for word in words), said[0]
    assert offload[0]["nearest"] in said[0]
    # the lever's option is what the request with the offload gets
    workload = {**FULL_70B_ON_16["workload"], "offload": "optimizer"}
    offloaded = recommend(client, {**FULL_70B_ON_16, "workload": workload, "top_k": 1}, lang)
    assert offloaded["options"][0]["instance_type"] in offload[0]["nearest"]


def test_an_offloaded_or_lora_job_gets_no_offload_lever(client: TestClient[Litestar]) -> None:
    workload = {**FULL_70B_ON_16["workload"], "method": "lora", "seq_len": 131072}
    body = recommend(client, {**FULL_70B_ON_16, "workload": workload}, "en")
    assert not any(h["constraint"] == "offload" for h in body["relax"])


def test_the_zh_fit_reason_says_the_memory_per_card(client: TestClient[Litestar]) -> None:
    body = recommend(client, {**LORA_14B_8K, "top_k": 3}, "zh")
    fits = [r for o in body["options"] for r in o["reasons"] if r.startswith("显存够用")]
    assert fits
    for reason in fits:
        assert "共" not in reason.split("余量")[0], reason
        assert "单卡显存" in reason, reason


QWEN3_8B_UNDER_10 = {
    "workload": {
        "kind": "inference",
        "model": "qwen3-8b",
        "engine": "vllm",
        "concurrency": 8,
        "context_len": 8192,
    },
    "constraints": {"max_price_per_hour": 10, "billing": ["on_demand"]},
}


@pytest.mark.parametrize("objective", ["time", "balanced"])
def test_without_a_price_limit_the_nearest_option_is_the_cheapest(
    client: TestClient[Litestar], objective: str
) -> None:
    """J28: under ``objective: time`` the price cap's hint named the fastest option, an
    8×H20 of unknown price; the nearest to a price limit is the cheapest, whatever the
    ranking asked (as the nearest to a deadline is the fastest)."""

    def hint(body: dict[str, Any]) -> str:
        answer = recommend(client, body, "en")
        assert answer["options"] == []
        found = [h for h in answer["relax"] if h["constraint"] == "max_price_per_hour"]
        assert len(found) == 1, answer["relax"]
        return str(found[0]["nearest"])

    by_cost = hint({**QWEN3_8B_UNDER_10, "objective": "cost"})
    assert "price unknown" not in by_cost
    assert hint({**QWEN3_8B_UNDER_10, "objective": objective}) == by_cost
