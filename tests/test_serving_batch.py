"""A throughput target is met by batching, not by single-stream replicas (review item N1).

Qwen2.5-14B at 1000 tokens/s with no concurrency was sized as 12 servers of 8×V100 (96
cards, ¥690/h) at one sequence each; at concurrency 32 the same target takes 2 servers
of 2×V100 (¥28.77/h). A serving engine batches the requests (continuous batching), so
without a concurrency each server is sized at the batch its KV cache holds, up to the
engine's default ceiling (vLLM ``max_num_seqs`` 256), and the option says so."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.batch import batch_for
from service.sizing.profiles import engine_profile
from service.sizing.resolve import IMAGE_TARGET_BATCH
from tests.answers import assumed
from tests.answers import recommend as answer

TARGET_14B = {"kind": "inference", "model": "qwen2.5-14b", "target_tokens_per_s": 1000}


def recommend(client: TestClient[Litestar], workload: dict[str, Any], lang: str = "en") -> Any:
    return answer(client, {"workload": workload}, lang)


def test_a_throughput_target_without_concurrency_is_batched_not_replicated(
    client: TestClient[Litestar],
) -> None:
    body = recommend(client, TARGET_14B)
    top = body["options"][0]
    cards = top["nodes"] * top["accelerator"]["count"]
    assert cards <= 4, top  # 96 V100s before
    assert top["price_per_hour"] < 40, top  # ¥690.41/h before
    assert top["throughput_tokens_per_s"] >= 1000
    for option in body["options"]:
        batch = assumed(option, r"assumed about (\d+) requests served at once")
        assert batch is not None, option["reasons"]
        assert 1 < batch <= engine_profile("vllm").max_batch
    # the estimate is for the top option's batch on every node: its memory is the option's
    assert body["estimate"]["memory"]["per_device_gib"] == pytest.approx(
        top["per_device_gib"], abs=0.05
    )


def test_the_assumed_concurrency_is_said_in_chinese(client: TestClient[Litestar]) -> None:
    body = recommend(client, TARGET_14B, "zh")
    for option in body["options"]:
        assert assumed(option, r"未给出并发数：.*?约 (\d+) 个请求") is not None, option["reasons"]


def test_a_concurrency_given_is_kept(client: TestClient[Litestar]) -> None:
    for concurrency in (1, 32):
        body = recommend(client, {**TARGET_14B, "concurrency": concurrency})
        assert body["options"]
        for option in body["options"]:
            assert not any("No concurrency was given" in r for r in option["reasons"])
    single = recommend(client, {**TARGET_14B, "concurrency": 1})["options"][0]
    assert single["nodes"] * single["accelerator"]["count"] >= 16  # one stream per server


def test_plain_transformers_does_not_batch(client: TestClient[Litestar]) -> None:
    """generate() has no continuous batching: each server serves one request."""
    assert engine_profile("hf").max_batch == 1
    body = recommend(client, {**TARGET_14B, "target_tokens_per_s": 50, "engine": "hf"})
    for option in body["options"]:
        assert not any("No concurrency was given" in r for r in option["reasons"])


def test_the_batch_is_what_fits_or_the_fewest_that_reach_the_target() -> None:
    def fits(b: int) -> bool:
        return b <= 40

    def rate(b: int) -> float:
        return 30.0 * b / (1 + 0.01 * b)

    assert batch_for(fits, rate, 256, 1e9) == 40  # memory-bound: what the KV cache holds
    assert batch_for(lambda b: True, rate, 256, 1e9) == 256  # the engine's ceiling
    smallest = batch_for(fits, rate, 256, 500.0)
    assert smallest is not None
    assert rate(smallest) >= 500.0 > rate(smallest - 1)
    assert batch_for(lambda b: False, rate, 256, 1.0) is None


@pytest.mark.parametrize("model", ["resnet-50", "vit-b-16"])
def test_an_image_model_is_not_batched_by_the_kv_cache(
    client: TestClient[Litestar], model: str
) -> None:
    """Image models have no KV cache: without a concurrency they are sized at the fixed
    batch an image server runs (``IMAGE_TARGET_BATCH`` images per call, session 13), as
    if that concurrency were given, never at a KV-cache batch."""
    target = {"kind": "inference", "model": model, "target_tokens_per_s": 500}
    unsaid = recommend(client, target)["options"]
    single = recommend(client, {**target, "concurrency": IMAGE_TARGET_BATCH})["options"]
    assert unsaid
    key = [(o["instance_type"], o["nodes"], o["per_device_gib"]) for o in unsaid]
    assert key == [(o["instance_type"], o["nodes"], o["per_device_gib"]) for o in single]
    assert not any("No concurrency was given" in r for o in unsaid for r in o["reasons"])


def test_the_estimate_states_the_batch_it_was_sized_at(client: TestClient[Litestar]) -> None:
    body = recommend(client, TARGET_14B)
    top = body["options"][0]
    batch = assumed(top, r"assumed about (\d+) requests served at once")
    assert batch is not None
    sequences = batch * top["nodes"]
    kv = [a for a in body["estimate"]["assumptions"] if a.startswith("KV cache")]
    assert len(kv) == 1
    assert kv[0].endswith(f"x {sequences} sequences."), kv[0]


def test_options_that_all_reach_the_target_rank_by_the_hour(
    client: TestClient[Litestar],
) -> None:
    """Sized to a throughput target, every option serves the target: the capacity rented
    is what differs, so the hourly price ranks them. Per million tokens (the open-ended
    rule) ranked 2×2 V100 at ¥28.77/h above one A100-80GB at ¥22.84/h, because the V100
    pair's surplus capacity (1,627 tok/s for a 1,000 tok/s target) lowered its price per
    token."""
    for lang, words in (("en", "ranked by hourly price"), ("zh", "按每小时价格排序")):
        options = recommend(client, TARGET_14B, lang)["options"]
        assert len(options) >= 3
        priced = [o for o in options if o["price_per_hour"] is not None]
        assert all(o["throughput_tokens_per_s"] >= 1000 for o in priced)
        # published prices in hourly order (an estimate ranks at the top of its range)
        exact = [o["price_per_hour"] for o in priced if not o["price_estimated"]]
        assert exact == sorted(exact), options
        assert options[0]["price_per_hour"] < 28.77, options[0]
        assert any(words in r for r in options[0]["reasons"]), options[0]["reasons"]
