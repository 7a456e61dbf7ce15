"""The framework-limit sentence ("Hugging Face Trainer/PEFT trains with data parallelism
and ZeRO/FSDP only ...") is said only where the limit decided the answer: a job that
would fit fewer devices by splitting its layers. A 7B LoRA, which fits one GPU, never
carries it, neither in an option's reasons nor in the estimate's assumptions."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

HF_LIMIT = {"en": "no tensor or pipeline parallelism", "zh": "不支持张量并行或流水线并行"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_7b_lora_does_not_carry_the_hf_limit(client: TestClient[Litestar], lang: str) -> None:
    body: dict[str, Any] = {
        "workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora",
                     "tokens": 10**7},
        "top_k": 10,
    }  # fmt: skip
    answer = recommend(client, body, lang)
    assert answer["options"]
    assert any(o["zero_stage"] == 3 for o in answer["options"])  # the case that said it
    words = HF_LIMIT[lang]
    for option in answer["options"]:
        assert not any(words in r for r in option["reasons"]), option["instance_type"]
    assert not any(HF_LIMIT["en"] in a for a in answer["estimate"]["assumptions"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_job_needing_tensor_parallelism_carries_it(make_client: Any, lang: str) -> None:
    """A 72B LoRA at 16K tokens: ZeRO-3 does not split the activations, so under HF
    Trainer it takes 8 H20s (84 GiB of 96 each) or three 8xA100-80GB servers, where
    tensor parallelism 2 would hold it on 4 of either (71 GiB each). Every option says
    that the framework's missing tensor parallelism set its size, in the answer's
    language; the estimate's assumptions say it too."""
    client: TestClient[Litestar] = make_client(price_estimates=True)
    body = {"workload": {"kind": "finetune", "model": "qwen2.5-72b", "method": "lora",
                         "seq_len": 16384, "tokens": 20_000_000},
            "objective": "cost", "top_k": 10}  # fmt: skip
    answer = recommend(client, body, lang)
    options = answer["options"]
    assert {o["accelerator"]["name"] for o in options} >= {"H20", "A100-80GB"}
    for o in options:
        assert o["tensor_parallel"] in (None, 1)
        assert o["accelerator"]["count"] * o["nodes"] >= 8, o["instance_type"]
        assert any(HF_LIMIT[lang] in r for r in o["reasons"]), o["instance_type"]
    assert any(HF_LIMIT["en"] in a for a in answer["estimate"]["assumptions"])
