"""How many images per second a served text-to-image pipeline (diffusers' Stable
Diffusion pipelines) produces, by mechanism.

One pipeline call of ``images`` images (diffusers: ``num_images_per_prompt``, or a list of
prompts) runs:

- the text encoder(s) over the prompt and, with classifier-free guidance, over the
  negative (empty) prompt: two forwards of the 77-token prompt per image;
- ``steps`` denoising steps, each one UNet forward over ``2 x images`` latents
  (``torch.cat([latents] * 2)`` when ``guidance_scale > 1``; the defaults are 7.5 and
  5.0, so guidance is on);
- the VAE decoder once over every image at full resolution (in fp32 for a
  ``force_upcast`` VAE in an fp16 pipeline, SDXL's).

Defaults (diffusers' ``__call__`` signatures): ``num_inference_steps=50`` and
``guidance_scale=7.5`` for ``StableDiffusionPipeline``
(src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion.py @003c4c3e),
``num_inference_steps=50`` and ``guidance_scale=5.0`` for ``StableDiffusionXLPipeline``
(src/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py @0049e443),
https://github.com/huggingface/diffusers.

Time of a call = steps x max(the UNet step's FLOPs / (peak x utilization), the step's
launch floor) + (VAE decode + text encoders) / (their peak x utilization). The FLOPs are
counted from the configs (:mod:`service.sizing.unet`); the two timing constants are each
taken from one published measurement of eager PyTorch (diffusers with SDPA, no
``torch.compile``, no TensorRT) and checked against others held out
(``tests/test_diff13.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.sizing.unet import (
    TEXT_TOKENS,
    UNetConfig,
    attention_blocks,
    unet_forward_flops,
    vae_decoder_flops,
)

DEFAULT_STEPS = 50
"""``num_inference_steps`` of both pipelines' ``__call__`` (module docstring)."""

CALIBRATION = (
    "SDXL base, StableDiffusionXLPipeline in bf16 with SDPA, one 1024 px image, 30 steps, "
    "on an 80 GB A100: 3.315 s (Hugging Face, 'Accelerate inference of text-to-image "
    "diffusion models', https://huggingface.co/docs/diffusers/tutorials/fast_diffusion; "
    "the figures are https://huggingface.co/datasets/sayakpaul/sample-datasets/blob/"
    "8285f7668326f13af8d213cd8087218cd7f97483/collated_results_sdxl.csv, row bf16 True, "
    "sdpa True, no compile)"
)
DIFFUSION_UTILIZATION = 0.40
"""Share of the dense 16-bit peak a PyTorch diffusers pipeline sustains once its UNet
steps are compute-bound: :data:`CALIBRATION`'s work (30 x 2 x 6.76 TFLOPs of UNet, 10.5
of VAE decode, 0.25 of text encoders) over 3.315 s on 312 TFLOPS is 0.403. That run is
compute-bound (a step of 13.5 TFLOPs takes 108 ms at this share, the launch floor of
SDXL's UNet 106 ms), so the share is the arithmetic's, not the launches'."""

FLOOR_CALIBRATION = (
    "Stable Diffusion 1.5, StableDiffusionPipeline in fp16, PyTorch 2.0 SDPA, batch 1, "
    "512 px, on an A100: 21.66 denoising iterations per second (diffusers "
    "docs/source/en/optimization/torch2.0.md @2c529b75, table 'A100 (batch size: 1)', "
    "SD - txt2img, torch 2.0 - no compile; https://huggingface.co/docs/diffusers/"
    "optimization/torch2.0)"
)
UNET_BLOCK_LAUNCH_S = 1.22e-3
"""Seconds each ResNet or transformer block of the UNet takes to launch its kernels in an
eager PyTorch step however small the batch: :data:`FLOOR_CALIBRATION`'s step (1 / 21.66
= 46.2 ms, where its arithmetic at :data:`DIFFUSION_UTILIZATION` is 12.9 ms and four
images per call run 2.1 times the images per second, so the step is bound by its
launches) over SD 1.5's 38 blocks (22 ResNets, 16 transformer blocks): 1.215 ms. SDXL's
UNet has 87 (17 ResNets, 70 transformer blocks): a 106 ms floor, which is what holds an
H100 back (held out: 2,496 ms for 30 steps, 83 ms a step). The floor is the host's: a
faster CPU launches faster (SD 1.5 on an RTX 4090 desktop stepped in 24.7 ms)."""


TURING_UTILIZATION = 0.177
"""The share on a T4 (Turing), whose 70 W board cannot hold its 65 TFLOPS peak: diffusers'
SD 1.5 table 'T4 (batch size: 4)' (docs/source/en/optimization/torch2.0.md @2c529b75,
SD - txt2img, torch 2.0 - no compile) steps at 1.79 per second, 4 x 2 x 0.80 TFLOPs in
0.559 s = 11.5 TFLOPS, 17.7 % of 65; the same table's batch 1 and 16 rows are held out.
At :data:`DIFFUSION_UTILIZATION` a T4 would be timed 2.3 times too fast."""


def utilization_for(generation: str) -> float:
    """:data:`TURING_UTILIZATION` on Turing, else :data:`DIFFUSION_UTILIZATION`."""
    return TURING_UTILIZATION if generation == "turing" else DIFFUSION_UTILIZATION


def tf32_rate(peak_16bit: float, supports_bf16: bool, fp32_tflops: float | None) -> float | None:
    """TFLOPS of an fp32 convolution: on parts with TF32 tensor cores (Ampere and later,
    the parts with BF16) half the dense 16-bit rate (A100: 156 TF32 against 312 FP16,
    NVIDIA A100 datasheet), which PyTorch's cuDNN convolutions use by default
    (``torch.backends.cudnn.allow_tf32`` is True,
    https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices);
    elsewhere the fp32 rate."""
    if supports_bf16:
        return peak_16bit / 2
    return fp32_tflops


def unet_blocks(u: UNetConfig) -> int:
    """ResNet blocks (``layers_per_block`` per down level, 2 in the mid block,
    ``layers_per_block + 1`` per up level) plus transformer blocks of one UNet forward."""
    levels = len(u.block_out_channels)
    resnets = u.layers_per_block * levels + 2 + (u.layers_per_block + 1) * levels
    return resnets + sum(n for _, n in attention_blocks(u))


@dataclass(frozen=True, slots=True)
class DiffusionWork:
    """The FLOPs of one image of a pipeline call, by phase."""

    steps: int
    unet_per_step: float
    """One image's share of a denoising step: the UNet forward twice (guidance)."""
    vae_decode: float
    text: float
    blocks: int
    upcast_decode: bool
    """The VAE decodes in fp32 (an fp16 pipeline of a ``force_upcast`` VAE)."""

    @property
    def per_image(self) -> float:
        return self.steps * self.unet_per_step + self.vae_decode + self.text


def pipeline_work(
    u: UNetConfig, image_size: int, precision: str, steps: int = DEFAULT_STEPS
) -> DiffusionWork:
    """The work per image of a text-to-image call at ``image_size`` in ``precision``
    (classifier-free guidance on, as the pipelines' defaults have it)."""
    return DiffusionWork(
        steps=steps,
        unet_per_step=2.0 * unet_forward_flops(u, image_size),
        vae_decode=vae_decoder_flops(u, image_size),
        text=2 * 2.0 * u.text_encoder_params * TEXT_TOKENS,
        blocks=unet_blocks(u),
        upcast_decode=u.vae_force_upcast and precision not in ("bf16", "fp32"),
    )


def call_seconds(
    work: DiffusionWork,
    images: int,
    peak_tflops: float,
    decode_tflops: float,
    utilization: float = DIFFUSION_UTILIZATION,
) -> float:
    """Seconds of one call of ``images`` images on one device: each step the larger of
    its arithmetic and its blocks' launches, then the decode and the text encoders."""
    rate = peak_tflops * 1e12 * utilization
    step = max(images * work.unet_per_step / rate, work.blocks * UNET_BLOCK_LAUNCH_S)
    rest = images * (work.vae_decode / (decode_tflops * 1e12 * utilization) + work.text / rate)
    return work.steps * step + rest


def images_per_second(
    work: DiffusionWork,
    images: int,
    devices: int,
    peak_tflops: float | None,
    decode_tflops: float | None,
    utilization: float = DIFFUSION_UTILIZATION,
) -> float:
    """Images per second of ``devices`` serving ``images`` at once, each device its own
    pipeline with an even share of them (a pipeline does not split over devices); 0.0
    without the rates."""
    if not peak_tflops or not decode_tflops or images < 1 or devices < 1:
        return 0.0
    share = math.ceil(images / devices)
    return images / call_seconds(work, share, peak_tflops, decode_tflops, utilization)
