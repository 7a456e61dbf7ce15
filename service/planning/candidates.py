"""Candidates (what an option is made of) and the memoized sizing calls behind them.

:class:`FitCache` computes fit, hours and throughput once per (accelerator, memory,
devices) and request; :func:`smallest_fitting_nodes` walks node counts. The loop over
offers that uses them lives in :mod:`service.planning.plan`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import msgspec

from service.catalog.models import AcceleratorSpec, Offer
from service.planning.cost import (
    SpotOverhead,
)
from service.sizing import (
    Fit,
    ResolvedWorkload,
    fit_placement,
    inference_throughput,
    time_for,
)


@dataclass(slots=True)
class Candidate:
    offer: Offer
    nodes: int
    devices: int
    fit: Fit | None
    """``None`` for CPU-only (preprocess) candidates."""
    hours: float | None
    """Wall-clock job hours (spot: including the expected interruption overhead)."""
    price_per_hour: float | None
    """All nodes together, CNY/h (monthly: the month's price / 730)."""
    total_cost: float | None
    throughput_tokens_per_s: float | None = None
    price_per_million_tokens: float | None = None
    spot: SpotOverhead | None = None
    break_even_hours: float | None = None
    pareto: bool = False
    regions: list[str] = field(default_factory=list)

    @property
    def priced(self) -> bool:
        return self.price_per_hour is not None


DEFAULT_HEADROOM = 0.10
"""``min_headroom_pct``'s default as a fraction: a request asking for more headroom than
that asks for safety, and the high end of the calibrated memory range must fit too."""


class FitCache:
    """Memoizes fit, time and throughput per (accelerator, memory, devices) for a request."""

    def __init__(self, rw: ResolvedWorkload, headroom_frac: float) -> None:
        self.rw = rw
        self.headroom_frac = headroom_frac
        self._fits: dict[tuple[str, float, int], Fit | None] = {}
        self._hours: dict[tuple[str, int, int, int, int | None], float | None] = {}
        self._throughput: dict[tuple[str, float, int], float] = {}
        self._specs: dict[tuple[str, float], AcceleratorSpec] = {}
        self._per_token: ResolvedWorkload | None = None

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

    def fit(self, spec: AcceleratorSpec, devices: int) -> Fit | None:
        key = (spec.name, spec.memory_gib, devices)
        if key not in self._fits:
            self._fits[key] = fit_placement(
                self.rw,
                spec,
                devices,
                self.headroom_frac,
                safe=self.headroom_frac > DEFAULT_HEADROOM,
            )
        return self._fits[key]

    def hours_per_token(
        self, spec: AcceleratorSpec, devices: int, fit: Fit | None = None
    ) -> float | None:
        """Training hours per token on ``devices`` (time is linear in tokens: C = 6·N·D),
        so that a placement's timing is shared by requests with other token counts; with
        the fit's layout (pipeline bubble, data-parallel traffic, as :func:`time_for`)."""
        pp = fit.pipeline_parallel if fit is not None else 1
        tp = fit.tensor_parallel if fit is not None else 1
        stage = fit.zero_stage if fit is not None else None
        key = (spec.name, devices, pp, tp, stage)
        if key not in self._hours:
            if self._per_token is None:
                self._per_token = dataclasses.replace(self.rw, tokens=1.0)
            estimate = time_for(
                self._per_token,
                spec,
                devices,
                pipeline_parallel=pp,
                tensor_parallel=tp,
                zero_stage=stage,
            )
            self._hours[key] = None if estimate is None else estimate.hours
        return self._hours[key]

    def throughput(self, spec: AcceleratorSpec, devices: int) -> float:
        key = (spec.name, spec.memory_gib, devices)
        if key not in self._throughput:
            self._throughput[key] = inference_throughput(self.rw, spec, devices)
        return self._throughput[key]


def node_counts(n_min: int, max_nodes: int, multi_node: bool, scale_out: bool) -> list[int]:
    """The smallest fitting node count, plus doublings when speed matters (RDMA only)."""
    counts = [n_min]
    if scale_out and multi_node:
        n = n_min * 2
        while n <= max_nodes and len(counts) < 4:
            counts.append(n)
            n *= 2
    return counts


def smallest_fitting_nodes(
    cache: FitCache, spec: AcceleratorSpec, per_node: int, max_nodes: int, multi_node: bool
) -> tuple[int, Fit] | None:
    """Fewest nodes whose devices hold the job (1 when the type has no RDMA)."""
    for nodes in node_ladder(max_nodes if multi_node else 1):
        fit = cache.fit(spec, per_node * nodes)
        if fit is not None:
            return nodes, fit
    return None


def node_ladder(limit: int) -> list[int]:
    """1, 2, … 8, then doublings: sharded memory falls as 1/N, so past 8 nodes the
    in-between counts rarely decide whether a job fits."""
    ladder = list(range(1, min(8, limit) + 1))
    n = 16
    while n <= limit:
        ladder.append(n)
        n *= 2
    return ladder
