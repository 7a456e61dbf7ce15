"""A real ``suanli serve`` process (granian master + workers) on a free loopback port."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT, free_port


def spawn_serve(
    base: Mapping[str, str],
    port: int,
    env: Mapping[str, str],
    stdout: int | IO[bytes] = subprocess.DEVNULL,
    stderr: int | IO[bytes] = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """``python -m service serve`` on ``port`` with the test defaults (the built-in
    providers, no rate limit, warnings only) over ``base`` and ``env`` over those, in a
    process group of its own: granian forks workers, so a test stops the whole group."""
    environ = {
        **base,
        "SUANLI_PORT": str(port),
        "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS),
        "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
        "SUANLI_LOG_LEVEL": "WARNING",
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "service", "serve"],
        env=environ,
        cwd=REPO_ROOT,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def http_json(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> tuple[int, dict[str, str], Any]:
    """One JSON request to the loopback server on ``port``: status, headers and the
    decoded body, for error statuses too (a test asserts on refusals as on answers)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method=method,
        headers={"content-type": "application/json", **(headers or {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


class ServerProcess:
    """``python -m service serve`` with ``env`` on top of the test defaults."""

    def __init__(self, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.workers = workers
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="suanli-test-server-", suffix=".log", delete=False
        )
        unasked = {"SUANLI_REDIS_URL", "SUANLI_API_KEY"} - env.keys()
        base = {k: v for k, v in os.environ.items() if k not in unasked}
        self.process = spawn_serve(
            base,
            self.port,
            {"SUANLI_WORKERS": str(workers), **env},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.wait_ready()

    def wait_ready(self, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited {self.process.returncode}: {self.tail()}")
            with contextlib.suppress(OSError):
                if self.request("GET", "/readyz", timeout=2)[0] == 200 and (
                    len(self.worker_pids()) == self.workers
                ):
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server not ready: {self.tail()}")

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], Any]:
        return http_json(self.port, method, path, body, headers, timeout)

    def worker_pids(self) -> list[int]:
        """The granian workers: child processes of the master."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in path.read_text().split()]
        except OSError:
            return []

    def tail(self, lines: int = 30) -> str:
        self.log.flush()
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def log_text(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # graceful: the master cleans up
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):  # and no worker outlives the test
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait(timeout=10)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)
