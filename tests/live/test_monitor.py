"""The in-memory view the request path reads, and the in-service refresh schedule."""

from __future__ import annotations

import asyncio

from service.catalog.live.discovery import LiveJob
from service.catalog.live.monitor import LivePriceMonitor
from service.catalog.live.schedule import run_refresh_schedule
from service.catalog.live.store import LiveSnapshot, PriceSnapshotStore
from service.catalog.models import InstanceType, Price

from .conftest import Clock
from .test_merge_and_status import LIVE_BEIJING, SNAPSHOT_BEIJING, SNAPSHOT_ROW
from .test_refresh import CATALOG, ScriptedSource, hourly


async def test_monitor_layers_live_prices_and_reports_age(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    await memory_store.publish(
        LiveSnapshot(provider="tencent", fetched_at="2026-11-30T08:00:00Z", prices=(LIVE_BEIJING,))
    )
    monitor = LivePriceMonitor(memory_store, {"tencent": None, "huawei": None}, 3600, clock=clock)

    shipped = [SNAPSHOT_ROW, SNAPSHOT_BEIJING]
    assert monitor.price_layer("tencent", shipped) == tuple(shipped)  # not loaded yet
    await monitor.load()

    layered = monitor.price_layer("tencent", shipped)
    assert set(layered) == {SNAPSHOT_ROW, LIVE_BEIJING}
    assert monitor.price_layer("huawei", [SNAPSHOT_ROW]) == (SNAPSHOT_ROW,)
    assert monitor.info("tencent").enabled is True
    assert monitor.info("huawei").reason == "provider has no live price adapter"
    clock.advance(3601)  # no reload needed for the age to move
    assert monitor.stale("tencent") is True
    assert monitor.info("tencent").age_s == 3601.0


async def test_schedule_refreshes_announces_and_stops(
    memory_store: PriceSnapshotStore, clock: Clock
) -> None:
    source = ScriptedSource({"ap-beijing": [hourly("GN7.2XLARGE32", "ap-beijing", 8.68)]})
    job = LiveJob(provider=_Provider(CATALOG), source=source)
    stop = asyncio.Event()
    announced: list[int] = []

    async def announce() -> None:
        announced.append(len(source.calls))
        stop.set()

    await asyncio.wait_for(
        run_refresh_schedule(
            [job], memory_store, stop, interval_s=60, timeout_s=5, on_published=announce
        ),
        timeout=5,
    )

    assert announced == [1]
    snapshot = await memory_store.read("scripted")
    assert snapshot is not None
    assert [p.price_per_hour for p in snapshot.prices] == [8.68]


class _Provider:
    name = "scripted"
    display_name = "Scripted"
    currency = "CNY"

    def __init__(self, catalog: tuple[InstanceType, ...]) -> None:
        self._catalog = catalog

    def regions(self) -> tuple[str, ...]:
        return ("ap-beijing",)

    def instance_types(self) -> tuple[InstanceType, ...]:
        return self._catalog

    def prices(self, region: str | None = None) -> tuple[Price, ...]:
        return ()
