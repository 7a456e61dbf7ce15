"""Session 14, branch words14 (docs/answer-review.md): review 13s S6 through the real app.

S6. LMDeploy's TurboMind is CUDA-only; on an Ascend NPU LMDeploy runs its PyTorch engine
through dlinfer (InternLM/lmdeploy@a5418b39 docs/en/get_started/ascend/get_started.md:
``PytorchEngineConfig(device_type="ascend")``, ``--backend pytorch --device ascend``), whose
``max_batch_size`` defaults to 256 there (InternLM/lmdeploy@726c5fe9 lmdeploy/utils.py
``get_max_batch_size``). An LMDeploy batch job on 910B said "LMDeploy (TurboMind)
max_batch_size 128"; a CUDA option keeps its words."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

JOB: dict[str, Any] = {
    "kind": "inference",
    "model": "qwen2.5-7b",
    "engine": "lmdeploy",
    "output_tokens": 100_000_000,
}
WORDS = {
    "en": "(LMDeploy (PyTorch engine, dlinfer) max_batch_size 256 by default on Ascend, "
    "128 assumed)",
    "zh": "（LMDeploy（PyTorch 引擎，dlinfer） 在昇腾上的 max_batch_size 默认 256，此处按 128 计）",
}


def test_s6_an_ascend_option_names_lmdeploys_pytorch_engine(client: TestClient[Litestar]) -> None:
    body = {"workload": JOB, "constraints": {"accelerators": ["910B"]}}
    for lang in ("en", "zh"):
        answer = recommend(client, body, lang)
        assert answer["options"], answer
        for option in answer["options"]:
            assert option["accelerator"]["name"].startswith("Ascend"), option["accelerator"]
            said = [r for r in option["reasons"] if "max_batch_size" in r]
            assert len(said) == 1, option["reasons"]
            assert "TurboMind" not in said[0], said[0]
            assert WORDS[lang] in said[0], said[0]
        notes = answer["estimate"]["assumptions"]
        named = [a for a in notes if "TurboMind" in a]
        assert [a.count("TurboMind") for a in named] == [1], named  # only the decode note's
        assert "TurboMind is CUDA-only" in named[0], named
        assert named[0].startswith("Decode"), named
        assert "LMDeploy's PyTorch engine on Ascend" in named[0], named[0]
        pool = [a for a in notes if "cache_max_entry_count" in a]
        assert pool == [
            "LMDeploy's PyTorch engine gives its KV-cache pool cache_max_entry_count (0.8) of "
            "the memory left free after loading the weights (PytorchEngineConfig), so npu-smi "
            "shows more than the estimate."
        ], pool
        assert any("(LMDeploy (PyTorch engine, dlinfer) prefills" in a for a in notes), notes


def test_s6_a_cuda_option_keeps_turbominds_words(client: TestClient[Litestar]) -> None:
    body = {"workload": JOB, "constraints": {"accelerators": ["A100-80GB"]}}
    for lang, words in (
        ("en", "(LMDeploy (TurboMind) max_batch_size 128)"),
        ("zh", "（LMDeploy（TurboMind） 的 max_batch_size 默认 128）"),
    ):
        answer = recommend(client, body, lang)
        first = answer["options"][0]
        notes = answer["estimate"]["assumptions"]
        assert any("(LMDeploy TurboMind: C++ engine" in a for a in notes), notes
        said = [r for r in first["reasons"] if "max_batch_size" in r]
        assert len(said) == 1, first["reasons"]
        assert words in said[0], said[0]
