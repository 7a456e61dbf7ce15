"""QLoRA's dequantization time: the 4-bit base is expanded to 16-bit for every matmul.

Why (review 13 F3): a QLoRA step does the same matmuls as a 16-bit LoRA step, and the
estimate used to time it at LoRA's utilization with nothing added, so QLoRA answers came
out as fast as LoRA's. They are not: bitsandbytes keeps the frozen base in NF4 and
``MatMul4Bit`` (bitsandbytes/autograd/_functions.py @29e3420,
https://github.com/TimDettmers/bitsandbytes/blob/29e3420c6de4c62086603aff47107ef378062e91/bitsandbytes/autograd/_functions.py)
dequantizes the weight for each use of it:

- forward:
  ``torch.nn.functional.linear(A, F.dequantize_4bit(B, quant_state).to(A.dtype).t(), bias)``;
- backward (the input gradient the adapters below need):
  ``torch.matmul(grad_output, F.dequantize_4bit(B, ctx.state).to(grad_output.dtype).t())``;
- and under gradient checkpointing the recomputed forward dequantizes once more.

Each dequantization reads the 4-bit codes (``bits / 8`` B per parameter) and the
double-quantized absmax constants (0.127 bit per parameter, QLoRA paper §3,
https://arxiv.org/abs/2305.14314; :data:`~service.sizing.formulas.NF4_DOUBLE_QUANT_BITS`)
and writes the 16-bit copy (2 B) that the matmul then reads — the read 16-bit LoRA pays
as well, so it is not counted again. The work is proportional to the parameters, not to
the tokens of the micro-batch: a per-micro-step cost whose share is large at short
sequences and small micro-batches and small at long ones. Qwen's own table shows exactly
that shape (QwenLM/Qwen README.md @03cd81f, "Profiling of Memory and Speed": Qwen-7B
Q-LoRA minus LoRA is 1.8, 1.5, 0.7, 1.8, 1.5, 1.0 s per 8-micro-batch step at 256 to 8,192
tokens, a constant while LoRA's own step grows 18-fold).

How fast the dequantization runs depends on the code path, not on the format:

- the eager path (bitsandbytes through PEFT: the Hugging Face Trainer, LLaMA-Factory,
  ms-swift, DeepSpeed): :data:`EAGER_DEQUANT_BANDWIDTH_SHARE` of the device's memory
  bandwidth, measured from ms-swift's benchmark (below). The bytes alone at streaming
  speed would be about a seventh of what the tables measure. No source splits the rest
  up; the known suspects: ``kDequantizeBlockwise``
  decoded NF4 through a branch tree until bitsandbytes PR #1746 (Sept. 2025,
  https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1746: the branches
  "introduce branching and reduce occupancy"; #1747 measures the replacement 1.36-2.07x
  faster on A100/H100), the nested absmax is dequantized by a kernel of its own, and
  every linear launches its own small kernels per pass.
- torchtune compiled (``compile: True``, which compiles the model as well as the loss,
  torchtune/training/_compile.py) and Unsloth (its own fused dequantization kernels,
  unslothai/unsloth unsloth/kernels/utils.py ``fast_dequantize``): the streaming-read
  efficiency :data:`STREAMING_EFFICIENCY` (a prior: no published pair of LoRA and QLoRA
  speeds of either is in the development data). Eager torchtune dequantizes torchao's
  ``NF4Tensor`` op by op and takes the eager share: its QLoRA tutorial logs 1.15 it/s out
  of the box and 3.95 it/s once compiled, "about a 200% speed up"
  (https://docs.pytorch.org/torchtune/stable/tutorials/qlora_finetune.html, pytorch/torchtune
  docs/source/tutorials/qlora_finetune.rst @168c6a2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.sizing.formulas import NF4_DOUBLE_QUANT_BITS
from service.sizing.profiles import framework_profile

Lang = Literal["zh", "en"]

DEQUANT_WRITE_BYTES = 2.0
"""The 16-bit (bf16/fp16) copy of each weight a dequantization writes."""

STREAMING_EFFICIENCY = 0.85
"""A large streaming read's share of peak bandwidth (the same prior as
:data:`service.sizing.compute.BANDWIDTH_EFFICIENCY`; repeated here so that this module
imports nothing that imports it)."""

EAGER_DEQUANT_BANDWIDTH_SHARE = 0.13
"""Share of the memory bandwidth bitsandbytes' eager QLoRA path reaches, as measured: the
ms-swift benchmark (modelscope/ms-swift docs/source_en/LLM/Benchmark.md @4692215,
https://github.com/modelscope/ms-swift/blob/46922151e06cdfc110882e182757674f12352f2c/docs/source_en/LLM/Benchmark.md,
section 'Quantization': A100-80GB, batch 1, gradient checkpointing, bitsandbytes
0.41.3.post2) trains qwen-7b-chat at 4.31 samples/s in bf16 and 2.41 with int4 (bnb),
qwen-14b-chat at 2.60 and 1.36: 0.183 s and 0.351 s more per micro-batch, 28.3 and 27.8 ms
per billion quantized parameters (6.48 and 12.61 billion in their block linears). Three
dequantizations of 2.516 B per parameter in 28 ms per billion is 270 GB/s, 0.13 of the
A100's 2,039 GB/s. Qwen's GPTQ Q-LoRA rows (auto-gptq, the same per-matmul
dequantization) give 27 and 33 ms per billion on the same part (QwenLM/Qwen README.md
@03cd81f)."""

FUSED_DEQUANT = {
    "torchtune": "torchtune compiles the model (compile: True), fusing torchao's NF4 "
    "dequantization into the matmuls' neighbours",
    "unsloth": "Unsloth dequantizes with its own fused kernels",
}
"""Frameworks whose QLoRA dequantization can run near the streaming bandwidth, and why
(torchtune only when compiled, see :func:`dequant_bandwidth_share`)."""


def dequant_passes(recompute: bool) -> int:
    """Dequantizations of every quantized weight per micro-step: the forward and the
    backward's input gradient, plus the recomputed forward under full gradient
    checkpointing (op-level selective recompute reruns no linear)."""
    return 3 if recompute else 2


def dequant_bytes_per_param(bits: int) -> float:
    """Bytes one dequantization moves per quantized parameter: the ``bits``-bit codes and
    their constants read (NF4's double-quantized absmax; the 8-bit path's per-row scale
    is negligible), the 16-bit copy written."""
    constants = NF4_DOUBLE_QUANT_BITS / 8 if bits == 4 else 0.0
    return bits / 8 + constants + DEQUANT_WRITE_BYTES


def fused_dequant(framework: str, compiled: bool) -> bool:
    """Whether the framework's QLoRA path dequantizes in fused kernels: Unsloth always,
    torchtune when compiled (``compiled`` is the request's ``compiled_loss``: torchtune's
    one ``compile`` flag compiles the model and the loss together)."""
    if framework == "unsloth":
        return True
    return framework == "torchtune" and compiled


def dequant_bandwidth_share(framework: str, compiled: bool = False) -> float:
    """Share of peak memory bandwidth the framework's QLoRA dequantization reaches."""
    if fused_dequant(framework, compiled):
        return STREAMING_EFFICIENCY
    return EAGER_DEQUANT_BANDWIDTH_SHARE


def dequant_seconds_per_micro_step(
    quantized_params: float,
    bits: int,
    recompute: bool,
    bandwidth_gbps: float,
    framework: str,
    compiled: bool = False,
) -> float:
    """Seconds one device spends per micro-step dequantizing its ``quantized_params``:
    passes x params x bytes / (bandwidth x the path's share). 0 without a bandwidth."""
    if bandwidth_gbps <= 0 or quantized_params <= 0:
        return 0.0
    moved = dequant_passes(recompute) * quantized_params * dequant_bytes_per_param(bits)
    return moved / (bandwidth_gbps * 1e9 * dequant_bandwidth_share(framework, compiled))


PASSES_WORDS: dict[Lang, dict[int, str]] = {
    "en": {3: "forward, backward and the checkpointed recompute", 2: "forward and backward"},
    "zh": {3: "前向、反向和梯度检查点的重算各一次", 2: "前向和反向各一次"},
}
PATH_WORDS: dict[Lang, dict[bool, str]] = {
    "en": {
        False: "bitsandbytes through PEFT dequantizes at about {share:.0%} of the memory "
        "bandwidth, as ms-swift's LoRA/QLoRA benchmark measures",
        True: "{framework} fuses the dequantization, about {share:.0%} of the memory bandwidth",
    },
    "zh": {
        False: "按 ms-swift 的 LoRA/QLoRA 实测，经 PEFT 调用的 bitsandbytes 反量化只达到"
        "显存带宽的约 {share:.0%}",
        True: "{framework} 融合了反量化内核，约达显存带宽的 {share:.0%}",
    },
}
DEQUANT_NOTE: dict[Lang, str] = {
    "en": "QLoRA dequantizes the {bits}-bit base weights to {half} for every matmul "
    "({passes}): {gb:,.0f} GB moved per micro-batch for {params:.2f}B quantized parameters, "
    "about {ms:,.0f} ms per {tokens:,}-token micro-batch on {acc} next to {compute:,.0f} ms "
    "of matmuls; the time includes it ({path}).",
    "zh": "QLoRA 每次矩阵乘都要把 {bits} 位基座权重反量化为 {half}（{passes}）：每个微批次为 "
    "{params:.2f}B 个量化参数搬运约 {gb:,.0f} GB，在 {acc} 上每个 {tokens:,} token 的微批次约 "
    "{ms:,.0f} 毫秒，矩阵乘本身约 {compute:,.0f} 毫秒；耗时已计入（{path}）。",
}
"""The assumption that says the dequantization's cost on the device, en and zh."""


OPTION_NOTE: dict[Lang, str] = {
    "en": "QLoRA dequantizes the {bits}-bit base to {half} for every matmul: about {ms:,.0f} ms "
    "of each {tokens:,}-token micro-batch on {acc} ({path}), included in the hours.",
    "zh": "QLoRA 每次矩阵乘都要把 {bits} 位基座反量化为 {half}：在 {acc} 上每个 {tokens:,} token "
    "的微批次约 {ms:,.0f} 毫秒（{path}），已计入耗时。",
}
"""An option's sentence on the dequantization's cost on its device (the planner's)."""
OPTION_PATH: dict[Lang, dict[bool, str]] = {
    "en": {
        False: "bitsandbytes through PEFT, at about {share:.0%} of its memory bandwidth",
        True: "{framework}'s fused kernels, at about {share:.0%} of its memory bandwidth",
    },
    "zh": {
        False: "经 PEFT 调用的 bitsandbytes，只达到其显存带宽的约 {share:.0%}",
        True: "{framework} 的融合内核，约达其显存带宽的 {share:.0%}",
    },
}


@dataclass(frozen=True, slots=True)
class DequantTerms:
    """What a QLoRA job's dequantization depends on besides its device: the quantized
    base, the trainer and the micro-batch (the same for every option of a request), for
    its time per micro-step, the estimate's assumption and each option's sentence
    (:func:`service.sizing.compute.dequant_terms` reads them off a resolved workload)."""

    quantized_params: float
    bits: int
    recompute: bool
    framework: str
    compiled: bool
    tokens: int

    def micro_step_seconds(self, bandwidth_gbps: float, model_parallel: int = 1) -> float:
        """:func:`dequant_seconds_per_micro_step` of one device holding 1/``model_parallel``
        of the base (tensor or pipeline parallel; all of it under data parallelism and
        ZeRO-3/FSDP, which gather every layer whole before using it)."""
        return dequant_seconds_per_micro_step(
            self.quantized_params / max(model_parallel, 1),
            self.bits,
            self.recompute,
            bandwidth_gbps,
            self.framework,
            self.compiled,
        )

    def note(
        self, accelerator: str, bandwidth_gbps: float, compute_s: float, bf16: bool = True
    ) -> str:
        """:data:`DEQUANT_NOTE` (the estimate's assumption, in English) on one device
        holding the whole base, next to the ``compute_s`` seconds of matmuls of one
        micro-batch (``bf16``: see :func:`half_precision`)."""
        passes = dequant_passes(self.recompute)
        path = PATH_WORDS["en"][fused_dequant(self.framework, self.compiled)].format(
            share=dequant_bandwidth_share(self.framework, self.compiled),
            framework=framework_profile(self.framework).label_in("en"),
        )
        return DEQUANT_NOTE["en"].format(
            bits=self.bits,
            passes=PASSES_WORDS["en"][passes],
            gb=passes * self.quantized_params * dequant_bytes_per_param(self.bits) / 1e9,
            params=self.quantized_params / 1e9,
            ms=self.micro_step_seconds(bandwidth_gbps) * 1e3,
            tokens=self.tokens,
            acc=accelerator,
            compute=compute_s * 1e3,
            path=path,
            half=half_precision(bf16),
        )

    def sentence(
        self,
        lang: Lang,
        accelerator: str,
        bandwidth_gbps: float,
        model_parallel: int,
        bf16: bool = True,
    ) -> str:
        """:data:`OPTION_NOTE` on one device holding 1/``model_parallel`` of the base
        (``bf16``: whether the device computes in BF16, see :func:`half_precision`)."""
        seconds = self.micro_step_seconds(bandwidth_gbps, model_parallel)
        fused = fused_dequant(self.framework, self.compiled)
        path = OPTION_PATH[lang][fused].format(
            share=dequant_bandwidth_share(self.framework, self.compiled),
            framework=framework_profile(self.framework).label_in(lang),
        )
        return OPTION_NOTE[lang].format(
            bits=self.bits,
            ms=seconds * 1e3,
            tokens=self.tokens,
            acc=accelerator,
            path=path,
            half=half_precision(bf16),
        )


def half_precision(bf16: bool) -> str:
    """The 16-bit type the base is dequantized to: bitsandbytes' ``dequantize_4bit`` output
    is cast to the activations' dtype (``.to(A.dtype)`` in ``MatMul4Bit``), bf16 where the
    device computes in it, fp16 on the parts without BF16 (V100, T4), which are planned
    in FP16 mixed precision."""
    return "bf16" if bf16 else "fp16"
