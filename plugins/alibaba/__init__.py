"""Alibaba Cloud (阿里云) provider plugin for Suanli.

Registered through the ``suanli`` entry point ``alibaba = "plugins.alibaba"``: pluggy
collects :func:`suanli_register_providers` from this module.
"""

from __future__ import annotations

from plugins.alibaba.provider import load_provider
from service import Provider, hookimpl


@hookimpl
def suanli_register_providers() -> list[Provider]:
    """Contribute the snapshot-backed Alibaba Cloud provider."""
    return [load_provider()]
