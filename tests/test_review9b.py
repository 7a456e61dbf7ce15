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
