"""Candidates: what an option of the answer is made of (the rank stage's hand-off to
the explain stage), built only for the options the answer shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from service.catalog.models import Offer
from service.planning.cost import SpotOverhead
from service.sizing import Fit

CheapestUnit = Literal["total", "per_million", "per_million_training", "hourly"]


@dataclass(frozen=True, slots=True)
class Cheapest:
    """What ``balanced`` weighs every option against: the cheapest option's figure as the
    ranking counts it (an estimate at the top of its range), in the unit the answer shows
    (``total``: the job's total; ``per_million``: per million output tokens;
    ``per_million_training``: per million training tokens; ``hourly``: per hour), and the
    premium within which options count as about as cheap
    (:func:`~service.planning.price.balanced_premium`)."""

    figure: float
    unit: CheapestUnit
    premium: float


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
    price_per_million_training_tokens: float | None = None
    """Training of unknown length: CNY per million training tokens (what it ranks by)."""
    spot: SpotOverhead | None = None
    break_even_hours: float | None = None
    on_demand_per_hour: float | None = None
    """A monthly option: the same type's on-demand price per node-hour in its regions,
    from the whole catalog (:func:`~service.planning.indexes.on_demand_quote`), set for
    the options shown; ``None`` when the catalog has none."""
    on_demand_estimated: bool = False
    """That on-demand price is Suanli's estimate, not a published one."""
    pareto: bool = False
    regions: list[str] = field(default_factory=list)
    shown_spot: bool = False
    """The best spot option, shown last although its estimate ranks after on-demand
    (:func:`~service.planning.rank.with_best_spot`)."""
    same_cost_as: tuple[float, float] | None = None
    """(total, hours) of the cheapest plan, when this is its faster twin at about the same
    cost, shown last (:func:`~service.planning.faster.with_faster`)."""
    balanced: tuple[bool, Cheapest] | None = None
    """``balanced``: whether the option costs within the premium of the cheapest (ranked
    by speed) or more (ranked by cost after them), and that cheapest figure."""
    width_bound: int | None = None
    """A fine-tune not spread wider because its global batch (these many sequences) has
    no room for more data-parallel replicas (``Variant.width_bound``, planning/place)."""
    outdated_engine: bool = False
    """Served on a device the engine's current release does not run (V100 under vLLM):
    ranked after the others (:data:`~service.planning.price.DEMOTED_TIER`)."""

    @property
    def priced(self) -> bool:
        return self.price_per_hour is not None
