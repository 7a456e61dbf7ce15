"""The Huawei Cloud provider: the shipped catalog and price snapshots of this package.

Why a snapshot: Huawei publishes ECS and ModelArts flavors on documentation pages and
console strings, and prices only through the authenticated BSS API or the web price
calculator. The JSON files next to this module hold what could be confirmed from public
sources, each row with ``source`` and ``as_of``; rows whose accelerator could not be
identified are left out rather than guessed.
"""

from __future__ import annotations

from pathlib import Path

from service import SnapshotProvider

PACKAGE_DIR = Path(__file__).resolve().parent
"""Directory holding ``catalog.json``, ``prices.json`` and ``accelerators.json``."""


class HuaweiProvider(SnapshotProvider):
    """Huawei Cloud (华为云) ECS GPU/CPU flavors and ModelArts Ascend NPU flavors.

    A named subclass (rather than a bare :class:`SnapshotProvider`) gives live pricing
    (the BSS rating API) a place to attach later without changing the registration.
    """


def load_provider() -> SnapshotProvider:
    """Decode the snapshots; a malformed row fails here, naming the file and field."""
    return HuaweiProvider(PACKAGE_DIR)
