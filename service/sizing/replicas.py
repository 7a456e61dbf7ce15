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

Inside one server the degree is the lowest that holds the model with its copies' share of
the sequences and reaches the throughput target (:func:`lowest_fit`), so a server of
``per_node`` devices at degree ``t < per_node`` holds ``per_node // t`` copies of the
model, each at its share of the server's sequences (the memory is sized so:
:func:`~service.sizing.memory.memory_for`), deployed as vLLM's data parallelism
(``--data-parallel-size``: "model weights are replicated across separate instances/GPUs to
process independent batches of requests",
https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/) or as that many engines
behind a load balancer. :func:`server_rate` times it so: each copy decodes its own batch
over its own ``t`` devices, and the copies' rates add up (review 7 J4).

The lowest degree is vLLM's own rule ("If your model fits in a single GPU, you probably
don't need to use distributed inference", Distributed Inference and Serving,
https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html; session 13): each wider
split adds an all-reduce in every layer. Its stated cost: at a few sequences per copy a
decode step reads the copy's whole weight shard, so one wider copy over the same devices
would decode up to ``per_node // t`` times faster (session 9 chose that); at a fixed
concurrency each request then sees fewer tokens/s (the request has no latency field to
weigh it against). A target no degree reaches on one server takes the fastest degree
(:func:`fastest`: the fewest servers), and so does a batch job, whose hours follow its
rate; vLLM also raises the tensor-parallel size to give each GPU more room for the KV
cache ("Optimization and Tuning",
https://docs.vllm.ai/en/v0.17.1/configuration/optimization/), which the memory check
here does when the lower degree does not hold the sequences.

The planner sizes serving one replica per node in the same way
(:mod:`service.planning.place`); ``/v1/estimate`` uses this module so that the same job on
the same servers gets the same batch, fit and rate from both routes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from service.catalog.models import AcceleratorSpec
from service.runtime.errors import InputError
from service.sizing.batch import (
    BATCH_HEADROOM_FRAC,
    at_concurrency,
    batch_ceiling,
    batch_for,
    batches,
    copies_batch,
    degree_target,
)
from service.sizing.compute import inference_throughput
from service.sizing.host import DEVICES_PER_NODE
from service.sizing.memory import (
    Layout,
    first_fit,
    fit_placement,
    memory_ladder,
    serving_degrees,
)
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

    @property
    def copies(self) -> int:
        """Copies of the model busy on each server (:func:`in_server_copies`)."""
        if self.fit is None or self.pipeline > 1:
            return 1
        return in_server_copies(self.rw, self.per_node, self.fit.tensor_parallel)

    def rate(self, spec: AcceleratorSpec) -> float:
        """Tokens/s of the deployment: replicas x one replica's rate, a replica over
        several servers decoding at one server's rate, a server of several copies at
        theirs summed (see module); 0.0 when unknown."""
        return self.replicas * _rate_at(
            self.rw, spec, self.per_node, None if self.pipeline > 1 else self.fit
        )


COPIES: dict[str, dict[str, str]] = {
    "en": {
        "sentence": "{copies} copies of the model on each server, {each} with {seqs} "
        "{noun} each ({how}): the throughput is the copies' together, each running "
        "its own batch.",
        "each_tp": "each tensor parallel {tp} over {tp} accelerators",
        "each_one": "one per accelerator (tensor parallel 1)",
        "one": "sequence",
        "many": "sequences",
        "vllm": "vLLM --data-parallel-size {copies}, or {copies} engines behind a load balancer",
        "other": "{copies} engine instances behind a load balancer",
        "or": "{a} or {b}",
    },
    "zh": {
        "sentence": "每台服务器上运行 {copies} 份模型副本，{each}，各处理 {seqs} 个序列"
        "（{how}）：吞吐为各副本之和，每份各自处理自己的一批请求。",
        "each_tp": "每份张量并行 {tp}（{tp} 卡）",
        "each_one": "每卡一份（张量并行 1）",
        "vllm": "vLLM --data-parallel-size {copies}，或 {copies} 个引擎实例加负载均衡",
        "other": "{copies} 个引擎实例加负载均衡",
        "or": "{a} 或 {b}",
    },
}
"""The words for several copies of the model on one server (both routes say them)."""


def copies_sentence(
    lang: str, copies: int, tensor_parallel: int, sequences: int, engine: str, moe: bool
) -> str:
    """That a server runs ``copies`` copies at ``tensor_parallel`` each, how the
    ``sequences`` share out and how the copies are launched. vLLM's own flag is named for
    dense models only: under it a MoE model's expert layers form one tensor-parallel group
    over all the copies' devices (vLLM's data-parallel deployment guide), which is not the
    independent copies sized here."""
    words = COPIES[lang]
    share, extra = divmod(sequences, copies)
    seqs = str(share) if not extra else words["or"].format(a=share + 1, b=share)
    each = words["each_tp" if tensor_parallel > 1 else "each_one"].format(tp=tensor_parallel)
    how = words["vllm" if engine == "vllm" and not moe else "other"].format(copies=copies)
    noun = words.get("one" if seqs == "1" else "many", "")  # zh has no plural
    return words["sentence"].format(copies=copies, each=each, seqs=seqs, noun=noun, how=how)


def in_server_copies(rw: ResolvedWorkload, devices: int, tensor_parallel: int) -> int:
    """Copies of the model that serve on a server of ``devices`` at ``tensor_parallel``:
    one per tensor-parallel group (as the memory is sized), but no more than there are
    sequences to share (a copy without one adds no rate), and one for image models,
    whose rate is the devices' together whatever the split."""
    b = rw.inference
    groups = max(devices // max(tensor_parallel, 1), 1)
    if b is None or rw.image_model or groups == 1:
        return 1
    return max(min(groups, b.concurrency), 1)


def server_rate(
    rw: ResolvedWorkload, spec: AcceleratorSpec, devices: int, tensor_parallel: int
) -> float:
    """Tokens/s of one server of ``devices`` x ``spec`` serving at ``tensor_parallel``:
    the sum over its :func:`in_server_copies` of each copy's rate over ``tensor_parallel``
    devices at its share of the sequences (shares as even as whole sequences allow: 5
    over 2 copies are 3 and 2); one group of all ``devices`` when a single copy holds them."""
    copies = in_server_copies(rw, devices, tensor_parallel)
    if copies == 1:
        groups = max(devices // max(tensor_parallel, 1), 1)
        if groups == 1 or rw.image_model:
            return inference_throughput(rw, spec, devices)
        return inference_throughput(rw, spec, tensor_parallel)
    assert rw.inference is not None
    share, extra = divmod(rw.inference.concurrency, copies)
    total = 0.0
    for seqs, n in ((share + 1, extra), (share, copies - extra)):
        if n and seqs:
            total += n * inference_throughput(at_concurrency(rw, seqs), spec, tensor_parallel)
    return total


RATE_TIE_REL = 1e-9
"""Rates of two degrees this close are one rate (float rounding: 8 compute-bound copies and
one group of 8 compute the same figure by two paths); a wider degree must be faster than
that to be chosen."""


def fastest(rated: Iterable[tuple[Fit, float]]) -> Fit | None:
    """Of one server's fits at ascending tensor-parallel degrees, with their rates, the
    fastest; a wider degree replaces a narrower one only when it is faster (equal rates
    keep the smaller degree: more copies, so a failing one takes fewer sequences down)."""
    best: tuple[Fit, float] | None = None
    for fit, rate in rated:
        if best is None or rate > best[1] * (1.0 + RATE_TIE_REL):
            best = (fit, rate)
    return None if best is None else best[0]


def lowest_fit(
    layouts: Iterable[Layout],
    spec: AcceleratorSpec,
    headroom_frac: float,
    rate: Callable[[int], float],
    target: float = 0.0,
    *,
    safe: bool = False,
) -> Fit | None:
    """Of one server's serving ``layouts`` (:func:`~service.sizing.memory.memory_ladder`:
    the degrees that divide the heads and leave no copy idle, smallest first), the fit of
    the lowest degree that holds the model with the KV cache of its copies' share of the
    sequences and whose ``rate`` (tokens/s of the server at that degree,
    :func:`server_rate`) reaches ``target`` (0: no target, the lowest that fits;
    :func:`~service.sizing.batch.degree_target`); when none reaches it, the fastest
    (:func:`fastest`: the fewest servers for the target, the fewest hours for a batch
    job, whose ``target`` is infinite). A model that fits fewer devices than the server
    has is served as copies, not split over every card ("If your model fits in a single
    GPU, you probably don't need to use distributed inference", vLLM Distributed
    Inference and Serving,
    https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html; session 13
    ``enctp13``). ``None`` when none fits. Both routes choose so: the planner with its
    memoized rates, ``/v1/estimate`` through :func:`serving_fit`."""
    rated: list[tuple[Fit, float]] = []
    for layout in layouts:
        fit = first_fit((layout,), spec, headroom_frac, safe=safe)
        if fit is None:
            continue
        if target <= 0:
            return fit
        r = rate(fit.tensor_parallel)
        if r >= target:
            return fit
        rated.append((fit, r))
    return fastest(rated)


def serving_fit(
    rw: ResolvedWorkload,
    spec: AcceleratorSpec,
    devices: int,
    headroom_frac: float,
    target: float = 0.0,
    *,
    safe: bool = False,
) -> Fit | None:
    """The fit of one server of ``devices`` x ``spec`` serving ``rw`` at the lowest degree
    that holds its concurrency and reaches ``target`` tokens/s (:func:`lowest_fit`);
    ``None`` when nothing fits."""
    if rw.arch is None or devices < 1:
        return None
    return lowest_fit(
        memory_ladder(rw, devices),
        spec,
        headroom_frac,
        lambda t: server_rate(rw, spec, devices, t),
        target,
        safe=safe,
    )


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
        if pipeline == 1 and tensor_parallel is None:
            return serving_fit(served, spec, per_node, headroom, degree_target(workload) / replicas)
        if pipeline == 1:
            return fit_placement(served, spec, per_node, headroom, tensor_parallel=tensor_parallel)
        return replica_fit(served, spec, per_node, pipeline, headroom)

    batch = None
    if batches(workload) and not rw.image_model and rw.arch is not None:
        # a batch job (output tokens, no target) runs at the batch its memory holds, as
        # the planner runs it (``planning.place.Placer._batched``): no target to stop at
        target = (workload.target_tokens_per_s or math.inf) / replicas
        if pipeline == 1:
            # each copy of the model on the server is an engine instance with its own
            # batch limit and KV room (:func:`~service.sizing.batch.copies_batch`)
            degrees = (
                [tensor_parallel] if tensor_parallel is not None else serving_degrees(rw, per_node)
            )
            chosen = copies_batch(
                degrees,
                lambda t: per_node // t,
                lambda n, t: (
                    _degree_fit(at_concurrency(rw, n), spec, per_node, t, BATCH_HEADROOM_FRAC)
                    is not None
                ),
                lambda n, t: server_rate(at_concurrency(rw, n), spec, per_node, t),
                batch_ceiling(workload),
                target,
            )
            if chosen is not None:
                batch, degree = chosen
                served = at_concurrency(rw, batch)
                fit = _degree_fit(served, spec, per_node, degree, headroom_frac)
                return ServingLayout(servers, per_node, pipeline, served, batch, fit)
        else:
            batch = batch_for(
                lambda b: fits(at_concurrency(rw, b), BATCH_HEADROOM_FRAC) is not None,
                lambda b: _batch_rate(at_concurrency(rw, b), spec, per_node, fits),
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


def _degree_fit(
    rw: ResolvedWorkload, spec: AcceleratorSpec, per_node: int, degree: int, headroom: float
) -> Fit | None:
    """One server's fit at tensor-parallel ``degree`` (its ``per_node // degree`` copies
    at their share of the sequences), ``None`` when it does not fit."""
    return first_fit(memory_ladder(rw, per_node, None, degree), spec, headroom)


def _batch_rate(
    served: ResolvedWorkload,
    spec: AcceleratorSpec,
    per_node: int,
    fits: Callable[[ResolvedWorkload, float], Fit | None],
) -> float:
    """A server's rate at a batch: its copies' (:func:`server_rate`, at the degree the
    batch fits with) when one server holds the model, else one group of the server's
    devices (a replica over servers)."""
    return _rate_at(served, spec, per_node, fits(served, BATCH_HEADROOM_FRAC))


def _rate_at(rw: ResolvedWorkload, spec: AcceleratorSpec, per_node: int, fit: Fit | None) -> float:
    """One server's rate at ``fit``: its copies' (:func:`server_rate`) when one server holds
    the model, else one group of the server's devices (no fit, or a replica over servers)."""
    if fit is None or fit.pipeline_parallel > 1:
        return inference_throughput(rw, spec, per_node)
    return server_rate(rw, spec, per_node, fit.tensor_parallel)


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
