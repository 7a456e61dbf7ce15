"""Refreshing several providers, once (the CLI) or on a schedule inside the service.

When ``SUANLI_LIVE_PRICES=true`` the app runs :func:`run_refresh_schedule` as a
background task: requests never wait on it, they read whatever snapshot is in the store
(stale-while-revalidate). Run it on one replica only (or use the CronJob with
``suanli prices refresh``): every replica running it would multiply the API calls
against the clouds' rate limits for no gain, since they all share one snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from service.catalog.live.discovery import LiveJob
from service.catalog.live.refresh import (
    RefreshProgress,
    RefreshResult,
    refresh_delay_s,
    refresh_provider,
)
from service.catalog.live.store import PriceSnapshotStore

log = logging.getLogger(__name__)


def regions_for(job: LiveJob, wanted: Sequence[str] | None) -> list[str]:
    """The provider's regions, narrowed to ``wanted`` when given (regions the provider
    does not list are skipped, unless it lists none at all)."""
    regions = list(job.provider.regions())
    if not wanted:
        return regions
    return [r for r in wanted if r in regions] if regions else list(wanted)


async def refresh_jobs(
    jobs: Sequence[LiveJob],
    store: PriceSnapshotStore,
    timeout_s: float,
    wanted_regions: Sequence[str] | None = None,
    progress: RefreshProgress | None = None,
) -> list[RefreshResult]:
    """Refresh every job concurrently (different clouds do not share rate limits)."""

    async def one(job: LiveJob) -> RefreshResult:
        if job.source is None:
            return RefreshResult(provider=job.name, outcome="disabled", reason=job.reason)
        return await refresh_provider(
            job.name,
            job.source,
            tuple(job.provider.instance_types()),
            regions_for(job, wanted_regions),
            store,
            timeout_s,
            progress=progress,
        )

    return list(await asyncio.gather(*(one(job) for job in jobs)))


async def run_refresh_schedule(
    jobs: Sequence[LiveJob],
    store: PriceSnapshotStore,
    stop: asyncio.Event,
    *,
    interval_s: float,
    timeout_s: float,
    first_retry_s: float = 60.0,
    on_published: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Refresh all jobs every ``interval_s`` until ``stop`` is set.

    ``on_published`` runs after a round that published at least one snapshot (the app
    passes ``Suanli.publish_catalog_change`` so every replica reloads its prices).

    After a round in which some provider published nothing, the next round comes
    sooner (``first_retry_s``, doubling per failed round, at most ``interval_s``): the
    failed refresh keeps the last good prices meanwhile and backs off.
    """
    active = [job for job in jobs if job.source is not None]
    failures = 0
    while not stop.is_set():
        try:
            results = await refresh_jobs(active, store, timeout_s)
        except Exception:  # never let the schedule die; the next round tries again
            log.exception("live price refresh round failed")
            results = []
            failures += 1
        else:
            bad = [r for r in results if r.outcome in ("failed", "kept_previous")]
            failures = failures + 1 if bad else 0
            if on_published is not None and any(r.published for r in results):
                try:
                    await on_published()
                except Exception:
                    log.exception("announcing new live prices failed")
        delay = refresh_delay_s(failures, interval_s, first_retry_s)
        try:
            await asyncio.wait_for(stop.wait(), timeout=delay)
        except TimeoutError:
            continue
