"""Review 9b (docs/answer-review.md, session 10): serving, inference and CV answers.

* S1: ``/v1/estimate`` of a batch job (``output_tokens``, no concurrency, no target)
  batches it as ``/v1/recommend`` does (the batch its KV cache holds, up to the engine's
  limit), not one sequence at a time: 1e9 tokens of Qwen2.5-7B on one A100-80GB took
  3,190 h at 87 tokens/s there and 53.3 h at 256 sequences in the recommendation;
* S2: a served image model (CNN, detector) is ranked and described in images per second
  and price per million images, not in decode tokens.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

BATCH_7B = {
    "kind": "inference",
    "model": "qwen2.5-7b",
    "output_tokens": 1_000_000_000,
    "prompt_len": 1000,
    "context_len": 2048,
}


def _estimate(client: TestClient[Litestar], body: dict[str, Any]) -> Any:
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_an_estimated_batch_job_is_batched_as_the_recommendation_batches_it(
    client: TestClient[Litestar],
) -> None:
    answer = recommend(client, {"workload": BATCH_7B, "top_k": 10}, "en")
    a100 = [o for o in answer["options"] if o["accelerator"]["name"] == "A100-80GB"
            and o["accelerator"]["count"] == 1 and o["nodes"] == 1]  # fmt: skip
    assert a100, [o["instance_type"] for o in answer["options"]]
    option = a100[0]
    body = _estimate(
        client, {"workload": BATCH_7B, "placement": {"accelerator": "A100-80GB", "count": 1}}
    )
    # the same rate and hours as the option (1 %), not one sequence's 87 tokens/s
    assert body["throughput_tokens_per_s"] == pytest.approx(
        option["throughput_tokens_per_s"], rel=0.01
    )
    assert body["time"]["hours"] == pytest.approx(option["hours"], rel=0.01)
    assert body["time"]["hours"] < 100
    said = [a for a in body["assumptions"] if a.startswith("No concurrency was given")]
    assert len(said) == 1, body["assumptions"]
    assert "256 sequences" in said[0], said
    assert any("x 256 sequences" in a for a in body["assumptions"]), body["assumptions"]


def test_an_estimate_with_a_concurrency_keeps_it(client: TestClient[Litestar]) -> None:
    workload = {**BATCH_7B, "concurrency": 8}
    body = _estimate(
        client, {"workload": workload, "placement": {"accelerator": "A100-80GB", "count": 1}}
    )
    assert any("x 8 sequences" in a for a in body["assumptions"]), body["assumptions"]
    assert not any(a.startswith("No concurrency was given") for a in body["assumptions"])


@pytest.mark.parametrize("model", ["resnet-50", "yolov8m"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_served_image_model_is_ranked_in_images_not_tokens(
    client: TestClient[Litestar], model: str, lang: str
) -> None:
    answer = recommend(
        client,
        {"workload": {"kind": "inference", "model": model, "concurrency": 8}, "top_k": 3},
        lang,
    )
    for option in answer["options"]:
        words = " ".join(option["reasons"])
        assert "token" not in words, option["reasons"]
        assert "解码" not in words, option["reasons"]
        ips = option["throughput_tokens_per_s"]
        if lang == "en":
            assert f"About {ips:,.0f} images per second" in words, words
            assert "per million images" in words, words
        else:
            assert f"每秒约处理 {ips:,.0f} 张图像" in words, words
            assert "百万张图像" in words, words


@pytest.mark.parametrize("model", ["vit-b-16", "yolov8m", "resnet-50"])
def test_an_image_models_estimate_says_nothing_of_a_text_engines_prefill_or_kv_pool(
    client: TestClient[Litestar], model: str
) -> None:
    """S3: a ViT served on a T4 was told "Inference workspace (vLLM prefills in chunks of
    up to 2048 tokens)" and "vLLM pre-allocates gpu_memory_utilization … KV-cache pool"."""
    body = _estimate(
        client,
        {
            "workload": {"kind": "inference", "model": model, "concurrency": 64},
            "placement": {"accelerator": "T4", "count": 1},
        },
    )
    words = " ".join(body["assumptions"])
    assert "prefill" not in words, body["assumptions"]
    assert "KV-cache pool" not in words, body["assumptions"]
    assert "gpu_memory_utilization" not in words, body["assumptions"]
    assert any(a.startswith("Weights in") for a in body["assumptions"]), body["assumptions"]
    assert body["memory"]["kv_cache_gib"] == 0


@pytest.mark.parametrize(
    ("workload", "accelerator", "said"),
    [
        ({"engine": "sglang", "concurrency": 16}, "V100", ("SGLang does not start", "SGLang")),
        ({"precision": "fp8", "concurrency": 16}, "A10", ("cannot run FP8", "FP8")),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_engine_or_precision_that_cannot_run_on_the_accelerator_asked_is_said_first(
    client: TestClient[Litestar],
    workload: dict[str, Any],
    accelerator: str,
    said: tuple[str, str],
    lang: str,
) -> None:
    """S4: "No option … 233 offers have other accelerators than the ones asked for" came
    first and the reason the V100s (A10s) were dropped only in the warnings."""
    body = {
        "workload": {"kind": "inference", "model": "qwen2.5-7b", **workload},
        "constraints": {"accelerators": [accelerator]},
    }
    answer = recommend(client, body, lang)
    assert answer["options"] == []
    expected = said[0] if lang == "en" else said[1]
    first = answer["summary"]
    assert expected in first, first
    assert "other accelerators" not in first, first
    assert "不是所选型号" not in first, first


@pytest.mark.parametrize(
    ("engine", "en", "zh"),
    [
        ("lmdeploy", "LMDeploy (TurboMind) max_batch_size 128", "max_batch_size 默认 128"),
        ("vllm", "vLLM max_num_seqs 256", "vLLM 的 max_num_seqs 默认 256"),
    ],
)
def test_a_batch_jobs_batch_limit_is_its_own_engines(
    client: TestClient[Litestar], engine: str, en: str, zh: str
) -> None:
    """S5: an LMDeploy batch job ran 128 sequences "(at most … vLLM max_num_seqs 256)"."""
    workload = {**BATCH_7B, "engine": engine}
    body = {"workload": workload, "constraints": {"accelerators": ["A100-80GB"]}, "top_k": 1}
    for lang, words in (("en", en), ("zh", zh)):
        reasons = recommend(client, body, lang)["options"][0]["reasons"]
        assert any(words in r for r in reasons), reasons
    assert "vLLM" not in " ".join(r for r in reasons if "max_batch_size" in r)
    estimate = _estimate(
        client, {"workload": workload, "placement": {"accelerator": "A100-80GB", "count": 1}}
    )
    assert any(en in a for a in estimate["assumptions"]), estimate["assumptions"]


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", "tokens is the number of training samples"), ("zh", "tokens 是训练样本总数")],
)
def test_an_image_count_field_is_pointed_at_tokens(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """S6: ``workload.images`` (ResNet-50 on ImageNet) was answered "did you mean
    image_size?" — the wrong field; an image model's samples go in ``tokens``."""
    body = {
        "workload": {"kind": "finetune", "model": "resnet-50", "method": "full", "images": 1},
        "lang": lang,
    }
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 400
    (error,) = response.json()["extra"]
    assert error["suggestions"][0] == "tokens", error
    assert words in error["message"], error["message"]
    assert "115305030" in error["message"]  # 90 x 1,281,167


def test_vllm_on_an_ascend_npu_is_timed_in_vllm_ascends_words(
    client: TestClient[Litestar],
) -> None:
    """S9: vLLM on 2×910B3 was "CUDA graphs and paged attention" and "CUDA graphs and engine
    buffers may add 1-3 GiB" (vllm-ascend captures ACL graphs); an A100 keeps CUDA's words."""
    workload = {"kind": "inference", "model": "qwen2.5-32b", "concurrency": 8}
    npu = _estimate(
        client, {"workload": workload, "placement": {"accelerator": "910B3", "count": 2}}
    )
    gpu = _estimate(
        client, {"workload": workload, "placement": {"accelerator": "A100-80GB", "count": 2}}
    )
    npu_words, gpu_words = " ".join(npu["assumptions"]), " ".join(gpu["assumptions"])
    assert "CUDA graphs" not in npu_words, npu["assumptions"]
    assert "vllm-ascend: ACL graphs" in npu_words, npu["assumptions"]
    assert "ACL graphs and engine buffers" in npu_words, npu["assumptions"]
    assert "vLLM: CUDA graphs" in gpu_words, gpu["assumptions"]
    assert "CUDA graphs and engine buffers" in gpu_words, gpu["assumptions"]
