"""Fixtures for live price tests: a pinned clock, catalog rows, real Redis stores.

Redis: ``SUANLI_TEST_REDIS_URL`` when set, else ``redis://127.0.0.1:6379/15``. When it
does not answer, Redis tests skip with the reason, unless ``SUANLI_REQUIRE_REDIS=1``,
which turns the skip into a failure. Every test gets its own key namespace and deletes
it afterwards, so tests never see each other's snapshots.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest
import redis
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore
from redis.asyncio import Redis

from service.catalog.live.store import PriceSnapshotStore
from service.catalog.models import InstanceType

DEFAULT_TEST_REDIS = "redis://127.0.0.1:6379/15"

T0 = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)
"""The pinned 'now' of these tests (live ``as_of`` is then ``2026-11-30T08:00:00Z``)."""


class Clock:
    """A settable clock: adapters and the refresh job read time only through it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def row(
    name: str,
    accelerator: str | None,
    count: int,
    regions: tuple[str, ...] = (),
    family: str | None = None,
) -> InstanceType:
    """A catalog row with the fields live pricing reads (type, accelerator, count,
    regions). Names and GPU counts are real ones from shared/reference catalog facts."""
    return InstanceType(
        instance_type=name,
        family=family or name.split(".")[0],
        accelerator=accelerator,
        accelerator_count=count,
        regions=regions,
        source="shared/reference/catalog-facts.csv",
        as_of="2026",
    )


def redis_url() -> str:
    return os.environ.get("SUANLI_TEST_REDIS_URL") or DEFAULT_TEST_REDIS


def require_redis() -> str:
    """The test Redis URL; skip (or fail with ``SUANLI_REQUIRE_REDIS=1``) when down."""
    url = redis_url()
    try:
        redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping()
    except (redis.RedisError, OSError) as exc:
        reason = f"Redis at {url} unreachable ({type(exc).__name__}: {exc})"
        if os.environ.get("SUANLI_REQUIRE_REDIS") == "1":
            pytest.fail(f"SUANLI_REQUIRE_REDIS=1 but {reason}")
        pytest.skip(reason)
    return url


StoreFactory = Callable[[], PriceSnapshotStore]


@pytest.fixture
async def redis_stores() -> AsyncIterator[StoreFactory]:
    """Factory of :class:`PriceSnapshotStore` objects, each on its *own* Redis client
    (like separate service replicas), all in one fresh namespace removed afterwards."""
    url = require_redis()
    namespace = f"suanli-test-live-{uuid.uuid4().hex[:12]}"
    roots: list[RedisStore] = []

    def make() -> PriceSnapshotStore:
        root = RedisStore(Redis.from_url(url), namespace=namespace)
        roots.append(root)
        return PriceSnapshotStore.from_root(root)

    yield make
    if roots:
        await roots[0].delete_all()
    for root in roots:
        await root._redis.aclose()


@pytest.fixture
def memory_store() -> PriceSnapshotStore:
    return PriceSnapshotStore.from_root(MemoryStore())
