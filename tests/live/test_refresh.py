"""Refresh-job rules that do not depend on a cloud: per-region last-good keeping,
outliers kept out, never an empty snapshot over a good one, timeouts, back-off maths.

The source here is a small in-process :class:`LivePriceSource` whose answers the test
scripts per region; the cloud adapters themselves are exercised in test_adapters.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pytest

from service.catalog.live.adapter import live_price
from service.catalog.live.errors import LivePriceError
from service.catalog.live.refresh import RetryPolicy, refresh_delay_s, refresh_provider, sold_in
from service.catalog.live.store import PriceSnapshotStore
from service.catalog.models import Price

from .conftest import Clock, row

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, multiplier=2.0, max_delay_s=0.1)

A100 = row("GT4.4XLARGE96", "A100-40GB", 1)
T4 = row("GN7.2XLARGE32", "T4", 1)
ONLY_SHANGHAI = row("GN10Xp.2XLARGE40", "V100-32GB", 1, regions=("ap-shanghai",))
CATALOG = (A100, T4, ONLY_SHANGHAI)

Answer = list[Price] | Exception | Callable[[], list[Price]]


class ScriptedSource:
    """A live source answering from a per-region script, recording every call."""

    def __init__(self, script: dict[str, Answer]) -> None:
        self.script = script
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def live_prices_available(self) -> tuple[bool, str | None]:
        return True, None

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        self.calls.append((region, tuple(instance_types)))
        answer = self.script[region]
        if isinstance(answer, Exception):
            raise answer
        prices = answer() if callable(answer) else answer
        return [p for p in prices if p.instance_type in instance_types]


def hourly(name: str, region: str, amount: float, as_of: str = "2026-11-30T08:00:00Z") -> Price:
    return live_price(
        instance_type=name,
        region=region,
        billing="on_demand",
        api="StandIn",
        as_of=as_of,
        per_hour=amount,
    )


async def test_failed_region_keeps_its_last_good_prices(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource(
        {
            "ap-beijing": [hourly(A100.instance_type, "ap-beijing", 28.64)],
            "ap-shanghai": [hourly(T4.instance_type, "ap-shanghai", 8.68)],
        }
    )
    regions = ["ap-beijing", "ap-shanghai"]
    first = await refresh_provider("p", source, CATALOG, regions, memory_store, 5, clock=clock)
    assert first.outcome == "published"
    clock.advance(3600)
    source.script["ap-beijing"] = LivePriceError("AuthFailure: signature expired")
    source.script["ap-shanghai"] = [hourly(T4.instance_type, "ap-shanghai", 8.1)]

    second = await refresh_provider(
        "p", source, CATALOG, regions, memory_store, 5, clock=clock, retry=FAST
    )

    assert second.outcome == "published"
    snapshot = await memory_store.read("p")
    assert snapshot is not None
    assert snapshot.version == 2
    by_region = {p.region: p.price_per_hour for p in snapshot.prices}
    assert by_region == {"ap-beijing": 28.64, "ap-shanghai": 8.1}
    assert snapshot.errors == ("ap-beijing: AuthFailure: signature expired",)
    status = await memory_store.read_status("p")
    assert status is not None
    assert status.consecutive_failures == 0
    assert status.last_error == "ap-beijing: AuthFailure: signature expired"
    assert status.last_success_at == "2026-11-30T09:00:00Z"


async def test_refreshing_one_region_carries_the_others_over(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource(
        {
            "ap-beijing": [hourly(A100.instance_type, "ap-beijing", 28.64)],
            "ap-shanghai": [hourly(T4.instance_type, "ap-shanghai", 8.68)],
        }
    )
    await refresh_provider(
        "p", source, CATALOG, ["ap-beijing", "ap-shanghai"], memory_store, 5, clock=clock
    )
    source.script["ap-shanghai"] = [hourly(T4.instance_type, "ap-shanghai", 7.9)]

    await refresh_provider("p", source, CATALOG, ["ap-shanghai"], memory_store, 5, clock=clock)

    snapshot = await memory_store.read("p")
    assert snapshot is not None
    assert sorted((p.region, p.price_per_hour) for p in snapshot.prices) == [
        ("ap-beijing", 28.64),
        ("ap-shanghai", 7.9),
    ]
    assert snapshot.regions == ("ap-beijing", "ap-shanghai")


async def test_answered_region_replaces_its_prices_entirely(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    region = "ap-beijing"
    source = ScriptedSource(
        {
            region: [
                hourly(A100.instance_type, region, 28.64),
                hourly(T4.instance_type, region, 8.68),
            ]
        }
    )
    await refresh_provider("p", source, CATALOG, [region], memory_store, 5, clock=clock)
    source.script[region] = [hourly(T4.instance_type, region, 8.68)]  # A100 no longer quoted

    result = await refresh_provider("p", source, CATALOG, [region], memory_store, 5, clock=clock)

    snapshot = await memory_store.read("p")
    assert snapshot is not None
    assert [p.instance_type for p in snapshot.prices] == [T4.instance_type]
    assert result.missing == (f"{region}/{A100.instance_type}",)


async def test_outliers_are_dropped_and_reported(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    region = "ap-beijing"
    source = ScriptedSource(
        {
            region: [
                hourly(A100.instance_type, region, 0.5),  # far below any A100 price
                hourly(T4.instance_type, region, 8.68),
            ]
        }
    )

    result = await refresh_provider("p", source, CATALOG, [region], memory_store, 5, clock=clock)

    assert result.outcome == "published"
    assert [r.price.instance_type for r in result.rejected] == [A100.instance_type]
    assert "below the plausible on_demand floor" in result.rejected[0].reason
    snapshot = await memory_store.read("p")
    assert snapshot is not None
    assert [p.instance_type for p in snapshot.prices] == [T4.instance_type]
    assert any(e.startswith(f"dropped {A100.instance_type}") for e in snapshot.errors)


async def test_empty_answer_never_replaces_a_good_snapshot(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    region = "ap-beijing"
    source = ScriptedSource({region: [hourly(T4.instance_type, region, 8.68)]})
    first = await refresh_provider("p", source, CATALOG, [region], memory_store, 5, clock=clock)
    source.script[region] = []

    second = await refresh_provider("p", source, CATALOG, [region], memory_store, 5, clock=clock)

    assert second.outcome == "kept_previous"
    assert second.reason == "the API returned no usable price"
    assert await memory_store.read("p") == first.snapshot
    status = await memory_store.read_status("p")
    assert status is not None
    assert status.consecutive_failures == 1


async def test_first_refresh_without_prices_publishes_nothing(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource({"ap-beijing": LivePriceError("AuthFailure")})

    result = await refresh_provider(
        "p", source, CATALOG, ["ap-beijing"], memory_store, 5, clock=clock, retry=FAST
    )

    assert result.outcome == "failed"
    assert result.snapshot is None
    assert await memory_store.read("p") is None
    assert len(source.calls) == 1  # a permanent error is not retried


async def test_hanging_fetch_times_out_and_is_retried(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    def slow() -> list[Price]:
        time.sleep(0.3)
        return [hourly(T4.instance_type, "ap-beijing", 8.68)]

    source = ScriptedSource({"ap-beijing": slow})
    retry = RetryPolicy(attempts=2, base_delay_s=0.01)

    result = await refresh_provider(
        "p", source, CATALOG, ["ap-beijing"], memory_store, 0.05, clock=clock, retry=retry
    )

    assert result.outcome == "failed"
    assert result.regions[0].attempts == 2
    assert result.regions[0].error == "timed out after 0.05 s"


async def test_adapter_bug_is_reported_not_retried(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource({"ap-beijing": KeyError("Price")})

    result = await refresh_provider(
        "p", source, CATALOG, ["ap-beijing"], memory_store, 5, clock=clock, retry=FAST
    )

    assert result.outcome == "failed"
    assert result.regions[0].error == "KeyError: 'Price'"
    assert len(source.calls) == 1


async def test_prices_for_another_region_are_rejected(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource({"ap-beijing": [hourly(T4.instance_type, "ap-guangzhou", 8.68)]})

    result = await refresh_provider(
        "p", source, CATALOG, ["ap-beijing"], memory_store, 5, clock=clock
    )

    assert result.outcome == "failed"
    assert result.rejected[0].reason == "region 'ap-guangzhou', asked for 'ap-beijing'"


async def test_types_are_asked_only_where_the_catalog_sells_them(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource({"ap-beijing": [], "ap-shanghai": []})

    await refresh_provider(
        "p", source, CATALOG, ["ap-beijing", "ap-shanghai"], memory_store, 5, clock=clock
    )

    asked = dict(source.calls)
    assert ONLY_SHANGHAI.instance_type not in asked["ap-beijing"]
    assert ONLY_SHANGHAI.instance_type in asked["ap-shanghai"]
    assert sold_in(T4, "anywhere")  # regions unknown: asked everywhere


def test_retry_delays_double_up_to_the_cap() -> None:
    policy = RetryPolicy(attempts=7, base_delay_s=1.0, multiplier=2.0, max_delay_s=16.0)
    assert [policy.delay_s(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 16.0, 16.0]


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(0, 3600.0), (1, 60.0), (2, 120.0), (3, 240.0), (6, 1920.0), (7, 3600.0), (20, 3600.0)],
)
def test_scheduled_refresh_backs_off_after_failures(failures: int, expected: float) -> None:
    assert refresh_delay_s(failures, interval_s=3600.0, first_retry_s=60.0) == expected
