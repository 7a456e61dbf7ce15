"""Rate limiting per client on /v1 routes: 429 with ``Retry-After``, health and metrics
exempt, and one shared budget across replicas when Redis is configured."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import Counter
from collections.abc import Callable

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from service.runtime.ratelimit import WINDOW_S, RateLimiter, client_address, counter_key
from tests.servers import ServerProcess

MakeClient = Callable[..., TestClient[Litestar]]
LIMIT = 5
ESTIMATE = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}


WINDOW_MARGIN_S = 10.0
"""A test spends the budget and then expects a 429 in the same fixed window; one that
started in a window's last seconds could see the counter reset mid-test (a loaded CI
machine once took that long), so each test starts with at least this much of it left."""


@pytest.fixture(autouse=True)
def _start_early_in_a_window() -> None:
    left = WINDOW_S - time.time() % WINDOW_S
    if left < WINDOW_MARGIN_S:
        time.sleep(left + 0.05)


def _spend(client: TestClient[Litestar], n: int) -> list[int]:
    return [client.get("/v1/providers").status_code for _ in range(n)]


def _assert_429(client: TestClient[Litestar]) -> None:
    response = client.get("/v1/providers")
    assert response.status_code == 429, response.text
    retry_after = response.headers.get("retry-after")
    assert retry_after is not None, dict(response.headers)
    assert retry_after.isdigit(), retry_after
    assert 1 <= int(retry_after) <= 60, retry_after
    body = response.json()
    assert body["status_code"] == 429
    assert "too many requests" in body["detail"].lower(), body
    assert response.headers["ratelimit-limit"] == str(LIMIT)
    assert response.headers["ratelimit-remaining"] == "0"


def test_sixth_request_in_a_minute_is_429_with_retry_after(make_client: MakeClient) -> None:
    client = make_client(rate_limit_per_minute=LIMIT)
    assert _spend(client, LIMIT) == [200] * LIMIT
    _assert_429(client)
    _assert_429(client)  # refused requests do not extend the window or crash


def test_limit_counts_every_v1_route_and_every_outcome(make_client: MakeClient) -> None:
    client = make_client(rate_limit_per_minute=LIMIT)
    statuses = [
        client.get("/v1/providers").status_code,
        client.post("/v1/estimate", json=ESTIMATE).status_code,
        client.post("/v1/estimate", json={}).status_code,  # a 400 still costs a request
        client.get("/v1/accelerators").status_code,
        client.get("/v1/providers/nope/instance-types").status_code,
    ]
    assert statuses == [200, 200, 400, 200, 404]
    assert client.post("/v1/estimate", json=ESTIMATE).status_code == 429


def test_health_metrics_and_schema_are_exempt(make_client: MakeClient) -> None:
    client = make_client(rate_limit_per_minute=LIMIT)
    _spend(client, LIMIT)
    for _ in range(3 * LIMIT):
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/metrics").status_code == 200
    assert client.get("/schema/openapi.json").status_code == 200
    _assert_429(client)


def test_forwarded_for_header_does_not_buy_a_fresh_budget(make_client: MakeClient) -> None:
    """The client address comes from the connection, never from X-Forwarded-For, which
    any client can set: rotating it must not escape the limit."""
    client = make_client(rate_limit_per_minute=LIMIT)
    for i in range(LIMIT):
        headers = {"X-Forwarded-For": f"10.0.0.{i}", "X-Real-IP": f"10.0.1.{i}"}
        assert client.get("/v1/providers", headers=headers).status_code == 200
    response = client.get("/v1/providers", headers={"X-Forwarded-For": "10.9.9.9"})
    assert response.status_code == 429


def test_zero_disables_rate_limiting(make_client: MakeClient) -> None:
    client = make_client(rate_limit_per_minute=0)
    assert set(_spend(client, 3 * LIMIT)) == {200}
    assert "ratelimit-limit" not in client.get("/v1/providers").headers


@pytest.mark.redis
def test_limit_is_shared_by_replicas_on_one_redis(redis_url: str, make_client: MakeClient) -> None:
    first = make_client(rate_limit_per_minute=LIMIT, redis_url=redis_url)
    second = make_client(rate_limit_per_minute=LIMIT, redis_url=redis_url)
    assert _spend(first, 3) == [200] * 3
    assert _spend(second, 2) == [200] * 2
    _assert_429(first)
    _assert_429(second)


def test_limit_falls_back_to_memory_when_redis_is_down(make_client: MakeClient) -> None:
    """Redis unreachable: the limit still holds per replica (in-memory fallback), and
    requests never fail because the limiter's store is gone."""
    client = make_client(rate_limit_per_minute=LIMIT, redis_url="redis://127.0.0.1:1/0")
    assert _spend(client, LIMIT) == [200] * LIMIT
    _assert_429(client)


def test_recommend_counts_against_the_limit(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    """/v1/recommend is a raw ASGI route: the limiter and metrics must still see it."""
    client = make_client(rate_limit_per_minute=2)
    body = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}
    statuses = [client.post("/v1/recommend", json=body).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    metrics = client.get("/metrics").text
    assert 'path="/v1/recommend"' in metrics


# --- issue 16: a limit that holds, fails open, and knows who the client is -------------


def _metric(client: TestClient[Litestar], name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(f"{name}{{{wanted}}}"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.redis
def test_corrupt_counter_in_redis_fails_open_and_is_counted(
    redis_url: str, make_client: MakeClient
) -> None:
    client = make_client(rate_limit_per_minute=LIMIT, redis_url=redis_url)
    assert client.get("/v1/models").status_code == 200
    before = _metric(client, "suanli_corrupt_entries_total", kind="rate_limit")
    raw = redis.Redis.from_url(redis_url)
    (key,) = raw.keys("suanli_rate_limit:*")
    assert key.decode() == counter_key("ip:testclient", time.time())
    raw.set(key, "garbage")
    for _ in range(3):  # not a 500: the request passes and the counter restarts
        assert client.get("/v1/models").status_code == 200
    assert _metric(client, "suanli_corrupt_entries_total", kind="rate_limit") == before + 1
    assert raw.get(key) == b"2"


def test_client_keys_get_their_own_budgets(make_client: MakeClient) -> None:
    client = make_client(
        rate_limit_per_minute=LIMIT,
        client_keys="alice:alice-key-0123456789abcdef:2,bob:bob-key-0123456789abcdefgh",
    )
    alice = {"X-API-Key": "alice-key-0123456789abcdef"}
    bob = {"X-API-Key": "bob-key-0123456789abcdefgh"}
    assert [client.get("/v1/models", headers=alice).status_code for _ in range(3)] == [
        200,
        200,
        429,
    ]
    assert [client.get("/v1/models", headers=bob).status_code for _ in range(LIMIT)] == [
        200
    ] * LIMIT
    assert client.get("/v1/models", headers=bob).status_code == 429
    assert client.get("/v1/models").status_code == 200  # no key: the address's own budget
    response = client.get("/v1/models", headers={"X-API-Key": "not-a-known-key-0123456789"})
    assert response.status_code == 401
    assert "X-API-Key" in response.json()["detail"]


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("10.0.0.5", ["203.0.113.9"], "203.0.113.9"),  # a trusted proxy vouches
        ("10.0.0.5", ["1.2.3.4, 203.0.113.9"], "203.0.113.9"),  # spoofed left hops ignored
        ("10.0.0.5", ["203.0.113.9, 10.0.0.7"], "203.0.113.9"),  # two trusted hops
        ("10.0.0.5", ["nonsense"], "10.0.0.5"),
        ("10.0.0.5", [], "10.0.0.5"),
        ("198.51.100.1", ["203.0.113.9"], "198.51.100.1"),  # untrusted peer: header ignored
    ],
)
def test_client_address_believes_only_trusted_proxies(
    peer: str, forwarded: list[str], expected: str
) -> None:
    trusted = (ipaddress.ip_network("10.0.0.0/8"),)
    assert client_address(peer, forwarded, trusted) == expected


@pytest.mark.redis
@pytest.mark.slow
def test_two_workers_on_one_redis_hold_the_limit_exactly_behind_a_proxy(
    redis_url: str,
) -> None:
    """Every request comes through a trusted proxy (127.0.0.1) for one client: two
    worker processes sharing Redis let exactly the limit through, and another client
    behind the same proxy has its own budget."""
    limit = 40
    server = ServerProcess(
        workers=2,
        SUANLI_REDIS_URL=redis_url,
        SUANLI_RATE_LIMIT_PER_MINUTE=str(limit),
        SUANLI_TRUSTED_PROXIES="127.0.0.0/8",
    )
    try:
        if time.time() % 60 > 45:  # keep the whole burst inside one minute window
            time.sleep(61 - time.time() % 60)
        one = {"X-Forwarded-For": "203.0.113.7", "Connection": "close"}
        statuses = Counter(
            server.request("GET", "/v1/models", headers=one)[0] for _ in range(limit + 20)
        )
        assert statuses == {200: limit, 429: 20}
        other = {"X-Forwarded-For": "203.0.113.8", "Connection": "close"}
        assert server.request("GET", "/v1/models", headers=other)[0] == 200
    finally:
        server.stop()


@pytest.mark.redis
async def test_concurrent_requests_share_one_call_and_get_exact_counts(redis_url: str) -> None:
    """200 requests at once through one worker's limiter: coalesced into a few script
    calls, yet exactly the limit is allowed, and a corrupt counter beside them only lets
    its own requests through."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    limiter = RateLimiter(150, redis=client)
    now = time.time()
    await client.set(counter_key("ip:corrupt", now), "garbage")
    try:
        decisions = await asyncio.gather(
            *(limiter.decide("ip:busy", 150, now) for _ in range(200)),
            *(limiter.decide("ip:corrupt", 150, now) for _ in range(3)),
        )
        busy, corrupt = decisions[:200], decisions[200:]
        assert sum(d.allowed for d in busy) == 150
        assert sorted(d.remaining for d in busy)[-1] == 149  # the first was told count 1
        assert all(d.allowed for d in corrupt)
        assert int(await client.get(counter_key("ip:busy", now)) or 0) == 200
        assert 0 < await client.ttl(counter_key("ip:busy", now)) <= 60
    finally:
        await client.aclose()
