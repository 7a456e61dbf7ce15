"""How wide a fine-tune may be spread: its global batch bounds its data-parallel degree.

Data parallelism multiplies the global batch: each optimizer step takes micro batch x
gradient accumulation x data-parallel replicas sequences. A fine-tune's global batch is
a training hyper-parameter, not a knob of the cluster: Stanford Alpaca trains at 128
sequences (4 GPUs x 4 per device x 8 accumulation steps) and tells whoever runs it on
more GPUs to "turn down gradient_accumulation_steps to keep a global batch size of 128"
(https://github.com/tatsu-lab/stanford_alpaca, README, "Fine-tuning"). So more replicas
only shorten the accumulation; past ``global batch / micro batch`` replicas there is no
accumulation left to shorten, and adding servers changes the recipe rather than the time.

Pre-training is not bounded here: its global batches are millions of tokens (thousands
of sequences) and grow with the cluster.
"""

from __future__ import annotations

from service.sizing.workload import Finetune, Rlhf

FINETUNE_GLOBAL_BATCH = 128
"""Sequences per optimizer step of a fine-tune (LoRA, QLoRA, full, freeze, DPO): Stanford
Alpaca's 128, kept when more GPUs are used (https://github.com/tatsu-lab/stanford_alpaca,
README: 4 x A100 x per-device 4 x accumulation 8, "keep a global batch size of 128").
Recipes use less, not more: LLaMA-Factory's LoRA SFT and DPO examples step every 8
sequences per device (``per_device_train_batch_size: 1``, ``gradient_accumulation_steps:
8``, hiyouga/LLaMA-Factory ``examples/train_lora/llama3_lora_sft.yaml``@e8e6af26 and
``llama3_lora_dpo.yaml``@e6aa9670), and OpenAI's fine-tuning API caps its default batch at 256
(https://platform.openai.com/docs/api-reference/fine-tunes/create, legacy ``batch_size``:
"~0.2% of the number of examples in the training set, capped at 256")."""

MIN_OPTIMIZER_STEPS = 500
"""Optimizer steps a fine-tune is not spread below: OpenAI's default batch is about 0.2 %
of the training examples (same page as above), i.e. about 500 steps per epoch. A run
of fewer sequences than ``500 x`` the global batch gets a smaller global batch, and so
fewer data-parallel replicas, rounded down to a power of two as recipes write their
batches (8, 16, 128 above); counted over the whole run (epochs included), which is the
lenient reading."""


def global_batch(workload: object, tokens: float | None) -> int | None:
    """Sequences per optimizer step the planner assumes for ``workload`` (a fine-tune or
    DPO; ``None`` for pre-training, PPO/GRPO, serving and preprocessing): at most
    :data:`FINETUNE_GLOBAL_BATCH`, and with ``tokens`` known at most the run's sequences
    over :data:`MIN_OPTIMIZER_STEPS`, rounded down to a power of two (never under one
    micro batch)."""
    if isinstance(workload, Rlhf):
        if workload.algorithm != "dpo":
            return None
    elif not isinstance(workload, Finetune):
        return None
    micro = micro_batch(workload)
    batch = FINETUNE_GLOBAL_BATCH
    seq_len = getattr(workload, "seq_len", None)
    if tokens and seq_len:
        steps_allow = int(tokens / seq_len / MIN_OPTIMIZER_STEPS)
        if steps_allow < batch:  # a power of two, as recipes write their batches
            batch = 1 << max(steps_allow, 1).bit_length() - 1
    return max(batch, micro)


def micro_batch(workload: object) -> int:
    """Sequences (DPO: pairs) per device per micro-step."""
    return getattr(workload, "micro_batch_size", None) or 1


def replica_ceiling(workload: object, tokens: float | None) -> tuple[int, int] | None:
    """(most data-parallel replicas, the global batch in sequences that bounds them), or
    ``None`` when the job's width is not bounded by its batch."""
    batch = global_batch(workload, tokens)
    if batch is None:
        return None
    return batch // micro_batch(workload), batch


def replicas(devices: int, tensor_parallel: int, pipeline_parallel: int) -> int:
    """Data-parallel replicas of a layout: the devices over one model copy's."""
    return max(1, devices // max(1, tensor_parallel * pipeline_parallel))
