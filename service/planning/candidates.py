"""Candidates: what an option of the answer is made of (the rank stage's hand-off to
the explain stage), built only for the options the answer shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from service.catalog.models import Offer
from service.planning.cost import SpotOverhead
from service.sizing import Fit


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
    pareto: bool = False
    regions: list[str] = field(default_factory=list)
    shown_spot: bool = False
    """The best spot option, shown last although its estimate ranks after on-demand
    (:func:`~service.planning.rank.with_best_spot`)."""
    same_cost_as: tuple[float, float] | None = None
    """(total, hours) of the cheapest plan, when this is its faster twin at about the same
    cost, shown last (:func:`~service.planning.faster.with_faster`)."""
    outdated_engine: bool = False
    """Served on a device the engine's current release does not run (V100 under vLLM):
    ranked after the others (:data:`~service.planning.price.DEMOTED_TIER`)."""

    @property
    def priced(self) -> bool:
        return self.price_per_hour is not None
