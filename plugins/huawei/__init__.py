"""Huawei Cloud (华为云) provider plugin for Suanli, including the Ascend NPU specs.

Registered through the ``suanli`` entry point ``huawei = "plugins.huawei"``. Besides the
provider it contributes the Ascend accelerator specs (``accelerators.json``): they live
here, not in the core, because only Huawei rents Ascend NPUs, and a deployment that
allow-lists other clouds should not list chips it cannot offer.
"""

from __future__ import annotations

from functools import cache

import msgspec

from plugins.huawei.provider import PACKAGE_DIR, load_provider
from service import AcceleratorSpec, Provider, hookimpl


@cache
def ascend_accelerators() -> tuple[AcceleratorSpec, ...]:
    """The Ascend specs shipped with this plugin, decoded once per process."""
    data = (PACKAGE_DIR / "accelerators.json").read_bytes()
    return msgspec.json.decode(data, type=tuple[AcceleratorSpec, ...])


@hookimpl
def suanli_register_providers() -> list[Provider]:
    """Contribute the snapshot-backed Huawei Cloud provider."""
    return [load_provider()]


@hookimpl
def suanli_register_accelerators() -> list[AcceleratorSpec]:
    """Contribute the Ascend NPU specs (910, 910B1-B4, 310P)."""
    return list(ascend_accelerators())
