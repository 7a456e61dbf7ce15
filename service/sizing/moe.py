"""Mixture-of-experts training speed by framework: the expert loop and ZeRO-3's gathers.

A dense-model utilization prior applied to a MoE's *active* parameters assumes the
experts run as efficiently as one dense MLP of the same FLOPs. That holds for trainers
that group the experts' matmuls and shard the experts over devices (Megatron-Core's
grouped GEMM with expert parallelism: Megatron-LM, MindSpeed, Megatron-SWIFT), not for
the ones that run the Hugging Face modeling code:

- transformers' sparse MoE blocks loop over the experts in Python, one small GEMM per
  expert hit (``for expert_idx in expert_hit: ... expert_layer(current_state)`` in
  ``Qwen3MoeSparseMoeBlock.forward``,
  https://github.com/huggingface/transformers/blob/00d4b3d2142cb4ced2f51b90614b5d26bc045015/src/transformers/models/qwen3_moe/modeling_qwen3_moe.py;
  Qwen3-30B-A3B: 128 experts of width 768, 8 per token), so the tensor cores see many
  narrow matmuls and the launches of each;
- under DeepSpeed ZeRO-3 every expert is its own set of partitioned parameters, gathered
  one small all-gather at a time before its loop iteration, forward and backward.

The factors are measured, not assumed. ms-swift's Megatron-SWIFT benchmark, full-parameter
fine-tuning at 8K context on A800s, ``megatron sft`` against ``swift sft`` (HF Trainer +
DeepSpeed):

- dense Qwen2.5-14B, 8 GPUs: Megatron-LM 9.04 s/it, ZeRO-2 10.32 s/it, ZeRO-3 10.56 s/it;
- MoE Qwen1.5-MoE-A2.7B, 8 GPUs: Megatron-LM 2.95 s/it, ZeRO-2 6.02 s/it, ZeRO-3
  24.30 s/it (docs/source_en/Instruction/Megatron-SWIFT-Training.md, "Benchmark",
  https://github.com/modelscope/ms-swift/blob/026552779c5cfb438571e7074928e6bfd31cae05/docs/source_en/Instruction/Megatron-SWIFT-Training.md);
- MoE Qwen3-30B-A3B, 16 GPUs (two nodes): Megatron-LM 9.6 s/it, ZeRO-2 out of memory,
  ZeRO-3 91.2 s/it (https://swift.readthedocs.io/en/v3.10/Megatron-SWIFT/Quick-start.html,
  "Benchmark"; the same page: "We recommend using Megatron-SWIFT for MoE training; it can
  typically achieve a 10x speedup").

The dense row measures how much slower the HF/DeepSpeed path is on a dense model (that is
already in the framework speed factor, :mod:`service.sizing.profiles`); the MoE rows over
it isolate what MoE adds. Derived from Qwen1.5-MoE-A2.7B, the Qwen3-30B-A3B row kept out
as the check (``tests/sizing/test_moe.py``):

- expert loop (ZeRO-2, no parameter gathers): (2.95 / 6.02) / (9.04 / 10.32) = 0.56;
- ZeRO-3 on top: (2.95 / 24.30) / (9.04 / 10.56) = 0.142 in all, 0.25 of the loop's rate;
- check: Qwen3-30B-A3B under ZeRO-3, (9.6 / 91.2) / (9.04 / 10.56) = 0.123 measured
  against 0.142 predicted (the model is 15 % fast: its 128 narrower experts loop more).

Megatron-class trainers keep the dense prior (factor 1): the benchmark gives their MoE
speed only against DeepSpeed, and the whole-run DeepSeek-V3 case of the calibration set
(HAI-LLM, expert parallel) sits inside its tolerance without a MoE term.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.sizing.resolve import Arch

EXPERT_LOOP_FACTOR = (2.95 / 6.02) / (9.04 / 10.32)
"""Utilization of MoE training under an HF-modeling trainer, relative to a dense model on
the same trainer (ZeRO-2 / DDP: no parameter gathers): 0.56 (see the module docstring)."""
ZERO3_EXPERT_GATHER_FACTOR = (2.95 / 24.30) / (9.04 / 10.56) / EXPERT_LOOP_FACTOR
"""What ZeRO-3's per-expert all-gathers leave of the expert loop's rate: 0.25 (0.142 of
the dense rate in all)."""

EXPERT_LOOP_FRAMEWORKS = frozenset({"hf", "llama-factory", "ms-swift", "deepspeed", "unsloth"})
"""Trainers that run the Hugging Face modeling code, hence its expert loop: HF
Trainer/PEFT, LLaMA-Factory and ms-swift's ``swift sft`` (HF Trainer), DeepSpeed on HF
models, Unsloth (patches the HF model classes; no published MoE measurement of its own).
Megatron-LM, MindSpeed and Megatron-SWIFT group the experts' GEMMs and shard them by
expert parallelism; torchtitan and torchtune implement their MoE layers with grouped
matmuls; ``generic`` is the v1 accounting (no framework named)."""


def is_moe(arch: Arch | None) -> bool:
    """Whether the model routes tokens to experts (fewer active than total parameters)."""
    return arch is not None and arch.kind == "moe"


def moe_training_factor(arch: Arch | None, framework: str, zero_stage: int | None) -> float:
    """Factor on the dense utilization prior for training ``arch`` under ``framework``:
    the expert loop's :data:`EXPERT_LOOP_FACTOR`, times
    :data:`ZERO3_EXPERT_GATHER_FACTOR` under ZeRO-3; 1.0 for dense models and for
    trainers that group the experts (never above 1: a device-hours floor computed
    without the ZeRO stage stays a lower bound)."""
    if not is_moe(arch) or framework not in EXPERT_LOOP_FRAMEWORKS:
        return 1.0
    factor = EXPERT_LOOP_FACTOR
    if zero_stage == 3:
        factor *= ZERO3_EXPERT_GATHER_FACTOR
    return factor


def moe_training_note(arch: Arch | None, framework: str, zero_stage: int | None) -> str | None:
    """The assumption sentence for :func:`moe_training_factor`, or ``None`` without one."""
    factor = moe_training_factor(arch, framework, zero_stage)
    if factor == 1.0:
        return None
    gathers = ", and ZeRO-3 all-gathers every expert separately" if zero_stage == 3 else ""
    return (
        f"MoE under {framework}: the Hugging Face modeling code loops over the experts one "
        f"small matmul at a time{gathers}, so utilization is x{factor:.2f} of a dense model's "
        "on the same trainer (ms-swift's Megatron-SWIFT benchmark: Qwen1.5-MoE-A2.7B and "
        "Qwen3-30B-A3B under DeepSpeed run 2.0-9.5x slower than Megatron with expert "
        "parallelism, a dense 14B only 1.14-1.17x). Megatron-SWIFT (megatron sft) with "
        "expert parallelism runs near the dense rate."
    )
