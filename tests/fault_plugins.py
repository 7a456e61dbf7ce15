"""In-process provider plugins that misbehave on purpose, for the fault-isolation tests.

Register them with ``get_plugin_manager(extra_plugins=[...])`` and pass the manager to
``create_app(settings, plugin_manager=pm)``. Each fault is one small class so a test
reads as the failure it exercises: a provider that raises, one that hangs past
``SUANLI_PROVIDER_TIMEOUT_S``, one that returns malformed rows (wrong types, negative or
non-finite specs, negative prices), one that works until it is reloaded, and a plugin
whose registration hook itself raises.

No spec is invented: the rows these providers serve are copies of a real, sourced row of
the built-in Tencent catalog (as the example third-party plugin does), re-labelled under
a made-up provider name and then, for the malformed ones, deliberately broken.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import msgspec

from service import InstanceType, Price, Provider, hookimpl
from service.hooks.loader import PluginManager, get_plugin_manager
from service.runtime.settings import Settings


def _real_rows() -> tuple[InstanceType, tuple[Price, ...]]:
    """The first priced GPU row of the built-in Tencent catalog and its prices."""
    from plugins.tencent.provider import load_provider

    tencent = load_provider()
    prices = tuple(tencent.prices())
    priced = {p.instance_type for p in prices if p.price_per_hour}
    row = next(r for r in tencent.instance_types() if r.accelerator and r.instance_type in priced)
    return row, tuple(p for p in prices if p.instance_type == row.instance_type)


class FakeProvider:
    """A well-behaved provider serving one real row under ``name`` (the base of faults)."""

    display_name = "Fault injection test provider"
    currency = "CNY"

    def __init__(self, name: str) -> None:
        self.name = name
        self.row, self.price_rows = _real_rows()
        self.calls = 0

    def regions(self) -> Sequence[str]:
        return self.row.regions or ("ap-guangzhou",)

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        return (self.row,)

    def prices(self, region: str | None = None) -> Sequence[Any]:
        return self.price_rows


class RaisingProvider(FakeProvider):
    """``instance_types()`` raises, as a provider with a corrupt data file would."""

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        raise RuntimeError("catalog backend exploded on purpose")


class HangingProvider(FakeProvider):
    """``instance_types()`` blocks for ``hang_s`` seconds (a stuck network call).

    The sleep waits on an event so tests can release the thread at teardown instead of
    leaving a non-daemon worker sleeping past the end of the test.
    """

    def __init__(self, name: str, hang_s: float = 3.0) -> None:
        super().__init__(name)
        self.hang_s = hang_s
        self.release = threading.Event()

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        self.release.wait(self.hang_s)
        return (self.row,)


class WrongTypesProvider(FakeProvider):
    """Rows of the wrong types: a dict instead of an ``InstanceType``, strings for ints."""

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        broken = msgspec.structs.replace(self.row, vcpus="eight")
        return (broken,)


class NegativeSpecsProvider(FakeProvider):
    """Rows whose numbers cannot be real: negative vCPUs and accelerator memory."""

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        return (msgspec.structs.replace(self.row, vcpus=-8, accelerator_memory_gib=-24.0),)


class NonFiniteSpecsProvider(FakeProvider):
    """Rows with NaN memory (JSON encodes NaN as ``null``, so a round trip misses it)."""

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        return (msgspec.structs.replace(self.row, memory_gib=float("nan")),)


class NegativePriceProvider(FakeProvider):
    """A price below zero would rank as the cheapest offer of all if it got through."""

    def prices(self, region: str | None = None) -> Sequence[Any]:
        return tuple(
            msgspec.structs.replace(p, price_per_hour=-1.0, price_per_month=None)
            for p in self.price_rows
        )


class FlakyProvider(FakeProvider):
    """Serves its row on the first ``good_calls`` loads, then raises (a failed reload)."""

    def __init__(self, name: str, good_calls: int = 1) -> None:
        super().__init__(name)
        self.good_calls = good_calls

    def instance_types(self) -> Sequence[Any]:
        self.calls += 1
        if self.calls > self.good_calls:
            raise ConnectionError("provider backend went away on purpose")
        return (self.row,)


class ProviderPlugin:
    """A pluggy plugin object contributing the given providers."""

    def __init__(self, *providers: object) -> None:
        self.providers = list(providers)

    @hookimpl
    def suanli_register_providers(self) -> list[Provider]:
        return self.providers  # type: ignore[return-value]


class RaisingRegistrationPlugin:
    """A plugin whose ``suanli_register_providers`` hook raises before returning anything."""

    @hookimpl
    def suanli_register_providers(self) -> list[Provider]:
        raise RuntimeError("plugin registration exploded on purpose")


def plugin_manager(settings: Settings, *plugins: object) -> PluginManager:
    """The app's normal plugin manager (built-ins by allow-list) plus ``plugins``."""
    return get_plugin_manager(allow=settings.plugins, extra_plugins=plugins)
