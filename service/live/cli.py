"""``suanli prices refresh [--provider P] [--region R] [--output FILE]``.

Loads the provider plugins exactly as the service does (``SUANLI_PLUGINS`` allow-list
included), finds each provider's live price source (:mod:`service.live.discovery`),
refreshes them concurrently and publishes one snapshot per provider into Redis
(``SUANLI_REDIS_URL``), where every replica reads it, then bumps the shared catalog
generation (:mod:`service.shared`) so replicas reload; ``--output`` also writes the
results and snapshots to a JSON file. Meant for a Kubernetes CronJob (one fetch serves
all replicas) or an operator's shell.

Exit status: 0 when every provider asked for published or has live prices off (no SDK,
no credentials: shown, not an error unless named with ``--provider``); 1 when a refresh
published nothing, or a provider named with ``--provider`` cannot do live prices;
2 for a usage error (unknown provider, nowhere to publish).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pluggy
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore

from service.cache import StoreFactory
from service.live.adapter import iso_utc, utc_now
from service.live.discovery import LiveJob, discover_live_jobs
from service.live.refresh import RefreshResult
from service.live.schedule import refresh_jobs
from service.live.store import PriceSnapshotStore
from service.plugins import get_plugin_manager
from service.settings import load_settings
from service.shared import CatalogSync, RedisBoard

DEFAULT_FETCH_TIMEOUT_S = 120.0
"""Per attempt of one region's fetch. Alibaba's DescribePrice takes one instance type per
call, so a region with dozens of GPU types needs far longer than a request-path timeout."""


class RefreshReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``--output`` writes."""

    generated_at: str
    results: tuple[RefreshResult, ...]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="suanli prices refresh",
        description="Fetch live prices through each cloud's SDK and publish them.",
    )
    parser.add_argument("--provider", action="append", help="only this provider (repeatable)")
    parser.add_argument("--region", action="append", help="only this region (repeatable)")
    parser.add_argument("--output", help="also write results and snapshots to this JSON file")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_FETCH_TIMEOUT_S,
        help=f"seconds per fetch attempt of one region (default {DEFAULT_FETCH_TIMEOUT_S:g})",
    )
    return parser


def _summary(result: RefreshResult) -> str:
    if result.outcome == "disabled":
        return f"{result.provider}: live prices off ({result.reason})"
    regions = ", ".join(
        f"{r.region}={r.prices}" + (f" [{r.error}]" if r.error else "") for r in result.regions
    )
    head = f"{result.provider}: {result.outcome}"
    if result.snapshot is not None:
        head += f" v{result.snapshot.version} ({len(result.snapshot.prices)} prices)"
    if result.reason:
        head += f": {result.reason}"
    extra = f"; {len(result.rejected)} outliers dropped" if result.rejected else ""
    extra += f"; {len(result.missing)} not quoted" if result.missing else ""
    return f"{head} | {regions or 'no region'}{extra}"


async def _run(
    args: argparse.Namespace, jobs: list[LiveJob], root: Store, interval_s: float
) -> list[RefreshResult]:
    try:
        store = PriceSnapshotStore.from_root(root)
        results = await refresh_jobs(jobs, store, args.timeout, args.region)
        if isinstance(root, RedisStore) and any(r.published for r in results):
            await _announce(root, interval_s)
        return results
    finally:
        if isinstance(root, RedisStore):
            await root._redis.aclose()  # the CLI owns this client; litestar only borrows it


async def _announce(root: RedisStore, interval_s: float) -> None:
    """Bump the shared catalog generation so every replica reloads and picks the new
    prices up (see :mod:`service.shared`); a failure here is reported, not fatal."""
    try:
        generation = await CatalogSync(RedisBoard(root._redis), interval_s).publish()
    except Exception as exc:
        print(f"warning: prices published but replicas not notified: {exc}", file=sys.stderr)
    else:
        print(f"catalog generation {generation}: replicas will reload")


def refresh_cli(argv: Sequence[str], *, plugin_manager: pluggy.PluginManager | None = None) -> int:
    """Entry point of ``suanli prices refresh``; returns the exit status.

    ``plugin_manager`` replaces the one built from the installed entry points (tests
    register in-process plugins this way).
    """
    args = _parser().parse_args(list(argv))
    settings = load_settings()
    if not settings.redis_url and not args.output:
        print(
            "suanli prices refresh: nowhere to publish; set SUANLI_REDIS_URL or pass --output",
            file=sys.stderr,
        )
        return 2
    pm = plugin_manager or get_plugin_manager(allow=settings.plugins)
    jobs = discover_live_jobs(pm)
    if args.provider:
        known = {job.name for job in jobs}
        unknown = sorted(set(args.provider) - known)
        if unknown:
            print(
                f"suanli prices refresh: unknown provider(s) {', '.join(unknown)}; "
                f"loaded: {', '.join(sorted(known)) or 'none'}",
                file=sys.stderr,
            )
            return 2
        jobs = [job for job in jobs if job.name in args.provider]
    # The same root the app uses (``suanli`` on Redis), but not its failure-swallowing
    # ResilientStore: a refresh job must know when publishing failed.
    root: Store = StoreFactory(settings.redis_url, settings.redis_timeout_s).root or MemoryStore()
    results = asyncio.run(_run(args, jobs, root, settings.refresh_interval_s))
    for result in results:
        print(_summary(result))
    if args.output:
        report = RefreshReport(generated_at=iso_utc(utc_now()), results=tuple(results))
        Path(args.output).write_bytes(msgspec.json.format(msgspec.json.encode(report)))
    named = set(args.provider or ())
    failed = [
        r
        for r in results
        if r.outcome in ("failed", "kept_previous")
        or (r.outcome == "disabled" and r.provider in named)
    ]
    return 1 if failed else 0
