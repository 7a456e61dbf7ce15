"""Calibrated ranges: how far published measurements fall from the engine's estimates.

Each estimate carries a range ``[value x low, value x high]`` whose factors are the 5th and
95th percentiles of measured / estimated over the *development* half of the published
measurements (``tests/sizing/data/published-measurements.json``, split ``dev``), per
category: training memory, serving memory, training time and serving throughput. They are
data, not judgement: ``tests/sizing/test_calibration.py`` recomputes them from the dev
cases and fails when these constants drift from what the engine now scores, and the
hold-out cases (never used to set them) measure how often real values land inside.

A factor is a ratio measured / estimated, so for time (where hours are inverse to speed)
the range of hours divides by the speed factors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Spread:
    """measured / estimated at the 5th and 95th percentile of the dev cases."""

    low: float
    high: float
    cases: int
    """Dev cases the factors come from."""


SPREADS: dict[str, Spread] = {
    "train_memory": Spread(low=0.893, high=1.266, cases=53),
    "inference_memory": Spread(low=0.959, high=1.074, cases=32),
    "train_time": Spread(low=0.664, high=1.298, cases=57),
    "inference_throughput": Spread(low=0.772, high=1.282, cases=69),
}
"""measured / estimated (memory) and measured speed / estimated speed (time, throughput),
5th and 95th percentile over the dev cases of each category."""

RANGE_QUANTILES = (0.05, 0.95)
"""The percentiles the spreads are read at."""


def memory_range(per_device_gib: float, training: bool) -> tuple[float, float]:
    """[low, high] GiB around a per-device memory figure."""
    s = SPREADS["train_memory" if training else "inference_memory"]
    return per_device_gib * s.low, per_device_gib * s.high


def hours_range(hours: float, training: bool) -> tuple[float, float]:
    """[low, high] hours: a faster-than-estimated speed (ratio > 1) means fewer hours."""
    s = SPREADS["train_time" if training else "inference_throughput"]
    return hours / s.high, hours / s.low


def throughput_range(tokens_per_s: float) -> tuple[float, float]:
    """[low, high] tokens/s around a serving-throughput figure."""
    s = SPREADS["inference_throughput"]
    return tokens_per_s * s.low, tokens_per_s * s.high
