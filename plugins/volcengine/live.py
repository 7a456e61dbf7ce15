"""Volcano Engine live prices through the official billing SDK (``volcenginesdkbilling``).

Install with ``pip install 'suanli[volcengine]'``, which pulls the two split packages
``volcenginesdkcore`` + ``volcenginesdkbilling`` (about 7 MB) rather than the
all-services ``volcengine-python-sdk``. The billing package ships typed models for both
price queries, so no generic/universal client is needed. Credentials come from the
SDK's standard variables ``VOLCENGINE_ACCESS_KEY`` / ``VOLCENGINE_SECRET_KEY`` (plus
``VOLCENGINE_SESSION_TOKEN``); a sub-user needs ``BillingCenterReadOnlyAccess``
(volcengine.com/docs/6269/1477208, the billing price APIs' permission note).

APIs (service ``billing``, version 2022-01-01, ``billing.volcengineapi.com``), SDK
models read from ``volcenginesdkbilling.models``:

* ``QueryPriceForPayAsYouGo``: ``QueryPriceForPayAsYouGoRequest`` {``Product``,
  ``ConfigList``: ``ConfigListForQueryPriceForPayAsYouGoInput`` {``ChargeItemCode``,
  ``ConfigurationCode``, ``Quantity``, ``UseDuration``}} ->
  ``QueryPriceForPayAsYouGoResponse`` {``Currency``, ``TotalOriginalAmount``,
  ``TotalDiscountAmount``, ``ConfigList``: ``ConfigListForQueryPriceForPayAsYouGoOutput``
  {``ConfigurationCode``, ``ChargeItemCode``, ``OriginalAmount``, ``DiscountAmount``,
  ``Price``, ``Quantity``}};
* ``QueryPriceForSubscription``: the same shapes (``...ForSubscription...`` classes).

Amounts are strings. **What ``DiscountAmount`` means is not documented for these two
APIs**: the sibling ``QueryPriceForRenew`` doc calls it "总折扣价" (the discounted total,
its example: Original 100, Discount 50), but it could also be the saving. So
:func:`paid_amount` decides per line, in this order: a line's ``Price`` (or
``DiscountDetail.DiscountPrice``) equal to ``DiscountAmount`` means the discounted total,
equal to ``OriginalAmount - DiscountAmount`` means the saving; ``DiscountAmount`` of 0
(or empty) means no discount (a total of 0 is never a price); otherwise the assumption
``SUANLI_VOLCENGINE_DISCOUNT_AMOUNT`` (``total``, the default, after the Renew doc; or
``saving``) applies. The request sets ``Count=1`` and ``Quantity=1`` (one instance; the
SDK model has both and their difference is undocumented) and ``UseDuration=1``, read as
one hour (pay-as-you-go) and one month (subscription).

**Codes are configuration, not discovered.** The API prices a billing product's
``ConfigurationCode`` / ``ChargeItemCode``, internal codes that the ECS catalog APIs do
not expose (an independent catalog project reports the same, as quoted by the catalog
audit, shared/reference/catalog-audit-2.md §4.4). So the operator supplies them, per
instance type (and optionally per region, since the request has no region field), in a
JSON file named by ``SUANLI_VOLCENGINE_PRICE_CODES``::

    {"ecs.hpcpni3ln.45xlarge": {"product": "ECS", "configuration_code": "...",
                                "charge_item_code": "..."},
     "cn-shanghai/ecs.hpcpni3ln.45xlarge": {...}}

Without that file live prices stay off for Volcano (shown in ``GET /v1/providers``).
The unit reading of ``UseDuration`` and the meaning of the codes are not confirmed by
a document found here; the sanity ranges in :mod:`service.catalog.live.validate` catch a
month read as an hour for accelerators with a reference range.

Errors (``volcenginesdkcore.rest.ApiException``): HTTP 429/5xx, an in-body error whose
code says throttling or internal error, and connection failures are transient; other
errors are not. The SDK's own auto-retry is switched off so the refresh job's back-off
is the only one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

from service import (
    Clock,
    LiveBilling,
    LivePriceError,
    LivePriceSource,
    Price,
    TransientLivePriceError,
    availability,
    credentials_present,
    iso_utc,
    live_price,
    parse_amount,
    require_cny,
    utc_now,
)

log = logging.getLogger(__name__)

SDK_MODULE = "volcenginesdkbilling"
EXTRA = "volcengine"
CREDENTIALS = ("VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY")
TOKEN = "VOLCENGINE_SESSION_TOKEN"  # noqa: S105 (the variable name, not a secret)
CODES_ENV = "SUANLI_VOLCENGINE_PRICE_CODES"
API_ON_DEMAND = "QueryPriceForPayAsYouGo"
API_MONTHLY = "QueryPriceForSubscription"
SIGNING_REGION = "cn-beijing"
ALL_BILLINGS: tuple[LiveBilling, ...] = ("on_demand", "monthly")
TRANSIENT_MARKERS = ("FlowLimit", "Throttl", "RequestLimit", "InternalError", "ServiceUnavailable")


class VolcanoPriceCodes(msgspec.Struct, frozen=True, kw_only=True):
    """The billing codes that price one instance type."""

    product: str
    configuration_code: str
    charge_item_code: str | None = None


DISCOUNT_ENV = "SUANLI_VOLCENGINE_DISCOUNT_AMOUNT"
DiscountMeaning = Literal["total", "saving"]


def _number(value: object) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(str(value))
    except ValueError:
        return None


def paid_amount(
    original: object,
    discount: object,
    price: object = None,
    assume: DiscountMeaning = "total",
) -> tuple[float | None, str]:
    """(what this account pays, how ``DiscountAmount`` was read) for one quote line."""
    o, d, p = _number(original), _number(discount), _number(price)
    if d is None or d == 0:
        return o, "no discount"
    if o is not None and d > o + 1e-9:
        return None, f"DiscountAmount {d} above OriginalAmount {o}"
    if p is not None and o is not None:
        if abs(p - d) <= 1e-6 * max(1.0, p):
            return d, "DiscountAmount is the discounted total (matches Price)"
        if abs(p - (o - d)) <= 1e-6 * max(1.0, p):
            return o - d, "DiscountAmount is the saving (Price = Original - Discount)"
    if assume == "saving" and o is not None:
        return o - d, f"DiscountAmount read as the saving ({DISCOUNT_ENV}=saving)"
    return d, "DiscountAmount read as the discounted total (QueryPriceForRenew doc)"


def load_codes(path: str | os.PathLike[str]) -> dict[str, VolcanoPriceCodes]:
    """Read the operator's code file (see module docstring); raises on a bad file."""
    try:
        return msgspec.json.decode(Path(path).read_bytes(), type=dict[str, VolcanoPriceCodes])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise LivePriceError(f"{CODES_ENV}={path}: {exc}") from exc


def _translate(exc: Exception, api: str) -> LivePriceError:
    from urllib3.exceptions import HTTPError
    from volcenginesdkcore.rest import ApiException

    if isinstance(exc, ApiException):
        text = f"{api}: HTTP {exc.status} {exc.reason}"
        status = int(exc.status or 0)
        if status == 0 or status == 429 or status >= 500:
            return TransientLivePriceError(text)
        if any(marker in str(exc.reason) for marker in TRANSIENT_MARKERS):
            return TransientLivePriceError(text)
        return LivePriceError(text)
    if isinstance(exc, HTTPError | OSError):
        return TransientLivePriceError(f"{api}: {type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError | TypeError | AttributeError):
        return LivePriceError(f"{api}: malformed payload ({type(exc).__name__}: {exc})")
    return LivePriceError(f"{api}: {type(exc).__name__}: {exc}")


class VolcengineLivePrices:
    """:class:`~service.catalog.models.LivePriceSource` for Volcano Engine ECS."""

    def __init__(
        self,
        *,
        codes: Mapping[str, VolcanoPriceCodes] | None = None,
        endpoint: str | None = None,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        billings: Sequence[LiveBilling] = ALL_BILLINGS,
        clock: Clock = utc_now,
    ) -> None:
        """``codes`` maps ``instance_type`` or ``region/instance_type`` to billing codes;
        ``None`` reads the file named by ``SUANLI_VOLCENGINE_PRICE_CODES``.
        ``endpoint`` (``http://host:port``) replaces ``billing.volcengineapi.com`` for
        tests against a local stand-in; production leaves it ``None``."""
        self._codes = dict(codes) if codes is not None else None
        self._endpoint = endpoint
        self._environ = environ
        self._timeout_s = timeout_s
        self._billings = tuple(b for b in billings if b in ALL_BILLINGS)
        self._clock = clock

    def _env(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _code_table(self) -> dict[str, VolcanoPriceCodes]:
        if self._codes is None:
            path = self._env().get(CODES_ENV)
            self._codes = load_codes(path) if path else {}
        return self._codes

    def live_prices_configured(self) -> bool:
        """Credentials are set (whether or not the SDK is installed)."""
        return credentials_present(CREDENTIALS, self._environ)

    def live_prices_available(self) -> tuple[bool, str | None]:
        ok, reason = availability(SDK_MODULE, EXTRA, CREDENTIALS, self._environ)
        if not ok:
            return ok, reason
        try:
            table = self._code_table()
        except LivePriceError as exc:
            return False, str(exc)
        if not table:
            return False, f"no Volcano billing codes configured ({CODES_ENV})"
        return True, None

    def _api(self) -> Any:
        import volcenginesdkcore
        from volcenginesdkbilling.api.billing_api import BILLINGApi

        env = self._env()
        config = volcenginesdkcore.Configuration()
        config.ak = env.get(CREDENTIALS[0])
        config.sk = env.get(CREDENTIALS[1])
        config.session_token = env.get(TOKEN) or ""
        config.region = SIGNING_REGION
        config.connect_timeout = self._timeout_s
        config.read_timeout = self._timeout_s
        config.auto_retry = False
        if self._endpoint:
            url = urlsplit(self._endpoint)
            config.host = url.netloc
            config.scheme = url.scheme
        return BILLINGApi(volcenginesdkcore.ApiClient(config))

    def codes_for(self, region: str, instance_type: str) -> VolcanoPriceCodes | None:
        table = self._code_table()
        return table.get(f"{region}/{instance_type}") or table.get(instance_type)

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        ok, reason = self.live_prices_available()
        if not ok:
            raise LivePriceError(f"live prices unavailable: {reason}")
        coded = {n: c for n in dict.fromkeys(instance_types) if (c := self.codes_for(region, n))}
        if not coded:
            return []
        api = self._api()
        as_of = iso_utc(self._clock())
        prices: list[Price] = []
        for billing in self._billings:
            for name, amount in self._query(api, billing, coded).items():
                notes = "billing codes from operator config; UseDuration=1 read as 1 " + (
                    "hour" if billing == "on_demand" else "month"
                )
                prices.append(
                    live_price(
                        instance_type=name,
                        region=region,
                        billing=billing,
                        api=API_ON_DEMAND if billing == "on_demand" else API_MONTHLY,
                        as_of=as_of,
                        per_hour=amount if billing == "on_demand" else None,
                        per_month=amount if billing == "monthly" else None,
                        notes=notes,
                    )
                )
        return prices

    def _query(
        self, api: Any, billing: LiveBilling, coded: Mapping[str, VolcanoPriceCodes]
    ) -> dict[str, float]:
        from volcenginesdkbilling import models

        if billing == "on_demand":
            name_api, call = API_ON_DEMAND, api.query_price_for_pay_as_you_go
            request_cls = models.QueryPriceForPayAsYouGoRequest
            item_cls = models.ConfigListForQueryPriceForPayAsYouGoInput
        else:
            name_api, call = API_MONTHLY, api.query_price_for_subscription
            request_cls = models.QueryPriceForSubscriptionRequest
            item_cls = models.ConfigListForQueryPriceForSubscriptionInput
        by_product: dict[str, list[tuple[str, VolcanoPriceCodes]]] = {}
        for name, codes in coded.items():
            by_product.setdefault(codes.product, []).append((name, codes))
        out: dict[str, float] = {}
        for product, rows in by_product.items():
            request = request_cls(
                product=product,
                config_list=[
                    item_cls(
                        configuration_code=c.configuration_code,
                        charge_item_code=c.charge_item_code,
                        count=1,
                        quantity=1,
                        use_duration=1,
                    )
                    for _, c in rows
                ],
            )
            try:
                response = call(request)
            except Exception as exc:
                raise _translate(exc, name_api) from exc
            if response is None or response.config_list is None:
                raise LivePriceError(f"malformed payload: {name_api} has no ConfigList")
            require_cny(response.currency, name_api)
            for name, codes in rows:
                line = next(
                    (
                        x
                        for x in response.config_list
                        if x.configuration_code == codes.configuration_code
                        and (codes.charge_item_code in (None, x.charge_item_code))
                    ),
                    None,
                )
                if line is None:
                    continue  # not quoted: unpriced (partial coverage)
                detail = getattr(line, "discount_detail", None)
                unit = line.price
                if unit in (None, "") and detail is not None:
                    unit = getattr(detail, "discount_price", None)
                paid, how = paid_amount(
                    line.original_amount, line.discount_amount, unit, self._discount_meaning()
                )
                log.info("volcengine %s %s: %s", name_api, name, how)
                out[name] = parse_amount(paid, f"{name_api} {name} DiscountAmount")
        return out

    def _discount_meaning(self) -> DiscountMeaning:
        value = self._env().get(DISCOUNT_ENV, "total").strip().lower()
        return "saving" if value == "saving" else "total"


def make_live_source() -> LivePriceSource:
    """Entry point found by :mod:`service.catalog.live.discovery`."""
    return VolcengineLivePrices()
