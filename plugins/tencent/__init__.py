"""Tencent Cloud (腾讯云) provider plugin for Suanli.

Registered through the ``suanli`` entry point ``tencent = "plugins.tencent"``: pluggy
collects :func:`suanli_register_providers` from this module.
"""

from __future__ import annotations

from plugins.tencent.provider import load_provider
from service import Provider, hookimpl


@hookimpl
def suanli_register_providers() -> list[Provider]:
    """Contribute the snapshot-backed Tencent Cloud provider."""
    return [load_provider()]
