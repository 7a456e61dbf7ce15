"""``estimate``: one workload (+ optional placement) -> memory, compute, time, host.

This is the whole of ``POST /v1/estimate`` below HTTP. It is pure: the model registry and
the accelerator registry come in as arguments, nothing is read from disk or the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing.compute import (
    FP8_GAIN,
    HOST_LINK_GBPS,
    PREPROCESS_MB_PER_VCPU_S,
    bandwidth_efficiency,
    compute_for,
    inference_throughput,
    offload_seconds,
    peak_tflops,
    preprocess_hours,
    time_for,
    training_utilization,
)
from service.sizing.host import (
    DEVICES_PER_NODE,
    VCPUS_PER_DEVICE_MIN,
    VCPUS_PER_DEVICE_RECOMMENDED,
    host_for,
)
from service.sizing.memory import _tp_degrees, fit_placement, memory_for
from service.sizing.presets import ModelRegistry
from service.sizing.profiles import engine_profile
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
    """Size ``workload``; with a placement, per device on it (ZeRO stage / TP chosen as
    the smallest that fits unless given) and with ``time`` filled. ``resolve``: what
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


PlacedEstimate = tuple[MemoryBreakdown, PlacementEcho, tuple[str, ...], bool]
"""What a placement's estimate says whatever the job's length
(:data:`~service.sizing.resolve.LENGTH_FIELDS`): its memory fit, its echo, every note after
the workload's own assumptions (the ZeRO-Offload one, which shows the job's hours, as
:data:`OFFLOAD_NOTE`) and whether time is estimated (whether the work and the peak are
known, which the notes explain)."""

OFFLOAD_NOTE = "\x00offload"
"""Where the ZeRO-Offload note goes in a :data:`PlacedEstimate`'s notes (by identity)."""


def placed_estimate(
    rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement
) -> PlacedEstimate:
    """The length-independent part of ``rw``'s estimate on ``placement`` (the ZeRO stage /
    TP chosen as the smallest that fits unless given)."""
    notes: list[str] = []
    memory, echo = _place(rw, spec, placement, notes)
    devices = placement.count
    time = _time(rw, spec, devices, echo)
    _time_notes(rw, spec, devices, time, notes)
    if rw.inference is not None:
        _serving_notes(rw, spec, devices, notes)
    _closing_notes(rw, memory, host_for(rw, devices), notes)
    return memory, echo, tuple(notes), time is not None


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
    devices = placement.count if placement is not None else 1
    echo = None
    throughput = None
    time: TimeEstimate | None = None
    host = host_for(rw, devices)
    if spec is not None and placement is not None:
        memory, echo, placed_notes, timed = place(rw, spec, placement)
        time = _time(rw, spec, devices, echo)
        if timed != (time is not None):  # kept for another job than this one: not its notes
            memory, echo, placed_notes, timed = placed_estimate(rw, spec, placement)
        for note in placed_notes:
            if note is OFFLOAD_NOTE:
                _offload_note(rw, devices, notes)
            else:
                notes.append(note)
        if rw.inference is not None:
            rate = inference_throughput(rw, spec, devices)
            throughput = rate if rate > 0 else None
    else:
        memory = memory_for(rw, 1)
        notes.append("No placement given: memory is for one device and time is not estimated.")
        _closing_notes(rw, memory, host, notes)
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


def _time(
    rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int, echo: PlacementEcho
) -> TimeEstimate | None:
    return time_for(
        rw,
        spec,
        devices,
        pipeline_parallel=echo.pipeline_parallel or 1,
        tensor_parallel=echo.tensor_parallel or 1,
        zero_stage=echo.zero_stage,
    )


def _serving_notes(
    rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int, notes: list[str]
) -> None:
    assert rw.inference is not None
    w = rw.workload
    if getattr(w, "precision", "") == "bf16" and not spec.supports_bf16:
        notes.append(f"{spec.name} has no BF16: the weights are served in FP16.")
    if spec.mem_bandwidth_gbps:
        eng = engine_profile(rw.inference.engine)
        eff = bandwidth_efficiency(rw.inference.engine, rw.inference.precision)
        notes.append(
            f"Decode throughput ({eng.note}): each step reads the weights it touches "
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


def _closing_notes(
    rw: ResolvedWorkload, memory: MemoryBreakdown, host: HostRequirements, notes: list[str]
) -> None:
    """Memory range, overhead and host notes (``host``: only its network is read)."""
    spread = SPREADS["train_memory" if rw.training is not None else "inference_memory"]
    notes.append(
        f"Memory range {memory.range_gib[0]:.1f}-{memory.range_gib[1]:.1f} GiB: the 5th-95th "
        f"percentile of measured/estimated over {spread.cases} published measurements of "
        f"{'training' if rw.training is not None else 'serving'} jobs."
    )
    _overhead_note(rw, notes)
    notes.append(
        f"Host: {VCPUS_PER_DEVICE_MIN}-{VCPUS_PER_DEVICE_RECOMMENDED} vCPUs per accelerator and "
        "at least 32 GiB RAM (seed practice), RAM for one 16-bit copy of the weights (+20 %) and "
        "8 GiB per accelerator; disk for the weights, two checkpoints and the tokenized data."
    )
    if host.network == "rdma":
        notes.append(
            f"More than {DEVICES_PER_NODE} accelerators span nodes: RDMA (InfiniBand/RoCE/eRDMA) "
            "networking is required."
        )


def _place(
    rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement, notes: list[str]
) -> tuple[MemoryBreakdown, PlacementEcho]:
    devices = placement.count
    heads = rw.arch.heads if rw.arch is not None else None
    if placement.tensor_parallel and heads and heads % placement.tensor_parallel:
        raise InputError(
            "placement.tensor_parallel",
            f"tensor_parallel ({placement.tensor_parallel}) must divide the model's "
            f"{heads} attention heads",
            zh=f"tensor_parallel（{placement.tensor_parallel}）必须整除模型的 {heads} 个注意力头",
        )
    fit = fit_placement(
        rw,
        spec,
        devices,
        ESTIMATE_HEADROOM_FRAC,
        zero_stage=placement.zero_stage,
        tensor_parallel=placement.tensor_parallel,
        pipeline_parallel=placement.pipeline_parallel,
    )
    pp = 1
    if fit is not None:
        memory, stage, tp, fits = fit.memory, fit.zero_stage, fit.tensor_parallel, True
        pp = fit.pipeline_parallel
    else:
        fits = False
        if rw.training is not None:
            stage = placement.zero_stage
            tp = placement.tensor_parallel or 1
            pp = placement.pipeline_parallel or 1
            if stage is None:
                stage = 3 if devices // (tp * pp) > 1 else 0
        else:
            stage = None
            tp = placement.tensor_parallel or _tp_degrees(rw, devices)[-1]
        memory = memory_for(rw, devices, stage, tp, pp)
        notes.append(
            f"Does not fit: needs {memory.per_device_gib:.1f} GiB per device, {spec.name} has "
            f"{spec.memory_gib:g} GiB (keeping {ESTIMATE_HEADROOM_FRAC:.0%} free)."
        )
    if fit is not None and fit.checked_high:
        notes.append(
            f"Fit checked against the high end of the memory range too "
            f"({memory.range_gib[1]:.1f} GiB of {spec.memory_gib:g} GiB)."
        )
    if rw.training is not None and devices > 1:
        dp = max(devices // (tp * pp), 1)
        notes.append(
            f"ZeRO stage {stage} over {dp} data-parallel replicas"
            + (f", tensor parallel {tp}" if tp > 1 else "")
            + (f", {pp} pipeline stages" if pp > 1 else "")
            + (" (the smallest layout that fits)" if placement.zero_stage is None and fits else "")
            + "."
        )
    _lone_replica_note(rw, placement, devices // max(tp * pp, 1), notes)
    if rw.inference is not None and tp > 1:
        notes.append(
            f"Tensor parallel degree {tp}"
            + (" (the smallest that fits)." if placement.tensor_parallel is None else ".")
        )
    echo = PlacementEcho(
        accelerator=spec.name,
        count=devices,
        zero_stage=stage if rw.training is not None else None,
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
    time: TimeEstimate | None,
    notes: list[str],
) -> None:
    w = rw.workload
    if isinstance(w, Inference):
        if w.output_tokens is None:
            notes.append("No output_tokens given: time is not estimated.")
        return
    assert isinstance(w, Pretrain | Finetune | Rlhf)
    peak = peak_tflops(spec, w.precision)
    if time is None:
        if rw.tokens is None:
            notes.append("No tokens given: compute and time are not estimated.")
        elif peak is None:
            notes.append(f"{spec.name} has no published dense {w.precision} peak: time unknown.")
        else:
            notes.append("No FLOP count is known for this model: time unknown.")
        return
    util, basis = training_utilization(rw, spec)
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
    else:
        notes.append(
            "Time (whole run incl. restarts, evaluation and checkpoints): model FLOPs "
            f"(6·N + attention) / ({devices} x {peak:g} TFLOPS dense x MFU {util:.2f}); MFU "
            f"prior: {basis}."
        )
    notes.append(OFFLOAD_NOTE)  # its hours depend on the job's length: filled per estimate
    if rw.arch is not None and rw.arch.active_params < rw.arch.params:
        notes.append("MoE: compute counts active parameters, memory counts all experts.")


def _offload_note(rw: ResolvedWorkload, devices: int, notes: list[str]) -> None:
    off = offload_seconds(rw, devices)
    if off:
        notes.append(
            f"ZeRO-Offload moves gradients and weights over the host link ({HOST_LINK_GBPS:g} "
            f"GB/s per device, PCIe 4.0 x16): +{off / 3600:.2f} h."
        )


def _overhead_note(rw: ResolvedWorkload, notes: list[str]) -> None:
    if rw.training is not None:
        notes.append(
            f"Overhead: {TRAIN_OVERHEAD_GIB:g} GiB per device for the CUDA/CANN context and "
            f"communication buffers plus {FRAGMENTATION:.0%} allocator fragmentation."
        )
    else:
        notes.append(
            f"Overhead: {INFER_OVERHEAD_GIB:g} GiB per device for the runtime context "
            "(CUDA graphs and engine buffers may add 1-3 GiB)."
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
    time = None if hours is None else TimeEstimate(hours=hours, device_hours=0.0, mfu=None)
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
    notes.append(
        f"ZeRO-{stage} over {where} shards nothing: the weights, gradients and optimizer "
        "states stay whole on each device; use CPU offload or more devices to spread them."
    )
