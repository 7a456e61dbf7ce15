"""Suanli (算力): which cloud server to rent for a deep-learning job, and what it costs.

A provider plugin imports only this package: the ``hookimpl`` marker, the shared catalog
models, the snapshot-backed provider, the model preset a plugin may register, and for a
live price adapter the helpers and errors every adapter shares. Everything else under
``service`` is the service's own and may move.
"""

from service.catalog.live.adapter import (
    Clock,
    LiveBilling,
    availability,
    credentials_present,
    iso_utc,
    live_price,
    parse_amount,
    require_cny,
    utc_now,
)
from service.catalog.live.errors import LivePriceError, TransientLivePriceError
from service.catalog.models import (
    AcceleratorSpec,
    InstanceType,
    LivePriceSource,
    Offer,
    Price,
    Provider,
)
from service.catalog.snapshot_provider import SnapshotProvider
from service.hooks.specs import hookimpl
from service.sizing.presets import ModelPreset

__all__ = [
    "AcceleratorSpec",
    "Clock",
    "InstanceType",
    "LiveBilling",
    "LivePriceError",
    "LivePriceSource",
    "ModelPreset",
    "Offer",
    "Price",
    "Provider",
    "SnapshotProvider",
    "TransientLivePriceError",
    "availability",
    "credentials_present",
    "hookimpl",
    "iso_utc",
    "live_price",
    "parse_amount",
    "require_cny",
    "utc_now",
]
