"""The Tencent Cloud plugin: contract, sourced spot checks, coverage and list prices.

Spot checks pin numbers read from Tencent's own spec tables (GPU 计算型实例, CVM 实例规格)
and price page (价格总览), so an edit of the catalog that changes a fact must change the
test too (and say why).
"""

from __future__ import annotations

import math

import pytest

from plugins.tencent import suanli_register_providers
from plugins.tencent.provider import load_provider
from service.catalog.models import ALL_REGIONS, HOURS_PER_MONTH, InstanceType
from tests.providers import BuiltinContract, assert_row, rows_fixture


class TestTencentContract(BuiltinContract):
    load = staticmethod(load_provider)
    hook = staticmethod(suanli_register_providers)
    name = "tencent"
    display_name = "Tencent Cloud (腾讯云)"


rows = rows_fixture(load_provider)


@pytest.mark.parametrize(
    ("name", "accelerator", "count", "gpu_mem", "vcpus", "mem", "net"),
    [
        ("GN7.2XLARGE32", "T4", 1, 16.0, 8, 32.0, 3.0),
        ("GN7.20XLARGE320", "T4", 4, 16.0, 80, 320.0, 25.0),
        ("GN7vi.10XLARGE160", "T4", 2, 16.0, 40, 160.0, 13.0),
        ("GI3X.22XLARGE226", "T4", 2, 16.0, 90, 226.0, 13.0),
        ("GT4.4XLARGE96", "A100-40GB", 1, 40.0, 16, 96.0, 5.0),
        ("GT4.41XLARGE948", "A100-40GB", 8, 40.0, 164, 948.0, 50.0),
        ("GN10Xp.2XLARGE40", "V100-32GB", 1, 32.0, 10, 40.0, 3.0),
        ("GN10Xp.20XLARGE320", "V100-32GB", 8, 32.0, 80, 320.0, 24.0),
        ("GN10X.2XLARGE40", "V100-32GB", 1, 32.0, 8, 40.0, 3.0),
        ("PNV4.7XLARGE116", "A10", 1, 24.0, 28, 116.0, 13.0),
        ("PNV4.56XLARGE932", "A10", 8, 24.0, 224, 932.0, 100.0),
        ("GN8.LARGE56", "P40", 1, 24.0, 6, 56.0, 1.5),
        ("GN6.7XLARGE48", "P4", 1, 8.0, 28, 48.0, 5.0),
        ("GN6S.2XLARGE40", "P4", 2, 8.0, 8, 40.0, 9.0),
        # bare metal (CBM spec table, one size per family)
        ("BMGNV4", "A10", 16, 24.0, 208, 768.0, 25.0),
        ("BMG5t", "T4", 4, 16.0, 96, 384.0, 25.0),
        ("BMG5v", "V100-32GB", 8, 32.0, 96, 384.0, 25.0),
    ],
)
def test_gpu_spot_checks(
    rows: dict[str, InstanceType],
    name: str,
    accelerator: str,
    count: int,
    gpu_mem: float,
    vcpus: int,
    mem: float,
    net: float,
) -> None:
    # no Tencent source states the cluster network of these types: rdma stays unknown
    assert_row(rows[name], accelerator, count, gpu_mem, vcpus, mem, network_gbps=net, rdma=None)


def test_gn10xp_is_v100_not_a100(rows: dict[str, InstanceType]) -> None:
    """Correction: secondary articles call GN10Xp.2XLARGE40 an A100; Tencent says V100 32GB."""
    gn10xp = [r for r in rows.values() if r.family == "GN10Xp"]
    assert len(gn10xp) == 4
    assert {r.accelerator for r in gn10xp} == {"V100-32GB"}


def test_pnv5b_l20_is_low_confidence_and_says_tencent_does_not_name_it(
    rows: dict[str, InstanceType],
) -> None:
    pnv5b = [r for r in rows.values() if r.family == "PNV5b"]
    assert len(pnv5b) == 8
    for row in pnv5b:
        assert row.accelerator == "L20"
        assert row.accelerator_memory_gib == 48.0
        assert row.confidence == "low"
        assert row.notes
        assert "unnamed" in row.notes
    assert rows["PNV5b.96XLARGE1536"].accelerator_count == 8
    assert rows["PNV5b.96XLARGE1536"].vcpus == 384


BARE_METAL_CITIES = {
    "BMGNV4": {"ap-beijing", "ap-shanghai", "ap-guangzhou"},
    "BMG5t": {
        "ap-beijing",
        "ap-shanghai",
        "ap-guangzhou",
        "ap-nanjing",
        "ap-chongqing",
        "ap-hongkong",
        "ap-singapore",
        "ap-seoul",
        "na-siliconvalley",
        "na-ashburn",
    },
    "BMG5v": {"ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-chongqing"},
}
"""Tencent's CBM 实例售卖地域 page: cities per bare-metal GPU family, no zones."""


def test_bare_metal_gpu_types_carry_the_cities_of_the_cbm_region_page(
    rows: dict[str, InstanceType],
) -> None:
    for name, regions in BARE_METAL_CITIES.items():
        row = rows[name]
        assert set(row.regions) == regions, name
        assert row.zones == (), name
        assert "裸金属云服务器实例规格" in row.source, name
        assert "实例售卖地域" in (row.regions_note or ""), name


def test_unmatched_and_fractional_gpu_rows_are_left_out(rows: dict[str, InstanceType]) -> None:
    """PNV6's 96 GB GPU is unnamed and matches no model; vGPU slices are not whole GPUs."""
    assert not [name for name in rows if name.startswith("PNV6.")]
    assert "GN7.LARGE20" not in rows
    assert "GN7.2XLARGE40" not in rows


@pytest.mark.parametrize(
    ("name", "family", "vcpus", "mem", "net"),
    [
        ("S6.2XLARGE16", "S6", 8, 16.0, 7.0),
        ("S6.8XLARGE128", "S6", 32, 128.0, 26.0),
        ("S6.12XLARGE192", "S6", 48, 192.0, 39.0),
        ("SA3.4XLARGE32", "SA3", 16, 32.0, 7.0),
        ("SA3.8XLARGE64", "SA3", 32, 64.0, 14.0),
        ("M6.4XLARGE128", "M6", 16, 128.0, 13.0),
        ("M6.16XLARGE512", "M6", 64, 512.0, 52.0),
    ],
)
def test_cpu_spot_checks(
    rows: dict[str, InstanceType], name: str, family: str, vcpus: int, mem: float, net: float
) -> None:
    row = rows[name]
    assert row.is_cpu_only
    assert row.family == family
    assert (row.vcpus, row.memory_gib, row.network_gbps) == (vcpus, mem, net)
    assert "实例规格" in row.source


def test_coverage_floor(rows: dict[str, InstanceType]) -> None:
    gpu = [r for r in rows.values() if not r.is_cpu_only]
    cpu = [r for r in rows.values() if r.is_cpu_only]
    assert len(gpu) >= 30
    assert len(cpu) >= 5
    families = {r.family for r in gpu}
    required = {"GN7", "GN7vi", "PNV4", "GT4", "GN10X", "GN10Xp", "GI3X"}
    assert required <= families, required - families


def test_gpu_rows_have_the_fields_the_planner_needs(rows: dict[str, InstanceType]) -> None:
    for row in rows.values():
        assert row.missing_fields == (), (row.instance_type, row.missing_fields)


def test_regions_follow_the_per_family_availability(rows: dict[str, InstanceType]) -> None:
    assert rows["GN6.7XLARGE48"].regions == ("ap-chengdu",)
    assert set(rows["PNV4.7XLARGE116"].regions) == {"ap-guangzhou", "ap-shanghai", "ap-beijing"}
    assert set(rows["GN7vi.5XLARGE80"].regions) == {"ap-shanghai", "ap-nanjing"}
    assert "na-ashburn" in rows["GN7.2XLARGE32"].regions  # 弗吉尼亚
    # public user records (TKE qGPU demo, a TACO-X benchmark, an RL training archive): Tokyo
    for name in ("PNV5b.8XLARGE96", "PNV5b.16XLARGE192", "PNV5b.32XLARGE384", "PNV5b.48XLARGE768"):
        assert rows[name].regions == ("ap-tokyo",), name
    assert rows["PNV5b.48XLARGE768"].zones == ("ap-tokyo-2",)
    assert "taco-vllm-demo" in (rows["PNV5b.16XLARGE192"].regions_note or "")
    assert rows["PNV5b.12XLARGE192"].regions == ()  # no source says where: unknown
    assert rows["S6.2XLARGE16"].regions == ()


def test_list_prices_of_gn7_2xlarge32() -> None:
    provider = load_provider()
    by_key = {(p.instance_type, p.billing): p for p in provider.prices()}
    on_demand = by_key[("GN7.2XLARGE32", "on_demand")]
    assert on_demand.price_per_hour == 8.68
    assert on_demand.price_per_month is None
    monthly = by_key[("GN7.2XLARGE32", "monthly")]
    assert monthly.price_per_month == 2500.0
    assert monthly.price_per_hour == pytest.approx(2500.0 / HOURS_PER_MONTH)
    assert by_key[("GT4.41XLARGE948", "on_demand")].price_per_hour == 237.51
    assert by_key[("GT4.41XLARGE948", "monthly")].price_per_month == 114016.0


def test_prices_are_stale_list_prices_without_region() -> None:
    provider = load_provider()
    prices = list(provider.prices())
    assert len(prices) == 56
    names = {row.instance_type for row in provider.instance_types()}
    priced = {p.instance_type for p in prices}
    assert priced <= names
    assert len(priced) == 28
    for price in prices:
        assert price.region == ALL_REGIONS
        assert price.as_of == "2021"
        assert not price.estimated
        assert price.notes
        assert "disks/network extra" in price.notes
        if price.billing == "monthly":
            assert price.price_per_month is not None
            assert price.price_per_hour is not None
            assert math.isclose(price.price_per_hour, price.price_per_month / HOURS_PER_MONTH)
    for name in priced:  # the page gives both billing modes for every size it lists
        assert {p.billing for p in prices if p.instance_type == name} == {"on_demand", "monthly"}
    # a "*" list price applies wherever the type is sold
    assert len(provider.prices("ap-guangzhou")) == 56


def test_types_without_a_published_price_stay_unpriced() -> None:
    priced = {p.instance_type for p in load_provider().prices()}
    for name in ("PNV4.7XLARGE116", "GN7vi.5XLARGE80", "PNV5b.8XLARGE96", "S6.2XLARGE16"):
        assert name not in priced
