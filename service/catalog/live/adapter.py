"""Small helpers every live price adapter (``plugins/<cloud>/live.py``) shares.

They keep the four adapters honest in the same way: one place decides what a live
:class:`~service.catalog.models.Price` looks like (``source="live:<Api>"``,
``price_source="live"``, ``as_of`` = fetch time in UTC), how an amount from a payload is
parsed (a malformed amount is an error, never a zero), and how "SDK installed and
credentials present" is checked without importing the SDK at module import time.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Literal

from service.catalog.live.errors import LivePriceError
from service.catalog.models import HOURS_PER_MONTH, Price

Clock = Callable[[], datetime]

LiveBilling = Literal["on_demand", "monthly", "spot"]


def utc_now() -> datetime:
    """The default clock (UTC, timezone-aware); adapters and the refresh job take a clock
    parameter so tests can pin time instead of sleeping."""
    return datetime.now(UTC)


def iso_utc(moment: datetime) -> str:
    """``2026-11-30T08:00:00Z``: the ``as_of`` of a live price (matches ``AS_OF_PATTERN``)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso_utc(text: str) -> datetime:
    """Inverse of :func:`iso_utc` (accepts any ISO-8601 form ``datetime`` understands)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_amount(value: object, what: str) -> float:
    """A money amount from an API payload as a finite float.

    SDKs hand amounts over as float, int, ``Decimal`` or numeric string depending on the
    cloud. Anything else (``None``, ``""``, ``"abc"``, a bool, NaN) raises
    :class:`LivePriceError`: a malformed payload must fail loudly, not become a price.
    """
    if isinstance(value, bool) or value is None:
        raise LivePriceError(f"malformed payload: {what} is {value!r}, not an amount")
    number: float
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, Decimal | str):
        try:
            number = float(Decimal(str(value).strip()))
        except (InvalidOperation, ValueError):
            raise LivePriceError(f"malformed payload: {what} is {value!r}, not an amount") from None
    else:
        raise LivePriceError(f"malformed payload: {what} is a {type(value).__name__}")
    if not math.isfinite(number):
        raise LivePriceError(f"malformed payload: {what} is {value!r}")
    return number


def require_cny(currency: object, api: str) -> None:
    """Refuse a quote in any currency but CNY (the international sites quote USD); the
    service never converts currencies."""
    if currency != "CNY":
        raise LivePriceError(f"{api} quoted currency {currency!r}, expected 'CNY'")


def live_price(
    *,
    instance_type: str,
    region: str,
    billing: LiveBilling,
    api: str,
    as_of: str,
    per_hour: float | None = None,
    per_month: float | None = None,
    notes: str | None = None,
) -> Price:
    """Build a live :class:`Price`. ``monthly`` takes ``per_month`` and derives the hourly
    figure over the 730-hour billing month; the other billings take ``per_hour``."""
    if billing == "monthly":
        if per_month is None:
            raise ValueError("a monthly live price needs per_month")
        per_hour = round(per_month / HOURS_PER_MONTH, 6)
    elif per_hour is None:
        raise ValueError(f"a {billing} live price needs per_hour")
    return Price(
        instance_type=instance_type,
        region=region,
        billing=billing,
        price_per_hour=per_hour,
        price_per_month=per_month,
        currency="CNY",
        source=f"live:{api}",
        as_of=as_of,
        price_source="live",
        notes=notes,
    )


def missing_env(names: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The credential variables that are unset or empty."""
    env = os.environ if environ is None else environ
    return [name for name in names if not env.get(name)]


def credentials_present(names: Iterable[str], environ: Mapping[str, str] | None = None) -> bool:
    """Every credential variable is set: an operator meant this cloud's live prices to
    work (``suanli prices refresh`` fails when they still cannot be fetched)."""
    return not missing_env(names, environ)


def sdk_missing(module: str, extra: str) -> str | None:
    """``None`` when ``module`` imports, else the reason naming the pip extra to install.

    The import happens here, inside a function, so a plugin without its SDK still loads
    and serves shipped data.
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        return f"SDK not installed ({exc.name or module}): pip install 'suanli[{extra}]'"
    return None


def availability(
    module: str, extra: str, credentials: Iterable[str], environ: Mapping[str, str] | None
) -> tuple[bool, str | None]:
    """The usual ``live_prices_available()``: SDK importable and credentials present."""
    reason = sdk_missing(module, extra)
    if reason is not None:
        return False, reason
    missing = missing_env(credentials, environ)
    if missing:
        return False, "credentials not set: " + ", ".join(missing)
    return True, None
