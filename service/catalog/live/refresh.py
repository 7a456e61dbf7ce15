"""The refresh job: fetch one provider's live prices, validate them, publish a snapshot.

The SDK calls are synchronous; each region's fetch runs in a worker thread under a
timeout so the event loop (and the service, when the schedule runs in-process) never
blocks on a cloud API. Throttling, 5xx, network errors and timeouts are retried with
exponential back-off, a bounded number of times; other errors (credentials, malformed
payload) are not retried.

Publishing rules, so a bad refresh can never make prices worse:

* prices are validated (:mod:`service.catalog.live.validate`); outliers are logged and dropped;
* a region that failed keeps its prices from the previous snapshot (last good);
* a region that answered is replaced by its answer, so an instance type the API no
  longer quotes loses its live price and falls back to the shipped one;
* a refresh that produced no price at all publishes nothing: an empty snapshot never
  replaces a good one; the error is recorded in the shared refresh status instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal, Protocol

import msgspec

from service.catalog.live.adapter import Clock, iso_utc, utc_now
from service.catalog.live.errors import LivePriceError, TransientLivePriceError
from service.catalog.live.status import source_availability
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore, RefreshStatus
from service.catalog.live.validate import (
    DEFAULT_REFERENCE,
    ReferenceRange,
    RejectedPrice,
    validate_prices,
)
from service.catalog.models import ALL_REGIONS, InstanceType, LivePriceSource, Price

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

Outcome = Literal["published", "kept_previous", "failed", "disabled"]


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Bounded exponential back-off for transient errors of one region's fetch."""

    attempts: int = 4
    """Total attempts, the first one included."""
    base_delay_s: float = 1.0
    multiplier: float = 2.0
    max_delay_s: float = 16.0

    def delay_s(self, retry: int) -> float:
        """Pause before retry number ``retry`` (1 = the first retry): 1, 2, 4, 8 s ..."""
        return float(min(self.max_delay_s, self.base_delay_s * self.multiplier ** (retry - 1)))


DEFAULT_RETRY = RetryPolicy()


class RegionOutcome(msgspec.Struct, frozen=True, kw_only=True):
    region: str
    attempts: int
    prices: int
    """Prices kept after validation."""
    error: str | None = None


class RefreshResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one refresh of one provider did."""

    provider: str
    outcome: Outcome
    reason: str | None = None
    """Why live prices are off (``disabled``) or why nothing was published."""
    snapshot: LiveSnapshot | None = None
    """The snapshot now in the store (new when published, the previous one when kept)."""
    regions: tuple[RegionOutcome, ...] = ()
    rejected: tuple[RejectedPrice, ...] = ()
    missing: tuple[str, ...] = ()
    """``region/instance_type`` pairs asked for but not priced by the API."""

    @property
    def published(self) -> bool:
        return self.outcome == "published"


class RefreshProgress(Protocol):
    """Told what a refresh does, region by region (the CLI draws its progress bars)."""

    def planned(self, provider: str, regions: Sequence[str]) -> None:
        """The regions ``provider`` will fetch, in order."""

    def started(self, provider: str, region: str) -> None:
        """A region's fetch begins (retries included until :meth:`finished`)."""

    def finished(self, provider: str, outcome: RegionOutcome) -> None:
        """A region's fetch ended: prices kept, attempts, error."""


def sold_in(instance: InstanceType, region: str) -> bool:
    """Ask for a type in a region unless the catalog says it is sold elsewhere only
    (an empty ``regions`` means unknown, so it is asked everywhere)."""
    return not instance.regions or region in instance.regions or ALL_REGIONS in instance.regions


def refresh_delay_s(
    consecutive_failures: int, interval_s: float, first_retry_s: float = 60.0
) -> float:
    """Pause before the next scheduled refresh: the interval after a success; after
    failures, ``first_retry_s`` doubling per failure, never more than the interval."""
    if consecutive_failures <= 0:
        return interval_s
    return float(min(interval_s, first_retry_s * 2 ** (consecutive_failures - 1)))


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, LivePriceError) else f"{type(exc).__name__}: {text}"


async def fetch_region(
    source: LivePriceSource,
    region: str,
    instance_types: Sequence[str],
    timeout_s: float,
    retry: RetryPolicy = DEFAULT_RETRY,
    sleep: Sleep = asyncio.sleep,
) -> tuple[tuple[Price, ...], int, str | None]:
    """``(prices, attempts, error)`` for one region, retrying transient errors."""
    error = "no attempt made"
    for attempt in range(1, retry.attempts + 1):
        try:
            prices = await asyncio.wait_for(
                asyncio.to_thread(source.live_prices, region, list(instance_types)), timeout_s
            )
            return tuple(prices), attempt, None
        except TimeoutError:
            failure: LivePriceError = TransientLivePriceError(f"timed out after {timeout_s:g} s")
        except LivePriceError as exc:
            failure = exc
        except Exception as exc:  # an adapter bug: report it, do not retry it
            failure = LivePriceError(_describe(exc))
        error = _describe(failure)
        if not failure.retryable or attempt == retry.attempts:
            return (), attempt, error
        delay = retry.delay_s(attempt)
        log.info("live prices %s: %s; retry %d in %.1f s", region, error, attempt, delay)
        await sleep(delay)
    return (), retry.attempts, error


async def refresh_provider(
    provider_name: str,
    source: LivePriceSource,
    instance_types: Sequence[InstanceType],
    regions: Sequence[str],
    store: PriceSnapshotStore,
    timeout_s: float,
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
    reference: Mapping[str, ReferenceRange] | None = None,
    clock: Clock = utc_now,
    sleep: Sleep = asyncio.sleep,
    progress: RefreshProgress | None = None,
) -> RefreshResult:
    """Fetch, validate and publish ``provider_name``'s live prices for ``regions``.

    ``instance_types`` are the provider's catalog rows: they say which types to ask
    for in which region, and which accelerator a price covers (for validation).
    ``timeout_s`` bounds each attempt of each region's fetch; ``progress`` is told
    about each region as it starts and ends.
    """
    usable, reason = source_availability(source)
    if not usable:
        return RefreshResult(provider=provider_name, outcome="disabled", reason=reason)
    started = iso_utc(clock())
    catalog = {t.instance_type: t for t in instance_types}
    fresh: list[Price] = []
    answered: set[str] = set()
    outcomes: list[RegionOutcome] = []
    rejected: list[RejectedPrice] = []
    missing: list[str] = []
    errors: list[str] = []
    todo = [
        (region, [t.instance_type for t in instance_types if sold_in(t, region)])
        for region in regions
    ]
    todo = [(region, names) for region, names in todo if names]
    if progress is not None:
        progress.planned(provider_name, [region for region, _ in todo])
    for region, names in todo:
        if progress is not None:
            progress.started(provider_name, region)
        prices, attempts, error = await fetch_region(source, region, names, timeout_s, retry, sleep)
        here = [p for p in prices if p.region == region]
        rejected += [
            RejectedPrice(price=p, reason=f"region {p.region!r}, asked for {region!r}")
            for p in prices
            if p.region != region
        ]
        kept, dropped = validate_prices(here, catalog, reference or DEFAULT_REFERENCE)
        rejected += dropped
        fresh += kept
        priced = {p.instance_type for p in kept}
        missing += [f"{region}/{n}" for n in names if n not in priced]
        if error is None:
            answered.add(region)
        else:
            errors.append(f"{region}: {error}")
        outcome = RegionOutcome(region=region, attempts=attempts, prices=len(kept), error=error)
        outcomes.append(outcome)
        if progress is not None:
            progress.finished(provider_name, outcome)
    notes = tuple(errors) + tuple(
        f"dropped {r.price.instance_type} {r.price.region} {r.price.billing}: {r.reason}"
        for r in rejected
    )

    def result(
        outcome: Outcome, reason: str | None = None, snapshot: LiveSnapshot | None = None
    ) -> RefreshResult:
        return RefreshResult(
            provider=provider_name,
            outcome=outcome,
            reason=reason,
            snapshot=snapshot,
            regions=tuple(outcomes),
            rejected=tuple(rejected),
            missing=tuple(missing),
        )

    try:
        previous = await store.read(provider_name)
        status = await store.read_status(provider_name)
        failures = status.consecutive_failures if status else 0
        if not fresh:
            why = "; ".join(errors) or "the API returned no usable price"
            await store.write_status(
                RefreshStatus(
                    provider=provider_name,
                    last_attempt_at=started,
                    last_success_at=status.last_success_at if status else None,
                    last_error=why[:1000],
                    last_error_at=started,
                    consecutive_failures=failures + 1,
                )
            )
            log.warning("live prices %s: nothing published (%s)", provider_name, why)
            return result("kept_previous" if previous else "failed", why, previous)
        carried = [p for p in (previous.prices if previous else ()) if p.region not in answered]
        prices = tuple(fresh) + tuple(carried)
        finished = iso_utc(clock())
        published = await store.publish(
            LiveSnapshot(
                provider=provider_name,
                fetched_at=finished,
                prices=prices,
                errors=notes,
                regions=tuple(sorted({p.region for p in prices})),
            )
        )
        await store.write_status(
            RefreshStatus(
                provider=provider_name,
                last_attempt_at=started,
                last_success_at=finished,
                last_error="; ".join(errors)[:1000] or None,
                last_error_at=started if errors else None,
                consecutive_failures=0,
            )
        )
    except Exception as exc:  # the store (Redis) is down: report, never crash the loop
        why = f"price store: {type(exc).__name__}: {exc}"
        log.error("live prices %s: %s", provider_name, why)
        return result("failed", why)
    log.info(
        "live prices %s: published version %d with %d prices (%d fresh, %d carried over)",
        provider_name,
        published.version,
        len(prices),
        len(fresh),
        len(carried),
    )
    return result("published", snapshot=published)
