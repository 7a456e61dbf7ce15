"""An offline batch job runs at the engine's batch limit (review 3, R4).

Generating 500M tokens with Qwen2.5-7B and no ``concurrency`` was sized at one sequence:
3,091 h on a monthly V100 contract, ¥25,950. A batch job (a fixed number of output tokens,
no latency target) is run with continuous batching — vLLM's offline ``LLM.generate``
schedules up to ``max_num_seqs`` (256 by default) sequences per step — so each server is
sized at the batch its KV cache holds, at most the engine's default, and the option says
the concurrency it assumed. With ``concurrency: 128`` the same job took 105 h and ¥1,259;
a ``concurrency`` the user sends is kept."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import assumed
from tests.answers import recommend as answer

BATCH_7B: dict[str, Any] = {
    "kind": "inference", "model": "qwen2.5-7b", "prompt_len": 1000,
    "output_tokens": 500_000_000, "context_len": 1500,
}  # fmt: skip


def recommend(client: TestClient[Litestar], workload: dict[str, Any], lang: str = "en") -> Any:
    return answer(client, {"workload": workload, "objective": "cost", "top_k": 3}, lang)


def test_a_batch_job_without_concurrency_runs_at_the_engine_batch(
    client: TestClient[Litestar],
) -> None:
    top = recommend(client, BATCH_7B)["options"][0]
    # ~1,300 tokens/s on one V100 at a batch of 128: about 4 days, about ¥1,300
    assert top["hours"] < 200, top
    assert top["total_cost"] < 2_000, top
    assert top["billing"] != "monthly"
    batch = assumed(top, r"assumed about (\d+) sequences")
    assert batch is not None, top["reasons"]
    # what the KV cache holds, at most vLLM's max_num_seqs per engine instance (review 10
    # K6: each copy of the model on the server is one, with its own limit)
    copies = assumed(top, r"(\d+) copies of the model") or 1
    assert 16 <= batch <= 256 * copies
    assert top["throughput_tokens_per_s"] > 20 * 45  # not the single-stream 45 tokens/s


def test_the_assumed_batch_is_said_in_chinese(client: TestClient[Litestar]) -> None:
    top = recommend(client, BATCH_7B, lang="zh")["options"][0]
    assert assumed(top, r"假设每台同时生成约 (\d+) 条序列") is not None, top["reasons"]


@pytest.mark.parametrize("concurrency", [1, 128])
def test_a_concurrency_given_is_kept(client: TestClient[Litestar], concurrency: int) -> None:
    answer = recommend(client, {**BATCH_7B, "concurrency": concurrency})
    for option in answer["options"]:
        assert assumed(option, r"assumed about (\d+) sequences") is None
    if concurrency == 1:
        assert answer["options"][0]["hours"] > 1_000  # one sequence: months
