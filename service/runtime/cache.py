"""Request-keyed response cache over a litestar ``Store`` that survives its store failing.

* :class:`StoreFactory` picks the backend: :class:`LocalStore` (embedded default, no Redis
  needed) or ``RedisStore`` when ``SUANLI_REDIS_URL`` is set.
* :class:`ResilientStore` wraps a store with a circuit breaker: when Redis is down or
  slow, calls fail fast for a short, growing pause instead of timing out on every
  request; the failure is logged once, counted, and the store is retried by itself.
* :class:`RequestCache` keys answers by the canonical request (msgspec-encoded, defaults
  filled) plus the catalog fingerprint, so a catalog change never serves a stale answer,
  and computes concurrent identical misses once (single-flight).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

import msgspec
from litestar.stores.base import NamespacedStore, Store
from litestar.stores.redis import RedisStore
from redis.asyncio import Redis

from service.runtime.bounded import BoundedDict
from service.runtime.metrics import CACHE_EVENTS, CORRUPT_ENTRIES, STORE_ERRORS, STORE_UP

log = logging.getLogger(__name__)

R = TypeVar("R")

_encoder = msgspec.json.Encoder(order="deterministic")


def build_redis(url: str, timeout_s: float) -> Redis:
    """A Redis client whose every call is bounded: a slow Redis must not slow answers."""
    client: Redis = Redis.from_url(
        url,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        health_check_interval=0,
        retry_on_timeout=False,
    )
    return client


class LocalStore(Store):
    """In-process store for one replica: a bounded dict with per-key expiry.

    Replaces litestar's ``MemoryStore`` on the request path: no lock (one event loop
    owns it; every operation is synchronous between awaits) and two bounds, entries and
    bytes of values, so neither a stream of distinct requests nor a few huge answers
    (``top_k`` 50) can grow the process without limit. The oldest entry is evicted first;
    a value larger than the whole budget is not kept at all.
    """

    def __init__(self, max_entries: int = 10_000, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._data: BoundedDict[str, tuple[bytes, float]] = BoundedDict(max_entries)
        self.max_bytes = max_bytes
        self.bytes = 0
        """Bytes of values held now (keys and bookkeeping not counted)."""

    def _drop(self, key: str) -> None:
        item = self._data.pop(key, None)
        if item is not None:
            self.bytes -= len(item[0])

    @staticmethod
    def _deadline(expires_in: int | timedelta | None) -> float:
        if expires_in is None:
            return math.inf
        seconds = expires_in.total_seconds() if isinstance(expires_in, timedelta) else expires_in
        return time.monotonic() + seconds

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        data = value.encode() if isinstance(value, str) else value
        self._drop(key)
        if len(data) > self.max_bytes:
            return
        while self._data and self.bytes + len(data) > self.max_bytes:
            _, (old, _) = self._data.popitem(last=False)
            self.bytes -= len(old)
        if len(self._data) >= self._data.max_entries:
            _, (old, _) = self._data.popitem(last=False)
            self.bytes -= len(old)
        self._data[key] = (data, self._deadline(expires_in))
        self.bytes += len(data)

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        item = self._data.get(key)
        if item is None:
            return None
        if item[1] <= time.monotonic():
            self._drop(key)
            return None
        if renew_for is not None:
            self._data[key] = (item[0], self._deadline(renew_for))
        return item[0]

    async def delete(self, key: str) -> None:
        self._drop(key)

    async def delete_all(self) -> None:
        self._data.clear()
        self.bytes = 0

    async def exists(self, key: str) -> bool:
        return await self.get(key) is not None

    async def expires_in(self, key: str) -> int | None:
        item = self._data.get(key)
        if item is None or item[1] == math.inf:
            return None
        return max(0, int(item[1] - time.monotonic()))


class Breaker:
    """Circuit breaker shared by every store on one backend (one Redis = one breaker).

    After a failure the backend is skipped for a pause (1 s, doubling up to
    ``max_pause_s``), then tried again; the first success anywhere (a request, or the
    readiness probe) closes it for all namespaces at once. Logged once per outage.
    """

    def __init__(self, name: str, max_pause_s: float = 8.0) -> None:
        self.name = name
        self.max_pause_s = max_pause_s
        self._pause_s = 0.0
        self._retry_at = 0.0
        self.last_error: str | None = None
        STORE_UP.labels(store=name).set(1)

    @property
    def healthy(self) -> bool:
        return self.last_error is None

    def available(self) -> bool:
        return self._pause_s == 0.0 or time.monotonic() >= self._retry_at

    def succeeded(self) -> None:
        if self.last_error is not None:
            log.warning("store %s is back; shared caching resumed", self.name)
            STORE_UP.labels(store=self.name).set(1)
        self.last_error = None
        self._pause_s = 0.0

    def failed(self, exc: BaseException) -> None:
        STORE_ERRORS.labels(store=self.name).inc()
        if self.last_error is None:  # log once per outage, not once per request
            log.warning(
                "store %s unavailable (%s); answering without it until it returns",
                self.name,
                type(exc).__name__,
            )
            STORE_UP.labels(store=self.name).set(0)
        self.last_error = f"{type(exc).__name__}: {exc}"[:200]
        self._pause_s = min(self.max_pause_s, max(1.0, self._pause_s * 2))
        self._retry_at = time.monotonic() + self._pause_s


class StoreFactory:
    """Namespaced, failure-proof stores over one backend: one Redis connection pool and
    one :class:`Breaker` for all namespaces (``recommend``, ``rate_limit``, ``catalog``,
    ``prices``), or one in-memory store per namespace when no Redis is configured."""

    def __init__(
        self, redis_url: str | None, timeout_s: float, local_max_bytes: int = 64 * 1024 * 1024
    ) -> None:
        self.root: NamespacedStore | None = None
        self.redis: Redis | None = None
        """The client under ``root`` (for atomic commands a ``Store`` lacks)."""
        self.breaker = Breaker("redis")
        self.local_max_bytes = local_max_bytes
        self._primaries: dict[str, Store] = {}
        if redis_url:
            self.redis = build_redis(redis_url, timeout_s)
            self.root = RedisStore(self.redis, namespace="suanli")

    @property
    def shared(self) -> bool:
        return self.root is not None

    def primary(self, name: str) -> Store:
        """The raw store of a namespace (raises on failure; for jobs that must know)."""
        if name not in self._primaries:
            self._primaries[name] = (
                LocalStore(max_bytes=self.local_max_bytes)
                if self.root is None
                else self.root.with_namespace(name)
            )
        return self._primaries[name]

    def namespace(self, name: str, fallback: Store | None = None) -> ResilientStore:
        """The failure-proof view of a namespace (what the request path uses)."""
        return ResilientStore(self.primary(name), self.breaker, fallback)

    async def close(self) -> None:
        if self.root is not None:
            await self.root.__aexit__(None, None, None)


class ResilientStore(Store):
    """A store that never raises: while its backend fails it answers from ``fallback``
    (or as a miss / no-op), guarded by the backend's shared :class:`Breaker`."""

    def __init__(self, primary: Store, breaker: Breaker, fallback: Store | None = None) -> None:
        self.primary = primary
        self.breaker = breaker
        self.fallback = fallback

    @property
    def healthy(self) -> bool:
        return self.breaker.healthy

    @property
    def last_error(self) -> str | None:
        return self.breaker.last_error

    async def _call(
        self,
        primary: Callable[[], Awaitable[R]],
        fallback: Callable[[], Awaitable[R]] | None,
        default: R,
    ) -> R:
        if self.breaker.available():
            try:
                result = await primary()
            except Exception as exc:
                self.breaker.failed(exc)
            else:
                self.breaker.succeeded()
                return result
        if fallback is not None:
            return await fallback()
        return default

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        fb = self.fallback
        await self._call(
            lambda: self.primary.set(key, value, expires_in),
            (lambda: fb.set(key, value, expires_in)) if fb else None,
            None,
        )

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        fb = self.fallback
        return await self._call(
            lambda: self.primary.get(key, renew_for),
            (lambda: fb.get(key, renew_for)) if fb else None,
            None,
        )

    async def delete(self, key: str) -> None:
        fb = self.fallback
        await self._call(
            lambda: self.primary.delete(key), (lambda: fb.delete(key)) if fb else None, None
        )

    async def delete_all(self) -> None:
        fb = self.fallback
        await self._call(self.primary.delete_all, (lambda: fb.delete_all()) if fb else None, None)

    async def exists(self, key: str) -> bool:
        fb = self.fallback
        return await self._call(
            lambda: self.primary.exists(key), (lambda: fb.exists(key)) if fb else None, False
        )

    async def expires_in(self, key: str) -> int | None:
        fb = self.fallback
        return await self._call(
            lambda: self.primary.expires_in(key),
            (lambda: fb.expires_in(key)) if fb else None,
            None,
        )

    async def ping(self) -> bool:
        """Probe the primary now (ignoring the breaker pause); used by ``/readyz``."""
        try:
            await self.primary.exists("__ping__")
        except Exception as exc:
            self.breaker.failed(exc)
            return False
        self.breaker.succeeded()
        return True


def request_digest(request: msgspec.Struct) -> str:
    """Stable digest of a decoded request: its canonical JSON (defaults filled)."""
    return hashlib.sha256(_encoder.encode(request)).hexdigest()[:40]


def answer_fingerprint(catalog_fingerprint: str, stale_live: frozenset[str]) -> str:
    """What an answer depends on besides the request: the catalog, and which providers'
    live prices are served past their TTL (the answer marks them stale)."""
    if not stale_live:
        return catalog_fingerprint
    return f"{catalog_fingerprint}:stale={','.join(sorted(stale_live))}"


def request_key(request: msgspec.Struct, fingerprint: str, digest: str | None = None) -> str:
    """Cache key of a decoded request under a catalog (``digest``: its
    :func:`request_digest`, when already known)."""
    return f"{digest or request_digest(request)}:{fingerprint}"


CHECKSUM_TAG = b"s1"
CHECKSUM_BYTES = 16


def seal(body: bytes) -> bytes:
    """A cached answer as stored in a shared store: tag, BLAKE2b digest, body."""
    return CHECKSUM_TAG + hashlib.blake2b(body, digest_size=CHECKSUM_BYTES).digest() + body


def unseal(value: bytes) -> bytes | None:
    """The body of a :func:`seal`-ed value, or ``None`` when it is not one (garbage,
    truncated, another writer's format): such an entry is a miss, never an answer."""
    head = len(CHECKSUM_TAG) + CHECKSUM_BYTES
    if len(value) < head or not value.startswith(CHECKSUM_TAG):
        return None
    body = value[head:]
    if (
        hashlib.blake2b(body, digest_size=CHECKSUM_BYTES).digest()
        != value[len(CHECKSUM_TAG) : head]
    ):
        return None
    return body


class RequestCache:
    """Cache of encoded responses keyed by :func:`request_key`, with single-flight.

    With ``verify`` (a shared store: Redis is outside this process) every entry carries
    a checksum and one that fails it is a miss, counted in
    ``suanli_corrupt_entries_total{kind="cached_answer"}``: whatever lands in Redis is
    never served as an answer. (A checksum stops corruption and stray writes, not a
    writer who knows the format: Redis must stay private to the service.)
    """

    def __init__(self, store: Store, namespace: str, ttl_s: float, *, verify: bool = False) -> None:
        self.store = store
        self.namespace = namespace
        self.ttl_s = max(1, int(ttl_s))
        self.verify = verify
        self._inflight: dict[str, asyncio.Future[bytes]] = {}
        self._hits = CACHE_EVENTS.labels(namespace=namespace, result="hit")
        self._misses = CACHE_EVENTS.labels(namespace=namespace, result="miss")
        self._corrupt = CORRUPT_ENTRIES.labels(kind="cached_answer")

    async def get_or_compute(self, key: str, compute: Callable[[], bytes]) -> tuple[bytes, bool]:
        """Return ``(body, hit)``. ``compute`` runs at most once per key at a time: a
        request arriving while an identical one computes (or stores) waits for it. A hit
        costs one store lookup and nothing else."""
        waiting = self._inflight.get(key)
        if waiting is None:
            cached = await self.store.get(key)
            if cached is not None and self.verify:
                cached = unseal(cached)
                if cached is None:
                    self._corrupt.inc()
            if cached is not None:
                self._hits.inc()
                return cached, True
            waiting = self._inflight.get(key)  # started while we were looking
        if waiting is not None:
            self._hits.inc()
            return await asyncio.shield(waiting), True
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            body = compute()  # synchronous: nothing can interleave until the next await
            future.set_result(body)
            self._misses.inc()
            await self.store.set(key, seal(body) if self.verify else body, expires_in=self.ttl_s)
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        return body, False


class DecodedBodies:
    """Memo of bodies already decoded by a route that reads its own body: the same bytes
    (and the same ``extra``, e.g. a header the decoding depends on) give the same value.

    Platforms and chatbots repeat requests byte for byte; answering those from the cache
    should not pay for strict decoding, defaults and canonical hashing again. The route
    keeps a body only once it repeats (its answer came from the cache), so the memo
    holds bodies that are asked again, not every body decoded successfully: a stream of
    distinct bodies (the same job at other lengths) would fill it with requests nobody
    asks again, two tracked objects per request that outlive the young generation and
    bring the full collection closer (see :mod:`service.runtime.collector`). Bounded in
    entries and in the size of a body worth keeping (oldest entries go first).
    """

    def __init__(
        self, max_entries: int = 4096, max_body_bytes: int = 16_384, max_bytes: int = 8_388_608
    ) -> None:
        self.max_body_bytes = max_body_bytes
        self.max_bytes = max_bytes
        """Bound on the bodies kept as keys (the decoded values are a few times smaller)."""
        self.bytes = 0
        self._data: BoundedDict[tuple[bytes, str | None], Any] = BoundedDict(max_entries)

    def __len__(self) -> int:
        return len(self._data)

    def get(self, body: bytes, extra: str | None) -> Any:
        """The value stored for (``body``, ``extra``), or ``None``."""
        return self._data.get((body, extra)) if len(body) <= self.max_body_bytes else None

    def put(self, body: bytes, extra: str | None, value: Any) -> None:
        if len(body) > self.max_body_bytes or (body, extra) in self._data:
            return
        while self._data and (
            self.bytes + len(body) > self.max_bytes or len(self._data) >= self._data.max_entries
        ):
            (old, _), _ = self._data.popitem(last=False)
            self.bytes -= len(old)
        self._data[(body, extra)] = value
        self.bytes += len(body)
