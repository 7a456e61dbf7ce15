"""The Volcano Engine plugin: contract, sourced spot checks, coverage and no prices.

Volcano's own spec pages were not reachable, so every row stands on user configs, a
ByteDance-origin project or third-party catalogs; these tests pin what those sources say
and that nothing unconfirmed (names, fields, prices) slipped in.
"""

from __future__ import annotations

import pytest

from plugins.volcengine import suanli_register_providers
from plugins.volcengine.provider import load_provider
from service.catalog.models import InstanceType
from tests.providers import BuiltinContract, assert_row, rows_fixture


class TestVolcengineContract(BuiltinContract):
    load = staticmethod(load_provider)
    hook = staticmethod(suanli_register_providers)
    name = "volcengine"
    display_name = "Volcano Engine (火山引擎)"


rows = rows_fixture(load_provider)


@pytest.mark.parametrize(
    ("name", "accelerator", "count", "gpu_mem", "vcpus", "mem", "rdma"),
    [
        ("ecs.gni2.3xlarge", "A10", 1, 24.0, 14, 56.0, None),
        ("ecs.ebmhpcpni3l.48xlarge", "H20", 8, 96.0, 192, 2048.0, "rdma"),
        ("ml.hpcpni3ln.45xlarge", "H20", 8, 96.0, 180, 1960.0, "rdma"),
        ("ml.pni3ln.4xlarge", "H20", 1, 96.0, 16, 224.0, None),
        ("ml.pni2.3xlarge", "A100-80GB", 1, 80.0, 14, 245.0, None),
        ("ml.pni2.28xlarge", "A100-80GB", 8, 80.0, 112, 1960.0, None),
        ("ml.hpcpni2.28xlarge", "A100-80GB", 8, 80.0, 112, 1960.0, "rdma"),
        ("ml.hpcpni2l.28xlarge", "A800-80GB", 8, 80.0, None, 1960.0, "rdma"),
        ("ecs.ebmhpcpni2l.32xlarge", "A800-80GB", 8, 80.0, 128, None, "rdma"),
    ],
)
def test_gpu_spot_checks(
    rows: dict[str, InstanceType],
    name: str,
    accelerator: str,
    count: int,
    gpu_mem: float,
    vcpus: int | None,
    mem: float | None,
    rdma: str | None,
) -> None:
    assert_row(rows[name], accelerator, count, gpu_mem, vcpus, mem, rdma=rdma)


def test_gni2_3xlarge_is_flagged_low_confidence(rows: dict[str, InstanceType]) -> None:
    row = rows["ecs.gni2.3xlarge"]
    assert row.confidence == "low"
    assert row.as_of == "2024-08"


def test_bare_metal_h20_carries_network_and_local_disks(rows: dict[str, InstanceType]) -> None:
    row = rows["ecs.ebmhpcpni3l.48xlarge"]
    assert row.network_gbps == 96.0
    assert row.local_nvme == "4 x 3576 GiB NVMe"


def test_unconfirmed_fields_stay_unknown(rows: dict[str, InstanceType]) -> None:
    """Sources give only GPU counts for most pni3ln sizes: memory and sizes are not filled."""
    row = rows["ml.pni3ln.8xlarge"]
    assert (row.accelerator, row.accelerator_count) == ("H20", 2)
    assert row.missing_fields == ("vcpus", "memory_gib", "accelerator_memory_gib")
    assert rows["ecs.ebmhpcpni2l.32xlarge"].missing_fields == ("memory_gib",)


def test_no_unconfirmed_or_ambiguous_instance_types(rows: dict[str, InstanceType]) -> None:
    """Names no source confirms, GPUs no source names, and counts no source gives stay out."""
    families = {name.split(".")[1] for name in rows}
    assert not families & {"gni3", "g1tl", "ini2", "hpcpni3", "g1ie"}
    assert "ecs.pni2.14xlarge" not in rows  # source says "A100/A800": ambiguous
    assert "ml.gni3cgd.5xlarge" not in rows  # L20, GPU count unknown
    assert "ml.xni3c.5xlarge" not in rows  # RTX 4090D, GPU count unknown
    assert "ml.hpcpni3l.48xlarge" not in rows  # GPU not named


def test_vemlp_flavors_are_labelled(rows: dict[str, InstanceType]) -> None:
    for name, row in rows.items():
        if name.startswith("ml."):
            assert row.family.startswith("veMLP ")
            assert row.notes
            assert "veMLP" in row.notes


@pytest.mark.parametrize(
    ("name", "vcpus", "mem", "confidence"),
    [
        ("ecs.g3i.large", 2, 8.0, "low"),
        ("ecs.g3i.2xlarge", 8, 32.0, "low"),
        ("ecs.c3i.large", 2, 4.0, "low"),
        ("ecs.c3i.xlarge", 4, 8.0, "low"),
        ("ecs.r3i.large", 2, 16.0, "low"),
        ("ecs.r3i.4xlarge", 16, 128.0, "low"),
    ],
)
def test_cpu_spot_checks(
    rows: dict[str, InstanceType], name: str, vcpus: int, mem: float, confidence: str
) -> None:
    row = rows[name]
    assert row.is_cpu_only
    assert (row.vcpus, row.memory_gib) == (vcpus, mem)
    assert row.confidence == confidence


def test_coverage_floor(rows: dict[str, InstanceType]) -> None:
    gpu = [r for r in rows.values() if not r.is_cpu_only]
    cpu = [r for r in rows.values() if r.is_cpu_only]
    assert len(gpu) >= 8
    assert len(cpu) >= 5
    assert {r.accelerator for r in gpu} == {"A10", "A100-80GB", "A800-80GB", "H20"}


def test_no_price_was_confirmed_so_none_is_shipped() -> None:
    provider = load_provider()
    assert provider.prices() == ()
    assert provider.prices("cn-beijing") == ()


def test_regions_are_the_ones_a_public_record_shows(rows: dict[str, InstanceType]) -> None:
    """A user's veMLP job generator (deepdive_kai0 mkyaml.py) names each queue's flavors with
    the region's image registry and vePFS: Beijing H20 1- and 8-card, Shanghai A100 8-card."""
    assert rows["ml.pni3ln.5xlarge"].regions == ("cn-beijing",)
    assert rows["ml.hpcpni3ln.45xlarge"].regions == ("cn-beijing",)
    assert rows["ml.hpcpni2.28xlarge"].regions == ("cn-shanghai",)
    for name in ("ml.pni3ln.5xlarge", "ml.hpcpni2.28xlarge"):
        assert "mkyaml.py @efb4f60a" in (rows[name].regions_note or ""), name
    # the generator rejects a 4-card size in the Beijing queue: no placement for it
    assert rows["ml.pni3ln.17xlarge"].regions == ()
    assert rows["ecs.ebmhpcpni3l.48xlarge"].regions == ()
