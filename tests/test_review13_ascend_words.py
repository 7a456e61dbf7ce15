"""Review 11s V8 (docs/answer-review.md, session 13, coordinator): an answer without
options for a job asked on Ascend NPUs only kept the GPU words of its advice — CUDA
images, GPU utilization under DCGM, "the weights are already FP8" (the 910B has no FP8
units: the registry's ``supports_fp8`` is false for it, ``reference/accelerator-facts.csv``;
its quantized route is msModelSlim's W8A8, ``service/catalog/capabilities.py``) and
serverless GPU — because the advice read the accelerators of the options shown, and
there were none. The advice of an empty answer now reads the accelerators the user asked
for."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

FP8_ON_ASCEND: dict[str, Any] = {
    "workload": {
        "kind": "inference",
        "model": "qwen3-235b-a22b",
        "precision": "fp8",
        "context_len": 8192,
        "concurrency": 16,
    },
    "constraints": {"accelerators": ["Ascend-910B3"]},
}


def _advice(answer: dict[str, Any]) -> dict[str, str]:
    return {a["topic"]: a["text"] for a in answer["advice"]}


def test_v8_empty_ascend_answer_speaks_of_npus_not_gpus(client: TestClient[Litestar]) -> None:
    answer = recommend(client, FP8_ON_ASCEND, lang="en")
    assert answer["options"] == []
    advice = _advice(answer)
    text = " ".join(advice.values())
    for gpu_word in ("DCGM", "GPU utilization", "serverless GPU", "already FP8"):
        assert gpu_word not in text, (gpu_word, text)
    assert "CUDA" not in advice["containers"] + advice["monitoring"] + advice["serving"]
    assert "not CUDA" in advice["ascend"]  # the Ascend caveat contrasts the two stacks
    assert "npu-smi" in advice["monitoring"]
    assert "CANN" in advice["containers"]
    assert "W8A8" in advice["serving"]


def test_v8_empty_ascend_answer_in_chinese(client: TestClient[Litestar]) -> None:
    answer = recommend(client, FP8_ON_ASCEND, lang="zh")
    advice = _advice(answer)
    assert "CUDA" not in advice["containers"] + advice["monitoring"] + advice["serving"]
    assert "npu-smi" in advice["monitoring"] and "W8A8" in advice["serving"]


def test_v8_empty_gpu_answer_keeps_gpu_words(client: TestClient[Litestar]) -> None:
    """The fallback reads the filter: a GPU-only empty answer still speaks of GPUs."""
    body = {
        "workload": {"kind": "inference", "model": "deepseek-v3", "context_len": 8192},
        "constraints": {"accelerators": ["T4"], "max_nodes": 1},
    }
    answer = recommend(client, body, lang="en")
    assert answer["options"] == []
    advice = _advice(answer)
    assert "npu-smi" not in " ".join(advice.values())
    assert "CUDA" in advice["containers"]
