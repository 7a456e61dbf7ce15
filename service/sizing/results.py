"""What the sizing engine returns: memory, compute, time, host, and the estimate as a whole.

Units: memory in GiB (2^30 bytes), field names end in ``_gib``. The parts of a
:class:`MemoryBreakdown` add up to ``per_device_gib`` exactly (it is computed as their sum),
so a client can show the breakdown without a rounding remainder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec

Network = Literal["standard", "rdma"]

# The [low, high] ranges are typed as sequences (a plain JSON array of two numbers: the
# tuple schema's closing `items: false` breaks some client generators) and built as
# tuples, so a breakdown stays hashable for the planner's caches.


# gc=False (here and on Fit): numbers only, so no reference cycle can pass through them,
# and the planner's memo keeps tens of thousands (the placements of every recent job
# shape) that the cycle collector would otherwise walk on every full collection. (A
# comment, not the docstring: docstrings are the OpenAPI descriptions.)
class MemoryBreakdown(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Accelerator memory needed on *each* device of the placement (GiB)."""

    per_device_gib: Annotated[
        float,
        msgspec.Meta(
            description="Total accelerator memory needed on each device, in GiB: the sum of the "
            "parts below."
        ),
    ]
    weights_gib: Annotated[
        float, msgspec.Meta(description="Model weights held on each device, in GiB.")
    ]
    gradients_gib: Annotated[
        float, msgspec.Meta(description="Gradients held on each device, in GiB (0 for inference).")
    ]
    optimizer_gib: Annotated[
        float,
        msgspec.Meta(
            description="Optimizer states (and fp32 master weights) held on each device, in GiB "
            "(0 for inference)."
        ),
    ]
    activations_gib: Annotated[
        float,
        msgspec.Meta(
            description="Activations kept for the backward pass on each device, in GiB (0 for "
            "inference)."
        ),
    ]
    kv_cache_gib: Annotated[
        float,
        msgspec.Meta(description="KV cache on each device, in GiB (inference; 0 for training)."),
    ]
    overhead_gib: Annotated[
        float,
        msgspec.Meta(
            description="CUDA/CANN context, communication buffers and allocator fragmentation on "
            "each device, in GiB."
        ),
    ]
    range_gib: Annotated[
        Sequence[float],
        msgspec.Meta(
            description="Calibrated range [low, high] of the per-device figure: the spread "
            "of the engine's errors against published measurements of this kind of job "
            "(training or serving), not a fixed margin.",
            min_length=2,
            max_length=2,
        ),
    ] = (0.0, 0.0)


class Fit(msgspec.Struct, frozen=True, kw_only=True, gc=False):  # gc=False: see MemoryBreakdown
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
    batch: int | None = None
    """Serving sized by the planner's batching (:mod:`service.sizing.batch`): the
    sequences one server runs at once; ``None`` = the request's concurrency."""
    shared: bool = False
    """Serving: the request's concurrency shared out over the servers, each running
    ``batch`` of it with its own copy of the model, because one server cannot hold it all."""


class ComputeEstimate(msgspec.Struct, frozen=True, kw_only=True):
    """Work of the job: model FLOPs (6·P_active·tokens for training, 2·P per token served)."""

    flops: Annotated[
        float | None,
        msgspec.Meta(
            description="Model FLOPs of the whole job (6 x active parameters x tokens for "
            "training, 2 x parameters per generated token for serving); `null` when "
            "not FLOP-bound (preprocessing)."
        ),
    ]
    tokens: Annotated[
        float | None,
        msgspec.Meta(
            description="Tokens (or samples for image models) the FLOPs are counted over; `null` "
            "when not given."
        ),
    ]
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

    hours: Annotated[
        float, msgspec.Meta(description="Estimated wall-clock hours on the placement.")
    ]
    device_hours: Annotated[
        float, msgspec.Meta(description="Accelerator-hours: `hours` x the number of accelerators.")
    ]
    mfu: Annotated[
        float | None,
        msgspec.Meta(
            description="Model FLOPs utilization assumed (share of the accelerators' dense peak);"
            " `null` where time is not FLOP-bound (preprocessing, "
            "memory-bandwidth-bound decoding)."
        ),
    ]
    hours_range: Annotated[
        Sequence[float],
        msgspec.Meta(
            description="Calibrated range [low, high] of `hours`, from the spread of the "
            "engine's errors against published training speeds and serving throughputs; "
            "preprocessing has no calibration data, so its range is `[hours, hours]`.",
            min_length=2,
            max_length=2,
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

    vcpus: Annotated[
        int,
        msgspec.Meta(
            description="Minimum vCPUs for the whole placement (4 per accelerator for accelerator"
            " jobs, 8 when training an image model, whose JPEG decoding runs on the CPU)."
        ),
    ]
    vcpus_recommended: Annotated[
        int,
        msgspec.Meta(
            description="Recommended vCPUs for the whole placement, so data loading keeps the "
            "accelerators busy."
        ),
    ]
    ram_gib: Annotated[
        float,
        msgspec.Meta(
            description="Host RAM for the whole placement, in GiB (includes `offload_ram_gib`)."
        ),
    ]
    disk_gib: Annotated[
        float,
        msgspec.Meta(description="Local disk for data, checkpoints and the environment, in GiB."),
    ]
    network: Annotated[
        Network,
        msgspec.Meta(
            description="`rdma` when the job cannot stay in one 8-accelerator server "
            "(multi-node), else `standard`."
        ),
    ]
    offload_ram_gib: Annotated[
        float,
        msgspec.Meta(
            description="Host RAM used by ZeRO-Offload, in GiB (already included in `ram_gib`)."
        ),
    ] = 0.0
    io_mb_per_s: Annotated[
        float | None,
        msgspec.Meta(
            description="Sustained storage throughput needed, in MB/s (preprocessing); `null` "
            "otherwise."
        ),
    ] = None


class PlacementEcho(msgspec.Struct, frozen=True, kw_only=True):
    """The placement the estimate was computed for, with the choices the engine made."""

    accelerator: Annotated[
        str, msgspec.Meta(description="Canonical accelerator name the estimate was computed for.")
    ]
    count: Annotated[int, msgspec.Meta(description="Accelerators in total.")]
    zero_stage: Annotated[
        int | None,
        msgspec.Meta(
            description="ZeRO stage used (given, or the smallest that fits); `null` for inference."
        ),
    ]
    tensor_parallel: Annotated[
        int, msgspec.Meta(description="Tensor-parallel degree used (inference; 1 for training).")
    ]
    fits: Annotated[
        bool,
        msgspec.Meta(
            description="True when the job fits in the accelerators' memory with this placement."
        ),
    ]
    headroom_gib: Annotated[
        float,
        msgspec.Meta(
            description="Memory left free on each device, in GiB (negative when it does not fit)."
        ),
    ]
    pipeline_parallel: Annotated[
        int,
        msgspec.Meta(
            description="Pipeline-parallel stages used (training; serving: the servers one "
            "replica spans when the model does not fit one); 1 = none."
        ),
    ] = 1
    nodes: Annotated[int, msgspec.Meta(description="Servers the accelerators are spread over.")] = 1
    replicas: Annotated[
        int | None,
        msgspec.Meta(
            description="Serving: model replicas (one per server, per pipeline of servers, "
            "or several on one server, one per tensor-parallel group); "
            "`throughput_tokens_per_s` is all of them together. `null` for training."
        ),
    ] = None


class EstimateResponse(msgspec.Struct, frozen=True, kw_only=True):
    """``POST /v1/estimate`` answer."""

    model: Annotated[
        str | None,
        msgspec.Meta(
            description="Preset id the estimate used; `null` for a model given by size "
            "(`{params_b, ...}`) or a preprocessing job."
        ),
    ]
    memory: Annotated[
        MemoryBreakdown,
        msgspec.Meta(
            description="Accelerator memory per device, by part (GiB); the parts add up to "
            "`per_device_gib` exactly."
        ),
    ]
    compute: Annotated[ComputeEstimate, msgspec.Meta(description="Work of the job in model FLOPs.")]
    time: Annotated[
        TimeEstimate | None,
        msgspec.Meta(description="Wall-clock time on the placement; `null` without a placement."),
    ]
    host: Annotated[
        HostRequirements,
        msgspec.Meta(description="CPU side of the job: vCPUs, RAM, disk, network."),
    ]
    assumptions: Annotated[
        list[str],
        msgspec.Meta(
            description="Every prior and default the estimate used (MFU, overheads, nearest "
            "preset), as sentences."
        ),
    ]
    placement: Annotated[
        PlacementEcho | None,
        msgspec.Meta(
            description="The placement the estimate was computed for, with the choices made (ZeRO"
            " stage, tensor parallel); `null` without one."
        ),
    ] = None
    throughput_tokens_per_s: Annotated[
        float | None,
        msgspec.Meta(
            description="Decode throughput of the placement in tokens per second (inference), "
            "bounded by memory bandwidth; for an encoder-only model, tokens encoded per "
            "second (sequences/s x context_len, compute-bound); `null` otherwise."
        ),
    ] = None
    kv_cache_bytes_per_token: Annotated[
        float | None,
        msgspec.Meta(
            description="KV cache bytes per token of context (inference); `null` otherwise."
        ),
    ] = None
    throughput_range: (
        Annotated[
            Sequence[float],
            msgspec.Meta(
                description="Calibrated range [low, high] of `throughput_tokens_per_s`, from "
                "the spread of the engine's errors against published serving benchmarks.",
                min_length=2,
                max_length=2,
            ),
        ]
        | None
    ) = None
