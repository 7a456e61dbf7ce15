"""Core contributions registered through the same hooks as any plugin.

NVIDIA accelerator specs ship with the core (every cloud rents them); Ascend specs come
from the Huawei plugin. Model presets ship with the core too. Hook implementations are
``trylast`` so a third-party plugin's answer comes first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.hookspecs import hookimpl

if TYPE_CHECKING:
    from service.providers import AcceleratorSpec
    from service.sizing.presets import ModelPreset


@hookimpl(trylast=True)
def suanli_register_accelerators() -> list[AcceleratorSpec]:
    from service.accelerators import builtin_accelerators

    return list(builtin_accelerators())


@hookimpl(trylast=True)
def suanli_register_models() -> list[ModelPreset]:
    from service.sizing.presets import builtin_presets

    return list(builtin_presets())
