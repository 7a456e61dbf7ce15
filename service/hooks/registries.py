"""The registries every installed plugin builds: accelerator specs and model presets.

They live here, above both registries, because building one asks the plugin manager and
the hook specifications name the registries' own types (``AcceleratorSpec``,
``ModelPreset``): inside :mod:`service.catalog.accelerators` or
:mod:`service.sizing.presets` this would close an import circle through
:mod:`service.hooks.specs`. ``create_app`` builds its registries from its own plugin
manager; these are for tools and tests that need the installed plugins' view alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from service.catalog.accelerators import AcceleratorRegistry
from service.hooks.loader import collect, get_plugin_manager
from service.sizing.presets import ModelRegistry


def default_accelerator_registry(allow: Sequence[str] | None = None) -> AcceleratorRegistry:
    """The registry the installed plugins build (``allow`` = ``SUANLI_PLUGINS`` allow-list).

    The core's specs are registered first, so the first registration of a canonical name
    stands (see :mod:`service.catalog.accelerators`).
    """
    pm = get_plugin_manager(allow=allow)
    return AcceleratorRegistry(collect(pm.hook.suanli_register_accelerators()))


def default_model_registry(pm: pluggy.PluginManager | None = None) -> ModelRegistry:
    """Collect presets from every plugin's ``suanli_register_models`` (core included)."""
    manager = pm if pm is not None else get_plugin_manager()
    return ModelRegistry(collect(manager.hook.suanli_register_models()))
