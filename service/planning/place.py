"""Stage 3, place: where the job fits on an instance shape, and how long it runs there.

Placements (node counts, devices, memory fit) depend on the workload's memory signature
and the shape, never on the job's length, so the cache keeps them per workload and shape
(:meth:`~service.planning.memo.PlanCache.placement_table`); each request only times
them (:meth:`Placer.timed`). Rows with the same accelerator, memory, count and network
place a job the same way, so a catalog of hundreds of rows has a few dozen shapes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Hashable, Iterator
from typing import NamedTuple, cast

import msgspec

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.capabilities import (
    checkpoint_verdict,
    engine_outdated,
    engine_stack_verdict,
    engine_verdict,
    framework_stack_verdict,
    pipeline_outdated,
    precision_verdict,
)
from service.catalog.models import AcceleratorSpec, InstanceType
from service.planning.cost import SpotOverhead, spot_overhead
from service.planning.filters import Shape, shape_of
from service.planning.memo import PlanCache
from service.planning.network import node_network
from service.planning.resolve import Job
from service.planning.width import replica_ceiling
from service.planning.width import replicas as dp_replicas
from service.sizing import (
    Fit,
    Layout,
    ResolvedWorkload,
    first_fit,
    host_for,
    inference_throughput,
    memory_ladder,
    preprocess_hours,
    time_for,
)
from service.sizing.batch import at_concurrency, batch_for, copies_batch, degree_target
from service.sizing.compute import Cluster, device_hours_floor
from service.sizing.memory import serving_degrees
from service.sizing.overheads import class_overhead
from service.sizing.parallelism import tensor_parallel_limit
from service.sizing.replicas import lowest_fit, replica_fit, server_rate

DEFAULT_HEADROOM = 0.10
"""``min_headroom_pct``'s default as a fraction: a request asking for more headroom than
that asks for safety, and the high end of the calibrated memory range must fit too."""

SPAN_MOST_SERVERS = 4
"""Servers one serving replica may span. Multi-server serving is deployed over a few large
servers: SGLang's DeepSeek-V3 guide runs the model on 2 nodes of 8 H20/H800/H100 or 4
Atlas 800I A3 (https://docs.sglang.io/docs/basic_usage/deepseek_v3.md), and vLLM's
distributed serving guide sets tensor parallel to a server's GPUs and pipeline parallel
to the servers (https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html). Every
stage adds an inter-server hop to each decoded token, so a replica that needs more
servers than this is said not to fit."""

SPAN_PCIE_MOST_DEVICES = 8
"""A stage server whose accelerators share no NVLink-class link runs its tensor-parallel
ring over PCIe; past 8 devices that ring crosses the server's CPU sockets, where NCCL
rates the link at 10 GB/s (``SKL_QPI_BW``, NVIDIA/nccl ``src/graph/topo.h``; see
docs/sizing.md, "Ring link"). The decode rate does not charge that ring, so such a server
(16 x A10 over PCIe) is not made a pipeline stage."""

SPAN_LEAST_DEVICES = 4
"""Accelerators a server needs to be one stage of a spanning replica: the stage runs
tensor parallel within the server (the rule of the guides above), and a 1- or 2-GPU VM
holds too small a share of a model no 8-GPU server holds to make a sane pipeline."""

_UNSIZED = object()
"""Not looked up yet (``None`` is a result: nothing fits)."""

Placement = tuple[int, int, Fit, float | None, float | None]
"""(nodes, devices, fit, serving throughput, training hours per token): what the shape
decides, independent of how many tokens the job has (hours scale with them: C = 6·N·D)."""


class Variant(msgspec.Struct, frozen=True, gc=False):
    """One way to run the job on one instance type: how many nodes, fit, hours."""

    nodes: int
    devices: int
    fit: Fit | None
    """``None`` for CPU-only placements."""
    hours: float | None
    spot: SpotOverhead | None
    throughput: float | None = None
    """Serving: decode tokens/s of all replicas together."""
    hours_per_token: float | None = None
    """Training: wall-clock hours per training token (known without the job's length:
    what a job of unknown length is ranked by, per token)."""
    width_bound: int | None = None
    """A fine-tune's widest placement on its row when the global batch, not the servers
    allowed, stopped it: that global batch in sequences (:mod:`service.planning.width`)."""


class Placements(msgspec.Struct, frozen=True, gc=False):
    """The placements of one accelerator shape (shared by every row of that shape)."""

    spec: AcceleratorSpec
    items: tuple[Placement, ...]
    trimmed: bool = False
    """Training: wider placements the servers allowed were left out because the
    fine-tune's global batch (at any length) has no replicas for them."""
    widest: int = 0
    """The most nodes among :attr:`items` (0: not given, :meth:`Placer.timed` finds it):
    known with the placements, which every request at another length times again (the
    ``max`` over the items was the largest line of a request's ranking stage)."""


class PlacerShare(NamedTuple):
    """See :meth:`Placer.share`."""

    prefix: Hashable
    table: dict[Shape, Placements | str]
    any_length: tuple[int, int] | None


class Placer:
    """Variants per instance row: placements (kept per shape in the cache's table for
    this job) timed for this request's length."""

    def __init__(
        self,
        job: Job,
        accelerators: AcceleratorRegistry,
        cache: PlanCache,
        signature: bytes,
        share: PlacerShare | None = None,
    ) -> None:
        """``share``: :meth:`share` of a placer of this very job at another length (a
        class of answers keeps its first one's), instead of looking them up again."""
        self.job = job
        self.accelerators = accelerators
        self.cache = cache
        self.signature = signature
        self.fits = FitCache(job.rw, job.headroom_frac)
        self.need = host_for(job.rw, 0) if job.cpu_only else None
        """CPU-only jobs: the host the job needs (what the CPU placements must cover)."""
        if share is None:
            prefix: Hashable = (signature, accelerators, job.max_nodes, job.scale_out,
                                job.headroom_frac, job.target_tokens_per_s,
                                job.accelerator_count, job.max_accelerators,
                                job.batch_ceiling, job.span_servers)  # fmt: skip
            table = cast(dict[Shape, Placements | str], cache.placement_table(prefix))
            share = PlacerShare(prefix, table, replica_ceiling(job.rw.workload, None))
        self.prefix = share.prefix
        """What placements depend on besides the instance shape (the cache's key)."""
        self.table = share.table
        """Placements (or the reason there are none) per shape, shared by requests."""
        self._timed: dict[int, list[Variant]] = {}
        self._fixed: float | None = None
        self._trimmed = False
        """:meth:`_place` left wider placements out for the global batch."""
        self._ceiling = replica_ceiling(job.rw.workload, job.rw.tokens)
        """(most data-parallel replicas, global batch) at this request's length."""
        self._any_length = share.any_length
        """The same bound at any length (what the length-free placements use)."""
        self._batches: dict[int, FitCache] = {}
        self._accelerators: dict[str, AcceleratorSpec | str] = {}
        self._outdated: dict[str | None, bool] = {}
        self._floors: dict[tuple[str | None, float | None], object] = {}
        """:meth:`hours_floor` per device, per (accelerator, memory)."""
        self._verdicts: dict[Shape, bool] = {}
        """:meth:`placeable` per shape, for shapes not placed yet."""
        self._holding: dict[tuple[int, bool], float] = {}
        self._spans: dict[tuple[str, float, int, int, int | None], Fit | None] = {}
        """Serving over several servers: :meth:`_span_fit` per (accelerator, memory,
        devices per server, pipeline stages, batch)."""
        """Training: per (devices per node, RDMA), the least device memory of a shape
        seen to hold the job (see :meth:`_trainable`)."""

    def share(self) -> PlacerShare:
        """What a placer of this job at another length shares with this one: the memo's
        key and table of placements, and the length-free bound on replicas (none of them
        depends on the length fields, :meth:`~service.planning.resolve.Job.at_length`)."""
        return PlacerShare(self.prefix, self.table, self._any_length)

    def without(self, constraint: str) -> Placer:
        """This placer with a size constraint lifted (for "did you mean")."""
        job = (
            dataclasses.replace(self.job, accelerator_count=None)
            if constraint == "accelerator_count"
            else dataclasses.replace(self.job, max_accelerators=None)
        )
        return Placer(job, self.accelerators, self.cache, self.signature)

    def scaled_out(self) -> Placer:
        """This placer with the node counts timed as under a deadline (doublings up to
        ``max_nodes``): for the faster plan at about the same cost."""
        job = dataclasses.replace(self.job, scale_out=True)
        return Placer(job, self.accelerators, self.cache, self.signature)

    def spanning(self) -> Placer:
        """This placer with serving replicas allowed to span servers (for a model no
        server the filters pass holds)."""
        job = dataclasses.replace(self.job, span_servers=True)
        return Placer(job, self.accelerators, self.cache, self.signature)

    def build(self, row: InstanceType) -> list[Variant] | str:
        """The row's variants, or the reason it cannot run the job."""
        if self.job.cpu_only:
            return self._cpu(row)
        placed = self.placements(row)
        return placed if isinstance(placed, str) else self.timed(placed)

    def placements(self, row: InstanceType, shape: Shape | None = None) -> Placements | str:
        """Where the job fits on the row, independent of its length, or the reason it
        cannot (``shape``: the row's, when the caller has it)."""
        if shape is None:
            shape = shape_of(row)
        placed = self.table.get(shape)
        if placed is None:
            placed = self.table[shape] = self._placements_of_shape(row)
            if not isinstance(placed, str) and not (self.job.serving or self.job.cpu_only):
                self._held(shape)
        return placed

    def hours_floor(self, row: InstanceType) -> float | None:
        """A lower bound on nodes x hours per token of every placement of the row's
        shape (spot overhead only adds), without sizing it: training only, ``None``
        when there is none to give (the shape must be placed to be ranked).

        Hours per token on ``d`` devices are at least the accelerator's device-hours
        floor (:func:`~service.sizing.compute.device_hours_floor`) over ``d``, and a
        placement on ``n`` nodes has ``d = n x`` the row's devices per node."""
        key = (row.accelerator, row.accelerator_memory_gib)
        floor = self._floors.get(key, _UNSIZED)
        if floor is _UNSIZED:
            floor = self._floors[key] = self._device_hours_floor(row)
        if floor is None or row.accelerator_count < 1:
            return None
        return cast(float, floor) / row.accelerator_count

    def _device_hours_floor(self, row: InstanceType) -> float | None:
        job = self.job
        if job.serving or job.cpu_only or row.accelerator_memory_gib is None:
            return None
        registered = self._supported(row.accelerator or "")
        if isinstance(registered, str):
            return None
        spec = self.fits.spec_for(registered, row.accelerator_memory_gib)
        return self.fits.device_hours_floor(spec)

    def _placements_of_shape(self, row: InstanceType) -> Placements | str:
        if row.accelerator_memory_gib is None:
            return "unknown_accelerator"
        registered = self._supported(row.accelerator or "")
        if isinstance(registered, str):
            return registered
        spec = self.fits.spec_for(registered, row.accelerator_memory_gib)
        placed = self._place(spec, row)
        if isinstance(placed, str):
            return placed
        trimmed = self._trimmed
        self._trimmed = False
        return Placements(spec, tuple(placed), trimmed, max((p[0] for p in placed), default=0))

    def _supported(self, accelerator: str) -> AcceleratorSpec | str:
        """The registered spec of ``accelerator`` if it can run the job (precision,
        engine), else the reason; once per accelerator (a catalog's shapes share a few)."""
        found = self._accelerators.get(accelerator)
        if found is None:
            job = self.job
            found = self._accelerators[accelerator] = support_verdict(
                self.accelerators,
                accelerator,
                job.precision,
                job.serving,
                job.checkpoint_scheme,
                job.engine,
                job.framework,
            )
        return found

    def outdated(self, accelerator: str | None) -> bool:
        """The serving engine's current release does not run on ``accelerator``
        (:func:`~service.catalog.capabilities.engine_outdated`); once per accelerator."""
        found = self._outdated.get(accelerator)
        if found is None:
            spec = self.accelerators.resolve(accelerator or "")
            engine = self.job.engine
            if self.job.serving and self.job.rw.image_model:  # no engine: Pascal's cores
                found = spec is not None and pipeline_outdated(spec)
            else:
                found = spec is not None and engine is not None and engine_outdated(spec, engine)
            self._outdated[accelerator] = found
        return found

    def timed(self, placed: Placements) -> list[Variant]:
        """The placements with this request's hours (once per placements object)."""
        variants = self._timed.get(id(placed))
        if variants is not None:
            return variants
        variants = []
        job = self.job
        tokens = job.rw.tokens
        fixed = self._fixed
        if fixed is None:  # once per request (each lane timed asks)
            fixed = self.fixed_hours()
        items = placed.items
        ceiling = self._any_length if placed.trimmed else None
        widest = placed.widest
        if self._ceiling is not None and not job.serving and len(items) > 1:
            # a short run's smaller global batch: the first (fewest nodes) always stays
            most = self._ceiling[0]
            kept = items[:1] + tuple(p for p in items[1:] if _replicas(p) <= most)
            if len(kept) < len(items):
                items, ceiling, widest = kept, self._ceiling, 0
        if not widest:
            widest = max(p[0] for p in items)
        bound = None
        if ceiling is not None:
            last = next(p for p in items if p[0] == widest)
            # said only where the widest kept has exactly the replicas the batch allows
            bound = ceiling[1] if _replicas(last) == ceiling[0] else None
        for nodes, devices, fit, throughput, hours_per_token in items:
            if job.serving:
                hours = None
                if job.output_tokens and throughput:
                    hours = job.output_tokens / throughput / 3600
                variants.append(Variant(nodes, devices, fit, hours, None, throughput))
                continue
            hours = (
                None
                if hours_per_token is None or tokens is None
                else hours_per_token * tokens + fixed
            )
            spot = None if hours is None else spot_overhead(hours, nodes)
            width = bound if nodes == widest else None
            variants.append(Variant(nodes, devices, fit, hours, spot, None, hours_per_token, width))
        self._timed[id(placed)] = variants
        return variants

    def fixed_hours(self) -> float:
        """The training job's fixed hours (:func:`~service.sizing.overheads.class_overhead`:
        node start, checkpoint read, final save), added to every placement's loop time
        and so billed on each of its nodes; 0 for serving. Branch and bound stays exact:
        the lane bounds take the loop time alone, a lower bound of these hours."""
        if self._fixed is None:
            self._fixed = 0.0 if self.job.serving else _class_hours(self.job.rw)
        return self._fixed

    def _limits(self, row: InstanceType) -> tuple[int, int | None] | str:
        """(most nodes, exact node count if the request fixes the devices) on ``row``."""
        per_node = row.accelerator_count
        job = self.job
        max_nodes = job.max_nodes
        if job.max_accelerators is not None:
            max_nodes = min(max_nodes, job.max_accelerators // per_node)
            if max_nodes < 1:
                return "max_accelerators"
        exact = None if job.accelerator_count is None else job.accelerator_count // per_node
        return max_nodes, exact

    def _smallest(
        self, spec: AcceleratorSpec, row: InstanceType, max_nodes: int, exact: int | None
    ) -> tuple[int, Fit] | str:
        """Training: the fewest nodes of ``row`` that hold the job, with their fit (the
        exact count, when the request fixes the devices), or the reason there are none."""
        per_node = row.accelerator_count
        multi = node_network(row) is not None
        if exact is not None:  # exactly N devices: N / per_node nodes, ZeRO chosen to fit
            if exact > max_nodes:
                return "max_nodes"
            if exact > 1 and not multi:
                return "accelerator_count"
            fit = self.fits.fit(spec, per_node * exact, per_node)
            return "memory" if fit is None else (exact, fit)
        found = smallest_fitting_nodes(self.fits, spec, per_node, max_nodes, multi)
        return "memory" if found is None else found

    def placeable(self, row: InstanceType, shape: Shape) -> bool:
        """Whether the job can be placed on the row's shape: for training, without timing
        it (the placements are built when a ranking reads the shape)."""
        placed = self.table.get(shape)
        job = self.job
        if placed is not None:
            holds = not isinstance(placed, str)
            if holds and not (job.serving or job.cpu_only):
                self._held(shape)
            return holds
        if job.serving or job.cpu_only:
            return not isinstance(self.placements(row, shape), str)
        found = self._verdicts.get(shape)
        if found is None:
            found = self._verdicts[shape] = self._trainable(row, shape)
        return found

    def _held(self, shape: Shape) -> None:
        """Note that training holds on ``shape`` (for :meth:`_trainable`)."""
        key, memory = (shape[2], shape[3]), shape[1]
        least = self._holding.get(key)
        if memory is not None and (least is None or memory < least):
            self._holding[key] = memory

    def _trainable(self, row: InstanceType, shape: Shape) -> bool:
        """Whether training fits some placement on ``shape``, without timing it.

        Monotone in the device memory: the layouts tried depend on the workload and the
        device count only (:func:`~service.sizing.memory_ladder`), and one fits when its
        memory per device is within the capacity (and, asked for safety, the high end of
        its range within the memory), so a supported accelerator with as much memory as a
        shape of the same devices per node and network seen to hold the job holds it
        too. Hidden-spot counts ask about the shapes the ranking did not read, most of
        them bigger than one it placed: 3 in 4 of those verdicts need no sizing."""
        memory = row.accelerator_memory_gib
        if memory is None:
            return False
        registered = self._supported(row.accelerator or "")
        if isinstance(registered, str):
            return False
        least = self._holding.get((shape[2], shape[3]))
        if least is not None and least <= memory:
            return True
        spec = self.fits.spec_for(registered, memory)
        limits = self._limits(row)
        holds = not isinstance(limits, str) and not isinstance(
            self._smallest(spec, row, *limits), str
        )
        if holds:
            self._held(shape)
        return holds

    def _place(self, spec: AcceleratorSpec, row: InstanceType) -> list[Placement] | str:
        per_node = row.accelerator_count
        job, fits = self.job, self.fits
        limits = self._limits(row)
        if isinstance(limits, str):
            return limits
        max_nodes, exact = limits
        if job.serving:
            if job.batch_ceiling is not None:
                fits, fit = self._batched(spec, per_node, job.batch_ceiling)
            else:
                fit = fits.fit(spec, per_node, per_node)
            if fit is None:
                if not job.span_servers:
                    return "memory"
                spanned = self._across_servers(spec, per_node, max_nodes, exact)
                # never more servers than the pipeline that holds it (then it is the same
                # hardware without the stages' hops): 8 H20 hold R1 in FP8 for 3 of 32 users
                # at 32k, and eleven such servers are not an answer to two
                cap = max_nodes if isinstance(spanned, str) else min(p[0] for p in spanned)
                shared = self._shared(spec, per_node, cap, exact)
                if shared is None:
                    return spanned
                return shared if isinstance(spanned, str) else [*shared, *spanned]
            tps = fits.throughput(spec, per_node, fit.tensor_parallel)
            replicas = 1
            if job.target_tokens_per_s and tps <= 0:
                return "throughput_unknown"  # cannot promise a rate it cannot estimate
            if exact is not None:
                replicas = exact
            elif job.target_tokens_per_s and tps > 0:
                replicas = max(1, math.ceil(job.target_tokens_per_s / tps))
            if replicas > max_nodes:
                return "max_nodes"
            total = tps * replicas if tps > 0 else None  # no bandwidth: no decode rate
            return [(replicas, per_node * replicas, fit, total, None)]
        found = self._smallest(spec, row, max_nodes, exact)
        if isinstance(found, str):
            return found
        n_min, fit_min = found
        network = node_network(row)
        if exact is not None:
            devices = per_node * exact
            cluster = _cluster(per_node, exact, network)
            hours = fits.hours_per_token(spec, devices, fit_min, cluster)
            return [(exact, devices, fit_min, None, hours)]
        placements: list[Placement] = []
        counts = node_counts(n_min, max_nodes, network is not None, job.scale_out)
        ceiling = self._any_length
        if ceiling is not None and len(counts) > 1 and fit_min is not None:
            counts = _within_batch(counts, n_min, max_nodes, per_node, fit_min, ceiling[0])
            per_copy = (fit_min.tensor_parallel, fit_min.pipeline_parallel)
            self._trimmed = (
                counts[-1] < max_nodes
                and dp_replicas(per_node * counts[-1], *per_copy) <= ceiling[0]
            )
        for nodes in counts:
            devices = per_node * nodes
            fit = fit_min if nodes == n_min else fits.fit(spec, devices, per_node)
            if (
                fit is not None
                and nodes != n_min
                and ceiling is not None
                and dp_replicas(devices, fit.tensor_parallel, fit.pipeline_parallel) > ceiling[0]
            ):
                continue
            if fit is not None:
                hours = fits.hours_per_token(spec, devices, fit, _cluster(per_node, nodes, network))
                placements.append((nodes, devices, fit, None, hours))
        return placements

    def _shared(
        self, spec: AcceleratorSpec, per_node: int, most_servers: int, exact: int | None
    ) -> list[Placement] | None:
        """Serving a concurrency one server cannot hold, though it holds the model: the
        fewest servers that each hold an even share of the sequences, each its own copy
        of the model behind a load balancer (review S3: 32 x 128k of Qwen2.5-14B on
        A100-80GB was one replica pipelined over 2 x 8 at 467 tokens/s, where 2 servers of
        16 sequences each serve 828 with no traffic between them, as ``/v1/estimate``
        shares a concurrency out). ``None`` when no share fits within ``most_servers``,
        for a throughput target (its replicas each run the concurrency), or for the
        planner's own batching."""
        job = self.job
        inference = job.rw.inference
        if job.batch_ceiling is not None or job.target_tokens_per_s or inference is None:
            return None
        sequences = inference.concurrency
        most = min(most_servers, sequences) if exact is None else exact
        if most < 2 or most > most_servers:
            return None

        def fits(servers: int) -> Fit | None:
            return self._at(math.ceil(sequences / servers)).fit(spec, per_node, per_node)

        # fewer sequences per server only shrink the KV cache: the first that fits, by bisection
        candidates = [exact] if exact is not None else list(range(2, most + 1))
        fewest = _first_true(candidates, lambda n: fits(n) is not None)
        if fewest is None:
            return None
        share = math.ceil(sequences / fewest)
        fit = fits(fewest)
        assert fit is not None
        tps = self._at(share).throughput(spec, per_node, fit.tensor_parallel)
        total = tps * fewest if tps > 0 else None
        fit = msgspec.structs.replace(fit, batch=share, shared=True)
        return [(fewest, per_node * fewest, fit, total, None)]

    def _across_servers(
        self, spec: AcceleratorSpec, per_node: int, max_nodes: int, exact: int | None
    ) -> list[Placement] | str:
        """Serving a model one server of ``per_node`` x ``spec`` does not hold: replicas
        of the fewest servers that hold it, tensor parallel within a server and pipeline
        stages across servers (:func:`~service.sizing.replicas.replica_fit`, as
        ``/v1/estimate`` sizes them); each replica decodes at one server's rate (the
        stages work one after another on every step), so a throughput target adds whole
        replicas. ``exact``: the request's servers, split into equal replicas."""
        job = self.job
        if per_node < SPAN_LEAST_DEVICES:
            return "memory"
        if per_node > SPAN_PCIE_MOST_DEVICES and tensor_parallel_limit(spec, per_node) < per_node:
            return "memory"
        if exact is not None:
            if exact > max_nodes:
                return "max_nodes"
            stages = [p for p in range(2, min(exact, SPAN_MOST_SERVERS) + 1) if exact % p == 0]
        else:
            stages = list(range(2, min(max_nodes, SPAN_MOST_SERVERS) + 1))
        first = None if job.batch_ceiling is None else 1  # batched: from one sequence
        pipeline = _first_true(
            stages, lambda p: self._span_fit(spec, per_node, p, first) is not None
        )
        if pipeline is None:
            return self._beyond(spec, per_node, max_nodes, exact, first)
        batch = None
        if job.batch_ceiling is not None:
            target = job.target_tokens_per_s or math.inf
            batch = batch_for(
                lambda b: self._span_fit(spec, per_node, pipeline, b) is not None,
                lambda b: self._at(b).throughput(spec, per_node),
                job.batch_ceiling,
                target,
            )
        fit = self._span_fit(spec, per_node, pipeline, batch)
        if fit is None:  # pragma: no cover - the pipeline was chosen for a fit
            return "memory"
        if batch is not None:
            fit = msgspec.structs.replace(fit, batch=batch)
        tps = (self.fits if batch is None else self._at(batch)).throughput(spec, per_node)
        if job.target_tokens_per_s and tps <= 0:
            return "throughput_unknown"
        replicas = 1
        if exact is not None:
            replicas = exact // pipeline
        elif job.target_tokens_per_s and tps > 0:
            replicas = max(1, math.ceil(job.target_tokens_per_s / tps))
        nodes = replicas * pipeline
        if nodes > max_nodes:
            return "max_nodes"
        total = tps * replicas if tps > 0 else None
        return [(nodes, per_node * nodes, fit, total, None)]

    def _beyond(
        self,
        spec: AcceleratorSpec,
        per_node: int,
        max_nodes: int,
        exact: int | None,
        batch: int | None,
    ) -> str:
        """Why no replica over at most ``max_nodes`` servers holds the model: the node
        limit (or the accelerator limit that set it) when :data:`SPAN_MOST_SERVERS` of
        them would, else memory (more servers than a replica is deployed over)."""
        if exact is not None or max_nodes >= SPAN_MOST_SERVERS:
            return "memory"
        if self._span_fit(spec, per_node, SPAN_MOST_SERVERS, batch) is None:
            return "memory"
        return "max_nodes" if max_nodes >= self.job.max_nodes else "max_accelerators"

    def _span_fit(
        self, spec: AcceleratorSpec, per_node: int, pipeline: int, batch: int | None
    ) -> Fit | None:
        """:func:`replica_fit` of the request's workload (or at ``batch`` sequences),
        once per accelerator, memory, server size, stages and batch."""
        key = (spec.name, spec.memory_gib, per_node, pipeline, batch)
        found = self._spans.get(key, _UNSIZED)
        if found is _UNSIZED:
            rw = self.job.rw if batch is None else self._at(batch).rw
            safe = self.job.headroom_frac > DEFAULT_HEADROOM
            found = self._spans[key] = replica_fit(
                rw, spec, per_node, pipeline, self.job.headroom_frac, safe=safe
            )
        return cast(Fit | None, found)

    def _batched(
        self, spec: AcceleratorSpec, devices: int, ceiling: int
    ) -> tuple[FitCache, Fit | None]:
        """Serving batched to the throughput target, or a batch job at the batch its
        memory holds (:func:`copies_batch`: ``ceiling`` is per engine instance, so each
        copy of the model on the server runs its own batch up to it): the fit cache of the
        sequences one server of ``devices`` runs, and its fit marked with that batch."""
        # a batch job has no target: the largest batch its memory holds
        target = self.job.target_tokens_per_s or math.inf
        chosen = copies_batch(
            serving_degrees(self.job.rw, devices),
            lambda t: devices // t,
            lambda n, t: self._at(n).degree_fit(spec, devices, t) is not None,
            lambda n, t: self._at(n).throughput(spec, devices, t),
            ceiling,
            target,
        )
        if chosen is None:
            return self.fits, None
        batch, degree = chosen
        fits = self._at(batch)
        fit = fits.degree_fit(spec, devices, degree)
        assert fit is not None
        return fits, msgspec.structs.replace(fit, batch=batch)

    def _at(self, batch: int) -> FitCache:
        """The fit cache of the workload served at ``batch`` sequences (one per batch)."""
        found = self._batches.get(batch)
        if found is None:
            rw = at_concurrency(self.job.rw, batch)
            found = self._batches[batch] = FitCache(rw, self.job.headroom_frac)
        return found

    def _cpu(self, row: InstanceType) -> list[Variant] | str:
        need = self.need
        assert need is not None
        if not row.vcpus or not row.memory_gib:
            return "unknown_specs"
        nodes = max(math.ceil(need.vcpus / row.vcpus), math.ceil(need.ram_gib / row.memory_gib))
        if nodes > self.job.max_nodes:
            return "max_nodes"
        hours = preprocess_hours(self.job.rw, row.vcpus * nodes)
        spot = None if hours is None else spot_overhead(hours, nodes)
        return [Variant(nodes, 0, None, hours, spot)]


class FitCache:
    """Memoizes fit, time and throughput per (accelerator, memory, devices) for a request.

    Memory per device depends on the workload and the layout (devices, ZeRO stage,
    tensor and pipeline degrees), never on the accelerator: each device count's layouts
    are sized once (:func:`~service.sizing.memory_ladder`, as far as some accelerator
    needed) and every accelerator's capacity is checked against them."""

    def __init__(self, rw: ResolvedWorkload, headroom_frac: float) -> None:
        self.rw = rw
        self.headroom_frac = headroom_frac
        self.target = degree_target(rw.workload)
        """Serving: the rate one server's degree is chosen to reach (:func:`~service.sizing.
        batch.degree_target`, as :func:`~service.sizing.replicas.lowest_fit` reads it)."""
        self._fits: dict[tuple[str, float, int, int], Fit | None] = {}
        self._ladders: dict[int, tuple[list[Layout], Iterator[Layout]]] = {}
        self._lowest: dict[int, float] = {}
        """Per device count whose ladder is sized to its end, the lowest memory per device
        of its layouts: an accelerator whose capacity is below it holds none of them
        (:func:`~service.sizing.first_fit` needs the memory per device within the
        capacity), so the walk is skipped."""
        self._hours: dict[
            tuple[str, int, int, int, int | None, tuple[int, float] | None], float | None
        ] = {}
        self._throughput: dict[tuple[str, float, int, int | None], float] = {}
        self._specs: dict[tuple[str, float], AcceleratorSpec] = {}
        self._per_token: ResolvedWorkload | None = None
        self._floors: dict[tuple[str, float], float | None] = {}
        self._fp16: FitCache | None = None
        """The cache of :attr:`ResolvedWorkload.no_bf16`, for devices without BF16."""

    def spec_for(self, spec: AcceleratorSpec, memory_gib: float) -> AcceleratorSpec:
        """The registry spec with the memory the catalog row states (rows are the fact)."""
        key = (spec.name, memory_gib)
        found = self._specs.get(key)
        if found is None:
            found = spec
            if not math.isclose(spec.memory_gib, memory_gib):
                found = msgspec.structs.replace(spec, memory_gib=memory_gib)
            self._specs[key] = found
        return found

    def fit(self, spec: AcceleratorSpec, devices: int, per_node: int) -> Fit | None:
        """The first layout of ``devices`` that fits ``spec`` in servers of ``per_node``
        (training keeps tensor parallelism inside one NVLink/HCCS server:
        :func:`~service.sizing.parallelism.tensor_parallel_limit`); serving on one server,
        of the degrees that fit, the lowest whose copies hold the concurrency and reach the
        target (:func:`~service.sizing.replicas.lowest_fit`, as ``/v1/estimate`` chooses)."""
        return self.fit_within(spec, devices, self.tp_limit(spec, per_node))

    def tp_limit(self, spec: AcceleratorSpec, per_node: int) -> int:
        """The tensor-parallel limit :meth:`fit` keeps training layouts within on servers
        of ``per_node`` x ``spec`` (0 for serving: no limit), to be computed once for the
        node counts of one shape (:func:`smallest_fitting_nodes`)."""
        return tensor_parallel_limit(spec, per_node) if self.rw.training is not None else 0

    def fit_within(self, spec: AcceleratorSpec, devices: int, tp_max: int) -> Fit | None:
        """:meth:`fit` with its :meth:`tp_limit` given (once per accelerator, memory,
        devices and limit: shapes of 8 x 1, 4 x 2 and 1 x 8 devices share it)."""
        if self.rw.no_bf16 is not None and not spec.supports_bf16:
            # served in fp16 there, which costs this job more memory (an upcast VAE)
            if self._fp16 is None:
                self._fp16 = FitCache(self.rw.no_bf16, self.headroom_frac)
            return self._fp16.fit_within(spec, devices, tp_max)
        key = (spec.name, spec.memory_gib, devices, tp_max)
        fit = self._fits.get(key, _UNSIZED)
        if fit is _UNSIZED:
            fit = None
            lowest = self._lowest.get(devices)
            if lowest is not None and lowest > spec.memory_gib * (1.0 - self.headroom_frac):
                pass  # no layout's memory per device is within the capacity first_fit checks
            elif self.rw.arch is not None and devices >= 1:
                safe = self.headroom_frac > DEFAULT_HEADROOM
                # a ladder sized to its end is read as the list it is (no generator)
                layouts = self._ladders[devices][0] if lowest is not None else None
                ladder = layouts if layouts is not None else self._layouts(devices)
                if self.rw.training is None and self.rw.inference is not None:
                    fit = lowest_fit(
                        ladder, spec, self.headroom_frac,
                        lambda t: self.throughput(spec, devices, t), self.target, safe=safe,
                    )  # fmt: skip
                else:
                    fit = first_fit(
                        ladder, spec, self.headroom_frac, safe=safe, tp_max=tp_max or None
                    )
            self._fits[key] = fit
        return cast(Fit | None, fit)

    def degree_fit(self, spec: AcceleratorSpec, devices: int, degree: int) -> Fit | None:
        """Serving on one server of ``devices``: the fit at tensor-parallel ``degree``
        (its copies at their share of the sequences), ``None`` when it does not fit or is
        not one of the server's degrees (:func:`~service.sizing.memory_ladder`); memoized
        with :meth:`fit_within`'s (a negative degree keys it apart)."""
        key = (spec.name, spec.memory_gib, devices, -degree)
        fit = self._fits.get(key, _UNSIZED)
        if fit is _UNSIZED:
            fit = None
            if self.rw.arch is not None and devices >= 1:
                safe = self.headroom_frac > DEFAULT_HEADROOM
                layouts = [layout for layout in self._layouts(devices) if layout[1] == degree]
                fit = first_fit(layouts, spec, self.headroom_frac, safe=safe)
            self._fits[key] = fit
        return cast(Fit | None, fit)

    def _layouts(self, devices: int) -> Iterator[Layout]:
        """:func:`memory_ladder` of ``devices``, each layout sized once per request."""
        seen = self._ladders.get(devices)
        if seen is None:
            seen = self._ladders[devices] = ([], memory_ladder(self.rw, devices))
        sized, rest = seen
        i = 0
        while True:
            if i == len(sized):
                layout = next(rest, None)
                if layout is None:
                    self._lowest[devices] = min(
                        (m.per_device_gib for *_, m in sized), default=math.inf
                    )
                    return
                sized.append(layout)
            yield sized[i]
            i += 1

    def device_hours_floor(self, spec: AcceleratorSpec) -> float | None:
        """:func:`~service.sizing.compute.device_hours_floor` per token on ``spec`` (once
        per accelerator and memory: many shapes share one)."""
        key = (spec.name, spec.memory_gib)
        if key not in self._floors:
            self._floors[key] = device_hours_floor(self._tokens_one(), spec)
        return self._floors[key]

    def _tokens_one(self) -> ResolvedWorkload:
        """The workload at one token (what hours per token are computed on)."""
        if self._per_token is None:
            self._per_token = self.rw.with_tokens(1.0)
        return self._per_token

    def hours_per_token(
        self,
        spec: AcceleratorSpec,
        devices: int,
        fit: Fit | None = None,
        cluster: Cluster | None = None,
    ) -> float | None:
        """Training hours per token on ``devices`` (time is linear in tokens: C = 6·N·D),
        so that a placement's timing is shared by requests with other token counts; with
        the fit's layout (pipeline bubble, data-parallel traffic, as :func:`time_for`)
        and, across servers, their network (``cluster``)."""
        if fit is None:
            pp, tp, stage = 1, 1, None
        else:
            pp, tp, stage = fit.pipeline_parallel, fit.tensor_parallel, fit.zero_stage
        # the cluster by its two numbers: hashing the dataclass costs a Python-level call
        servers = None if cluster is None else (cluster.per_node, cluster.network_gbps)
        key = (spec.name, devices, pp, tp, stage, servers)
        hours = self._hours.get(key, _UNSIZED)
        if hours is _UNSIZED:
            estimate = time_for(
                self._tokens_one(),
                spec,
                devices,
                pipeline_parallel=pp,
                tensor_parallel=tp,
                zero_stage=stage,
                cluster=cluster,
            )
            hours = self._hours[key] = None if estimate is None else estimate.hours
        return cast(float | None, hours)

    def throughput(
        self, spec: AcceleratorSpec, devices: int, tensor_parallel: int | None = None
    ) -> float:
        """Tokens/s of one server of ``devices`` serving at ``tensor_parallel``: its copies
        of the model together (:func:`~service.sizing.replicas.server_rate`); ``None``:
        one group of all ``devices`` (a replica over servers)."""
        key = (spec.name, spec.memory_gib, devices, tensor_parallel)
        if key not in self._throughput:
            self._throughput[key] = (
                inference_throughput(self.rw, spec, devices)
                if tensor_parallel is None
                else server_rate(self.rw, spec, devices, tensor_parallel)
            )
        return self._throughput[key]

    def served_rate(self, spec: AcceleratorSpec, devices: int) -> float:
        """:meth:`throughput` of one server at the degree its fit chose (0.0: no fit)."""
        fit = self.fit(spec, devices, devices)
        return 0.0 if fit is None else self.throughput(spec, devices, fit.tensor_parallel)


def _class_hours(rw: ResolvedWorkload) -> float:
    """The hours of :func:`~service.sizing.overheads.class_overhead` (0 without one; kept
    there per training budget: the class's placer and each request's placer ask it for
    copies of one resolution at other lengths)."""
    overhead = class_overhead(rw)
    return 0.0 if overhead is None else overhead.hours


@functools.lru_cache(maxsize=4096)
def support_verdict(
    accelerators: AcceleratorRegistry,
    accelerator: str,
    precision: str,
    serving: bool,
    checkpoint_scheme: str | None,
    engine: str | None,
    framework: str | None = None,
) -> AcceleratorSpec | str:
    """The registered spec of ``accelerator`` if it can run a job of ``precision``,
    ``checkpoint_scheme`` and ``engine`` (serving or not), else the reason
    (:meth:`Placer._supported`). A pure function of the registry (immutable: a reload
    makes another) and these fields, so it is kept across requests: every never-seen
    job shape asks it again for the same dozen accelerators and the same few precisions."""
    registered = accelerators.resolve(accelerator)
    if registered is None:
        return "unknown_accelerator"
    if precision_verdict(registered, precision, serving) == "unsupported":
        return "precision"
    if checkpoint_verdict(registered, checkpoint_scheme, engine) == "unsupported":
        return "checkpoint"
    if engine is not None and engine_verdict(registered, engine) != "ok":
        return "engine"
    if engine is not None and engine_stack_verdict(registered, engine) != "ok":
        return "engine_stack"
    if framework_stack_verdict(registered, framework) != "ok":
        return "framework_stack"  # MindSpeed on an NVIDIA GPU (review 11t T1)
    return registered


def _first_true(values: list[int], holds: Callable[[int], bool]) -> int | None:
    """The first of ascending ``values`` for which ``holds`` (monotone: false, then true),
    by bisection; ``None`` when it holds for none."""
    if not values or not holds(values[-1]):
        return None
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(values[mid]):
            hi = mid
        else:
            lo = mid + 1
    return values[lo]


def _cluster(per_node: int, nodes: int, network: tuple[float, bool] | None) -> Cluster | None:
    """The servers of a placement on ``nodes`` (``None`` on one)."""
    if nodes <= 1 or network is None:
        return None
    return Cluster(per_node=per_node, network_gbps=network[0])


def node_counts(n_min: int, max_nodes: int, multi_node: bool, scale_out: bool) -> list[int]:
    """The smallest fitting node count, plus, when speed matters (RDMA only), doublings up
    to ``max_nodes`` and ``max_nodes`` itself: a deadline or the time objective must reach
    the largest cluster allowed (review 4 F3), and doublings keep the counts timed per
    shape logarithmic in it (at most 11 for the schema's 512)."""
    counts = [n_min]
    if scale_out and multi_node:
        n = n_min * 2
        while n <= max_nodes:
            counts.append(n)
            n *= 2
        if counts[-1] < max_nodes:
            counts.append(max_nodes)
    return counts


def _within_batch(
    counts: list[int], n_min: int, max_nodes: int, per_node: int, fit: Fit, most: int
) -> list[int]:
    """A fine-tune's node counts with no more than ``most`` data-parallel replicas (at the
    fewest nodes' layout), ending at the widest such count (the largest cluster the time
    objective may reach, as ``max_nodes`` is without a batch)."""
    per_copy = max(1, fit.tensor_parallel * fit.pipeline_parallel)
    widest = max(n_min, min(max_nodes, most * per_copy // per_node))
    return sorted({n for n in counts if n <= widest} | {widest})


def _replicas(p: Placement) -> int:
    fit = p[2]
    return p[1] if fit is None else dp_replicas(p[1], fit.tensor_parallel, fit.pipeline_parallel)


def smallest_fitting_nodes(
    cache: FitCache, spec: AcceleratorSpec, per_node: int, max_nodes: int, multi_node: bool
) -> tuple[int, Fit] | None:
    """Fewest nodes whose devices hold the job (1 when the type has no RDMA)."""
    tp_max = cache.tp_limit(spec, per_node)  # the same for every node count
    for nodes in node_ladder(max_nodes if multi_node else 1):
        fit = cache.fit_within(spec, per_node * nodes, tp_max)
        if fit is not None:
            return nodes, fit
    return None


@functools.lru_cache(maxsize=64)
def node_ladder(limit: int) -> tuple[int, ...]:
    """1, 2, … 8, then doublings: sharded memory falls as 1/N, so past 8 nodes the
    in-between counts rarely decide whether a job fits (one tuple per limit)."""
    ladder = list(range(1, min(8, limit) + 1))
    n = 16
    while n <= limit:
        ladder.append(n)
        n *= 2
    return tuple(ladder)
