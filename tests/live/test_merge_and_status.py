"""Serving precedence (override > live > snapshot > estimated), staleness, and what
``GET /v1/providers`` reports: pure functions, pinned clock."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from service.catalog.live.merge import merge_prices, select_price
from service.catalog.live.status import live_state
from service.catalog.live.store import LiveSnapshot, RefreshStatus
from service.catalog.models import Price

from .conftest import T0
from .test_refresh import hourly

SNAPSHOT_ROW = Price(
    instance_type="GN7.2XLARGE32",
    region="*",
    billing="on_demand",
    price_per_hour=8.68,
    source="tencentyun/qcloud-documents 价格总览.md",
    as_of="2021",
)
SNAPSHOT_BEIJING = msgspec.structs.replace(SNAPSHOT_ROW, region="ap-beijing", price_per_hour=8.6)
OVERRIDE_BEIJING = msgspec.structs.replace(
    SNAPSHOT_ROW, region="ap-beijing", price_per_hour=6.0, price_source="override"
)
ESTIMATED_BEIJING = msgspec.structs.replace(
    SNAPSHOT_ROW, region="ap-beijing", price_per_hour=1.8, estimated=True, basis="market"
)
LIVE_BEIJING = hourly("GN7.2XLARGE32", "ap-beijing", 7.5)


def live(*prices: Price, fetched_at: str = "2026-11-30T08:00:00Z") -> LiveSnapshot:
    return LiveSnapshot(provider="tencent", fetched_at=fetched_at, prices=prices, version=3)


def test_live_replaces_the_same_region_and_keeps_the_rest() -> None:
    merged, stale = merge_prices([SNAPSHOT_ROW, SNAPSHOT_BEIJING], live(LIVE_BEIJING), T0, 3600)

    assert set(merged) == {SNAPSHOT_ROW, LIVE_BEIJING}
    assert stale is False


def test_override_beats_live_and_live_beats_estimated() -> None:
    merged, _ = merge_prices([OVERRIDE_BEIJING], live(LIVE_BEIJING), T0, 3600)
    assert merged == (OVERRIDE_BEIJING,)

    merged, _ = merge_prices([ESTIMATED_BEIJING], live(LIVE_BEIJING), T0, 3600)
    assert merged == (LIVE_BEIJING,)


def test_without_live_prices_nothing_changes() -> None:
    rows = [SNAPSHOT_ROW, SNAPSHOT_BEIJING]
    assert merge_prices(rows, None, T0, 3600) == (tuple(rows), False)
    assert merge_prices(rows, live(), T0, 3600) == (tuple(rows), False)


def test_old_live_prices_are_served_marked_stale() -> None:
    later = T0 + timedelta(seconds=3601)

    merged, stale = merge_prices([SNAPSHOT_BEIJING], live(LIVE_BEIJING), later, 3600)

    assert merged == (LIVE_BEIJING,)
    assert stale is True
    assert (
        merge_prices([SNAPSHOT_BEIJING], live(LIVE_BEIJING), T0 + timedelta(seconds=3600), 3600)[1]
        is False
    )


def test_live_prices_past_max_age_fall_back_to_the_snapshot() -> None:
    week_later = T0 + timedelta(days=7, seconds=1)

    merged, stale = merge_prices(
        [SNAPSHOT_BEIJING], live(LIVE_BEIJING), week_later, 3600, max_age_s=7 * 86400
    )

    assert merged == (SNAPSHOT_BEIJING,)
    assert stale is False


def test_select_price_prefers_precedence_then_exact_region() -> None:
    rows = [SNAPSHOT_ROW, SNAPSHOT_BEIJING, LIVE_BEIJING]
    assert select_price(rows, "GN7.2XLARGE32", "ap-beijing", "on_demand") == LIVE_BEIJING
    assert select_price(rows, "GN7.2XLARGE32", "ap-shanghai", "on_demand") == SNAPSHOT_ROW
    assert select_price(
        [SNAPSHOT_ROW, SNAPSHOT_BEIJING], "GN7.2XLARGE32", "ap-beijing", "on_demand"
    ) == (SNAPSHOT_BEIJING)
    assert select_price(rows, "GN7.2XLARGE32", "ap-beijing", "spot") is None


def test_state_without_sdk_or_credentials_is_off_with_reason() -> None:
    state = live_state((False, "credentials not set: TENCENTCLOUD_SECRET_ID"), None, None, T0, 3600)

    assert state.enabled is False
    assert state.reason == "credentials not set: TENCENTCLOUD_SECRET_ID"
    assert state.age_s is None
    assert state.stale is False
    assert state.last_error is None


def test_state_of_a_replica_reading_a_shared_snapshot() -> None:
    snapshot = live(LIVE_BEIJING, fetched_at="2026-11-30T06:00:00Z")
    status = RefreshStatus(
        provider="tencent",
        last_attempt_at="2026-11-30T07:00:00Z",
        last_success_at="2026-11-30T06:00:00Z",
        last_error="ap-beijing: RequestLimitExceeded",
        last_error_at="2026-11-30T07:00:00Z",
        consecutive_failures=2,
    )

    state = live_state((False, "credentials not set"), snapshot, status, T0, 3600)

    assert state.enabled is True  # another process fetched them; this replica serves them
    assert state.reason is None
    assert state.age_s == 7200.0
    assert state.stale is True
    assert state.version == 3
    assert state.price_count == 1
    assert state.last_error == "ap-beijing: RequestLimitExceeded"
    assert state.consecutive_failures == 2
