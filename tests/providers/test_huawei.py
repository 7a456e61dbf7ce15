"""The Huawei Cloud plugin: contract, sourced spot checks, Ascend identity, coverage, prices.

Spot checks pin the numbers of the reference rows (OTC edition of Huawei's ECS tables,
ModelArts API examples, measured nodes), so a catalog edit that changes a fact must change
the test too, and say why. Ascend chip identity is the fragile part: ``snt9b1`` is a
measured 910B4 (32 GB) while ``snt9b3`` is only *reported* as 910B3 (64 GB), so the tests
also pin the confidence each mapping carries.
"""

from __future__ import annotations

import pytest

from plugins.huawei import (
    ascend_accelerators,
    suanli_register_accelerators,
    suanli_register_providers,
)
from plugins.huawei.provider import load_provider
from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import ALL_REGIONS, InstanceType
from tests.providers import CANONICAL_ACCELERATORS, BuiltinContract, assert_row, rows_fixture


class TestHuaweiContract(BuiltinContract):
    load = staticmethod(load_provider)
    hook = staticmethod(suanli_register_providers)
    name = "huawei"
    display_name = "Huawei Cloud (华为云)"


rows = rows_fixture(load_provider)


@pytest.fixture(scope="module")
def registry() -> AcceleratorRegistry:
    return AcceleratorRegistry([*ascend_accelerators(), *builtin_accelerators()])


def test_hook_registers_the_ascend_specs() -> None:
    specs = suanli_register_accelerators()
    assert [s.name for s in specs] == [
        "Ascend-910",
        "Ascend-910B1",
        "Ascend-910B2",
        "Ascend-910B3",
        "Ascend-910B4",
        "Ascend-310P",
    ]
    assert all(s.vendor == "Huawei" and s.stack == "cann" for s in specs)


def test_ascend_specs_are_canonical_and_alias_clean(registry: AcceleratorRegistry) -> None:
    assert {s.name for s in ascend_accelerators()} <= CANONICAL_ACCELERATORS
    assert registry.alias_conflicts == ()
    for spec in ascend_accelerators():
        for alias in spec.aliases:
            resolved = registry.resolve(alias)
            assert resolved is not None, alias
            assert resolved.name == spec.name, alias
    for family in ("910B", "snt9b", "Ascend"):
        assert registry.resolve(family) is None, f"{family!r} is a family, not one chip"


@pytest.mark.parametrize(
    ("name", "accelerator", "count", "acc_mem", "vcpus", "mem", "net"),
    [
        ("pi2.2xlarge.4", "T4", 1, 16.0, 8, 32.0, 10.0),
        ("pi2.8xlarge.4", "T4", 4, 16.0, 32, 128.0, 25.0),
        ("g6.4xlarge.4", "T4", 1, 16.0, 16, 64.0, 25.0),
        ("p2s.2xlarge.8", "V100-32GB-PCIe", 1, 32.0, 8, 64.0, 10.0),
        ("p2s.16xlarge.8", "V100-32GB-PCIe", 8, 32.0, 64, 512.0, 30.0),
        ("p2v.8xlarge.8", "V100-16GB", 4, 16.0, 32, 256.0, 25.0),
        ("p1.4xlarge.8", "P100", 2, 16.0, 16, 128.0, 8.0),
        ("modelarts.bm.snt9.xlarge.8", "Ascend-910", 8, 32.0, 192, 768.0, None),
        ("modelarts.bm.snt9.xlarge.2", "Ascend-910", 2, 32.0, 48, 192.0, None),
        ("modelarts.bm.arm.24u.npu.1snt9b", "Ascend-910B3", 1, 64.0, 24, 192.0, None),
    ],
)
def test_accelerator_spot_checks(
    rows: dict[str, InstanceType],
    name: str,
    accelerator: str,
    count: int,
    acc_mem: float,
    vcpus: int,
    mem: float,
    net: float | None,
) -> None:
    assert_row(rows[name], accelerator, count, acc_mem, vcpus, mem, network_gbps=net)


def test_p1_keeps_its_local_nvme_and_legacy_flag(rows: dict[str, InstanceType]) -> None:
    row = rows["p1.8xlarge.8"]
    assert row.local_nvme == "4x800 GiB NVMe"
    assert row.confidence == "low"
    assert row.as_of == "2022-03"


@pytest.mark.parametrize(
    ("name", "vcpus", "mem", "net"),
    [
        ("c3.2xlarge.2", 8, 16.0, 5.0),
        ("c3.15xlarge.2", 60, 128.0, 17.0),
        ("c3.8xlarge.4", 32, 128.0, 15.0),
        ("c7.2xlarge.2", 8, 16.0, None),
        ("c7.8xlarge.2", 32, 64.0, None),
    ],
)
def test_cpu_spot_checks(
    rows: dict[str, InstanceType], name: str, vcpus: int, mem: float, net: float | None
) -> None:
    row = rows[name]
    assert row.is_cpu_only
    assert row.accelerator_count == 0
    assert (row.vcpus, row.memory_gib, row.network_gbps) == (vcpus, mem, net)
    assert row.missing_fields == ()


def test_ascend_rows_use_cann_specs(
    rows: dict[str, InstanceType], registry: AcceleratorRegistry
) -> None:
    ascend = [r for r in rows.values() if r.accelerator and r.accelerator.startswith("Ascend")]
    assert len(ascend) == 8
    for row in ascend:
        assert row.accelerator is not None
        spec = registry.get(row.accelerator)
        assert spec.stack == "cann", row.instance_type
        assert spec.vendor == "Huawei"
        assert row.instance_type.startswith("modelarts.bm."), row.instance_type
        if row.accelerator_memory_gib is not None:
            assert row.accelerator_memory_gib == spec.memory_gib, row.instance_type


def test_snt9b_identity_follows_the_reference(rows: dict[str, InstanceType]) -> None:
    """snt9b1 = 910B4 was measured; snt9b3/snt9b2 = 910B3 is reported only, so low."""
    measured = rows["modelarts.bm.npu.arm.4snt9b1"]
    assert (measured.accelerator, measured.accelerator_count) == ("Ascend-910B4", 4)
    assert measured.accelerator_memory_gib == 32.0
    # the measuring user's record has no public address, so the row is low confidence
    assert measured.confidence == "low"
    for name, row in rows.items():
        if "snt9b3" in name or "snt9b2" in name or "d910b" in name or name.endswith("1snt9b"):
            assert row.accelerator == "Ascend-910B3", name
            assert row.confidence == "low", name
            assert row.notes, name


def test_ascend_skus_are_whole_nodes(rows: dict[str, InstanceType]) -> None:
    """Every Ascend 910B/910 row carries cards per node, NPU memory, vCPU and RAM, so
    multi-card Ascend jobs can be planned; the interconnect is named in the notes."""
    ascend = {n: r for n, r in rows.items() if r.accelerator and r.accelerator.startswith("Ascend")}
    assert {n for n, r in ascend.items() if r.missing_fields} == set()
    node = rows["modelarts.bm.npu.arm.8snt9b2.d"]
    assert (node.accelerator_count, node.accelerator_memory_gib) == (8, 64.0)
    assert (node.vcpus, node.memory_gib) == (192, 1536.0)
    assert node.confidence == "low", "taken from the per-NPU pattern, not published for it"
    four = rows["modelarts.bm.npu.arm.4snt9b1"]
    assert (four.vcpus, four.memory_gib, four.accelerator_memory_gib) == (96, 768.0, 32.0)
    for name in ("modelarts.bm.npu.arm.8snt9b2.d", "modelarts.bm.arm.48u.384g.npu.2d910b"):
        assert "HCCS" in (rows[name].notes or ""), name


def test_coverage_floor(rows: dict[str, InstanceType]) -> None:
    accelerated = [r for r in rows.values() if not r.is_cpu_only]
    cpu = [r for r in rows.values() if r.is_cpu_only]
    assert len(accelerated) == 23
    assert len(cpu) == 10
    assert {r.accelerator for r in accelerated} == {
        "T4",
        "V100-16GB",
        "V100-32GB-PCIe",
        "P100",
        "Ascend-910",
        "Ascend-910B3",
        "Ascend-910B4",
    }
    gpu_families = {r.family for r in accelerated if not r.family.startswith("modelarts")}
    assert gpu_families == {"pi2", "p2s", "p2v", "g6", "p1"}
    assert {r.family for r in cpu} == {"c3", "c7"}


def test_otc_only_and_unidentified_flavors_are_left_out(rows: dict[str, InstanceType]) -> None:
    """OTC-only sizes, GPU models nobody confirmed, and NPU counts nobody published."""
    for name in ("pi2.3xlarge.4", "pi2.16xlarge.4", "g6.10xlarge.7", "g6.20xlarge.7"):
        assert name not in rows, "OTC-only size, absent from the Huawei flavor list"
    for prefix in ("pi1.", "p2vs.", "ai1s.", "kai1s.", "p3.", "p5", "pi5e.", "g7."):
        assert not [n for n in rows if n.startswith(prefix)], prefix
    assert "g6.xlarge.4" not in rows, "GPU count unknown"


def test_rows_are_sourced_and_flavor_names_look_like_huawei_ids(
    rows: dict[str, InstanceType],
) -> None:
    for name, row in rows.items():
        assert " " not in name
        assert name == name.lower() or name.startswith("modelarts."), name
        assert len(row.source) > 40, name
    ecs = [r for r in rows.values() if not r.instance_type.startswith("modelarts.")]
    assert all(r.instance_type.split(".")[0] == r.family for r in ecs)


def test_regions() -> None:
    provider = load_provider()
    regions = list(provider.regions())
    assert {"cn-north-4", "cn-east-3", "cn-southwest-2", "af-south-1", "ap-southeast-3"} <= set(
        regions
    )
    assert len(regions) == 26, "the ECS region ids of the Huawei SDK"
    rows = {r.instance_type: r for r in provider.instance_types()}
    assert rows["modelarts.bm.arm.48u.384g.npu.2d910b"].regions == ("af-south-1",)
    assert rows["modelarts.bm.arm.24u.npu.1snt9b"].regions == ("cn-southwest-2",)
    assert rows["c7.2xlarge.2"].regions == ("cn-north-4",)
    # a 2026-07 Beijing-4 console check: P2v up to 8 cards, P2s capped at 2 cards there
    assert rows["p2v.16xlarge.8"].regions == ("cn-north-4",)
    assert rows["p2s.4xlarge.8"].regions == ("cn-north-4",)
    assert rows["p2s.16xlarge.8"].regions == (), "no source says where it is sold"
    assert "Open Telekom Cloud" in (rows["p2s.16xlarge.8"].regions_note or "")
    # the same plan offers "a cheaper T4 (Pi2)" there: the family, each size placed with it
    for size in ("pi2.2xlarge.4", "pi2.4xlarge.4", "pi2.8xlarge.4"):
        assert rows[size].regions == ("cn-north-4",), size
        assert "Pi2" in (rows[size].regions_note or ""), size
    assert rows["g6.4xlarge.4"].regions == (), "no source places the g6 flavor"
    # no public record places any accelerated Huawei row in cn-east-3 (Shanghai-1)
    assert not [r for r in rows.values() if "cn-east-3" in r.regions and not r.is_cpu_only]


def test_the_only_price_is_the_quoted_modelarts_snt9b3_price() -> None:
    provider = load_provider()
    prices = list(provider.prices())
    assert len(prices) == 1
    price = prices[0]
    assert price.instance_type == "modelarts.bm.arm.24u.npu.1snt9b"
    assert (price.region, price.billing, price.price_per_hour) == (ALL_REGIONS, "on_demand", 29.55)
    assert price.price_per_month is None
    assert not price.estimated
    assert price.as_of == "2026-05-15"
    assert price.notes
    assert "region is not stated" in price.notes
    assert provider.prices("cn-southwest-2") == (price,), "a '*' price applies in every region"
