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
from pathlib import Path
from typing import Any

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT, free_port


class ServerProcess:
    """``python -m service serve`` with ``env`` on top of the test defaults."""

    def __init__(self, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.workers = workers
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="suanli-test-server-", suffix=".log", delete=False
        )
        full_env = {
            **os.environ,
            "SUANLI_PORT": str(self.port),
            "SUANLI_WORKERS": str(workers),
            "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS),
            "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
            "SUANLI_LOG_LEVEL": "WARNING",
            **env,
        }
        for name in ("SUANLI_REDIS_URL", "SUANLI_API_KEY"):
            if name not in env:
                full_env.pop(name, None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            env=full_env,
            cwd=REPO_ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # granian forks workers: stop the whole group
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
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
            headers={"content-type": "application/json", **(headers or {})},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                return response.status, dict(response.headers), json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.loads(error.read())

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
