"""Review 10 R8 (docs/answer-review.md, session 11): a fine-tune's global batch bounds how
wide it is spread.

LoRA on Qwen2.5-32B, 1e8 tokens at 4k, ``objective: time`` with a 12 h deadline was put
on 64 x 8 A100-80GB (512 GPUs) for a 15-minute job: 24,414 sequences over 512
data-parallel replicas is 47 optimizer steps of 512 sequences. Data parallelism
multiplies the global batch (micro batch x accumulation x replicas), and a fine-tune's
global batch is a hyper-parameter (Stanford Alpaca keeps 128 sequences on any number of
GPUs), so the time objective cannot buy speed past ``global batch / micro batch``
replicas; a short run (fewer than 500 x 128 sequences) gets the smaller batch (a power
of two) that still gives it about 500 optimizer steps (:mod:`service.planning.width`).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

LORA_32B = {
    "kind": "finetune",
    "model": "qwen2.5-32b",
    "method": "lora",
    "tokens": 100_000_000,
    "seq_len": 4096,
}
R8 = {"workload": LORA_32B, "objective": "time", "constraints": {"deadline_hours": 12}}


def _replicas(option: dict[str, Any]) -> int:
    """Data-parallel replicas of an option: its devices over one copy's (tensor parallel;
    none of these jobs is pipelined)."""
    devices = option["nodes"] * option["accelerator"]["count"]
    return devices // (option.get("tensor_parallel") or 1)


def _bound_said(option: dict[str, Any], lang: str) -> list[str]:
    mark = "More servers would not make it faster" if lang == "en" else "再加服务器也不会更快"
    return [r for r in option["reasons"] if r.startswith(mark)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_short_lora_is_not_spread_past_its_global_batch(
    client: TestClient[Litestar], lang: str
) -> None:
    body = recommend(client, {**R8, "top_k": 5}, lang)
    options = body["options"]
    assert options
    # 1e8 / 4,096 = 24,414 sequences; 500 optimizer steps -> at most 48 sequences a
    # step, a global batch of 32 (the power of two under it)
    for option in options:
        assert _replicas(option) <= 32, (option["instance_type"], option["nodes"])
    top = options[0]
    assert top["accelerator"]["name"] == "A100-80GB"
    assert top["nodes"] == 4, top["nodes"]  # 32 GPUs, not 512
    assert top["hours"] > 0.5  # not the 15-minute, 47-step run
    said = _bound_said(top, lang)
    assert len(said) == 1, top["reasons"]
    assert "32" in said[0], said[0]
    assert "500" in said[0], said[0]
    assert all(not _bound_said(o, lang) for o in options[1:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_lora_stops_at_the_recipes_global_batch(
    client: TestClient[Litestar], lang: str
) -> None:
    # 1e10 tokens = 2.4M sequences: the recipe's 128 binds, not the step count
    workload = {**LORA_32B, "tokens": 10_000_000_000}
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 200}},
        lang,
    )
    top = body["options"][0]
    assert all(_replicas(o) <= 128 for o in body["options"])
    assert _replicas(top) == 128, (top["instance_type"], top["nodes"])
    said = _bound_said(top, lang)
    assert len(said) == 1, top["reasons"]
    assert "128" in said[0], said[0]
    assert "500" not in said[0], said[0]


def test_a_larger_micro_batch_leaves_room_for_fewer_replicas(
    client: TestClient[Litestar],
) -> None:
    workload = {**LORA_32B, "tokens": 10_000_000_000, "micro_batch_size": 4}
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 200}},
        "en",
    )
    top = body["options"][0]
    assert all(_replicas(o) <= 32 for o in body["options"])  # 4 x 32 = 128
    assert _replicas(top) == 32
    assert "32 data-parallel replicas" in _bound_said(top, "en")[0]


def test_dpo_is_bounded_as_a_fine_tune(client: TestClient[Litestar]) -> None:
    workload = {"kind": "rlhf", "algorithm": "dpo", "model": "qwen2.5-7b",
                "method": "lora", "tokens": 10_000_000_000}  # fmt: skip
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 200}},
        "en",
    )
    assert body["options"]
    assert all(_replicas(o) <= 128 for o in body["options"])


def test_pre_training_still_scales_past_a_fine_tunes_batch(
    client: TestClient[Litestar],
) -> None:
    # pre-training's global batch is millions of tokens and grows with the cluster
    workload = {"kind": "pretrain", "model": "llama-3-8b", "tokens": 100_000_000_000,
                "seq_len": 4096}  # fmt: skip
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 720}},
        "en",
    )
    top = body["options"][0]
    assert _replicas(top) > 128, (top["instance_type"], top["nodes"])
    assert not _bound_said(top, "en")
