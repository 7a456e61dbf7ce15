"""The Volcano Engine provider: the shipped catalog snapshot of this package.

Why a snapshot, and why it is thin: Volcano Engine's instance-family pages were not
reachable from public sources, so the catalog holds only types whose names and specs
users or ByteDance-origin projects quote, each row with ``source``, ``as_of`` and an
honest ``confidence``. No CNY price could be confirmed, so the price snapshot is empty
(every offer is unpriced) until live prices arrive through the billing API.
"""

from __future__ import annotations

from pathlib import Path

from service import SnapshotProvider

PACKAGE_DIR = Path(__file__).resolve().parent
"""Directory holding ``catalog.json`` and ``prices.json``."""


class VolcengineProvider(SnapshotProvider):
    """Volcano Engine (火山引擎) ECS and veMLP instance types from the shipped snapshot.

    A named subclass (rather than a bare :class:`SnapshotProvider`) gives live pricing a
    place to attach later without changing how the plugin is registered.
    """


def load_provider() -> SnapshotProvider:
    """Decode the snapshots; a malformed row fails here, naming the file and field."""
    return VolcengineProvider(PACKAGE_DIR)
