"""Bounded load test of a local Suanli server: mixed /v1/recommend and /v1/estimate traffic.

Usage::

    python bench/load.py                      # start a server, 60 s at 64 connections
    python bench/load.py --duration 10 --json-out report.json
    python bench/load.py --url http://127.0.0.1:8000   # an already running server

Why it is built this way:

* **Loopback only, stops by itself.** It refuses any ``--url`` that is not
  127.0.0.1/localhost/::1 and runs for ``--duration`` seconds, so it cannot be pointed at
  someone else's service or left running.
* **Starts its own server** (``python -m service serve`` with rate limiting off) unless
  ``--url`` is given, and stops it at the end.
* **Raw asyncio HTTP/1.1 keep-alive connections**, one per worker: exactly
  ``--concurrency`` connections, and a client cheap enough on a 2-core machine that the
  server, not the client, is what gets measured (httpx costs several times more CPU per
  request).
* **A miss fraction** of recommend requests carries a unique price cap, so the planner
  (not only the response cache) works under load.
* **A hostile fraction** of invalid bodies (malformed JSON, wrong types, absurd numbers,
  deep nesting, invalid UTF-8) rides along with realistic ones; each must get a 4xx.
* **Four phases**, while the mixed traffic runs throughout (each phase's figures are
  reported on their own):

  1. ``steady`` — the mixed traffic alone (the reference throughput).
  2. ``hostile-body`` — 4 extra connections send invalid bodies that are expensive to
     explain (60 KB: ``top_k: 0`` plus a 30,000-element array in an unknown field) and a
     body with duplicate keys; every one must be a 4xx, and valid traffic must keep at
     least :data:`HOSTILE_THROUGHPUT_FLOOR` of its steady throughput.
  3. ``slowloris`` — 1,100 connections that send nothing, 20 that send their request
     head at 2 bytes/s and 20 whose body trickles: ``/healthz`` probes (5 s timeout) must
     all be answered, trickling heads closed and trickling bodies answered 408, never 5xx.
  4. ``worker-kill`` — (own server with 2+ workers) ``kill -9`` of one worker: the
     server must respawn it, and at most the requests in flight on it may fail (at most
     one per client connection).

Exit status: 0 when there was no 5xx, no connection error (beyond the worker-kill
allowance), every hostile request got a 4xx, every valid one a 200 and every phase
passed its check; 1 otherwise; 2 for bad arguments or a server that did not start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
REPO_ROOT = Path(__file__).resolve().parent.parent
REQUEST_TIMEOUT_S = 30.0
HOSTILE_THROUGHPUT_FLOOR = 0.25
"""Share of the steady valid throughput that must survive the hostile-body phase (the
red-team run saw 2.4%: 2,279 -> 55 req/s while invalid bodies were explained)."""
IDLE_SOCKETS = 1100
SLOW_HEADS = 20
SLOW_BODIES = 20
HOSTILE_BODY_CONNECTIONS = 4
SERVER_REQUEST_TIMEOUT_S = 4.0
"""The own server's SUANLI_REQUEST_TIMEOUT_S: a trickling body is answered 408 after it."""
SERVER_HEADER_TIMEOUT_S = 2.0

# --- request pools -------------------------------------------------------------------------


def _valid_bodies() -> list[tuple[str, bytes]]:
    """Realistic requests (preset ids from GET /v1/models; shapes from the API doc)."""
    workloads: list[dict[str, Any]] = [
        {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"},
        {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 2e8},
        {"kind": "finetune", "model": "llama-3-8b", "method": "full", "tokens": 1e9},
        {"kind": "finetune", "model": "qwen2.5-72b", "method": "qlora", "seq_len": 4096},
        {"kind": "pretrain", "model": "llama-2-13b", "tokens": 1e11},
        {"kind": "pretrain", "model": {"params_b": 1.3}, "tokens": 2.6e10},
        {"kind": "inference", "model": "qwen2.5-14b", "concurrency": 16},
        {"kind": "inference", "model": "llama-3-70b", "precision": "int4", "context_len": 8192},
        {"kind": "preprocess", "data_gb": 500, "target_hours": 4},
        {"kind": "finetune", "model": "bert-base", "method": "full", "seq_len": 512, "tokens": 1e7},
    ]
    bodies: list[tuple[str, bytes]] = []
    for workload in workloads:
        bodies.append(("/v1/estimate", _json({"workload": workload})))
        for objective, lang in (("cost", "en"), ("time", "zh"), ("balanced", "en")):
            body = {"workload": workload, "objective": objective, "lang": lang, "top_k": 5}
            bodies.append(("/v1/recommend", _json(body)))
    bodies.append(
        (
            "/v1/estimate",
            _json(
                {
                    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "full"},
                    "placement": {"accelerator": "A100-80GB", "count": 8},
                }
            ),
        )
    )
    bodies.append(
        (
            "/v1/recommend",
            _json(
                {
                    "workload": {"kind": "finetune", "model": "llama-2-7b"},
                    "constraints": {"providers": ["alibaba", "tencent"], "max_nodes": 2},
                }
            ),
        )
    )
    return bodies


def _hostile_bodies() -> list[tuple[str, bytes]]:
    """Invalid requests, each of which must be answered with a 4xx."""
    depth = 5_000
    both: list[bytes] = [
        b"",
        b"{",
        b"[]",
        b"null",
        b'{"workload": ',
        b'{"workload": {"kind": "finetune", "model": "llama-\xff\xfe"}}',
        b'{"workload": {"kind": "pretrain", "model": "llama-2-7b", "tokens": NaN}}',
        b'{"workload": {"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e400}}',
        b'{"workload": ' + b"[" * depth + b"]" * depth + b"}",
        _json({"workload": {"kind": "train", "model": "llama-2-7b"}}),
        _json({"workload": {"kind": "finetune", "model": "no-such-model"}}),
        _json({"workload": {"kind": "finetune", "model": {"params_b": -7}}}),
        _json({"workload": {"kind": "finetune", "model": {"params_b": 1e308}}}),
        _json({"workload": {"kind": "finetune", "model": "llama-2-7b", "seq_len": 0}}),
        _json({"workload": [1, 2, 3]}),
        _json({"workload": {"kind": "preprocess", "data_gb": "lots"}}),
    ]
    recommend_only: list[bytes] = [
        _json({"workload": {"kind": "finetune", "model": "llama-2-7b"}, "top_k": 10**6}),
        _json({"workload": {"kind": "finetune", "model": "llama-2-7b"}, "objective": "vibes"}),
    ]
    bodies = [(path, body) for body in both for path in ("/v1/estimate", "/v1/recommend")]
    return bodies + [("/v1/recommend", body) for body in recommend_only]


def _expensive_bodies() -> list[tuple[str, bytes]]:
    """Invalid bodies that cost a naive validator a walk over ignored data (issue 16,
    item 3), and duplicate keys (last-one-wins would silently ignore the first)."""
    junk = {
        "workload": {"kind": "finetune", "model": "llama-2-7b"},
        "top_k": 0,
        "junk": [1] * 30_000,
    }
    duplicate = (
        b'{"workload": {"kind": "finetune", "model": "llama-2-7b"}, '
        b'"workload": {"kind": "inference", "model": "qwen2.5-7b"}}'
    )
    return [
        ("/v1/recommend", _json(junk)),
        ("/v1/estimate", _json({**junk, "top_k": None})),
        ("/v1/recommend", duplicate),
        ("/v1/estimate", duplicate),
    ]


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# --- a minimal HTTP/1.1 keep-alive client ---------------------------------------------


class ConnectionFailed(Exception):
    """The connection broke, closed early or timed out (counted, then reconnected)."""


class StaleConnection(ConnectionFailed):
    """A reused keep-alive connection closed before any byte of the answer: the server
    dropped it as idle (header timeout) or its worker died. HTTP clients retry such a
    request once on a fresh connection, and so does this one (the retry is counted)."""


class Connection:
    """One keep-alive connection; requests are sent one at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.answered = 0
        """Responses read on the current connection (0: a fresh one)."""

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.answered = 0

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Accept-Language: en\r\n\r\n"
        ).encode()
        try:
            if self.writer is None:
                # inside the try: a refused or reset connect (a worker just killed, the
                # listen queue full) is a counted connection error, not a crashed run
                await self.open()
            assert self.reader is not None
            assert self.writer is not None
            self.writer.write(head + body)
            await self.writer.drain()
            response = await self._read_response()
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            reused = self.answered > 0
            await self.close()
            nothing_read = isinstance(exc, OSError) or (
                isinstance(exc, asyncio.IncompleteReadError) and not exc.partial
            )
            kind = StaleConnection if reused and nothing_read else ConnectionFailed
            raise kind(f"{type(exc).__name__}: {exc}") from exc
        self.answered += 1
        return response

    async def _read_response(self) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        raw_head = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked()
        else:
            body = await self.reader.read()
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, headers, body

    async def _read_chunked(self) -> bytes:
        assert self.reader is not None
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


# --- the run -------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    connection_errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    stale_retries: int = 0
    hostile: int = 0
    hostile_not_4xx: int = 0
    valid: int = 0
    valid_not_200: int = 0
    cache_hits: int = 0
    recommend_valid: int = 0
    unexpected_samples: list[str] = field(default_factory=list)


@dataclass
class PhaseReport:
    """One phase's own figures and check (``checks``: name -> passed)."""

    name: str
    duration_s: float
    requests: int
    valid_per_s: float
    server_errors: int
    connection_errors: int
    stale_retries: int
    valid_not_200: int
    hostile_requests: int
    hostile_not_4xx: int
    details: dict[str, Any]
    checks: dict[str, bool]

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


@dataclass
class Report:
    url: str
    duration_s: float
    concurrency: int
    hostile_fraction: float
    miss_fraction: float
    requests: int
    requests_per_s: float
    latency_ms: dict[str, float]
    status_classes: dict[str, int]
    statuses: dict[str, int]
    server_errors: int
    connection_errors: int
    hostile_requests: int
    hostile_not_4xx: int
    valid_requests: int
    valid_not_200: int
    recommend_cache_hit_ratio: float
    samples: list[str]
    phases: list[PhaseReport] = field(default_factory=list)
    worker_kill_allowance: int = 0
    """Connection errors the worker-kill phase may cause (one per client connection)."""

    @property
    def ok(self) -> bool:
        return (
            self.server_errors == 0
            and self.connection_errors <= self.worker_kill_allowance
            and self.hostile_not_4xx == 0
            and self.valid_not_200 == 0
            and self.requests > 0
            and all(phase.ok for phase in self.phases)
        )


class Phases:
    """Which phase the run is in: every request is tallied under the current one."""

    def __init__(self, names: list[str]) -> None:
        self.tallies = {name: Tally() for name in names}
        self.current = names[0]
        self.started: dict[str, float] = {names[0]: time.monotonic()}
        self.ended: dict[str, float] = {}

    @property
    def tally(self) -> Tally:
        return self.tallies[self.current]

    def enter(self, name: str) -> None:
        now = time.monotonic()
        self.ended[self.current] = now
        self.current = name
        self.started[name] = now

    def finish(self) -> None:
        self.ended[self.current] = time.monotonic()

    def seconds(self, name: str) -> float:
        return self.ended.get(name, time.monotonic()) - self.started.get(name, time.monotonic())


async def _send(
    conn: Connection,
    path: str,
    body: bytes,
    is_hostile: bool,
    phases: Phases,
    phase: str | None = None,
) -> None:
    started = time.perf_counter()
    try:
        try:
            status, headers, payload = await asyncio.wait_for(
                conn.post(path, body), REQUEST_TIMEOUT_S
            )
        except StaleConnection:
            phases.tallies[phase or phases.current].stale_retries += 1
            started = time.perf_counter()
            status, headers, payload = await asyncio.wait_for(
                conn.post(path, body), REQUEST_TIMEOUT_S
            )
    except (ConnectionFailed, TimeoutError) as exc:
        tally = phases.tallies[phase or phases.current]
        await conn.close()
        tally.connection_errors += 1
        if len(tally.error_samples) < 5:
            tally.error_samples.append(f"{path}: {exc!r}")
        await asyncio.sleep(0.05)
        return
    tally = phases.tallies[phase or phases.current]  # the phase the answer arrived in
    tally.latencies_ms.append((time.perf_counter() - started) * 1000)
    tally.statuses[status] += 1
    if headers.get("x-suanli-cache") == "hit":
        tally.cache_hits += 1
    if is_hostile:
        tally.hostile += 1
        if not 400 <= status < 500:
            tally.hostile_not_4xx += 1
            _sample(tally, f"hostile {path} {body[:80]!r} -> {status}")
        return
    tally.valid += 1
    tally.recommend_valid += path == "/v1/recommend"
    if status != 200:
        tally.valid_not_200 += 1
        _sample(tally, f"valid {path} {body[:80]!r} -> {status} {payload[:160]!r}")


async def _worker(
    host: str,
    port: int,
    deadline: float,
    rng: random.Random,
    valid: list[tuple[str, bytes]],
    hostile: list[tuple[str, bytes]],
    hostile_fraction: float,
    miss_fraction: float,
    phases: Phases,
) -> None:
    conn = Connection(host, port)
    try:
        while time.monotonic() < deadline:
            is_hostile = rng.random() < hostile_fraction
            path, body = rng.choice(hostile if is_hostile else valid)
            if not is_hostile and path == "/v1/recommend" and rng.random() < miss_fraction:
                body = _uncached(body, rng)
            await _send(conn, path, body, is_hostile, phases)
    finally:
        await conn.close()


async def _hostile_body_attack(host: str, port: int, until: float, phases: Phases) -> None:
    """``HOSTILE_BODY_CONNECTIONS`` connections sending the expensive invalid bodies."""
    bodies = _expensive_bodies()

    async def one(i: int) -> None:
        conn = Connection(host, port)
        try:
            n = i
            while time.monotonic() < until:
                path, body = bodies[n % len(bodies)]
                n += 1
                await _send(conn, path, body, True, phases, "hostile-body")
        finally:
            await conn.close()

    await asyncio.gather(*(one(i) for i in range(HOSTILE_BODY_CONNECTIONS)))


async def _slowloris_attack(host: str, port: int, until: float) -> dict[str, Any]:
    """Idle sockets, trickling heads and trickling bodies, while probes check that the
    service still answers. Returns the phase's details."""
    idle: list[asyncio.StreamWriter] = []
    for _ in range(IDLE_SOCKETS):
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError:
            break
        idle.append(writer)
    probes = {"sent": 0, "answered": 0}

    async def probe_loop() -> None:
        while time.monotonic() < until:
            probes["sent"] += 1
            probes["answered"] += await _probe(host, port, 5.0)
            await asyncio.sleep(0.25)

    async def slow_head() -> bool:
        """True when the server closed a head sent at 2 bytes/s before it completed."""
        reader, writer = await asyncio.open_connection(host, port)
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        try:
            for i in range(len(head)):
                writer.write(head[i : i + 1])
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(1), 0.5) == b"":
                        return True
                except TimeoutError:
                    continue
            return False
        except OSError:
            return True
        finally:
            writer.close()

    async def slow_body() -> int:
        """The status a trickling body got (0: none)."""
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"POST /v1/estimate HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n{".encode()
        )
        try:
            await writer.drain()
            while True:
                try:
                    line = await asyncio.wait_for(reader.readline(), 1.0)
                except TimeoutError:
                    writer.write(b" ")
                    await writer.drain()
                    continue
                return int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0
        except (OSError, ValueError, IndexError):
            return 0
        finally:
            writer.close()

    grace = max(0.0, until - time.monotonic()) + 15.0
    results = await asyncio.gather(
        probe_loop(),
        asyncio.wait_for(asyncio.gather(*(slow_head() for _ in range(SLOW_HEADS))), grace),
        asyncio.wait_for(asyncio.gather(*(slow_body() for _ in range(SLOW_BODIES))), grace),
        return_exceptions=True,
    )
    for writer in idle:
        writer.close()
    heads = results[1] if isinstance(results[1], list) else []
    bodies = results[2] if isinstance(results[2], list) else []
    return {
        "idle_sockets": len(idle),
        "probes_sent": probes["sent"],
        "probes_answered": probes["answered"],
        "slow_heads": SLOW_HEADS,
        "slow_heads_closed": sum(bool(h) for h in heads),
        "slow_bodies": SLOW_BODIES,
        "slow_body_statuses": dict(Counter(str(s) for s in bodies)),
    }


async def _probe(host: str, port: int, timeout_s: float) -> bool:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout_s)
        return line.startswith(b"HTTP/1.1 200")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()


async def _worker_kill(server: Server, until: float) -> dict[str, Any]:
    """``kill -9`` one worker now; wait for its respawn (until the phase ends)."""
    before = server.worker_pids()
    if len(before) < 2:
        return {"skipped": f"{len(before)} worker(s): needs 2 or more"}
    victim = before[0]
    try:
        os.kill(victim, signal.SIGKILL)
    except ProcessLookupError:
        return {"skipped": f"worker {victim} exited before it could be killed"}
    respawned_after = None
    started = time.monotonic()
    while time.monotonic() < until:
        pids = server.worker_pids()
        if respawned_after is None and len(pids) == len(before) and victim not in pids:
            respawned_after = round(time.monotonic() - started, 2)
        await asyncio.sleep(0.1)
    return {
        "killed_pid": victim,
        "workers": len(before),
        "respawned_after_s": respawned_after,
        "server_alive": server.process.poll() is None,
    }


def phase_plan(duration_s: float, kill: bool) -> list[tuple[str, float]]:
    """Phase names and lengths: each attack gets a fifth of the run (at least what it
    needs to show its effect), the steady phase the rest (at least 2 s)."""
    special = [("hostile-body", 2.0), ("slowloris", SERVER_REQUEST_TIMEOUT_S + 2.5)]
    if kill:
        special.append(("worker-kill", 5.0))
    lengths = [(name, max(minimum, duration_s / 5)) for name, minimum in special]
    steady = max(2.0, duration_s - sum(length for _, length in lengths))
    return [("steady", steady), *lengths]


async def run_load(
    url: str,
    duration_s: float,
    concurrency: int,
    hostile_fraction: float,
    seed: int,
    miss_fraction: float = 0.05,
    server: Server | None = None,
    attacks: bool = True,
) -> Report:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    valid, hostile = _valid_bodies(), _hostile_bodies()
    kill = attacks and server is not None and server.workers >= 2
    plan = phase_plan(duration_s, kill) if attacks else [("steady", duration_s)]
    phases = Phases([name for name, _ in plan])
    started = time.monotonic()
    deadline = started + sum(length for _, length in plan)
    details: dict[str, dict[str, Any]] = {}

    async def conduct() -> None:
        at = started
        for index, (name, length) in enumerate(plan):
            if index:
                phases.enter(name)
            at += length
            if name == "hostile-body":
                await _hostile_body_attack(host, port, at, phases)
            elif name == "slowloris":
                details[name] = await _slowloris_attack(host, port, at)
            elif name == "worker-kill" and server is not None:
                details[name] = await _worker_kill(server, at)
            await asyncio.sleep(max(0.0, at - time.monotonic()))

    await asyncio.gather(
        conduct(),
        *(
            _worker(
                host,
                port,
                deadline,
                random.Random(seed * 1_000 + i),
                valid,
                hostile,
                hostile_fraction,
                miss_fraction,
                phases,
            )
            for i in range(concurrency)
        ),
    )
    phases.finish()
    elapsed = time.monotonic() - started
    phase_reports = [
        _phase_report(name, phases, details.get(name, {}), concurrency) for name, _ in plan
    ]
    _check_hostile_throughput(phase_reports)
    return _report(
        url, elapsed, concurrency, hostile_fraction, miss_fraction, phases, phase_reports
    )


def _phase_report(
    name: str, phases: Phases, details: dict[str, Any], concurrency: int
) -> PhaseReport:
    tally = phases.tallies[name]
    seconds = max(phases.seconds(name), 1e-9)
    server_errors = sum(n for status, n in tally.statuses.items() if status >= 500)
    checks: dict[str, bool] = {}
    if name == "slowloris":
        checks["every probe answered within 5 s"] = details.get("probes_sent", 0) > 0 and (
            details.get("probes_answered") == details.get("probes_sent")
        )
        checks["trickling heads closed"] = details.get("slow_heads_closed") == SLOW_HEADS
        checks["trickling bodies answered 408"] = details.get("slow_body_statuses") == {
            "408": SLOW_BODIES
        }
    if name == "hostile-body":
        checks["every invalid body answered 4xx"] = tally.hostile > 0 and not tally.hostile_not_4xx
    if name == "worker-kill" and "skipped" not in details:
        checks["worker respawned"] = details.get("respawned_after_s") is not None
        checks["server still running"] = bool(details.get("server_alive"))
        checks[f"at most {concurrency} requests failed or retried (one per connection)"] = (
            tally.connection_errors + tally.stale_retries <= concurrency
        )
    elif tally.connection_errors:
        checks["no connection error"] = False
    return PhaseReport(
        name=name,
        duration_s=round(seconds, 2),
        requests=len(tally.latencies_ms),
        valid_per_s=round(tally.valid / seconds, 1),
        server_errors=server_errors,
        connection_errors=tally.connection_errors,
        stale_retries=tally.stale_retries,
        valid_not_200=tally.valid_not_200,
        hostile_requests=tally.hostile,
        hostile_not_4xx=tally.hostile_not_4xx,
        details=details,
        checks=checks,
    )


def _check_hostile_throughput(reports: list[PhaseReport]) -> None:
    by_name = {r.name: r for r in reports}
    steady, hostile = by_name.get("steady"), by_name.get("hostile-body")
    if steady is None or hostile is None or not steady.valid_per_s:
        return
    ratio = round(hostile.valid_per_s / steady.valid_per_s, 3)
    hostile.details["valid_throughput_vs_steady"] = ratio
    hostile.checks[f"valid traffic keeps >= {HOSTILE_THROUGHPUT_FLOOR:.0%} of steady"] = (
        ratio >= HOSTILE_THROUGHPUT_FLOOR
    )


def _report(
    url: str,
    elapsed: float,
    concurrency: int,
    hostile_fraction: float,
    miss_fraction: float,
    phases: Phases,
    phase_reports: list[PhaseReport],
) -> Report:
    tally = Tally()
    for part in phases.tallies.values():
        tally.latencies_ms += part.latencies_ms
        tally.statuses.update(part.statuses)
        tally.connection_errors += part.connection_errors
        tally.error_samples += part.error_samples
        tally.hostile += part.hostile
        tally.hostile_not_4xx += part.hostile_not_4xx
        tally.valid += part.valid
        tally.valid_not_200 += part.valid_not_200
        tally.cache_hits += part.cache_hits
        tally.recommend_valid += part.recommend_valid
        tally.unexpected_samples += part.unexpected_samples
    latencies = sorted(tally.latencies_ms)
    classes = Counter(f"{status // 100}xx" for status in tally.statuses.elements())
    kill_errors = sum(p.connection_errors for p in phase_reports if p.name == "worker-kill")
    return Report(
        url=url,
        duration_s=round(elapsed, 2),
        concurrency=concurrency,
        hostile_fraction=hostile_fraction,
        miss_fraction=miss_fraction,
        requests=len(latencies),
        requests_per_s=round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        latency_ms={
            "p50": _percentile(latencies, 0.50),
            "p90": _percentile(latencies, 0.90),
            "p99": _percentile(latencies, 0.99),
            "max": round(latencies[-1], 2) if latencies else math.nan,
        },
        status_classes=dict(sorted(classes.items())),
        statuses={str(k): v for k, v in sorted(tally.statuses.items())},
        server_errors=classes.get("5xx", 0),
        connection_errors=tally.connection_errors,
        hostile_requests=tally.hostile,
        hostile_not_4xx=tally.hostile_not_4xx,
        valid_requests=tally.valid,
        valid_not_200=tally.valid_not_200,
        recommend_cache_hit_ratio=(
            round(tally.cache_hits / tally.recommend_valid, 3) if tally.recommend_valid else 0.0
        ),
        samples=(tally.error_samples[:5] + tally.unexpected_samples[:10]),
        phases=phase_reports,
        worker_kill_allowance=min(kill_errors, concurrency),
    )


def _uncached(body: bytes, rng: random.Random) -> bytes:
    """The same request with a price cap nobody asked before: a guaranteed cache miss."""
    request = json.loads(body)
    cap = round(rng.uniform(20.0, 2_000.0), 4)
    request["constraints"] = {**request.get("constraints", {}), "max_price_per_hour": cap}
    return _json(request)


def _sample(tally: Tally, text: str) -> None:
    if len(tally.unexpected_samples) < 10:
        tally.unexpected_samples.append(text)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return round(sorted_values[index], 2)


# --- the server under test -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """``python -m service serve`` on a free loopback port, stopped on exit."""

    def __init__(self, workers: int, log_level: str) -> None:
        self.port = _free_port()
        self.workers = workers
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="suanli-load-", suffix=".log", delete=False
        )
        env = {
            **os.environ,
            "SUANLI_HOST": "127.0.0.1",
            "SUANLI_PORT": str(self.port),
            "SUANLI_WORKERS": str(workers),
            "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
            "SUANLI_LOG_LEVEL": log_level,
            "SUANLI_REQUEST_TIMEOUT_S": str(SERVER_REQUEST_TIMEOUT_S),
            "SUANLI_HEADER_TIMEOUT_S": str(SERVER_HEADER_TIMEOUT_S),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("SUANLI_API_KEY", None)
        cmd = [sys.executable, "-m", "service", "serve"]
        self.process = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )

    def worker_pids(self) -> list[int]:
        """granian's worker processes: the children of the server process (Linux)."""
        pid = self.process.pid
        try:
            return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: {self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if sock.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server not ready after {timeout_s:g}s: {self.tail()}")

    def tail(self, lines: int = 20) -> str:
        if not self.log.closed:
            self.log.flush()
        text = Path(self.log.name).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.close()
        return self.process.returncode

    def cleanup(self) -> None:
        Path(self.log.name).unlink(missing_ok=True)


# --- command line ------------------------------------------------------------------------


def loopback_url(value: str) -> str:
    """argparse type: an http URL on the loopback interface, nothing else."""
    parts = urllib.parse.urlsplit(value)
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS or not parts.port:
        raise argparse.ArgumentTypeError(
            f"{value!r}: only http://127.0.0.1:PORT, http://localhost:PORT or "
            "http://[::1]:PORT are allowed (this tool never loads a remote host)"
        )
    return value.rstrip("/")


def _bounded(low: float, high: float, kind: type[float] | type[int] = float) -> Any:
    def parse(value: str) -> float:
        number = kind(value)
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{value} is not within [{low:g}, {high:g}]")
        return number

    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", type=loopback_url, help="an already running local server")
    parser.add_argument("--duration", type=_bounded(1, 600), default=60.0, help="seconds")
    parser.add_argument("--concurrency", type=_bounded(1, 512, int), default=64)
    parser.add_argument("--hostile-fraction", type=_bounded(0, 1), default=0.1)
    parser.add_argument(
        "--miss-fraction",
        type=_bounded(0, 1),
        default=0.05,
        help="share of recommend requests made unique (cache misses)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-workers", type=_bounded(1, 16, int), default=2)
    parser.add_argument(
        "--no-attacks",
        action="store_true",
        help="only the mixed traffic (no hostile-body, slowloris or worker-kill phase)",
    )
    parser.add_argument("--server-log-level", default="INFO", choices=["INFO", "WARNING"])
    parser.add_argument("--startup-timeout", type=_bounded(1, 300), default=60.0)
    parser.add_argument("--json-out", type=Path, help="also write the report as JSON here")
    return parser.parse_args(argv)


def format_report(report: Report) -> str:
    lat = report.latency_ms
    lines = [
        f"target            {report.url}",
        f"duration          {report.duration_s} s at {report.concurrency} connections "
        f"(hostile fraction {report.hostile_fraction:g}, miss fraction "
        f"{report.miss_fraction:g})",
        f"requests          {report.requests}  ({report.requests_per_s} req/s)",
        f"latency ms        p50 {lat['p50']}  p90 {lat['p90']}  p99 {lat['p99']}  max {lat['max']}",
        f"status classes    {report.status_classes}",
        f"5xx               {report.server_errors}",
        f"connection errors {report.connection_errors}",
        f"hostile           {report.hostile_requests} sent, {report.hostile_not_4xx} not 4xx",
        f"valid             {report.valid_requests} sent, {report.valid_not_200} not 200 "
        f"(recommend cache hit ratio {report.recommend_cache_hit_ratio})",
    ]
    for phase in report.phases:
        lines.append(
            f"phase {phase.name:<12} {phase.duration_s} s, {phase.valid_per_s} valid req/s, "
            f"5xx {phase.server_errors}, connection errors {phase.connection_errors} "
            f"(+{phase.stale_retries} retried), "
            f"valid not 200 {phase.valid_not_200}, hostile not 4xx {phase.hostile_not_4xx}"
        )
        if phase.details:
            lines.append(f"  {json.dumps(phase.details, sort_keys=True)}")
        lines.extend(
            f"  {'ok  ' if passed else 'FAIL'} {check}" for check, passed in phase.checks.items()
        )
    lines.append(f"verdict           {'PASS' if report.ok else 'FAIL'}")
    lines.extend(f"  sample: {sample}" for sample in report.samples)
    return "\n".join(lines)


def _raise_open_files_limit() -> None:
    """The slowloris phase holds 1,100+ sockets: lift the soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = IDLE_SOCKETS + 1024
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _raise_open_files_limit()
    server = None
    url = args.url
    if url is None:
        server = Server(args.server_workers, args.server_log_level)
        try:
            server.wait_ready(args.startup_timeout)
        except RuntimeError as exc:
            server.stop()
            print(f"load: {exc}", file=sys.stderr)
            server.cleanup()
            return 2
        url = server.url
    try:
        report = asyncio.run(
            run_load(
                url,
                args.duration,
                args.concurrency,
                args.hostile_fraction,
                args.seed,
                args.miss_fraction,
                server=server,
                attacks=not args.no_attacks,
            )
        )
    except Exception:
        # a fault of this tool, not a verdict on the server: say so (exit 2, never 1,
        # which means "the server failed a check") with the traceback and server log
        traceback.print_exc()
        if server is not None:
            server.stop()
            print(f"server log tail:\n{server.tail()}", file=sys.stderr)
            server.cleanup()
        return 2
    finally:
        if server is not None:
            server.stop()
    print(format_report(report))
    if args.json_out:
        payload = {**asdict(report), "ok": report.ok}
        for phase, data in zip(report.phases, payload["phases"], strict=True):
            data["ok"] = phase.ok
        args.json_out.write_text(json.dumps(payload, indent=2))
    if server is not None:
        if not report.ok:
            print(f"server log tail:\n{server.tail()}", file=sys.stderr)
        server.cleanup()
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
