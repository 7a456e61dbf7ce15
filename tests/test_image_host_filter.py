"""The planner's host filter for image-model training (review leftover R11): a server
with fewer than 8 vCPUs per accelerator cannot decode and augment JPEGs fast enough for
its GPUs, so it is not offered, and an answer left without options says why in its
language; the advice states the image rule instead of the generic 4-8."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

RESNET: dict[str, Any] = {
    "kind": "pretrain", "model": "resnet-50", "tokens": 100_000_000, "image_size": 224,
    "micro_batch_size": 64,
}  # fmt: skip


def test_every_option_has_8_vcpus_per_accelerator(client: TestClient[Litestar]) -> None:
    answer = recommend(client, {"workload": RESNET, "top_k": 20}, "en")
    assert answer["options"]
    for o in answer["options"]:
        per_node = o["vcpus"] / o["nodes"]
        assert per_node >= 8 * o["accelerator"]["count"], o["instance_type"]
    cpu = next(a["text"] for a in answer["advice"] if a["topic"] == "cpu_ratio")
    assert "8–16 vCPUs per accelerator" in cpu


def test_a_language_model_still_gets_4_vcpu_servers(client: TestClient[Litestar]) -> None:
    """The filter is the image pipeline's: a small language-model fine-tune is still
    offered Alibaba's 4-vCPU T4 server (ecs.gn6i-c4g1.xlarge)."""
    lora = {"kind": "finetune", "model": "qwen2.5-0.5b", "method": "lora", "tokens": 10**6}
    body = {"workload": lora, "top_k": 20,
            "constraints": {"providers": ["alibaba"], "accelerators": ["T4"]}}  # fmt: skip
    options = recommend(client, body, "en")["options"]
    assert any(o["vcpus"] / o["nodes"] < 8 * o["accelerator"]["count"] for o in options)


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", "fewer than 8 vCPUs per accelerator"),
        ("zh", "每张加速卡少于 8 个 vCPU"),
    ],
)
def test_a_refused_host_is_explained(client: TestClient[Litestar], lang: str, words: str) -> None:
    """Tencent's P40 servers (GN8) have 6-7 vCPUs per card: none holds a ResNet (in
    fp32: a P40 has no bf16)."""
    body = {"workload": {**RESNET, "precision": "fp32"}, "top_k": 20,
            "constraints": {"providers": ["tencent"], "accelerators": ["P40"]}}  # fmt: skip
    answer = recommend(client, body, lang)
    assert answer["options"] == []
    assert any(words in w for w in answer["warnings"]), answer["warnings"]
