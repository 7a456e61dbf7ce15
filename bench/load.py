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

Exit status: 0 when there was no 5xx, no connection error, every hostile request got a
4xx and every valid one a 200; 1 otherwise; 2 for bad arguments or a server that did
not start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
REPO_ROOT = Path(__file__).resolve().parent.parent
REQUEST_TIMEOUT_S = 30.0

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


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# --- a minimal HTTP/1.1 keep-alive client ---------------------------------------------


class ConnectionFailed(Exception):
    """The connection broke, closed early or timed out (counted, then reconnected)."""


class Connection:
    """One keep-alive connection; requests are sent one at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None
        assert self.writer is not None
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Accept-Language: en\r\n\r\n"
        ).encode()
        try:
            self.writer.write(head + body)
            await self.writer.drain()
            return await self._read_response()
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.close()
            raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from exc

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
    hostile: int = 0
    hostile_not_4xx: int = 0
    valid: int = 0
    valid_not_200: int = 0
    cache_hits: int = 0
    recommend_valid: int = 0
    unexpected_samples: list[str] = field(default_factory=list)


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

    @property
    def ok(self) -> bool:
        return (
            self.server_errors == 0
            and self.connection_errors == 0
            and self.hostile_not_4xx == 0
            and self.valid_not_200 == 0
            and self.requests > 0
        )


async def _worker(
    host: str,
    port: int,
    deadline: float,
    rng: random.Random,
    valid: list[tuple[str, bytes]],
    hostile: list[tuple[str, bytes]],
    hostile_fraction: float,
    miss_fraction: float,
    tally: Tally,
) -> None:
    conn = Connection(host, port)
    try:
        while time.monotonic() < deadline:
            is_hostile = rng.random() < hostile_fraction
            path, body = rng.choice(hostile if is_hostile else valid)
            if not is_hostile and path == "/v1/recommend" and rng.random() < miss_fraction:
                body = _uncached(body, rng)
            started = time.perf_counter()
            try:
                status, headers, payload = await asyncio.wait_for(
                    conn.post(path, body), REQUEST_TIMEOUT_S
                )
            except (ConnectionFailed, TimeoutError) as exc:
                await conn.close()
                tally.connection_errors += 1
                if len(tally.error_samples) < 5:
                    tally.error_samples.append(f"{path}: {exc!r}")
                await asyncio.sleep(0.05)
                continue
            tally.latencies_ms.append((time.perf_counter() - started) * 1000)
            tally.statuses[status] += 1
            if headers.get("x-suanli-cache") == "hit":
                tally.cache_hits += 1
            if is_hostile:
                tally.hostile += 1
                if not 400 <= status < 500:
                    tally.hostile_not_4xx += 1
                    _sample(tally, f"hostile {path} {body[:80]!r} -> {status}")
            else:
                tally.valid += 1
                tally.recommend_valid += path == "/v1/recommend"
                if status != 200:
                    tally.valid_not_200 += 1
                    _sample(tally, f"valid {path} {body[:80]!r} -> {status} {payload[:160]!r}")
    finally:
        await conn.close()


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


async def run_load(
    url: str,
    duration_s: float,
    concurrency: int,
    hostile_fraction: float,
    seed: int,
    miss_fraction: float = 0.05,
) -> Report:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    valid, hostile = _valid_bodies(), _hostile_bodies()
    tally = Tally()
    started = time.monotonic()
    deadline = started + duration_s
    await asyncio.gather(
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
                tally,
            )
            for i in range(concurrency)
        )
    )
    elapsed = time.monotonic() - started
    latencies = sorted(tally.latencies_ms)
    classes = Counter(f"{status // 100}xx" for status in tally.statuses.elements())
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
        samples=tally.error_samples + tally.unexpected_samples,
    )


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
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="suanli-load-", suffix=".log", delete=False
        )
        env = {
            **os.environ,
            "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
            "SUANLI_LOG_LEVEL": log_level,
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("SUANLI_API_KEY", None)
        cmd = [sys.executable, "-m", "service", "serve", "--host", "127.0.0.1"]
        cmd += ["--port", str(self.port), "--workers", str(workers)]
        self.process = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )

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
    parser.add_argument("--server-workers", type=_bounded(1, 16, int), default=1)
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
        f"verdict           {'PASS' if report.ok else 'FAIL'}",
    ]
    lines.extend(f"  sample: {sample}" for sample in report.samples)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
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
            )
        )
    finally:
        if server is not None:
            server.stop()
    print(format_report(report))
    if args.json_out:
        args.json_out.write_text(json.dumps({**asdict(report), "ok": report.ok}, indent=2))
    if server is not None:
        if not report.ok:
            print(f"server log tail:\n{server.tail()}", file=sys.stderr)
        server.cleanup()
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
