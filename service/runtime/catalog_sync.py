"""Catalog changes shared by every worker of every replica, acknowledged back.

An admin reload (or the price-refresh job) bumps a *generation* counter on a board that
every worker process watches every ``SUANLI_REFRESH_INTERVAL_S`` seconds; a worker that
sees it move reloads its catalog and reports, on the same board, the generation and
catalog fingerprint it now serves (its heartbeat). The admin reload waits for those
reports, so it answers "reloaded" only when every live worker applied the change, and
names the ones that did not otherwise.

Boards, by deployment:

* :class:`RedisBoard` — ``SUANLI_REDIS_URL`` set: every worker of every replica
  (``INCR`` for the generation, one hash of worker reports).
* :class:`FileBoard` — no Redis, several workers: a directory the granian master creates
  and its workers inherit (``SUANLI_SYNC_DIR``; files replaced atomically, an
  ``flock`` for the counter).
* :class:`LocalBoard` — one process without Redis: in memory.

Together with cache keys that include the catalog fingerprint, no worker serves an
answer computed on a catalog it no longer holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import msgspec
from redis.asyncio import Redis

from service.runtime.metrics import CATALOG_RELOADS, CORRUPT_ENTRIES

log = logging.getLogger(__name__)

GENERATION_KEY = "generation"
REDIS_PREFIX = "suanli_catalog"
"""Same keys as the ``catalog`` namespace of the app's Redis store (``suanli_catalog:``)."""


class MemberState(msgspec.Struct, frozen=True, kw_only=True):
    """What one worker process last reported: the generation and catalog it serves."""

    member: str
    generation: int | None
    fingerprint: str
    seen_at: float
    """Wall-clock time of the report (``time.time()``): a heartbeat."""


_member_decoder = msgspec.json.Decoder(MemberState)


def member_id() -> str:
    """This worker process, as other processes see it: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Board(Protocol):
    async def generation(self) -> int | None: ...

    async def bump(self) -> int: ...

    async def report(self, state: MemberState) -> None: ...

    async def members(self) -> list[MemberState]: ...

    async def leave(self, member: str) -> None: ...


def _parse_generation(raw: bytes | str | None) -> int | None:
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        CORRUPT_ENTRIES.labels(kind="generation").inc()
        log.warning("ignoring a catalog generation that is not a number")
        return None
    return value if value >= 0 else None


def _decode_member(raw: bytes | str) -> MemberState | None:
    try:
        return _member_decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        CORRUPT_ENTRIES.labels(kind="worker_report").inc()
        return None


class RedisBoard:
    """Generation and worker reports in Redis (``INCR`` is atomic across replicas)."""

    def __init__(self, redis: Redis, prefix: str = REDIS_PREFIX) -> None:
        self._redis = redis
        self._generation_key = f"{prefix}:{GENERATION_KEY}"
        self._members_key = f"{prefix}:members"

    async def generation(self) -> int | None:
        return _parse_generation(await self._redis.get(self._generation_key))

    async def bump(self) -> int:
        try:
            return int(await self._redis.incr(self._generation_key))
        except Exception as exc:
            if "not an integer" not in str(exc):
                raise
            CORRUPT_ENTRIES.labels(kind="generation").inc()
            await self._redis.set(self._generation_key, "1")  # a corrupt counter restarts
            return 1

    async def report(self, state: MemberState) -> None:
        await self._redis.hset(self._members_key, state.member, msgspec.json.encode(state))

    async def members(self) -> list[MemberState]:
        raw: dict[bytes | str, bytes | str] = await self._redis.hgetall(self._members_key)
        return [m for m in map(_decode_member, raw.values()) if m is not None]

    async def leave(self, member: str) -> None:
        await self._redis.hdel(self._members_key, member)


class FileBoard:
    """Generation and worker reports in a directory shared by one server's workers."""

    def __init__(self, directory: str | Path) -> None:
        self._dir = Path(directory)
        self._members = self._dir / "members"
        self._members.mkdir(parents=True, exist_ok=True)
        self._generation = self._dir / GENERATION_KEY

    async def generation(self) -> int | None:
        try:
            return _parse_generation(self._generation.read_text())
        except FileNotFoundError:
            return None

    async def bump(self) -> int:
        return self._bump()

    def _bump(self) -> int:
        """Read-increment-write under an exclusive lock (a few microseconds held)."""
        with open(self._dir / "lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                current = None
                with contextlib.suppress(FileNotFoundError):
                    current = _parse_generation(self._generation.read_text())
                generation = (current or 0) + 1
                _write_atomically(self._generation, str(generation).encode())
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return generation

    async def report(self, state: MemberState) -> None:
        _write_atomically(self._members / _file_name(state.member), msgspec.json.encode(state))

    async def members(self) -> list[MemberState]:
        found = []
        for path in self._members.glob("*.json"):
            with contextlib.suppress(FileNotFoundError):
                state = _decode_member(path.read_bytes())
                if state is not None and _process_alive(state.member):
                    found.append(state)
        return found

    async def leave(self, member: str) -> None:
        (self._members / _file_name(member)).unlink(missing_ok=True)


class LocalBoard:
    """One process, no Redis: the generation and the one report live in memory."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._members: dict[str, MemberState] = {}

    async def generation(self) -> int | None:
        return self._generation

    async def bump(self) -> int:
        self._generation = (self._generation or 0) + 1
        return self._generation

    async def report(self, state: MemberState) -> None:
        self._members[state.member] = state

    async def members(self) -> list[MemberState]:
        return list(self._members.values())

    async def leave(self, member: str) -> None:
        self._members.pop(member, None)


def _file_name(member: str) -> str:
    return member.replace("/", "_").replace(":", "_") + ".json"


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _process_alive(member: str) -> bool:
    """A report from a process of this host that no longer exists is dropped at once
    (a respawned worker's predecessor), without waiting for its heartbeat to age."""
    host, _, pid = member.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ReloadOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """How far one published generation got: who applied it, who did not (and why)."""

    generation: int
    workers: int
    applied: int
    not_applied: tuple[str, ...]


class CatalogSync:
    """Publishes, watches and acknowledges the shared catalog generation."""

    def __init__(
        self,
        board: Board,
        interval_s: float,
        fingerprint: Callable[[], str] = lambda: "",
        member: str | None = None,
    ) -> None:
        self.board = board
        self.interval_s = interval_s
        self.seen: int | None = None
        self.member = member or member_id()
        self._fingerprint = fingerprint

    @property
    def heartbeat_ttl_s(self) -> float:
        """A worker silent for longer than this is presumed gone (not waited for)."""
        return 3 * self.interval_s + 2.0

    async def current(self) -> int | None:
        return await self.board.generation()

    async def publish(self) -> int:
        """Bump the generation so every worker reloads; this process already has."""
        generation = await self.board.bump()
        self.seen = generation
        await self.report()
        return generation

    async def remember_current(self) -> None:
        self.seen = await self.current()
        await self.report()

    async def report(self) -> None:
        state = MemberState(
            member=self.member,
            generation=self.seen,
            fingerprint=self._fingerprint(),
            seen_at=time.time(),
        )
        await self.board.report(state)

    async def check(self, reload: Callable[[], Awaitable[object]]) -> bool:
        """Reload when the shared generation differs from the one this worker holds."""
        generation = await self.current()
        if generation is None or generation == self.seen:
            await self.report()  # heartbeat
            return False
        log.info("shared catalog generation %s (had %s): reloading", generation, self.seen)
        await reload()
        self.seen = generation
        await self.report()
        CATALOG_RELOADS.labels(trigger="shared", outcome="ok").inc()
        return True

    async def wait_applied(self, generation: int, timeout_s: float) -> ReloadOutcome:
        """Wait until every live worker reports ``generation`` with this worker's
        catalog fingerprint, or ``timeout_s`` passed; say who is missing."""
        deadline = time.monotonic() + timeout_s
        fingerprint = self._fingerprint()
        while True:
            now = time.time()
            members = await self.board.members()
            for gone in (m for m in members if now - m.seen_at > 10 * self.heartbeat_ttl_s):
                await self.board.leave(gone.member)  # long dead: keep the board small
            live = [m for m in members if now - m.seen_at <= self.heartbeat_ttl_s]
            missing = []
            for m in sorted(live, key=lambda m: m.member):
                if m.generation is None or m.generation < generation:
                    missing.append(f"{m.member}: still on generation {m.generation}")
                elif m.generation == generation and m.fingerprint != fingerprint:
                    missing.append(f"{m.member}: reloaded to another catalog ({m.fingerprint})")
            if not missing or time.monotonic() >= deadline:
                return ReloadOutcome(
                    generation=generation,
                    workers=len(live),
                    applied=len(live) - len(missing),
                    not_applied=tuple(missing),
                )
            await asyncio.sleep(min(0.1, self.interval_s / 4))

    async def leave(self) -> None:
        with contextlib.suppress(Exception):
            await self.board.leave(self.member)

    async def watch(
        self,
        reload: Callable[[], Awaitable[object]],
        also: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        """Background loop for the app's lifetime; errors never end it. ``also``: an
        extra change check (live prices whose key disappeared) that triggers a reload."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                if not await self.check(reload) and also is not None and await also():
                    log.info("shared live prices changed without a generation bump: reloading")
                    await reload()
                    await self.report()
            except Exception:
                log.exception("shared catalog check failed; will retry")
