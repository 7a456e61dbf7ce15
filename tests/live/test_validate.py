"""Live price sanity checks against per-accelerator reference ranges (price-notes.md)."""

from __future__ import annotations

import msgspec
import pytest

from service.catalog.live.adapter import live_price, parse_amount
from service.catalog.live.errors import LivePriceError
from service.catalog.live.validate import DEFAULT_REFERENCE, validate_prices
from service.catalog.models import Price

from .conftest import row

CATALOG = {
    r.instance_type: r
    for r in (
        row("GT4.41XLARGE948", "A100-40GB", 8),
        row("GN7.2XLARGE32", "T4", 1),
        row("ecs.gn7i-c8g1.2xlarge", "A10", 1),
        row("S5.LARGE8", None, 0),
    )
}


def price(name: str, amount: float, billing: str = "on_demand") -> Price:
    if billing == "monthly":
        return live_price(
            instance_type=name,
            region="r",
            billing="monthly",
            api="T",
            as_of="2026-11-30T08:00:00Z",
            per_month=amount,
        )
    return live_price(
        instance_type=name,
        region="r",
        billing=billing,  # type: ignore[arg-type]
        api="T",
        as_of="2026-11-30T08:00:00Z",
        per_hour=amount,
    )


def reasons(*prices: Price) -> list[str]:
    kept, rejected = validate_prices(prices, CATALOG)
    assert len(kept) + len(rejected) == len(prices)
    return [r.reason for r in rejected]


def test_list_prices_from_the_reference_pass() -> None:
    # Tencent list prices (price-facts.csv): 8x A100 237.51/h and 114016/month; T4 8.68/h.
    assert (
        reasons(
            price("GT4.41XLARGE948", 237.51),
            price("GT4.41XLARGE948", 114016.0, "monthly"),
            price("GN7.2XLARGE32", 8.68),
        )
        == []
    )


def test_per_accelerator_bounds_scale_with_count_and_billing() -> None:
    # A100-40GB reference 28.64-29.69 per GPU-hour, widened 3x: 9.55 .. 89.07 per GPU.
    assert reasons(price("GT4.41XLARGE948", 8 * 9.6)) == []
    assert "below the plausible on_demand floor" in reasons(price("GT4.41XLARGE948", 8 * 9.0))[0]
    assert "above the plausible ceiling" in reasons(price("GT4.41XLARGE948", 8 * 90.0))[0]
    # spot may be 90% off: 8 x 1.0/h passes as spot, not as on-demand
    assert reasons(price("GT4.41XLARGE948", 8.0, "spot")) == []
    assert reasons(price("GT4.41XLARGE948", 8.0, "on_demand")) != []


def test_rows_without_reference_get_only_the_absolute_ceiling() -> None:
    assert "A10" not in DEFAULT_REFERENCE
    assert reasons(price("ecs.gn7i-c8g1.2xlarge", 0.01), price("S5.LARGE8", 0.2)) == []
    assert "absolute ceiling" in reasons(price("S5.LARGE8", 2500.0))[0]


def test_wrong_currency_nonpositive_and_unknown_types_are_rejected() -> None:
    usd = msgspec.structs.replace(price("GN7.2XLARGE32", 1.2), currency="USD")
    zero = price("GN7.2XLARGE32", 0.0)
    inconsistent = msgspec.structs.replace(
        price("GN7.2XLARGE32", 2500.0, "monthly"), price_per_hour=8.68
    )
    stranger = price("GN99.HUGE", 10.0)

    assert reasons(usd, zero, inconsistent, stranger) == [
        "currency 'USD' is not CNY",
        "price_per_hour 0.0 is not a positive amount",
        "price_per_hour is not price_per_month / 730",
        "instance type is not in the provider's catalog",
    ]


@pytest.mark.parametrize("value", [None, "", "abc", True, float("nan"), [1.0]])
def test_malformed_amounts_raise(value: object) -> None:
    with pytest.raises(LivePriceError, match="malformed payload"):
        parse_amount(value, "TradePrice")


@pytest.mark.parametrize(("value", "expected"), [("8.68", 8.68), (34.74, 34.74), (2500, 2500.0)])
def test_amounts_parse_from_every_sdk_representation(value: object, expected: float) -> None:
    assert parse_amount(value, "x") == expected
