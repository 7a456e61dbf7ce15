"""``suanli prices refresh`` end to end: plugins -> live sources -> Redis (+ JSON file),
and how each provider finds its live source."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import pytest
from litestar.stores.redis import RedisStore

import plugins.alibaba
import plugins.huawei
import plugins.tencent
import plugins.volcengine
from plugins.alibaba.live import AlibabaLivePrices
from plugins.huawei.live import HuaweiLivePrices
from plugins.tencent.live import TencentLivePrices
from plugins.volcengine.live import VolcengineLivePrices
from service import hookimpl
from service.catalog.live.cli import RefreshReport, refresh_cli
from service.catalog.live.discovery import discover_live_jobs, find_live_source
from service.catalog.live.store import PriceSnapshotStore
from service.catalog.models import InstanceType, LivePriceSource, Price
from service.hooks.loader import PluginManager, get_plugin_manager
from service.runtime.cache import StoreFactory
from service.runtime.catalog_sync import CatalogSync, RedisBoard

from .clouds import CloudCase, tencent
from .conftest import Clock, require_redis
from .standin import StandIn, serve

CLOUD_CREDENTIALS = (
    "ALIBABA_CLOUD_ACCESS_KEY_ID",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    "TENCENTCLOUD_SECRET_ID",
    "TENCENTCLOUD_SECRET_KEY",
    "HUAWEICLOUD_SDK_AK",
    "HUAWEICLOUD_SDK_SK",
    "HUAWEICLOUD_SDK_PROJECT_ID",
    "VOLCENGINE_ACCESS_KEY",
    "VOLCENGINE_SECRET_KEY",
    "SUANLI_VOLCENGINE_PRICE_CODES",
)


class StandInProvider:
    """A provider that is its own LivePriceSource (discovery rule 1), backed by the
    Tencent adapter pointed at the stand-in."""

    display_name = "Stand-in cloud"
    currency = "CNY"

    def __init__(self, name: str, source: LivePriceSource, case: CloudCase) -> None:
        self.name = name
        self._source = source
        self._case = case

    def regions(self) -> Sequence[str]:
        return (self._case.region, "ap-guangzhou")

    def instance_types(self) -> Sequence[InstanceType]:
        return self._case.catalog

    def prices(self, region: str | None = None) -> Sequence[Price]:
        return ()

    def live_prices_available(self) -> tuple[bool, str | None]:
        return self._source.live_prices_available()

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        return self._source.live_prices(region, instance_types)


class ProviderPlugin:
    def __init__(self, *providers: object) -> None:
        self.providers = list(providers)

    @hookimpl
    def suanli_register_providers(self) -> list[object]:
        return self.providers


@pytest.fixture
def no_cloud_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CLOUD_CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SUANLI_REDIS_URL", raising=False)
    monkeypatch.delenv("SUANLI_PLUGINS", raising=False)


@pytest.fixture
def tencent_standin() -> Iterator[tuple[CloudCase, StandIn]]:
    case = tencent()
    with serve(case.answer, case.action_of) as standin:
        yield case, standin


def first_party_manager() -> PluginManager:
    return get_plugin_manager(
        load_entrypoints=False,
        extra_plugins=[plugins.alibaba, plugins.tencent, plugins.huawei, plugins.volcengine],
    )


def test_first_party_plugins_expose_their_live_sources(no_cloud_credentials: None) -> None:
    jobs = {job.name: job for job in discover_live_jobs(first_party_manager())}

    assert isinstance(jobs["alibaba"].source, AlibabaLivePrices)
    assert isinstance(jobs["tencent"].source, TencentLivePrices)
    assert isinstance(jobs["huawei"].source, HuaweiLivePrices)
    assert isinstance(jobs["volcengine"].source, VolcengineLivePrices)
    for job in jobs.values():
        assert job.source is not None
        usable, reason = job.source.live_prices_available()
        assert usable is False
        assert reason is not None
        assert "credentials not set" in reason


def test_plugin_module_factory_and_missing_adapter() -> None:
    class WithFactory:
        @staticmethod
        def make_live_source() -> LivePriceSource:
            return TencentLivePrices()

    source, reason = find_live_source(WithFactory())
    assert isinstance(source, TencentLivePrices)
    assert reason is None
    assert find_live_source(object()) == (None, "provider has no live price adapter")


def test_refresh_without_redis_or_output_is_a_usage_error(
    no_cloud_credentials: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refresh_cli([]) == 2
    assert "nowhere to publish" in capsys.readouterr().err


def test_unknown_provider_is_a_usage_error(
    no_cloud_credentials: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = refresh_cli(
        ["--provider", "nope", "--output", str(tmp_path / "x.json")],
        plugin_manager=first_party_manager(),
    )
    assert code == 2
    assert "unknown provider(s) nope" in capsys.readouterr().err


def test_without_credentials_nothing_changes(
    no_cloud_credentials: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"

    code = refresh_cli(["--output", str(out)], plugin_manager=first_party_manager())

    assert code == 0
    report = msgspec.json.decode(out.read_bytes(), type=RefreshReport)
    assert {r.provider: r.outcome for r in report.results} == {
        "alibaba": "disabled",
        "tencent": "disabled",
        "huawei": "disabled",
        "volcengine": "disabled",
    }
    assert all(r.snapshot is None for r in report.results)
    assert "tencent: live prices off (credentials not set" in capsys.readouterr().out
    # naming a provider that cannot do live prices is an error for a CronJob to notice
    assert (
        refresh_cli(
            ["--provider", "tencent", "--output", str(out)],
            plugin_manager=first_party_manager(),
        )
        == 1
    )


async def test_refresh_publishes_to_redis_and_file(
    no_cloud_credentials: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    tencent_standin: tuple[CloudCase, StandIn],
) -> None:
    url = require_redis()
    monkeypatch.setenv("SUANLI_REDIS_URL", url)
    case, standin = tencent_standin
    name = f"standin-{uuid.uuid4().hex[:10]}"
    provider = StandInProvider(name, case.make_source(standin.url, case.env, Clock()), case)
    pm = get_plugin_manager(load_entrypoints=False, extra_plugins=[ProviderPlugin(provider)])
    out = tmp_path / "report.json"
    root = StoreFactory(url, 1.0).root
    assert isinstance(root, RedisStore)
    reader = PriceSnapshotStore.from_root(root)
    sync = CatalogSync(RedisBoard(root._redis), 30.0)
    generation_before = await sync.current()
    try:
        code = await _run_cli(
            ["--provider", name, "--region", case.region, "--output", str(out)], pm
        )

        assert code == 0
        snapshot = await reader.read(name)
        assert snapshot is not None
        assert snapshot.version == 1
        assert snapshot.regions == (case.region,)
        assert {(p.instance_type, p.billing) for p in snapshot.prices} == set(case.expected)
        assert all(p.source == "live:DescribeZoneInstanceConfigInfos" for p in snapshot.prices)
        report = msgspec.json.decode(out.read_bytes(), type=RefreshReport)
        (result,) = report.results
        assert result.outcome == "published"
        assert result.snapshot == snapshot
        # --region narrowed the refresh: ap-guangzhou was not asked
        assert {r.headers.get("x-tc-region") for r in standin.requests} == {case.region}
        # replicas are told to reload through the shared catalog generation
        assert await sync.current() == (generation_before or 0) + 1
    finally:
        await reader.delete(name)
        if generation_before is None:
            await root.with_namespace("catalog").delete("generation")
        await root._redis.aclose()


async def _run_cli(argv: list[str], pm: PluginManager) -> int:
    """refresh_cli runs its own event loop; run it in a thread from this async test."""
    return await asyncio.to_thread(refresh_cli, argv, plugin_manager=pm)
