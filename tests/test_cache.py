"""The request cache over real stores: Redis when configured, memory otherwise, and a
Redis that dies and comes back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore
from litestar.testing import TestClient

from service.api.state import STATE_KEY, Suanli
from service.runtime.cache import (
    Breaker,
    LocalStore,
    RequestCache,
    ResilientStore,
    build_redis,
    request_key,
)
from tests.conftest import RedisServer


class Probe(msgspec.Struct, frozen=True):
    model: str
    seq_len: int = 2048


def test_request_key_is_canonical_and_catalog_bound() -> None:
    a = request_key(Probe("llama-2-7b"), "fp1")
    assert a == request_key(Probe("llama-2-7b", 2048), "fp1")  # defaults filled
    assert a != request_key(Probe("llama-2-7b", 4096), "fp1")
    assert a != request_key(Probe("llama-2-7b"), "fp2")  # another catalog, another key


async def test_single_flight_computes_identical_misses_once() -> None:
    cache = RequestCache(MemoryStore(), "test", ttl_s=60)
    calls = 0

    def compute() -> bytes:
        nonlocal calls
        calls += 1
        return b"answer"

    results = await asyncio.gather(*(cache.get_or_compute("k", compute) for _ in range(5)))
    assert calls == 1
    assert [body for body, _ in results] == [b"answer"] * 5
    assert [hit for _, hit in results].count(False) == 1


async def test_redis_cache_writes_and_reads(redis_url: str) -> None:
    store = RedisStore(build_redis(redis_url, 0.5), namespace="suanli-test")
    cache = RequestCache(ResilientStore(store, Breaker("redis")), "recommend", ttl_s=60)
    body, hit = await cache.get_or_compute("key1", lambda: b"computed")
    assert (body, hit) == (b"computed", False)
    assert await store.get("key1") == b"computed"
    assert 0 < (await store.expires_in("key1") or 0) <= 60
    other = RequestCache(ResilientStore(store, Breaker("redis")), "recommend", ttl_s=60)
    assert await other.get_or_compute("key1", lambda: b"recomputed") == (b"computed", True)
    await store._redis.aclose()


async def test_dead_redis_degrades_to_uncached_without_raising() -> None:
    store = RedisStore(build_redis("redis://127.0.0.1:1/0", 0.2), namespace="x")
    resilient = ResilientStore(store, Breaker("redis"))
    cache = RequestCache(resilient, "recommend", ttl_s=60)
    assert await cache.get_or_compute("k", lambda: b"v1") == (b"v1", False)
    assert await cache.get_or_compute("k", lambda: b"v2") == (b"v2", False)  # uncached
    assert not resilient.healthy
    assert await resilient.ping() is False


@pytest.mark.redis
def test_redis_stopped_mid_run_then_back(
    redis_server: RedisServer, make_client: Callable[..., TestClient[Litestar]]
) -> None:
    client = make_client(redis_url=redis_server.url)
    suanli: Suanli = client.app.state[STATE_KEY]
    with client.portal() as portal:  # run coroutines on the app's event loop
        _exercise_outage(client, suanli, portal.call, redis_server)


def _exercise_outage(
    client: TestClient[Litestar], suanli: Suanli, run: Any, redis_server: RedisServer
) -> None:

    assert client.get("/readyz").json()["redis"] == "ok"
    assert run(suanli.cache.get_or_compute, "k1", lambda: b"one") == (b"one", False)
    assert run(suanli.cache.get_or_compute, "k1", lambda: b"two") == (b"one", True)

    redis_server.stop()
    assert client.get("/v1/providers").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["redis"] == "down"
    assert run(suanli.cache.get_or_compute, "k2", lambda: b"uncached") == (b"uncached", False)

    redis_server.start()
    assert client.get("/readyz").status_code == 200
    assert run(suanli.cache.get_or_compute, "k3", lambda: b"three") == (b"three", False)
    assert run(suanli.cache.get_or_compute, "k3", lambda: b"again") == (b"three", True)


async def test_local_store_expires_and_stays_bounded() -> None:
    store = LocalStore(max_entries=3)
    await store.set("a", b"1", expires_in=60)
    assert await store.get("a") == b"1"
    assert 0 < (await store.expires_in("a") or 0) <= 60
    await store.set("short", b"x", expires_in=timedelta(seconds=0))
    assert await store.get("short") is None  # expired at once
    for key in ("b", "c", "d"):
        await store.set(key, key.encode())
    assert await store.get("a") is None  # the oldest went first
    assert [await store.get(k) for k in ("b", "c", "d")] == [b"b", b"c", b"d"]
    assert len(store._data) == 3
    await store.delete("b")
    assert not await store.exists("b")
    await store.delete_all()
    assert await store.get("c") is None
