"""The sizing engine: memory, compute, time and host for any deep-learning workload.

Pure functions, no I/O, no clock. The planner calls them as a façade:

- :func:`resolve_workload` once per request (model, architecture, byte budgets);
- :func:`memory_for` / :func:`fit_placement` / :func:`time_for` /
  :func:`inference_throughput` per candidate placement (microseconds each);
  :func:`training_layouts` lists the (tensor, pipeline) degrees a device count allows, in
  the order :func:`fit_placement` tries them; :func:`memory_ladder` sizes each layout of
  a device count once for every accelerator (:func:`first_fit` checks one against it);
- :func:`host_for` for the CPU side; :func:`estimate` for ``POST /v1/estimate``
  (:func:`estimate_resolved` when the workload is already resolved).
"""

from service.sizing.compute import compute_for, inference_throughput, preprocess_hours, time_for
from service.sizing.estimate import PlacedEstimate, estimate, estimate_resolved, placed_estimate
from service.sizing.host import host_for
from service.sizing.memory import (
    Layout,
    first_fit,
    fit_placement,
    memory_for,
    memory_ladder,
    training_layouts,
)
from service.sizing.presets import (
    ModelPreset,
    ModelRegistry,
    builtin_presets,
)
from service.sizing.resolve import ResolvedWorkload, resolve_workload
from service.sizing.results import (
    ComputeEstimate,
    EstimateResponse,
    Fit,
    HostRequirements,
    MemoryBreakdown,
    PlacementEcho,
    TimeEstimate,
)
from service.sizing.workload import (
    Finetune,
    Inference,
    ModelSpec,
    Placement,
    Preprocess,
    Pretrain,
    Rlhf,
    Workload,
    validate_workload,
)

Requirements = ResolvedWorkload
"""Alias: the design calls the resolved workload "Requirements"."""

__all__ = [
    "ComputeEstimate",
    "EstimateResponse",
    "Finetune",
    "Fit",
    "HostRequirements",
    "Inference",
    "Layout",
    "MemoryBreakdown",
    "ModelPreset",
    "ModelRegistry",
    "ModelSpec",
    "PlacedEstimate",
    "Placement",
    "PlacementEcho",
    "Preprocess",
    "Pretrain",
    "Requirements",
    "ResolvedWorkload",
    "Rlhf",
    "TimeEstimate",
    "Workload",
    "builtin_presets",
    "compute_for",
    "estimate",
    "estimate_resolved",
    "first_fit",
    "fit_placement",
    "host_for",
    "inference_throughput",
    "memory_for",
    "memory_ladder",
    "placed_estimate",
    "preprocess_hours",
    "resolve_workload",
    "time_for",
    "training_layouts",
    "validate_workload",
]
