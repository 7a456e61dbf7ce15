"""Review 11s V4 (docs/answer-review.md, session 13, coordinator): an online serving
answer at a concurrency said only the server's decode throughput (Qwen2.5-32B on 4 x
A100-80GB at 200 concurrent requests: "about 3,996 tokens/s"), not what each user sees.
Continuous batching shares one decode step among every running sequence, so each of the
``concurrency`` streams advances by about one token per step: the server's rate divided
by the sequences it runs (vLLM's benchmark reports the same pair, output throughput and
per-request TPOT: vllm-project/vllm ``benchmarks/benchmark_serving.py``). An offline batch
job (``output_tokens``) has no user waiting, so it is not told."""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

SERVING: dict[str, Any] = {
    "kind": "inference",
    "model": "qwen2.5-32b",
    "context_len": 4096,
    "concurrency": 200,
}


def _per_request(option: dict[str, Any], pattern: str) -> tuple[float, float] | None:
    for reason in option["reasons"]:
        found = re.search(pattern, reason)
        if found:
            return float(found.group(1).replace(",", "")), float(found.group(2).replace(",", ""))
    return None


EN = r"each sees about ([\d,.]+) tokens/s \(a token every ([\d,]+) ms or so\)"
ZH = r"每个请求约 ([\d,.]+) tokens/秒（约每 ([\d,]+) 毫秒一个 token）"


def test_v4_each_request_rate_is_the_servers_rate_over_its_sequences(
    client: TestClient[Litestar],
) -> None:
    answer = recommend(
        client, {"workload": SERVING, "constraints": {"accelerators": ["A100-80GB"]}}, "en"
    )
    assert answer["options"]
    for option in answer["options"]:
        said = _per_request(option, EN)
        assert said is not None, option["reasons"]
        per, ms = said
        per_server = option["throughput_tokens_per_s"] / option["nodes"]
        assert per == round(per_server / 200, 1)
        assert abs(ms - 1000 / per) <= 1000 / per * 0.02 + 1  # the rounding of both
    first = answer["options"][0]
    assert 15 <= first["throughput_tokens_per_s"] / 200 <= 40  # ~20 tokens/s, 50 ms (review)


def test_v4_in_chinese(client: TestClient[Litestar]) -> None:
    answer = recommend(
        client, {"workload": SERVING, "constraints": {"accelerators": ["A100-80GB"]}}, "zh"
    )
    assert _per_request(answer["options"][0], ZH) is not None


def test_v4_not_said_for_one_stream_or_an_offline_batch(client: TestClient[Litestar]) -> None:
    one = {**SERVING, "concurrency": 1}
    batch = {**SERVING, "output_tokens": 1e8}
    for workload in (one, batch):
        answer = recommend(client, {"workload": workload}, "en")
        assert answer["options"]
        for option in answer["options"]:
            assert _per_request(option, EN) is None, option["reasons"]


def test_v4_replicas_say_the_requests_per_server(client: TestClient[Litestar]) -> None:
    """A target met by replicas of one server each at the concurrency: each server runs
    its own 8 requests, so the sentence says so and the total (9 servers: 72)."""
    workload = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8,
                "target_tokens_per_s": 2000}  # fmt: skip
    answer = recommend(
        client, {"workload": workload, "constraints": {"accelerators": ["A10"]}}, "en"
    )
    option = answer["options"][0]
    assert option["nodes"] > 1
    pattern = (r"At 8 concurrent requests per server \(([\d,]+) in all\), each sees about "
               r"([\d.]+) tokens/s")  # fmt: skip
    found = [re.search(pattern, r) for r in option["reasons"]]
    said = next(f for f in found if f)
    assert int(said.group(1).replace(",", "")) == 8 * option["nodes"]
    per = option["throughput_tokens_per_s"] / option["nodes"] / 8
    assert float(said.group(2)) == round(per, 1)
