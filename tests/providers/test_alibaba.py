"""The Alibaba Cloud plugin: contract, sourced spot checks, coverage and known corrections.

Spot checks pin numbers read from Alibaba's own instance-family pages, so an edit of the
catalog that changes a fact must change the test too (and say why).
"""

from __future__ import annotations

import math
import re

import pytest

from plugins.alibaba import suanli_register_providers
from plugins.alibaba.provider import load_provider
from service.catalog.models import HOURS_PER_MONTH, InstanceType
from tests.providers import BuiltinContract, assert_row, rows_fixture


class TestAlibabaContract(BuiltinContract):
    load = staticmethod(load_provider)
    hook = staticmethod(suanli_register_providers)
    name = "alibaba"
    display_name = "Alibaba Cloud (阿里云)"


rows = rows_fixture(load_provider)


@pytest.mark.parametrize(
    ("name", "accelerator", "count", "gpu_mem", "vcpus", "mem", "rdma"),
    [
        ("ecs.gn7i-c8g1.2xlarge", "A10", 1, 24.0, 8, 30.0, None),
        ("ecs.gn6i-c4g1.xlarge", "T4", 1, 16.0, 4, 15.0, None),
        ("ecs.gn6v-c8g1.16xlarge", "V100-16GB", 8, 16.0, 64, 256.0, None),
        ("ecs.gn6e-c12g1.3xlarge", "V100-32GB", 1, 32.0, 12, 92.0, None),
        ("ecs.gn7-c12g1.3xlarge", "A100-40GB", 1, 40.0, 12, 94.0, None),
        ("ecs.gn7s-c8g1.2xlarge", "A30", 1, 24.0, 8, 60.0, None),
        ("ecs.gn8is-8x.32xlarge", "L20", 8, 48.0, 128, 1024.0, "erdma"),
        ("ecs.ebmgn8is.32xlarge", "L20", 8, 48.0, 128, 1024.0, "erdma"),
        ("ecs.gn8v-8x.48xlarge", "H20", 8, 96.0, 192, 1024.0, "erdma"),
        ("ecs.gn5i-c4g1.xlarge", "P4", 1, 8.0, 4, 16.0, None),
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
    rdma: str | None,
) -> None:
    assert_row(rows[name], accelerator, count, gpu_mem, vcpus, mem, rdma=rdma)


def test_network_figures_are_baseline_bandwidth(rows: dict[str, InstanceType]) -> None:
    assert rows["ecs.gn7i-c8g1.2xlarge"].network_gbps == 16.0
    assert rows["ecs.gn6i-c4g1.xlarge"].network_gbps == 4.0
    assert rows["ecs.ebmgn8is.32xlarge"].network_gbps == 160.0  # 80 x 2


@pytest.mark.parametrize(
    ("name", "vcpus", "mem"),
    [
        ("ecs.c7.2xlarge", 8, 16.0),
        ("ecs.c7.16xlarge", 64, 128.0),
        ("ecs.g7.4xlarge", 16, 64.0),
        ("ecs.r7.8xlarge", 32, 256.0),
        ("ecs.r7.32xlarge", 128, 1024.0),
    ],
)
def test_cpu_spot_checks(rows: dict[str, InstanceType], name: str, vcpus: int, mem: float) -> None:
    row = rows[name]
    assert row.is_cpu_only
    assert (row.vcpus, row.memory_gib) == (vcpus, mem)


def test_unnamed_gpu_models_are_flagged_low_or_medium(rows: dict[str, InstanceType]) -> None:
    """Alibaba names no model for gn8v (H20) or gn7e (A100-80GB): never 'high'."""
    for row in rows.values():
        if row.family in {"gn8v", "gn8v-tee", "ebmgn8v"}:
            assert row.accelerator == "H20"
            assert row.confidence == "low"
            assert row.notes
            assert "NOT named" in row.notes
        if row.family in {"gn7e", "ebmgn7e"}:
            assert row.accelerator == "A100-80GB"
            assert row.confidence != "high"
            assert row.notes
            assert "not named" in row.notes


def test_coverage_floor(rows: dict[str, InstanceType]) -> None:
    gpu = [r for r in rows.values() if not r.is_cpu_only]
    cpu = [r for r in rows.values() if r.is_cpu_only]
    assert len(gpu) >= 40
    assert len(cpu) >= 5
    families = {r.family for r in gpu}
    required = {"gn6i", "gn6v", "gn6e", "gn7i", "gn7", "gn7e", "gn7s", "gn8is", "gn8v"}
    assert required <= families, required - families


def test_gpu_rows_have_the_fields_the_planner_needs(rows: dict[str, InstanceType]) -> None:
    for row in rows.values():
        assert row.missing_fields == (), (row.instance_type, row.missing_fields)


def test_family_matches_instance_type_name(rows: dict[str, InstanceType]) -> None:
    for name, row in rows.items():
        match = re.fullmatch(r"ecs\.([a-z0-9]+(?:-tee)?)(?:[.-].*)", name)
        assert match, name
        assert match.group(1) == row.family, name


def test_no_instance_type_from_the_corrections_list(rows: dict[str, InstanceType]) -> None:
    assert not [name for name in rows if "gn5e" in name]
    assert "ecs.gn8i-vf8.2xlarge" not in rows
    assert not [name for name in rows if ".gn8i-" in name or "-vf" in name]


def test_unmatched_blackwell_rows_are_left_out(rows: dict[str, InstanceType]) -> None:
    """gn9gc's 72 GB Blackwell GPU has no canonical name, so its rows are omitted."""
    assert not [name for name in rows if "gn9" in name]


def test_prices_are_tied_to_region_and_monthly_rows_convert_at_730_hours() -> None:
    provider = load_provider()
    prices = list(provider.prices())
    assert {p.region for p in prices} == {"cn-shanghai"}
    assert all(p.as_of == "2023-06" and not p.estimated for p in prices)
    by_key = {(p.instance_type, p.billing): p for p in prices}
    assert by_key[("ecs.gn7i-c8g1.2xlarge", "on_demand")].price_per_hour == 9.53
    monthly = by_key[("ecs.gn7i-c8g1.2xlarge", "monthly")]
    assert monthly.price_per_month == 4575.66
    for price in prices:
        if price.billing == "monthly":
            assert price.price_per_month is not None
            assert price.price_per_hour is not None
            assert math.isclose(
                price.price_per_hour, price.price_per_month / HOURS_PER_MONTH, abs_tol=1e-4
            )
    assert provider.prices("cn-beijing") == ()
    assert len(provider.prices("cn-shanghai")) == len(prices)


def test_regions_only_where_a_source_places_the_type(rows: dict[str, InstanceType]) -> None:
    """Alibaba publishes no per-region GPU list; each region on a row is a cited record."""
    a10 = rows["ecs.gn7i-c8g1.2xlarge"]
    assert set(a10.regions) == {"cn-hangzhou", "cn-shanghai"}  # run record; 2023 buy page
    assert a10.zones == ("cn-hangzhou-k",)
    # official Terraform (cn-hangzhou-h); Alibaba's GPU doc (cn-shanghai-f)
    assert rows["ecs.gn6v-c8g1.2xlarge"].zones == ("cn-hangzhou-h", "cn-shanghai-f")
    assert rows["ecs.gn7i-c16g1.4xlarge"].regions == ("cn-shanghai",)
    assert rows["ecs.gn8v.4xlarge"].regions == ()  # "some regions", none named


ALIBABA_GPU_DOC = "github.com/zxc916684603/ecs/blob/a06b576c5b9dc460d26eaed65dd3d52b57a72f72/"
"""Alibaba's own ECS doc source (a copy of AlibabaCloudDocs/ecs), page 创建GPU计算型实例 (~2018-12):
it lists the regions and zones of the gn5, gn5i and gn6v families."""

GN5_REGIONS = {
    "cn-beijing",
    "cn-huhehaote",
    "cn-hangzhou",
    "cn-shanghai",
    "cn-shenzhen",
    "cn-hongkong",
    "ap-southeast-1",
    "ap-southeast-3",
    "ap-southeast-5",
    "us-west-1",
    "us-east-1",
    "eu-central-1",
}
GN5I_REGIONS = {"cn-beijing", "cn-hangzhou", "cn-shanghai", "cn-shenzhen"}

SOURCED_PLACEMENTS = {
    # (instance type, region): a piece of the source address its regions_note must cite
    ("ecs.gn5-c4g1.xlarge", "cn-beijing"): ALIBABA_GPU_DOC,
    ("ecs.gn5-c8g1.14xlarge", "ap-southeast-1"): ALIBABA_GPU_DOC,
    ("ecs.gn5i-c2g1.large", "cn-beijing"): ALIBABA_GPU_DOC,
    ("ecs.gn5i-c28g1.14xlarge", "cn-shenzhen"): ALIBABA_GPU_DOC,
    ("ecs.gn6v-c8g1.4xlarge", "cn-shanghai"): ALIBABA_GPU_DOC,
    ("ecs.gn6v-c8g1.2xlarge", "cn-hangzhou"): "terraform-alicloud-ecs-instance",
    ("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou"): "funai-network/funai-chain",
    ("ecs.gn7i-c8g1.2xlarge", "cn-shanghai"): "ArthurChiao/arthurchiao.github.io",
    ("ecs.gn6e-c12g1.24xlarge", "cn-zhangjiakou"): "dawn-bench-entries/pull/131",
}


def test_the_gpu_doc_places_whole_legacy_families(rows: dict[str, InstanceType]) -> None:
    """gn5 and gn5i carry every region the doc names (not closed Sydney); gn6v its 华东2 zone F."""
    for row in rows.values():
        if row.family == "gn5":
            assert set(row.regions) == GN5_REGIONS, row.instance_type
            assert {"cn-beijing-c", "cn-beijing-e", "cn-hongkong-b"} <= set(row.zones)
            assert len(row.zones) == 11  # mainland and Hong Kong zones (ids "<region>-<letter>")
        if row.family == "gn5i":
            assert set(row.regions) == GN5I_REGIONS, row.instance_type
            assert set(row.zones) == {
                "cn-beijing-c",
                "cn-beijing-e",
                "cn-beijing-a",
                "cn-hangzhou-b",
                "cn-shanghai-d",
                "cn-shanghai-b",
                "cn-shenzhen-a",
            }
        if row.family == "gn6v":
            assert "cn-shanghai" in row.regions
            assert "cn-shanghai-f" in row.zones
        for zone in row.zones:
            assert any(zone.startswith(region) for region in row.regions), (row.instance_type, zone)


@pytest.mark.parametrize(("name", "region"), sorted(SOURCED_PLACEMENTS))
def test_sourced_placements_keep_their_source(
    rows: dict[str, InstanceType], name: str, region: str
) -> None:
    row = rows[name]
    assert region in row.regions
    note = row.regions_note or ""
    assert SOURCED_PLACEMENTS[(name, region)] in note


def test_every_region_claim_names_a_source(rows: dict[str, InstanceType]) -> None:
    """A region on a row is cited in its regions_note, followed by an address a person can open."""
    source = re.compile(r"https://\S+|@[0-9a-f]{7,40}")
    for row in rows.values():
        if not row.regions:
            continue
        note = row.regions_note or ""
        _, placed, claims = note.partition("Placed by:")
        assert placed, row.instance_type
        for region in row.regions:
            at = claims.find(region)
            assert at >= 0, (row.instance_type, region)
            assert source.search(claims, at), (row.instance_type, region)
        assert "index id" not in note
        assert not re.search(r"\bid \d{6,}", note)


def test_alibaba_coverage_counts() -> None:
    """Placed rows: 31 before issue 14's second pass, 45 with Alibaba's GPU doc (gn5, gn5i)."""
    from service.catalog.aggregate import CatalogService
    from service.catalog.coverage import coverage
    from service.hooks.loader import get_plugin_manager

    snapshot = CatalogService(get_plugin_manager().hook.suanli_register_providers).load()
    catalog = next(c for c in snapshot.providers if c.name == "alibaba")
    cov = coverage(catalog)
    assert (cov.rows, cov.accelerated, cov.accelerated_with_regions) == (109, 82, 45)
