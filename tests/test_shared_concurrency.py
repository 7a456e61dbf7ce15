"""A concurrency one server cannot hold, though it holds the model (review 13s S3, session
16): Qwen2.5-14B for 32 users at 128k on A100-80GB was one vLLM replica pipelined over 2 x 8
GPUs (467 tokens/s, 14.6 per request), while the same answer's estimate placed 2 replicas
of 16 users (828 tokens/s). The planner held every replica at the whole concurrency, so
the 768 GiB of KV cache forced pipeline stages.

An architect splits the users over independent servers behind a load balancer: each
holds the 28 GiB of weights and the cache of its share, and no token crosses between
servers. The planner now offers that split wherever it needs no more servers than the
pipeline that holds the job (eight H20 servers holding R1 for 3 users each are not an
answer to two pipelined ones: ``tests/test_pipeline_kv.py`` keeps 2 x 8)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

LONG_CONTEXT = {
    "workload": {"kind": "inference", "model": "qwen2.5-14b", "concurrency": 32,
                 "context_len": 131072},
    "constraints": {"accelerators": ["A100-80GB"]},
    "top_k": 3,
}  # fmt: skip


def _top(client: TestClient[Litestar], lang: str) -> tuple[dict[str, Any], dict[str, Any]]:
    answer = recommend(client, LONG_CONTEXT, lang=lang)
    assert answer["options"], answer["warnings"]
    return answer["options"][0], answer


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_users_are_split_over_two_servers_not_pipelined(
    client: TestClient[Litestar], lang: str
) -> None:
    top, _ = _top(client, lang)
    assert (top["nodes"], top["accelerator"]["count"]) == (2, 8)
    assert top["throughput_tokens_per_s"] > 800  # two servers' rates, not one pipeline's 467
    said = " ".join(top["reasons"])
    assert ("load balancer" if lang == "en" else "负载均衡") in said
    assert ("pipeline stages" if lang == "en" else "流水线级") not in said
    if lang == "en":
        assert "At 16 concurrent requests per server (32 in all)" in said


def test_the_option_and_its_estimate_agree(client: TestClient[Litestar]) -> None:
    top, answer = _top(client, "en")
    estimate = answer["estimate"]
    assert estimate["placement"]["replicas"] == 2
    assert estimate["placement"]["pipeline_parallel"] == 1
    assert top["throughput_tokens_per_s"] == pytest.approx(
        estimate["throughput_tokens_per_s"], rel=1e-3
    )
    assert top["per_device_gib"] == pytest.approx(
        top["accelerator"]["memory_gib"] - estimate["placement"]["headroom_gib"], abs=0.1
    )


def test_every_option_holds_its_share(client: TestClient[Litestar]) -> None:
    answer = recommend(client, LONG_CONTEXT, lang="en")
    for option in answer["options"]:
        assert option["per_device_gib"] <= option["accelerator"]["memory_gib"] * 0.9 + 1e-6
