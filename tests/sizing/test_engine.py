"""The façade the planner uses: memory, fit, time, throughput, host and estimate."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing import (
    MemoryBreakdown,
    Placement,
    ResolvedWorkload,
    Workload,
    estimate,
    fit_placement,
    host_for,
    inference_throughput,
    memory_for,
    preprocess_hours,
    resolve_workload,
    time_for,
)
from service.sizing.presets import ModelRegistry, builtin_presets

MODELS = ModelRegistry(builtin_presets())
ACC = AcceleratorRegistry(builtin_accelerators())
GIB = 2.0**30


def workload(obj: dict[str, Any]) -> Workload:
    w: Workload = msgspec.convert(obj, Workload)
    return w


def rw_of(**obj: Any) -> ResolvedWorkload:
    return resolve_workload(workload(obj), MODELS)


def spec(name: str) -> AcceleratorSpec:
    s = ACC.resolve(name)
    assert s is not None
    return s


def parts(m: MemoryBreakdown) -> float:
    return (
        m.weights_gib
        + m.gradients_gib
        + m.optimizer_gib
        + m.activations_gib
        + m.kv_cache_gib
        + m.overhead_gib
    )


def test_kv_cache_scales_with_context_and_concurrency() -> None:
    rw = rw_of(kind="inference", model="llama-2-7b", context_len=4096, concurrency=8)
    m = memory_for(rw, 1)
    assert m.kv_cache_gib == 524_288 * 4096 * 8 / GIB == 16.0
    assert m.weights_gib == pytest.approx(6_738_415_616 * 2 / GIB)
    assert m.per_device_gib == parts(m)


def test_tensor_parallel_splits_weights_and_kv() -> None:
    rw = rw_of(kind="inference", model="llama-2-70b", context_len=4096, concurrency=4)
    one, four = memory_for(rw, 4, tensor_parallel=1), memory_for(rw, 4, tensor_parallel=4)
    assert four.weights_gib == pytest.approx(one.weights_gib / 4)
    # 4 replicas of 1 sequence each vs one TP-4 replica of 4 sequences over 8 KV heads
    assert one.kv_cache_gib == pytest.approx(327_680 * 4096 / GIB)
    assert four.kv_cache_gib == pytest.approx(327_680 * 4096 * 4 / 4 / GIB)


def test_inference_fit_takes_the_smallest_tp() -> None:
    rw = rw_of(kind="inference", model="llama-2-70b", concurrency=4)
    a100 = spec("A100-80GB")
    fit = fit_placement(rw, a100, 8, 0.1)
    assert fit is not None
    assert fit.zero_stage is None
    assert fit.tensor_parallel == 2  # 4 copies, one sequence each
    # one sequence on 8 devices: not 4 copies of which 3 idle, but tensor parallel 8
    lone = fit_placement(rw_of(kind="inference", model="llama-2-70b"), a100, 8, 0.1)
    assert lone is not None
    assert lone.tensor_parallel == 8
    assert memory_for(rw, 8, tensor_parallel=1).per_device_gib > 80 * 0.9
    assert fit.headroom_gib == pytest.approx(80 - fit.memory.per_device_gib)


def test_training_fit_takes_the_smallest_zero_stage() -> None:
    rw = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e12)
    a100 = spec("A100-80GB")
    fit = fit_placement(rw, a100, 8, 0.1)
    assert fit is not None
    assert fit.zero_stage == 1
    assert fit.tensor_parallel == 1
    assert memory_for(rw, 8, 0).per_device_gib > 72
    # ZeRO-1 shards only the optimizer: 4Ψ + 12Ψ/8
    m = fit.memory
    p = 6_738_415_616
    assert m.weights_gib + m.gradients_gib == pytest.approx(4 * p / GIB)
    assert m.optimizer_gib == pytest.approx(12 * p / 8 / GIB)


def test_nothing_fits_returns_none() -> None:
    rw = rw_of(kind="pretrain", model="llama-3.1-405b", tokens=1e12)
    assert fit_placement(rw, spec("T4"), 1, 0.0) is None
    assert fit_placement(rw_of(kind="preprocess", data_gb=10), spec("T4"), 1, 0.0) is None


def test_given_zero_stage_is_respected() -> None:
    rw = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e12)
    fit = fit_placement(rw, spec("A100-80GB"), 8, 0.1, zero_stage=3)
    assert fit is not None
    assert fit.zero_stage == 3


def test_deepspeed_zero3_charges_the_largest_layer() -> None:
    generic = rw_of(kind="finetune", model="llama-2-7b", method="full")
    ds = rw_of(kind="finetune", model="llama-2-7b", method="full", framework="deepspeed")
    g, d = memory_for(generic, 8, 3), memory_for(ds, 8, 3)
    p, ll = 6_738_415_616, 32000 * 4096
    assert g.weights_gib + g.gradients_gib + g.optimizer_gib == pytest.approx(16 * p / 8 / GIB)
    assert d.weights_gib + d.gradients_gib + d.optimizer_gib == pytest.approx(
        (18 * p / 8 + 4 * ll) / GIB
    )


def test_offload_moves_states_to_host_ram() -> None:
    rw = rw_of(kind="finetune", model="llama-2-7b", method="full", offload="optimizer")
    m = memory_for(rw, 8, 2)
    assert m.gradients_gib == m.optimizer_gib == 0.0
    assert m.weights_gib == pytest.approx(6_738_415_616 * 2 / GIB)
    host = host_for(rw, 8)
    assert host.offload_ram_gib == pytest.approx(6_738_415_616 * 32 * 1.5 / GIB)
    assert host.ram_gib > host.offload_ram_gib


def test_run_time_is_model_flops_over_peak_and_mfu() -> None:
    """A pre-training defaults to the whole-run basis: model FLOPs (6·N + attention
    12·L·a·d·s) over peak x the run MFU prior."""
    rw = rw_of(kind="pretrain", model="llama-2-7b", tokens=2e12, seq_len=4096)
    t = time_for(rw, spec("A100-80GB"), 512)
    assert t is not None
    assert (t.mfu, t.basis) == (0.40, "run")
    per_token = 6 * 6_738_415_616 + 12 * 32 * 4096 * 4096
    hours = per_token * 2e12 / (512 * 312e12 * 0.40) / 3600
    assert t.hours == pytest.approx(hours)
    assert t.device_hours == pytest.approx(hours * 512)
    lo, hi = t.hours_range
    assert lo < t.hours < hi


def test_steady_lora_time_charges_no_weight_gradients_and_the_recompute() -> None:
    """Steady-state fine-tune: frozen weights get input gradients only (4·N instead of
    6·N), checkpointing adds one forward; divided by the steady hardware utilization."""
    rw = rw_of(
        kind="finetune", model="llama-2-7b", method="lora", tokens=1e9, seq_len=2048,
        framework="torchtune", gradient_checkpointing=True,
    )  # fmt: skip
    t = time_for(rw, spec("A100-80GB"), 1)
    assert t is not None
    assert t.basis == "steady"
    n = 6_738_415_616
    attn = 4 * 32 * 4096 * 2048
    hw = (2 * n + attn) + (2 * n + 2 * attn) + (2 * n + attn)
    assert t.hours == pytest.approx(hw * 1e9 / (312e12 * 0.62) / 3600)
    full = rw_of(
        kind="finetune", model="llama-2-7b", method="full", tokens=1e9, seq_len=2048,
        framework="torchtune", gradient_checkpointing=True,
    )  # fmt: skip
    t_full = time_for(full, spec("A100-80GB"), 1)
    assert t_full is not None
    assert t_full.hours > t.hours * 1.2


def test_fp8_runs_at_its_measured_gain() -> None:
    bf16 = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e9)
    fp8 = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e9, precision="fp8")
    t16, t8 = time_for(bf16, spec("H800"), 8), time_for(fp8, spec("H800"), 8)
    assert t16 is not None
    assert t8 is not None
    assert t16.hours / t8.hours == pytest.approx(1.3)


def test_offload_adds_host_link_time() -> None:
    on = rw_of(kind="finetune", model="llama-2-7b", method="full", tokens=1e8, offload="optimizer")
    off = rw_of(kind="finetune", model="llama-2-7b", method="full", tokens=1e8)
    t_on, t_off = time_for(on, spec("A100-80GB"), 8), time_for(off, spec("A100-80GB"), 8)
    assert t_on is not None
    assert t_off is not None
    steps = 1e8 / (2048 * 8)
    extra = steps * (6_738_415_616 * 4 / 8) / 25e9 / 3600
    assert t_on.hours - t_off.hours == pytest.approx(extra)


def test_time_unknown_without_tokens_or_peak() -> None:
    assert time_for(rw_of(kind="finetune", model="llama-2-7b"), spec("A100-80GB"), 1) is None
    rw = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e9, precision="fp32")
    assert time_for(rw, spec("H800"), 1) is None  # no published FP32 figure in the registry


def test_moe_compute_counts_active_parameters() -> None:
    rw = rw_of(kind="pretrain", model="mixtral-8x7b", tokens=1e9)
    r = estimate(rw.workload, Placement(accelerator="H800", count=64), MODELS, ACC)
    assert r.compute.flops == pytest.approx(6 * 12_879_925_248 * 1e9)
    assert r.memory.weights_gib * 64 > 2 * 46.7e9 / GIB  # memory by total params (ZeRO-3)
    assert any("MoE" in a for a in r.assumptions)


def test_decode_throughput_is_bandwidth_bound() -> None:
    """A step reads the weights (not the input embedding table) and the KV cache at 85 %
    of peak, plus vLLM's per-step and per-layer overheads; tensor parallelism adds the
    bandwidth and two all-reduces per layer (latency plus the activations over one
    direction of NVLink 3: 600 / 2 GB/s, ring factor 2(n-1)/n = 1 for two devices)."""
    rw = rw_of(kind="inference", model="llama-2-7b", context_len=4096)
    a100 = spec("A100-80GB")
    read = 6_738_415_616 * 2 - 32000 * 4096 * 2 + 524_288 * 4096
    step = read / (2039e9 * 0.85) + 1.5e-3 + 32 * 60e-6
    assert inference_throughput(rw, a100, 1) == pytest.approx(1 / step)
    allreduce = 25e-6 + 1.0 * 4096 * 2 / 300e9
    step2 = read / (2 * 2039e9 * 0.85) + 1.5e-3 + 32 * 60e-6 + 2 * 32 * allreduce
    assert inference_throughput(rw, a100, 2) == pytest.approx(1 / step2)


def test_tensor_parallel_all_reduce_grows_with_the_batch() -> None:
    """At 64 sequences each all-reduce carries 64 x 4096 x 2 B of activations: over two
    A100s that is 524 kB at 300 GB/s per direction (1.7 µs) on top of the 25 µs latency,
    64 times per step (32 layers x 2)."""
    a100 = spec("A100-80GB")
    rw = rw_of(kind="inference", model="llama-2-7b", context_len=512, concurrency=64)
    read = 6_738_415_616 * 2 - 32000 * 4096 * 2 + 524_288 * 512 * 64
    allreduce = 25e-6 + 64 * 4096 * 2 / 300e9
    step = read / (2 * 2039e9 * 0.85) + 1.5e-3 + 32 * 60e-6 + 2 * 32 * allreduce
    assert inference_throughput(rw, a100, 2) == pytest.approx(64 / step)


def test_hopper_decode_pays_the_64_row_mma_tile() -> None:
    """H20 (148 TFLOPS BF16, 4.0 TB/s): a batch-1 BF16 decode of an 8B model costs the
    tensor cores 64 rows (wgmma m64), 2 x 8.03e9 x 64 / (148e12 x 0.5) = 13.9 ms, more
    than its weight read; int4 weight-only kernels (16-row tiles) stay bandwidth-bound."""
    h20 = spec("H20")
    rw = rw_of(kind="inference", model="llama-3.1-8b", context_len=2048)
    arch = rw.arch
    assert arch is not None
    floor = 2 * arch.active_params * 64 / (148e12 * 0.5)
    assert inference_throughput(rw, h20, 1) == pytest.approx(1 / floor)
    q = rw_of(kind="inference", model="llama-3.1-8b", context_len=2048, precision="int4")
    assert inference_throughput(q, h20, 1) > 1 / floor


def test_hopper_weight_only_int4_runs_mma_sync_at_three_quarters_of_peak() -> None:
    """Weight-only int4 kernels (Marlin) issue Ampere's ``mma.sync``, which reaches ~75 % of
    Hopper's peak (vLLM PR #7174): on H20 a batch-1 int4 decode of a 14B model costs
    2 x P x 16 / (148e12 x 0.75 x 0.5), more than its 4-bit weight read plus SGLang's
    overheads; on Ampere (A100, native ``mma.sync``) the same decode stays bandwidth-bound."""
    h20, a100 = spec("H20"), spec("A100-80GB")
    rw = rw_of(
        kind="inference", model="qwen2.5-14b", context_len=2049, precision="int4", engine="sglang"
    )
    arch = rw.arch
    assert arch is not None
    floor = 2 * arch.active_params * 16 / (148e12 * 0.75 * 0.5)
    assert inference_throughput(rw, h20, 1) == pytest.approx(1 / floor)
    a100_floor = 2 * arch.active_params * 16 / (312e12 * 0.5)
    assert inference_throughput(rw, a100, 1) < 1 / a100_floor


def test_plain_transformers_decode_pays_eager_overheads_and_runs_layers_in_turn() -> None:
    rw = rw_of(kind="inference", model="llama-2-7b", context_len=4096, engine="hf")
    a100 = spec("A100-80GB")
    # the KV cache moves three times a step: DynamicCache's torch.cat (read + write) and
    # the attention read (Llama-2-7B has as many KV heads as query heads: nothing to expand)
    read = 6_738_415_616 * 2 - 32000 * 4096 * 2 + 3 * 524_288 * 4096
    step = read / (2039e9 * 0.85) + 2e-3 + 32 * 0.6e-3
    assert inference_throughput(rw, a100, 1) == pytest.approx(1 / step)
    assert inference_throughput(rw, a100, 2) == pytest.approx(1 / step)  # no bandwidth gain


def test_plain_transformers_copies_grouped_kv_heads_out_to_every_query_head() -> None:
    """transformers' ``repeat_kv`` (eager, SDPA, and Qwen2's flash-attention class through
    4.47) copies the KV cache to all query heads before the attention: with g = 40 / 8
    for Qwen2.5-14B a step moves the cache 3 + 2g = 13 times (cat read + write, the copy's
    read, g copies written, g read), so a 30,720-token prompt decodes at about a third of
    its one-token speed, as the Qwen2.5 speed benchmark measured (8.20 against 24.74
    tokens/s, BF16, A100-80GB). Paged-KV engines read it once, grouped or not."""
    from service.sizing.compute import decode_step_bytes, kv_passes

    hf = rw_of(
        kind="inference",
        model="qwen2.5-14b",
        context_len=32768,
        prompt_len=30720,
        engine="hf",
        output_tokens=1e6,
    )
    vllm = rw_of(
        kind="inference",
        model="qwen2.5-14b",
        context_len=32768,
        prompt_len=30720,
        engine="vllm",
        output_tokens=1e6,
    )
    assert kv_passes(hf) == pytest.approx(13.0)
    assert kv_passes(vllm) == pytest.approx(1.0)
    assert hf.inference is not None
    kv = hf.inference.kv_per_token * (30720 + 1024)
    assert decode_step_bytes(hf, 1) - decode_step_bytes(vllm, 1) == pytest.approx(12 * kv)
    a100 = spec("A100-80GB")
    long = inference_throughput(hf, a100, 1)
    short = inference_throughput(
        rw_of(kind="inference", model="qwen2.5-14b", context_len=2049, prompt_len=1, engine="hf"),
        a100,
        1,
    )
    assert 0.3 < long / short < 0.5  # measured 8.20 / 24.74 = 0.33
    mha = rw_of(kind="inference", model="llama-2-7b", context_len=4096, engine="hf")
    assert kv_passes(mha) == pytest.approx(3.0)


def test_fp8_tied_model_under_transformers_holds_a_separate_16_bit_head() -> None:
    """The Qwen3 speed benchmark's FP8 rows of the tied 0.6B/1.7B/4B models exceed the FP8
    linears + one 16-bit embedding table by one more 16-bit vocabulary matrix (4B: 5281 MiB
    at one token against 4474 without it); the untied 8B carries no such extra. A decode
    step then reads that head, not the embedding table (looked up one row per token)."""
    from service.sizing.compute import decode_step_bytes

    tied = rw_of(kind="inference", model="qwen3-4b", precision="fp8", engine="hf")
    tied_vllm = rw_of(kind="inference", model="qwen3-4b", precision="fp8", engine="vllm")
    untied = rw_of(kind="inference", model="qwen3-8b", precision="fp8", engine="hf")
    untied_vllm = rw_of(kind="inference", model="qwen3-8b", precision="fp8", engine="vllm")
    bf16 = rw_of(kind="inference", model="qwen3-4b", precision="bf16", engine="hf")
    assert tied.inference is not None
    assert tied_vllm.inference is not None
    assert untied.inference is not None
    assert untied_vllm.inference is not None
    assert bf16.inference is not None
    assert not bf16.inference.untied_head
    head = 151936 * 2560 * 2
    assert tied.inference.untied_head
    assert tied.inference.weights - tied_vllm.inference.weights == pytest.approx(head)
    assert untied.inference.weights == pytest.approx(untied_vllm.inference.weights)
    assert any("16-bit matrix of its own" in a for a in tied.assumptions)
    # the step reads the head once and skips the embedding table, as for an untied model
    kv = tied.inference.kv_per_token * tied.inference.context_len
    passes = 3 + 2 * 32 / 8  # cat read + write, repeat_kv's read, 4 copies written, 4 read
    weights_read = decode_step_bytes(tied, 1) - passes * kv
    assert weights_read == pytest.approx(tied.inference.weights - head)


def test_quantized_decode_leaves_out_the_16_bit_embedding_table() -> None:
    """A GPTQ/AWQ/FP8 checkpoint keeps its embedding table 16-bit, so the step's bytes
    leave out vocab x hidden x 2 B, not the average bytes per parameter (0.67 B for a 14B
    int4, which left about 1 GB of Qwen2.5-14B's table counted as read every step)."""
    from service.sizing.compute import decode_step_bytes

    for precision in ("int4", "int8", "fp8", "bf16"):
        rw = rw_of(kind="inference", model="qwen2.5-14b", context_len=1, precision=precision)
        assert rw.inference is not None
        kv = rw.inference.kv_per_token
        table = 152064 * 5120 * 2
        assert decode_step_bytes(rw, 1) - kv == pytest.approx(rw.inference.weights - table)


def test_moe_decode_reads_only_the_experts_the_batch_touches() -> None:
    from service.sizing.compute import decode_step_bytes, expected_experts

    assert expected_experts(8, 2, 1) == pytest.approx(2)
    assert expected_experts(8, 2, 4) == pytest.approx(8 * (1 - 0.75**4))
    assert expected_experts(256, 8, 10_000) == pytest.approx(256)
    rw1 = rw_of(kind="inference", model="mixtral-8x7b", context_len=1)
    one, many = decode_step_bytes(rw1, 1), decode_step_bytes(rw1, 64)
    assert rw1.inference is not None
    weights = rw1.inference.weights
    assert one < 0.45 * weights  # 2 of 8 experts + attention
    assert many == pytest.approx(weights - 32000 * 4096 * 2, rel=0.01)


def test_fused_moe_decode_pays_the_kernel_latency_per_moe_layer() -> None:
    """vLLM and SGLang run each MoE layer as one Triton ``fused_moe`` call, whose batch-1
    kernel time is about 27 µs beyond its expert bytes (31.7 µs on H200, 29.45 µs on H100,
    39.6 µs on B200 in the engines' tuning benchmarks): Mixtral's 32 MoE layers add
    32 x 27 µs to a vLLM step on an A100, on top of the bytes and the per-layer launch
    overhead; TensorRT-LLM (own CUTLASS MoE kernels, no such timing here) adds nothing."""
    from service.sizing.compute import decode_step_bytes
    from service.sizing.profiles import MOE_KERNEL_LATENCY_S

    # the published kernel times less their expert bytes at 0.85 of peak bandwidth
    for kernel_us, nbytes, tbps in (
        (31.70, 8 * 3 * 4096 * 192, 4.8),
        (29.45, 10 * 3 * 2048 * 128, 3.35),
        (39.61, 8 * 3 * 2048 * 768 * 2, 8.0),
    ):
        fixed = kernel_us * 1e-6 - nbytes / (tbps * 1e12 * 0.85)
        assert fixed == pytest.approx(MOE_KERNEL_LATENCY_S, rel=0.06)
    a100 = spec("A100-80GB")
    rw = rw_of(kind="inference", model="mixtral-8x7b", context_len=1024)
    step = decode_step_bytes(rw, 1) / (2039e9 * 0.85) + 1.5e-3 + 32 * (60e-6 + 27e-6)
    assert inference_throughput(rw, a100, 1) == pytest.approx(1 / step)
    trt = rw_of(kind="inference", model="mixtral-8x7b", context_len=1024, engine="tensorrt-llm")
    trt_step = decode_step_bytes(trt, 1) / (2039e9 * 0.85) + 0.8e-3 + 32 * 30e-6
    assert inference_throughput(trt, a100, 1) == pytest.approx(1 / trt_step)


def test_host_for_accelerators() -> None:
    rw = rw_of(kind="pretrain", model="llama-2-7b", tokens=1e12)
    h8, h16 = host_for(rw, 8), host_for(rw, 16)
    assert (h8.vcpus, h8.vcpus_recommended, h8.network) == (32, 64, "standard")
    assert (h16.vcpus, h16.network) == (64, "rdma")
    assert h8.ram_gib >= 32
    assert h8.disk_gib > 2 * 16 * 6.7e9 / GIB


def test_preprocess_sizing() -> None:
    rw = rw_of(kind="preprocess", data_gb=1000, target_hours=10)
    h = host_for(rw, 0)
    assert h.vcpus == math.ceil(1000 * 1000 / 36000 / 5.0) == 6
    assert h.ram_gib == 32
    assert h.network == "standard"
    assert h.disk_gib == pytest.approx(100 + 2.2 * 1000e9 / GIB)
    hours = preprocess_hours(rw, h.vcpus)
    assert hours is not None
    assert hours <= 10
    assert preprocess_hours(rw_of(kind="preprocess", data_gb=10), 16) == pytest.approx(
        10e3 / 80 / 3600
    )
    r = estimate(rw.workload, Placement(accelerator="A100-80GB"), MODELS, ACC)
    assert r.memory.per_device_gib == 0
    assert r.time is not None
    assert r.time.device_hours == 0
    assert any("ignored" in a for a in r.assumptions)


def test_estimate_unknown_accelerator_suggests() -> None:
    w = workload({"kind": "inference", "model": "llama-2-7b"})
    with pytest.raises(InputError) as err:
        estimate(w, Placement(accelerator="A100-80G-typo"), MODELS, ACC)
    assert err.value.field == "placement.accelerator"
    assert "A100-80GB" in err.value.suggestions


def test_estimate_unknown_model_suggests() -> None:
    with pytest.raises(InputError) as err:
        rw_of(kind="inference", model="qwen2.5-7")
    assert err.value.field == "workload.model"
    assert "qwen2.5-7b" in err.value.suggestions


def test_estimate_without_placement_has_no_time() -> None:
    w = workload({"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e12})
    r = estimate(w, None, MODELS, ACC)
    assert r.time is None
    assert r.placement is None
    assert r.compute.flops == pytest.approx(6 * 6_738_415_616e12)


def test_estimate_reports_a_misfit() -> None:
    w = workload({"kind": "finetune", "model": "llama-2-70b", "method": "full"})
    r = estimate(w, Placement(accelerator="T4", count=2), MODELS, ACC)
    assert r.placement is not None
    assert not r.placement.fits
    assert r.placement.zero_stage == 3
    assert any(a.startswith("Does not fit") for a in r.assumptions)


def test_bare_params_infer_a_shape_and_say_so() -> None:
    rw = rw_of(kind="inference", model={"params_b": 13})
    assert rw.arch is not None
    assert rw.arch.layers == 40
    assert rw.arch.hidden == 5120
    assert any("nearest preset" in a and "llama-2-13b" in a for a in rw.assumptions)


def test_image_models() -> None:
    rn = rw_of(kind="finetune", model="resnet-50", method="full", micro_batch_size=32)
    # what autograd saves per 224 px image (service.sizing.resnet): 21,876,736 16-bit values
    assert memory_for(rn, 1).activations_gib == pytest.approx(32 * 21_876_736 * 2 / 2**30)
    big = rw_of(
        kind="finetune", model="resnet-50", method="full", micro_batch_size=32, image_size=448
    )
    assert memory_for(big, 1).activations_gib == pytest.approx(
        4 * memory_for(rn, 1).activations_gib
    )
    # ImageNet x 90 epochs on 8 x A100 at NVIDIA's batch 256: its measured 19.5 % (about
    # 2.5 h of compute; the README's ~3 h includes evaluation); at torchvision's default
    # batch 32 a step's 12.9 ms of arithmetic is under its 3 x 13 ms of kernel launches
    work = 3 * 8.18e9 * 1.28e6 * 90
    full = rw_of(kind="pretrain", model="resnet-50", tokens=1.28e6 * 90, micro_batch_size=256)
    t = time_for(full, spec("A100-80GB"), 8)
    assert t is not None
    assert t.mfu == pytest.approx(0.195)
    assert t.hours == pytest.approx(work / (8 * 312e12 * 0.195) / 3600)
    small = time_for(rw_of(kind="pretrain", model="resnet-50", tokens=1.28e6 * 90),
                     spec("A100-80GB"), 8)  # fmt: skip
    assert small is not None
    fill = 32 * 3 * 8.18e9 / (312e12 * 0.195) / (3 * 0.013)
    assert small.mfu == pytest.approx(0.195 * fill, rel=1e-3)
    yolo = rw_of(kind="finetune", model="yolov8-m", method="full", micro_batch_size=16)
    assert any("ResNet-50's activation density" in a for a in yolo.assumptions)
    # diffusers' scripts checkpoint only when asked (review 4): 2.50 GB per image, 0.48
    # with --gradient_checkpointing
    sd = rw_of(kind="finetune", model="sd-1.5", method="full")
    assert memory_for(sd, 1).activations_gib == pytest.approx(2.50e9 / GIB)
    sd_ckpt = rw_of(kind="finetune", model="sd-1.5", method="full", gradient_checkpointing=True)
    assert memory_for(sd_ckpt, 1).activations_gib == pytest.approx(0.48e9 / GIB)
    # LoRA on the frozen UNet (review 4 F7): frozen weights in 16-bit, the same
    # activations, 2 forward passes of work per image (+1 recomputed when checkpointed)
    sd_lora = rw_of(kind="finetune", model="sd-1.5", method="lora")
    assert sd_lora.image_passes == 2.0
    assert rw_of(
        kind="finetune", model="sd-1.5", method="lora", gradient_checkpointing=True
    ).image_passes == 3.0  # fmt: skip
    assert memory_for(sd_lora, 1).weights_gib == pytest.approx(1.066e9 * 2 / GIB, rel=0.01)
    with pytest.raises(InputError) as err:
        rw_of(kind="finetune", model="sd-1.5", method="qlora")
    assert err.value.field == "workload.method"
    with pytest.raises(InputError) as err:
        rw_of(kind="finetune", model="resnet-50", method="lora")
    assert err.value.field == "workload.method"


def test_encoders_and_vit() -> None:
    with pytest.raises(InputError) as err:
        rw_of(kind="finetune", model="bert-base", method="full", seq_len=1024)
    assert err.value.field == "workload.seq_len"
    bert = rw_of(
        kind="finetune",
        model="bert-base",
        method="full",
        seq_len=512,
        gradient_checkpointing=False,
        flash_attention=False,
        micro_batch_size=8,
    )
    acts = memory_for(bert, 1).activations_gib * GIB
    korthikanti = 12 * 512 * 8 * 768 * (34 + 5 * 12 * 512 / 768)
    # HF eager attention under autocast: fp32 probabilities (4 B), the dropout mask (1 B)
    # and the 16-bit copy the value matmul saves (2 B) = 7 B per score where Korthikanti's
    # fused fp16 softmax keeps 5
    fp32_softmax = 12 * 12 * 512 * 512 * 8 * 2
    logits = 512 * 8 * 30522 * 16  # HF Trainer (default framework): fp32-upcast loss
    assert acts == pytest.approx(korthikanti + fp32_softmax + logits)
    vit = rw_of(kind="finetune", model="vit-b-16", method="full")
    assert any("197 tokens" in a for a in vit.assumptions)


def test_deepseek_mla_kv_cache() -> None:
    r = estimate(workload({"kind": "inference", "model": "deepseek-v3"}), None, MODELS, ACC)
    assert r.kv_cache_bytes_per_token == 576 * 61 * 2


@pytest.mark.parametrize(("framework", "unquantized_bytes"), [("llama-factory", 2), ("hf", 4)])
def test_qlora_weights_match_the_nf4_rule(framework: str, unquantized_bytes: int) -> None:
    """NF4 linears with double-quant constants; the rest 16-bit, or fp32 after PEFT's
    prepare_model_for_kbit_training (the Hugging Face recipe)."""
    rw = rw_of(kind="finetune", model="llama-2-7b", method="qlora", framework=framework)
    linear = 6_738_415_616 - 2 * 32000 * 4096 - (2 * 32 + 1) * 4096
    expected = linear * (0.5 + (8 / 64 + 32 / (64 * 256)) / 8)
    expected += (6_738_415_616 - linear) * unquantized_bytes
    lora = 16 * 32 * (4 * 8192 + 2 * (4096 + 11008) + (11008 + 4096))
    assert memory_for(rw, 1).weights_gib == pytest.approx((expected + lora * 4) / GIB)
