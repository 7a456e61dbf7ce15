"""Model-FLOPs-utilization priors: the fraction of dense peak a real job sustains.

Time = FLOPs / (devices · dense peak · MFU), so MFU is the single most consequential prior
of a time or cost estimate. The values are end-to-end (whole-run) figures implied by public
GPU-hour reports, not per-stage peaks (anchors-estimation.md §1.7):

- Ampere (A100/A800 class): LLaMA-7B 43.4 %, Llama-2 7B/13B/70B 39.1/37.7/42.8 % of 312
  TFLOPS over 1-2 T tokens (Touvron et al. 2023a/b GPU-hours, 6ND accounting) -> 0.40.
- Hopper (H100/H800): Llama 3 405B per stage 38-43 % (paper Table 4), whole run about
  34.5 %; the anchors advise 0.30-0.40 end to end -> 0.38 from 100B, 0.35 below.
- Volta: ZeRO-100B at 38 TFLOPS per V100 (about 30 %) -> 0.30.
- No public anchor for Ada/Turing/Pascal PCIe parts, Ascend or image models: conservative
  priors, stated as such in the response.

Small models cannot fill large tensor cores (short matmuls, launch overhead): below 1B
parameters the prior is scaled by 0.75.
"""

from __future__ import annotations

from service.providers import AcceleratorSpec

_SMALL_MODEL_B = 1.0
_SMALL_MODEL_FACTOR = 0.75


def generation(accelerator: AcceleratorSpec) -> str:
    """Normalized architecture generation (falls back to the name for unlabelled specs)."""
    arch = (accelerator.architecture or "").lower()
    name = accelerator.name.lower()
    if accelerator.stack == "cann" or "ascend" in name or "davinci" in arch:
        return "ascend"
    for gen in ("hopper", "ampere", "ada", "volta", "turing", "pascal", "blackwell"):
        if gen in arch:
            return gen
    if name.startswith(("h100", "h800", "h200", "h20")):
        return "hopper"
    if name.startswith(("a100", "a800", "a30", "a10")):
        return "ampere"
    if name.startswith(("l4", "l20", "l40", "rtx-40")):
        return "ada"
    if name.startswith("v100"):
        return "volta"
    if name.startswith("t4"):
        return "turing"
    if name.startswith(("p4", "p40", "p100")):
        return "pascal"
    return "unknown"


_PRIORS: dict[str, tuple[float, str]] = {
    "ampere": (0.40, "Llama-1/2 pre-training on A100 implied 38-43 % MFU (Touvron et al. 2023)"),
    "hopper": (0.35, "whole-run MFU on H100-class parts is 0.30-0.40 (Llama 3 report)"),
    "blackwell": (0.35, "no public anchor; Hopper prior reused"),
    "volta": (0.30, "ZeRO-100B reached about 30 % of V100 peak (Rajbhandari et al. 2020)"),
    "ada": (0.30, "no public anchor for PCIe Ada parts (L4/L20/L40S); conservative prior"),
    "turing": (0.25, "no public anchor for T4; conservative prior"),
    "pascal": (0.25, "no public anchor for Pascal parts; conservative prior"),
    "ascend": (0.30, "no public MFU for Ascend NPUs (anchors gap 8); placeholder prior"),
    "unknown": (0.30, "accelerator generation unknown; conservative prior"),
}

IMAGE_MODEL_MFU = 0.25
"""Convolution/diffusion training rarely reaches LLM utilization; no public anchor in the
reference set, so a conservative prior."""


def mfu_prior(
    params_b: float, accelerator: AcceleratorSpec, *, image_model: bool = False
) -> tuple[float, str]:
    """(MFU, one-sentence basis) for a training job of ``params_b`` on ``accelerator``."""
    if image_model:
        return IMAGE_MODEL_MFU, "image-model training prior (no public anchor; conservative)"
    gen = generation(accelerator)
    value, basis = _PRIORS[gen]
    if gen == "hopper" and params_b >= 100:
        value, basis = 0.38, "Llama 3 405B sustained 38-43 % per stage on H100 (paper Table 4)"
    if params_b < _SMALL_MODEL_B:
        value *= _SMALL_MODEL_FACTOR
        basis += "; x0.75 below 1B parameters (small matmuls underfill tensor cores)"
    return value, basis
