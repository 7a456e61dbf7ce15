"""What the sizing engine returns: memory, compute, time, host, and the estimate as a whole.

Units: memory in GiB (2^30 bytes), field names end in ``_gib``. The parts of a
:class:`MemoryBreakdown` add up to ``per_device_gib`` exactly (it is computed as their sum),
so a client can show the breakdown without a rounding remainder.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

Network = Literal["standard", "rdma"]


class MemoryBreakdown(msgspec.Struct, frozen=True, kw_only=True):
    """Accelerator memory needed on *each* device of the placement (GiB)."""

    per_device_gib: float
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    kv_cache_gib: float
    overhead_gib: float
    """CUDA/CANN context, communication buffers and allocator fragmentation."""
    range_gib: Annotated[
        tuple[float, float],
        msgspec.Meta(
            description="Calibrated range [low, high] of the per-device figure: the spread "
            "of the engine's errors against published measurements of this kind of job "
            "(training or serving), not a fixed margin."
        ),
    ] = (0.0, 0.0)


class Fit(msgspec.Struct, frozen=True, kw_only=True):
    """How a workload fits one accelerator model x count."""

    zero_stage: int | None
    """ZeRO stage used (training); ``None`` for inference."""
    tensor_parallel: int
    memory: MemoryBreakdown
    headroom_gib: float
    """Device memory left free: accelerator memory minus ``memory.per_device_gib``."""
    pipeline_parallel: int = 1
    """Pipeline stages (training); 1 = none."""
    checked_high: bool = False
    """The fit was checked against the high end of ``memory.range_gib`` too (a safety
    headroom was asked for)."""


class ComputeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Work of the job: model FLOPs (6·P_active·tokens for training, 2·P per token served)."""

    flops: float | None
    tokens: float | None
    hardware_flops: Annotated[
        float | None,
        msgspec.Meta(
            description="FLOPs the accelerators execute for a training job: forward, backward "
            "(no weight gradients for frozen weights under LoRA/QLoRA), attention and "
            "recompute; what the time estimate divides by the steady-state utilization."
        ),
    ] = None


class TimeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Wall-clock time on the placement and the MFU it assumes."""

    hours: float
    device_hours: float
    mfu: float | None
    """Model FLOPs utilization assumed; ``None`` where time is not FLOP-bound (preprocess,
    bandwidth-bound decoding)."""
    hours_range: Annotated[
        tuple[float, float],
        msgspec.Meta(
            description="Calibrated range [low, high] of `hours`, from the spread of the "
            "engine's errors against published training speeds and serving throughputs."
        ),
    ] = (0.0, 0.0)
    basis: Annotated[
        Literal["steady", "run"] | None,
        msgspec.Meta(
            description="`steady`: steady-state throughput of the training loop; `run`: "
            "whole-run wall clock incl. restarts, evaluation and checkpoints; null for "
            "serving and preprocessing."
        ),
    ] = None


class HostRequirements(msgspec.Struct, frozen=True, kw_only=True):
    """CPU side of the job, for the whole placement (a planner splitting it over nodes
    divides ``vcpus``, ``ram_gib`` and ``offload_ram_gib`` by the node count)."""

    vcpus: int
    """Minimum vCPUs (4 per accelerator for accelerator jobs)."""
    vcpus_recommended: int
    ram_gib: float
    disk_gib: float
    network: Network
    """``rdma`` when the job cannot stay in one 8-accelerator server."""
    offload_ram_gib: float = 0.0
    """Host RAM for ZeRO-Offload (included in ``ram_gib``)."""
    io_mb_per_s: float | None = None
    """Sustained storage throughput needed (preprocess)."""


class PlacementEcho(msgspec.Struct, frozen=True, kw_only=True):
    """The placement the estimate was computed for, with the choices the engine made."""

    accelerator: str
    count: int
    zero_stage: int | None
    tensor_parallel: int
    fits: bool
    headroom_gib: float
    pipeline_parallel: Annotated[
        int, msgspec.Meta(description="Pipeline-parallel stages used (training); 1 = none.")
    ] = 1


class EstimateResponse(msgspec.Struct, frozen=True, kw_only=True):
    """``POST /v1/estimate`` answer."""

    model: str | None
    """Preset id, or ``null`` for a custom ``{params_b, ...}`` model / preprocess."""
    memory: MemoryBreakdown
    compute: ComputeEstimate
    time: TimeEstimate | None
    host: HostRequirements
    assumptions: list[str]
    placement: PlacementEcho | None = None
    throughput_tokens_per_s: float | None = None
    """Decode tokens/s of the placement (inference), bounded by memory bandwidth."""
    throughput_range: Annotated[
        tuple[float, float] | None,
        msgspec.Meta(
            description="Calibrated range [low, high] of `throughput_tokens_per_s`, from the "
            "spread of the engine's errors against published serving benchmarks."
        ),
    ] = None
    kv_cache_bytes_per_token: float | None = None
