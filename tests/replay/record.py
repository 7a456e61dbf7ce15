"""Record the answers of :data:`tests.replay.cases.CASES` into ``recording.jsonl``.

Run ``.venv/bin/python -m tests.replay.record`` from the repository root. Only do so when
an answer changes on purpose (see :mod:`tests.replay.test_replay`) and say so in the
commit message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from tests.conftest import app_settings
from tests.replay.cases import CASES, Case, request_body

RECORDING = Path(__file__).with_name("recording.jsonl")
_JSON_HEADERS = {"content-type": "application/json"}


def open_client() -> TestClient[Litestar]:
    """The real app over the built-in providers, in-process cache, no rate limit."""
    return TestClient(app=create_app(app_settings(log_level="WARNING")))


def answer(client: TestClient[Litestar], case: Case) -> tuple[int, bytes]:
    """Status and the exact body bytes of one case."""
    response = client.request(
        case["method"],
        case["path"],
        params=case.get("query") or None,
        content=request_body(case),
        headers=case.get("headers") or (_JSON_HEADERS if "json" in case else {}),
    )
    return response.status_code, response.content


def answers(client: TestClient[Litestar]) -> Iterator[dict[str, Any]]:
    for case in CASES:
        status, body = answer(client, case)
        yield {"name": case["name"], "status": status, "body": body.decode()}


def main() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    with open_client() as client, RECORDING.open("w", encoding="utf-8") as out:
        for line in answers(client):
            out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"recorded {len(names)} answers into {RECORDING}")


if __name__ == "__main__":
    main()
