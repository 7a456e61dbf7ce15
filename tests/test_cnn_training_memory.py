"""ResNet-50's training activations (session 16): the figure was torchsummary's 286.56 MB
"forward/backward pass size" halved twice (71.6 MiB per 224 px image in 16-bit), which
counts every module's output, the in-place ReLUs and each Bottleneck's output again. At
NVIDIA's own per-GPU batches that does not fit the parts NVIDIA trains on: 256 images in
mixed precision on a 16 GB V100 or T4 needed 17.9 GiB of activations, FP32's 112 on a
16 GB V100 15.7 GiB.

What autograd keeps is each convolution's and batch norm's input, the ReLUs' outputs (in
place) and the max pool's indices: 41.7 MiB per image (``service.sizing.resnet``). The
recipe's batches (NVIDIA DeepLearningExamples ``PyTorch/Classification/ConvNets/
configs.yml`` @097c7ff9, ``resnet50``: DGX1V (V100 16GB) AMP 256 and FP32 112, T4 AMP 256
and FP32 128, DGX2V (V100 32GB) FP32 256, DGXA100 AMP 256) are held out: no constant comes
from them. They fit, and the one NVIDIA does not run on a 16 GB part (FP32 at 256, the
32 GB V100's batch) does not."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.hooks.registries import default_model_registry
from service.sizing.resnet import saved_for_backward
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Finetune

RECIPES = [
    # (accelerator, precision, images per GPU) NVIDIA trains ResNet-50 at
    ("V100-16GB", "bf16", 256),  # AMP (FP16 on a V100)
    ("V100-16GB", "fp32", 112),
    ("T4", "bf16", 256),
    ("T4", "fp32", 128),
    ("V100-32GB", "fp32", 256),
    ("A100-80GB", "bf16", 256),
]


def _estimate(
    client: TestClient[Litestar], accelerator: str, precision: str, batch: int
) -> dict[str, Any]:
    body = {
        "workload": {"kind": "finetune", "model": "resnet-50", "method": "full",
                     "micro_batch_size": batch, "precision": precision, "tokens": 1_281_167},
        "placement": {"accelerator": accelerator, "count": 1},
    }  # fmt: skip
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 200, response.text
    estimate: dict[str, Any] = response.json()
    return estimate


@pytest.mark.parametrize(("accelerator", "precision", "batch"), RECIPES)
def test_nvidias_per_gpu_batches_fit_the_parts_it_trains_on(
    client: TestClient[Litestar], accelerator: str, precision: str, batch: int
) -> None:
    estimate = _estimate(client, accelerator, precision, batch)
    assert estimate["placement"]["fits"] is True, estimate["memory"]


def test_fp32_at_the_32_gb_batch_does_not_fit_a_16_gb_v100(client: TestClient[Litestar]) -> None:
    estimate = _estimate(client, "V100-16GB", "fp32", 256)
    assert estimate["placement"]["fits"] is False


def test_the_figure_is_what_autograd_saves_not_every_modules_output() -> None:
    rw = resolve_workload(
        Finetune(model="resnet-50", method="full", micro_batch_size=32), default_model_registry()
    )
    assert rw.training is not None
    per_image_mib = (rw.training.act_unsharded + rw.training.act_sharded) / 32 / 2**20
    assert per_image_mib == pytest.approx(41.73, abs=0.01)
    said = " ".join(rw.assumptions)
    assert "41.7 MiB" in said
    assert "autograd saves" in said


def test_the_count_follows_the_layer_shapes() -> None:
    """A 448 px image has 4x the values of every feature map (the 3x3 stem pool keeps the
    ratio exact at multiples of 32)."""
    assert saved_for_backward(448) == 4 * saved_for_backward(224)
