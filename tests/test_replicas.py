"""Two real service processes sharing one real Redis (what Kubernetes replicas do)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.servers import http_json, spawn_serve

pytestmark = [pytest.mark.redis, pytest.mark.slow]

API_KEY = "replica-test-key-0123456789abcdef"
QLORA = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "tokens": 10**7},
    "lang": "en",
}


class Replica:
    def __init__(self, redis_url: str, overrides: Path) -> None:
        self.port = free_port()
        env = {
            "SUANLI_REDIS_URL": redis_url,
            "SUANLI_REFRESH_INTERVAL_S": "0.5",
            "SUANLI_PRICE_OVERRIDES": str(overrides),
            "SUANLI_API_KEY": API_KEY,
        }
        self.process = spawn_serve(os.environ, self.port, env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.get("/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("replica did not become ready")

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        return http_json(self.port, method, path, body, headers)

    def get(self, path: str) -> tuple[int, dict[str, str], Any]:
        return self.request("GET", path)

    def fingerprint(self) -> str:
        fp: str = self.get("/readyz")[2]["catalog_fingerprint"]
        return fp

    def stop(self) -> None:
        """Kill the server and its granian workers (a killed parent leaves them serving)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def replicas(redis_url: str, tmp_path: Path) -> Iterator[tuple[Replica, Replica, Path]]:
    overrides = tmp_path / "overrides.toml"
    overrides.write_text('[[override]]\nprovider = "tencent"\nfamily = "GN7"\ndiscount = 0.9\n')
    a = Replica(redis_url, overrides)
    b = Replica(redis_url, overrides)
    try:
        yield a, b, overrides
    finally:
        a.stop()
        b.stop()


def test_miss_on_one_replica_is_a_hit_on_the_other(
    replicas: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = replicas
    assert a.fingerprint() == b.fingerprint()
    status, headers, body_a = a.request("POST", "/v1/recommend", QLORA)
    assert status == 200
    assert headers["x-suanli-cache"] == "miss"
    status, headers, body_b = b.request("POST", "/v1/recommend", QLORA)
    assert status == 200
    assert headers["x-suanli-cache"] == "hit"
    assert body_a == body_b


def test_reload_through_one_replica_reaches_the_other(
    replicas: tuple[Replica, Replica, Path],
) -> None:
    a, b, overrides = replicas
    before = b.fingerprint()
    overrides.write_text('[[override]]\nprovider = "tencent"\nfamily = "GN7"\ndiscount = 0.7\n')
    status, _, result = a.request(
        "POST", "/v1/admin/reload", headers={"Authorization": f"Bearer {API_KEY}"}
    )
    assert status == 200
    assert result["status"] == "reloaded"
    assert result["fingerprint"] != before
    deadline = time.monotonic() + 5  # refresh interval is 0.5 s
    while b.fingerprint() != result["fingerprint"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert b.fingerprint() == result["fingerprint"]
    # B now answers on the new catalog: the discounted price is what it serves.
    _, _, body = b.request("POST", "/v1/recommend", QLORA)
    gn7 = [o for o in body["options"] if o["instance_type"].startswith("GN7.")]
    assert all(o["price_source"] == "override" for o in gn7)


def test_killing_one_replica_leaves_the_other_serving(
    replicas: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = replicas
    a.stop()
    for _ in range(5):
        status, _, _ = b.request("POST", "/v1/recommend", QLORA)
        assert status == 200
    assert b.get("/readyz")[0] == 200
