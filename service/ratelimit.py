"""Per-client rate limit on ``/v1`` routes: one atomic Redis call per request, or memory.

Why not litestar's limiter: it reads the count, then writes it back (two round trips,
not atomic — two workers on one Redis let 909 requests through a 600/min limit), and a
value it cannot decode raised on every request of that client (a 500 on every route).

Here a request costs one ``EVALSHA`` of a script that ``INCR``s a per-minute counter and
sets its expiry when it creates it: atomic across workers and replicas. It runs *before*
routing (in the app's outer layer), so a refused request costs no parsing at all.
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
from redis.exceptions import NoScriptError, ResponseError

from service.bounded import BoundedDict
from service.metrics import CORRUPT_ENTRIES, RATE_LIMITED
from service.observability import send_json

if TYPE_CHECKING:
    from service.cache import Breaker
    from service.settings import ClientKey

log = logging.getLogger(__name__)

WINDOW_S = 60
KEY_PREFIX = "suanli_rate_limit"
CLIENT_KEY_HEADER = b"x-api-key"
FORWARDED_FOR = b"x-forwarded-for"
LIMITED_PREFIX = "/v1/"

# KEYS[1] = counter, ARGV[1] = window seconds. Returns the count after this request.
_SCRIPT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""
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
        self._redis = redis
        self._breaker = breaker
        self.trusted = tuple(ipaddress.ip_network(c, strict=False) for c in trusted_proxies)
        self._clients = {
            hashlib.sha256(key.encode()).digest(): client
            for key, client in (client_keys or {}).items()
        }
        self._local: BoundedDict[str, int] = BoundedDict(65_536)

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
        if self._redis is not None and (breaker is None or breaker.available()):
            try:
                count = await self._incr(key)
            except Exception as exc:
                if isinstance(exc, ResponseError) and "not an integer" in str(exc):
                    # someone wrote garbage under our key
                    CORRUPT_ENTRIES.labels(kind="rate_limit").inc()
                    log.warning("corrupt rate-limit counter removed; request let through")
                    try:
                        await self._redis.delete(key)
                    except Exception as delete_exc:
                        if breaker is not None:
                            breaker.failed(delete_exc)
                    return 0
                if breaker is not None:
                    breaker.failed(exc)
            else:
                if breaker is not None:
                    breaker.succeeded()
                return count
        count = self._local.get(key, 0) + 1
        self._local.put(key, count)
        return count

    async def _incr(self, key: str) -> int:
        assert self._redis is not None
        try:
            result = await self._redis.evalsha(_SCRIPT_SHA, 1, key, WINDOW_S)
        except NoScriptError:  # first call on this Redis (or after SCRIPT FLUSH)
            result = await self._redis.eval(_SCRIPT, 1, key, WINDOW_S)
        return int(result)

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware limiting ``/v1/`` requests (health, metrics, docs and the
        page are never limited: probes and scrapes must not eat a client's budget)."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or not scope["path"].startswith(LIMITED_PREFIX):
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
