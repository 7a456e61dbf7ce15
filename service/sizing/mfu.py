"""Utilization priors: the fraction of dense peak a training job sustains.

Time = FLOPs / (devices · dense peak · utilization). Two different questions are asked of
it, and they have different answers (issue 13), so there are two tables:

``steady`` — the steady-state rate of an optimized training loop (a benchmark, a
tokens/s figure from a log). The prior is a *hardware* utilization: it divides the FLOPs
the hardware really executes (recompute included, see
:func:`service.sizing.resolve.training_flops_per_token`). Anchors, all bf16, models of
1-70B at 2k-8k sequence (model FLOPs incl. attention, MosaicML convention):

- Ampere: MosaicML llm-foundry ``scripts/train/benchmarking/README.md`` @061f2c7, A100-80GB
  table: 1B-13B at 2k without checkpointing MFU 0.60-0.64; with checkpointing HFU
  0.67-0.77 -> 0.62.
- Hopper: the same file's H100-80GB BF16 table: 1B-13B at 2k without checkpointing MFU
  0.40-0.46, with checkpointing HFU 0.48-0.59 -> 0.45. (torchtitan's own Llama 3.1 8B
  runs, docs/performance.md, reach about the same.)
- Ada, Volta, Turing, Ascend: no anchor of the same kind; their run prior x 1.35, between
  Hopper's steady/run ratio (1.29) and Ampere's (1.55).

``run`` — the wall clock of a whole published run (GPU-hours over tokens), including
restarts, evaluation and checkpoints, in model FLOPs (6·N + attention, Megatron/verl
convention):

- Ampere: the median of six published A100 runs timed by the wall clock (engine-implied
  MFU in brackets, :data:`AMPERE_RUN_ANCHORS`): OPT-175B [0.21], BLOOM-176B [0.33],
  MPT-7B [0.38], Llama 2 13B/7B/70B [0.43/0.45/0.46] -> 0.40. The LLaMA-1 rows of the
  same kind of table are *not* whole runs: the paper derives them from a steady rate
  ("our code processes around 380 tokens/sec/GPU on 2048 A100 GPU ... takes approximately
  21 days", §2.4; 1.4T / 380 / 3600 = 1,023,392 against Table 15's 1,022,362 GPU-hours),
  so they anchor nothing here (the earlier 0.45 leaned on them).
- Hopper: Llama 3 405B ran 38-43 % per stage (paper Table 4) and about 0.35-0.4 end to end
  -> 0.38; below 100B no published whole run, so 0.35.
- Volta: ZeRO-100B at 38 TFLOPS per V100 (about 30 %) -> 0.30.
- No anchor for Ada/Turing/Pascal PCIe parts or Ascend whole runs: conservative priors.

Framework speed factors (:mod:`service.sizing.profiles`) scale the steady prior (HF
Trainer's unfused kernels and padded batches run slower than fused trainers); small
models cannot fill large tensor cores (launch overhead, short matmuls), so below 1B
parameters the prior is scaled down.
"""

from __future__ import annotations

import functools

from service.catalog.models import AcceleratorSpec
from service.sizing.profiles import framework_profile

_SMALL_MODEL_B = 1.0
_SMALL_MODEL_FACTOR = 0.75


def generation(accelerator: AcceleratorSpec) -> str:
    """Normalized architecture generation (falls back to the name for unlabelled specs)."""
    return _generation(accelerator.stack, accelerator.name, accelerator.architecture)


@functools.lru_cache(maxsize=1024)
def _generation(stack: str | None, name: str, architecture: str | None) -> str:
    """:func:`generation` of the spec fields it reads (a planner sizes the same few
    accelerators on every request: the string tests run once per spec)."""
    arch = (architecture or "").lower()
    name = name.lower()
    if stack == "cann" or "ascend" in name or "davinci" in arch:
        return "ascend"
    for gen in ("hopper", "ampere", "ada", "volta", "turing", "pascal", "blackwell"):
        if gen in arch:
            return gen
    if name.startswith(("h100", "h800", "h200", "h20")):
        return "hopper"
    if name.startswith(("a100", "a800", "a30", "a10", "a40", "a6000", "rtx-30")):
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


AMPERE_RUN_ANCHORS: tuple[tuple[str, str], ...] = (
    (
        "OPT-175B",
        "992 A100-80GB for 34 days = 809,472 GPU-hours for 180B tokens (LLaMA paper Table 15, "
        "https://arxiv.org/abs/2302.13971, from the OPT logbook; OPT paper "
        "https://arxiv.org/abs/2205.01068 §2.5: at least 35 manual restarts, over 100 hosts "
        "cycled, loss divergences rolled back to earlier checkpoints)",
    ),
    (
        "BLOOM-176B",
        "384 A100-80GB for 117.5 days = 1,082,880 GPU-hours for 366B tokens (LLaMA paper "
        "Table 15; BLOOM paper https://arxiv.org/abs/2211.05100)",
    ),
    (
        "MPT-7B",
        "440 A100-40GB for about 9.5 days for 1T tokens, 'with zero human intervention' "
        "(https://huggingface.co/mosaicml/mpt-7b, Training Configuration; "
        "https://www.databricks.com/blog/mpt-7b)",
    ),
    (
        "Llama 2 7B/13B/70B",
        "184,320 / 368,640 / 1,720,320 A100-80GB GPU-hours for 2T tokens at 4k context "
        "('Time: total GPU time required for training each model', Llama 2 paper Table 2, "
        "https://arxiv.org/abs/2307.09288)",
    ),
)
"""The published A100 runs the Ampere whole-run prior is the median of: wall-clock GPU
count x days (or the authors' total GPU time), not a throughput extrapolation. Their
engine-implied MFU (model FLOPs with attention over 312 TFLOPS) is recomputed from these
figures in ``tests/sizing/test_engine.py``."""
AMPERE_RUN_MFU = 0.40
"""Median of :data:`AMPERE_RUN_ANCHORS`' implied MFU (0.21, 0.33, 0.38, 0.43, 0.45, 0.46)."""

_RUN: dict[str, tuple[float, str]] = {
    "ampere": (
        AMPERE_RUN_MFU,
        "the median of six published A100 runs by the wall clock, 21-46 % of peak in model "
        "FLOPs with attention (OPT-175B, BLOOM-176B, MPT-7B, Llama 2 7B/13B/70B)",
    ),
    "hopper": (0.35, "whole-run MFU on H100-class parts is 0.30-0.40 (Llama 3 report)"),
    "blackwell": (0.35, "no public anchor; Hopper prior reused"),
    "volta": (0.30, "ZeRO-100B reached about 30 % of V100 peak (Rajbhandari et al. 2020)"),
    "ada": (0.30, "no public anchor for PCIe Ada parts (L4/L20/L40S); conservative prior"),
    "turing": (0.25, "no public anchor for T4; conservative prior"),
    "pascal": (0.25, "no public anchor for Pascal parts; conservative prior"),
    "ascend": (
        0.30,
        "no public whole-run MFU for Ascend NPUs: a placeholder prior, not anchored",
    ),
    "unknown": (0.30, "accelerator generation unknown; conservative prior"),
}

_STEADY: dict[str, tuple[float, str]] = {
    "ampere": (
        0.62,
        "steady-state A100 runs of 1-13B models reach 0.60-0.64 MFU without recompute and "
        "0.67-0.77 hardware utilization with it (MosaicML llm-foundry benchmarks)",
    ),
    "hopper": (
        0.45,
        "steady-state H100 BF16 runs of 1-13B models reach 0.40-0.46 MFU without recompute "
        "and 0.48-0.59 with it (MosaicML llm-foundry benchmarks)",
    ),
    "blackwell": (0.45, "no public anchor; Hopper steady prior reused"),
    "volta": (
        0.40,
        "no steady anchor for V100; the whole-run prior x 1.35 (between Hopper's steady/run "
        "ratio 0.45 / 0.35 = 1.29 and Ampere's 0.62 / 0.40 = 1.55)",
    ),
    "ada": (0.40, "no steady anchor for Ada PCIe parts; the whole-run prior x 1.35"),
    "turing": (0.34, "no steady anchor for T4; the whole-run prior x 1.35"),
    "pascal": (0.34, "no steady anchor for Pascal; the whole-run prior x 1.35"),
    "ascend": (
        0.40,
        "no public steady MFU for Ascend NPUs: the whole-run placeholder x 1.35, not anchored "
        "(an Ascend time is less certain than an A100's or H100's, whose priors are measured)",
    ),
    "unknown": (0.40, "accelerator generation unknown; the whole-run prior x 1.35"),
}

DLE_RESNET50 = (
    "https://github.com/NVIDIA/DeepLearningExamples/blob/"
    "291f0d02e815b148fa5c2b81bf07aa3552142895/PyTorch/Classification/ConvNets/"
    "resnet50v1.5/README.md"
)
"""NVIDIA DeepLearningExamples ResNet-50 v1.5 for PyTorch, sections 'Training performance
results' (1 GPU, mixed precision, batch 256 per GPU, DALI) and 'Inference performance
results' (latency per batch size)."""

IMAGE_MODEL_MFU: dict[str, tuple[float, str]] = {
    "volta": (
        0.235,
        "ResNet-50 v1.5, 1 x V100-16GB, mixed precision, batch 256: 1,200 images/s x 24.5 "
        "GFLOP per training image = 29.4 TFLOPS, 23.5 % of 125",
    ),
    "ampere": (
        0.195,
        "ResNet-50 v1.5, 1 x A100-80GB, mixed precision, batch 256: 2,470 images/s x 24.5 "
        "GFLOP per training image = 60.6 TFLOPS, 19.4 % of 312",
    ),
}
"""Share of the dense 16-bit peak an image model's training sustains once its batch fills
the device: NVIDIA's tuned ResNet-50 recipe (:data:`DLE_RESNET50`; 3 passes x 8.18 GFLOP
forward per 224 px image). Convolutions with batch norm and ReLU fill tensor cores less
than LLM matmuls, and the faster part less (Ampere 19 %, Volta 24 %); generations without
a figure take Ampere's, the nearer of the two to the tensor-core parts sold now."""

IMAGE_MODEL_MFU_FP32: dict[str, tuple[float, str]] = {
    "tf32": (
        0.147,
        "ResNet-50 v1.5, 1 x A100-80GB, TF32, batch 256: 938 images/s x 24.5 GFLOP per "
        "training image = 23.0 TFLOPS, 14.7 % of 156 TF32",
    ),
    "cuda_cores": (
        0.573,
        "ResNet-50 v1.5, 1 x V100-16GB, FP32, batch 112: 367 images/s x 24.5 GFLOP per "
        "training image = 9.0 TFLOPS, 57.3 % of 15.7 FP32",
    ),
}
"""An fp32 image model's share of the rate it runs at, from the same recipe's fp32 rows
(:data:`DLE_RESNET50`; batch 112 per ``ConvNets/configs.yml``): on parts with TF32 tensor
cores (Ampere and later) PyTorch's cuDNN convolutions use TF32 by default, and fill those
units as poorly as 16-bit ones; elsewhere, and for a ViT's matmuls (TF32 is off for
matmuls by default), fp32 runs on the CUDA cores, which the same convolutions fill far
better. The 16-bit share (:data:`IMAGE_MODEL_MFU`) on the fp32 rate gave a V100 150
images/s of FP32 training (NVIDIA: 367) and an A100 155 (938)."""

IMAGE_FORWARD_FLOOR_S = 0.013
"""Seconds one image-model forward pass takes however small its batch: ResNet-50's
mixed-precision inference latency at batches 1-8 stays at 12.8-13.7 ms on a V100 and
12.8-13.0 ms on a T4 (:data:`DLE_RESNET50`, 'Inference performance results'), two parts
4x apart in peak: it is the launch of the network's kernels, not arithmetic. A training
step pays it once per pass (forward, backward), so a small batch cannot fill the device."""


def fp32_units(accelerator: AcceleratorSpec, convolutional: bool) -> str:
    """Where an fp32 image model's arithmetic runs (a key of :data:`IMAGE_MODEL_MFU_FP32`):
    a convolutional network's on TF32 tensor cores where the part has them (the parts with
    BF16, Ampere and later: cuDNN's default), anything else on the CUDA cores."""
    return "tf32" if convolutional and accelerator.supports_bf16 else "cuda_cores"


def image_training_prior(
    accelerator: AcceleratorSpec, precision: str = "bf16", convolutional: bool = True
) -> tuple[float, str]:
    """(utilization at a full batch, basis) of image-model training on ``accelerator``, of
    the rate :func:`~service.sizing.compute.peak_tflops` gives it (an fp32 one: TF32 for
    a convolutional network on a part with TF32, else the CUDA cores')."""
    if precision == "fp32":
        value, text = IMAGE_MODEL_MFU_FP32[fp32_units(accelerator, convolutional)]
        return value, f"{text} ({DLE_RESNET50})"
    gen = generation(accelerator)
    found = IMAGE_MODEL_MFU.get(gen)
    if found is not None:
        return found[0], f"{found[1]} ({DLE_RESNET50})"
    value, text = IMAGE_MODEL_MFU["ampere"]
    return value, f"no image-training figure for this part: Ampere's, {text} ({DLE_RESNET50})"


FLASH_ATTENTION_2 = "https://arxiv.org/abs/2307.08691"
"""Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism and Work
Partitioning", abstract: "reaching 50-73% of the theoretical maximum FLOPs/s on A100 and
getting close to the efficiency of GEMM operations"."""
FLASH_ATTENTION_3 = "https://arxiv.org/abs/2407.08608"
"""Shah et al. 2024, "FlashAttention-3: Fast and Accurate Attention with Asynchrony and
Low-precision", abstract: FlashAttention-2 "achieving only 35% utilization on the H100
GPU" (it is written for Ampere's synchronous ``mma.sync``, not Hopper's ``wgmma``/TMA)."""
ATTENTION_UTILIZATION: dict[str, tuple[float, str]] = {
    "hopper": (
        0.35,
        "FlashAttention-2 reaches only 35 % of an H100's peak (FlashAttention-3 paper, "
        f"{FLASH_ATTENTION_3})",
    ),
}
"""The most of the dense 16-bit peak the attention kernel (scores and weighted sum,
forward and backward) reaches, per generation, where it is below the matmuls'. On
Ampere FlashAttention-2 runs "close to the efficiency of GEMM operations" (50-73 % of
peak, :data:`FLASH_ATTENTION_2`), so the attention shares the prior; on Hopper it is held
at 35 % while the weights' matmuls reach the prior (0.45 steady). FlashAttention-2 is
what PyTorch's SDPA and the trainers of the anchors (llm-foundry, torchtitan) ran; a
trainer on FlashAttention-3 or cuDNN attention runs long sequences faster than this.
Other generations have no figure: no cap. The llm-foundry H100 rows at 32k-64k tokens
(MFU 0.29-0.32 against 0.40-0.44 at 2k, ``scripts/train/benchmarking/README.md``
@061f2c7) are the long-context end this term reproduces."""


def attention_utilization(accelerator: AcceleratorSpec) -> tuple[float, str] | None:
    """(the attention kernel's utilization ceiling, its basis) on ``accelerator``, or
    ``None`` where attention runs at the matmuls' utilization (:data:`ATTENTION_UTILIZATION`)."""
    return ATTENTION_UTILIZATION.get(generation(accelerator))


FP32_UTILIZATION = 0.65
"""fp32 training runs SGEMM on CUDA cores, not tensor cores: cuBLAS SGEMM reaches most of
the FP32 peak on large matrices (prior), and small models fill CUDA cores far more easily
than tensor cores, so no small-model scaling applies."""


def mfu_prior(
    params_b: float,
    accelerator: AcceleratorSpec,
    *,
    image_model: bool = False,
    basis: str = "run",
    framework: str = "generic",
    precision: str = "bf16",
    convolutional: bool = False,
) -> tuple[float, str]:
    """(utilization, one-sentence basis) for a training job of ``params_b`` on
    ``accelerator``: whole-run MFU (``basis="run"``) or the steady-state hardware
    utilization of the training loop (``"steady"``), scaled by the framework's speed."""
    if image_model:
        return image_training_prior(accelerator, precision, convolutional)
    return _prior(params_b, generation(accelerator), basis, framework, precision)


@functools.lru_cache(maxsize=4096)
def _prior(
    params_b: float, gen: str, basis: str, framework: str, precision: str
) -> tuple[float, str]:
    """:func:`mfu_prior` of a generation (static tables: the planner asks it for every
    accelerator and layout of a job with the same arguments)."""
    if precision == "fp32" and basis == "steady":
        value = FP32_UTILIZATION * framework_profile(framework).speed
        return value, (
            "fp32 matmuls on CUDA cores (SGEMM) reach most of the FP32 peak: 0.65, x the "
            "framework's speed"
        )
    if basis == "steady":
        value, text = _STEADY[gen]
        prof = framework_profile(framework)
        if prof.speed != 1.0:
            value *= prof.speed
            text += f"; x{prof.speed:g} for {prof.label} ({prof.speed_note})"
    else:
        value, text = _RUN[gen]
        if gen == "hopper" and params_b >= 100:
            value, text = 0.38, "Llama 3 405B sustained 38-43 % per stage on H100 (paper Table 4)"
    if params_b < _SMALL_MODEL_B:
        value *= _SMALL_MODEL_FACTOR
        text += "; x0.75 below 1B parameters (small matmuls underfill tensor cores)"
    return value, text
