"""Session 13, branch ``enctp13`` (review 11s V5 and the encoder case): a served model that
fits on fewer accelerators than the server has, served to a throughput target with no
concurrency, is served as data-parallel copies at the lowest tensor-parallel degree whose
copies reach the target, not split over every card. With the sequences fixed (a
concurrency given) the fastest degree is kept: see the V5 tests.

vLLM's own guidance: "If your model fits in a single GPU, you probably don't need to use
distributed inference. Just use the single GPU to run the inference." (Distributed
Inference and Serving, https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html;
now https://docs.vllm.ai/en/latest/serving/parallelism_scaling/). Each copy is its own
engine instance with its own batch and KV-cache pool (vLLM's data-parallel deployment,
https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/), so the server's rate is
the copies' rates added up; a wider tensor-parallel group pays an all-reduce per layer.

Before the change (main at 53f1362) each case below was planned at the server's full
degree: Qwen3-32B at 64 sequences on 8 x H20 at TP 8 (16.8 of 96 GiB per card), MindIE
Qwen2.5-32B at 32 on 8 x 910B3 at TP 8 (13.1 of 64 GiB), bge-reranker-v2-m3 at 100,000
tokens/s on 4 x A10 at TP 4, Llama-3.1-8B at 5,000 tokens/s on 8 x A100-80GB at TP 8.

Each test asserts the degree the mechanism gives (the lowest whose copies hold the
weights and their share of the KV cache within the 90 % the planner fills, and reach the
throughput target when one is given), the copies, and that the option's tokens/s is the
per-copy rate (``/v1/estimate`` of one copy on its own cards at its share of the
sequences) times the copies, within 1 % (float rounding of two routes: the same rate
model).
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

GIB = 2**30
HEADROOM = 0.10
"""The planner's default headroom (``constraints.min_headroom_pct`` 10)."""
SAME_RATE = 0.01
"""Tolerance between the option's rate and copies x one copy's estimated rate."""


def _copies(option: dict[str, Any]) -> tuple[int, int] | None:
    """(copies on the server, sequences per copy) as the option's words say them."""
    for reason in option["reasons"]:
        found = re.search(
            r"(\d+) copies of the model on each server, .*? (\d+) sequences? each", reason
        )
        if found:
            return int(found.group(1)), int(found.group(2))
    return None


def _copy_rate(
    client: TestClient[Litestar], workload: dict[str, Any], accelerator: str, tp: int, seqs: int
) -> float:
    """Tokens/s of one copy on ``tp`` x ``accelerator`` at ``seqs`` sequences."""
    body = {
        "workload": {**workload, "concurrency": seqs, "target_tokens_per_s": None},
        "placement": {"accelerator": accelerator, "count": tp, "tensor_parallel": tp},
    }
    body["workload"] = {k: v for k, v in body["workload"].items() if v is not None}
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 200, response.text
    placement = response.json()["placement"]
    assert placement["fits"]
    assert placement["tensor_parallel"] == tp
    return float(response.json()["throughput_tokens_per_s"])


def _top(client: TestClient[Litestar], body: dict[str, Any], lang: str) -> dict[str, Any]:
    answer = recommend(client, {**body, "top_k": 1}, lang=lang)
    assert answer["options"], answer["summary"]
    option: dict[str, Any] = answer["options"][0]
    return option


QWEN3_32B = {"kind": "inference", "model": "qwen3-32b", "concurrency": 64}
V5 = {
    "workload": QWEN3_32B,
    "constraints": {
        "providers": ["volcengine"],
        "regions": ["cn-beijing"],
        "accelerators": ["H20"],
        "accelerator_count": 8,
    },
}


def test_v5_a_fixed_concurrency_keeps_the_fastest_degree(client: TestClient[Litestar]) -> None:
    """The concurrency half of the branch, taken back by the coordinator: with the
    sequences fixed (64 x 4k), 8 one-card copies of Qwen3-32B give each copy a batch of 8,
    and each still reads its 61 GiB of weights per decode step, so the server decodes 4x
    slower than one copy over 8 cards at the same price (the branch's own figures: 1,129
    against 4,656 tokens/s, 17.6 against 72.8 tokens/s per request). The option stays the
    fastest degree, and says nothing of copies."""
    option = _top(client, V5, "en")
    assert option["accelerator"]["name"] == "H20"
    assert option["accelerator"]["count"] == 8
    narrow = 8 * _copy_rate(client, QWEN3_32B, "H20", 1, 8)
    assert option["throughput_tokens_per_s"] > 2 * narrow
    assert option["tensor_parallel"] == 8
    assert _copies(option) is None


def test_v5_estimate_serves_the_same_layout(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/v1/estimate",
        json={"workload": QWEN3_32B, "placement": {"accelerator": "H20", "count": 8}},
    )
    assert response.status_code == 200, response.text
    estimate = response.json()
    assert estimate["placement"]["tensor_parallel"] == 8
    said = " ".join(estimate["assumptions"])
    assert "the one that serves 64 sequences per server fastest" in said
    assert "decoding reads every weight once per step" in said


QWEN25_32B_MINDIE = {
    "kind": "inference",
    "model": "qwen2.5-32b",
    "engine": "mindie",
    "concurrency": 32,
}


def test_v5_mindie_32b_on_8_910b3_keeps_the_fastest_degree(client: TestClient[Litestar]) -> None:
    """32 fixed sequences of Qwen2.5-32B under MindIE on 8 x 910B3: four TP-2 copies of 8
    sequences each (the lowest degree that holds it) decode slower than the degree the
    server serves them fastest at."""
    body = {
        "workload": QWEN25_32B_MINDIE,
        "constraints": {"accelerators": ["Ascend-910B3"], "accelerator_count": 8},
    }
    option = _top(client, body, "en")
    narrow = 4 * _copy_rate(client, QWEN25_32B_MINDIE, "Ascend-910B3", 2, 8)
    assert option["tensor_parallel"] > 2
    assert option["throughput_tokens_per_s"] > narrow


RERANKER = {"kind": "inference", "model": "bge-reranker-v2-m3", "target_tokens_per_s": 100_000}


def test_reranker_on_4_a10_is_four_one_card_copies(client: TestClient[Litestar]) -> None:
    """A 568M-parameter reranker (1.1 GiB in bf16) fits one A10 many times over: at
    100,000 tokens/s (8,192-token sequences) it is served as 4 copies at TP 1, each at
    the fewest sequences per pass with which the four reach the target."""
    body = {"workload": RERANKER, "constraints": {"accelerators": ["A10"], "accelerator_count": 4}}
    option = _top(client, body, "en")
    assert option["tensor_parallel"] == 1
    copies = _copies(option)
    assert copies is not None, option["reasons"]
    assert copies[0] == 4
    per_copy = _copy_rate(client, RERANKER, "A10", 1, copies[1])
    total = option["throughput_tokens_per_s"]
    assert total >= 100_000
    assert abs(total - 4 * per_copy) <= SAME_RATE * 4 * per_copy
    if copies[1] > 1:  # the fewest that reach it: one sequence fewer per copy falls short
        assert 4 * _copy_rate(client, RERANKER, "A10", 1, copies[1] - 1) < 100_000
    said = " ".join(option["reasons"])
    # the batch said is one copy's forward pass, not the server's sequences (4 x that)
    assert f"about {copies[1]} sequence" in said, said
    assert "per forward pass on each copy of the model" in said, said
    zh = _top(client, body, "zh")
    assert any("4 份模型副本" in r and "张量并行 1" in r for r in zh["reasons"]), zh["reasons"]
    assert any(f"每个副本每次前向编码约 {copies[1]} 条序列" in r for r in zh["reasons"])


LLAMA_8B = {"kind": "inference", "model": "llama-3.1-8b", "target_tokens_per_s": 5000}


def test_llama_8b_on_8_a100_is_eight_one_card_copies(client: TestClient[Litestar]) -> None:
    """Llama-3.1-8B (15 GiB in bf16) on 8 x A100-80GB at 5,000 tokens/s: 8 copies at TP 1,
    each at the fewest sequences with which the eight reach the target."""
    body = {
        "workload": LLAMA_8B,
        "constraints": {"accelerators": ["A100-80GB"], "accelerator_count": 8},
    }
    option = _top(client, body, "en")
    assert option["tensor_parallel"] == 1
    copies = _copies(option)
    assert copies is not None, option["reasons"]
    assert copies[0] == 8
    per_copy = _copy_rate(client, LLAMA_8B, "A100-80GB", 1, copies[1])
    total = option["throughput_tokens_per_s"]
    assert total >= 5000
    assert abs(total - 8 * per_copy) <= SAME_RATE * 8 * per_copy
    if copies[1] > 1:
        assert 8 * _copy_rate(client, LLAMA_8B, "A100-80GB", 1, copies[1] - 1) < 5000
