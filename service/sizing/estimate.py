"""``estimate``: one workload (+ optional placement) -> memory, compute, time, host.

This is the whole of ``POST /v1/estimate`` below HTTP. It is pure: the model registry and
the accelerator registry come in as arguments, nothing is read from disk or the clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import msgspec

from service.catalog.capabilities import framework_port, framework_stack_verdict
from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing import encoder
from service.sizing.batch import (
    BATCHED_JOB,
    BATCHED_ROOM,
    BATCHED_TARGET,
    ENCODER_BATCH_ROOM,
    ENCODER_BATCH_TARGET,
    batch_limit_words,
    degree_target,
    encoder_each,
    sequences_noun,
)
from service.sizing.compute import (
    FP8_GAIN,
    HOST_LINK_GBPS,
    PREPROCESS_MB_PER_VCPU_S,
    RDMA_DEFAULT_GBPS_PER_ACCELERATOR,
    Cluster,
    TrainingTiming,
    bandwidth_efficiency,
    compute_for,
    convolutional,
    data_parallel_link_gbps,
    decode_peak_tflops,
    dequant_terms,
    diffusion_rates,
    diffusion_throughput,
    generation_time,
    image_serving_rate,
    inference_throughput,
    offload_seconds,
    preprocess_hours,
    ring_link_gbps,
    training_peak,
    training_timing,
    training_utilization,
    untimed_reason,
)
from service.sizing.diffusion import TURING_UTILIZATION, UNET_BLOCK_LAUNCH_S
from service.sizing.host import (
    VCPUS_PER_DEVICE_MIN,
    VCPUS_PER_DEVICE_RECOMMENDED,
    host_for,
    loader_vcpus_per_device,
    with_data,
)
from service.sizing.memory import (
    FP8_BLOCK_ROWS,
    _tp_degrees,
    fit_placement,
    fp8_block_split,
    limit_decides,
    memory_for,
)
from service.sizing.mfu import (
    IMAGE_FORWARD_FLOOR_S,
    attention_utilization,
    fp32_units,
    generation,
)
from service.sizing.moe import moe_training_note
from service.sizing.overheads import class_overhead, overhead_note
from service.sizing.parallelism import (
    DISTRIBUTED_OPTIMIZER,
    framework_limit,
    sharded_traffic,
    sharding_words,
)
from service.sizing.presets import ModelRegistry
from service.sizing.profiles import ASCEND_PREFILL_TOKENS, engine_profile
from service.sizing.replicas import ServingLayout, copies_sentence, node_split, serving_layout
from service.sizing.resolve import (
    FRAGMENTATION,
    INFER_OVERHEAD_GIB,
    TRAIN_OVERHEAD_GIB,
    ResolvedWorkload,
    checkpoint_view,
    resolve_workload,
)
from service.sizing.results import (
    EstimateResponse,
    Fit,
    HostRequirements,
    MemoryBreakdown,
    PlacementEcho,
    TimeEstimate,
)
from service.sizing.uncertainty import SPREADS, throughput_range
from service.sizing.workload import (
    Finetune,
    Inference,
    Placement,
    Pretrain,
    Rlhf,
    Workload,
    validate_workload,
)

ESTIMATE_HEADROOM_FRAC = 0.05
"""Device memory kept free when /v1/estimate picks the ZeRO stage or TP degree."""


class AcceleratorLookup(Protocol):
    """What :func:`estimate` needs from an accelerator registry."""

    def resolve(self, name: str) -> AcceleratorSpec | None: ...

    def suggest(self, name: str) -> list[str]: ...

    def matching(self, query: str) -> tuple[AcceleratorSpec, ...]: ...


def estimate(
    workload: Workload,
    placement: Placement | None,
    models: ModelRegistry,
    accelerators: AcceleratorLookup,
    resolve: Callable[[Workload, ModelRegistry], ResolvedWorkload] = resolve_workload,
) -> EstimateResponse:
    """Size ``workload``; with a placement, per device on it (ZeRO stage chosen as the
    smallest that fits, a serving TP as the fastest that fits, unless given) and with
    ``time`` filled. ``resolve``: what
    resolves the workload (the service passes one that shares resolutions)."""
    workload = checkpoint_view(workload, models)  # a quantized checkpoint's precision
    validate_workload(workload, placement)
    return estimate_resolved(resolve(workload, models), placement, accelerators)


def _refuse_a_family(name: str, accelerators: AcceleratorLookup) -> None:
    """A placement names one chip; a family (``A100``, ``910B``) is known but ambiguous:
    the 400 says which chips it comes as (review 3 R18c; recommend and offers accept
    families because they choose among them)."""
    members = [spec.name for spec in accelerators.matching(name)]
    if len(members) < 2:
        return
    raise InputError(
        "placement.accelerator",
        f"{name!r} comes as {', '.join(members[:-1])} or {members[-1]}: a placement is one "
        "chip, pick one",
        members,
        zh=f"{name!r} 有 {'、'.join(members)} 几种型号：放置方案只能是一种加速卡，请选择其一",
    )


PlacedEstimate = tuple[
    MemoryBreakdown,
    PlacementEcho,
    tuple[str, ...],
    bool,
    TrainingTiming | None,
    HostRequirements,
]
"""What a placement's estimate says whatever the job's length
(:data:`~service.sizing.resolve.LENGTH_FIELDS`): its memory fit, its echo, every note after
the workload's own assumptions (the ZeRO-Offload one, which shows the job's hours, as
:data:`OFFLOAD_NOTE`), whether time is estimated (whether the work and the peak are
known, which the notes explain) and, for training, the timing of the placement
(:func:`~service.sizing.compute.training_timing`: its hours at any length by
:meth:`~service.sizing.compute.TrainingTiming.at`) and its host without the job's data
(:func:`~service.sizing.host.with_data` adds it)."""

OFFLOAD_NOTE = "\x00offload"
"""Where the ZeRO-Offload note goes in a :data:`PlacedEstimate`'s notes (by identity)."""


def placed_estimate(
    rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement
) -> PlacedEstimate:
    """The length-independent part of ``rw``'s estimate on ``placement`` (the ZeRO stage
    chosen as the smallest that fits, a serving TP as the fastest that fits, unless given)."""
    notes: list[str] = []
    devices = placement.count
    timing = None
    if rw.inference is not None:
        layout = _layout(rw, spec, placement)
        memory, echo = _place_serving(layout, spec, placement, notes)
        timed = _serving_time(layout, spec, devices) is not None
        _time_notes(rw, spec, devices, timed, notes)
        _serving_notes(layout.rw, spec, layout.per_node, notes, layout)
        _layout_notes(layout, spec, notes)
    else:
        memory, echo = _place(rw, spec, placement, notes)
        _check_global_batch(rw, placement, echo)
        timing = _timing(rw, spec, placement, echo)
        # timed exactly where the timing exists: it is None without tokens or FLOPs
        timed = timing is not None
        _time_notes(rw, spec, devices, timed, notes, echo.zero_stage)
        _network_note(rw, spec, placement, echo, notes)
        servers, _ = node_split(devices, placement.nodes)
        if servers > 1:
            echo = msgspec.structs.replace(echo, nodes=servers)
            notes.append(
                f"Over {servers} servers: RDMA (InfiniBand/RoCE/eRDMA) networking between "
                "them is required."
            )
    _closing_notes(rw, memory, notes, spec)
    servers = node_split(devices, placement.nodes)[0]
    host = host_for(rw, devices, servers, data=False)
    return memory, echo, tuple(notes), timed, timing, host


def estimate_resolved(
    rw: ResolvedWorkload,
    placement: Placement | None,
    accelerators: AcceleratorLookup,
    place: Callable[
        [ResolvedWorkload, AcceleratorSpec, Placement], PlacedEstimate
    ] = placed_estimate,
) -> EstimateResponse:
    """:func:`estimate` of a workload already validated and resolved (the planner has
    both for the placement it chose). ``place``: what computes the length-independent
    part (the planner passes one that keeps it for the same job at other lengths)."""
    notes = list(rw.assumptions)
    if rw.kind == "preprocess":
        return _preprocess_estimate(rw, placement, notes)
    spec = None
    if placement is not None:
        spec = accelerators.resolve(placement.accelerator)
        if spec is None:
            _refuse_a_family(placement.accelerator, accelerators)
            suggestions = accelerators.suggest(placement.accelerator)
            hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
            raise InputError(
                "placement.accelerator",
                f"unknown accelerator {placement.accelerator!r} (GET /v1/accelerators lists "
                f"them){hint}",
                suggestions,
                zh=f"未知加速卡 {placement.accelerator!r}（GET /v1/accelerators 列出全部）"
                + (f"；是否想写 {', '.join(suggestions)}？" if suggestions else ""),
            )
    if spec is not None and rw.no_bf16 is not None and not spec.supports_bf16:
        rw = rw.no_bf16  # served in fp16 there, which costs this job more memory
        notes = [
            *rw.assumptions,
            f"{spec.name} has no BF16: served in FP16, in which diffusers decodes this "
            "model's VAE in fp32 (sized so here).",
        ]
    devices = placement.count if placement is not None else 1
    echo = None
    throughput = None
    time: TimeEstimate | None = None
    if spec is not None and placement is not None:
        layout = _layout(rw, spec, placement) if rw.inference is not None else None
        if layout is not None and layout.rw is not rw:  # batched or split over replicas
            notes = list(layout.rw.assumptions)  # the KV cache note counts its sequences
        memory, echo, placed_notes, timed, timing, host = place(rw, spec, placement)
        if layout is not None:
            time = _serving_time(layout, spec, devices)
        else:
            time = None if timing is None else timing.at(rw)
        if timed != (time is not None):  # kept for another job than this one: not its notes
            memory, echo, placed_notes, timed, timing, host = placed_estimate(rw, spec, placement)
            if layout is None:
                time = None if timing is None else timing.at(rw)
        host = with_data(host, rw)
        for note in placed_notes:
            if note is OFFLOAD_NOTE:
                _offload_note(rw, devices, notes)
            else:
                notes.append(note)
        if layout is not None:
            rate = layout.rate(spec)
            throughput = rate if rate > 0 else None
    else:
        servers = node_split(devices, placement.nodes)[0] if placement is not None else None
        host = host_for(rw, devices, servers)
        memory = memory_for(rw, 1)
        notes.append("No placement given: memory is for one device and time is not estimated.")
        _closing_notes(rw, memory, notes)
    if spec is not None and rw.inference is not None and generation(spec) == "ascend":
        notes = _ascend_engine_notes(notes, rw.inference.engine)
    kv = (
        rw.inference.kv_per_token
        if rw.inference is not None and rw.inference.kv_per_token
        else None
    )
    return EstimateResponse(
        model=rw.model_id,
        memory=memory,
        compute=compute_for(rw),
        time=time,
        host=host,
        assumptions=notes,
        placement=echo,
        throughput_tokens_per_s=throughput,
        throughput_range=None if throughput is None else throughput_range(throughput),
        kv_cache_bytes_per_token=kv,
    )


def _check_global_batch(rw: ResolvedWorkload, placement: Placement, echo: PlacementEcho) -> None:
    """A placement with more data-parallel replicas than the request's global batch has
    micro-batches for is refused: every replica takes at least one micro-batch per
    optimizer step (Megatron-LM asserts ``num_micro_batches >= 1``, NVIDIA/Megatron-LM
    ``megatron/core/num_microbatches_calculator.py``@00caa53a)."""
    w = rw.workload
    batch = getattr(w, "global_batch_size", None)
    if batch is None:
        return
    per_copy = max((echo.tensor_parallel or 1) * (echo.pipeline_parallel or 1), 1)
    replicas = max(1, placement.count // per_copy)
    micro = getattr(w, "micro_batch_size", None) or 1
    if replicas * micro <= batch:
        return
    raise InputError(
        "workload.global_batch_size",
        f"{replicas} data-parallel replicas take at least {replicas * micro} sequences per "
        f"optimizer step (one micro-batch of {micro} each), more than the global batch of "
        f"{batch}: use fewer accelerators, a larger global batch, or tensor or pipeline "
        "parallelism",
        zh=f"{replicas} 个数据并行副本每个优化步至少处理 {replicas * micro} 条序列（每个副本一个 "
        f"{micro} 的微批量），超过了全局批量 {batch}：请减少加速卡、增大全局批量，或使用张量/"
        "流水线并行",
    )


def _timing(
    rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement, echo: PlacementEcho
) -> TrainingTiming | None:
    """The timing of a training placement in the layout its fit chose (``echo``)."""
    return training_timing(
        rw,
        spec,
        placement.count,
        pipeline_parallel=echo.pipeline_parallel or 1,
        tensor_parallel=echo.tensor_parallel or 1,
        zero_stage=echo.zero_stage,
        cluster=cluster_for(rw, placement),
    )


def per_node_of(placement: Placement) -> int:
    """Accelerators per server: the count over ``placement.nodes`` (:func:`node_split`:
    as given, else one server up to :data:`DEVICES_PER_NODE`, else the fewest servers)."""
    return node_split(placement.count, placement.nodes)[1]


def cluster_for(rw: ResolvedWorkload, placement: Placement) -> Cluster | None:
    """The servers a training placement spans (``None`` within one server): its network
    as given, else :data:`RDMA_DEFAULT_GBPS_PER_ACCELERATOR` per accelerator."""
    per_node = per_node_of(placement)
    if rw.training is None or placement.count <= per_node:
        return None
    network = placement.network_gbps or RDMA_DEFAULT_GBPS_PER_ACCELERATOR * per_node
    return Cluster(per_node=per_node, network_gbps=network)


def _network_note(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    placement: Placement,
    echo: PlacementEcho,
    notes: list[str],
) -> None:
    """Multi-server training: the network figure the data-parallel traffic was timed on."""
    cluster = cluster_for(rw, placement)
    if cluster is None:
        return
    nodes = placement.count // cluster.per_node
    model_parallel = (echo.tensor_parallel or 1) * (echo.pipeline_parallel or 1)
    link = data_parallel_link_gbps(
        spec, placement.count, model_parallel, cluster, echo.tensor_parallel or 1
    )
    inside = ring_link_gbps(spec, cluster.per_node)
    per_device = cluster.network_gbps / cluster.per_node
    basis = (
        "as given"
        if placement.network_gbps
        else f"assumed: {RDMA_DEFAULT_GBPS_PER_ACCELERATOR:g} Gbit/s per accelerator, the "
        "slowest RDMA figure a cloud publishes for its GPU servers; send "
        "placement.network_gbps for the real one"
    )
    notes.append(
        f"Across {nodes} servers of {cluster.per_node} the data-parallel/"
        f"{sharded_traffic(rw.training.framework if rw.training else None, 'en')} traffic runs "
        f"over their network: {cluster.network_gbps:g} Gbit/s per server "
        f"({per_device:g} Gbit/s per accelerator, {basis}), so each ring moves "
        f"{link:.3g} GB/s against {inside:.3g} GB/s inside one server; the time includes "
        "what the computation cannot hide."
    )


def _layout(rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement) -> ServingLayout:
    return serving_layout(
        rw,
        spec,
        placement.count,
        placement.nodes,
        ESTIMATE_HEADROOM_FRAC,
        placement.tensor_parallel,
    )


def _serving_time(
    layout: ServingLayout, spec: AcceleratorSpec, devices: int
) -> TimeEstimate | None:
    """A batch job's hours at the deployment's rate (all replicas together)."""
    w = layout.rw.workload
    if not isinstance(w, Inference) or w.output_tokens is None or layout.rw.arch is None:
        return None
    return generation_time(w.output_tokens, layout.rate(spec), devices)


def _place_serving(
    layout: ServingLayout, spec: AcceleratorSpec, placement: Placement, notes: list[str]
) -> tuple[MemoryBreakdown, PlacementEcho]:
    """Memory per device of one replica (see :mod:`service.sizing.replicas`) and the echo
    of the whole deployment."""
    _check_heads(layout.rw, placement)
    fit = layout.fit
    if fit is not None:
        memory, tp, pp, fits = fit.memory, fit.tensor_parallel, fit.pipeline_parallel, True
    else:
        fits, pp = False, layout.pipeline
        if pp > 1:
            tp = layout.per_node
        else:
            tp = placement.tensor_parallel or _tp_degrees(layout.rw, layout.devices)[-1]
        memory = memory_for(layout.rw, layout.devices, None, tp, pp)
    _fit_notes(spec, memory, fit, notes)
    b = layout.rw.inference
    batch_job = (
        layout.batch is not None and getattr(layout.rw.workload, "target_tokens_per_s", 0) is None
    )
    if tp > 1 and pp == 1 and fits:
        why = "."
        if placement.tensor_parallel is None and batch_job:
            # each degree batched on its own (review 10 K6: the limit is per engine instance)
            why = (
                " (of the degrees that fit, the fastest with each copy of the model at the "
                "batch its own memory and the engine's per-instance limit allow)."
            )
        elif placement.tensor_parallel is None and b is not None:
            # the lowest that holds the sequences and reaches the target, else the fastest
            # (replicas.lowest_fit, batch.copies_batch: session 13 enctp13)
            target = degree_target(layout.rw.workload)
            if math.isinf(target):
                why = (
                    f" (of the degrees that fit, the one that serves {b.concurrency} sequences "
                    "per server fastest: "
                    + (
                        "a batch job's hours follow its rate)."
                        if layout.rw.tokens
                        else "a fixed set of sequences split over more copies gives each a "
                        "smaller batch, and decoding reads every weight once per step "
                        "whatever the batch)."
                    )
                )
            elif target and layout.rate(spec) < target * (1.0 - 1e-9):
                why = (
                    f" (of the degrees that hold {b.concurrency} sequences per server, the "
                    "fastest: none reaches the target on these servers)."
                )
            else:
                reach = " and reach the target" if target else ""
                why = (
                    f" (the lowest of the degrees that hold {b.concurrency} sequences per "
                    f"server{reach}: each wider split adds an all-reduce in every layer)."
                )
        notes.append(f"Tensor parallel degree {tp}{why}")
    if layout.copies > 1 and b is not None:
        notes.append(
            copies_sentence("en", layout.copies, tp, b.concurrency, b.engine, b.experts > 1)
        )
    echo = PlacementEcho(
        accelerator=spec.name,
        count=placement.count,
        zero_stage=None,
        tensor_parallel=tp,
        fits=fits,
        headroom_gib=spec.memory_gib - memory.per_device_gib,
        pipeline_parallel=pp,
        nodes=layout.nodes,
        replicas=layout.replicas * layout.copies,
    )
    return memory, echo


def _fit_notes(
    spec: AcceleratorSpec, memory: MemoryBreakdown, fit: Fit | None, notes: list[str]
) -> None:
    """That the job does not fit, or that the fit was checked at the memory range's top."""
    if fit is None:
        notes.append(
            f"Does not fit: needs {memory.per_device_gib:.1f} GiB per device, {spec.name} has "
            f"{spec.memory_gib:g} GiB (keeping {ESTIMATE_HEADROOM_FRAC:.0%} free)."
        )
    elif fit.checked_high:
        notes.append(
            f"Fit checked against the high end of the memory range too "
            f"({memory.range_gib[1]:.1f} GiB of {spec.memory_gib:g} GiB)."
        )


def _layout_notes(layout: ServingLayout, spec: AcceleratorSpec, notes: list[str]) -> None:
    """How the servers serve the model, the batch assumed and what the target needs, in
    the planner's words where it says the same thing."""
    w = layout.rw.workload
    assert isinstance(w, Inference)
    servers = f"{layout.per_node} x {spec.name}"
    if layout.pipeline > 1:
        notes.append(
            f"The model does not fit one server ({servers}): each replica spans "
            f"{layout.pipeline} servers, tensor parallel {layout.per_node} within each and "
            f"{layout.pipeline} pipeline stages across them (vLLM's distributed serving "
            "guide). The stages work one after another on every decode step, so a replica "
            "decodes at about one server's rate: the other "
            + ("server adds" if layout.pipeline == 2 else f"{layout.pipeline - 1} servers add")
            + " memory, not speed (activations sent between servers not counted)."
        )
    if layout.nodes > 1 and layout.replicas > 1:
        notes.append(
            f"{layout.replicas} replicas over {layout.nodes} servers of {servers}"
            + (f" ({layout.pipeline} per replica)" if layout.pipeline > 1 else "")
            + ": serving engines shard a model by tensor "
            "parallelism within a server, not across servers, so the throughput is "
            f"{layout.replicas} x one replica's"
            + (", each at its share of the concurrency." if layout.batch is None else ".")
        )
    target = w.target_tokens_per_s
    rate = layout.rate(spec)
    if layout.batch is not None and target is None:  # a batch job: as many as memory holds
        per = "" if layout.replicas == 1 else f" ({layout.replicas} replicas, each this batch)"
        said = BATCHED_JOB["en"].format(
            b=layout.batch,
            lim=batch_limit_words(w.serving_engine, "en", generation(spec) == "ascend"),
        )
        notes.append(said.removesuffix(".") + per + ".")
    if layout.batch is not None and target is not None:
        reached = rate >= target * (1 - 1e-9)
        if layout.rw.encoder:  # sequences per forward pass: no continuous batching, no KV cache
            key = ENCODER_BATCH_TARGET if reached else ENCODER_BATCH_ROOM
            each = -(-layout.batch // layout.copies)  # one copy's forward pass
            per = encoder_each("en", layout.copies)
            notes.append(key["en"].format(b=each, each=per, noun=sequences_noun(each)))
        elif layout.replicas == 1:
            key = BATCHED_TARGET if reached else BATCHED_ROOM
            notes.append(key["en"].format(b=layout.batch))
        else:
            notes.append(
                f"No concurrency was given: assumed about {layout.batch} requests served at "
                "once per replica (the engine's continuous batching), "
                + (
                    f"the fewest with which each of the {layout.replicas} replicas reaches its "
                    "share of the target."
                    if reached
                    else "each engine instance as many as its KV cache holds, up to the "
                    "engine's default batch limit."
                )
            )
    if target is not None and 0 < rate < target * (1 - 1e-9):
        per_server = rate / layout.nodes
        needed = math.ceil(target / (per_server * layout.pipeline)) * layout.pipeline
        these = f"These {layout.nodes} servers reach" if layout.nodes > 1 else "This server reaches"
        notes.append(
            f"{these} about {rate:,.0f} of the {target:,.0f} tokens/s target: about {needed} "
            "such servers are needed."
        )


def _check_heads(rw: ResolvedWorkload, placement: Placement) -> None:
    heads = rw.arch.heads if rw.arch is not None else None
    if placement.tensor_parallel and heads and heads % placement.tensor_parallel:
        raise InputError(
            "placement.tensor_parallel",
            f"tensor_parallel ({placement.tensor_parallel}) must divide the model's "
            f"{heads} attention heads",
            zh=f"tensor_parallel（{placement.tensor_parallel}）必须整除模型的 {heads} 个注意力头",
        )
    rows = fp8_block_split(rw, placement.tensor_parallel or 1)
    if rows is not None and rw.arch is not None and rw.arch.expert_intermediate is not None:
        width, t = rw.arch.expert_intermediate, placement.tensor_parallel
        raise InputError(
            "placement.tensor_parallel",
            f"tensor_parallel {t} splits each expert's {width:,}-wide feed-forward into "
            f"{rows}-row shards, which the FP8 checkpoint's {FP8_BLOCK_ROWS}-row weight "
            "blocks do not divide: vLLM and SGLang refuse to load it; use a degree whose "
            f"shards hold whole blocks ({_whole_block_degrees(width)}) or BF16 weights",
            zh=f"tensor_parallel {t} 会把每个专家 {width:,} 宽的前馈层切成每份 {rows} 行，"
            f"而 FP8 权重按 {FP8_BLOCK_ROWS} 行一块量化，切不开整块：vLLM 和 SGLang 无法加载；"
            f"请改用每份为整块的并行度（{_whole_block_degrees(width)}）或 BF16 权重",
        )


def _whole_block_degrees(width: int) -> str:
    """The power-of-two degrees up to 8 whose shards of ``width`` rows hold whole FP8
    blocks, as ``1, 2, 4``."""
    return ", ".join(
        str(t) for t in (1, 2, 4, 8) if width % t == 0 and (width // t) % FP8_BLOCK_ROWS == 0
    )


def _ascend_engine_notes(notes: list[str], engine: str) -> list[str]:
    """``notes`` with an engine that runs another back end on an Ascend NPU named as it
    runs there (:data:`~service.sizing.profiles.ON_ASCEND`, review 13s S6: LMDeploy's
    PyTorch engine, not the CUDA-only TurboMind). The workload's notes are resolved once
    for every device, so the device's words replace the engine's default ones here: the
    KV-cache pool's reservation, and the workspace note, which keeps the chunk it was
    sized for and says the engine's own default there where it is smaller
    (:data:`~service.sizing.profiles.ASCEND_PREFILL_TOKENS`: the larger chunk is the
    larger workspace, so the memory stays on the safe side)."""
    base, there = engine_profile(engine), engine_profile(engine, ascend=True)
    if there is base:
        return notes
    workspace = f"({base.label} prefills in chunks of up to {base.prefill_chunk} tokens)"
    own = ASCEND_PREFILL_TOKENS.get(engine)
    if own is not None and own < base.prefill_chunk:
        said = (
            f"(sized for prefill chunks of up to {base.prefill_chunk} tokens; "
            f"{there.label} prefills {own} tokens per step by default, max_prefill_token_num)"
        )
    else:
        said = f"({there.label} prefills in chunks of up to {base.prefill_chunk} tokens)"
    kept: list[str] = []
    for note in notes:
        if note == base.reservation + ".":
            note = there.reservation + "."
        kept.append(note.replace(workspace, said))
    return kept


VLLM_ASCEND_NOTE = (
    "vllm-ascend: ACL graphs and paged attention, a Python scheduler per step; chunked "
    "prefill (max_num_batched_tokens 2048 for online serving)"
)
"""vLLM on an Ascend NPU is the vllm-ascend plugin, whose default graph mode captures and
replays ACL graphs (``torch.npu.NPUGraph``), not CUDA graphs: vLLM Ascend's Graph Mode Guide,
https://docs.vllm.ai/projects/ascend/en/latest/user_guide/feature_guide/graph_mode.html
("ACLGraph … is the runtime graph execution mechanism used by the default graph path on
Ascend"). The same timing terms as vLLM's (the plugin keeps vLLM's scheduler)."""


def _serving_notes(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    devices: int,
    notes: list[str],
    layout: ServingLayout | None = None,
) -> None:
    assert rw.inference is not None
    w = rw.workload
    if getattr(w, "precision", "") == "bf16" and not spec.supports_bf16:
        notes.append(f"{spec.name} has no BF16: the weights are served in FP16.")
    if rw.encoder:
        rate = layout.rate(spec) / layout.replicas if layout is not None else None
        notes.append(_encoder_note(rw, spec, devices, rate))
    elif rw.diffusion is not None:
        notes.append(_diffusion_note(rw, spec, devices))
    elif rw.image_model:
        notes.append(_image_rate_note(rw, spec, devices))
    elif spec.mem_bandwidth_gbps:  # an image model has no decode
        eng = engine_profile(rw.inference.engine, generation(spec) == "ascend")
        eff = bandwidth_efficiency(rw.inference.engine, rw.inference.precision)
        how = VLLM_ASCEND_NOTE if eng.name == "vllm" and generation(spec) == "ascend" else eng.note
        notes.append(
            f"Decode throughput ({how}): each step reads the weights it touches "
            f"and the KV cache at {eff:.0%} of {spec.mem_bandwidth_gbps:g} GB/s"
            + (" per device" if devices > 1 else "")
            + f", plus {eng.step_overhead_s * 1e3:g} ms per step and "
            f"{eng.layer_overhead_s * 1e6:g} µs per layer of launch overhead; or "
            "compute, whichever is slower."
        )
        if rw.inference.expert_weights:
            latency = eng.moe_layer_latency_s
            notes.append(
                "MoE decode: a step reads only the routed experts its batch uses "
                "(expected distinct experts per layer E·(1 - (1 - k/E)^B) for B tokens)"
                + (
                    f", and each MoE layer's fused expert kernel costs about "
                    f"{latency * 1e6:g} µs more than those bytes at small batches."
                    if latency
                    else "."
                )
            )
    elif not rw.image_model:
        notes.append(
            f"{spec.name}: no published memory bandwidth, so no decode throughput (and "
            "no time or price per token) is estimated."
        )


def _image_units(rw: ResolvedWorkload, spec: AcceleratorSpec) -> str:
    """What an image model's rate is counted in: dense 16-bit, or for an fp32 model the
    TF32 tensor cores (a CNN on a part with them) or the FP32 CUDA cores."""
    if getattr(rw.workload, "precision", "bf16") != "fp32":
        return "dense"
    return "TF32" if fp32_units(spec, convolutional(rw)) == "tf32" else "FP32"


def _image_rate_note(rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int) -> str:
    """How a served classifier's, ViT's or detector's images per second were reached
    (:func:`~service.sizing.compute.image_forward_rate`), or why there are none."""
    b = rw.inference
    assert b is not None
    peak, utilization, basis = image_serving_rate(rw, spec)
    if not peak or not rw.sample_flops:
        return (
            f"{spec.name}: no published {'fp32' if b.precision == 'fp32' else '16-bit'} "
            "compute rate, so how many images per second it serves is not estimated."
        )
    rate = inference_throughput(rw, spec, devices)
    images = b.concurrency
    return (
        f"Images per second about {rate:,.0f}: a call of {images} image"
        f"{'s' if images > 1 else ''}, shared evenly over the devices (each its own copy), "
        f"takes the longer of {IMAGE_FORWARD_FLOOR_S * 1e3:g} ms to launch the network's "
        f"kernels (NVIDIA's ResNet-50 latency at 1-8 images on a V100 and a T4) and "
        f"{rw.sample_flops / 1e9:,.1f} GFLOPs per image at {utilization:.1%} of {peak:g} "
        f"TFLOPS {_image_units(rw, spec)} (the image-training share of that rate: {basis}); "
        "a compiled (TensorRT) "
        "model serves more."
    )


def _diffusion_note(rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int) -> str:
    """How a diffusion pipeline's images per second were reached (:mod:`service.sizing.
    diffusion`), or why there are none."""
    work, b = rw.diffusion, rw.inference
    assert work is not None
    assert b is not None
    peak, decode, utilization = diffusion_rates(rw, spec)
    if not peak or not decode:
        return (
            f"{spec.name}: no published 16-bit (or fp32) compute rate, so how many images per "
            "second it serves is not estimated."
        )
    rate = diffusion_throughput(rw, spec, devices)
    return (
        f"Images per second about {rate:.3g}: each image is {work.steps} denoising steps of "
        f"the UNet over its latent twice (classifier-free guidance), "
        f"{work.unet_per_step / 1e12:.2f} TFLOPs a step, plus the VAE decode "
        f"({work.vae_decode / 1e12:.2f} TFLOPs"
        + (", in fp32" if work.upcast_decode else "")
        + f") and the text encoders: {work.per_image / 1e12:,.0f} TFLOPs (diffusers' default "
        f"50 steps), at {utilization:.0%} of {peak:g} TFLOPS (a PyTorch diffusers pipeline "
        f"with SDPA, measured on {'a T4' if utilization == TURING_UTILIZATION else 'an A100'}; "
        "no torch.compile or TensorRT), and each step at "
        f"least {work.blocks * UNET_BLOCK_LAUNCH_S * 1e3:.0f} ms to launch its "
        f"{work.blocks} UNet blocks; {b.concurrency} image{'s' if b.concurrency > 1 else ''} "
        "per call, shared evenly over the devices, each running its own pipeline. Fewer "
        "steps or a compiled pipeline serve more."
        + (
            " No diffusers timing on an Ascend NPU is published: this rate takes the A100's "
            "share of the peak and is unverified there."
            if generation(spec) == "ascend"
            else ""
        )
    )


def _encoder_note(
    rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int, rate: float | None = None
) -> str:
    """How an encoder's rate was reached: FLOPs per sequence over the achieved FLOP/s
    (``rate``: one server's tokens/s, its copies of the model together)."""
    b, arch = rw.inference, rw.arch
    assert b is not None
    assert arch is not None
    assert arch.layers
    assert arch.hidden
    per_sequence = encoder.flops_per_sequence(
        arch.params, arch.embedding_params, arch.layers, arch.hidden, b.context_len
    )
    util, basis = encoder.encoder_utilization(spec)
    peak = decode_peak_tflops(spec, b.precision)
    eng = engine_profile(b.engine)
    rate = (inference_throughput(rw, spec, devices) if rate is None else rate) / b.context_len
    devices_text = f"{devices} x " if devices > 1 else ""
    block = encoder.block_params(arch.params, arch.embedding_params)
    what = "query–passage pairs scored" if rw.reranker else "sequences"
    return (
        f"Encoder throughput about {rate:,.0f} {what} per second: each sequence of "
        f"{b.context_len} tokens is 2 x {block / 1e6:,.0f}M "
        f"block parameters x {b.context_len} plus attention 4 x {arch.layers} layers x "
        f"{b.context_len}^2 x {arch.hidden} = {per_sequence / 1e9:,.1f} GFLOP, over "
        f"{devices_text}{peak or 0:g} TFLOPS x {util:.0%} ({basis}); or one read of the "
        f"weights per batch when that is slower, plus {eng.layer_overhead_s * 1e6:g} µs of "
        f"{eng.label} kernel launches per layer. TensorRT's fused BERT kernels are the "
        "fastest published path: other engines (vLLM, Text Embeddings Inference, plain "
        "transformers) may encode fewer."
    )


def _closing_notes(
    rw: ResolvedWorkload,
    memory: MemoryBreakdown,
    notes: list[str],
    spec: AcceleratorSpec | None = None,
) -> None:
    """Memory range, overhead and host notes (the network between servers is said by
    :func:`placed_estimate`, which knows how many the placement spans)."""
    spread = SPREADS["train_memory" if rw.training is not None else "inference_memory"]
    notes.append(
        f"Memory range {memory.range_gib[0]:.1f}-{memory.range_gib[1]:.1f} GiB: the 5th-95th "
        f"percentile of measured/estimated over {spread.cases} published measurements of "
        f"{'training' if rw.training is not None else 'serving'} jobs."
    )
    _overhead_note(rw, notes, spec is not None and generation(spec) == "ascend")
    disk = ", two checkpoints and the tokenized data." if rw.training is not None else "."
    if rw.training is not None and rw.image_model:
        disk = IMAGE_DATASET_DISK
    cpus = f"{VCPUS_PER_DEVICE_MIN}-{VCPUS_PER_DEVICE_RECOMMENDED} vCPUs per accelerator"
    loader = loader_vcpus_per_device(rw)
    if loader is not None:  # what host_for sizes for a JPEG pipeline
        cpus = f"{loader[0]}-{loader[1]} vCPUs per accelerator (one data-loader worker each)"
    notes.append(
        f"Host: {cpus} and at least 32 GiB RAM (seed practice), RAM for one copy of the "
        "weights as loaded (+20 %; "
        f"{_loaded_form(rw)}) and 8 GiB per accelerator; disk for the weights{disk}"
    )


IMAGE_DATASET_DISK = (
    " and two checkpoints: the image dataset is not counted (no field gives its size). "
    "Images read from local NVMe or a cloud disk need its size on top (ImageNet-1k's "
    "training and validation archives are 138 GB + 6.3 GB); streamed from object storage "
    "or a parallel file system, they need none."
)
"""What an image model's training disk leaves out (review 6): its dataset, which no request
field sizes. ImageNet-1k (ILSVRC2012): "Training images (Task 1 & 2), 138GB", "Validation
images (all tasks), 6.3GB" (data/ilsvrc12/download-data.sh of a Caffe fork,
raajay/pmls-caffe@04fcda27, the sizes image-net.org listed beside each archive)."""


def _loaded_form(rw: ResolvedWorkload) -> str:
    if rw.inference is not None and rw.inference.precision not in ("bf16", "fp16", "fp32"):
        return (
            f"the {rw.inference.precision.upper()} checkpoint's own bytes, which vLLM/SGLang "
            "read through mmap"
        )
    return "16-bit"


def _place(
    rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement, notes: list[str]
) -> tuple[MemoryBreakdown, PlacementEcho]:
    devices = placement.count
    _check_heads(rw, placement)
    per_node = per_node_of(placement)

    def fit_of(capable: bool) -> Fit | None:
        return fit_placement(
            rw,
            spec,
            devices,
            ESTIMATE_HEADROOM_FRAC,
            zero_stage=placement.zero_stage,
            tensor_parallel=placement.tensor_parallel,
            pipeline_parallel=placement.pipeline_parallel,
            per_node=per_node,
            capable=capable,
        )

    fit = fit_of(True)
    framework = rw.training.framework if rw.training is not None else None
    if fit is None and framework is not None and devices > 1:
        fit = fit_of(False)
        if fit is not None:
            notes.append(
                "Fits only with a layout the framework cannot launch: "
                + framework_limit(framework, "en")
                + "."
            )
    pp = 1
    if fit is not None:
        memory, stage, tp, fits = fit.memory, fit.zero_stage, fit.tensor_parallel, True
        pp = fit.pipeline_parallel
    else:
        fits = False
        stage = placement.zero_stage
        tp = placement.tensor_parallel or 1
        pp = placement.pipeline_parallel or 1
        if stage is None:
            stage = 3 if devices // (tp * pp) > 1 else 0
        memory = memory_for(rw, devices, stage, tp, pp)
    _fit_notes(spec, memory, fit, notes)
    if (
        fit is not None
        and framework is not None
        and limit_decides(rw, spec, fit, devices, ESTIMATE_HEADROOM_FRAC, per_node=per_node)
    ):
        notes.append(framework_limit(framework, "en") + ".")
    if devices > 1:
        dp = max(devices // (tp * pp), 1)
        sharding = f"ZeRO stage {stage}"  # a stage 2/3 asked of Megatron is said as sized
        if framework in DISTRIBUTED_OPTIMIZER and stage in (0, 1):  # its words (review 9 K17)
            sharding = (
                "Distributed optimizer"
                if stage
                else "No distributed optimizer (optimizer states replicated)"
            )
        notes.append(
            f"{sharding} over {dp} data-parallel replicas"
            + (f", tensor parallel {tp}" if tp > 1 else "")
            + (f", {pp} pipeline stages" if pp > 1 else "")
            + (" (the smallest layout that fits)" if placement.zero_stage is None and fits else "")
            + "."
        )
    _lone_replica_note(rw, placement, devices // max(tp * pp, 1), notes)
    echo = PlacementEcho(
        accelerator=spec.name,
        count=devices,
        zero_stage=stage,
        tensor_parallel=tp,
        fits=fits,
        headroom_gib=spec.memory_gib - memory.per_device_gib,
        pipeline_parallel=pp,
    )
    return memory, echo


def _time_notes(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    devices: int,
    timed: bool,
    notes: list[str],
    zero_stage: int | None = None,
) -> None:
    w = rw.workload
    if isinstance(w, Inference):
        if w.output_tokens is None and not rw.encoder:  # an encoder generates no tokens
            notes.append("No output_tokens given: time is not estimated.")
        return
    assert isinstance(w, Pretrain | Finetune | Rlhf)
    notes.extend(framework_stack_notes(spec, getattr(w, "framework", None)))
    peak = training_peak(rw, spec)
    if not timed:
        why = untimed_reason(rw, spec)
        if why == "tokens":
            notes.append("No tokens given: compute and time are not estimated.")
        elif why == "peak" or peak is None:
            notes.append(f"{spec.name} has no published dense {w.precision} peak: time unknown.")
        elif why == "rollout_bandwidth":
            notes.append(
                f"{spec.name} has no published memory bandwidth, so the rollout (generation "
                "phase, decode-bound at the bandwidth) cannot be timed: time unknown."
            )
        else:
            notes.append("No FLOP count is known for this model: time unknown.")
        return
    util, basis = training_utilization(rw, spec, zero_stage)
    if w.precision in ("bf16", "fp8") and not spec.supports_bf16:
        notes.append(f"{spec.name} has no BF16: its FP16 peak is used.")
    if w.precision == "fp8" and spec.supports_fp8:
        notes.append(
            f"FP8 runs {FP8_GAIN:g}x the BF16 speed (measured gains, not the 2x of the peak "
            "figures)."
        )
    b = rw.training
    if b is not None and b.time_basis == "steady" and b.flops_per_token and not rw.image_model:
        terms = ["attention"]
        if b.lora:
            terms.append("no weight gradients for the frozen base (LoRA/QLoRA)")
        if b.recompute:
            terms.append("one recomputed forward (gradient checkpointing)")
        notes.append(
            "Time (steady state): hardware FLOPs per token "
            f"{b.flops_per_token:.3g} (6·N plus {', '.join(terms)}) / ({devices} x {peak:g} "
            f"TFLOPS dense x utilization {util:.2f}); utilization prior: {basis}."
        )
    elif rw.image_model:
        frozen = (
            f" + {rw.frozen_sample_flops / 1e9:,.0f} GFLOPs run without gradients"
            if rw.frozen_sample_flops
            else ""
        )
        notes.append(
            f"Time: {rw.image_passes:g} forward passes of FLOPs per image "
            f"({(rw.sample_flops or 0) / 1e9:,.0f} GFLOPs each at this image size){frozen} / "
            f"({devices} x {peak:g} TFLOPS {_image_units(rw, spec)} x utilization {util:.2f}); "
            f"utilization prior: {basis}."
        )
    else:
        notes.append(
            "Time (whole run incl. restarts, evaluation and checkpoints): model FLOPs "
            f"(6·N + attention) / ({devices} x {peak:g} TFLOPS dense x MFU {util:.2f}); MFU "
            f"prior: {basis}."
        )
    attention = _attention_note(rw, spec, util)
    if attention is not None:
        notes.append(attention)
    dequant = _dequant_note(rw, spec, util, peak)
    if dequant is not None:
        notes.append(dequant)
    notes.append(OFFLOAD_NOTE)  # its hours depend on the job's length: filled per estimate
    overhead = class_overhead(rw)
    if overhead is not None:
        notes.append(overhead_note(overhead))
    if rw.arch is not None and rw.arch.active_params < rw.arch.params:
        notes.append("MoE: compute counts active parameters, memory counts all experts.")
        framework = b.framework if b is not None else "generic"
        moe = moe_training_note(rw.arch, framework, zero_stage)
        if moe is not None:
            notes.append(moe)


def _attention_note(rw: ResolvedWorkload, spec: AcceleratorSpec, util: float) -> str | None:
    """The sentence of :func:`~service.sizing.compute.attention_extra_seconds`, where it
    slows the job (``None`` elsewhere)."""
    b = rw.training
    cap = attention_utilization(spec)
    if (
        b is None
        or cap is None
        or rw.image_model
        or getattr(rw.workload, "precision", "") == "fp32"
    ):
        return None
    steady = b.time_basis == "steady"
    attention = b.attention_flops_per_token if steady else b.attention_model_flops_per_token
    total = b.flops_per_token if steady else b.model_flops_per_token
    if not attention or not total or util <= cap[0]:
        return None
    return (
        f"Attention ({attention / total:.0%} of those FLOPs at "
        f"{getattr(rw.workload, 'seq_len', 0):,} tokens per sequence) runs at "
        f"{cap[0]:.2f} of the 16-bit peak, not at the prior: {cap[1]}."
    )


def _dequant_note(
    rw: ResolvedWorkload, spec: AcceleratorSpec, util: float, peak: float | None
) -> str | None:
    """The sentence of :func:`~service.sizing.compute.dequant_seconds` (QLoRA's
    dequantization per micro-batch on ``spec``, next to the micro-batch's matmuls at the
    prior), or ``None`` for a 16-bit base or a device without a bandwidth."""
    terms = dequant_terms(rw)
    b = rw.training
    bandwidth = spec.mem_bandwidth_gbps
    if terms is None or b is None or not bandwidth or not peak or util <= 0:
        return None
    per_token = b.flops_per_token if b.time_basis == "steady" else b.model_flops_per_token
    compute_s = per_token * b.tokens_per_step / (peak * 1e12 * util)
    return terms.note(spec.name, bandwidth, compute_s, spec.supports_bf16)


def _offload_note(rw: ResolvedWorkload, devices: int, notes: list[str]) -> None:
    off = offload_seconds(rw, devices)
    if off:
        notes.append(
            f"ZeRO-Offload moves gradients and weights over the host link ({HOST_LINK_GBPS:g} "
            f"GB/s per device, PCIe 4.0 x16): +{off / 3600:.2f} h."
        )


def _overhead_note(rw: ResolvedWorkload, notes: list[str], ascend: bool = False) -> None:
    if rw.training is not None:
        notes.append(
            f"Overhead: {TRAIN_OVERHEAD_GIB:g} GiB per device for the CUDA/CANN context and "
            f"communication buffers plus {FRAGMENTATION:.0%} allocator fragmentation."
        )
    elif rw.image_model:
        # review 10 S7c5: an image model runs as a PyTorch pipeline (diffusers,
        # torchvision/timm), no engine's graphs or buffers: what it may hold beyond the
        # tensors is the caching allocator's pool ("unused memory managed by the allocator
        # will still show as if used in nvidia-smi", https://pytorch.org/docs/stable/notes/cuda.html#memory-management)
        # and cuDNN's convolution workspaces (torch.backends.cudnn.benchmark tries
        # algorithms by their workspace, https://pytorch.org/docs/stable/backends.html)
        notes.append(
            f"Overhead: {INFER_OVERHEAD_GIB:g} GiB per device for the "
            f"{'CANN' if ascend else 'CUDA'} context (PyTorch's caching allocator and "
            f"{'CANN' if ascend else 'cuDNN'}'s convolution workspaces may hold more than "
            "the tensors' peak)."
        )
    else:
        notes.append(
            f"Overhead: {INFER_OVERHEAD_GIB:g} GiB per device for the runtime context "
            f"({'ACL' if ascend else 'CUDA'} graphs and engine buffers may add 1-3 GiB)."
        )


def _preprocess_estimate(
    rw: ResolvedWorkload, placement: Placement | None, notes: list[str]
) -> EstimateResponse:
    host = host_for(rw, 0)
    hours = preprocess_hours(rw, host.vcpus)
    notes.append(
        f"Preprocessing is CPU-only: {PREPROCESS_MB_PER_VCPU_S:g} MB/s per vCPU (prior for "
        f"decode/clean/tokenize pipelines) -> {host.vcpus} vCPUs, RAM 4 GiB per vCPU "
        "(at least 32 GiB), disk 2.2 x the data (input, output, scratch), high-IOPS cloud disk "
        "(ESSD PL2/PL3 class) or a parallel file system."
    )
    if placement is not None:
        notes.append("The placement is ignored: preprocessing needs no accelerator.")
    memory = memory_for(rw, 1)
    time = None
    if hours is not None:
        # a range must hold its estimate; no published measurement calibrates this rate
        # (service/sizing/uncertainty.py has no preprocessing spread), so none is made up
        notes.append(
            "No published measurements calibrate the preprocessing rate: the range of hours "
            "is the estimate itself."
        )
        time = TimeEstimate(hours=hours, device_hours=0.0, mfu=None, hours_range=(hours, hours))
    return EstimateResponse(
        model=None,
        memory=memory,
        compute=compute_for(rw),
        time=time,
        host=host,
        assumptions=notes,
    )


def _lone_replica_note(
    rw: ResolvedWorkload, placement: Placement, replicas: int, notes: list[str]
) -> None:
    """Review P12: a ZeRO stage asked for over one data-parallel replica partitions over a
    group of one, so every state stays whole on the device. DeepSpeed runs such a config
    (it is how ZeRO-Offload/Infinity fit a model on one GPU), so it is kept and said, not
    refused: the request is valid, only the sharding it hopes for does not happen."""
    stage = placement.zero_stage
    if rw.training is None or not stage or replicas > 1:
        return
    if getattr(rw.workload, "offload", "none") != "none":
        return
    where = "one device" if placement.count == 1 else "one data-parallel replica"
    name = sharding_words(rw.training.framework, stage, "en")
    name = f"The {name}" if name[0].islower() else name
    notes.append(
        f"{name} over {where} shards nothing: the weights, gradients and optimizer "
        "states stay whole on each device; use CPU offload or more devices to spread them."
    )


def framework_stack_notes(spec: AcceleratorSpec, framework: str | None) -> list[str]:
    """What a placement on ``spec`` says of a training framework built for another stack
    (review 11t T1/T2): MindSpeed runs on Ascend NPUs only, NVIDIA's Megatron-LM needs CUDA
    and runs on Ascend as MindSpeed. The figures stay Megatron's either way (the two share
    the layouts and the accounting), so the estimate is kept and says which one runs."""
    if framework_stack_verdict(spec, framework) != "ok":
        return [
            f"MindSpeed runs on Ascend NPUs only (it is Megatron-LM adapted to CANN and "
            f"torch_npu): on a {spec.name} run Megatron-LM itself (framework megatron), which "
            "has the same layouts and accounting as the figures here."
        ]
    if framework_port(spec, framework):
        return [
            f"Megatron-LM needs CUDA and does not run on an {spec.name} as is: it runs there "
            "through MindSpeed (Megatron-LM adapted to CANN and torch_npu), with the same "
            "layouts and accounting as the figures here."
        ]
    return []
