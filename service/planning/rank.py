"""Ranking by objective, the cost–time Pareto front, and de-duplication across regions.

Unknown prices are never cheap: under every objective an unpriced candidate ranks after
every priced one that can be compared, and it is never on the Pareto front.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from service.planning.candidates import Candidate
from service.planning.schema import Objective

INF = math.inf


def _cost(c: Candidate, serving: bool) -> tuple[int, float]:
    """Comparable money figure, tiered so unlike figures are never compared: a known job
    total (tier 0) beats a known hourly price with unknown hours (tier 1), which beats an
    unknown price (tier 2). Serving compares hourly prices."""
    if c.price_per_hour is None:
        return (2, INF)
    if serving:
        return (0, c.price_per_hour)
    if c.total_cost is None:
        return (1, c.price_per_hour)
    return (0, c.total_cost)


def _speed(c: Candidate, serving: bool) -> float:
    """Lower is better: job hours, or inverse throughput for serving."""
    if serving:
        return -(c.throughput_tokens_per_s or 0.0)
    return INF if c.hours is None else c.hours


SortKey = tuple[object, ...]


def sort_key(objective: Objective, serving: bool) -> Callable[[Candidate], SortKey]:
    if objective == "time":
        return lambda c: (_speed(c, serving), _cost(c, serving), c.nodes)
    if objective == "balanced":
        return lambda c: (_balanced(c, serving), _cost(c, serving), c.nodes)
    return lambda c: (_cost(c, serving), _speed(c, serving), c.nodes)


def _balanced(c: Candidate, serving: bool) -> float:
    """Geometric mean of cost and time (scale-free): log(cost) + log(time)."""
    tier, cost = _cost(c, serving)
    speed = _speed(c, serving)
    if tier or speed == INF:
        return INF
    if serving:
        return math.log(cost) - math.log(max(-speed, 1e-9))
    return math.log(max(cost, 1e-9)) + math.log(max(speed, 1e-9))


def rank(candidates: list[Candidate], objective: Objective, serving: bool) -> list[Candidate]:
    return sorted(candidates, key=sort_key(objective, serving))


def mark_pareto(candidates: Sequence[Candidate], serving: bool) -> None:
    """Mark priced candidates no other priced candidate beats on both cost and time."""
    points = sorted(
        (c for c in candidates if _cost(c, serving)[0] == 0 and _speed(c, serving) != INF),
        key=lambda c: (_cost(c, serving), _speed(c, serving)),
    )
    best_speed = INF
    for c in points:
        speed = _speed(c, serving)
        if speed < best_speed:
            c.pareto = True
            best_speed = speed


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Fold the same type, node count, billing and price in several regions into one
    candidate that lists the regions (keeps the ranking order)."""
    seen: dict[tuple[object, ...], Candidate] = {}
    result = []
    for c in candidates:
        offer = c.offer
        key = (
            offer.provider,
            offer.instance.instance_type,
            c.nodes,
            offer.billing,
            None if c.price_per_hour is None else round(c.price_per_hour, 4),
        )
        first = seen.get(key)
        region = offer.region
        if first is None:
            seen[key] = c
            c.regions = _regions_of(c)
            result.append(c)
        elif region not in first.regions and region != "*":
            first.regions.append(region)
    return result


def _regions_of(c: Candidate) -> list[str]:
    if c.offer.region != "*":
        return [c.offer.region]
    return list(c.offer.instance.regions)
