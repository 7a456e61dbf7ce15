"""Example third-party provider plugin for Suanli: the smallest complete template.

It ships a snapshot catalog (``catalog.json``) and serves it with the core's
``SnapshotProvider``. Its one row is a *copy of a real, sourced Tencent Cloud row*
(GN7.2XLARGE32, 1 x T4) under a made-up reseller name, so the template never invents a
spec; it is installed only in the test environment.
"""

from __future__ import annotations

from pathlib import Path

from service import Provider, SnapshotProvider, hookimpl


@hookimpl
def suanli_register_providers() -> list[Provider]:
    return [SnapshotProvider(Path(__file__).parent)]
