"""A real Suanli server in a subprocess on a free loopback port (``suanli serve``).

For tests of clients that must talk to a real server over a socket: the CLI's ``--url``
and the MCP SDK's streamable HTTP client.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping

from tests.conftest import BUILTIN_PROVIDERS, REPO_ROOT, free_port


class LiveServer:
    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environ = {
            **os.environ,
            "SUANLI_HOST": "127.0.0.1",
            "SUANLI_PORT": str(self.port),
            "SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS),
            "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
            "SUANLI_LOG_LEVEL": "WARNING",
            **(env or {}),
        }
        environ.pop("SUANLI_REDIS_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            env=environ,
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # granian forks workers: stop the whole group
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("the server did not become ready")

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@contextlib.contextmanager
def live_server(env: Mapping[str, str] | None = None) -> Iterator[LiveServer]:
    server = LiveServer(env)
    try:
        yield server
    finally:
        server.stop()
