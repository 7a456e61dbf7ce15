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
"""The brief's chips plus form factors whose rates differ (Huawei p2s: V100 PCIe)."""
"""The canonical accelerator names of the project brief: every catalog row names one."""


class BuiltinContract(ProviderContract):
    """The provider contract over one built-in plugin's shipped catalog: a subclass
    names the plugin's ``load_provider`` as ``load``."""

    known_accelerators = CANONICAL_ACCELERATORS
    load: ClassVar[Callable[[], Provider]]

    @pytest.fixture
    def provider(self) -> Provider:
        return type(self).load()


def rows_fixture(load: Callable[[], Provider]) -> Any:
    """A module fixture ``rows``: the shipped catalog's rows by instance type."""

    @pytest.fixture(scope="module")
    def rows() -> dict[str, InstanceType]:
        return {row.instance_type: row for row in load().instance_types()}

    return rows
