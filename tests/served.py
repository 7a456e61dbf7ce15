"""The real service as a process on a loopback port (``python -m service serve``).

For tests that need a real HTTP server: a browser, a generated client. No Redis (the
in-process cache), only the built-in providers, no rate limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator

from tests.conftest import free_port
from tests.servers import spawn_serve


class ServedApp:
    """``suanli serve`` on 127.0.0.1 and a free port, ready when ``/readyz`` says so."""

    def __init__(self, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        base = {k: v for k, v in os.environ.items() if not k.startswith("SUANLI_")}
        self.process = spawn_serve(base, self.port, {"SUANLI_HOST": "127.0.0.1", **env})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"suanli serve exited with {self.process.returncode}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("suanli serve did not become ready")

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
def served(**env: str) -> Iterator[ServedApp]:
    app = ServedApp(**env)
    try:
        yield app
    finally:
        app.stop()
