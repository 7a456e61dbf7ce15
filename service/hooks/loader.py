"""Plugin loading: hook specs, entry points (group ``suanli``), allow-list, failure isolation.

Built-in providers are *not* special-cased: they are declared as entry points in
``pyproject.toml`` exactly like a third-party package, so the path every plugin takes is
the one the tests exercise. Core contributions (NVIDIA accelerator specs, model presets)
are registered from :mod:`service.hooks.core` through the same hooks.

Entry points are loaded one by one instead of with ``load_setuptools_entrypoints`` so that
a plugin whose import raises is skipped and reported, rather than taking start-up down.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Literal, TypeVar

import msgspec
import pluggy

from service.hooks import specs
from service.hooks.specs import PROJECT_NAME

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = PROJECT_NAME
BUILTIN_MODULES: tuple[str, ...] = ("service.hooks.core",)

PluginStatus = Literal["loaded", "failed", "excluded"]


class PluginInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one entry point at start-up (shown by ``GET /v1/providers``)."""

    name: str
    module: str
    status: PluginStatus
    error: str | None = None


class PluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers the load report of its entry points."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self.report: list[PluginInfo] = []


def get_plugin_manager(
    load_entrypoints: bool = True,
    allow: Sequence[str] | None = None,
    extra_plugins: Iterable[object] = (),
) -> PluginManager:
    """Build a fresh plugin manager.

    ``allow`` is the ``SUANLI_PLUGINS`` allow-list of entry-point names (``None`` = all).
    ``extra_plugins`` are registered directly (tests use it for in-process plugins).
    """
    pm = PluginManager()
    pm.add_hookspecs(specs)
    for module_name in BUILTIN_MODULES:
        pm.register(importlib.import_module(module_name), name=module_name)
    if load_entrypoints:
        for ep in _entry_points():
            pm.report.append(_load_entry_point(pm, ep, allow))
    for plugin in extra_plugins:
        pm.register(plugin)
    pm.check_pending()
    return pm


def _entry_points() -> list[EntryPoint]:
    seen: set[str] = set()
    unique = []
    # The project's own plugins first: what they register cannot be shadowed by a
    # third-party plugin (the first registration of a provider or accelerator stands).
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=_load_order):
        if ep.name not in seen:  # the same distribution found twice on sys.path
            seen.add(ep.name)
            unique.append(ep)
    return unique


def _load_order(ep: EntryPoint) -> tuple[bool, str]:
    dist = getattr(ep, "dist", None)
    return (getattr(dist, "name", None) != PROJECT_NAME, ep.name)


def _load_entry_point(pm: PluginManager, ep: EntryPoint, allow: Sequence[str] | None) -> PluginInfo:
    if allow is not None and ep.name not in allow:
        return PluginInfo(name=ep.name, module=ep.value, status="excluded")
    try:
        plugin = ep.load()
        pm.register(plugin, name=ep.name)
    except Exception as exc:  # a broken plugin must not take the service down
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("plugin %r (%s) failed to load and is skipped: %s", ep.name, ep.value, reason)
        return PluginInfo(name=ep.name, module=ep.value, status="failed", error=reason)
    return PluginInfo(name=ep.name, module=ep.value, status="loaded")


T = TypeVar("T")


def collect(results: Iterable[Iterable[T] | None]) -> list[T]:
    """Flatten a collect-all hook's per-plugin lists (``None`` from a plugin = nothing)."""
    return [item for result in results if result for item in result]
