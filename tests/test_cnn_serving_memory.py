"""A served CNN's memory (session 16): serving ResNet-50 or YOLOv8 was sized with the
*training* activation figure "as an upper bound" (every layer's output kept for a
backward pass: 71.6 MiB per 224 px ResNet-50 image in 16-bit), so 256 images per call
needed 17.9 GiB of activations and no 16 GB T4 could serve them. NVIDIA serves exactly that
on one T4, in mixed precision (1,198 images/s) and in FP32 (415 images/s), and on one
16 GB V100 (NVIDIA DeepLearningExamples ``PyTorch/Classification/ConvNets/resnet50v1.5/
README.md`` @291f0d02, "Inference performance: NVIDIA T4" and "NVIDIA DGX-1 (1x V100
16GB)", batch sizes 1 to 256).

A forward without gradients frees each output once the layers reading it ran: its peak is
a few feature maps at once. For torchvision's ResNet-50 it is the downsample branch of
layer1's first Bottleneck (``Bottleneck.forward`` computes it after ``bn3``): the input,
the block's input, the main branch's output and the downsample's convolution and batch
norm outputs, 2,759,680 values, 5.26 MiB per image in 16-bit (the preset's source). A
detector without its own figure takes that per pixel, as its training figure takes
ResNet-50's."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.hooks.registries import default_model_registry
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Inference
from tests.answers import recommend

MIB = 2**20
RESNET50_PEAK_MIB = (3 * 224 * 224 + 64 * 56 * 56 + 3 * 256 * 56 * 56) * 2 / MIB
"""Derived here from the layer shapes, independently of the preset's constant."""


def _acts(model: str, images: int, **fields: object) -> tuple[float, str]:
    rw = resolve_workload(
        Inference(model=model, concurrency=images, **fields),  # type: ignore[arg-type]
        default_model_registry(),
    )
    assert rw.inference is not None
    said = " ".join(rw.assumptions)
    return rw.inference.act_unsharded + rw.inference.act_sharded, said


def test_resnet50_serving_holds_the_forward_peak_not_the_training_figure() -> None:
    acts, said = _acts("resnet-50", 64)
    assert acts / MIB == pytest.approx(64 * RESNET50_PEAK_MIB, rel=1e-9)
    assert "training activation figure" not in said
    assert "peak of one image's forward" in said
    assert "5.26 MiB" in said


def test_fp32_doubles_a_served_cnns_activations() -> None:
    half, _ = _acts("resnet-50", 32)
    full, _ = _acts("resnet-50", 32, precision="fp32")
    assert full == pytest.approx(2 * half, rel=1e-9)


def test_the_forward_peak_scales_with_the_image_area() -> None:
    at_224, _ = _acts("resnet-50", 8)
    at_448, _ = _acts("resnet-50", 8, image_size=448)
    assert at_448 == pytest.approx(4 * at_224, rel=1e-9)


def test_a_detector_without_a_figure_takes_resnet50s_per_pixel() -> None:
    """YOLOv8-m at 640 px: ResNet-50's 5.26 MiB per 224 px image per pixel is 43 MiB per
    image (its training stand-in was 585 MiB)."""
    acts, said = _acts("yolov8-m", 16)
    per_image = RESNET50_PEAK_MIB * (640 / 224) ** 2
    assert acts / MIB == pytest.approx(16 * per_image, rel=1e-9)
    assert per_image == pytest.approx(43.0, abs=0.1)
    assert "No public figure of yolov8-m's forward peak" in said
    assert "training activation figure" not in said


@pytest.mark.parametrize(
    ("accelerator", "precision"),
    [("T4", "fp16"), ("T4", "fp32"), ("V100-16GB", "fp16"), ("V100-16GB", "fp32")],
)
def test_nvidias_256_image_calls_fit_the_16_gb_parts_they_ran_on(
    client: TestClient[Litestar], accelerator: str, precision: str
) -> None:
    body = {
        "workload": {"kind": "inference", "model": "resnet-50", "concurrency": 256,
                     "precision": precision},
        "placement": {"accelerator": accelerator, "count": 1},
    }  # fmt: skip
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 200, response.text
    estimate = response.json()
    assert estimate["placement"]["fits"] is True
    # weights (0.05-0.1 GiB) + 1 GiB of context + 256 images at the peak (1.3 / 2.6 GiB)
    expected = 256 * RESNET50_PEAK_MIB * (2 if precision == "fp32" else 1) / 1024
    assert estimate["memory"]["activations_gib"] == pytest.approx(expected, rel=1e-6)
    assert estimate["memory"]["per_device_gib"] < 4.0


def test_one_t4_serves_256_images_per_call(client: TestClient[Litestar]) -> None:
    """The recommendation NVIDIA's table backs: one T4 per copy, not several."""
    body = {
        "workload": {"kind": "inference", "model": "resnet-50", "concurrency": 256},
        "constraints": {"accelerators": ["T4"]},
        "top_k": 3,
    }
    answer = recommend(client, body, lang="en")
    assert answer["options"]
    for option in answer["options"]:
        assert option["accelerator"]["count"] * option["nodes"] == 1, option
        assert option["per_device_gib"] < 4.0


def _vit_peak_mib(tokens: int, hidden: int, mlp: int, image: int) -> float:
    """Counted here from torchvision's ViT forward (see ``service.sizing.vit``): inside an
    encoder block's MLP while GELU runs, the linear-1 and GELU outputs, the block's input,
    ``x`` and ``ln_2``'s output, and the two sequences the callers hold, with the image."""
    return (tokens * (2 * mlp + 5 * hidden) + 3 * image**2) * 2 / MIB


def test_a_served_vit_holds_its_forwards_peak() -> None:
    acts, said = _acts("vit-b-16", 64)
    assert acts / MIB == pytest.approx(64 * _vit_peak_mib(197, 768, 3072, 224), rel=1e-9)
    assert "4.04 MiB per image" in said
    assert "training activation figure" not in said


def test_a_vits_tokens_follow_the_image_size_and_fp32_doubles() -> None:
    at_384, _ = _acts("vit-l-16", 8, image_size=384)
    assert at_384 / MIB == pytest.approx(8 * _vit_peak_mib(577, 1024, 4096, 384), rel=1e-9)
    full, _ = _acts("vit-l-16", 8, image_size=384, precision="fp32")
    assert full == pytest.approx(2 * at_384, rel=1e-9)
