"""Suanli (算力): which cloud server to rent for a deep-learning job, and what it costs.

A provider plugin imports only this package: the ``hookimpl`` marker and the shared models.
"""

from service.hookspecs import hookimpl
from service.providers import (
    AcceleratorSpec,
    InstanceType,
    LivePriceSource,
    Offer,
    Price,
    Provider,
)
from service.snapshot import SnapshotProvider

__all__ = [
    "AcceleratorSpec",
    "InstanceType",
    "LivePriceSource",
    "Offer",
    "Price",
    "Provider",
    "SnapshotProvider",
    "hookimpl",
]
