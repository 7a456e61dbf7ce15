"""Volcano Engine (火山引擎) provider plugin for Suanli.

Registered through the ``suanli`` entry point ``volcengine = "plugins.volcengine"``:
pluggy collects :func:`suanli_register_providers` from this module.
"""

from __future__ import annotations

from plugins.volcengine.provider import load_provider
from service import Provider, hookimpl


@hookimpl
def suanli_register_providers() -> list[Provider]:
    """Contribute the snapshot-backed Volcano Engine provider."""
    return [load_provider()]
