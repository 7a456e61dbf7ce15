"""Find each provider's live price source through the plugin system.

A provider gets live prices in one of two ways, checked in this order:

1. the provider object itself implements :class:`~service.catalog.models.LivePriceSource`
   (``live_prices_available()`` + ``live_prices()``): a third-party plugin may do this;
2. the plugin module that registered it offers ``make_live_source() -> LivePriceSource``,
   either as an attribute of the plugin module or in its ``live`` submodule
   (``plugins.alibaba`` -> ``plugins.alibaba.live.make_live_source``). The first-party
   plugins use the submodule, which imports its cloud SDK lazily, so a plugin without
   the SDK installed still loads.

A plugin registering several providers shares one ``make_live_source()`` between them;
such a plugin should implement (1) instead.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import pluggy

from service.catalog.models import LivePriceSource, Provider

log = logging.getLogger(__name__)

LIVE_MODULE = "live"
FACTORY = "make_live_source"


@dataclass(frozen=True, eq=False)
class LiveJob:
    """A provider and the source of its live prices (``None`` with ``reason`` if none)."""

    provider: Provider
    source: LivePriceSource | None
    reason: str | None = None

    @property
    def name(self) -> str:
        return self.provider.name


def find_live_source(plugin: object) -> tuple[LivePriceSource | None, str | None]:
    """``(source, None)`` or ``(None, reason)`` for a registered plugin module."""
    factory: object = getattr(plugin, FACTORY, None)
    module_name = getattr(plugin, "__name__", None)
    if factory is None and isinstance(module_name, str):
        submodule = f"{module_name}.{LIVE_MODULE}"
        try:
            factory = getattr(importlib.import_module(submodule), FACTORY, None)
        except ModuleNotFoundError as exc:
            if exc.name != submodule:  # the live module exists but its imports are broken
                return None, f"{submodule} failed to import: {exc}"
        except Exception as exc:
            return None, f"{submodule} failed to import: {type(exc).__name__}: {exc}"
    if not callable(factory):
        return None, "provider has no live price adapter"
    try:
        source = factory()
    except Exception as exc:
        return None, f"{FACTORY}() raised {type(exc).__name__}: {exc}"
    if not isinstance(source, LivePriceSource):
        return None, f"{FACTORY}() returned {type(source).__name__}, not a LivePriceSource"
    return source, None


def discover_live_jobs(pm: pluggy.PluginManager) -> list[LiveJob]:
    """One :class:`LiveJob` per registered provider, in registration order.

    The hook implementations are called one by one (not through the hook caller) to
    know which plugin registered which provider; a plugin that raises is skipped.
    """
    jobs: list[LiveJob] = []
    taken: set[str] = set()  # a shadowing provider is refused here too (first one stands)
    impls = pm.hook.suanli_register_providers.get_hookimpls()
    for impl in impls:
        register: Callable[[], object] = impl.function
        try:
            providers = cast("list[Provider] | None", register()) or []
        except Exception as exc:
            log.warning("plugin %s failed to register providers: %s", impl.plugin_name, exc)
            continue
        for provider in providers:
            name = getattr(provider, "name", None)
            if name in taken:
                continue
            taken.add(str(name))
            if isinstance(provider, LivePriceSource):
                jobs.append(LiveJob(provider=provider, source=provider))
                continue
            source, reason = find_live_source(impl.plugin)
            jobs.append(LiveJob(provider=provider, source=source, reason=reason))
    return jobs
