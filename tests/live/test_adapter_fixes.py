"""The live-adapter fixes from the catalog audit (shared/reference/catalog-audit-2.md §4),
each run with the cloud's real SDK client against its loopback stand-in.

Alibaba: ``DetailInfo.Resource`` matched case-insensitively, the system disk named in
the request and excluded from the price (ESSD-rejecting types asked again without a
disk), ``SpotDuration`` sent explicitly. Tencent: regions outside the API's region list
refused without a call. Huawei: ModelArts flavors never sent to BSS. Volcano: ``Count``
sent, ``DiscountAmount`` read correctly whether it is the total or the saving.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from plugins.alibaba.live import AlibabaLivePrices, instance_line
from plugins.huawei.live import HuaweiLivePrices, priceable
from plugins.volcengine.live import paid_amount
from service.catalog.live.errors import LivePriceError

from .cloud_alibaba import AlibabaPrices
from .cloud_alibaba import action_of as alibaba_action
from .clouds import huawei, tencent, volcengine
from .conftest import Clock
from .standin import StandIn, serve

ALI_ENV = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "ak", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "sk"}
REGION = "cn-beijing"
A100 = "ecs.gn7e-c16g1.4xlarge"
GN5 = "ecs.gn5-c4g1.xlarge"


@pytest.fixture
def ali_prices() -> AlibabaPrices:
    return AlibabaPrices(
        hourly={(REGION, A100): 34.74, (REGION, GN5): 12.0},
        monthly={(REGION, A100): 16800.0},
        spot={(REGION, A100): [("cn-beijing-h", "2026-11-30T07:00:00Z", 11.9)]},
        essd_rejected={GN5},
    )


@pytest.fixture
def ali(ali_prices: AlibabaPrices) -> Iterator[StandIn]:
    with serve(ali_prices.answer, alibaba_action) as server:
        yield server


def ali_source(server: StandIn, clock: Clock, **kw: Any) -> AlibabaLivePrices:
    return AlibabaLivePrices(endpoint=server.url, environ=ALI_ENV, timeout_s=5, clock=clock, **kw)


def params(request: Any) -> dict[str, str]:
    return {**request.query, **request.form()}


@pytest.mark.parametrize("resource", ["instanceType", "InstanceType", "INSTANCETYPE"])
def test_alibaba_instance_line_is_found_in_any_case(
    ali_prices: AlibabaPrices, ali: StandIn, clock: Clock, resource: str
) -> None:
    ali_prices.instance_resource = resource
    source = ali_source(ali, clock, billings=("on_demand",))
    (price,) = source.live_prices(REGION, [A100])
    assert price.price_per_hour == pytest.approx(34.74), "the 0.3 system disk is not counted"
    assert "instance line" in (price.notes or "")


def test_alibaba_request_names_the_system_disk_and_spot_duration(
    ali: StandIn, clock: Clock
) -> None:
    source = ali_source(ali, clock)
    source.live_prices(REGION, [A100])
    price_calls = [params(r) for r in ali.requests if r.action == "DescribePrice"]
    assert price_calls
    assert all(p.get("SystemDisk.Category") == "cloud_essd" for p in price_calls)
    assert all(p.get("SystemDisk.PerformanceLevel") == "PL0" for p in price_calls)
    spot_calls = [params(r) for r in ali.requests if r.action == "DescribeSpotPriceHistory"]
    assert [p.get("SpotDuration") for p in spot_calls] == ["1"]


def test_alibaba_essd_rejecting_type_is_asked_again_without_a_disk(
    ali: StandIn, clock: Clock
) -> None:
    source = ali_source(ali, clock, billings=("on_demand",))
    (price,) = source.live_prices(REGION, [GN5])
    assert price.price_per_hour == pytest.approx(12.0)
    calls = [params(r) for r in ali.requests if r.action == "DescribePrice"]
    assert [c.get("SystemDisk.Category") for c in calls] == ["cloud_essd", None]


def test_alibaba_unitemized_total_is_labelled(
    ali_prices: AlibabaPrices, ali: StandIn, clock: Clock
) -> None:
    ali_prices.itemized = False
    source = ali_source(ali, clock, billings=("on_demand",))
    (price,) = source.live_prices(REGION, [A100])
    assert price.price_per_hour == pytest.approx(34.74 + 0.3)
    assert "including a 40 GiB ESSD PL0 system disk" in (price.notes or "")


class Line:
    def __init__(self, resource: str, trade_price: float) -> None:
        self.resource, self.trade_price = resource, trade_price


def test_alibaba_instance_line_without_an_instance_entry_subtracts_the_others() -> None:
    amount, how = instance_line([Line("systemDisk", 0.3), Line("image", 1.2)], 20.0, "t")
    assert amount == pytest.approx(18.5)
    assert how == "total minus the itemized disk/image lines"


def test_tencent_refuses_regions_outside_the_api_list_without_a_call(clock: Clock) -> None:
    case = tencent()
    with serve(case.answer, case.action_of) as server:
        source = case.make_source(server.url, case.env, clock)
        with pytest.raises(LivePriceError, match="supported-region list"):
            source.live_prices("ap-mumbai", case.names)
        assert server.requests == []


def test_tencent_catalog_regions_follow_the_api_list() -> None:
    from plugins.tencent.provider import load_provider

    provider = load_provider()
    assert "ap-mumbai" not in provider.regions()
    assert all("ap-mumbai" not in row.regions for row in provider.instance_types())


def test_huawei_modelarts_flavors_are_never_sent_to_bss(clock: Clock) -> None:
    case = huawei()
    assert not priceable("modelarts.bm.npu.arm.8snt9b2.d")
    assert priceable("p2s.2xlarge.8")
    with serve(case.answer, case.action_of) as server:
        source = case.make_source(server.url, case.env, clock)
        assert isinstance(source, HuaweiLivePrices)
        assert source.live_prices(case.region, ["modelarts.bm.arm.24u.npu.1snt9b"]) == []
        assert server.requests == []
        priced = source.live_prices(case.region, [*case.names, "modelarts.bm.npu.arm.4snt9b1"])
        assert "modelarts.bm.npu.arm.4snt9b1" not in {p.instance_type for p in priced}
        assert priced


@pytest.mark.parametrize(
    ("original", "discount", "price", "assume", "paid"),
    [
        ("100", "50", "50", "total", 50.0),  # the Renew doc's example: DiscountAmount = total
        ("100", "20", "80", "total", 80.0),  # Price shows DiscountAmount is the saving
        ("100", "20", None, "total", 20.0),  # no Price: the stated assumption (total)
        ("100", "20", None, "saving", 80.0),  # operator says: saving
        ("100", "0", None, "total", 100.0),  # 0 is no discount, never a free instance
        ("100", "", None, "total", 100.0),
    ],
)
def test_volcano_discount_amount_read_both_ways(
    original: str, discount: str, price: str | None, assume: str, paid: float
) -> None:
    amount, how = paid_amount(original, discount, price, assume)  # type: ignore[arg-type]
    assert amount == pytest.approx(paid)
    assert how


def test_volcano_discount_above_original_is_rejected() -> None:
    amount, how = paid_amount("10", "12", None)
    assert amount is None
    assert "above OriginalAmount" in how


@pytest.mark.parametrize("meaning", ["total", "saving"])
def test_volcano_adapter_prices_the_same_whatever_discount_amount_means(
    clock: Clock, meaning: str
) -> None:
    case = volcengine()
    prices = case.extra["prices"]
    prices.discount_means = meaning
    with serve(case.answer, case.action_of) as server:
        source = case.make_source(server.url, case.env, clock)
        got = {
            (p.instance_type, p.billing): p.price_per_hour
            for p in source.live_prices(case.region, case.names)
        }
        for key, (per_hour, _, _) in case.expected.items():
            assert got[key] == pytest.approx(per_hour), (meaning, key)
        bodies = [r.json() for r in server.requests]
        items = [item for body in bodies for item in body.get("ConfigList", [])]  # type: ignore[attr-defined]
        assert items
        assert all(item.get("Count") == 1 and item.get("Quantity") == 1 for item in items)
