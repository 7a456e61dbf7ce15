"""Providers backed by shipped snapshot files (catalog + prices), decoded with msgspec.

Every first-party plugin is a :class:`SnapshotProvider` over two JSON files in its
package directory; a third-party plugin may reuse it the same way. Decoding through the
typed structs means a malformed row fails loading with the row's path in the message
instead of surfacing later as a wrong recommendation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from service.catalog.models import AsOf, InstanceType, Price, PriceRecord, SpotRules


class CatalogFile(msgspec.Struct, frozen=True, kw_only=True):
    """``catalog.json``: the instance types a provider sells, with provenance per row."""

    provider: str
    display_name: str
    currency: str = "CNY"
    as_of: AsOf
    """When this snapshot was compiled (rows carry their own source dates)."""
    regions: tuple[str, ...]
    regions_source: str | None = None
    """Where the provider's region ids come from (an SDK file or an official page)."""
    instance_types: tuple[InstanceType, ...]


class PriceFile(msgspec.Struct, frozen=True, kw_only=True):
    """``prices.json``: the prices that could be confirmed; absent means unpriced."""

    provider: str
    as_of: AsOf
    prices: tuple[Price, ...] = ()
    spot_rules: SpotRules | None = None
    """The provider's documented spot rules (basis of spot estimates)."""


def supersede(current: Sequence[Price], newer: Sequence[Price]) -> list[Price]:
    """Take ``newer`` prices into a snapshot: each replaces the price of the same type,
    region and billing when it is at least as recent, and keeps the replaced one (and
    that one's history) as provenance in ``history``, newest first. Used when a
    maintainer adds a fresher verified price to a ``prices.json``."""
    by_key = {(p.instance_type, p.region, p.billing): p for p in current}
    for price in newer:
        key = (price.instance_type, price.region, price.billing)
        old = by_key.get(key)
        if old is not None and old.as_of > price.as_of:
            continue  # an older figure never replaces a newer one
        history = price.history
        if old is not None:
            record = PriceRecord(
                price_per_hour=old.price_per_hour,
                price_per_month=old.price_per_month,
                source=old.source,
                as_of=old.as_of,
                notes=old.notes,
            )
            history = (record, *old.history, *history)
        by_key[key] = msgspec.structs.replace(price, history=history)
    return list(by_key.values())


class SnapshotError(ValueError):
    """A snapshot file is missing or does not match its schema."""


T = TypeVar("T")


def _decode(path: Path, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(path.read_bytes(), type=kind)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SnapshotError(f"{path.name}: {exc}") from exc


class SnapshotProvider:
    """A provider serving the catalog and prices shipped in its package directory."""

    def __init__(self, directory: Path) -> None:
        catalog = _decode(directory / "catalog.json", CatalogFile)
        price_path = directory / "prices.json"
        prices = _decode(price_path, PriceFile) if price_path.exists() else None
        self.name = catalog.provider
        self.display_name = catalog.display_name
        self.currency = catalog.currency
        self.catalog_as_of = catalog.as_of
        self.prices_as_of = prices.as_of if prices else None
        self.spot_rules = prices.spot_rules if prices else None
        self.regions_source = catalog.regions_source
        self._regions = catalog.regions
        self._instance_types = catalog.instance_types
        self._prices = prices.prices if prices else ()

    def regions(self) -> Sequence[str]:
        return self._regions

    def instance_types(self) -> Sequence[InstanceType]:
        return self._instance_types

    def prices(self, region: str | None = None) -> Sequence[Price]:
        if region is None:
            return self._prices
        return tuple(p for p in self._prices if p.region in (region, "*"))
