"""The sizing engine scored against published measurements, dev and hold-out apart.

``tests/sizing/data/published-measurements.json`` holds measurements that public sources
printed for stated configurations, split by a hash of the id into ``dev`` (used to develop
the engine and to set the calibrated ranges) and ``holdout`` (scored, never tuned to).
:mod:`tests.sizing.calibration` translates each case into a real ``/v1/estimate`` request.

What is asserted:

- the calibrated ranges (:data:`service.sizing.uncertainty.SPREADS`) are exactly the 5th-95th
  percentile spread of the dev errors the engine makes now (so they cannot go stale);
- the scores do not fall below the floors measured when this suite was written (a
  regression guard, per category and split);
- issue 13's targets (>= 90 % dev, >= 85 % hold-out, >= 75 % per category, >= 80 % inside
  the returned ranges), met since session 8; the README table states the measured figures.
"""

from __future__ import annotations

import functools

import pytest

from service.sizing.uncertainty import SPREADS
from tests.sizing import calibration as cal


@functools.cache
def predicted(split: str) -> list[cal.Prediction]:
    """A split's predictions, computed when a test first asks (never at import), so that
    ``-k "not holdout"`` runs nothing on the hold-out: every test that scores it has
    ``holdout`` in its id."""
    return cal.predictions(split)


FLOORS = {
    "dev": {
        "train_memory": 0.82,
        "inference_memory": 0.90,
        "train_time": 0.88,
        "inference_throughput": 0.90,
        "all": 0.80,
    },
    "holdout": {
        "train_memory": 0.70,
        "inference_memory": 0.95,
        "train_time": 0.78,
        "inference_throughput": 0.80,
        "all": 0.75,
    },
}
"""Shares within tolerance a little below those measured when the floors were set (dev
77.3 %, hold-out 74.5 % overall before issue 13; raised after its time work (time and
throughput dev 91.2 % / 90.2 %, hold-out 81.0 % / 84.0 %) and its memory work (training
and serving memory dev 83.0 % / 93.8 %, hold-out 75.0 % / 100 %), and the compiled chunked
loss (training memory dev 84.9 %, hold-out 75.0 %), and the fused-MoE kernel latency
(throughput dev 93.4 %); README: accuracy)."""
INSIDE_FLOOR = {"dev": 0.80, "holdout": 0.80}


def test_every_case_is_scored_or_named() -> None:
    """A case is skipped only when its accelerator has no figures in the registry."""
    for split in ("dev", "holdout"):
        scored = {p.case_id for p in cal.predictions(split)}
        skipped = set(cal.unscored(split))
        ids = {c["id"] for c in cal.CASES if c["split"] == split}
        assert scored | skipped == ids
        assert len(skipped) <= 3


def test_descriptive_fields_are_listed_with_a_reason() -> None:
    """Nothing in a case is silently dropped: every workload key is an API field, renamed
    to one, or listed as descriptive with why."""
    known = set(cal.DESCRIPTIVE) | set(cal.RENAMED) | {"input_len", "prompt_len"}
    known |= set(cal.INFERENCE_DESCRIPTIVE)
    for case in cal.CASES:
        for key in case["workload"]:
            if key in known:
                continue
            translated, _ = cal.translate(case)
            assert hasattr(translated, key), f"{case['id']}: {key}"


@pytest.mark.parametrize("category", cal.CATEGORIES)
def test_spreads_are_the_dev_errors(category: str) -> None:
    dev = predicted("dev")
    lo, hi = cal.spread(dev, category)
    s = SPREADS[category]
    assert s.cases == sum(p.category == category for p in dev)
    assert (s.low, s.high) == (pytest.approx(lo, abs=0.002), pytest.approx(hi, abs=0.002))


@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_scores_hold_their_floors(split: str) -> None:
    scores = cal.scores(predicted(split))
    for cat, floor in FLOORS[split].items():
        assert scores[cat].within_share >= floor, (cat, scores[cat])
    assert scores["all"].inside_share >= INSIDE_FLOOR[split]


@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_every_category_is_scored(split: str) -> None:
    scores = cal.scores(predicted(split))
    assert all(scores[c].n >= 10 for c in cal.CATEGORIES)


def test_issue_targets_on_dev_and_holdout() -> None:
    dev, hold = cal.scores(predicted("dev")), cal.scores(predicted("holdout"))
    assert dev["all"].within_share >= 0.90
    assert hold["all"].within_share >= 0.85
    assert all(dev[c].within_share >= 0.75 for c in cal.CATEGORIES)
    assert all(hold[c].within_share >= 0.75 for c in cal.CATEGORIES)
    assert hold["all"].inside_share >= 0.80
