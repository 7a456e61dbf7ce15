"""Each cloud's official SDK client, run for real against a loopback stand-in of its API.

For every provider: prices parsed and labelled; throttling and 5xx retried with
exponential back-off (measured at the stand-in); a malformed payload recorded as an
error while the last good snapshot stays; partial coverage; missing credentials mean
no call at all.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from service.catalog.live.refresh import RefreshResult, RetryPolicy, refresh_provider
from service.catalog.live.store import PriceSnapshotStore
from service.catalog.models import LivePriceSource

from .clouds import CASES, CloudCase
from .conftest import Clock
from .standin import StandIn, serve

FAST_RETRY = RetryPolicy(attempts=4, base_delay_s=0.05, multiplier=2.0, max_delay_s=1.0)


@pytest.fixture(params=CASES, ids=lambda factory: factory.__name__)
def case(request: pytest.FixtureRequest) -> CloudCase:
    factory = request.param
    built: CloudCase = factory()
    return built


@pytest.fixture
def standin(case: CloudCase) -> Iterator[StandIn]:
    with serve(case.answer, case.action_of) as server:
        yield server


@pytest.fixture
def source(case: CloudCase, standin: StandIn, clock: Clock) -> LivePriceSource:
    return case.make_source(standin.url, case.env, clock)


async def refresh(
    case: CloudCase, source: LivePriceSource, store: PriceSnapshotStore, clock: Clock
) -> RefreshResult:
    return await refresh_provider(
        case.name, source, case.catalog, [case.region], store, 10.0, retry=FAST_RETRY, clock=clock
    )


def test_sdk_available_with_credentials(case: CloudCase, source: LivePriceSource) -> None:
    assert source.live_prices_available() == (True, None)


def test_prices_parsed_and_labelled_live(
    case: CloudCase, source: LivePriceSource, standin: StandIn
) -> None:
    prices = source.live_prices(case.region, case.names)

    got = {
        (p.instance_type, p.billing): (p.price_per_hour, p.price_per_month, p.source)
        for p in prices
    }
    assert got == case.expected
    assert len(prices) == len(case.expected)
    for price in prices:
        assert price.currency == "CNY"
        assert price.price_source == "live"
        assert price.region == case.region
        assert price.as_of == "2026-11-30T08:00:00Z"
        assert not price.estimated
    assert standin.calls(case.main_action), "the SDK never reached the stand-in"


async def test_refresh_publishes_validated_snapshot(
    case: CloudCase, source: LivePriceSource, memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    result = await refresh(case, source, memory_store, clock)

    assert result.outcome == "published"
    snapshot = await memory_store.read(case.name)
    assert snapshot is not None
    assert snapshot.version == 1
    assert snapshot.fetched_at == "2026-11-30T08:00:00Z"
    assert snapshot.regions == (case.region,)
    assert {(p.instance_type, p.billing) for p in snapshot.prices} == set(case.expected)


async def test_throttling_retried_with_exponential_backoff(
    case: CloudCase,
    source: LivePriceSource,
    standin: StandIn,
    memory_store: PriceSnapshotStore,
    clock: Clock,
) -> None:
    baseline = len(source.live_prices(case.region, case.names))
    standin.requests.clear()
    standin.fail_next(case.main_action, case.throttle, case.throttle)

    result = await refresh(case, source, memory_store, clock)

    assert result.outcome == "published"
    (region,) = result.regions
    assert region.attempts == 3
    assert region.error is None
    snapshot = await memory_store.read(case.name)
    assert snapshot is not None
    assert len(snapshot.prices) == baseline
    first_calls = standin.calls(case.main_action)
    gaps = [b.at - a.at for a, b in itertools.pairwise(first_calls)]
    assert gaps[0] >= 0.05 * 0.9  # first retry after base delay
    assert gaps[1] >= 0.10 * 0.9  # second retry after twice the base delay


async def test_server_error_retried_then_succeeds(
    case: CloudCase,
    source: LivePriceSource,
    standin: StandIn,
    memory_store: PriceSnapshotStore,
    clock: Clock,
) -> None:
    standin.fail_next(case.main_action, case.server_error)

    result = await refresh(case, source, memory_store, clock)

    assert result.outcome == "published"
    assert result.regions[0].attempts == 2


async def test_persistent_throttling_gives_up_after_bounded_attempts(
    case: CloudCase,
    source: LivePriceSource,
    standin: StandIn,
    memory_store: PriceSnapshotStore,
    clock: Clock,
) -> None:
    standin.fail_next(case.main_action, *([case.throttle] * 10))

    result = await refresh(case, source, memory_store, clock)

    assert result.outcome == "failed"
    assert len(standin.calls(case.main_action)) == FAST_RETRY.attempts
    assert await memory_store.read(case.name) is None  # nothing good to publish
    status = await memory_store.read_status(case.name)
    assert status is not None
    assert status.consecutive_failures == 1
    assert status.last_error is not None
    assert case.region in status.last_error


async def test_malformed_payload_keeps_last_good_snapshot(
    case: CloudCase,
    source: LivePriceSource,
    standin: StandIn,
    memory_store: PriceSnapshotStore,
    clock: Clock,
) -> None:
    first = await refresh(case, source, memory_store, clock)
    good = first.snapshot
    assert good is not None
    clock.advance(3600)
    before = len(standin.calls(case.main_action))
    standin.fail_next(case.main_action, *([case.malformed] * 10))

    result = await refresh(case, source, memory_store, clock)

    assert result.outcome == "kept_previous"
    assert "malformed" in (result.reason or "")
    assert len(standin.calls(case.main_action)) == before + 1  # not retried
    kept = await memory_store.read(case.name)
    assert kept == good  # same version, same prices, same fetched_at
    status = await memory_store.read_status(case.name)
    assert status is not None
    assert "malformed" in (status.last_error or "")
    assert status.last_error_at == "2026-11-30T09:00:00Z"
    assert status.last_success_at == "2026-11-30T08:00:00Z"


async def test_partial_coverage_prices_only_what_the_api_quotes(
    case: CloudCase, source: LivePriceSource, memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    result = await refresh(case, source, memory_store, clock)

    assert f"{case.region}/{case.unpriced}" in result.missing
    snapshot = await memory_store.read(case.name)
    assert snapshot is not None
    priced = {p.instance_type for p in snapshot.prices}
    assert case.unpriced not in priced
    assert priced == {name for name, _ in case.expected}


async def test_missing_credentials_disable_without_any_call(
    case: CloudCase, standin: StandIn, memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    for dropped in case.env:
        env = {k: v for k, v in case.env.items() if k != dropped}
        source = case.make_source(standin.url, env, clock)
        usable, reason = source.live_prices_available()
        if dropped.endswith("_DOMAIN_ID"):  # optional: the SDK can look it up
            assert usable
            continue
        assert not usable
        assert reason is not None
        assert dropped in reason

        result = await refresh(case, source, memory_store, clock)

        assert result.outcome == "disabled"
        assert result.reason == reason
    assert standin.requests == []
    assert await memory_store.read(case.name) is None
