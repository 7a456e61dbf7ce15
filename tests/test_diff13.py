"""Session 13, branch ``diff13`` (docs/answer-review.md): how many images per second a
served diffusion pipeline produces, by mechanism (:mod:`service.sizing.diffusion`).

Before: serving SDXL or SD 1.5 said "how many images per second it serves is not
estimated" on every device, and options ranked by the hourly price alone. Now the work
per image is counted from the configs (50 UNet steps over the latent twice for
classifier-free guidance, the VAE decode, the text encoders) and timed at a share of the
device's dense 16-bit peak, with a per-step launch floor.

Calibration (one measurement each, not checked here beyond reproducing the constant):

* utilization 0.40: SDXL, bf16 + SDPA, one 1024 px image, 30 steps, 80 GB A100: 3.315 s
  (https://huggingface.co/docs/diffusers/tutorials/fast_diffusion; data
  https://huggingface.co/datasets/sayakpaul/sample-datasets/blob/8285f7668326f13af8d213cd8087218cd7f97483/collated_results_sdxl.csv);
* launch floor 1.22 ms per UNet block: SD 1.5, fp16, batch 1, A100, 21.66 it/s (diffusers
  docs/source/en/optimization/torch2.0.md @2c529b75);
* Turing utilization 0.177: the same table's T4 batch 4 row, 1.79 it/s.

Held out (``holdout``-free: these run in the targeted set):

* Stability AI / NVIDIA, https://huggingface.co/stabilityai/stable-diffusion-xl-1.0-tensorrt,
  "Timings for 30 steps at 1024x1024", column "Baseline (non-optimized)": A10 9,399 ms,
  A100 3,704 ms, H100 2,496 ms. The card's TensorRT column is the next one (8,160 /
  2,742 / 1,471 ms); the baseline is the unoptimized PyTorch pipeline, so it is a direct
  check of this model.
* Hugging Face, https://huggingface.co/blog/simple_sdxl_optimizations: SDXL fp16 + SDPA,
  4 images per call, 25 steps (its notebook), A100-40GB: 11.4 s.
* diffusers' torch2.0 table (SD 1.5 UNet iterations per second, no VAE): A100 at batch
  4 and 16, V100 at 1, 4 and 16, T4 at 1 and 16.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.diffusion import (
    DIFFUSION_UTILIZATION,
    TURING_UTILIZATION,
    UNET_BLOCK_LAUNCH_S,
    call_seconds,
    images_per_second,
    pipeline_work,
    tf32_rate,
    unet_blocks,
)
from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.unet import UNetConfig, vae_decoder_flops
from tests.answers import builtin_spec, recommend

MODELS = ModelRegistry(builtin_presets())
HELD_OUT_REL = 0.35
"""Tolerance of a held-out measurement: model rate / measured rate within 1 ± 0.35."""


def _unet(model: str) -> UNetConfig:
    preset = MODELS.resolve(model)
    assert preset is not None
    assert preset.unet is not None
    return preset.unet


def _seconds(model: str, size: int, precision: str, steps: int, images: int, device: str) -> float:
    spec = builtin_spec(device)
    peak = spec.dense_tflops_16bit
    assert peak
    work = pipeline_work(_unet(model), size, precision, steps)
    decode = tf32_rate(peak, spec.supports_bf16, spec.fp32_tflops) if work.upcast_decode else peak
    assert decode
    return call_seconds(work, images, peak, decode)


def test_vae_decoder_flops_match_nvidias_count_for_sd15() -> None:
    # NVIDIA's "Stable Diffusion 推理加速技巧解析" slides: VAE decoder 2.53933e12 FLOPs at
    # 512 px (https://www.sgpjbg.com/bgdown/155314.html)
    assert vae_decoder_flops(_unet("sd-1.5"), 512) == pytest.approx(2.539e12, rel=0.03)


def test_block_counts() -> None:
    assert unet_blocks(_unet("sd-1.5")) == 22 + 16
    assert unet_blocks(_unet("sdxl")) == 17 + 70


def test_calibration_reproduces_the_constants() -> None:
    work = pipeline_work(_unet("sdxl"), 1024, "bf16", 30)
    assert work.per_image / (312e12 * 3.315) == pytest.approx(DIFFUSION_UTILIZATION, rel=0.01)
    assert (1 / 21.66) / unet_blocks(_unet("sd-1.5")) == pytest.approx(
        UNET_BLOCK_LAUNCH_S, rel=0.01
    )
    sd15 = pipeline_work(_unet("sd-1.5"), 512, "fp16", 1)
    assert 4 * sd15.unet_per_step * 1.79 / 65e12 == pytest.approx(TURING_UTILIZATION, rel=0.01)


@pytest.mark.parametrize(
    ("device", "measured_s"),
    [("A10", 9.399), ("A100-80GB", 3.704), ("H100-80GB", 2.496)],
)
def test_sdxl_30_steps_against_the_pytorch_baseline_of_stabilitys_card(
    device: str, measured_s: float
) -> None:
    modelled = _seconds("sdxl", 1024, "fp16", 30, 1, device)
    # A10 +10 %, A100 +8 %, H100 -23 % (its steps are launch-bound)
    assert measured_s / modelled == pytest.approx(1.0, abs=HELD_OUT_REL)


def test_sdxl_4_images_against_hugging_faces_blog() -> None:
    modelled = _seconds("sdxl", 1024, "fp16", 25, 4, "A100-40GB")
    assert 11.4 / modelled == pytest.approx(1.0, abs=HELD_OUT_REL)  # -1 %


def _sd15_its(images: int, device: str) -> float:
    """Denoising iterations per second of SD 1.5 at ``images`` per call (UNet only, as the
    table's progress bar counts)."""
    work = pipeline_work(_unet("sd-1.5"), 512, "fp16", 1)
    spec = builtin_spec(device)
    peak = spec.dense_tflops_16bit
    assert peak
    util = TURING_UTILIZATION if device == "T4" else DIFFUSION_UTILIZATION
    step = max(
        images * work.unet_per_step / (peak * 1e12 * util), work.blocks * UNET_BLOCK_LAUNCH_S
    )
    return 1 / step


@pytest.mark.parametrize(
    ("device", "images", "measured"),
    [
        ("V100-16GB", 1, 18.99),  # +14 %
        ("V100-16GB", 4, 5.96),  # +31 %
        ("V100-16GB", 16, 1.66),  # +17 %
        ("T4", 1, 6.9),  # +4 %
        ("T4", 16, 1 / 2.34),  # +5 % (the table gives seconds per iteration here)
    ],
)
def test_sd15_held_out_rows_of_the_torch2_table(device: str, images: int, measured: float) -> None:
    assert _sd15_its(images, device) / measured == pytest.approx(1.0, abs=HELD_OUT_REL)


@pytest.mark.parametrize(("images", "measured"), [(4, 11.6), (16, 3.04)])
def test_sd15_batched_on_an_a100_is_optimistic_by_at_most_1_7x(
    images: int, measured: float
) -> None:
    """A known limit: SD 1.5's small latents (64 x 64) and 40-wide heads reach only 24-25 %
    of an A100 at a full batch in that table (PyTorch 2.0, 2023), against SDXL's 40 % in
    the calibration: the model is 1.60-1.67x optimistic there."""
    ratio = _sd15_its(images, "A100-80GB") / measured
    assert 1.0 < ratio < 1.75


def test_rate_grows_with_batch_until_compute_bound_and_splits_over_devices() -> None:
    work = pipeline_work(_unet("sd-1.5"), 512, "fp16")
    one = images_per_second(work, 1, 1, 312.0, 312.0)
    four = images_per_second(work, 4, 1, 312.0, 312.0)
    assert 1.5 < four / one < 4.0  # the launch floor is amortized, then compute binds
    # two devices, one image: one pipeline works, the other waits
    assert images_per_second(work, 1, 2, 312.0, 312.0) == pytest.approx(one)
    assert images_per_second(work, 2, 2, 312.0, 312.0) == pytest.approx(2 * one)
    assert images_per_second(work, 1, 1, None, None) == 0.0


def _answer(client: TestClient[Litestar], model: str, device: str, lang: str) -> Any:
    return recommend(
        client,
        {
            "workload": {"kind": "inference", "model": model, "concurrency": 1},
            "constraints": {"accelerators": [device]},
        },
        lang=lang,
    )


def test_sdxl_on_an_a10_states_its_images_per_second_and_price(
    client: TestClient[Litestar],
) -> None:
    answer = _answer(client, "sdxl", "A10", "en")
    assert "not estimated" not in answer["summary"]
    top = answer["options"][0]
    rate = top["throughput_tokens_per_s"]
    # 50 steps at 40 % of 125 TFLOPS: 13.7 s an image (the card's 30 steps took 9.4 s)
    assert rate == pytest.approx(1 / 13.7, rel=0.05)
    hourly = top["price_per_hour"]
    assert top["price_per_million_tokens"] == pytest.approx(hourly / (rate * 3600) * 1e6, rel=0.02)
    assert any("images per second (one every 14 s)" in r for r in top["reasons"])
    assert "0.073 images/s (one every 14 s)" in answer["summary"]
    notes = " ".join(answer["estimate"]["assumptions"])
    assert "50 denoising steps" in notes


def test_zh_words(client: TestClient[Litestar]) -> None:
    answer = _answer(client, "sd-1.5", "A100", "zh")
    assert "无法估计" not in answer["summary"]
    assert "张图像（约每 2.3 秒一张）" in answer["summary"]


def test_a_device_without_a_16bit_rate_stays_unknown(client: TestClient[Litestar]) -> None:
    answer = _answer(client, "sdxl", "P40", "en")
    assert "not estimated" in answer["summary"]
    assert answer["options"][0]["throughput_tokens_per_s"] is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_balanced_and_target_reasons_speak_of_images_not_tokens(
    client: TestClient[Litestar], lang: str
) -> None:
    for extra in ({"objective": "balanced"}, {}):
        workload: dict[str, Any] = {"kind": "inference", "model": "sdxl"}
        if extra:
            workload["concurrency"] = 2
        else:
            workload["target_tokens_per_s"] = 2  # two images a second
        answer = recommend(client, {"workload": workload, **extra}, lang=lang)
        said = " ".join(r for o in answer["options"] for r in o["reasons"])
        assert "tokens" not in said, said
        assert ("图像" if lang == "zh" else "images") in said


def test_an_ascend_rate_is_said_to_be_unverified(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/v1/estimate",
        json={
            "workload": {"kind": "inference", "model": "sdxl"},
            "placement": {"accelerator": "Ascend-910B3", "count": 1},
        },
    )
    assert response.status_code == 200, response.text
    notes = " ".join(response.json()["assumptions"])
    assert "unverified" in notes
