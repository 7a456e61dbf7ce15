"""How wide a training job may be spread: its global batch bounds its data-parallel degree.

Data parallelism multiplies the global batch: each optimizer step takes micro batch x
gradient accumulation x data-parallel replicas sequences (DeepSpeed's
``train_batch_size`` is exactly that product, https://www.deepspeed.ai/docs/config-json/ ;
Megatron-LM asserts its ``--global-batch-size`` is divisible by micro batch x
data-parallel size, NVIDIA/Megatron-LM ``megatron/core/num_microbatches_calculator.py``
@00caa53a). A fine-tune's global batch is a training hyper-parameter, not a knob of the
cluster: Stanford Alpaca trains at 128 sequences (4 GPUs x 4 per device x 8
accumulation steps) and tells whoever runs it on more GPUs to "turn down
gradient_accumulation_steps to keep a global batch size of 128"
(https://github.com/tatsu-lab/stanford_alpaca, README, "Fine-tuning"). So more replicas
only shorten the accumulation; past ``global batch / micro batch`` replicas there is no
accumulation left to shorten, and adding servers changes the recipe rather than the time.

A request's ``global_batch_size`` replaces the assumed batch, for pre-training too.
Without it, pre-training is not bounded here: its global batches are millions of tokens
(thousands of sequences) and grow with the cluster.
"""

from __future__ import annotations

from service.sizing.workload import Finetune, Pretrain, Rlhf

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

PPO_MINI_BATCH = 256
"""Prompts per optimizer update of PPO and GRPO: verl's actor
``ppo_mini_batch_size: 256`` (volcengine/verl ``verl/trainer/config/actor/actor.yaml``
@7bbd5f3f, "Split each sample into sub-batches of this size for PPO"; its PPO and GRPO
examples roll out ``data.train_batch_size=1024`` prompts and update on mini-batches of
256, ``examples/ppo_trainer/run_deepseek7b_llm.sh``@3bf8cd51,
``examples/grpo_trainer/run_qwen2-7b.sh``@3f388066). verl multiplies it by the responses
per prompt (``rollout_n``, 1 by default: PPO)."""

GRPO_RESPONSES = 5
"""Responses per prompt of GRPO's group: verl's GRPO example
``actor_rollout_ref.rollout.n=5`` (``examples/grpo_trainer/run_qwen2-7b.sh``@3f388066),
so a GRPO update takes 256 x 5 = 1,280 sequences."""

MIN_OPTIMIZER_STEPS = 500
"""Optimizer steps a fine-tune is not spread below: OpenAI's default batch is about 0.2 %
of the training examples (same page as above), i.e. about 500 steps per epoch. A run
of fewer sequences than ``500 x`` the global batch gets a smaller global batch, and so
fewer data-parallel replicas, rounded down to a power of two as recipes write their
batches (8, 16, 128 above); counted over the whole run (epochs included), which is the
lenient reading."""


def default_global_batch(workload: object) -> int | None:
    """Sequences per optimizer step the planner assumes when the request sends none:
    :data:`FINETUNE_GLOBAL_BATCH` for a fine-tune or DPO, :data:`PPO_MINI_BATCH` prompts
    (times :data:`GRPO_RESPONSES` for GRPO) for PPO/GRPO, ``None`` (unbounded) for
    pre-training, serving and preprocessing."""
    if isinstance(workload, Rlhf):
        if workload.algorithm == "dpo":
            return FINETUNE_GLOBAL_BATCH
        return PPO_MINI_BATCH * (GRPO_RESPONSES if workload.algorithm == "grpo" else 1)
    if isinstance(workload, Finetune):
        return FINETUNE_GLOBAL_BATCH
    return None


_TRAINING = (Pretrain, Finetune, Rlhf)
"""The workloads with a global batch (a tuple: ``Pretrain | Finetune | Rlhf`` written in
the call would build a union on every call, and the planner asks per request)."""


def asked_global_batch(workload: object) -> int | None:
    """The request's own ``global_batch_size`` (training only), or ``None``."""
    if isinstance(workload, _TRAINING):
        return workload.global_batch_size
    return None


def global_batch(workload: object, tokens: float | None) -> int | None:
    """Sequences per optimizer step the planner plans ``workload`` at: the request's
    ``global_batch_size``, else :func:`default_global_batch`, for a fine-tune or DPO with
    ``tokens`` known at most the run's sequences over :data:`MIN_OPTIMIZER_STEPS`,
    rounded down to a power of two; never under one micro batch; ``None``: unbounded
    (pre-training without a batch sent, serving, preprocessing)."""
    micro = micro_batch(workload)
    asked = asked_global_batch(workload)
    if asked is not None:
        return max(asked, micro)
    batch = default_global_batch(workload)
    if batch is None:
        return None
    seq_len = getattr(workload, "seq_len", None)
    short_rule = isinstance(workload, Finetune) or getattr(workload, "algorithm", "") == "dpo"
    if short_rule and tokens and seq_len:
        steps_allow = int(tokens / seq_len / MIN_OPTIMIZER_STEPS)
        if steps_allow < batch:
            # a power of two, as recipes write their batches (Alpaca's 128, LLaMA-Factory's
            # 8 above): DeepSpeed's train_batch_size = micro x accumulation x world size
            # (https://www.deepspeed.ai/docs/config-json/) and Megatron-LM's global batch
            # must be divisible by micro x data-parallel size (NVIDIA/Megatron-LM
            # megatron/core/num_microbatches_calculator.py@00caa53a), so a power of two
            # is divisible by every power-of-two width the planner places (1-8 GPUs per
            # server, doublings of servers)
            batch = 1 << max(steps_allow, 1).bit_length() - 1
    return max(batch, micro)


def shortened(workload: object, batch: int) -> bool:
    """Whether ``batch`` (what :func:`global_batch` gave) is the short-run rule's, smaller
    than the recipes' batch for lack of optimizer steps (not one the request sent)."""
    if asked_global_batch(workload) is not None:
        return False
    default = default_global_batch(workload)
    return default is not None and batch < default


def micro_batch(workload: object) -> int:
    """Sequences (DPO: pairs) per device per micro-step."""
    return getattr(workload, "micro_batch_size", None) or 1


def replica_ceiling(workload: object, tokens: float | None) -> tuple[int, int] | None:
    """(most data-parallel replicas, the global batch in sequences that bounds them), or
    ``None`` when the job's width is not bounded by its batch. With the global batch and
    the accumulation steps both sent, each replica takes that many micro-batches a step
    (accumulation steps alone leave the assumed batch's bound as it was)."""
    batch = global_batch(workload, tokens)
    if batch is None:
        return None
    per_replica = micro_batch(workload)
    if asked_global_batch(workload) is not None:
        per_replica *= getattr(workload, "gradient_accumulation_steps", None) or 1
    return max(1, batch // per_replica), batch


def replicas(devices: int, tensor_parallel: int, pipeline_parallel: int) -> int:
    """Data-parallel replicas of a layout: the devices over one model copy's."""
    return max(1, devices // max(1, tensor_parallel * pipeline_parallel))
