"""Where a job fits on an instance shape, and how long it runs there.

Placements (node counts, devices, memory fit) depend on the workload's memory signature
and the shape, never on the job's length, so they are memoized across requests
(:class:`PlacementMemo`); each request only times them (:meth:`VariantBuilder.timed`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import msgspec

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.capabilities import precision_verdict
from service.catalog.models import AcceleratorSpec, InstanceType
from service.planning.candidates import FitCache, node_counts, smallest_fitting_nodes
from service.planning.cost import SpotOverhead, spot_overhead
from service.runtime.bounded import BoundedDict
from service.sizing import Fit, ResolvedWorkload, host_for, preprocess_hours
from service.sizing.resolve import LENGTH_FIELDS

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to run the job on one instance type: how many nodes, fit, hours."""

    nodes: int
    devices: int
    fit: Fit | None
    """``None`` for CPU-only placements."""
    hours: float | None
    spot: SpotOverhead | None
    throughput: float | None = None
    """Serving: decode tokens/s of all replicas together."""


@dataclass(frozen=True, slots=True)
class Workload:
    """What the variant builder needs to know about the request."""

    rw: ResolvedWorkload
    serving: bool
    cpu_only: bool
    max_nodes: int
    scale_out: bool
    target_tokens_per_s: float | None
    headroom_frac: float
    output_tokens: float | None = None
    """Inference with a known amount of output (a batch job): rank by the job's total."""
    accelerator_count: int | None = None
    """Exactly this many accelerators in total (``constraints.accelerator_count``)."""
    max_accelerators: int | None = None
    precision: str = "bf16"
    """The job's weights/compute format, checked against each device's capabilities."""

    @property
    def open_ended(self) -> bool:
        """Serving with no job length: ranked by price per hour and throughput."""
        return self.serving and not self.output_tokens


Placement = tuple[int, int, Fit, float | None, float | None]
"""(nodes, devices, fit, serving throughput, training hours per token): what the shape
decides, independent of how many tokens the job has (hours scale with them: C = 6·N·D)."""


class PlacementMemo:
    """Process-wide memo of what a request's answer shares with other requests.

    Which node counts hold a job depends on the model, precision, method, batch and
    sequence — not on how many tokens it trains on, nor on the constraints that only
    rank. Platforms ask about the same workload again and again with other token counts,
    objectives, budgets or languages; those answers are cache misses, but their
    placements (per workload memory signature and instance shape), their resolved
    workload and their ``LaneIndex`` (per filter and signature, see
    :mod:`service.planning.lanes`) are not. Both stores are bounded: the oldest
    placements go first; of the shared values (lane indexes hold up to ``TOP_K_MAX``
    groups per bucket, so far fewer are kept) the least recently used.
    """

    def __init__(self, max_entries: int = 50_000, max_shared: int = 256) -> None:
        self._data: BoundedDict[tuple[object, ...], list[Placement] | str] = BoundedDict(
            max_entries
        )
        self._shared: BoundedDict[tuple[object, ...], object] = BoundedDict(max_shared)
        self._catalog: object = None

    def use_catalog(self, catalog: object) -> None:
        """Shared values are built over one catalog: when another one is loaded, drop
        them (they hold the old catalog alive) rather than wait for them to age out."""
        if catalog is not self._catalog:
            self._shared.clear()
            self._catalog = catalog

    def get(self, key: tuple[object, ...]) -> list[Placement] | str | None:
        return self._data.get(key)

    def put(self, key: tuple[object, ...], value: list[Placement] | str) -> None:
        self._data.put(key, value)

    def shared(self, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """The value under ``key``, built on first use (least recently used goes first;
        callers own their key space, so the type is theirs to keep)."""
        value = self._shared.touch(key)
        if value is None:
            value = build()
            self._shared.put(key, value)
        return cast(T, value)


def memory_signature(workload: msgspec.Struct) -> bytes:
    """The workload without the fields that change time but never memory."""
    fields = {f: None for f in LENGTH_FIELDS if hasattr(workload, f)}
    return _signature_encoder.encode(msgspec.structs.replace(workload, **fields))


_signature_encoder = msgspec.json.Encoder(order="deterministic")


class VariantBuilder:
    """Variants per instance row: placements (memoized per shape, and across requests
    through a :class:`PlacementMemo`) timed for this request's tokens."""

    def __init__(
        self,
        wl: Workload,
        accelerators: AcceleratorRegistry,
        memo: PlacementMemo | None = None,
        signature: bytes = b"",
    ) -> None:
        self.wl = wl
        self.accelerators = accelerators
        self.cache = FitCache(wl.rw, wl.headroom_frac)
        self.need = host_for(wl.rw, 0) if wl.cpu_only else None
        """CPU-only jobs: the host the job needs (what the CPU placements must cover)."""
        self._by_shape: dict[tuple[object, ...], Placements | str] = {}
        self._timed: dict[int, list[Variant]] = {}
        self.memo = memo if signature else None
        self.signature = signature
        self.memo_prefix = (signature, wl.max_nodes, wl.scale_out, wl.headroom_frac,
                            wl.target_tokens_per_s, wl.accelerator_count,
                            wl.max_accelerators)  # fmt: skip
        """What placements depend on besides the instance shape (the memo keys' head)."""

    def build(self, row: InstanceType) -> list[Variant] | str:
        """The row's variants, or the reason it cannot run the job."""
        if self.wl.cpu_only:
            return self._cpu(row)
        placed = self.placements(row)
        return placed if isinstance(placed, str) else self.timed(placed)

    def placements(self, row: InstanceType) -> Placements | str:
        """Where the job fits on the row, independent of its length, or the reason it
        cannot (memoized per shape: rows with the same accelerators, memory and network
        place the job the same way)."""
        shape = (
            row.accelerator,
            row.accelerator_memory_gib,
            row.accelerator_count,
            row.rdma in ("rdma", "erdma"),
        )
        placed = self._by_shape.get(shape)
        if placed is None:
            placed = self._by_shape[shape] = self._placements_of_shape(row, shape)
        return placed

    def _placements_of_shape(
        self, row: InstanceType, shape: tuple[object, ...]
    ) -> Placements | str:
        registered = self.accelerators.resolve(row.accelerator or "")
        if registered is None or row.accelerator_memory_gib is None:
            return "unknown_accelerator"
        if precision_verdict(registered, self.wl.precision, self.wl.serving) == "unsupported":
            return "precision"
        spec = self.cache.spec_for(registered, row.accelerator_memory_gib)
        placed: list[Placement] | str | None = None
        key = (*self.memo_prefix, shape)
        if self.memo is not None:
            placed = self.memo.get(key)
        if placed is None:
            placed = self._place(spec, row)
            if self.memo is not None:
                self.memo.put(key, placed)
        return placed if isinstance(placed, str) else Placements(spec, tuple(placed))

    def timed(self, placed: Placements) -> list[Variant]:
        """The placements with this request's hours (memoized per placements object)."""
        variants = self._timed.get(id(placed))
        if variants is not None:
            return variants
        variants = []
        tokens = self.wl.rw.tokens
        for nodes, devices, fit, throughput, hours_per_token in placed.items:
            if self.wl.serving:
                hours = None
                if self.wl.output_tokens and throughput:
                    hours = self.wl.output_tokens / throughput / 3600
                variants.append(Variant(nodes, devices, fit, hours, None, throughput))
                continue
            hours = None if hours_per_token is None or tokens is None else hours_per_token * tokens
            spot = None if hours is None else spot_overhead(hours, nodes)
            variants.append(Variant(nodes, devices, fit, hours, spot))
        self._timed[id(placed)] = variants
        return variants

    def _place(self, spec: AcceleratorSpec, row: InstanceType) -> list[Placement] | str:
        per_node = row.accelerator_count
        wl = self.wl
        max_nodes = wl.max_nodes
        if wl.max_accelerators is not None:
            max_nodes = min(max_nodes, wl.max_accelerators // per_node)
            if max_nodes < 1:
                return "max_accelerators"
        exact = None if wl.accelerator_count is None else wl.accelerator_count // per_node
        if wl.serving:
            fit = self.cache.fit(spec, per_node)
            if fit is None:
                return "memory"
            tps = self.cache.throughput(spec, per_node)
            replicas = 1
            if wl.target_tokens_per_s and tps <= 0:
                return "throughput_unknown"  # cannot promise a rate it cannot estimate
            if exact is not None:
                replicas = exact
            elif wl.target_tokens_per_s and tps > 0:
                replicas = max(1, math.ceil(wl.target_tokens_per_s / tps))
            if replicas > max_nodes:
                return "max_nodes"
            total = tps * replicas if tps > 0 else None  # no bandwidth: no decode rate
            return [(replicas, per_node * replicas, fit, total, None)]
        multi = row.rdma in ("rdma", "erdma")
        if exact is not None:  # exactly N devices: N / per_node nodes, ZeRO chosen to fit
            if exact > max_nodes:
                return "max_nodes"
            if exact > 1 and not multi:
                return "accelerator_count"
            fit = self.cache.fit(spec, per_node * exact)
            if fit is None:
                return "memory"
            devices = per_node * exact
            return [
                (
                    exact,
                    devices,
                    fit,
                    None,
                    self.cache.hours_per_token(spec, devices, fit),
                )
            ]
        found = smallest_fitting_nodes(self.cache, spec, per_node, max_nodes, multi)
        if found is None:
            return "memory"
        n_min, fit_min = found
        placements: list[Placement] = []
        for nodes in node_counts(n_min, max_nodes, multi, wl.scale_out):
            devices = per_node * nodes
            fit = fit_min if nodes == n_min else self.cache.fit(spec, devices)
            if fit is not None:
                placements.append(
                    (
                        nodes,
                        devices,
                        fit,
                        None,
                        self.cache.hours_per_token(spec, devices, fit),
                    )
                )
        return placements

    def _cpu(self, row: InstanceType) -> list[Variant] | str:
        need = self.need
        assert need is not None
        if not row.vcpus or not row.memory_gib:
            return "unknown_specs"
        nodes = max(math.ceil(need.vcpus / row.vcpus), math.ceil(need.ram_gib / row.memory_gib))
        if nodes > self.wl.max_nodes:
            return "max_nodes"
        hours = preprocess_hours(self.wl.rw, row.vcpus * nodes)
        spot = None if hours is None else spot_overhead(hours, nodes)
        return [Variant(nodes, 0, None, hours, spot)]


@dataclass(frozen=True, slots=True)
class Placements:
    """The placements of one accelerator shape (shared by every row of that shape)."""

    spec: AcceleratorSpec
    items: tuple[Placement, ...]
