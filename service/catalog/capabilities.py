"""What each accelerator generation can run: number formats, attention and quantized
kernels, software stack — and the verdict for one job's precision on one device.

Why a table: the registry holds rates (TFLOPS, bandwidth), but whether a job *runs* is a
question of formats and kernels. Qwen2.5-72B in BF16 on a V100 is not a slower answer,
it is one common engines refuse (Volta has no BF16), so the planner asks this module
before it places a job: a precision the device cannot run is either planned in the one it
can (BF16 -> FP16 on Volta/Turing/Pascal, said in the option's warnings) or the device is
dropped (FP8 without FP8 tensor cores, int4/int8 without kernels) — never silently kept.

BF16 and FP8 come from each spec's own flags (``supports_bf16``/``supports_fp8``, sourced
per chip in the registry); the rest is per generation, with its sources below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.catalog.models import AcceleratorSpec

Verdict = Literal["ok", "fp16", "unsupported"]
"""``ok``: runs as asked; ``fp16``: planned in FP16 instead of BF16 (same bytes, FP16
peak); ``unsupported``: the device cannot run the precision (dropped)."""


@dataclass(frozen=True, slots=True)
class Generation:
    """Kernels one accelerator generation has (``None`` = no public source either way)."""

    name: str
    flash_attention_2: bool | None
    int8_kernels: bool | None
    """Int8 weights served by a common engine (vLLM W8A8 or bitsandbytes LLM.int8)."""
    int4_kernels: bool | None
    """Int4 weight-only kernels (GPTQ/AWQ) in a common engine."""
    modern_engines: bool
    """vLLM's current (V1) engine and FlashAttention-2 run on it."""
    source: str
    nf4_kernels: bool | None = True
    """bitsandbytes NF4 (QLoRA's 4-bit base) runs as native kernels: CUDA kernels on the
    NVIDIA generations; on Ascend (``False``) it runs as a PyTorch fallback: "the nf4
    quantization method is currently implemented in PyTorch. This interim measure is due
    to the fact that the high-performance version implemented with AscendC is still in
    progress" (bitsandbytes-foundation/bitsandbytes PR 1422, merged 2024,
    https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1422; still "a temporary
    PyTorch version" in PR 1695, 2025-07). No published measurement of its speed."""
    awq_kernels: bool | None = None
    """vLLM's AWQ int4 kernels (``None``: as ``int4_kernels``). Volta has GPTQ but no AWQ:
    https://docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html (AWQ needs
    Turing, SM 7.5, or newer; GPTQ runs on Volta, SM 7.0)."""


_FA2 = (
    "https://github.com/Dao-AILab/flash-attention (README: FlashAttention-2 supports Ampere, "
    "Ada, Hopper)"
)
_VLLM_QUANT = "https://docs.vllm.ai/en/v0.11.2/features/quantization/ (Supported Hardware table)"
_VLLM_V100 = (
    "https://github.com/vllm-project/vllm/issues/13398 (V1 engine fails on V100: FlashAttention "
    "assertion); https://github.com/Dao-AILab/flash-attention/issues/524 (V100 not supported)"
)

GENERATIONS: dict[str, Generation] = {
    "Pascal": Generation("Pascal", False, False, False, False,
                         f"{_FA2}; {_VLLM_QUANT} (no column below Volta: SM 7.0 is the floor)"),
    "Volta": Generation("Volta", False, True, True, False,
                        f"{_FA2}; {_VLLM_QUANT} (GPTQ, bitsandbytes yes; AWQ, W8A8 no); "
                        f"{_VLLM_V100}", awq_kernels=False),
    "Turing": Generation("Turing", False, True, True, True,
                         f"{_FA2}; {_VLLM_QUANT} (AWQ, GPTQ, W8A8 int8 yes; FP8 W8A8 no)"),
    "Ampere": Generation("Ampere", True, True, True, True, f"{_FA2}; {_VLLM_QUANT}"),
    "Ada": Generation("Ada", True, True, True, True, f"{_FA2}; {_VLLM_QUANT} (FP8 W8A8 yes)"),
    "Hopper": Generation("Hopper", True, True, True, True, f"{_FA2}; {_VLLM_QUANT}"),
    "DaVinci": Generation("DaVinci", None, True, None, True,
                          "CANN stack (torch_npu / vLLM-Ascend); FlashAttention-2 and the CUDA "
                          "quantization kernels do not apply, CANN's own operators are not "
                          "tabulated here (reference/accelerator-facts.csv); INT8 is the W8A8 "
                          "of msModelSlim, served by vLLM-Ascend (--quantization ascend, "
                          "https://docs.vllm.ai/projects/ascend/en/v0.13.0/user_guide/"
                          "feature_guide/quantization.html), MindIE and SGLang (W8A8 on Atlas "
                          "A2: https://docs.sglang.io/docs/hardware-platforms/ascend-npus/"
                          "ascend_npu_quantization.md); bitsandbytes NF4 as a PyTorch fallback "
                          "(bitsandbytes PR 1422)", nf4_kernels=False),
}  # fmt: skip
"""Keyed by the registry's ``architecture`` (its first word: ``DaVinci (910B)`` ->
``DaVinci``)."""


def generation(spec: AcceleratorSpec) -> Generation | None:
    """The generation row of ``spec``, or ``None`` when its architecture is not tabulated."""
    arch = (spec.architecture or "").split(" ", 1)[0]
    return GENERATIONS.get(arch)


def precision_verdict(spec: AcceleratorSpec, precision: str, serving: bool) -> Verdict:
    """Can ``spec`` run the job's ``precision`` (weights/compute format)?

    * ``bf16`` without BF16: FP16 instead (the same two bytes) when the device has a
      16-bit rate or only serves (bandwidth-bound); else unsupported for training.
    * ``fp8`` only with FP8 tensor cores; ``int8``/``int4`` only where kernels exist
      (unknown = allowed, with a warning from :func:`hardware_notes`).
    """
    gen = generation(spec)
    if precision == "bf16":
        if spec.supports_bf16:
            return "ok"
        return "fp16" if serving or spec.fp16_tflops else "unsupported"
    if precision == "fp16":
        return "ok" if serving or spec.dense_tflops_16bit else "unsupported"
    if precision == "fp8":
        return "ok" if spec.supports_fp8 else "unsupported"
    if precision == "int8":
        return "unsupported" if gen is not None and gen.int8_kernels is False else "ok"
    if precision == "int4":
        return "unsupported" if gen is not None and gen.int4_kernels is False else "ok"
    return "ok"


VOLTA_ENGINES = frozenset({"lmdeploy"})
"""Serving engines whose current release runs on Volta, AWQ/GPTQ INT4 included, so a plan
under them on a V100 needs neither vLLM's V1 caveat nor its AWQ one (review 7 J29):
LMDeploy's TurboMind lists "V100(sm70): V100" among the GPUs of its AWQ/GPTQ INT4
inference (InternLM/lmdeploy ``docs/en/quantization/w4a16.md``@1cfac7d2) and serves FP16
there (Volta has no BF16: the ``fp16_serving`` sentence says so)."""


def checkpoint_verdict(
    spec: AcceleratorSpec, scheme: str | None, engine: str | None = None
) -> Verdict:
    """Can ``spec`` load a quantized checkpoint stored as ``scheme`` (``AWQ``,
    ``GPTQ int4``, …: the format the model's name fixes, :class:`~service.sizing.presets.
    Checkpoint`) under the serving ``engine`` (``None``: the default, vLLM)? An AWQ
    checkpoint on a generation without vLLM's AWQ kernels (Volta) does not load under
    vLLM at all (review 4 F5), so the device is dropped, not ranked with a caveat; GPTQ
    runs there. An engine with its own INT4 kernels on Volta (:data:`VOLTA_ENGINES`:
    LMDeploy's TurboMind) loads AWQ wherever the generation has INT4 kernels. ``None``
    scheme: no checkpoint named, nothing to check."""
    gen = generation(spec)
    if scheme is not None and scheme.upper().startswith("AWQ") and gen is not None:
        awq = gen.int4_kernels if gen.awq_kernels is None else gen.awq_kernels
        if engine in VOLTA_ENGINES:
            awq = gen.int4_kernels
        if awq is False:
            return "unsupported"
    return "ok"


CUDA_ENGINES = frozenset({"vllm", "sglang", "lmdeploy", "tensorrt-llm"})
"""Serving engines built for CUDA compute capability 7.0 and newer (``hf`` is plain
PyTorch, which still runs older cards; ``mindie`` is Ascend's own)."""

BELOW_SM70 = frozenset({"Pascal"})
"""Generations below compute capability 7.0 (P4/P40 are SM 6.1, P100 SM 6.0). vLLM's GPU
requirements: "compute capability 7.0 or higher (e.g., V100, T4, RTX20xx, A100, L4, H100)",
https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/ ; the other CUDA engines
ship kernels for Volta or newer only (vLLM's quantization table has no column below Volta:
https://docs.vllm.ai/en/v0.11.2/features/quantization/)."""


SM75_ENGINES = frozenset({"sglang"})
"""CUDA engines that refuse to start below compute capability 7.5, so on Volta's V100
too (review 7 J5/J26). SGLang's model runner, on loading the weights: ``if
torch.cuda.get_device_capability()[0] < 8: ... if torch.cuda.get_device_capability()[1]
< 5: raise RuntimeError("SGLang only supports sm75 and above.")``
(sgl-project/sglang ``python/sglang/srt/model_executor/model_runner.py``, ``load_model``;
the same check in its ``maybe_downgrade_dtype_for_legacy_gpu`` helper of later releases),
and its default attention backend, FlashInfer, "only supports sm75 and above" (SGLang's
install notes); reported on V100 in https://github.com/opendatalab/MinerU/issues/3416
("SGlang only supports sm 75 and above", a V100 at sm70)."""

BELOW_SM75 = frozenset({"Pascal", "Volta"})
"""Generations below compute capability 7.5 (Volta's V100 is SM 7.0)."""


def engine_verdict(spec: AcceleratorSpec, engine: str) -> Verdict:
    """Can the serving ``engine`` run on ``spec`` at all? ``unsupported`` for a CUDA
    engine on a card below compute capability 7.0, and for SGLang below 7.5 (dropped,
    never shown with that engine's rate); plain PyTorch (``hf``) runs anything the
    registry tabulates."""
    gen = generation(spec)
    if engine in CUDA_ENGINES and gen is not None and gen.name in BELOW_SM70:
        return "unsupported"
    if engine in SM75_ENGINES and gen is not None and gen.name in BELOW_SM75:
        return "unsupported"
    return "ok"


CANN_ONLY_ENGINES = frozenset({"mindie"})
"""Serving engines that run on Ascend NPUs only: MindIE is Huawei's inference engine for
the CANN stack, its hardware list Atlas products only (Atlas 800I A2, Atlas 300I Duo:
https://www.hiascend.com/document/detail/zh/mindie/1.0.RC1/envdeployment/instg/mindie_instg_0002.html),
so a MindIE plan on an NVIDIA GPU is no plan (review 5: with each pipeline stage caching
only its layers, 4 x 8 V100 held DeepSeek-V3 in INT8 and was offered under MindIE)."""


def engine_stack_verdict(spec: AcceleratorSpec, engine: str) -> Verdict:
    """``unsupported`` for an Ascend-only engine on a device of another stack."""
    if engine in CANN_ONLY_ENGINES and spec.stack != "cann":
        return "unsupported"
    return "ok"


CANN_ONLY_FRAMEWORKS = frozenset({"mindspeed"})
"""Training frameworks that run on Ascend NPUs only (review 11t T1). MindSpeed is
Huawei's acceleration library that patches Megatron-LM for the CANN stack: "MindSpeed
supports Atlas 800T A2 and other Ascend training hardware" (its version table pairs each
release with a Megatron core, torch_npu and CANN version, https://gitee.com/ascend/MindSpeed
README), and MindSpeed-LLM's install guide lists the Ascend NPU driver and firmware, CANN
and torch_npu as its dependencies
(https://gitcode.com/Ascend/MindSpeed-LLM/blob/master/docs/pytorch/install_guide.md), so a
MindSpeed plan on an NVIDIA GPU is no plan: there Megatron-LM itself runs the same
layouts."""

CUDA_ONLY_FRAMEWORKS = frozenset({"megatron"})
"""Training frameworks built for CUDA whose Ascend port is another framework: NVIDIA's
Megatron-LM needs CUDA (its fused kernels, Apex, Transformer Engine); on Ascend it runs
through MindSpeed, which patches it for torch_npu with the same tensor/pipeline layouts
and distributed optimizer (MindSpeed-LLM's install steps clone NVIDIA/Megatron-LM and copy
its ``megatron`` package into MindSpeed-LLM, same guide as above). The option stays (the
sizing is Megatron's either way) and says so (:func:`framework_port`)."""


def framework_stack_verdict(spec: AcceleratorSpec, framework: str | None) -> Verdict:
    """``unsupported`` for an Ascend-only training framework on a device of another
    stack (MindSpeed on an NVIDIA GPU)."""
    if framework in CANN_ONLY_FRAMEWORKS and spec.stack != "cann":
        return "unsupported"
    return "ok"


def framework_port(spec: AcceleratorSpec, framework: str | None) -> bool:
    """A CUDA training framework asked for on an Ascend NPU, where its Ascend port runs
    the job (Megatron-LM as MindSpeed): the option must say so."""
    return framework in CUDA_ONLY_FRAMEWORKS and spec.stack == "cann"


V1_ONLY_ENGINES = frozenset({"vllm"})
"""Engines whose current release has only the V1 engine, which does not run on Volta:
vLLM removed its V0 engine in v0.11.0 ("[V0 Deprecation] Remove LLMEngine",
https://github.com/vllm-project/vllm/pull/25033; "the V0 engine has been completely
removed from vLLM starting with version 0.11.0",
https://github.com/huggingface/optimum-neuron/pull/1027), and V1 fails on V100
(https://github.com/vllm-project/vllm/issues/13398). Serving there means pinning a
release before 0.11, which no longer gets fixes or new models."""


def engine_outdated(spec: AcceleratorSpec, engine: str) -> bool:
    """``engine``'s current release does not run on ``spec`` (only an old, pinned one
    does): ranked after the devices it runs on unless asked for by name (review 4 F8)."""
    gen = generation(spec)
    return (
        engine in V1_ONLY_ENGINES
        and gen is not None
        and not gen.modern_engines
        and gen.name not in BELOW_SM70  # dropped outright (engine_verdict)
    )


def pipeline_outdated(spec: AcceleratorSpec) -> bool:
    """Serving an image model (a PyTorch pipeline) on ``spec`` runs its 16-bit math
    without tensor cores (Pascal: :data:`PIPELINE_SERVING_NOTE`): it runs, but is
    ranked after the devices with them unless asked for by name (review 10 S7c3), as a
    device an engine's current release does not run is (:func:`engine_outdated`)."""
    gen = generation(spec)
    return gen is not None and gen.name in BELOW_SM70


def method_notes(spec: AcceleratorSpec, method: str | None) -> tuple[str, ...]:
    """Keys of the sentences a fine-tune ``method`` on ``spec`` must carry: QLoRA where
    bitsandbytes NF4 has no native kernels (Ascend: a PyTorch fallback)."""
    gen = generation(spec)
    if method == "qlora" and gen is not None and gen.nf4_kernels is False:
        return ("qlora_fallback",)
    return ()


PIPELINE_SERVING_NOTE = (
    "An image model (diffusion pipeline, CNN, ViT) is served as a PyTorch program "
    "(diffusers, torchvision/timm), under no text engine: vLLM's and the other engines' "
    "hardware floors and Volta caveats do not apply (diffusers' attention is PyTorch's "
    "scaled_dot_product_attention, AttnProcessor2_0 'enabled by default if you're using "
    "PyTorch 2.0', huggingface/diffusers src/diffusers/models/attention_processor.py, "
    "which picks its memory-efficient kernel where FlashAttention-2 does not run: "
    "https://pytorch.org/docs/stable/generated/"
    "torch.nn.functional.scaled_dot_product_attention.html). "
    "Pascal has no tensor cores, which Volta introduced (NVIDIA Tesla V100 GPU "
    "Architecture whitepaper, https://images.nvidia.com/content/volta-architecture/pdf/"
    "volta-architecture-whitepaper.pdf): its 16-bit math runs on CUDA cores (review 10 S7c)."
)


def hardware_notes(
    spec: AcceleratorSpec,
    precision: str,
    serving: bool,
    engine: str | None = None,
    images: bool = False,
    convolutional: bool = False,
) -> tuple[str, ...]:
    """Keys of the sentences (:mod:`service.planning.texts`) an option on ``spec`` must
    carry: the precision fallback, the engine caveat of old generations, unverified
    kernels. The Volta caveat follows the serving ``engine`` (``None``: the default,
    vLLM): vLLM's V1 engine for vLLM, none for an engine that runs there
    (:data:`VOLTA_ENGINES`), the missing FlashAttention-2 for plain PyTorch (``hf``);
    SGLang never gets here (:func:`engine_verdict` drops Volta). Serving an image model
    (``images``): no engine caveat, only Pascal's missing tensor cores
    (:data:`PIPELINE_SERVING_NOTE`). Training a CNN or detector (``convolutional``): no
    FlashAttention-2 caveat, as it has no attention layer (torchvision's ResNets and
    Ultralytics' YOLO detectors are convolutions: pytorch/vision
    ``torchvision/models/resnet.py``, https://github.com/ultralytics/ultralytics)."""
    notes: list[str] = []
    gen = generation(spec)
    volta_ok = serving and engine in VOLTA_ENGINES
    if precision_verdict(spec, precision, serving) == "fp16":
        notes.append("fp16_serving" if serving else "fp16_training")
    if serving and images:
        if gen is not None and gen.name in BELOW_SM70:
            notes.append("old_pipeline")
    elif gen is not None and not gen.modern_engines and serving:
        if gen.name != "Volta":
            notes.append("old_engine")
        elif engine == "hf":
            notes.append("no_flash_attention")
        elif not volta_ok:
            notes.append("volta_engine")
    elif gen is not None and gen.flash_attention_2 is False and not (serving or convolutional):
        notes.append("no_flash_attention")
    if precision in ("int8", "int4") and gen is not None:
        kernels = gen.int8_kernels if precision == "int8" else gen.int4_kernels
        if kernels is None:
            notes.append("kernels_unverified")
        elif precision == "int4" and kernels and gen.awq_kernels is False and not volta_ok:
            notes.append("int4_no_awq")
    return tuple(notes)
