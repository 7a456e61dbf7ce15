"""Live prices published into Redis are what /v1/recommend ranks with, and say so."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from litestar import Litestar
from litestar.stores.redis import RedisStore
from litestar.testing import TestClient

from service.catalog.live.adapter import live_price
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore
from service.runtime.cache import build_redis

MakeClient = Callable[..., TestClient[Litestar]]
QLORA = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora",
                 "seq_len": 1024, "tokens": 20_000_000},
    "constraints": {"providers": ["tencent"], "accelerators": ["T4"]},
    "top_k": 50,
    "lang": "en",
}  # fmt: skip


def publish(redis_url: str, fetched: datetime) -> None:
    stamp = fetched.strftime("%Y-%m-%dT%H:%M:%SZ")
    prices = (
        live_price(instance_type="GN7.2XLARGE32", region="ap-guangzhou", billing="on_demand",
                   api="DescribeZoneInstanceConfigInfos", as_of=stamp, per_hour=5.0),
        live_price(instance_type="GN7.2XLARGE32", region="ap-guangzhou", billing="spot",
                   api="DescribeZoneInstanceConfigInfos", as_of=stamp, per_hour=1.5),
    )  # fmt: skip

    async def go() -> None:
        root = RedisStore(build_redis(redis_url, 1.0), namespace="suanli")
        store = PriceSnapshotStore(root.with_namespace("prices"))
        await store.publish(
            LiveSnapshot(provider="tencent", fetched_at=stamp, prices=prices,
                         regions=("ap-guangzhou",))
        )  # fmt: skip
        await root._redis.aclose()

    asyncio.run(go())


@pytest.mark.redis
def test_recommend_ranks_with_live_prices_and_labels_them(
    make_client: MakeClient, redis_url: str
) -> None:
    publish(redis_url, datetime.now(UTC))
    client = make_client(redis_url=redis_url)
    body = client.post("/v1/recommend", json=QLORA).json()
    live = [o for o in body["options"] if o["price_source"] == "live"]
    assert {(o["billing"], o["price_per_hour"], o["region"]) for o in live} == {
        ("on_demand", 5.0, "ap-guangzhou"),
        ("spot", 1.5, "ap-guangzhou"),
    }
    top = body["options"][0]
    assert top["price_source"] == "live"
    assert top["billing"] == "spot"  # cheapest even after its interruption overhead
    assert any("interruptions" in r for r in top["reasons"])
    on_demand = next(o for o in live if o["billing"] == "on_demand")
    assert top["hours"] > on_demand["hours"]  # spot hours include the expected overhead
    assert not any("past its refresh interval" in w for o in live for w in o["warnings"])
    info = {p["name"]: p for p in client.get("/v1/providers").json()}["tencent"]
    assert info["live_prices"]["enabled"] is True
    assert info["live_prices"]["stale"] is False
    assert info["live_prices"]["price_count"] == 2


@pytest.mark.redis
def test_stale_live_prices_are_served_and_marked(make_client: MakeClient, redis_url: str) -> None:
    publish(redis_url, datetime.now(UTC) - timedelta(hours=3))
    client = make_client(redis_url=redis_url, live_price_ttl_s=3600)
    body = client.post("/v1/recommend", json=QLORA).json()
    live = [o for o in body["options"] if o["price_source"] == "live"]
    assert live, "stale live prices are still served"
    assert all(any("past its refresh interval" in w for w in o["warnings"]) for o in live)
    info = {p["name"]: p for p in client.get("/v1/providers").json()}["tencent"]
    assert info["live_prices"]["stale"] is True
    assert info["live_prices"]["age_s"] > 3 * 3600 - 60


def test_without_credentials_nothing_changes(client: TestClient[Litestar]) -> None:
    body = client.post("/v1/recommend", json=QLORA).json()
    assert body["options"]
    assert all(o["price_source"] in ("snapshot", "estimated", None) for o in body["options"])
    info = {p["name"]: p for p in client.get("/v1/providers").json()}
    for name in ("alibaba", "tencent", "huawei", "volcengine"):
        assert info[name]["live_prices"]["enabled"] is False
        assert info[name]["live_prices"]["reason"]
