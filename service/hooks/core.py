"""Core contributions registered through the same hooks as any plugin.

NVIDIA accelerator specs ship with the core (every cloud rents them); Ascend specs come
from the Huawei plugin. Model presets ship with the core too. Accelerator specs are
registered ``tryfirst``: the first registration of a name stands, so a plugin cannot
replace a built-in spec (see :mod:`service.catalog.accelerators`). Model presets stay ``trylast``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.hooks.specs import hookimpl

if TYPE_CHECKING:
    from service.catalog.models import AcceleratorSpec
    from service.sizing.presets import ModelPreset


@hookimpl(tryfirst=True)
def suanli_register_accelerators() -> list[AcceleratorSpec]:
    from service.catalog.accelerators import builtin_accelerators

    return list(builtin_accelerators())


@hookimpl(trylast=True)
def suanli_register_models() -> list[ModelPreset]:
    from service.sizing.presets import builtin_presets

    return list(builtin_presets())
