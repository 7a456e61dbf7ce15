"""The load script in its short CI form: a real two-worker server under 64 concurrent
connections of mixed, partly hostile traffic must give no 5xx, no connection error, 4xx
to every hostile request and 200 to every valid one, through its four phases — steady,
hostile bodies, slowloris and a killed worker (``SUANLI_LOAD_SECONDS``, default 15)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT

LOAD_SCRIPT = REPO_ROOT / "bench" / "load.py"
SECONDS = float(os.environ.get("SUANLI_LOAD_SECONDS", "15"))


def _refuses_duplicate_keys() -> bool:
    """Whether this build has strict body decoding (issue 12): the hostile-body phase
    sends duplicate keys and ignored fields, which only that makes a 4xx."""
    from litestar.testing import TestClient

    from service.app import create_app
    from tests.conftest import app_settings

    body = (
        b'{"workload": {"kind": "bogus"}, "workload": {"kind": "finetune", "model": "llama-2-7b"}}'
    )
    with TestClient(app=create_app(app_settings())) as client:
        response = client.post(
            "/v1/estimate", content=body, headers={"content-type": "application/json"}
        )
    return response.status_code == 400


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS)}
    env.pop("SUANLI_REDIS_URL", None)
    return subprocess.run(
        [sys.executable, str(LOAD_SCRIPT), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.slow
def test_short_load_run_has_no_errors(tmp_path: Path) -> None:
    report_path = tmp_path / "load.json"
    result = _run(
        "--duration",
        str(SECONDS),
        "--concurrency",
        "64",
        "--hostile-fraction",
        "0.1",
        "--json-out",
        str(report_path),
        timeout=SECONDS + 120,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert report_path.exists(), result.stdout + result.stderr
    report = json.loads(report_path.read_text())
    assert report["server_errors"] == 0, report
    outside_kill = sum(p["connection_errors"] for p in report["phases"][:-1])
    assert outside_kill == 0, report["samples"]
    assert report["concurrency"] == 64
    assert report["requests"] > 64, report
    assert report["hostile_requests"] > 0, report
    assert report["valid_not_200"] == 0, report
    assert report["duration_s"] >= SECONDS
    assert report["latency_ms"]["p99"] > 0
    assert "req/s" in result.stdout
    phases = {phase["name"]: phase for phase in report["phases"]}
    assert list(phases) == ["steady", "hostile-body", "slowloris", "worker-kill"]
    for name in ("steady", "slowloris", "worker-kill"):
        assert phases[name]["ok"] is True, (name, phases[name])
        assert phases[name]["hostile_not_4xx"] == 0, phases[name]
    slowloris = phases["slowloris"]["details"]
    assert slowloris["idle_sockets"] == 1100
    assert slowloris["probes_answered"] == slowloris["probes_sent"] > 0
    assert slowloris["slow_body_statuses"] == {"408": 20}
    kill = phases["worker-kill"]["details"]
    assert kill["respawned_after_s"] is not None
    assert kill["server_alive"] is True
    killed = phases["worker-kill"]
    assert killed["connection_errors"] + killed["stale_retries"] <= 64  # one per connection
    if not _refuses_duplicate_keys():
        pytest.xfail("hostile-body phase needs strict body decoding (issue 12) to pass")
    assert phases["hostile-body"]["ok"] is True, phases["hostile-body"]
    assert report["hostile_not_4xx"] == 0, report
    assert report["ok"] is True
    assert result.returncode == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com:80",
        "http://10.0.0.1:8000",
        "https://127.0.0.1:8000",
        "http://127.0.0.2:8000",
        "http://localhost.evil.com:8000",
        "http://127.0.0.1",
    ],
)
def test_only_loopback_urls_are_accepted(url: str) -> None:
    result = _run("--url", url, "--duration", "1", timeout=30)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "only http://127.0.0.1" in result.stderr


@pytest.mark.parametrize(
    "args", [["--duration", "0"], ["--duration", "100000"], ["--concurrency", "0"]]
)
def test_unbounded_runs_are_refused(args: list[str]) -> None:
    result = _run(*args, timeout=30)
    assert result.returncode == 2, result.stdout + result.stderr


def test_refused_connections_are_counted_not_a_crash(tmp_path: Path) -> None:
    """A connect the server refuses (a worker just killed, a full listen queue) is a
    connection error in the report, never a crashed run without one (CI run of stop 22:
    the tool exited 1 with no report)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    report_path = tmp_path / "load.json"
    result = _run(
        "--url",
        f"http://127.0.0.1:{closed_port}",
        "--duration",
        "1",
        "--concurrency",
        "2",
        "--no-attacks",
        "--json-out",
        str(report_path),
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(report_path.read_text())
    assert report["connection_errors"] > 0, report
    assert report["ok"] is False
    assert "ConnectionFailed" in " ".join(report["samples"]), report["samples"]
