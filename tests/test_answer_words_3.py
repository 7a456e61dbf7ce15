"""Words of the planner's answers after expert review 3 (R18l, R18h, R18b, R7, R2):
one parenthesis for a layout, images per second for image models, the region a buyer
must pick named in the summary, a spot estimate said as a market price with its
ceiling, and inference-only pools kept out of training. Through the HTTP app and the
shipped plugins."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient


def recommend(client: TestClient[Litestar], body: dict[str, Any], lang: str) -> Any:
    response = client.post("/v1/recommend", json={**body, "lang": lang})
    assert response.status_code == 200, response.text
    return response.json()


QLORA_72B = {
    "workload": {"kind": "finetune", "model": "qwen2.5-72b", "method": "qlora", "seq_len": 2048,
                 "tokens": 20_000_000},
    "top_k": 5,
}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "joined", "split"),
    [
        ("en", "(ZeRO-3, tensor parallel 2)", ") ("),
        ("zh", "（ZeRO-3，张量并行 2）", "）（"),
    ],
)
def test_a_layout_reads_as_one_parenthesis(
    client: TestClient[Litestar], lang: str, joined: str, split: str
) -> None:
    """R18l: "(ZeRO-3) (tensor parallel 2)" read as two afterthoughts."""
    answer = recommend(client, QLORA_72B, lang)
    reasons = [r for o in answer["options"] for r in o["reasons"]]
    assert any(joined in r for r in reasons), reasons
    assert not any(split in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("lang", "said", "unsaid"),
    [
        ("en", "how many images per second it serves is not estimated", "decode"),
        ("zh", "每秒可处理的图像数无法估计", "解码"),
    ],
)
def test_diffusion_serving_has_no_decode(
    client: TestClient[Litestar], lang: str, said: str, unsaid: str
) -> None:
    """R18h: Stable Diffusion has no decode step; its rate would be images/s."""
    answer = recommend(client, {"workload": {"kind": "inference", "model": "sd-1.5"}}, lang)
    assert said in answer["summary"]
    assert unsaid not in answer["summary"]


def test_an_image_classifier_is_rated_in_images_per_second(client: TestClient[Litestar]) -> None:
    answer = recommend(client, {"workload": {"kind": "inference", "model": "resnet-50"}}, "en")
    assert answer["summary"].endswith(" images/s."), answer["summary"]
    zh = recommend(client, {"workload": {"kind": "inference", "model": "resnet-50"}}, "zh")
    assert "张图像" in zh["summary"], zh["summary"]
    assert "tokens" not in zh["summary"], zh["summary"]
