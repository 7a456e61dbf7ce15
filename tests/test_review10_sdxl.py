"""Review 10, S7 (docs/answer-review.md, session 11): a served diffusion model's memory.

SDXL served at concurrency 4 was sized at 44.7 GiB per device (6.5 GiB of weights and
37.3 GiB of *training* activations taken as an upper bound), so an A100-80GB ranked first
and ``/v1/estimate`` said an A10 does not fit. Serving keeps nothing for a backward pass:
the peak is the weights plus the largest live working set of one call, for SDXL the VAE
decoding the whole batch at full resolution in fp32 (:mod:`service.sizing.unet`).

Measurements the model is checked against (the model is not fitted to them):

* Hugging Face, "Exploring simple optimizations for SDXL"
  (https://huggingface.co/blog/simple_sdxl_optimizations; the figures are in its source,
  huggingface/blog simple_sdxl_optimizations.md @11e799d7, and its notebook
  huggingface/notebooks diffusers/exploring_simple optimizations_for_sdxl.ipynb
  @77458f17, which prints ``torch.cuda.max_memory_allocated() / 1024**3``, so GiB):
  ``StableDiffusionXLPipeline``, 4 images per prompt at 1024 px, 25 steps, on an
  A100-40GB: fp32 with the default attention 28.09 GiB, fp16 with the default attention
  21.72 GiB, fp16 with SDPA 21.72 GiB. That SDPA leaves the peak unchanged is what the
  mechanism predicts: the peak is the VAE decode, not the UNet's attention.
* Stable Diffusion 1.5, fp16, one 512 px image, diffusers 0.11.1 on PyTorch 1.10.1 (no
  SDPA), without offloading: 5,101 MiB on a GTX 1080 and 5,668 MiB on a TITAN RTX as
  nvidia-smi shows them (https://github.com/huggingface/diffusers/issues/1934): the whole
  process, so the CUDA context and the allocator's cache are in it, and the pipeline
  also held its safety checker, which the preset does not count.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.resolve import INFER_OVERHEAD_GIB, resolve_workload
from service.sizing.unet import (
    resnet_live_planes,
    serving_working_set,
    unet_working_set,
    vae_decode_working_set,
)
from service.sizing.workload import Inference
from tests.answers import recommend

MODELS = ModelRegistry(builtin_presets())
GIB = 2**30
MEASURED_REL = 0.25
"""Tolerance against a measured peak: the model leaves out cuDNN's convolution workspace
and the allocator's rounding, and counts the skips as held throughout."""

HF_SDXL_FP16_GIB = 21.72
HF_SDXL_FP32_GIB = 28.09
SD15_ISSUE_1934_MIB = 5101


def _unet(model: str) -> Any:
    preset = MODELS.resolve(model)
    assert preset is not None
    assert preset.unet is not None
    return preset, preset.unet


def _allocated_gib(model: str, concurrency: int, precision: str, *, sdpa: bool = True) -> float:
    """What ``torch.cuda.max_memory_allocated`` would show: the weights in the serving
    dtype plus the working set (no context, no overhead)."""
    preset, u = _unet(model)
    weight_bytes = 4 if precision == "fp32" else 2
    size = preset.image_size
    ws = serving_working_set(u, size, concurrency, precision, sdpa=sdpa)
    return (preset.params_b * 1e9 * weight_bytes + ws.peak) / GIB


# --- the mechanism, from the architecture ------------------------------------------------


def test_the_sdxl_vae_decode_peaks_at_its_first_full_resolution_resnet() -> None:
    """diffusers' decoder ends on 128 channels at 1024x1024; its first ResNet there takes
    256 channels (GroupNorm + SiLU: input, normed and activated) = 768 planes, 3 GiB per
    image in fp32."""
    _, u = _unet("sdxl")
    assert resnet_live_planes(256, 128) == 768
    assert vae_decode_working_set(u, 1024) == 768 * 1024 * 1024
    ws = serving_working_set(u, 1024, 4, "fp16")
    assert ws.decode_bytes == 4  # force_upcast: the VAE decodes in fp32 under fp16
    assert ws.vae == pytest.approx(4 * 3 * GIB + 2 * 83_653_863, rel=1e-9)


def test_bf16_decodes_in_bf16_and_fp16_in_fp32() -> None:
    """diffusers upcasts only an fp16 VAE (``self.vae.dtype == torch.float16 and
    force_upcast``): bf16 halves the decode, and SD 1.5's pipeline never upcasts."""
    _, u = _unet("sdxl")
    fp16 = serving_working_set(u, 1024, 4, "fp16")
    bf16 = serving_working_set(u, 1024, 4, "bf16")
    assert bf16.decode_bytes == 2
    assert bf16.vae == pytest.approx((fp16.vae - 2 * 83_653_863) / 2, rel=1e-9)
    _, sd15 = _unet("sd-1.5")
    assert serving_working_set(sd15, 512, 1, "fp16").decode_bytes == 2


def test_the_unet_at_a_cfg_batch_of_8_is_below_the_decode_with_or_without_sdpa() -> None:
    """The UNet runs on 2 x 4 latents of 128 x 128. With SDPA no score matrix is kept
    (about 1 GiB in all); without it the 64 x 64 level's self-attention holds two
    10-head 4096 x 4096 score tensors per latent (baddbmm into an empty tensor, then
    softmax): 5.7 GiB, still below the 12.2 GiB decode, so the peak is the same, as
    measured (21.72 GiB either way)."""
    _, u = _unet("sdxl")
    with_sdpa = serving_working_set(u, 1024, 4, "fp16")
    without = serving_working_set(u, 1024, 4, "fp16", sdpa=False)
    assert with_sdpa.unet / GIB < 1.5
    scores = 2 * 10 * 4096**2
    assert unet_working_set(u, 1024, sdpa=False) > scores
    assert without.unet == pytest.approx(8 * 2 * unet_working_set(u, 1024, sdpa=False))
    assert with_sdpa.unet < without.unet < without.vae
    assert with_sdpa.peak == without.peak == with_sdpa.vae


# --- checked against the measurements ------------------------------------------------


@pytest.mark.parametrize(
    ("precision", "sdpa", "measured"),
    [("fp16", True, HF_SDXL_FP16_GIB), ("fp16", False, HF_SDXL_FP16_GIB),
     ("fp32", False, HF_SDXL_FP32_GIB)],
)  # fmt: skip
def test_sdxl_peak_is_within_25_percent_of_hugging_faces_measurement(
    precision: str, sdpa: bool, measured: float
) -> None:
    """4 images at 1024 px: 18.6 GiB modelled for 21.72 measured in fp16 (-14 %), 24.9
    for 28.09 in fp32 (-11 %)."""
    got = _allocated_gib("sdxl", 4, precision, sdpa=sdpa)
    assert got == pytest.approx(measured, rel=MEASURED_REL), got


def test_the_resolved_sdxl_budget_is_the_modelled_peak() -> None:
    """What the service sizes (weights + activations, before its 1 GiB context) is the
    checked figure, not the 37 GiB training bound."""
    rw = resolve_workload(Inference(model="sdxl", concurrency=4, precision="fp16"), MODELS)
    b = rw.inference
    assert b is not None
    total = (b.weights + b.act_unsharded + b.act_sharded) / GIB
    assert total == pytest.approx(HF_SDXL_FP16_GIB, rel=MEASURED_REL), total
    assert b.act_unsharded / GIB == pytest.approx(12.16, abs=0.05)
    said = " ".join(rw.assumptions)
    assert "training activation figure" not in said
    assert "classifier-free guidance" in said, said
    assert "enable_vae_slicing" in said, said


def test_sd15_serving_stays_below_the_process_total_measured() -> None:
    """SD 1.5 fp16, one 512 px image, no SDPA: 2.0 GiB of weights and 1.1 GiB of
    attention scores at the 64 x 64 level (8 heads, a UNet batch of 2). With the
    service's 1 GiB context that is 4.05 GiB; nvidia-smi showed 5,101 MiB (and 5,668 on
    another card) for the whole process, safety checker and allocator cache included:
    the model must stay below that and within 30 % of it."""
    got_gib = _allocated_gib("sd-1.5", 1, "fp16", sdpa=False) + INFER_OVERHEAD_GIB
    measured_gib = SD15_ISSUE_1934_MIB / 1024
    assert 0.7 * measured_gib <= got_gib <= measured_gib, got_gib
    # with SDPA (what the service assumes) the decode sets the peak: 0.38 GiB over 2.0
    assert _allocated_gib("sd-1.5", 1, "fp16") == pytest.approx(2.36, abs=0.02)


def test_the_fp16_resolution_follows_the_job_length() -> None:
    """A bf16 SDXL job carries its fp16 resolution (for devices without BF16); a copy of
    the job at another length carries one at that length too."""
    rw = resolve_workload(Inference(model="sdxl", concurrency=4), MODELS)
    assert rw.no_bf16 is not None
    assert rw.no_bf16.workload.precision == "fp16"
    assert rw.no_bf16.inference is not None
    assert rw.inference is not None
    assert rw.no_bf16.inference.act_unsharded > 1.9 * rw.inference.act_unsharded
    longer = rw.with_length(Inference(model="sdxl", concurrency=4, output_tokens=1e6))
    assert longer.no_bf16 is not None
    assert longer.no_bf16.tokens == longer.tokens == 1e6
    assert longer.no_bf16.workload.precision == "fp16"
    fp16 = resolve_workload(Inference(model="sdxl", concurrency=4, precision="fp16"), MODELS)
    assert fp16.no_bf16 is None
    sd15 = resolve_workload(Inference(model="sd-1.5", concurrency=4), MODELS)
    assert sd15.no_bf16 is None  # its VAE is not upcast: fp16 costs the same


# --- through the real app ------------------------------------------------------------


def _estimate(client: TestClient[Litestar], workload: dict[str, Any], acc: str) -> Any:
    response = client.post(
        "/v1/estimate", json={"workload": workload, "placement": {"accelerator": acc, "count": 1}}
    )
    assert response.status_code == 200, response.text
    return response.json()


SDXL4 = {"kind": "inference", "model": "sdxl", "concurrency": 4}


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("acc", ["A10", "L20"])
def test_one_a10_or_l20_serves_four_sdxl_images(
    client: TestClient[Litestar], acc: str, precision: str
) -> None:
    """19.6 GiB per device in fp16 (6.5 weights + 12.2 decode + 1 context), 13.5 in bf16:
    was 44.7 GiB and "does not fit" on the A10."""
    body = _estimate(client, {**SDXL4, "precision": precision}, acc)
    assert body["placement"]["fits"] is True, body["assumptions"]
    expected = 19.62 if precision == "fp16" else 13.46
    assert body["memory"]["per_device_gib"] == pytest.approx(expected, abs=0.05)
    assert body["memory"]["per_device_gib"] < 24 * 0.9


def test_a_t4_is_sized_in_fp16_for_a_bf16_sdxl_request(client: TestClient[Litestar]) -> None:
    """A T4 has no BF16, so the pipeline runs in fp16 there and the VAE is upcast: the
    fp16 figure (19.6 GiB), which a 16 GiB card does not hold, not the bf16 one (13.5
    GiB, which ranked one T4 first). Two T4s, two images each, still serve the batch
    (asked for T4s: since images per second are estimated, session 13 ``diff13``, a
    T4's price per image keeps it out of the ten cheapest)."""
    body = _estimate(client, SDXL4, "T4")
    assert body["memory"]["per_device_gib"] == pytest.approx(19.62, abs=0.05)
    assert body["placement"]["fits"] is False
    assert any("T4 has no BF16" in a and "fp32" in a for a in body["assumptions"])
    answer = recommend(
        client,
        {"workload": SDXL4, "top_k": 10, "constraints": {"accelerators": ["T4"]}},
        "en",
    )
    t4 = [o for o in answer["options"] if o["accelerator"]["name"] == "T4"]
    assert t4, "two T4s, two images each, are an option"
    assert all(o["accelerator"]["count"] >= 2 for o in t4), [o["accelerator"] for o in t4]
    for option in t4:  # its fallback is said to cost memory, not "same memory"
        warned = " ".join(option["warnings"])
        assert "decodes the VAE in FP32" in warned, warned
        assert "same memory" not in warned, warned


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sdxl_at_concurrency_4_is_served_by_one_24_gib_card(
    client: TestClient[Litestar], lang: str
) -> None:
    """The cheapest option is one A10 (or another single card of 24-48 GiB), not an
    A100-80GB at ¥22.84/h nor four A10s."""
    answer = recommend(client, {"workload": {**SDXL4, "precision": "fp16"}, "top_k": 5}, lang)
    first = answer["options"][0]
    assert first["accelerator"]["count"] == 1
    assert first["accelerator"]["memory_gib"] <= 48, first["accelerator"]
    assert any(
        o["accelerator"]["name"] == "A10" and o["accelerator"]["count"] == 1
        for o in answer["options"]
    )


def test_sd15_serving_at_concurrency_8_fits_one_a10(client: TestClient[Litestar]) -> None:
    """8 images at 512 px: 2.0 GiB weights + 3.0 GiB decode (8 x 768 planes of 512 x 512
    in fp16) + 1 GiB context = 6.0 GiB (the training bound gave 21.6 GiB)."""
    body = _estimate(client, {"kind": "inference", "model": "sd-1.5", "concurrency": 8}, "A10")
    assert body["placement"]["fits"] is True
    assert body["memory"]["per_device_gib"] == pytest.approx(5.99, abs=0.05)
