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
