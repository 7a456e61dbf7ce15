"""Operator price overrides (negotiated discounts, private quotes) from a TOML file.

``SUANLI_PRICE_OVERRIDES=/etc/suanli/prices.toml``::

    [[override]]
    provider = "tencent"
    instance_type = "GN7.2XLARGE32"   # or family = "GN7"; neither = the whole provider
    region = "ap-guangzhou"           # optional; default: every region
    billing = "on_demand"             # optional; default: every billing mode
    price_per_hour = 6.2              # a fixed price (CNY/h) ...
    # discount = 0.85                 # ... or a factor on the price it would otherwise have
    as_of = "2026-10-01"
    note = "2026 framework agreement"

The file is validated as a whole at start-up (and on reload); every problem is reported
with the line of its ``[[override]]`` table, and a bad file stops start-up instead of
being half-applied. Overrides win over live and snapshot prices and say so in
``price_source``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import msgspec

from service.catalog.models import ALL_REGIONS, AsOf, Billing, InstanceType, Price


class OverrideError(ValueError):
    """The override file is unreadable or invalid; the message names file and line."""


class PriceOverride(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    provider: Annotated[str, msgspec.Meta(min_length=1)]
    instance_type: str | None = None
    family: str | None = None
    region: str | None = None
    billing: Billing | None = None
    price_per_hour: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None = None
    price_per_month: Annotated[float, msgspec.Meta(gt=0, le=100_000_000)] | None = None
    discount: Annotated[float, msgspec.Meta(gt=0, le=10)] | None = None
    as_of: AsOf | None = None
    note: str | None = None
    line: int = 0
    """Line of the ``[[override]]`` header in the file (filled by the loader)."""

    def __post_init__(self) -> None:
        fixed = self.price_per_hour is not None or self.price_per_month is not None
        if fixed == (self.discount is not None):
            raise ValueError("give exactly one of price_per_hour/price_per_month or discount")
        if self.instance_type and self.family:
            raise ValueError("give instance_type or family, not both")

    def matches(self, provider: str, row: InstanceType) -> bool:
        if provider != self.provider:
            return False
        if self.instance_type is not None:
            return row.instance_type == self.instance_type
        if self.family is not None:
            return row.family.lower() == self.family.lower()
        return True

    @property
    def label(self) -> str:
        return f"override:line {self.line}" + (f" ({self.note})" if self.note else "")


class _OverrideFile(msgspec.Struct, forbid_unknown_fields=True):
    override: list[dict[str, object]] = msgspec.field(default_factory=list)


_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*override[ \t]*\]\]", re.MULTILINE)


def load_overrides(path: str | Path) -> tuple[PriceOverride, ...]:
    """Parse and validate the whole file; raise :class:`OverrideError` on any problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise OverrideError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise OverrideError(f"{path}: {exc}") from None
    lines = [text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)]
    try:
        tables = msgspec.convert(data, _OverrideFile).override
    except msgspec.ValidationError as exc:
        raise OverrideError(f"{path}: {exc}") from None
    overrides, errors = [], []
    for index, table in enumerate(tables):
        line = lines[index] if index < len(lines) else 0
        try:
            overrides.append(msgspec.convert({**table, "line": line}, PriceOverride))
        except msgspec.ValidationError as exc:
            errors.append(f"{path}:{line}: [[override]] #{index + 1}: {exc}")
    if errors:
        raise OverrideError("; ".join(errors))
    return tuple(overrides)


def apply_overrides(
    provider: str,
    rows: Sequence[InstanceType],
    prices: Iterable[Price],
    overrides: Sequence[PriceOverride],
    today: str | None = None,
) -> list[Price]:
    """Return ``prices`` with the matching overrides applied (the last matching wins).

    A fixed override replaces (or adds) the price of every matching type/region/billing; a
    discount scales the prices it matches. Overrides are an operator's own statement, so
    they are labelled ``price_source="override"`` with the file line as their source.
    """
    mine = [o for o in overrides if o.provider == provider]
    result = list(prices)
    if not mine:
        return result
    as_of_default = today or datetime.now(UTC).date().isoformat()
    by_name = {row.instance_type: row for row in rows}
    for override in mine:
        targets = {name for name, row in by_name.items() if override.matches(provider, row)}
        if override.discount is not None:
            result = [
                _discounted(p, override) if _hits(p, override, targets) else p for p in result
            ]
            continue
        result = [p for p in result if not _hits(p, override, targets)]
        billings: tuple[Billing, ...] = (
            (override.billing,) if override.billing else _fixed_billings(override)
        )
        for name in sorted(targets):
            for billing in billings:
                result.append(_fixed(name, billing, override, as_of_default))
    return result


def _hits(price: Price, override: PriceOverride, targets: set[str]) -> bool:
    return (
        price.instance_type in targets
        and (override.region is None or price.region in (override.region, ALL_REGIONS))
        and (override.billing is None or price.billing == override.billing)
    )


def _fixed_billings(override: PriceOverride) -> tuple[Billing, ...]:
    billings: list[Billing] = []
    if override.price_per_hour is not None:
        billings.append("on_demand")
    if override.price_per_month is not None:
        billings.append("monthly")
    return tuple(billings)


def _fixed(name: str, billing: Billing, override: PriceOverride, as_of: str) -> Price:
    if billing == "monthly" and override.price_per_month is not None:
        per_month: float | None = override.price_per_month
        per_hour = override.price_per_month / 730.0
    else:
        per_month = None
        per_hour = override.price_per_hour or (override.price_per_month or 0) / 730.0
    return Price(
        instance_type=name,
        region=override.region or ALL_REGIONS,
        billing=billing,
        price_per_hour=per_hour,
        price_per_month=per_month,
        source=override.label,
        as_of=override.as_of or as_of,
        price_source="override",
        notes=override.note,
    )


def _discounted(price: Price, override: PriceOverride) -> Price:
    factor = override.discount or 1.0
    return msgspec.structs.replace(
        price,
        price_per_hour=None if price.price_per_hour is None else price.price_per_hour * factor,
        price_per_month=None if price.price_per_month is None else price.price_per_month * factor,
        price_source="override",
        source=f"{override.label}: {factor:g} x {price.source}",
        as_of=override.as_of or price.as_of,
    )
