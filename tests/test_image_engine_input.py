"""An engine asked for a served image model is refused, not ignored: every engine the
API names serves language models, while an image model is planned as its own PyTorch
pipeline (review 10 S7c's leftover: the field was silently dropped)."""

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
