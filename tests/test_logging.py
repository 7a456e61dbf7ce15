"""Structured logs: one JSON access line per request (request id, route, status,
duration, cache result) on stderr, with the request id echoed in ``X-Request-ID``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT, free_port

MakeClient = Callable[..., TestClient[Litestar]]
ESTIMATE = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}
RECOMMEND = {"workload": {"kind": "finetune", "model": "llama-2-7b"}, "top_k": 2}
ACCESS_FIELDS = {"request_id", "method", "route", "status", "duration_ms", "cache"}
SECRET = "log-test-secret-key-42"


def _access(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "suanli.access"]


def test_access_record_fields(make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    client = make_client()
    caplog.set_level(logging.INFO, logger="suanli.access")
    caplog.clear()
    response = client.post("/v1/estimate", json=ESTIMATE, headers={"X-Request-ID": "est-1"})
    assert response.status_code == 200
    assert response.headers["x-request-id"] == "est-1"
    (record,) = _access(caplog)
    assert record.request_id == "est-1"  # type: ignore[attr-defined]
    assert record.method == "POST"  # type: ignore[attr-defined]
    assert record.route == "/v1/estimate"  # type: ignore[attr-defined]
    assert record.status == 200  # type: ignore[attr-defined]
    assert isinstance(record.duration_ms, float)  # type: ignore[attr-defined]
    assert 0 <= record.duration_ms < 10_000  # type: ignore[attr-defined]


def test_cache_result_is_logged(make_client: MakeClient, caplog: pytest.LogCaptureFixture) -> None:
    client = make_client()
    caplog.set_level(logging.INFO, logger="suanli.access")
    caplog.clear()
    first = client.post("/v1/recommend", json=RECOMMEND)
    second = client.post("/v1/recommend", json=RECOMMEND)
    client.get("/healthz")
    assert (first.headers["x-suanli-cache"], second.headers["x-suanli-cache"]) == ("miss", "hit")
    caches = [r.cache for r in _access(caplog)]  # type: ignore[attr-defined]
    assert caches == ["miss", "hit", None]


def test_errors_are_logged_with_their_status(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    caplog.set_level(logging.INFO, logger="suanli.access")
    caplog.clear()
    responses = [
        client.post("/v1/estimate", json={}, headers={"X-Request-ID": "e-400"}),
        client.get("/v1/nope", headers={"X-Request-ID": "e-404"}),
        client.delete("/healthz", headers={"X-Request-ID": "e-405"}),
    ]
    assert [r.status_code for r in responses] == [400, 404, 405]
    # Requests that match no route are logged and echoed too (scanners, wrong clients).
    assert [r.headers.get("x-request-id") for r in responses] == ["e-400", "e-404", "e-405"]
    records = _access(caplog)
    assert [r.status for r in records] == [400, 404, 405]  # type: ignore[attr-defined]
    assert [r.request_id for r in records] == ["e-400", "e-404", "e-405"]  # type: ignore[attr-defined]


def test_generated_request_id_is_logged_and_echoed(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    caplog.set_level(logging.INFO, logger="suanli.access")
    caplog.clear()
    response = client.get("/healthz", headers={"X-Request-ID": "bad id\twith tab"})
    generated = response.headers["x-request-id"]
    assert len(generated) == 32
    as_uuid = uuid.UUID(hex=generated)  # what uuid4().hex wrote before: a random UUID
    assert (as_uuid.version, as_uuid.variant, as_uuid.hex) == (4, uuid.RFC_4122, generated)
    assert [r.request_id for r in _access(caplog)] == [generated]  # type: ignore[attr-defined]
    assert client.get("/healthz").headers["x-request-id"] != generated


# --- the real process: JSON lines on stderr ---------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Callable[[], list[str]]]]:
    """``python -m service serve`` on a free port; yields its URL and a stderr reader."""
    port = free_port()
    env = {
        **os.environ,
        "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS),
        "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
        "SUANLI_LOG_LEVEL": "INFO",
        "SUANLI_API_KEY": SECRET,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("SUANLI_REDIS_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            _, err = process.communicate(timeout=10)
            pytest.fail(f"server did not start: {err.decode(errors='replace')[-2000:]}")
        time.sleep(0.2)

    collected: list[str] = []

    def stop_and_read() -> list[str]:
        if process.poll() is None:
            process.terminate()
            try:
                _, err = process.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate(timeout=5)
            collected.extend(err.decode("utf-8", errors="replace").splitlines())
        return collected

    yield url, stop_and_read
    stop_and_read()


def test_server_writes_json_access_lines_on_stderr(
    served: tuple[str, Callable[[], list[str]]],
) -> None:
    url, stop_and_read = served
    with httpx.Client(base_url=url, timeout=30) as http:
        ok = http.post("/v1/recommend", json=RECOMMEND, headers={"X-Request-ID": "rec-1"})
        again = http.post("/v1/recommend", json=RECOMMEND, headers={"X-Request-ID": "rec-2"})
        bad = http.post("/v1/estimate", json={"workload": {}}, headers={"X-Request-ID": "bad-1"})
        admin = http.post(
            "/v1/admin/reload",
            headers={"X-Request-ID": "adm-1", "Authorization": f"Bearer {SECRET}"},
        )
    assert [r.headers["x-request-id"] for r in (ok, again, bad, admin)] == [
        "rec-1",
        "rec-2",
        "bad-1",
        "adm-1",
    ]
    assert (ok.status_code, again.status_code, bad.status_code, admin.status_code) == (
        200,
        200,
        400,
        200,
    )

    lines = stop_and_read()
    assert lines, "no log output on stderr"
    records: list[dict[str, Any]] = []
    not_json = []
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            not_json.append(line)
    assert not not_json, f"stderr lines that are not JSON: {not_json[:5]}"
    for record in records:
        assert {"ts", "level", "logger", "msg"} <= set(record), record
    access = {r["request_id"]: r for r in records if r["logger"] == "suanli.access"}
    for request_id, status, route, cache in (
        ("rec-1", 200, "/v1/recommend", "miss"),
        ("rec-2", 200, "/v1/recommend", "hit"),
        ("bad-1", 400, "/v1/estimate", None),
        ("adm-1", 200, "/v1/admin/reload", None),
    ):
        record = access[request_id]
        assert set(record) >= ACCESS_FIELDS, record
        assert (record["status"], record["route"], record["cache"]) == (status, route, cache)
        assert record["duration_ms"] >= 0
    assert not any(SECRET in line for line in lines), "the API key leaked into the logs"
