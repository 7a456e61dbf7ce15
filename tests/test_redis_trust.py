"""What the service reads from Redis is checked like any outside data (issue 16, item 5):
forged or corrupt live-price snapshots and cached answers are ignored and counted, and a
live snapshot whose key disappears stops being served. Real Redis, real app."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

pytestmark = pytest.mark.redis

MakeClient = Callable[..., TestClient[Litestar]]
TYPE = "GN7.2XLARGE32"  # 1x T4; shipped on-demand list price 8.68 CNY/h
LIVE_KEY = "suanli_prices:live:tencent"
QLORA = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "tokens": 10**7},
    "lang": "en",
}


def _row(price: float, **extra: Any) -> dict[str, Any]:
    return {
        "instance_type": TYPE,
        "region": "ap-beijing",
        "billing": "on_demand",
        "price_per_hour": price,
        "currency": "CNY",
        "source": "live:DescribeZoneInstanceConfigInfos",
        "as_of": "2026-11-30",
        "price_source": "live",
        **extra,
    }


def _publish(raw: redis.Redis, rows: list[dict[str, Any]], fetched_at: str, version: int) -> None:
    """Write a snapshot the way a forger with Redis access would, and bump the catalog
    generation so every worker reloads."""
    snapshot = {
        "provider": "tencent",
        "fetched_at": fetched_at,
        "prices": rows,
        "regions": ["ap-beijing"],
        "version": version,
        "fingerprint": f"forged{version}",
    }
    raw.set(LIVE_KEY, json.dumps(snapshot))
    raw.set(
        f"{LIVE_KEY}:version",
        json.dumps(
            {"version": version, "fingerprint": f"forged{version}", "fetched_at": fetched_at}
        ),
    )
    raw.incr("suanli_catalog:generation")


def _beijing_prices(client: TestClient[Litestar]) -> list[dict[str, Any]]:
    items = client.get("/v1/providers/tencent/instance-types?limit=500").json()["items"]
    (row,) = (i for i in items if i["instance_type"] == TYPE)
    return [p for p in row["prices"] if p["region"] == "ap-beijing" and p["billing"] == "on_demand"]


def _wait_for(check: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _metric(client: TestClient[Litestar], kind: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(f'suanli_corrupt_entries_total{{kind="{kind}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture
def setup(redis_url: str, make_client: MakeClient) -> tuple[TestClient[Litestar], redis.Redis]:
    client = make_client(redis_url=redis_url, refresh_interval_s=0.2)
    return client, redis.Redis.from_url(redis_url)


def test_a_sane_live_price_is_served_and_stops_when_its_key_disappears(
    setup: tuple[TestClient[Litestar], redis.Redis],
) -> None:
    client, raw = setup
    _publish(raw, [_row(7.5)], "2026-11-30T08:00:00Z", 1)
    assert _wait_for(lambda: [p["price_per_hour"] for p in _beijing_prices(client)] == [7.5])
    raw.delete(LIVE_KEY, f"{LIVE_KEY}:version")  # no generation bump: the watch notices
    assert _wait_for(lambda: _beijing_prices(client) == [])


def test_a_flushed_redis_stops_live_prices_too(
    setup: tuple[TestClient[Litestar], redis.Redis],
) -> None:
    client, raw = setup
    _publish(raw, [_row(7.5)], "2026-11-30T08:00:00Z", 1)
    assert _wait_for(lambda: len(_beijing_prices(client)) == 1)
    raw.flushdb()
    assert _wait_for(lambda: _beijing_prices(client) == [])


@pytest.mark.parametrize(
    ("rows", "fetched_at"),
    [
        ([_row(-5.0)], "2026-11-30T08:00:00Z"),  # negative: would rank first
        ([_row(0.01)], "2026-11-30T08:00:00Z"),  # far below the T4 reference floor
        ([_row(7.5)], "2099-01-01T00:00:00Z"),  # from the future: never stale
        ([_row(7.5, price_source="override")], "2026-11-30T08:00:00Z"),  # outranks live
        ([_row(7.5, instance_type="GN99.FAKE")], "2026-11-30T08:00:00Z"),  # unknown type
        ([_row(7.5, currency="USD")], "2026-11-30T08:00:00Z"),
    ],
)
def test_forged_live_prices_are_ignored_and_counted(
    setup: tuple[TestClient[Litestar], redis.Redis], rows: list[dict[str, Any]], fetched_at: str
) -> None:
    client, raw = setup
    before = _metric(client, "live_snapshot") + _metric(client, "live_price")
    fingerprint = client.get("/readyz").json()["catalog_fingerprint"]
    _publish(raw, rows, fetched_at, 1)
    assert _wait_for(
        lambda: _metric(client, "live_snapshot") + _metric(client, "live_price") > before
    )
    assert _beijing_prices(client) == []
    assert client.get("/readyz").json()["catalog_fingerprint"] == fingerprint
    body = client.post("/v1/recommend", json=QLORA).json()
    assert all(o["price_per_hour"] is None or o["price_per_hour"] > 0 for o in body["options"])
    assert all(o["price_source"] != "live" for o in body["options"])


def test_garbage_under_a_cached_answer_is_a_miss_not_an_answer(
    setup: tuple[TestClient[Litestar], redis.Redis],
) -> None:
    client, raw = setup
    first = client.post("/v1/recommend", json=QLORA)
    assert first.headers["x-suanli-cache"] == "miss"
    assert client.post("/v1/recommend", json=QLORA).headers["x-suanli-cache"] == "hit"
    keys = raw.keys("suanli_recommend:*")
    assert len(keys) == 1
    before = _metric(client, "cached_answer")
    for garbage in (b"garbage", b'{"options": []}', raw.get(keys[0])[:-1]):  # type: ignore[index]
        raw.set(keys[0], garbage)
        again = client.post("/v1/recommend", json=QLORA)
        assert again.status_code == 200
        assert again.headers["x-suanli-cache"] == "miss"
        assert again.json() == first.json()
    assert _metric(client, "cached_answer") == before + 3
