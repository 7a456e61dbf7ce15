"""Sanity checks a live price must pass before it can reach a recommendation.

A cloud API can be wrong in ways that type checks miss: a price per month where a price
per hour was expected, a USD quote, a zero for "not sold here", a whole-cluster price.
One such row would rank first everywhere. So every live price is checked for currency,
sign and plausibility against a reference range per accelerator; a row that fails is
logged and kept out of the snapshot (the previous price, or the shipped one, stays).

Reference ranges (CNY per accelerator-hour, on-demand) come from the table
"Sanity ranges, CNY per GPU-hour" in ``shared/reference/price-notes.md``: the low end
is the marketplace floor where the notes give one ("use the market numbers only as a
floor"), else the lowest cloud list price; the high end is the highest list price.
:data:`SANITY_FACTOR` widens each range threefold both ways, because list prices there
are several years old and a live price may legitimately move a lot. Billing modes are
scaled down before the low check: monthly by 0.39 (Tencent list data: a month costs
0.394-0.658 of 730 on-demand hours, price-notes "Monthly vs hourly") and spot by 0.1
(Alibaba: spot "可低至按量付费的1折", price-notes "Spot / preemptible discounts").
Accelerators without a reference (A10, L20, Ascend, ...) and CPU-only types get only the
absolute ceiling :data:`MAX_PER_HOUR`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import msgspec

from service.catalog.models import HOURS_PER_MONTH, InstanceType, Price

log = logging.getLogger(__name__)


class ReferenceRange(NamedTuple):
    """CNY per accelerator-hour, on-demand; ``high=None`` when no upper figure is known."""

    low: float
    high: float | None
    basis: str


_NOTES = "shared/reference/price-notes.md, 'Sanity ranges'"

DEFAULT_REFERENCE: Mapping[str, ReferenceRange] = {
    "T4": ReferenceRange(1.35, 19.10, f"{_NOTES}: 矩池云 1.35 floor; Tencent GN7/GI3X 7.81-19.10"),
    "P4": ReferenceRange(6.94, 9.00, f"{_NOTES}: Tencent GN6/GN6S 6.94-9.00"),
    "P40": ReferenceRange(12.07, 15.44, f"{_NOTES}: Tencent GN8 12.07-15.44"),
    "V100-32GB": ReferenceRange(11.98, 18.25, f"{_NOTES}: Tencent GN10Xp 11.98 - GN10X 18.25"),
    "A100-40GB": ReferenceRange(28.64, 29.69, f"{_NOTES}: Tencent GT4 28.64-29.69"),
    "A100-80GB": ReferenceRange(4.98, 34.74, f"{_NOTES}: market 4.98 floor; Alibaba 34.74"),
    "A800-80GB": ReferenceRange(4.98, 34.74, f"{_NOTES}: A100/A800-80G row"),
    "H20": ReferenceRange(7.5, None, f"{_NOTES}: market 7.5 floor, no cloud figure"),
    "RTX-4090D": ReferenceRange(1.14, 3.0, f"{_NOTES}: RTX 4090/4090D market 1.14-3.0"),
}
"""Per-accelerator reference ranges; keys are canonical accelerator names."""

SANITY_FACTOR = 3.0
"""How far outside a reference range a live price may fall before it is an outlier."""

BILLING_LOW_SCALE: Mapping[str, float] = {"on_demand": 1.0, "monthly": 0.39, "spot": 0.1}
"""Scale applied to a range's low end per billing mode (see module docstring)."""

MAX_PER_HOUR = 2000.0
"""Absolute ceiling, CNY per instance-hour, for any row: the dearest list price in
price-facts.csv is Tencent GT4.41XLARGE948 (8x A100) at 237.51/h; 2000 leaves room for
8x H800-class machines while still catching a monthly amount read as hourly."""


class RejectedPrice(msgspec.Struct, frozen=True, kw_only=True):
    """A live price kept out of the snapshot, with the reason (logged and reported)."""

    price: Price
    reason: str


def _check(
    price: Price,
    instance: InstanceType | None,
    reference: Mapping[str, ReferenceRange],
    factor: float,
) -> str | None:
    if price.currency != "CNY":
        return f"currency {price.currency!r} is not CNY"
    per_hour = price.price_per_hour
    if per_hour is None or not math.isfinite(per_hour) or per_hour <= 0:
        return f"price_per_hour {per_hour!r} is not a positive amount"
    if price.billing == "monthly":
        per_month = price.price_per_month
        if per_month is None or not math.isfinite(per_month) or per_month <= 0:
            return f"price_per_month {per_month!r} is not a positive amount"
        if not math.isclose(per_hour, per_month / HOURS_PER_MONTH, rel_tol=1e-3):
            return "price_per_hour is not price_per_month / 730"
    if per_hour > MAX_PER_HOUR:
        return f"{per_hour:.2f} CNY/h is above the absolute ceiling {MAX_PER_HOUR:.0f}"
    if instance is None:
        return "instance type is not in the provider's catalog"
    if instance.accelerator is None or instance.accelerator_count <= 0:
        return None
    ref = reference.get(instance.accelerator)
    if ref is None:
        return None
    per_device = per_hour / instance.accelerator_count
    low = ref.low * BILLING_LOW_SCALE.get(price.billing, 1.0) / factor
    if per_device < low:
        return (
            f"{per_device:.2f} CNY per {instance.accelerator}-hour is below the plausible "
            f"{price.billing} floor {low:.2f} ({ref.basis})"
        )
    if ref.high is not None and per_device > ref.high * factor:
        return (
            f"{per_device:.2f} CNY per {instance.accelerator}-hour is above the plausible "
            f"ceiling {ref.high * factor:.2f} ({ref.basis})"
        )
    return None


def validate_prices(
    prices: Iterable[Price],
    instances: Mapping[str, InstanceType],
    reference: Mapping[str, ReferenceRange] = DEFAULT_REFERENCE,
    *,
    factor: float = SANITY_FACTOR,
) -> tuple[tuple[Price, ...], tuple[RejectedPrice, ...]]:
    """Split live prices into (kept, rejected). ``instances`` maps instance type name to
    its catalog row, which says the accelerator and how many of them the price covers."""
    kept: list[Price] = []
    rejected: list[RejectedPrice] = []
    for price in prices:
        reason = _check(price, instances.get(price.instance_type), reference, factor)
        if reason is None:
            kept.append(price)
            continue
        log.warning(
            "live price outlier dropped: %s %s %s (%s): %s",
            price.instance_type,
            price.region,
            price.billing,
            price.source,
            reason,
        )
        rejected.append(RejectedPrice(price=price, reason=reason))
    return tuple(kept), tuple(rejected)
