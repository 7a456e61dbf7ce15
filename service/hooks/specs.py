"""Hook specifications for Suanli plugins (pluggy project name ``suanli``).

Hooks are synchronous and return objects. pluggy has no async support: an ``async def``
implementation returns a coroutine, which is never ``None`` and would always "win". I/O
therefore lives in provider methods, never in hook calls.

Every hook here is a *collect-all* hook: the caller receives one list per plugin and
flattens it. Each hook is documented in ``docs/providers.md`` and tested in
``tests/test_plugins.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from service.catalog.models import AcceleratorSpec, Provider
    from service.sizing.presets import ModelPreset

PROJECT_NAME = "suanli"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def suanli_register_providers() -> list[Provider]:
    """Return the cloud providers this plugin contributes (collect all)."""
    raise NotImplementedError


@hookspec
def suanli_register_accelerators() -> list[AcceleratorSpec]:
    """Return accelerator specs this plugin contributes, e.g. Ascend NPUs (collect all)."""
    raise NotImplementedError


@hookspec
def suanli_register_models() -> list[ModelPreset]:
    """Return model presets (architectures with sources) this plugin contributes (collect all)."""
    raise NotImplementedError
