"""PriceSnapshotStore on a real Redis: two service instances share one refresh.

Each "instance" is its own :class:`PriceSnapshotStore` on its own Redis client, like two
replicas; one runs the refresh (through the Tencent SDK against the stand-in), both read.
"""

from __future__ import annotations

from litestar.stores.redis import RedisStore

from service.catalog.live.refresh import refresh_provider
from service.catalog.live.status import read_live_state
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore, fingerprint_prices
from service.runtime.cache import build_redis

from .cloud_tencent import ZoneQuote
from .clouds import tencent
from .conftest import Clock, StoreFactory
from .standin import serve
from .test_refresh import hourly


async def test_one_refresh_serves_both_instances(redis_stores: StoreFactory, clock: Clock) -> None:
    case = tencent()
    replica_a, replica_b = redis_stores(), redis_stores()
    with serve(case.answer, case.action_of) as standin:
        source = case.make_source(standin.url, case.env, clock)

        result = await refresh_provider(
            case.name, source, case.catalog, [case.region], replica_a, 10, clock=clock
        )
        assert result.outcome == "published"

        seen_by_b = await replica_b.read(case.name)
        assert seen_by_b == result.snapshot
        assert seen_by_b is not None
        assert seen_by_b.version == 1
        marker = await replica_b.version(case.name)
        assert marker is not None
        assert marker.fingerprint == seen_by_b.fingerprint

        # prices move; one refresh later replica B notices a new version and new prices
        quotes = case.extra["prices"].quotes[case.region]  # type: ignore[attr-defined]
        quotes[0] = ZoneQuote("ap-beijing-5", "GN7.2XLARGE32", "POSTPAID_BY_HOUR", 8.2)
        quotes[1] = ZoneQuote("ap-beijing-7", "GN7.2XLARGE32", "POSTPAID_BY_HOUR", 8.3)
        clock.advance(3600)
        await refresh_provider(
            case.name, source, case.catalog, [case.region], replica_a, 10, clock=clock
        )

    marker = await replica_b.version(case.name)
    assert marker is not None
    assert marker.version == 2
    fresh = await replica_b.read(case.name)
    assert fresh is not None
    assert fresh.fetched_at == "2026-11-30T09:00:00Z"
    t4 = next(
        p for p in fresh.prices if p.instance_type == "GN7.2XLARGE32" and p.billing == "on_demand"
    )
    assert t4.price_per_hour == 8.2
    # a replica without credentials still reports live prices on, with their age
    state = await read_live_state(replica_b, case.name, None, clock(), 3600)
    assert state.enabled is True
    assert state.version == 2
    assert state.age_s == 0.0


async def test_versions_increase_and_fingerprints_ignore_order(
    redis_stores: StoreFactory,
) -> None:
    store = redis_stores()
    a = hourly("GN7.2XLARGE32", "ap-beijing", 8.68)
    b = hourly("GT4.4XLARGE96", "ap-beijing", 28.64)
    first = await store.publish(
        LiveSnapshot(provider="p", fetched_at="2026-11-30T08:00:00Z", prices=(a, b))
    )
    second = await store.publish(
        LiveSnapshot(provider="p", fetched_at="2026-11-30T09:00:00Z", prices=(b, a))
    )

    assert (first.version, second.version) == (1, 2)
    assert first.fingerprint == second.fingerprint == fingerprint_prices((b, a))
    await store.delete("p")
    assert await store.read("p") is None
    assert await store.version("p") is None


async def test_unreachable_redis_reads_as_nothing_published() -> None:
    dead = RedisStore(build_redis("redis://127.0.0.1:1/0", 0.2), namespace="suanli-test-dead")
    store = PriceSnapshotStore.from_root(dead)
    try:
        assert await store.read("tencent") is None
        assert await store.read_status("tencent") is None
        state = await read_live_state(store, "tencent", None, Clock()(), 3600)
        assert state.enabled is False
    finally:
        await dead._redis.aclose()


async def test_undecodable_value_reads_as_nothing_published(
    memory_store: PriceSnapshotStore,
) -> None:
    await memory_store._store.set("live:tencent", b"{not json")
    assert await memory_store.read("tencent") is None
