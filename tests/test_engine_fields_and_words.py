"""Engines and the models they do not serve as LLMs: a text engine asked for a served image
model is refused, not ignored (every engine the API names serves language models; an
image model is planned as its own PyTorch pipeline: review 10 S7c's leftover), and an
encoder at the edge of vLLM's memory budget is not told of a KV-cache pool it does not have."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient


@pytest.mark.parametrize("path", ["/v1/recommend", "/v1/estimate"])
@pytest.mark.parametrize(("lang", "said"), [("en", "serves language models"), ("zh", "语言模型")])
def test_a_text_engine_for_an_image_model_is_a_400_naming_the_field(
    client: TestClient[Litestar], path: str, lang: str, said: str
) -> None:
    workload = {"kind": "inference", "model": "sdxl", "concurrency": 2, "engine": "sglang"}
    body: dict[str, object] = {"workload": workload, "lang": lang}
    if path == "/v1/estimate":
        body = {"workload": workload, "placement": {"accelerator": "A10", "count": 1}}
    response = client.post(path, json=body, headers={"accept-language": lang})
    assert response.status_code == 400, response.text
    item = response.json()["extra"][0]
    assert item["key"] == "workload.engine"
    assert said in item["message"]
    assert "SGLang" in item["message"]


def test_the_default_engine_still_plans_the_image_pipeline(client: TestClient[Litestar]) -> None:
    workload = {"kind": "inference", "model": "sdxl", "concurrency": 2}
    response = client.post("/v1/recommend", json={"workload": workload, "top_k": 1})
    assert response.status_code == 200, response.text
    assert response.json()["options"]


@pytest.mark.parametrize(("lang", "kv", "said"), [("en", "KV-cache pool", "keeps no KV cache"),
                                                  ("zh", "KV 缓存池", "没有 KV 缓存")])  # fmt: skip
def test_an_encoder_at_the_edge_of_vllms_budget_is_not_told_of_a_kv_cache_pool(
    client: TestClient[Litestar], lang: str, kv: str, said: str
) -> None:
    """A reranker batched to fill vLLM's 0.9 budget on an A10: the budget holds its weights
    and activations; an encoder has no KV cache, so no pool is said to be full."""
    workload = {"kind": "inference", "model": "bge-reranker-v2-m3", "target_tokens_per_s": 200_000}
    response = client.post("/v1/recommend", json={"workload": workload, "top_k": 3, "lang": lang})
    assert response.status_code == 200, response.text
    reasons = [r for o in response.json()["options"] for r in o["reasons"]]
    assert not [r for r in reasons if kv in r]
    assert [r for r in reasons if said in r and "gpu_memory_utilization" in r]
