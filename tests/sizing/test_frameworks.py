"""Sizing v2 mechanisms: framework loss handling, engines, MoE/T5 architectures, TP/PP,
RLHF, calibrated ranges and the safe fit check, each asserted by its number."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing import (
    Placement,
    ResolvedWorkload,
    Workload,
    estimate,
    fit_placement,
    memory_for,
    resolve_workload,
    time_for,
)
from service.sizing.compute import BANDWIDTH_EFFICIENCY, rollout_seconds
from service.sizing.memory import training_layouts
from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.uncertainty import SPREADS

MODELS = ModelRegistry(builtin_presets())
ACC = AcceleratorRegistry(builtin_accelerators())
GIB = 2.0**30


def rw_of(**obj: Any) -> ResolvedWorkload:
    return resolve_workload(msgspec.convert(obj, Workload), MODELS)


def spec(name: str) -> AcceleratorSpec:
    s = ACC.resolve(name)
    assert s is not None
    return s


def acts(**obj: Any) -> float:
    return memory_for(rw_of(**obj), 1).activations_gib * GIB


def test_loss_bytes_per_logit_follow_the_framework() -> None:
    """No checkpointing, so logits add to the layers' activations: the difference between
    two frameworks is exactly s·b·V·(their bytes per logit)."""
    base = {"kind": "finetune", "model": "llama-2-7b", "seq_len": 4096, "method": "lora"}
    logits = 4096 * 32000
    hf = acts(**base, framework="hf", gradient_checkpointing=False)
    tune = acts(**base, framework="torchtune", gradient_checkpointing=False)
    mega = acts(**base, framework="megatron", gradient_checkpointing=False)
    assert hf - tune == pytest.approx(logits * (16 - 3))
    assert hf - mega == pytest.approx(logits * (16 - 6))
    chunked = acts(**base, framework="hf", gradient_checkpointing=False, chunked_loss=True)
    assert chunked == pytest.approx(tune)


def test_ms_swift_memory_depends_on_batch_times_sequence_only() -> None:
    """With FlashAttention and full recompute, every sized tensor of a fine-tune grows with
    batch x sequence: the layer-boundary checkpoints (L·s·b·h·2), one recomputed layer and
    the loss (s·b·V·bytes per logit). Two sequences of 2,048 tokens hold what one of 4,096
    holds, to the byte, and one more sequence adds exactly its own tensors.

    This is the property the ms-swift benchmark's dev readings contradict (docs/sizing.md,
    "ms-swift rows"): Qwen-7B LoRA at batch 2 x 2,048 reads 43.11 GiB and at batch 1 x 4,096
    35.31 GiB, the same tensors 7.8 GiB apart, so the 2,048-token shortfall is the caching
    allocator's history under variable-length batches (``torch.cuda.max_memory_reserved``),
    not a batch, sequence or vocabulary term to add."""
    base = {
        "kind": "finetune",
        "model": "qwen-7b",
        "method": "lora",
        "framework": "ms-swift",
        "flash_attention": True,
        "gradient_checkpointing": True,
    }
    two = memory_for(rw_of(**base, seq_len=2048, micro_batch_size=2), 1)
    one = memory_for(rw_of(**base, seq_len=4096, micro_batch_size=1), 1)
    assert two.activations_gib == pytest.approx(one.activations_gib)
    assert two.per_device_gib == pytest.approx(one.per_device_gib)
    # one more sequence of 2,048 tokens adds its own: the checkpoints (32 layers x 4096
    # hidden, 16-bit), the logits at ms-swift's 24 B each (the loss peak, larger than the
    # recomputed layer it does not coincide with) and the recomputed layer's unsharded part
    b1 = acts(**base, seq_len=2048, micro_batch_size=1)
    b2 = acts(**base, seq_len=2048, micro_batch_size=2)
    assert b2 == pytest.approx(2 * b1)
    logits, checkpoints = 2048 * 151936 * 24.0, 32 * 2048 * 4096 * 2.0
    assert 0 < b1 - logits - checkpoints < 0.01 * logits


def test_a_compiled_chunked_loss_keeps_no_fp32_chunk() -> None:
    """torchtune's compile_loss fuses each chunk's upcast and cross-entropy: 2.25 B per
    logit instead of 3; the whole-vocabulary fp32 loss is left as it is (not modelled)."""
    base = {"kind": "finetune", "model": "llama-2-7b", "seq_len": 4096, "method": "lora",
            "gradient_checkpointing": False}  # fmt: skip
    logits = 4096 * 32000
    tune = acts(**base, framework="torchtune")
    compiled = acts(**base, framework="torchtune", compiled_loss=True)
    assert tune - compiled == pytest.approx(logits * (3 - 2.25))
    hf = acts(**base, framework="hf")
    assert acts(**base, framework="hf", compiled_loss=True) == pytest.approx(hf)
    chunked = acts(**base, framework="hf", chunked_loss=True, compiled_loss=True)
    assert chunked == pytest.approx(compiled)


def test_checkpointing_defaults_by_framework_and_the_loss_peak_is_not_summed() -> None:
    base = {"kind": "finetune", "model": "llama-2-7b", "seq_len": 4096, "method": "lora"}
    mega = rw_of(**base, framework="megatron")
    lf = rw_of(**base, framework="llama-factory")
    assert mega.training is not None
    assert not mega.training.recompute
    assert lf.training is not None
    assert lf.training.recompute
    # checkpointed: every layer's input is kept, and the loss peak (larger than one
    # recomputed layer here) replaces that layer's set instead of adding to it
    logits = 4096 * 32000 * 16.0
    assert lf.training.act_sharded == pytest.approx(logits)
    assert lf.training.act_unsharded > 32 * 4096 * 4096 * 2


def test_unsloth_offloads_checkpoints() -> None:
    base = {"kind": "finetune", "model": "llama-2-7b", "seq_len": 4096, "method": "qlora"}
    assert acts(**base, framework="unsloth") < acts(**base, framework="torchtune")


def test_deepspeed_and_megatron_gradient_buffers() -> None:
    base = {"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e9, "method": "full"}
    base.pop("method")
    n = 6_738_415_616
    ds = memory_for(rw_of(**base, framework="deepspeed"), 1).gradients_gib * GIB
    mg = memory_for(rw_of(**base, framework="megatron"), 1).gradients_gib * GIB
    hf = memory_for(rw_of(**base, framework="hf"), 1).gradients_gib * GIB
    assert (ds, mg, hf) == (pytest.approx(6 * n), pytest.approx(4 * n), pytest.approx(2 * n))


def test_engine_prefill_workspace() -> None:
    """Plain transformers prefills the whole prompt; vLLM a 2048-token chunk."""
    base = {"kind": "inference", "model": "llama-2-7b", "context_len": 32768}
    hf = memory_for(rw_of(**base, engine="hf"), 1).activations_gib
    vllm = memory_for(rw_of(**base, engine="vllm"), 1).activations_gib
    assert hf / vllm == pytest.approx(16, rel=0.05)


def test_moe_spec_and_validation() -> None:
    rw = rw_of(
        kind="inference",
        model={"params_b": 46.7, "experts": 8, "experts_per_token": 2, "layers": 32,
               "hidden": 4096, "heads": 32, "kv_heads": 8, "intermediate": 14336,
               "vocab": 32000},
    )  # fmt: skip
    assert rw.arch is not None
    assert rw.arch.kind == "moe"
    assert rw.arch.active_params / 1e9 == pytest.approx(46.7 - 3 * 4096 * 14336 * 32 * 6 / 1e9)
    with pytest.raises(InputError) as err:
        rw_of(kind="inference", model={"params_b": 7, "experts_per_token": 2})
    assert err.value.field == "workload.model.experts_per_token"


def test_encoder_decoder_kv_cache() -> None:
    rw = rw_of(
        kind="inference",
        model={"params_b": 2.85, "encoder_layers": 24, "decoder_layers": 24, "hidden": 1024,
               "heads": 32, "kv_heads": 32, "head_dim": 128, "vocab": 32128},
        precision="fp16",
    )  # fmt: skip
    assert rw.arch is not None
    assert (rw.arch.kind, rw.arch.layers, rw.arch.decoder_layers) == ("seq2seq", 48, 24)
    assert rw.inference is not None
    assert rw.inference.kv_per_token == 2 * (2 * 24 * 32 * 128 * 2)
    with pytest.raises(InputError) as err:
        rw_of(kind="inference", model={"params_b": 3, "encoder_layers": 24})
    assert err.value.field == "workload.model.decoder_layers"


def test_tensor_and_pipeline_parallel_training() -> None:
    """A framework that runs tensor and pipeline parallelism (Megatron-LM) shards the
    layers of a 70B pre-train; Hugging Face Trainer (the default) never does, and tensor
    parallelism stays on NVLink/HCCS parts (service/sizing/parallelism.py)."""
    rw = rw_of(kind="pretrain", model="llama-2-70b", tokens=1e9, framework="megatron")
    m1 = memory_for(rw, 64, 1, 1, 1)
    m8 = memory_for(rw, 64, 1, 8, 1)
    m8x4 = memory_for(rw, 64, 1, 8, 4)
    assert m8.weights_gib == pytest.approx(m1.weights_gib / 8)
    assert m8x4.weights_gib == pytest.approx(m1.weights_gib / 32)
    assert m8x4.activations_gib == pytest.approx(m8.activations_gib)
    assert (1, 1) in training_layouts(rw, 64)
    assert (8, 2) in training_layouts(rw, 64)
    # 70B full training does not fit 64 x 80 GB by the distributed optimizer (ZeRO-1)
    # alone: the fit splits the layers over the NVLink server
    fit = fit_placement(rw, spec("A100-80GB"), 64, 0.05)
    assert fit is not None
    assert (fit.zero_stage, fit.tensor_parallel) == (1, 8)
    r = estimate(
        rw.workload,
        Placement(accelerator="A100-80GB", count=16, tensor_parallel=8, pipeline_parallel=2),
        MODELS,
        ACC,
    )
    assert r.placement is not None
    assert (r.placement.tensor_parallel, r.placement.pipeline_parallel) == (8, 2)
    with pytest.raises(InputError) as err:
        estimate(rw.workload, Placement(accelerator="A100-80GB", count=12, tensor_parallel=8),
                 MODELS, ACC)  # fmt: skip
    assert err.value.field == "placement.tensor_parallel"
    # Hugging Face Trainer on 64 PCIe RTX 4090s: data parallelism and ZeRO only, no TP/PP
    hf = rw_of(kind="pretrain", model="llama-2-70b", tokens=1e9)
    assert hf.workload.framework == "hf"
    assert training_layouts(hf, 64) == [(1, 1)]
    pcie = fit_placement(hf, spec("RTX-4090"), 64, 0.05)
    assert pcie is not None
    assert (pcie.zero_stage, pcie.tensor_parallel, pcie.pipeline_parallel) == (3, 1, 1)


def test_rlhf_budgets_add_the_models() -> None:
    ppo = rw_of(kind="rlhf", algorithm="ppo", model="llama-2-7b", tokens=1e8)
    grpo = rw_of(kind="rlhf", algorithm="grpo", model="llama-2-7b", tokens=1e8)
    lora = rw_of(kind="rlhf", algorithm="grpo", model="llama-2-7b", tokens=1e8, method="lora")
    n = 6_738_415_616
    assert ppo.training is not None
    assert grpo.training is not None
    assert lora.training is not None
    # PPO: actor + critic trained; reference + reward frozen 16-bit
    assert ppo.training.frozen_weights == pytest.approx(2 * n * 2)
    assert ppo.training.train_weights == pytest.approx(2 * n * 2)
    # GRPO: reference only; LoRA: the base is the reference
    assert grpo.training.frozen_weights == pytest.approx(n * 2)
    assert lora.training.frozen_weights == pytest.approx(n * 2)
    assert ppo.training.flops_per_token > grpo.training.flops_per_token
    t = time_for(ppo, spec("A100-80GB"), 8)
    assert t is not None
    assert t.basis == "steady"
    with pytest.raises(InputError) as err:
        rw_of(kind="rlhf", algorithm="grpo", model="llama-2-7b", critic_model="llama-2-7b")
    assert err.value.field == "workload.critic_model"


def test_rlhf_model_flops_count_every_pass() -> None:
    """PPO per token of a 7B actor and same-shape critic: actor train (3 forwards) + old
    log-probabilities (1) + reference (1), critic train (3) + values (1), reward (1) =
    10 forwards; GRPO without a reward model: 3 + 1 + 1 = 5."""
    ppo = rw_of(
        kind="rlhf", algorithm="ppo", model="llama-2-7b", tokens=1e8, seq_len=512, response_len=256
    )
    grpo = rw_of(
        kind="rlhf", algorithm="grpo", model="llama-2-7b", tokens=1e8, seq_len=512, response_len=256
    )
    assert ppo.training is not None
    assert grpo.training is not None
    assert ppo.arch is not None
    fwd = 2 * ppo.arch.active_params + 4 * 32 * 4096 * 512
    assert ppo.training.model_flops_per_token == pytest.approx(10 * fwd)
    assert grpo.training.model_flops_per_token == pytest.approx(5 * fwd)


def test_rollouts_decode_in_the_framework_loop() -> None:
    """DeepSpeed-Chat and TRL generate with Hugging Face ``generate()`` (eager: 2 ms per
    step and 0.6 ms per layer), verl-style stacks with vLLM: the same PPO job's rollout
    is slower under ``deepspeed`` than under ``megatron``, by the overhead difference and
    by half the weights each step reads: vLLM's engine runs verl's default tensor
    parallel 2 (rollout.yaml), DeepSpeed-Chat's hybrid engine ``--inference_tp_size`` 1."""
    obj: dict[str, Any] = {
        "kind": "rlhf", "algorithm": "ppo", "model": "llama-2-7b", "tokens": 1e8,
        "seq_len": 512, "response_len": 256,
    }  # fmt: skip
    ds = rw_of(**obj, framework="deepspeed")
    mg = rw_of(**obj, framework="megatron")
    a100 = spec("A100-80GB")
    t_ds, t_mg = rollout_seconds(ds, a100, 8), rollout_seconds(mg, a100, 8)
    steps = 1e8 / 512 / (8 * 16) * 256
    extra = (2e-3 + 32 * 0.6e-3) - (1.5e-3 + 32 * 60e-6)
    assert mg.arch is not None
    assert a100.mem_bandwidth_gbps
    half = mg.arch.params * 2.0 / 2 / (a100.mem_bandwidth_gbps * 1e9 * BANDWIDTH_EFFICIENCY)
    assert t_ds - t_mg == pytest.approx(steps * (extra + half), rel=1e-6)


def test_data_parallel_traffic_bounds_pcie_training() -> None:
    """8 x RTX 4090 (PCIe 4.0, four per CPU socket: the ring crosses the sockets at NCCL's
    10 GB/s), ZeRO-3 full fine-tune of a 7B model at 512 tokens per micro-step: each
    micro-step all-gathers the 16-bit weights for the forward (7/8 x 2N B, overlapping the
    forward) and again for the backward with the gradients' reduce-scatter (overlapping
    the backward); each phase costs the larger of its compute and its traffic. On NVLink
    (A100, 300 GB/s one way) the compute stays the bound."""
    obj: dict[str, Any] = {
        "kind": "finetune", "model": "llama-2-7b", "method": "full", "seq_len": 512,
        "tokens": 1e8, "time_basis": "steady",
    }  # fmt: skip
    rw = rw_of(**obj)
    assert rw.training is not None
    n = 6_738_415_616
    pcie = time_for(rw, spec("RTX-4090"), 8, zero_stage=3)
    one = time_for(rw, spec("RTX-4090"), 1)
    assert pcie is not None
    assert one is not None
    micro_steps = 1e8 / (512 * 8)
    micro = one.hours * 3600 / 8 / micro_steps
    forward = micro * rw.training.model_flops_per_token / 3 / rw.training.flops_per_token
    gather = 7 / 8 * 2 * n / 10e9
    exposed = max(gather - forward, 0) + max(2 * gather - (micro - forward), 0)
    assert exposed > 0
    assert pcie.hours * 3600 == pytest.approx(micro_steps * (micro + exposed), rel=1e-6)
    nvlink, flat = (
        time_for(rw, spec("A100-80GB"), 8, zero_stage=3),
        time_for(rw, spec("A100-80GB"), 8),
    )
    assert nvlink is not None
    assert flat is not None
    assert nvlink.hours == pytest.approx(flat.hours)


def test_pipeline_bubble_slows_steady_training_only() -> None:
    """1F1B over p = 8 stages and (by default) m = 8 micro-batches: (m + p - 1) / m =
    15/8 of the unpipelined time at the steady basis; whole-run priors already hold it."""
    steady = rw_of(kind="pretrain", model="llama-2-70b", tokens=1e9, time_basis="steady")
    run = rw_of(kind="pretrain", model="llama-2-70b", tokens=1e9, time_basis="run")
    a100 = spec("A100-80GB")
    flat, piped = time_for(steady, a100, 64), time_for(steady, a100, 64, pipeline_parallel=8)
    assert flat is not None
    assert piped is not None
    assert piped.hours == pytest.approx(flat.hours * 15 / 8)
    ga = rw_of(kind="pretrain", model="llama-2-70b", tokens=1e9, time_basis="steady",
               gradient_accumulation_steps=32)  # fmt: skip
    t_ga = time_for(ga, a100, 64, pipeline_parallel=8)
    assert t_ga is not None
    assert t_ga.hours == pytest.approx(flat.hours * 39 / 32)
    r_flat, r_piped = time_for(run, a100, 64), time_for(run, a100, 64, pipeline_parallel=8)
    assert r_flat is not None
    assert r_piped is not None
    assert r_piped.hours == pytest.approx(r_flat.hours)


def test_ranges_come_from_the_calibrated_spreads() -> None:
    rw = rw_of(kind="finetune", model="llama-2-7b", method="qlora")
    m = memory_for(rw, 1)
    s = SPREADS["train_memory"]
    assert m.range_gib == (pytest.approx(m.per_device_gib * s.low),
                           pytest.approx(m.per_device_gib * s.high))  # fmt: skip


def test_safe_fit_checks_the_high_end() -> None:
    """A job whose estimate fits but whose range's high end does not: the safe check
    (asked for by a planner headroom) refuses it and says why."""
    t4 = spec("T4")
    for seq in range(256, 16384, 256):
        rw = rw_of(kind="finetune", model="llama-2-7b", method="qlora", seq_len=seq)
        m = memory_for(rw, 1)
        if m.per_device_gib <= 16 * 0.9 and m.range_gib[1] > 16:
            break
    else:  # pragma: no cover
        pytest.fail("no sequence length lands between the estimate and its high end")
    assert fit_placement(rw, t4, 1, 0.1) is not None
    safe = fit_placement(rw, t4, 1, 0.1, safe=True)
    assert safe is None
    ok = fit_placement(rw_of(kind="finetune", model="llama-2-7b", method="qlora", seq_len=256),
                       t4, 1, 0.1, safe=True)  # fmt: skip
    assert ok is not None
    assert ok.checked_high


def test_consumer_gpus_are_in_the_registry() -> None:
    for name, memory, bandwidth in [
        ("RTX-4090", 24, 1008),
        ("RTX-3090", 24, 936),
        ("RTX-A6000", 48, 768),
        ("A40", 48, 696),
        ("L40", 48, 864),
        ("L4", 24, 300),
    ]:
        s = spec(name)
        assert (s.memory_gib, s.mem_bandwidth_gbps) == (memory, bandwidth)
        assert s.source


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "finetune", "model": "llama-2-7b", "method": "full", "offload": "optimizer"},
        {"kind": "rlhf", "algorithm": "ppo", "model": "llama-2-7b"},
        {"kind": "pretrain", "model": "llama-2-7b", "precision": "fp8"},
    ],
)
def test_time_is_linear_in_tokens(obj: dict[str, Any]) -> None:
    """The planner times a placement once per token (FitCache.hours_per_token): every term
    (FLOPs, offload traffic, rollout decode) must scale with the token count."""
    one = time_for(rw_of(**obj, tokens=1e8), spec("H800"), 8)
    two = time_for(rw_of(**obj, tokens=2e8), spec("H800"), 8)
    assert one is not None
    assert two is not None
    assert two.hours == pytest.approx(2 * one.hours)


def test_torchtitan_pipeline_stages_keep_weights_and_fp32_gradients_whole() -> None:
    """FSDP2 under a pipeline schedule: the stage's 16-bit weights stay gathered and its
    gradient accumulates unsharded in fp32; the fp32 master and Adam states stay sharded
    (12 B/param over all 512 devices). Other frameworks shard all of it."""
    base = {"kind": "pretrain", "model": "llama-3.1-405b", "seq_len": 8192, "tokens": 1e9}
    arch = rw_of(**base).arch
    assert arch is not None
    n = arch.params
    tt = memory_for(rw_of(**base, framework="torchtitan"), 512, 3, 8, 8)
    assert tt.weights_gib * GIB == pytest.approx(2 * n / 64)
    assert tt.gradients_gib * GIB == pytest.approx(4 * n / 64)
    assert tt.optimizer_gib * GIB == pytest.approx(12 * n / 512)
    mega = memory_for(rw_of(**base, framework="megatron"), 512, 3, 8, 8)
    assert mega.weights_gib * GIB == pytest.approx(2 * n / 512)
    # without pipeline stages torchtitan reshards after forward like any FSDP
    flat = memory_for(rw_of(**base, framework="torchtitan"), 512, 3, 8, 1)
    assert flat.weights_gib * GIB == pytest.approx(2 * n / 512)


def test_eight_bit_optimizer_states_do_not_halve_in_pure_16bit() -> None:
    base = {"kind": "finetune", "model": "llama-2-7b", "method": "full", "mixed_precision": False}
    n = 6_738_415_616
    eight = memory_for(rw_of(**base, optimizer="adamw_8bit"), 1).optimizer_gib * GIB
    torch_adamw = memory_for(rw_of(**base, optimizer="adamw"), 1).optimizer_gib * GIB
    assert (eight, torch_adamw) == (pytest.approx(2 * n), pytest.approx(4 * n))


def test_serving_engines_say_what_they_preallocate() -> None:
    """vLLM's answer explains why nvidia-smi shows more than the estimate; plain
    transformers allocates as it goes and says nothing of the kind."""
    base = {"kind": "inference", "model": "llama-2-7b", "context_len": 4096}
    vllm = " ".join(rw_of(**base, engine="vllm").assumptions)
    hf = " ".join(rw_of(**base, engine="hf").assumptions)
    assert "pre-allocates gpu_memory_utilization" in vllm
    assert "nvidia-smi" not in hf


def test_old_bitsandbytes_under_ms_swift_keeps_every_4bit_linear_input() -> None:
    """bitsandbytes before 0.43.2 keeps each 4-bit linear's input on ``ctx`` (outside
    save_for_backward); ms-swift's non-reentrant checkpointing cannot drop it, so every
    layer holds the inputs of its quantized linears until the backward: qkv and MLP input
    (h each), attention output (h) and the MLP's inner activation (intermediate), 16-bit."""
    base = {
        "kind": "finetune",
        "model": "qwen-7b",
        "method": "qlora",
        "seq_len": 2048,
        "micro_batch_size": 2,
        "framework": "ms-swift",
    }
    # Qwen-7B: 32 layers, hidden 4096, MLP width 11008 (intermediate_size 22016 / 2)
    stashed = 32 * 2048 * 2 * (3 * 4096 + 11008) * 2.0
    old = acts(**base, bitsandbytes_version="0.41.3.post2")
    assert old - acts(**base) == pytest.approx(stashed)
    # the fixed release, reentrant checkpointing (HF) and no checkpointing add nothing
    assert acts(**base, bitsandbytes_version="0.43.2") == pytest.approx(acts(**base))
    hf = {**base, "framework": "hf"}
    assert acts(**hf, bitsandbytes_version="0.41.3") == pytest.approx(acts(**hf))
    nogc = {**base, "gradient_checkpointing": False}
    assert acts(**nogc, bitsandbytes_version="0.41.3") == pytest.approx(acts(**nogc))
    # a sent release that changes nothing is still answered, not ignored
    notes = rw_of(**hf, bitsandbytes_version="0.41.3").assumptions
    assert any("bitsandbytes 0.41.3: no 4-bit linear input is kept" in n for n in notes)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"method": "lora", "bitsandbytes_version": "0.41.3"}, "workload.bitsandbytes_version"),
        ({"method": "qlora", "bitsandbytes_version": "latest"}, "workload.bitsandbytes_version"),
    ],
)
def test_bitsandbytes_version_is_checked(extra: dict[str, Any], field: str) -> None:
    obj = {"kind": "finetune", "model": "qwen-7b", "framework": "ms-swift", **extra}
    with pytest.raises((InputError, msgspec.ValidationError)) as err:
        rw_of(**obj)
    assert "bitsandbytes_version" in str(err.value)
