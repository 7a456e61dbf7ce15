"""Review session 13, branch rev13s (docs/answer-review.md): serving answers judged as a
cloud architect would.

S1. A served model that one server cannot hold spans servers by pipeline stages (vLLM's
distributed serving guide: tensor parallel within a node, pipeline across nodes,
https://docs.vllm.ai/en/latest/serving/distributed_serving.html): such a replica is one
engine, one batch of sequences, decoding at about one server's rate. The per-request
sentence divided the rate by every server, as if each ran its own replica at the
concurrency: DeepSeek-R1 FP8 at 32 x 32k on 2 x 8 H20 said "32 concurrent requests per
server (64 in all), each about 16.3 tokens/s", where the one replica runs the 32 asked at
about 1,045 / 32 = 32.7 tokens/s each (the option's own estimate: one replica, pipeline
parallel 2). Continuous batching shares a step among the sequences the engine runs, so
each request's rate is the replica's rate over its sequences (vLLM
``benchmarks/benchmark_serving.py`` reports output throughput and per-request TPOT)."""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

R1_LONG: dict[str, Any] = {
    "kind": "inference",
    "model": "deepseek-r1",
    "concurrency": 32,
    "context_len": 32768,
    "precision": "fp8",
}
EN_RATE = r"each sees about ([\d,.]+) tokens/s"
ZH_RATE = r"每个请求约 ([\d,.]+) tokens/秒"


def _said(option: dict[str, Any], pattern: str) -> tuple[str, float] | None:
    for reason in option["reasons"]:
        found = re.search(pattern, reason)
        if found:
            return reason, float(found.group(1).replace(",", ""))
    return None


def test_s1_one_pipeline_replica_runs_the_concurrency_once(client: TestClient[Litestar]) -> None:
    for lang, pattern, per_server in (
        ("en", EN_RATE, "per server"),
        ("zh", ZH_RATE, "每台服务器"),
    ):
        answer = recommend(client, {"workload": R1_LONG}, lang)
        first = answer["options"][0]
        placement = answer["estimate"]["placement"]
        assert first["nodes"] == 2
        assert placement["pipeline_parallel"] == 2
        assert placement["replicas"] == 1
        said = _said(first, pattern)
        assert said is not None, first["reasons"]
        reason, per = said
        assert per_server not in reason, reason
        assert "64" not in reason, reason
        assert per == round(first["throughput_tokens_per_s"] / 32, 1)  # ~32.7, not 16.3
        assert 25 <= per <= 45


def test_s1_pipeline_replicas_say_the_requests_per_replica(
    client: TestClient[Litestar],
) -> None:
    """A target met by 2 pipeline replicas of 2 servers each: each replica runs the 32
    asked (64 in all), not each server (128)."""
    workload = {**R1_LONG, "target_tokens_per_s": 2000}
    for lang, pattern, words in (
        ("en", EN_RATE, "At 32 concurrent requests per replica (64 in all)"),
        ("zh", ZH_RATE, "每个副本 32 个并发请求（共 64 个）"),
    ):
        first = recommend(client, {"workload": workload}, lang)["options"][0]
        assert first["nodes"] == 4
        said = _said(first, pattern)
        assert said is not None, first["reasons"]
        reason, per = said
        assert words in reason, reason
        assert per == round(first["throughput_tokens_per_s"] / 2 / 32, 1)


# S2. An offline batch job whose every option is unpriced (FP8 Llama-3.1-70B: only FP8
# parts, H20/L20/H800, serve it, and none has a public price) ranked by the smallest
# machine: one H20 with room for 13 sequences beside the 70 GB of weights, 1,304 h
# (54 days) for 1e9 tokens, where 2 x H20 batch 81 sequences (about 137 h, 275
# accelerator-hours) and 8 x H20 436 (about 33 h, 265): at any one card-hour price the
# single card costs about 5 x as much and takes 40 x as long. A batch job's bill is its
# accelerator-hours times the card's price, so with the price unknown its accelerator-
# hours rank it (equal ones: the smaller machine first, as before); the reason says so.
BATCH_70B: dict[str, Any] = {
    "kind": "inference",
    "model": "llama-3.1-70b",
    "output_tokens": 1_000_000_000,
    "context_len": 4096,
    "precision": "fp8",
}


def test_s2_unpriced_batch_job_ranks_by_accelerator_hours(client: TestClient[Litestar]) -> None:
    answer = recommend(client, {"workload": BATCH_70B, "top_k": 5}, "en")
    options = answer["options"]
    assert options
    assert all(o["price_per_hour"] is None for o in options)
    card_hours = [o["hours"] * o["accelerator"]["count"] * o["nodes"] for o in options]
    first = options[0]
    assert first["hours"] < 200, first  # not the 1,304 h single H20
    assert card_hours[0] <= min(card_hours) * 1.01
    assert card_hours == sorted(card_hours) or max(card_hours) / min(card_hours) < 1.01
    assert any("accelerator-hours" in r for r in first["reasons"]), first["reasons"]
    zh = recommend(client, {"workload": BATCH_70B, "top_k": 1}, "zh")["options"][0]
    assert zh["instance_type"] == first["instance_type"]
    assert any("卡时" in r for r in zh["reasons"]), zh["reasons"]


def test_s2_unpriced_serving_and_training_keep_the_smallest_machine(
    client: TestClient[Litestar],
) -> None:
    """Open-ended serving has no hours, so the smallest sufficient machine still leads
    (Qwen2.5-7B FP8 for 8 users on Tencent: one L20)."""
    workload = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8,
                "context_len": 4096, "precision": "fp8"}  # fmt: skip
    first = recommend(
        client, {"workload": workload, "constraints": {"providers": ["tencent"]}}, "en"
    )["options"][0]
    assert first["price_per_hour"] is None
    assert first["accelerator"]["count"] == 1
    assert any("smallest sufficient machine" in r for r in first["reasons"])
