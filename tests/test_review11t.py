"""Review 11t (docs/answer-review.md, session 12): training answers an expert would not
sign, each reproduced through the real app.

T1: ``framework: "mindspeed"`` was planned on NVIDIA A100s and H20s ("MindSpeed (Megatron
on Ascend) shards the optimizer…" on an A100). MindSpeed runs on Ascend NPUs only
(MindSpeed's version table: Atlas 800T A2; MindSpeed-LLM's install guide: NPU driver,
CANN, torch_npu), so those devices are dropped and the empty answer says why.

T2: ``framework: "megatron"`` on an Ascend 910B was planned in Megatron-LM's name with no
word that NVIDIA's Megatron-LM needs CUDA; on Ascend it runs as MindSpeed (same layouts).

T3: ``model: "vit-l-16"`` was a 400 suggesting yi-1.5-6b; ViT-L/16 is torchvision's
``vit_l_16`` (304,326,632 parameters, 61.555 GFLOPs at 224 px).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

PRETRAIN_7B: dict[str, Any] = {
    "kind": "pretrain",
    "model": "qwen2.5-7b",
    "tokens": 20_000_000_000,
    "seq_len": 4096,
}


def _on_ascend(option: dict[str, Any]) -> bool:
    return str(option["accelerator"]["name"]).startswith("Ascend")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mindspeed_is_planned_on_ascend_npus_only(client: TestClient[Litestar], lang: str) -> None:
    body = recommend(
        client, {"workload": {**PRETRAIN_7B, "framework": "mindspeed"}, "top_k": 5}, lang
    )
    options = body["options"]
    assert options
    # before: 4xA100-80GB monthly first, 8xA100-40GB and 16x8 H20 after it
    assert all(_on_ascend(o) for o in options), [o["accelerator"]["name"] for o in options]


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "MindSpeed runs on Ascend only"),
        ("zh", "MindSpeed 只在昇腾上运行"),
    ],
)
def test_mindspeed_on_the_gpu_asked_for_says_why_there_is_no_option(
    client: TestClient[Litestar], lang: str, said: str
) -> None:
    body = recommend(
        client,
        {
            "workload": {**PRETRAIN_7B, "framework": "mindspeed"},
            "constraints": {"accelerators": ["A100-80GB"]},
        },
        lang,
    )
    assert body["options"] == []
    # the reason first, not the count of offers of other accelerators
    assert said in body["summary"], body["summary"]


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "Megatron-LM needs CUDA and does not run on an Ascend NPU as is"),
        ("zh", "Megatron-LM 依赖 CUDA，不能直接在昇腾 NPU 上运行"),
    ],
)
def test_megatron_on_ascend_is_said_to_run_as_mindspeed(
    client: TestClient[Litestar], lang: str, said: str
) -> None:
    workload = {
        "kind": "pretrain",
        "model": "llama-3-8b",
        "tokens": 15_000_000_000,
        "seq_len": 8192,
        "framework": "megatron",
    }
    asked = {"workload": workload, "constraints": {"accelerators": ["910B"]}}
    body = recommend(client, asked, lang)
    options = body["options"]
    assert options
    for option in options:
        assert _on_ascend(option)
        assert sum(said in w for w in option["warnings"]) == 1, option["warnings"]
    # on NVIDIA GPUs Megatron-LM is itself: no such warning
    gpus = recommend(
        client, {"workload": workload, "constraints": {"accelerators": ["A100-80GB"]}}, lang
    )
    assert gpus["options"]
    assert not any(said in w for o in gpus["options"] for w in o["warnings"])


def test_vit_l_16_is_sized_as_torchvisions_vit_l_16(client: TestClient[Litestar]) -> None:
    workload = {
        "kind": "finetune",
        "model": "vit-l-16",
        "method": "full",
        "tokens": 12_811_670,  # 10 epochs of ImageNet-1k's 1,281,167 training images
        "image_size": 224,
    }
    body = recommend(client, {"workload": workload}, "en")
    assert body["options"]
    response = client.post(
        "/v1/estimate",
        json={"workload": workload, "placement": {"accelerator": "A100-80GB", "count": 1}},
    )
    assert response.status_code == 200, response.text
    estimate = response.json()
    # 3 forward passes of 2 x 61.555 GFLOPs per image (forward and backward), within 1 %
    assert estimate["compute"]["flops"] == pytest.approx(3 * 2 * 61.555e9 * 12_811_670, rel=0.01)
    assert "vit-l-16: 0.304B parameters" in " ".join(estimate["assumptions"])
    # full FT in mixed precision with AdamW: 16 B per parameter of model states at least
    assert estimate["memory"]["per_device_gib"] > 304_326_632 * 16 / 2**30


@pytest.mark.parametrize(
    ("framework", "accelerator", "said"),
    [
        ("mindspeed", "A100-80GB", "MindSpeed runs on Ascend NPUs only"),
        ("megatron", "Ascend-910B3", "Megatron-LM needs CUDA and does not run on an Ascend-910B3"),
    ],
)
def test_an_estimate_says_which_framework_runs_on_the_placements_stack(
    client: TestClient[Litestar], framework: str, accelerator: str, said: str
) -> None:
    response = client.post(
        "/v1/estimate",
        json={
            "workload": {**PRETRAIN_7B, "framework": framework},
            "placement": {"accelerator": accelerator, "count": 8},
        },
    )
    assert response.status_code == 200, response.text
    assumptions = response.json()["assumptions"]
    assert sum(said in a for a in assumptions) == 1, assumptions


def test_an_estimate_on_its_own_stack_says_nothing_of_another(client: TestClient[Litestar]) -> None:
    for framework, accelerator in (("mindspeed", "Ascend-910B3"), ("megatron", "A100-80GB")):
        response = client.post(
            "/v1/estimate",
            json={
                "workload": {**PRETRAIN_7B, "framework": framework},
                "placement": {"accelerator": accelerator, "count": 8},
            },
        )
        assert response.status_code == 200, response.text
        text = " ".join(response.json()["assumptions"])
        assert "does not run on" not in text
        assert "runs on Ascend NPUs only" not in text
