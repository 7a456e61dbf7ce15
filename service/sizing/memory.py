"""Per-device memory of a resolved workload on a placement, and the smallest fit.

These are the planner's hot path: :func:`memory_for` is a few divisions of totals that
:func:`service.sizing.resolve.resolve_workload` computed once, so calling it a few hundred
times per request costs microseconds each.

Sharding rules:

- ZeRO over the data-parallel degree N = devices / tensor_parallel: stage 1 shards the
  optimizer states, 2 also the gradients, 3 also the weights (Rajbhandari et al. 2020).
- Tensor parallelism t splits weights, gradients, optimizer states, the sharded part of the
  activations and the KV cache (up to the number of KV heads; MLA latents are replicated).
- Pipeline stages split the layers: each stage holds the weights and the KV cache of its
  own layers only (the heaviest stage ``ceil(layers / pp)`` of them), while a layer's
  working activations stay whole on the stage that runs it.
- ZeRO-Offload follows DeepSpeed's own estimators (``stage_1_and_2.py``, ``stage3.py``):
  stages 1-2 keep the 16-bit weights on the device; stage 3 keeps a shard plus the largest
  layer gathered whole; offloading everything keeps only that layer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from service.catalog.models import AcceleratorSpec
from service.runtime.bounded import IdentityMemo
from service.sizing.formulas import GIB
from service.sizing.host import DEVICES_PER_NODE
from service.sizing.parallelism import (
    Parallelism,
    framework_parallelism,
    limits,
    tensor_parallel_limit,
)
from service.sizing.resolve import (
    FRAGMENTATION,
    INFER_FRAGMENTATION,
    INFER_OVERHEAD_GIB,
    TRAIN_OVERHEAD_GIB,
    ResolvedWorkload,
    TrainingBudget,
    rollout_phase_bytes,
)
from service.sizing.results import Fit, MemoryBreakdown
from service.sizing.uncertainty import SPREADS

_ZERO = MemoryBreakdown(
    per_device_gib=0.0,
    weights_gib=0.0,
    gradients_gib=0.0,
    optimizer_gib=0.0,
    activations_gib=0.0,
    kv_cache_gib=0.0,
    overhead_gib=0.0,
)


_TRAIN_SPREAD = SPREADS["train_memory"]
_INFER_SPREAD = SPREADS["inference_memory"]


def _breakdown(
    weights: float,
    grads: float,
    opt: float,
    acts: float,
    kv: float,
    overhead_gib: float,
    frag: float,
    *,
    training: bool = True,
) -> MemoryBreakdown:
    """The per-device breakdown; ``range_gib`` spreads the total by the calibrated
    factors of training or serving memory."""
    w, g, o, a, k = weights / GIB, grads / GIB, opt / GIB, acts / GIB, kv / GIB
    overhead = overhead_gib + frag * (w + g + o + a + k)
    total = w + g + o + a + k + overhead
    spread = _TRAIN_SPREAD if training else _INFER_SPREAD
    return MemoryBreakdown(
        per_device_gib=total,
        range_gib=(total * spread.low, total * spread.high),
        weights_gib=w,
        gradients_gib=g,
        optimizer_gib=o,
        activations_gib=a,
        kv_cache_gib=k,
        overhead_gib=overhead,
    )


def memory_for(
    rw: ResolvedWorkload,
    devices: int,
    zero_stage: int | None = None,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
) -> MemoryBreakdown:
    """Per-device memory (GiB) for ``devices`` accelerators at a ZeRO stage (training),
    tensor-parallel degree and pipeline stages (both). ``zero_stage=None`` means no
    sharding (stage 0)."""
    devices = max(devices, 1)
    t = max(min(tensor_parallel, devices), 1)
    pp = max(min(pipeline_parallel, devices // t), 1)
    if rw.training is not None:
        return _training_memory(rw, devices, zero_stage or 0, t, pp)
    if rw.inference is not None:
        return _inference_memory(rw, devices, t, pp)
    return _ZERO


_SIZED: IdentityMemo[TrainingBudget, dict[tuple[int, int, int, int], MemoryBreakdown]] = (
    IdentityMemo(64)
)
"""Per training budget, the breakdown per (devices, ZeRO stage, tensor degree, pipeline
stages); 64 budgets, more than the requests a planner works on at once."""


def _training_memory(
    rw: ResolvedWorkload, devices: int, stage: int, t: int, pp: int = 1
) -> MemoryBreakdown:
    """:func:`_training_memory_of` the workload's training budget, once per budget and
    layout. Why: the memory depends on the budget and the layout only, and one request
    asks for the same layouts many times over — the planner's fit per device count, then
    the explain stage's framework-limit check (:func:`needs_layer_split`) and the
    estimate (:func:`fit_placement`) again, on copies of the resolved workload (the job
    at another length) that share its budget object. The budget is immutable, so the
    breakdown kept for it is the one a new computation would give."""
    b = rw.training
    assert b is not None
    layouts = _SIZED.get(b)
    if layouts is None:
        layouts = {}
        _SIZED.put(b, layouts)
    key = (devices, stage, t, pp)
    sized = layouts.get(key)
    if sized is None:
        sized = layouts[key] = _training_memory_of(b, devices, stage, t, pp)
    return sized


def _training_memory_of(
    b: TrainingBudget, devices: int, stage: int, t: int, pp: int = 1
) -> MemoryBreakdown:
    """:func:`_states_and_activations`, with an RLHF rollout's generation phase: the
    engine's 16-bit actor copy and the KV cache of its batch
    (:func:`~service.sizing.resolve.rollout_phase_bytes`) sit next to the training states,
    which stay on the device, in place of the activations, which the engine's memory is
    freed before (verl ``free_cache_engine``/vLLM sleep mode; OpenRLHF
    ``--vllm_enable_sleep``, its README's Hybrid Engine, https://github.com/OpenRLHF/OpenRLHF):
    the peak is the states plus the larger of the two phases. The breakdown shows that
    peak: the generating copy is in the weights, its KV cache as the KV cache, and only the
    activations beyond the generation phase (as the single device's
    gradients-for-activations rule of :func:`_states_and_activations`)."""
    m, acts = _states_and_activations(b, devices, stage, t, pp)
    gen_w, kv = rollout_phase_bytes(b, devices, t)
    return _breakdown(
        m[0] + gen_w,
        m[1],
        m[2],
        max(acts - gen_w - kv, 0.0),
        kv,
        TRAIN_OVERHEAD_GIB,
        FRAGMENTATION,
    )


def _states_and_activations(
    b: TrainingBudget, devices: int, stage: int, t: int, pp: int = 1
) -> tuple[tuple[float, float, float], float]:
    """Model states divide by tensor x pipeline degree (each stage holds its layers'
    shard) and ZeRO shards them over the data-parallel rest; activations divide by the
    tensor degree only: under 1F1B the first stage keeps ``pp`` micro-batches of its
    ``L/pp`` layers in flight, as much as one micro-batch of all layers (Korthikanti et
    al. 2022, §4.2.3)."""
    n = max(devices // (t * pp), 1)
    # tensor parallelism with sequence parallelism (Megatron-LM and torchtitan's default):
    # the norm/dropout regions are split along the sequence, so every activation divides
    acts = (b.act_unsharded + b.act_sharded) / t if t > 1 else b.act_unsharded + b.act_sharded
    t = t * pp
    weights16 = (b.frozen_weights + b.train_weights) / t
    if b.offload == "all" or (b.offload == "optimizer" and stage == 3):
        # DeepSpeed stage3.py: offload_param -> 4·largest_layer; optimizer only -> + 2P/N
        weights = b.live_weights + (0.0 if b.offload == "all" else weights16 / n)
        return (weights, b.live_grads, 0.0), acts
    if b.offload == "optimizer":
        # DeepSpeed stage_1_and_2.py with cpu_offload: only the 16-bit weights stay (2P)
        return (weights16, 0.0, 0.0), acts
    opt = b.optimizer / t / (n if stage >= 1 else 1)
    grads = (b.grads_zero3 if stage == 3 else b.grads) / t / (n if stage >= 2 else 1)
    weights = weights16 / (n if stage == 3 else 1)
    if pp > 1 and stage == 3 and n > 1 and b.pipeline_unsharded_grads:
        # FSDP2 under a pipeline schedule (torchtitan): the stage's 16-bit weights stay
        # gathered between micro-batches and its gradient accumulates whole in fp32 until
        # the last one; only the fp32 master weights and optimizer states stay sharded
        weights = weights16
        grads = b.pipeline_unsharded_grads / t
    if stage == 3 and b.deepspeed and n > 1:
        # the gathered layer is at most what this device does not hold itself, and ZeRO-3
        # never holds more than ZeRO-2 would (tiny models with a huge embedding)
        weights += min(b.live_weights, weights16 * (1 - 1 / n))
        grads += min(b.live_grads, max(b.grads - b.grads_zero3, 0.0) / t / n)
    if b.grads_replace_activations and devices == 1:
        # the backward frees each layer's activations as it writes that layer's gradients:
        # shown are the gradients and only the activations beyond them
        acts = max(acts - grads, 0.0)
    return (weights, grads, opt), acts


def _inference_memory(rw: ResolvedWorkload, devices: int, t: int, pp: int = 1) -> MemoryBreakdown:
    """One device of a replica of ``t`` x ``pp`` devices (tensor x pipeline degree).
    Pipeline stages split the layers (vLLM's ``get_pp_indices``,
    https://github.com/vllm-project/vllm/blob/main/vllm/distributed/utils.py: an even
    split, the heaviest stage ``ceil(layers / pp)`` layers), and the KV cache is per layer, so a
    stage caches only its own layers' share; tensor parallelism then divides that share
    up to the KV heads (an MLA latent is replicated on every rank). A layer's working
    activations are whole on the stage that runs it: only tensor parallelism shards them."""
    b = rw.inference
    assert b is not None
    replicas = max(devices // (t * pp), 1)
    per_replica = math.ceil(b.concurrency / replicas)
    kv_shards = t if b.layer_split else min(t, b.kv_shards_max)
    kv = b.kv_per_token * b.context_len * per_replica / kv_shards * _stage_share(rw, pp)
    acts = (b.act_unsharded + b.act_sharded / t) * (
        per_replica / b.concurrency if rw.image_model or rw.encoder else 1.0
    )
    return _breakdown(
        b.weights / (t * pp),
        0.0,
        0.0,
        acts,
        kv,
        INFER_OVERHEAD_GIB,
        INFER_FRAGMENTATION,
        training=False,
    )


def _stage_share(rw: ResolvedWorkload, pp: int) -> float:
    """The share of the layers on the heaviest of ``pp`` pipeline stages."""
    layers = rw.arch.layers if rw.arch is not None else None
    if pp <= 1 or not layers:
        return 1.0 / max(pp, 1)
    return math.ceil(layers / pp) / layers


def _tp_degrees(rw: ResolvedWorkload, devices: int) -> list[int]:
    """Tensor-parallel degrees to try: powers of two up to ``devices`` that divide heads."""
    heads = rw.arch.heads if rw.arch is not None else None
    if rw.arch is None or not rw.arch.transformer:
        return [1]
    if rw.inference is not None and rw.inference.layer_split:
        # plain transformers (device_map="auto") splits the layers over every device
        return [devices]
    out, t = [], 1
    while t <= devices:
        if (heads is None or heads % t == 0) and fp8_block_split(rw, t) is None:
            out.append(t)
        t *= 2
    return out


FP8_BLOCK_ROWS = 128
"""Rows of one weight block of the block-wise FP8 releases of the MoE models: DeepSeek-V3
/R1 (``quantization_config.weight_block_size`` [128, 128] in their ``config.json``,
https://huggingface.co/deepseek-ai/DeepSeek-V3) and Qwen3's MoE FP8 checkpoints
("fine-grained fp8 quantization with block size of 128",
https://huggingface.co/Qwen/Qwen3-30B-A3B-FP8)."""


FP8_BLOCK_ENGINES = frozenset({"vllm", "sglang"})
"""Engines that load the releases' block-FP8 checkpoints as they are, hence refuse a degree
that splits a block. TensorRT-LLM serves its own ModelOpt FP8 conversion (per-tensor
scales): NVIDIA's perf overview measures Qwen3-235B-A22B at TP 8 (FP8) on 8 x H100
(NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @00f37686), while Qwen's
SGLang speed benchmark serves the FP8 release at TP 4 and BF16 at TP 8 on H20
(QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark.md @c7f51a1a)."""


def fp8_block_split(rw: ResolvedWorkload, t: int) -> int | None:
    """The rows of each expert's gate/up projection one rank holds at tensor parallel
    ``t`` when they do not fill whole FP8 blocks, else ``None``. A block-FP8 MoE loads
    only when ``moe_intermediate_size / t`` is a multiple of the block's 128 rows: vLLM's
    and SGLang's FP8 MoE methods raise "The output_size of gate's and up's weight = 192
    is not divisible by weight quantization block_n = 128" otherwise (Qwen3-235B-A22B-FP8
    at 8, vllm-project/vllm#17569; Qwen3-30B-A3B-FP8 at 4, vllm-project/vllm#25292; the
    mechanism, vllm-project/vllm#48173). Only served FP8 MoE models under those engines
    (:data:`FP8_BLOCK_ENGINES`) are limited: a BF16 checkpoint has no blocks, and a dense
    FP8 checkpoint may be per-channel."""
    arch, inf = rw.arch, rw.inference
    if t <= 1 or arch is None or inf is None or inf.precision != "fp8" or arch.experts <= 1:
        return None
    if inf.engine not in FP8_BLOCK_ENGINES:
        return None
    width = arch.expert_intermediate
    if width is None or width % FP8_BLOCK_ROWS:
        return None  # not a block-quantized release's shape
    if width % t == 0 and (width // t) % FP8_BLOCK_ROWS == 0:
        return None
    return width // t


def serving_degrees(rw: ResolvedWorkload, devices: int) -> list[int]:
    """Tensor-parallel degrees one server of ``devices`` may serve ``rw`` at, smallest
    first (:func:`_tp_degrees`): ``devices // t`` copies of the model at degree ``t``."""
    return _tp_degrees(rw, devices)


def _busy_degrees(rw: ResolvedWorkload, devices: int, pp: int) -> list[int]:
    """Serving degrees to try on ``devices``: :func:`_tp_degrees`, less those that would
    make more copies of the model than there are sequences (a copy without one leaves
    its devices idle: one stream on 8 GPUs is served tensor parallel 8, not by one GPU
    of 8 copies; review 7 J4). Image models keep every degree: their rate is the
    devices' together whatever the split."""
    tps = _tp_degrees(rw, devices // pp)
    b = rw.inference
    if b is None or rw.image_model:
        return tps
    return [t for t in tps if devices // (t * pp) <= b.concurrency] or tps[-1:]


def _zero_stages(rw: ResolvedWorkload, dp: int, zero_stage: int | None) -> list[int]:
    if zero_stage is not None:
        return [zero_stage]
    if dp == 1:
        return [0]
    b = rw.training
    if b is not None and b.offload == "all":
        return [3]
    if b is not None and b.offload == "optimizer":
        return [1, 2, 3]
    return [0, 1, 2, 3]


def _base_bits(rw: ResolvedWorkload) -> int | None:
    """Bits of a quantized (QLoRA) base, ``None`` for a 16-bit one."""
    bits = getattr(rw.workload, "effective_quant_bits", None)
    return bits if isinstance(bits, int) else None


def capability(rw: ResolvedWorkload) -> Parallelism:
    """The capability row of the job's training framework (:mod:`.parallelism`)."""
    b = rw.training
    return framework_parallelism(b.framework if b is not None else "generic")


RLHF_MODEL_PARALLEL_FRAMEWORKS = frozenset({"megatron", "mindspeed"})
"""Trainers whose RLHF runs split the layers (verl's Megatron backend, MindSpeed-RL).
The others train the policy sharded data-parallel and leave tensor parallelism to the
generation engine: OpenRLHF with DeepSpeed ZeRO-2/3 (`--zero_stage`, separate vLLM
engines at `--vllm_tensor_parallel_size`, https://github.com/OpenRLHF/OpenRLHF), verl with
FSDP (`actor_rollout_ref.actor.strategy: fsdp`, rollout TP its own,
https://verl.readthedocs.io/en/latest/examples/config.html), DeepSpeed-Chat with ZeRO-3
and its hybrid engine; none runs DeepSpeed's pipeline engine (review 6 H2)."""

TRAIN_TP_MAX = 8
"""Tensor parallelism stays inside one NVLink/HCCS server (Megatron-LM's guidance: TP
within a node, PP across nodes): the ladder tries degrees up to a server's 8 devices, and
:func:`first_fit` drops those a given server cannot hold over NVLink/HCCS
(:func:`~service.sizing.parallelism.tensor_parallel_limit`)."""


def training_layouts(
    rw: ResolvedWorkload,
    devices: int,
    tensor_parallel: int | None = None,
    pipeline_parallel: int | None = None,
) -> list[tuple[int, int]]:
    """(tensor, pipeline) degrees to try for training, cheapest first: pure data
    parallelism, then tensor parallelism within a server (powers of two dividing the
    heads), then pipeline stages on top of the widest tensor degree — only the kinds the
    job's framework runs (:mod:`service.sizing.parallelism`: no tensor or pipeline
    parallelism under Hugging Face Trainer/PEFT or with a 4/8-bit base). A pure function
    the planner can call to see which layouts a device count allows."""
    if tensor_parallel is not None or pipeline_parallel is not None:
        return [(tensor_parallel or 1, pipeline_parallel or 1)]
    out = [(1, 1)]
    if rw.arch is None or not rw.arch.transformer or devices < 2:
        return out
    cap = capability(rw)
    if _base_bits(rw) is not None:
        return out  # bitsandbytes 4/8-bit linears are not shardable by a TP plan
    if (
        rw.training is not None
        and rw.training.rollout_weight_bytes
        and (rw.training.framework not in RLHF_MODEL_PARALLEL_FRAMEWORKS)
    ):
        return out  # RLHF trains sharded data-parallel (see RLHF_MODEL_PARALLEL_FRAMEWORKS)
    tps: list[int] = []
    if cap.tensor_parallel:
        tps = [t for t in _tp_degrees(rw, min(devices, TRAIN_TP_MAX)) if t > 1]
    out += [(t, 1) for t in tps]
    if not cap.pipeline_parallel:
        return out
    t_max = tps[-1] if tps else 1
    layers = rw.arch.layers or 1
    pp = 2
    while t_max * pp <= devices and pp <= layers:
        if devices % (t_max * pp) == 0:
            out.append((t_max, pp))
        pp *= 2
    return out


def _fits(m: MemoryBreakdown, capacity: float, memory_gib: float, safe: bool) -> bool:
    return m.per_device_gib <= capacity and (not safe or m.range_gib[1] <= memory_gib)


def fit_placement(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    devices: int,
    headroom_frac: float,
    zero_stage: int | None = None,
    tensor_parallel: int | None = None,
    pipeline_parallel: int | None = None,
    *,
    safe: bool = False,
    per_node: int | None = None,
    capable: bool = True,
) -> Fit | None:
    """The cheapest way ``rw`` fits on ``devices`` x ``accelerator`` keeping
    ``headroom_frac`` of each device free: the smallest ZeRO stage, then tensor and
    pipeline parallelism (training) or the smallest tensor-parallel degree (inference);
    ``None`` when nothing fits or the job is CPU-only.

    With ``safe`` (the planner sets it when a safety headroom is asked for) the high end
    of the calibrated memory range must fit the device as well: safety means the likely
    worst case fits, not only the central estimate. A searched training layout keeps its
    tensor-parallel group inside one server of ``per_node`` devices (default: up to
    :data:`~service.sizing.host.DEVICES_PER_NODE`) and on an NVLink/HCCS part
    (:func:`~service.sizing.parallelism.tensor_parallel_limit`); ``capable``: see
    :func:`memory_ladder`."""
    if rw.arch is None or devices < 1:
        return None
    layouts = memory_ladder(
        rw, devices, zero_stage, tensor_parallel, pipeline_parallel, capable=capable
    )
    tp_max = None
    if rw.training is not None and tensor_parallel is None:
        tp_max = tensor_parallel_limit(accelerator, per_node or min(devices, DEVICES_PER_NODE))
    return first_fit(layouts, accelerator, headroom_frac, safe=safe, tp_max=tp_max)


Layout = tuple[int | None, int, int, MemoryBreakdown]
"""(ZeRO stage — ``None`` when serving —, tensor degree, pipeline stages, per-device
memory) of one way to lay a job out on a device count."""


def memory_ladder(
    rw: ResolvedWorkload,
    devices: int,
    zero_stage: int | None = None,
    tensor_parallel: int | None = None,
    pipeline_parallel: int | None = None,
    *,
    capable: bool = True,
) -> Iterator[Layout]:
    """The layouts :func:`fit_placement` tries on ``devices``, cheapest first, with their
    per-device memory. It depends on the workload and the device count only, never on
    the accelerator, so the planner computes it once per device count and checks every
    accelerator's capacity against it (:func:`first_fit`, which also keeps tensor
    parallelism inside an NVLink/HCCS server). With ``capable`` (the default) a searched
    ladder holds only what the job's framework can launch on more than one device
    (:meth:`~service.sizing.parallelism.Parallelism.allows`: none at all for a
    single-GPU trainer); an explicit stage or degree is sized as asked."""
    if rw.training is not None:
        explicit = (zero_stage, tensor_parallel, pipeline_parallel) != (None, None, None)
        cap = None if explicit or not capable or devices < 2 else capability(rw)
        bits = _base_bits(rw)
        for t, pp in training_layouts(rw, devices, tensor_parallel, pipeline_parallel):
            if devices % (t * pp):
                continue
            for stage in _zero_stages(rw, devices // (t * pp), zero_stage):
                if cap is None or cap.allows(stage, t, pp, bits=bits):
                    yield stage, t, pp, _training_memory(rw, devices, stage, t, pp)
        return
    pp = max(pipeline_parallel or 1, 1)
    tps = [tensor_parallel] if tensor_parallel is not None else _busy_degrees(rw, devices, pp)
    for t in tps:
        yield None, t, pp, _inference_memory(rw, devices, t, pp)


def first_fit(
    layouts: Iterable[Layout],
    accelerator: AcceleratorSpec,
    headroom_frac: float,
    *,
    safe: bool = False,
    tp_max: int | None = None,
) -> Fit | None:
    """The first of ``layouts`` that fits ``accelerator`` keeping ``headroom_frac`` free
    (with ``safe``, the high end of the memory range must fit too), skipping training
    layouts whose tensor degree exceeds ``tp_max`` (``None``: no limit)."""
    capacity = accelerator.memory_gib * (1.0 - headroom_frac)
    for stage, t, pp, m in layouts:
        if tp_max is not None and stage is not None and t > tp_max:
            continue
        if _fits(m, capacity, accelerator.memory_gib, safe):
            return Fit(
                zero_stage=stage,
                tensor_parallel=t,
                pipeline_parallel=pp,
                memory=m,
                headroom_gib=accelerator.memory_gib - m.per_device_gib,
                checked_high=safe,
            )
    return None


def needs_layer_split(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    devices: int,
    headroom_frac: float,
    *,
    safe: bool = False,
    per_node: int | None = None,
) -> bool:
    """Whether the job's framework's missing tensor or pipeline parallelism is what set
    ``devices``: on some smaller count of ``accelerator`` (powers of two, the sizes
    servers come in) none of the framework's own layouts fits but one that splits the
    layers in a way it cannot launch does (tensor parallelism within an NVLink/HCCS server
    of ``per_node`` — :func:`~service.sizing.parallelism.tensor_parallel_limit` —, or
    pipeline stages). ``False`` once the framework's own layouts fit a smaller count, for
    a 4/8-bit base (no trainer splits bitsandbytes layers) and for a framework that has
    both kinds. Why: the sentence naming the limit explains an answer only where the limit
    decided it — a 7B LoRA that fits one GPU, or two with ZeRO-3, was never held by it."""
    b = rw.training
    if b is None or rw.arch is None or not rw.arch.transformer or _base_bits(rw) is not None:
        return False
    cap = capability(rw)
    if cap.tensor_parallel and cap.pipeline_parallel:
        return False
    node = per_node or DEVICES_PER_NODE
    layers = rw.arch.layers or 1
    d = 1
    while d < devices:
        if fit_placement(rw, accelerator, d, headroom_frac, safe=safe, per_node=per_node):
            return False
        for t in _tp_degrees(rw, tensor_parallel_limit(accelerator, min(d, node))):
            pp = 1
            while t * pp <= d and pp <= layers:
                framework_can = (t == 1 or cap.tensor_parallel) and (
                    pp == 1 or cap.pipeline_parallel
                )
                if d % (t * pp) == 0 and not framework_can:
                    fit = fit_placement(
                        rw, accelerator, d, headroom_frac, tensor_parallel=t,
                        pipeline_parallel=pp, safe=safe, per_node=per_node, capable=False,
                    )  # fmt: skip
                    if fit is not None:
                        return True
                pp *= 2
        d *= 2
    return False


def limit_decides(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    fit: Fit,
    devices: int,
    headroom_frac: float,
    *,
    safe: bool = False,
    per_node: int | None = None,
) -> bool:
    """Whether the answer says the job's framework limit on ``fit`` (``devices`` x
    ``accelerator``): where :func:`~service.sizing.parallelism.limits` says the limit
    shaped the layout and, for a framework whose only missing piece is splitting the
    layers (Hugging Face Trainer/PEFT and the trainers built on it: every ZeRO stage, no
    tensor or pipeline parallelism), only where that split was needed
    (:func:`needs_layer_split`)."""
    b = rw.training
    if b is None:
        return False
    framework = b.framework
    if not limits(framework, devices, fit.zero_stage, fit.tensor_parallel, fit.pipeline_parallel):
        return False
    cap = framework_parallelism(framework)
    if cap.tensor_parallel or cap.pipeline_parallel or not cap.multi_device or len(cap.stages) < 2:
        return True
    return needs_layer_split(rw, accelerator, devices, headroom_frac, safe=safe, per_node=per_node)
