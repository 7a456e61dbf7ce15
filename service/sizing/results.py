"""What the sizing engine returns: memory, compute, time, host, and the estimate as a whole.

Units: memory in GiB (2^30 bytes), field names end in ``_gib``. The parts of a
:class:`MemoryBreakdown` add up to ``per_device_gib`` exactly (it is computed as their sum),
so a client can show the breakdown without a rounding remainder.
"""

from __future__ import annotations

from typing import Literal

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


class Fit(msgspec.Struct, frozen=True, kw_only=True):
    """How a workload fits one accelerator model x count."""

    zero_stage: int | None
    """ZeRO stage used (training); ``None`` for inference."""
    tensor_parallel: int
    memory: MemoryBreakdown
    headroom_gib: float
    """Device memory left free: accelerator memory minus ``memory.per_device_gib``."""


class ComputeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Work of the job: model FLOPs (6·P_active·tokens for training, 2·P per token served)."""

    flops: float | None
    tokens: float | None


class TimeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Wall-clock time on the placement and the MFU it assumes."""

    hours: float
    device_hours: float
    mfu: float | None
    """Model FLOPs utilization assumed; ``None`` where time is not FLOP-bound (preprocess,
    bandwidth-bound decoding)."""


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
    kv_cache_bytes_per_token: float | None = None
