"""Serving over several servers: one model replica per node, tensor parallel inside it.

A serving engine shards one model over the accelerators of *one* server by tensor
parallelism and runs one replica per server beside the others; it does not stretch one
tensor-parallel group over servers by default. When the model does not fit one server,
it adds pipeline parallelism across servers, the tensor-parallel size being the
accelerators of a server and the pipeline size the servers (vLLM, "Distributed Inference
and Serving", https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html: "the
tensor parallel size should be the number of GPUs in each node, and the pipeline
parallel size should be the number of nodes"). So ``count`` accelerators over ``nodes``
servers serve as:

* the model fits one server: ``nodes`` replicas, each at its share of the concurrency (or
  at the batch that reaches its share of the throughput target, :mod:`batch`); the
  deployment's rate is ``nodes`` x one server's;
* it does not: replicas of ``pp`` servers each (the fewest that hold it). The stages of a
  pipeline work one after another on every decode step (GPipe, Huang et al. 2019,
  https://arxiv.org/abs/1811.06965; micro-batches only keep the other stages busy), so a
  replica of ``pp`` servers decodes about as fast as one server would if the model fit
  it: the stated cost is that the other ``pp - 1`` servers add memory, not speed (per
  accelerator, 1/``pp`` of a single-server replica's rate), and the activations sent
  between servers at every stage boundary are not counted on top.

The planner sizes serving one replica per node in the same way
(:mod:`service.planning.place`); ``/v1/estimate`` uses this module so that the same job on
the same servers gets the same batch, fit and rate from both routes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing.batch import (
    BATCH_HEADROOM_FRAC,
    at_concurrency,
    batch_ceiling,
    batch_for,
    batches_to_target,
)
from service.sizing.compute import inference_throughput
from service.sizing.host import DEVICES_PER_NODE
from service.sizing.memory import fit_placement
from service.sizing.resolve import ResolvedWorkload
from service.sizing.results import Fit
from service.sizing.workload import Inference


@dataclass(frozen=True, slots=True)
class ServingLayout:
    """How ``count`` accelerators over ``nodes`` servers serve one model."""

    nodes: int
    per_node: int
    pipeline: int
    """Servers one replica spans (1: the model fits one server)."""
    rw: ResolvedWorkload
    """The workload as one replica serves it (its concurrency or batch)."""
    batch: int | None
    """Sequences per replica chosen to reach the throughput target (``None``: as asked)."""
    fit: Fit | None
    """Per-device fit of one replica (``None``: it fits no layout tried)."""

    @property
    def replicas(self) -> int:
        return self.nodes // self.pipeline

    @property
    def devices(self) -> int:
        """Accelerators of one replica."""
        return self.per_node * self.pipeline

    def rate(self, spec: AcceleratorSpec) -> float:
        """Tokens/s of the deployment: replicas x one replica's rate, a replica over
        several servers decoding at one server's rate (see module); 0.0 when unknown."""
        return self.replicas * inference_throughput(self.rw, spec, self.per_node)


def node_split(count: int, nodes: int | None) -> tuple[int, int]:
    """(servers, accelerators per server) for ``count`` accelerators: as given, or one
    server up to :data:`DEVICES_PER_NODE`, else the fewest servers of at most that many."""
    if nodes is None:
        nodes = math.ceil(count / DEVICES_PER_NODE)
    if nodes > count or count % nodes:
        raise InputError(
            "placement.nodes",
            f"{count} accelerators do not split evenly over {nodes} servers",
            zh=f"{count} 张加速卡无法平均分到 {nodes} 台服务器上",
        )
    return nodes, count // nodes


def serving_layout(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    count: int,
    nodes: int | None,
    headroom_frac: float,
    tensor_parallel: int | None = None,
) -> ServingLayout:
    """The replicas of a serving job on ``count`` x ``spec`` over ``nodes`` servers: the
    fewest servers per replica that hold the model (see module)."""
    assert isinstance(rw.workload, Inference)
    servers, per_node = node_split(count, nodes)
    if tensor_parallel is not None and tensor_parallel > per_node:
        raise InputError(
            "placement.tensor_parallel",
            f"tensor_parallel ({tensor_parallel}) is larger than the {per_node} accelerators of "
            "one server: serving engines shard a model by tensor parallelism within a server "
            "and use pipeline stages across servers",
            zh=f"tensor_parallel（{tensor_parallel}）大于单台服务器的 {per_node} 张加速卡："
            "推理引擎只在单台服务器内做张量并行，跨服务器用流水线并行",
        )
    last: ServingLayout | None = None
    for pipeline in (p for p in range(1, servers + 1) if servers % p == 0):
        last = _replica(rw, spec, servers, per_node, pipeline, headroom_frac, tensor_parallel)
        if last.fit is not None:
            return last
    assert last is not None
    return last


def _replica(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    servers: int,
    per_node: int,
    pipeline: int,
    headroom_frac: float,
    tensor_parallel: int | None,
) -> ServingLayout:
    """One replica over ``pipeline`` servers: its batch or share of the concurrency, and
    its fit (over several servers: :func:`replica_fit`)."""
    workload = rw.workload
    assert isinstance(workload, Inference)
    replicas = servers // pipeline

    def fits(served: ResolvedWorkload, headroom: float) -> Fit | None:
        if pipeline == 1:
            return fit_placement(served, spec, per_node, headroom, tensor_parallel=tensor_parallel)
        return replica_fit(served, spec, per_node, pipeline, headroom)

    batch = None
    if batches_to_target(workload) and not rw.image_model and rw.arch is not None:
        target = (workload.target_tokens_per_s or 0.0) / replicas
        batch = batch_for(
            lambda b: fits(at_concurrency(rw, b), BATCH_HEADROOM_FRAC) is not None,
            lambda b: inference_throughput(at_concurrency(rw, b), spec, per_node),
            batch_ceiling(workload),
            target,
        )
    if batch is not None:
        served = at_concurrency(rw, batch)
    elif replicas > 1 and rw.arch is not None and rw.inference is not None and not rw.image_model:
        # (image models keep their own budget: re-sizing it as a KV-cache batch is wrong)
        served = at_concurrency(rw, math.ceil(rw.inference.concurrency / replicas))
    else:
        served = rw
    fit = fits(served, headroom_frac)
    return ServingLayout(servers, per_node, pipeline, served, batch, fit)


def replica_fit(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    per_node: int,
    pipeline: int,
    headroom_frac: float,
    *,
    safe: bool = False,
) -> Fit | None:
    """The per-device fit of one replica over ``pipeline`` servers of ``per_node`` x
    ``spec``: tensor parallel ``per_node`` within each server, ``pipeline`` stages across
    them (see module), or ``None``. Each stage holds the weights and the KV cache of its
    own layers only (:func:`~service.sizing.memory.memory_for`), so a device holds about
    1/(tensor x pipeline) of the weights and the KV cache's tensor share of its stage's
    layers. ``/v1/estimate`` and the planner both size a replica over several servers
    here (``safe``: the planner's check of the range's high end)."""
    devices = per_node * pipeline
    return fit_placement(
        rw,
        spec,
        devices,
        headroom_frac,
        tensor_parallel=per_node,
        pipeline_parallel=pipeline,
        safe=safe,
    )
