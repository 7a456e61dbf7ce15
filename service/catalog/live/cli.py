"""``suanli prices refresh [--provider P] [--region R] [--output FILE]``.

Loads the provider plugins exactly as the service does (``SUANLI_PLUGINS`` allow-list
included), finds each provider's live price source (:mod:`service.catalog.live.discovery`),
refreshes them concurrently and publishes one snapshot per provider into Redis
(``SUANLI_REDIS_URL``), where every replica reads it, then bumps the shared catalog
generation (:mod:`service.runtime.catalog_sync`) so replicas reload; ``--output`` also writes the
results and snapshots to a JSON file. Meant for a Kubernetes CronJob (one fetch serves
all replicas) or an operator's shell.

Exit status: 0 when every provider asked for published or has live prices off (no
credentials: shown, not an error unless named with ``--provider``); 1 when a refresh
published nothing, a provider whose credentials are configured could not fetch anything
(e.g. its SDK is not installed: the CronJob would otherwise "succeed" with no price), or
a provider named with ``--provider`` cannot do live prices; 2 for a usage error (unknown
provider, nowhere to publish).

:func:`run_refresh` is the whole job with a :class:`~service.catalog.live.refresh.RefreshProgress`
(``suanli prices refresh`` draws one progress bar per provider from it);
:func:`refresh_cli` is the same job from an ``argv``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import pluggy
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore

from service.catalog.live.adapter import iso_utc, utc_now
from service.catalog.live.discovery import LiveJob, discover_live_jobs
from service.catalog.live.refresh import RefreshProgress, RefreshResult
from service.catalog.live.schedule import refresh_jobs
from service.catalog.live.store import PriceSnapshotStore
from service.hooks.loader import get_plugin_manager
from service.runtime.cache import StoreFactory
from service.runtime.catalog_sync import CatalogSync, RedisBoard
from service.runtime.settings import load_settings

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
    jobs: list[LiveJob],
    root: Store,
    interval_s: float,
    timeout_s: float,
    regions: Sequence[str] | None,
    progress: RefreshProgress | None,
    echo: Callable[[str], None],
) -> list[RefreshResult]:
    try:
        store = PriceSnapshotStore.from_root(root)
        results = await refresh_jobs(jobs, store, timeout_s, regions, progress)
        if isinstance(root, RedisStore) and any(r.published for r in results):
            await _announce(root, interval_s, echo)
        return results
    finally:
        if isinstance(root, RedisStore):
            await root._redis.aclose()  # the CLI owns this client; litestar only borrows it


async def _announce(root: RedisStore, interval_s: float, echo: Callable[[str], None]) -> None:
    """Bump the shared catalog generation so every replica reloads and picks the new
    prices up (see :mod:`service.runtime.catalog_sync`); a failure here is reported, not fatal."""
    try:
        generation = await CatalogSync(RedisBoard(root._redis), interval_s).publish()
    except Exception as exc:
        print(f"warning: prices published but replicas not notified: {exc}", file=sys.stderr)
    else:
        echo(f"catalog generation {generation}: replicas will reload")


def configured_but_off(job: LiveJob, result: RefreshResult) -> bool:
    """Live prices are off for a provider whose credentials an operator did set."""
    check = getattr(job.source, "live_prices_configured", None)
    if result.outcome != "disabled" or not callable(check):
        return False
    try:
        return bool(check())
    except Exception:  # a buggy adapter: count it as configured, so the job fails loudly
        return True


def run_refresh(
    *,
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    output: str | None = None,
    timeout_s: float = DEFAULT_FETCH_TIMEOUT_S,
    plugin_manager: pluggy.PluginManager | None = None,
    progress: RefreshProgress | None = None,
    echo: Callable[[str], None] = print,
) -> int:
    """Refresh, publish, report; returns the exit status (see the module docstring).

    ``plugin_manager`` replaces the one built from the installed entry points (tests
    register in-process plugins this way); ``echo`` prints one line per provider.
    """
    settings = load_settings()
    if not settings.redis_url and not output:
        print(
            "suanli prices refresh: nowhere to publish; set SUANLI_REDIS_URL or pass --output",
            file=sys.stderr,
        )
        return 2
    pm = plugin_manager or get_plugin_manager(allow=settings.plugins)
    jobs = discover_live_jobs(pm)
    if providers:
        known = {job.name for job in jobs}
        unknown = sorted(set(providers) - known)
        if unknown:
            print(
                f"suanli prices refresh: unknown provider(s) {', '.join(unknown)}; "
                f"loaded: {', '.join(sorted(known)) or 'none'}",
                file=sys.stderr,
            )
            return 2
        jobs = [job for job in jobs if job.name in providers]
    # The same root the app uses (``suanli`` on Redis), but not its failure-swallowing
    # ResilientStore: a refresh job must know when publishing failed.
    root: Store = StoreFactory(settings.redis_url, settings.redis_timeout_s).root or MemoryStore()
    wanted = list(regions) or None
    results = asyncio.run(
        _run(jobs, root, settings.refresh_interval_s, timeout_s, wanted, progress, echo)
    )
    by_name = {job.name: job for job in jobs}
    unusable = {r.provider for r in results if configured_but_off(by_name[r.provider], r)}
    for result in results:
        line = _summary(result)
        if result.provider in unusable:
            line += " — credentials are set, so this is an error"
        echo(line)
    if output:
        report = RefreshReport(generated_at=iso_utc(utc_now()), results=tuple(results))
        Path(output).write_bytes(msgspec.json.format(msgspec.json.encode(report)))
    named = set(providers)
    failed = [
        r
        for r in results
        if r.outcome in ("failed", "kept_previous")
        or (r.outcome == "disabled" and (r.provider in named or r.provider in unusable))
    ]
    return 1 if failed else 0


def refresh_cli(argv: Sequence[str], *, plugin_manager: pluggy.PluginManager | None = None) -> int:
    """``suanli prices refresh`` from an ``argv`` (no progress display); the exit status."""
    args = _parser().parse_args(list(argv))
    return run_refresh(
        providers=args.provider or (),
        regions=args.region or (),
        output=args.output,
        timeout_s=args.timeout,
        plugin_manager=plugin_manager,
    )
