"""Answer quality of ``/v1/recommend``: is the top pick priced, estimated, unpriced, or is
there no option at all? Counted per answer served (cache hits included) in
``suanli_recommend_answers_total{top_pick}``, for the dashboard and the alert on answers
that stop being useful (e.g. a price source gone and every top pick unpriced).

A hit is a cached byte string: its label is remembered from when it was computed (same
cache key), and only a body computed by another replica is decoded, reading just the top
option's two price fields.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.planning.schema import RecommendResponse
from service.runtime.bounded import BoundedDict
from service.runtime.metrics import RECOMMEND_ANSWERS

TopPick = Literal["priced", "estimated", "unpriced", "none"]


class _Pick(msgspec.Struct):
    price_per_hour: float | None = None
    price_estimated: bool = False


class _Answer(msgspec.Struct):
    options: list[_Pick] = msgspec.field(default_factory=list)


_decoder = msgspec.json.Decoder(_Answer)


def top_pick(price_per_hour: float | None, estimated: bool | None) -> TopPick:
    """The label of an answer's first option (``estimated`` None: no option)."""
    if estimated is None:
        return "none"
    if price_per_hour is None:
        return "unpriced"
    return "estimated" if estimated else "priced"


class AnswerQuality:
    """Counts answers by top pick; remembers the label of recent cache keys."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self._labels: BoundedDict[str, TopPick] = BoundedDict(max_entries)
        self._counters = {label: RECOMMEND_ANSWERS.labels(top_pick=label) for label in
                          ("priced", "estimated", "unpriced", "none")}  # fmt: skip

    def computed(self, key: str, answer: RecommendResponse) -> None:
        """Remember the label of an answer just computed (counted when served)."""
        first = answer.options[0] if answer.options else None
        label = top_pick(
            None if first is None else first.price_per_hour,
            None if first is None else first.price_estimated,
        )
        self._labels.put(key, label)

    def served(self, key: str, body: bytes) -> TopPick:
        label = self._labels.get(key)
        if label is None:
            label = self._label_of(body)
            self._labels.put(key, label)
        self._counters[label].inc()
        return label

    @staticmethod
    def _label_of(body: bytes) -> TopPick:
        try:
            options = _decoder.decode(body).options
        except msgspec.DecodeError:
            return "none"
        if not options:
            return "none"
        return top_pick(options[0].price_per_hour, options[0].price_estimated)
