"""Replay recorded requests and compare status and body byte for byte.

Why: a move of modules, a refactor of the planner or a speed-up must not change a single
answer. ``recording.jsonl`` holds, for every case of :mod:`tests.replay.cases`, the status
and the exact body bytes the real app (built-in providers, in-process cache, no mocks)
answered when it was recorded. No field is normalized: none of these answers carries a
request id or a clock time (a 5xx would carry a request id; no case may produce one).

Regenerate with::

    .venv/bin/python -m tests.replay.record

Legitimate only when answers change on purpose (sizing, catalog data, texts); the commit
that regenerates says so and why. A refactor that needs a new recording is a behaviour
change, not a refactor.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.replay.cases import CASES
from tests.replay.record import RECORDING, answer, open_client


def _recorded() -> dict[str, dict[str, Any]]:
    with RECORDING.open(encoding="utf-8") as lines:
        return {entry["name"]: entry for entry in map(json.loads, lines)}


RECORDED = _recorded()


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with open_client() as started:
        yield started


def test_recording_covers_every_case() -> None:
    assert sorted(RECORDED) == sorted(case["name"] for case in CASES)
    assert len(CASES) >= 80
    statuses = {entry["status"] for entry in RECORDED.values()}
    assert {200, 400, 404, 405, 415, 422} <= statuses, statuses
    assert not [n for n, e in RECORDED.items() if e["status"] >= 500], "a case answered 5xx"


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_answer_is_unchanged(client: TestClient[Litestar], case: dict[str, Any]) -> None:
    expected = RECORDED[case["name"]]
    status, body = answer(client, case)
    assert status == expected["status"]
    want = expected["body"].encode()
    if body != want:
        diff = difflib.unified_diff(
            _pretty(want), _pretty(body), "recorded", "now", lineterm="", n=2
        )
        pytest.fail("answer changed:\n" + "\n".join(list(diff)[:80]))


def _pretty(body: bytes) -> list[str]:
    """Lines of the body for a readable diff (the comparison itself is byte for byte)."""
    try:
        return json.dumps(json.loads(body), ensure_ascii=False, indent=1).splitlines()
    except ValueError:
        return body.decode(errors="replace").splitlines()
