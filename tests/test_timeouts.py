"""The per-request deadline: a stuck dependency gives a 503 in time, never a hang."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from tests.conftest import RedisServer
from tests.test_quality_metrics import samples

QLORA = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}, "lang": "en"}


@pytest.mark.redis
def test_stuck_redis_answers_503_within_the_deadline(
    redis_server: RedisServer, make_client: Callable[..., TestClient[Litestar]]
) -> None:
    # Redis calls may take 5 s, but no request may take more than 0.5 s.
    client = make_client(redis_url=redis_server.url, redis_timeout_s=5, request_timeout_s=0.5)
    assert client.post("/v1/recommend", json=QLORA).status_code == 200
    pauser = redis.Redis(port=redis_server.port)
    pause = threading.Thread(target=lambda: pauser.execute_command("CLIENT", "PAUSE", 3000, "ALL"))
    pause.start()
    pause.join()
    started = time.monotonic()
    response = client.post("/v1/recommend", json={**QLORA, "top_k": 3})
    elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert elapsed < 2.0
    body = response.json()
    assert "SUANLI_REQUEST_TIMEOUT_S" in body["detail"]
    assert body["extra"]["request_id"] == response.headers["x-request-id"]
    assert response.headers["retry-after"] == "1"
    pauser.execute_command("CLIENT", "UNPAUSE")
    assert client.get("/healthz").status_code == 200
    # The cancelled request left the in-progress gauge (it is counted when it ends).
    in_progress = samples(client, "litestar_requests_in_progress")
    route = {"app_name": "suanli", "method": "POST", "path": "/v1/recommend", "status_code": "200"}
    assert in_progress[tuple(sorted(route.items()))] == 0
