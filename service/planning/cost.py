"""Cost model: on-demand, monthly (with break-even) and spot (with an interruption model).

Pure functions of numbers; the planner supplies prices and job hours.

Spot: clouds publish no reclaim rates for GPU spot in these regions, so the model's
inputs are stated assumptions (shown in every spot option's reasons):
``SPOT_INTERRUPTIONS_PER_HOUR`` reclaims per node-hour, each costing half a checkpoint
interval of lost work plus a restart. Expected overhead hours =
``hours × rate × (checkpoint_interval / 2 + restart)``.
"""

from __future__ import annotations

import math

import msgspec

from service.catalog.models import HOURS_PER_MONTH, Offer

SPOT_INTERRUPTIONS_PER_HOUR = 0.05
"""Assumption: one reclaim per 20 node-hours (no published figure; stated as such)."""
CHECKPOINT_INTERVAL_H = 1.0
RESTART_H = 0.25
"""Time to get a replacement node, pull the image and reload the last checkpoint."""


class SpotOverhead(msgspec.Struct, frozen=True, gc=False):
    """What reclaims add to a job on spot (a Struct: built once per spot candidate)."""

    expected_interruptions: float
    overhead_hours: float
    effective_hours: float


def spot_overhead(
    hours: float,
    nodes: int,
    rate_per_node_hour: float = SPOT_INTERRUPTIONS_PER_HOUR,
    checkpoint_interval_h: float = CHECKPOINT_INTERVAL_H,
    restart_h: float = RESTART_H,
) -> SpotOverhead:
    """Expected wall-clock cost of reclaims: any node's reclaim stalls the whole job."""
    interruptions = hours * nodes * rate_per_node_hour
    overhead = interruptions * (checkpoint_interval_h / 2 + restart_h)
    return SpotOverhead(interruptions, overhead, hours + overhead)


def on_demand_cost(price_per_hour: float, nodes: int, hours: float) -> float:
    return price_per_hour * nodes * hours


def monthly_cost(price_per_month: float, nodes: int, hours: float) -> float:
    """Subscriptions are bought by whole months per node."""
    months = max(1, math.ceil(hours / HOURS_PER_MONTH - 1e-9))
    return price_per_month * nodes * months


def break_even_hours(price_per_month: float, on_demand_per_hour: float) -> float:
    """Job length (per node) above which one month costs less than on-demand hours."""
    return price_per_month / on_demand_per_hour


def monthly_pays_off(
    price_per_month: float | None, on_demand_per_hour: float | None, hours: float
) -> bool:
    """Whether a job of ``hours`` (per node) belongs on a subscription when the user did
    not ask for one: only when the month costs less than the same hours on demand (beyond
    the break-even), or, with no on-demand price to compare, when the job fills at least a
    month. A shorter job would commit a whole month's price for a few hours of use."""
    if price_per_month is None:
        return True
    if on_demand_per_hour:
        return hours >= break_even_hours(price_per_month, on_demand_per_hour)
    return hours >= HOURS_PER_MONTH


def per_million_tokens(price_per_hour: float, tokens_per_s: float) -> float | None:
    if tokens_per_s <= 0:
        return None
    return price_per_hour / (tokens_per_s * 3600) * 1_000_000


SMALL_MONEY_FIGURES = 2
"""Significant figures of an amount under ¥1 (a price per million tokens): to the cent,
¥0.016 and ¥0.021 per million tokens (an A10 and an A100 serving an embedding model,
review 8 K8) both read ¥0.02, though one costs a third more per token."""


def shown_money(value: float) -> float:
    """``value`` as an answer shows it: to the cent from ¥1, else to
    :data:`SMALL_MONEY_FIGURES` significant figures (never rounded to ¥0)."""
    if value >= 1 or value <= 0:
        return round(value, 2)
    return float(f"{value:.{SMALL_MONEY_FIGURES}g}")


def money_text(value: float) -> str:
    """:func:`shown_money` as text: thousands separated and two decimals from ¥1, else
    the decimals its significant figures need (0.016, 0.0021)."""
    shown = shown_money(value)
    if shown >= 1 or shown <= 0:
        return f"{shown:,.2f}"
    decimals = max(2, SMALL_MONEY_FIGURES - 1 - math.floor(math.log10(shown)))
    return f"{shown:.{decimals}f}"


def ranked_money_scale(offer: Offer) -> float:
    """Ranking counts an estimate at the top of its range, so it goes ahead of a confirmed
    price only when clearly cheaper; shown figures stay the point estimate. This is the
    factor from the shown money to the ranked money (1 for confirmed prices)."""
    price = offer.price
    if price is None or not price.estimated or not price.price_per_hour:
        return 1.0
    return (price.ranking_price or price.price_per_hour) / price.price_per_hour
