"""An AWQ checkpoint on Volta follows the serving engine (docs/answer-review.md, after J29).

A checkpoint the model's name fixes as AWQ was dropped on every V100 whatever the engine
(``capabilities.checkpoint_verdict``): vLLM's AWQ kernels need compute capability 7.5.
LMDeploy's TurboMind lists "V100(sm70): V100" among the GPUs of its AWQ/GPTQ INT4 (W4A16)
inference (InternLM/lmdeploy ``docs/en/quantization/w4a16.md``@1cfac7d2), so under
LMDeploy the V100 is a plan, without vLLM's AWQ sentence; under vLLM it stays dropped.
"""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.catalog.capabilities import checkpoint_verdict
from tests.answers import builtin_spec, recommend

AWQ_72B = {
    "kind": "inference",
    "model": "Qwen/Qwen2.5-72B-Instruct-AWQ",
    "context_len": 8192,
    "concurrency": 32,
}


@pytest.mark.parametrize(
    ("accelerator", "engine", "verdict"),
    [
        ("V100-32GB", "lmdeploy", "ok"),
        ("V100-32GB", "vllm", "unsupported"),
        ("V100-32GB", None, "unsupported"),  # no engine named: vLLM, the default
        ("V100-32GB", "tensorrt-llm", "unsupported"),
        ("P100", "lmdeploy", "unsupported"),  # no INT4 kernels below Volta at all
        ("A100-80GB", "vllm", "ok"),
    ],
)
def test_the_awq_verdict_follows_the_engine(
    accelerator: str, engine: str | None, verdict: str
) -> None:
    assert checkpoint_verdict(builtin_spec(accelerator), "AWQ", engine) == verdict


def test_gptq_loads_on_volta_under_every_engine() -> None:
    for engine in (None, "vllm", "lmdeploy"):
        assert checkpoint_verdict(builtin_spec("V100-32GB"), "GPTQ int4", engine) == "ok"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lmdeploy_serves_an_awq_checkpoint_on_v100(client: TestClient[Litestar], lang: str) -> None:
    workload = {**AWQ_72B, "engine": "lmdeploy"}
    body = recommend(
        client, {"workload": workload, "constraints": {"accelerators": ["V100-32GB"]}}, lang
    )
    assert body["options"], body["summary"]
    assert all(o["accelerator"]["name"].startswith("V100") for o in body["options"])
    said = [w for o in body["options"] for w in o["warnings"]]
    assert not any("AWQ" in w for w in said), said  # vLLM's AWQ sentence is not LMDeploy's


def test_vllm_still_drops_v100_for_an_awq_checkpoint(client: TestClient[Litestar]) -> None:
    workload = {**AWQ_72B, "engine": "vllm"}
    body = recommend(
        client, {"workload": workload, "constraints": {"accelerators": ["V100-32GB"]}}, "en"
    )
    assert body["options"] == []
    assert "AWQ" in " ".join([body["summary"], *body.get("warnings", [])])
