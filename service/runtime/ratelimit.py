"""Per-client rate limit on ``/v1`` routes: one atomic Redis call per request, or memory.

Why not litestar's limiter: it reads the count, then writes it back (two round trips,
not atomic — two workers on one Redis let 909 requests through a 600/min limit), and a
value it cannot decode raised on every request of that client (a 500 on every route).

Here every request increments a per-minute counter in Redis with a script that also sets
its expiry when it creates it: atomic across workers and replicas, and exact. It stays
cheap under load because a worker sends the increments of all requests that arrived
while its previous call was in flight as *one* script call (:class:`_Batcher`): one
round trip and one command for many requests, each still told its own exact count. It
runs *before* routing (in the app's outer layer), so a refused request costs no parsing.
Failures fail open: Redis down or slow (the shared circuit breaker is open) → a
per-process count in memory; a counter that is not a number → the request passes, the
entry is removed and counted in ``suanli_corrupt_entries_total{kind="rate_limit"}``.

Who is "a client":

* a known ``X-API-Key`` (``SUANLI_CLIENT_KEYS``): that client, on its own limit; an
  unknown key is a 401, never silently treated as anonymous;
* otherwise the TCP peer's address — or, when the peer is one of
  ``SUANLI_TRUSTED_PROXIES``, the rightmost ``X-Forwarded-For`` address that is not a
  trusted proxy itself (what the proxy saw connecting to it). Without trusted proxies
  the header is ignored: any client can write it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import logging
import math
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from service.runtime.bounded import BoundedDict
from service.runtime.metrics import CORRUPT_ENTRIES, RATE_LIMITED
from service.runtime.observability import send_json

if TYPE_CHECKING:
    from service.runtime.cache import Breaker
    from service.runtime.settings import ClientKey

log = logging.getLogger(__name__)

WINDOW_S = 60
KEY_PREFIX = "suanli_rate_limit"
CLIENT_KEY_HEADER = b"x-api-key"
FORWARDED_FOR = b"x-forwarded-for"
LIMITED_PREFIXES = ("/v1/", "/mcp")
"""The API and the MCP tools (which run the same planner): limited per client."""

# KEYS = counters, ARGV[1] = window seconds, ARGV[1 + i] = requests to add to KEYS[i].
# Returns the count of each counter after the additions; -1 for a counter whose value is
# not a number (pcall: one corrupt key must not fail the others).
_SCRIPT = """
local out = {}
for i, key in ipairs(KEYS) do
  local add = tonumber(ARGV[i + 1])
  local n = redis.pcall('INCRBY', key, add)
  if type(n) == 'table' then
    out[i] = -1
  else
    if n == add then redis.call('EXPIRE', key, ARGV[1]) end
    out[i] = n
  end
end
return out
"""
CORRUPT = -1
_SCRIPT_SHA = hashlib.sha1(_SCRIPT.encode()).hexdigest()  # noqa: S324 - Redis's script id

_json = msgspec.json.Encoder()

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def counter_key(identity: str, now: float) -> str:
    """The Redis key counting ``identity``'s requests in the current minute."""
    return f"{KEY_PREFIX}:{identity}:{int(now // WINDOW_S)}"


def client_address(
    peer: str | None, forwarded_for: Iterable[str], trusted: tuple[Network, ...]
) -> str:
    """The client's address: the peer, or what a trusted proxy says it saw."""
    address = peer or "unknown"
    if not trusted or not _in(address, trusted):
        return address
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return address  # a malformed hop: believe nothing further left of it
        if not _in(hop, trusted):
            return hop
        address = hop
    return address


def _in(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


class Decision(msgspec.Struct, frozen=True):
    allowed: bool
    limit: int
    remaining: int
    reset_s: int


class RateLimiter:
    """Counts requests per client and minute; see the module docstring."""

    def __init__(
        self,
        limit_per_minute: int,
        *,
        redis: Redis | None = None,
        breaker: Breaker | None = None,
        trusted_proxies: Iterable[str] = (),
        client_keys: Mapping[str, ClientKey] | None = None,
    ) -> None:
        self.limit = limit_per_minute
        self._breaker = breaker
        self.trusted = tuple(ipaddress.ip_network(c, strict=False) for c in trusted_proxies)
        self._clients = {
            hashlib.sha256(key.encode()).digest(): client
            for key, client in (client_keys or {}).items()
        }
        self._local: BoundedDict[str, int] = BoundedDict(65_536)
        self._batcher = _Batcher(redis) if redis is not None else None

    @property
    def active(self) -> bool:
        return bool(self.limit) or bool(self._clients)

    async def decide(self, identity: str, limit: int, now: float) -> Decision:
        key = counter_key(identity, now)
        count = await self._count(key)
        reset_s = max(1, math.ceil(WINDOW_S - now % WINDOW_S))
        return Decision(count <= limit, limit, max(0, limit - count), reset_s)

    async def _count(self, key: str) -> int:
        breaker = self._breaker
        if self._batcher is not None and (breaker is None or breaker.available()):
            try:
                count = await self._batcher.incr(key)
            except Exception as exc:
                if breaker is not None:
                    breaker.failed(exc)
            else:
                if breaker is not None:
                    breaker.succeeded()
                if count != CORRUPT:
                    return count
                # Someone wrote garbage under our key: let the request through, start over.
                CORRUPT_ENTRIES.labels(kind="rate_limit").inc()
                log.warning("corrupt rate-limit counter removed; request let through")
                with contextlib.suppress(Exception):
                    await self._batcher.redis.delete(key)
                return 0
        count = self._local.get(key, 0) + 1
        self._local.put(key, count)
        return count

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware limiting ``/v1/`` and ``/mcp`` requests (health, metrics, docs and the
        page are never limited: probes and scrapes must not eat a client's budget)."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or not scope["path"].startswith(LIMITED_PREFIXES):
                await app(scope, receive, send)
                return
            identity, limit, kind = self._identify(scope)
            if identity is None:
                await _refuse_key(send)
                return
            if not limit:
                await app(scope, receive, send)
                return
            decision = await self.decide(identity, limit, time.time())
            headers = [
                (b"ratelimit-limit", str(decision.limit).encode()),
                (b"ratelimit-remaining", str(decision.remaining).encode()),
                (b"ratelimit-reset", str(decision.reset_s).encode()),
            ]
            if not decision.allowed:
                RATE_LIMITED.labels(identity=kind).inc()
                await _refuse_rate(send, decision, headers)
                return

            async def send_with_headers(message: dict[str, object]) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", ()), *headers]  # type: ignore[misc]
                await send(message)  # type: ignore[arg-type]

            await app(scope, receive, send_with_headers)  # type: ignore[arg-type]

        return limited

    def _identify(self, scope: Scope) -> tuple[str | None, int, str]:
        """``(identity, limit, kind)``; identity ``None`` for an unknown client key."""
        forwarded: list[str] = []
        for name, value in scope.get("headers", ()):
            if name == CLIENT_KEY_HEADER:
                client = self._clients.get(hashlib.sha256(bytes(value).strip()).digest())
                if client is None:
                    return None, 0, "client_key"
                return f"key:{client.name}", client.limit_per_minute or self.limit, "client_key"
            if name == FORWARDED_FOR:
                forwarded.append(bytes(value).decode("latin-1"))
        peer = scope.get("client")
        address = client_address(peer[0] if peer else None, forwarded, self.trusted)
        return f"ip:{address}", self.limit, "address"


class _Batcher:
    """Coalesces counter increments: at most one script call in flight per worker; the
    increments that arrive meanwhile go out together in the next one. Each request still
    gets its own exact count (the ``k``-th of ``m`` requests on a key that reached ``n``
    is told ``n - m + k``)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._pending: dict[str, list[asyncio.Future[int]]] = {}
        self._busy = False

    async def incr(self, key: str) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(key, []).append(future)
        if not self._busy:
            self._busy = True
            asyncio.get_running_loop().call_soon(self._send_next)  # gather this tick's
        return await future

    def _send_next(self) -> None:
        batch, self._pending = self._pending, {}
        if not batch:
            self._busy = False
            return
        task = asyncio.ensure_future(self._send(batch))
        task.add_done_callback(lambda _: self._send_next())

    async def _send(self, batch: dict[str, list[asyncio.Future[int]]]) -> None:
        keys = list(batch)
        args = [WINDOW_S, *(len(batch[key]) for key in keys)]
        try:
            try:
                totals = await self.redis.evalsha(_SCRIPT_SHA, len(keys), *keys, *args)
            except NoScriptError:  # first call on this Redis (or after SCRIPT FLUSH)
                totals = await self.redis.eval(_SCRIPT, len(keys), *keys, *args)
        except BaseException as exc:
            for futures in batch.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc if isinstance(exc, Exception) else OSError())
            if not isinstance(exc, Exception):
                raise
            return
        for key, total in zip(keys, totals, strict=True):
            futures = batch[key]
            for k, future in enumerate(futures, start=1):
                if not future.done():
                    value = int(total)
                    future.set_result(CORRUPT if value == CORRUPT else value - len(futures) + k)


async def _refuse_key(send: Send) -> None:
    body = _json.encode(
        {
            "status_code": 401,
            "detail": "Unknown client key in X-API-Key: use a key the operator issued, or "
            "send no key to be limited by address",
        }
    )
    await send_json(send, 401, body)


async def _refuse_rate(send: Send, decision: Decision, headers: list[tuple[bytes, bytes]]) -> None:
    body = _json.encode(
        {
            "status_code": 429,
            "detail": f"Too many requests: this client may send {decision.limit} per minute; "
            f"retry in {decision.reset_s} s",
        }
    )
    await send_json(send, 429, body, [*headers, (b"retry-after", str(decision.reset_s).encode())])
