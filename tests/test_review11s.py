"""Review 11s (serving and inference, docs/answer-review.md session 12, branch
``review11s``): each defect reproduced through the real HTTP app, with its numbers.

V1: the FP8 releases of the MoE models (Qwen3-30B-A3B-FP8, Qwen3-235B-A22B-FP8,
DeepSeek-V3/R1) store their weights in 128 x 128 blocks, each with its own scale
(``weight_block_size [128, 128]`` in their ``config.json``). A tensor-parallel rank holds
``moe_intermediate_size / tp`` rows of every expert's gate/up projection, and vLLM's and
SGLang's block-FP8 MoE methods refuse to load unless that is a multiple of 128: "The
output_size of gate's and up's weight = 192 is not divisible by weight quantization
block_n = 128" (Qwen3-235B-A22B-FP8 at TP 8, 1536 / 8, vllm-project/vllm#17569;
Qwen3-30B-A3B-FP8 at TP 4, 768 / 4, vllm-project/vllm#25292; the mechanism,
vllm-project/vllm#48173). The planner chose TP 4 for Qwen3-30B-A3B in FP8 and the
estimate TP 8 for Qwen3-235B-A22B in FP8: layouts that do not start.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

FP8_BLOCK = 128
"""Rows of one FP8 weight block (``weight_block_size`` [128, 128])."""

EXPERT_WIDTH = {"qwen3-30b-a3b": 768, "qwen3-235b-a22b": 1536, "deepseek-v3": 2048}
"""``moe_intermediate_size`` of each model's ``config.json`` (Hugging Face)."""


def _loads(model: str, tp: int) -> bool:
    """Whether a block-FP8 checkpoint of ``model`` loads at tensor parallel ``tp``."""
    width = EXPERT_WIDTH[model]
    return width % tp == 0 and (width // tp) % FP8_BLOCK == 0


def _serving(model: str, context: int, concurrency: int) -> dict[str, Any]:
    return {
        "kind": "inference",
        "model": model,
        "precision": "fp8",
        "context_len": context,
        "concurrency": concurrency,
    }


def test_v1_fp8_moe_options_use_a_degree_whose_expert_shards_hold_whole_blocks(
    client: TestClient[Litestar],
) -> None:
    answer = recommend(
        client,
        {
            "workload": _serving("qwen3-30b-a3b", 32768, 64),
            "constraints": {"accelerators": ["H20"]},
            "top_k": 5,
        },
        lang="en",
    )
    options = answer["options"]
    assert options
    for option in options:
        assert _loads("qwen3-30b-a3b", option["tensor_parallel"]), option["tensor_parallel"]
    assert _loads("qwen3-30b-a3b", answer["estimate"]["placement"]["tensor_parallel"])


def test_v1_fp8_moe_estimate_picks_a_degree_that_loads(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/v1/estimate",
        json={
            "workload": _serving("qwen3-235b-a22b", 32768, 16),
            "placement": {"accelerator": "H20", "count": 8},
        },
    )
    assert response.status_code == 200, response.text
    placement = response.json()["placement"]
    assert placement["fits"]
    # 1536 / 4 = 384 = 3 blocks: tensor parallel 4, two copies on the 8 cards
    assert placement["tensor_parallel"] == 4
    assert _loads("qwen3-235b-a22b", placement["tensor_parallel"])


def test_v1_an_fp8_moe_degree_that_splits_a_block_is_refused_in_words(
    client: TestClient[Litestar],
) -> None:
    body = {
        "workload": _serving("qwen3-235b-a22b", 8192, 8),
        "placement": {"accelerator": "H20", "count": 8, "tensor_parallel": 8},
    }
    en = client.post("/v1/estimate", json=body)
    assert en.status_code == 400, en.text
    message = en.json()["extra"][0]["message"]
    for figure in ("1,536", "192", "128", "1, 2, 4"):
        assert figure in message, message
    assert "tensor_parallel" in en.json()["extra"][0]["key"]
    zh = client.post("/v1/estimate", json=body, headers={"Accept-Language": "zh"})
    assert zh.status_code == 400
    assert "192" in zh.json()["extra"][0]["message"]
    assert "FP8" in zh.json()["extra"][0]["message"]


def test_v1_bf16_and_dense_fp8_keep_every_degree(client: TestClient[Litestar]) -> None:
    """Only the block-FP8 MoE is limited: BF16 Qwen3-235B-A22B still runs at TP 8."""
    response = client.post(
        "/v1/estimate",
        json={
            "workload": {**_serving("qwen3-235b-a22b", 8192, 8), "precision": "bf16"},
            "placement": {"accelerator": "H20", "count": 8, "tensor_parallel": 8},
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["placement"]["tensor_parallel"] == 8
    # DeepSeek-V3's 2048-wide experts split into 256 rows at TP 8: two whole blocks
    v3 = client.post(
        "/v1/estimate",
        json={
            "workload": _serving("deepseek-v3", 4096, 4),
            "placement": {"accelerator": "H20", "count": 8, "tensor_parallel": 8},
        },
    )
    assert v3.status_code == 200, v3.text


# V2: a vision-language model named (Qwen2-VL-7B-Instruct, Qwen2.5-VL-7B-Instruct) got
# "unknown model preset … did you mean qwen2-7b, qwen2-72b, qwen2.5-7b?": text models
# offered with no word that they leave out the vision encoder and the images' tokens.


def _refusal(client: TestClient[Litestar], model: str, lang: str) -> dict[str, Any]:
    response = client.post(
        "/v1/recommend",
        json={
            "workload": {"kind": "inference", "model": model, "context_len": 8192},
            "lang": lang,
        },
    )
    assert response.status_code == 400, response.text
    extra: dict[str, Any] = response.json()["extra"][0]
    return extra


def test_v2_a_vision_language_model_is_said_to_be_one(client: TestClient[Litestar]) -> None:
    en = _refusal(client, "Qwen/Qwen2-VL-7B-Instruct", "en")
    assert en["key"] == "workload.model"
    assert en["suggestions"][0] == "qwen2-7b"
    assert "vision-language model" in en["message"]
    assert "vision encoder" in en["message"]
    assert "16,384" in en["message"]  # 12,845,056 max_pixels / (28 x 28) per token
    zh = _refusal(client, "Qwen/Qwen2.5-VL-7B-Instruct", "zh")
    assert zh["suggestions"][0] == "qwen2.5-7b"
    assert "视觉语言模型" in zh["message"]
    assert "vision-language" not in zh["message"]


def test_v2_a_text_model_typo_keeps_the_plain_refusal(client: TestClient[Litestar]) -> None:
    en = _refusal(client, "qwen2.5-7b-instrcut-x", "en")
    assert "vision" not in en["message"]


# V3: Qwen3-235B-A22B in FP8 on Ascend 910B: "No option meets every constraint. 6 offers
# have accelerators that cannot run FP8", and the only lever lifted the accelerator limit
# (4 x H20). The 910B has no FP8 units but serves W8A8 (INT8) weights (msModelSlim, loaded
# by MindIE or vllm-ascend: Qwen3-235B-A22B-W8A8 on one Atlas 800I A2 of 8 x 64 GB,
# https://docs.vllm.ai/projects/ascend/en/latest/tutorials/models/Qwen3-235B-A22B.html).


def test_v3_fp8_refused_by_the_device_is_answered_with_its_int8_lever(
    client: TestClient[Litestar],
) -> None:
    body = {
        "workload": _serving("qwen3-235b-a22b", 8192, 16),
        "constraints": {"accelerators": ["910B"]},
    }
    en = recommend(client, body, lang="en")
    assert en["options"] == []
    levers = {hint["constraint"]: hint for hint in en["relax"]}
    assert "precision" in levers, en["relax"]
    assert "910B" in levers["precision"]["nearest"]
    assert any(w.startswith("With INT8 weights") for w in en["warnings"]), en["warnings"]
    zh = recommend(client, body, lang="zh")
    assert any(w.startswith("改用 INT8 权重") for w in zh["warnings"]), zh["warnings"]


def test_v1_tensorrt_llm_keeps_tensor_parallel_8_for_its_own_fp8(
    client: TestClient[Litestar],
) -> None:
    """TensorRT-LLM serves a ModelOpt FP8 conversion: NVIDIA measures Qwen3-235B-A22B at
    TP 8 in FP8 on 8 x H100 (TensorRT-LLM perf-overview.md @00f37686)."""
    response = client.post(
        "/v1/estimate",
        json={
            "workload": {**_serving("qwen3-235b-a22b", 4096, 8), "engine": "tensorrt-llm"},
            "placement": {"accelerator": "H100-80GB", "count": 8, "tensor_parallel": 8},
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["placement"]["tensor_parallel"] == 8
