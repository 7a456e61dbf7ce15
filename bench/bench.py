"""Benchmark: HTTP throughput/latency as ratios to /healthz, and the planner alone.

    python bench/bench.py [--seconds 2] [--rounds 5] [--concurrency 32] [--workers 1]

Part 1 starts ``suanli serve`` on a free loopback port (no rate limit, in-memory cache)
and drives it with a minimal keep-alive HTTP/1.1 client (raw asyncio streams: the
client must cost less CPU than the server it measures on a 2-core machine). Each
endpoint runs for the same time at the same concurrency, in ``--rounds`` rounds that each
start with ``/healthz``; it is reported as the median over rounds of requests/s, p50/p99
latency, its ratio to the same round's ``/healthz`` (and the lowest such ratio) and the
server's CPU per request (µs, every thread of the server and its workers):

* ``post_floor``              — ``POST /v1/admin/reload`` with admin disabled (a 404 from
  the guard): the cheapest POST through the same middleware, the ceiling of any POST route
* ``/v1/estimate``            — sizing only
* ``/v1/recommend`` cached    — one request repeated (cache hits after the first)
* ``/v1/recommend`` tokens    — uncached: every request distinct by its ``tokens`` (the
  same job at other lengths: the planner's memo serves its placements)
* ``/v1/recommend`` shapes    — uncached: every request a job shape never asked before in
  the run (models x methods x sequence lengths, :func:`job_shape`), as platform traffic
  is: placements sized, lanes indexed and bounded for each

Part 2 times :func:`service.planning.recommend.recommend` on synthetic catalogs of 1k,
10k and 100k offers built by repeating the real catalog rows across made-up regions at
slightly different prices, so that no offers fold into one group (benchmark data only,
never served). Grouping the catalog is part of loading it, not of a request. "cold" has
no memo at all (the first request under a filter: the catalog filtered too); "new shape"
shares the service's memo but every request is a job shape it has not seen; "warm"
shares it across requests for other token counts.

Targets (2 cores): cached ≥ 0.9× healthz, distinct tokens ≥ 0.5×, distinct shapes ≥ 0.3×,
planner on 10k offers ≤ 10 ms p50.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RECOMMEND = {
    "workload": {
        "kind": "finetune",
        "model": "llama-2-7b",
        "method": "qlora",
        "seq_len": 1024,
        "tokens": 20_000_000,
    },
    "objective": "cost",
    "top_k": 5,
    "lang": "en",
}
SHAPE_MODELS = (
    "llama-2-7b", "qwen2.5-7b", "llama-3-8b", "qwen2.5-14b", "mistral-7b", "qwen3-8b",
    "llama-2-13b", "yi-1.5-9b", "glm-4-9b", "internlm2.5-7b", "baichuan2-7b", "qwen3-4b",
)  # fmt: skip
"""Presets of 4k+ positions (every sequence length below is valid for each)."""
SHAPE_METHODS = ("lora", "qlora", "full")
SHAPE_SEQ_LENS = range(256, 4096)


def job_shape(i: int) -> dict[str, object]:
    """The ``i``-th distinct job shape: model and method vary fastest, then the sequence
    length, so that no two of the first len(models) x len(methods) x len(lengths)
    (138,240) repeat; its ``tokens`` differ from every other case's."""
    models, methods = len(SHAPE_MODELS), len(SHAPE_METHODS)
    if i >= models * methods * len(SHAPE_SEQ_LENS):
        raise RuntimeError("ran out of distinct job shapes: lengthen SHAPE_SEQ_LENS")
    return {
        "workload": {
            "kind": "finetune",
            "model": SHAPE_MODELS[i % models],
            "method": SHAPE_METHODS[(i // models) % methods],
            "seq_len": SHAPE_SEQ_LENS[i // (models * methods)],
            "tokens": 30_000_000,
        },
        "objective": "cost",
        "top_k": 5,
        "lang": "en",
    }


ESTIMATE = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "lora", "tokens": 10**8},
    "placement": {"accelerator": "A10", "count": 1},
}


SHAPE_BODIES = 60_000
"""Distinct shapes prepared for the run: more than the shapes case can answer in
``rounds x seconds`` at 1,000 req/s (the service answers new shapes far slower)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def request_bytes(method: str, path: str, body: bytes | None = None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


async def _one_connection(
    port: int,
    make: Callable[[int], bytes],
    deadline: float,
    latencies: list[float],
    errors: list[int],
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = 0
    try:
        while time.perf_counter() < deadline:
            payload = make(i)
            i += 1
            start = time.perf_counter()
            writer.write(payload)
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - start)
            if not status_line.startswith(b"HTTP/1.1 2"):
                errors.append(int(status_line.split()[1]))  # post_floor: 404 by design
    finally:
        writer.close()


async def drive(
    port: int, make: Callable[[int], bytes], seconds: float, concurrency: int
) -> dict[str, float]:
    latencies: list[float] = []
    errors: list[int] = []
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(
        *(
            _one_connection(
                port, lambda i, c=c: make(i * concurrency + c), deadline, latencies, errors
            )
            for c in range(concurrency)
        )
    )
    elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "requests": len(latencies),
        "errors": len(errors),
    }


def start_server(port: int, workers: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        {
            "SUANLI_PORT": str(port),
            "SUANLI_WORKERS": str(workers),
            "SUANLI_RATE_LIMIT_PER_MINUTE": "0",
            "SUANLI_LOG_LEVEL": "WARNING",
            "SUANLI_PLUGINS": "alibaba,tencent,huawei,volcengine",
        }
    )
    env.pop("SUANLI_REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, cwd=ROOT)
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not become ready")


def server_cpu_s(server_pid: int) -> float:
    """CPU seconds (user + system, every thread) used so far by the server process and
    its workers, from ``/proc`` (NaN where there is none). Beside req/s it shows where a
    ratio comes from: on a shared machine throughput moves with the neighbours' load,
    the server's own CPU per request much less."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        pids = [server_pid]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError), open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == server_pid:
                        pids.append(int(entry))
        for pid in pids:
            with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        return math.nan
    return total


def http_part(
    seconds: float, concurrency: int, workers: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Every case ``rounds`` times, each round starting with ``/healthz``: a case's ratio
    is the median over rounds of its req/s over the same round's healthz (the machine's
    speed drifts by 10-20 % over a minute; a ratio within one round does not)."""
    port = free_port()
    proc = start_server(port, workers)
    try:
        healthz = request_bytes("GET", "/healthz")
        estimate = request_bytes("POST", "/v1/estimate", json.dumps(ESTIMATE).encode())
        cached = request_bytes("POST", "/v1/recommend", json.dumps(RECOMMEND).encode())
        # The cheapest POST the service answers (admin disabled: the guard's 404), with
        # the same body size: the floor any POST route can reach on this stack.
        post_floor = request_bytes("POST", "/v1/admin/reload", json.dumps(RECOMMEND).encode())

        # Distinct requests (distinct tokens => distinct cache key) in every round, built
        # by filling a template: the client spends microseconds, not a JSON round trip.
        head, tail = request_bytes("POST", "/v1/recommend", json.dumps(RECOMMEND).encode()).split(
            b"20000000"
        )
        distinct = itertools.count(10_000_000)

        def tokens(_: int) -> bytes:
            return head + b"%d" % next(distinct) + tail  # 8 digits: same Content-Length

        # Distinct job shapes, counted over every round: none repeats in the run. The
        # bodies are built before the case runs (the client must not pay for JSON).
        shapes = itertools.count()

        def new_shape(_: int) -> bytes:
            return shape_bodies[next(shapes)]

        cases: dict[str, Callable[[int], bytes]] = {
            "healthz": lambda _: healthz,
            "post_floor": lambda _: post_floor,
            "estimate": lambda _: estimate,
            "recommend_cached": lambda _: cached,
            "recommend_tokens": tokens,
            "recommend_shapes": new_shape,
        }
        shape_bodies = [
            request_bytes("POST", "/v1/recommend", json.dumps(job_shape(i)).encode())
            for i in range(SHAPE_BODIES)
        ]
        asyncio.run(drive(port, lambda _: healthz, 1.0, concurrency))  # warm-up
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(rounds):
            base = 0.0
            for name, make in cases.items():
                cpu_before = server_cpu_s(proc.pid)
                result = asyncio.run(drive(port, make, seconds, concurrency))
                cpu_s = server_cpu_s(proc.pid) - cpu_before
                result["cpu_us"] = 1e6 * cpu_s / max(1.0, result["requests"])
                base = base or result["rps"]
                result["ratio"] = result["rps"] / base
                runs[name].append(result)
        return {
            name: {
                key: statistics.median(r[key] for r in results)
                for key in ("rps", "p50_ms", "p99_ms", "ratio", "errors", "cpu_us")
            }
            | {"ratio_min": min(r["ratio"] for r in results)}
            for name, results in runs.items()
        }
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def planner_part(sizes: list[int], repeats: int) -> dict[int, dict[str, dict[str, float]]]:
    """p50 and max ms per answer, per catalog size and case (see the module docstring)."""
    import msgspec

    from service.catalog.aggregate import CatalogService, bucket_offers
    from service.hooks.loader import get_plugin_manager
    from service.hooks.registries import default_accelerator_registry, default_model_registry
    from service.planning.memo import PlanCache
    from service.planning.recommend import PlanContext, recommend
    from service.planning.schema import RecommendRequest

    pm = get_plugin_manager(allow=("alibaba", "tencent", "huawei", "volcengine"))
    real = CatalogService(pm.hook.suanli_register_providers).load()
    base = [o for o in real.offers]
    request = msgspec.convert(RECOMMEND, RecommendRequest)

    def at_length(i: int) -> RecommendRequest:
        workload = msgspec.structs.replace(request.workload, tokens=10_000_000 + i)
        return msgspec.structs.replace(request, workload=workload)

    shapes = itertools.count()

    def new_shape(_: int) -> RecommendRequest:
        return msgspec.convert(job_shape(next(shapes)), RecommendRequest)

    accelerators = default_accelerator_registry(("alibaba", "tencent", "huawei", "volcengine"))
    models = default_model_registry()
    results = {}
    for size in sizes:
        offers = []
        i = 0
        while len(offers) < size:
            for offer in base:
                # Each copy gets its own region and, where priced, its own price (+0.1 %
                # per copy), so no two offers fold into one group: the worst case.
                price = offer.price
                if price is not None and price.price_per_hour is not None:
                    price = msgspec.structs.replace(
                        price, price_per_hour=price.price_per_hour * (1 + 0.001 * i)
                    )
                offers.append(
                    msgspec.structs.replace(offer, region=f"bench-region-{i}", price=price)
                )
                if len(offers) == size:
                    break
            i += 1
        snapshot = msgspec.structs.replace(
            real, offers=tuple(offers), buckets=bucket_offers(offers), fingerprint=f"bench{size}"
        )
        cold = PlanContext(snapshot=snapshot, accelerators=accelerators, models=models)
        warm = dataclasses.replace(cold, memo=PlanCache())
        runs = repeats if size <= 10_000 else max(3, repeats // 5)
        recommend(request, warm, "en")  # the service's memo holds this catalog's filter
        results[size] = {
            # Cold: nothing memoized (the first request for a job shape and filter).
            "cold": _timed(lambda _, ctx=cold: recommend(request, ctx, "en"), runs),
            # New shape: the service's memo, every request a job shape not seen before.
            "shape": _timed(lambda i, ctx=warm: recommend(new_shape(i), ctx, "en"), runs),
            # Warm: the service's memo, every request for another token count.
            "warm": _timed(lambda i, ctx=warm: recommend(at_length(i), ctx, "en"), runs),
        }
    return results


def _timed(call: Callable[[int], object], runs: int) -> dict[str, float]:
    timings = []
    for i in range(runs):
        start = time.perf_counter()
        call(i)
        timings.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": statistics.median(timings), "max_ms": max(timings)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per case and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    if not args.skip_http:
        http = http_part(args.seconds, args.concurrency, args.workers, args.rounds)
        print(f"{args.rounds} rounds x {args.seconds:g} s per case; medians over rounds")
        header = ("endpoint", "req/s", "p50 ms", "p99 ms", "x healthz", "min x", "errors", "cpu us")
        print(f"{header[0]:<22}" + "".join(f"{h:>10}" for h in header[1:]))
        for name, r in http.items():
            print(
                f"{name:<22}{r['rps']:>10.0f}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}"
                f"{r['ratio']:>10.2f}{r['ratio_min']:>10.2f}{r['errors']:>10.0f}"
                f"{r['cpu_us']:>10.0f}"
            )
    columns = ("cold p50", "cold max", "shape p50", "shape max", "warm p50", "warm max")
    print(f"\n{'planner offers (ms)':<22}" + "".join(f"{c:>10}" for c in columns))
    for size, r in planner_part([1_000, 10_000, 100_000], args.repeats).items():
        print(
            f"{size:<22}"
            + "".join(
                f"{r[case]['p50_ms']:>10.2f}{r[case]['max_ms']:>10.2f}"
                for case in ("cold", "shape", "warm")
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
