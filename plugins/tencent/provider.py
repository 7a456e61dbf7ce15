"""The Tencent Cloud provider: the shipped catalog and price snapshots of this package.

Why a snapshot: Tencent publishes GPU and CVM specs on documentation pages, and its only
public CNY figures are the old GPU "标准刊例价" list prices; today's prices need
credentials (``InquiryPriceRunInstances``). The JSON files next to this module hold what
could be confirmed from public sources, each row with ``source`` and ``as_of``; live
prices are a separate, optional concern.
"""

from __future__ import annotations

from pathlib import Path

from service import SnapshotProvider

PACKAGE_DIR = Path(__file__).resolve().parent
"""Directory holding ``catalog.json`` and ``prices.json``."""


class TencentProvider(SnapshotProvider):
    """Tencent Cloud (腾讯云) GPU and CVM instance types from the shipped snapshots.

    A named subclass (rather than a bare :class:`SnapshotProvider`) gives live pricing a
    place to attach later without changing how the plugin is registered.
    """


def load_provider() -> SnapshotProvider:
    """Decode the snapshots; a malformed row fails here, naming the file and field."""
    return TencentProvider(PACKAGE_DIR)
