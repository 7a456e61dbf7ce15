"""Tests of the four built-in cloud plugins; what they share lives here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from service.catalog.models import InstanceType, Provider
from service.catalog.provider_contract import ProviderContract

BRIEF_NVIDIA = frozenset(
    {
        "P4",
        "P40",
        "P100",
        "V100-16GB",
        "V100-32GB",
        "T4",
        "A10",
        "A30",
        "A100-40GB",
        "A100-80GB",
        "A800-40GB",
        "A800-80GB",
        "H800",
        "H20",
        "L20",
        "L40S",
        "L4",
        "H100-80GB",
        "RTX-4090D",
    }
)
BRIEF_ASCEND = frozenset(
    {
        "Ascend-910",
        "Ascend-910B1",
        "Ascend-910B2",
        "Ascend-910B3",
        "Ascend-910B4",
        "Ascend-310",
        "Ascend-310P",
    }
)
CANONICAL_ACCELERATORS = BRIEF_NVIDIA | BRIEF_ASCEND | {"V100-32GB-PCIe"}
"""The canonical accelerator names of the project brief (every catalog row names one),
plus form factors whose rates differ (Huawei p2s: V100 PCIe)."""


class BuiltinContract(ProviderContract):
    """The provider contract over one built-in plugin's shipped catalog: a subclass
    names the plugin's ``load_provider`` as ``load``, its ``suanli_register_providers``
    hook as ``hook`` and the one provider that hook registers (``name``, ``display_name``)."""

    known_accelerators = CANONICAL_ACCELERATORS
    load: ClassVar[Callable[[], Provider]]
    hook: ClassVar[Callable[[], list[Provider]]]
    name: ClassVar[str]
    display_name: ClassVar[str]

    @pytest.fixture
    def provider(self) -> Provider:
        return type(self).load()

    def test_hook_registers_one_provider(self) -> None:
        providers = type(self).hook()
        assert [p.name for p in providers] == [self.name]
        assert providers[0].display_name == self.display_name


def assert_row(
    row: InstanceType,
    accelerator: str,
    count: int,
    accelerator_memory_gib: float,
    vcpus: int | None,
    memory_gib: float | None,
    **more: object,
) -> None:
    """A spot check: the row's accelerator, its count and memory, the vCPUs and RAM, and
    the further fields named in ``more`` hold the values a source states (one diff)."""
    expected = {
        "accelerator": accelerator,
        "accelerator_count": count,
        "accelerator_memory_gib": accelerator_memory_gib,
        "vcpus": vcpus,
        "memory_gib": memory_gib,
        **more,
    }
    assert {field: getattr(row, field) for field in expected} == expected


def rows_fixture(load: Callable[[], Provider]) -> Any:
    """A module fixture ``rows``: the shipped catalog's rows by instance type."""

    @pytest.fixture(scope="module")
    def rows() -> dict[str, InstanceType]:
        return {row.instance_type: row for row in load().instance_types()}

    return rows
