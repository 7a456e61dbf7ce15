"""Tencent Cloud live prices through the official CVM SDK (``tencentcloud-sdk-python-cvm``).

Install with ``pip install 'suanli[tencent]'``; credentials come from the SDK's standard
variables ``TENCENTCLOUD_SECRET_ID`` / ``TENCENTCLOUD_SECRET_KEY`` (plus
``TENCENTCLOUD_SESSION_TOKEN`` for temporary keys). The CAM policy needs only
``cvm:DescribeZoneInstanceConfigInfos``.

API: ``DescribeZoneInstanceConfigInfos`` (version 2017-03-12), one call per region for
up to 100 instance types (``Filter.Values`` is capped at 100), filtered by
``instance-type`` and ``instance-charge-type`` in ``POSTPAID_BY_HOUR`` / ``PREPAID`` /
``SPOTPAID``. SDK models read (``tencentcloud.cvm.v20170312.models``):

* ``DescribeZoneInstanceConfigInfosResponse.InstanceTypeQuotaSet``: list of
  ``InstanceTypeQuotaItem`` (``Zone``, ``InstanceType``, ``InstanceChargeType``,
  ``Status`` SELL/SOLD_OUT, ``Price``);
* ``ItemPrice``: for postpaid and spot, ``UnitPrice`` (list) and ``UnitPriceDiscount``
  (after discount) per ``ChargeUnit`` (``HOUR``); when ``UnitPriceSecondStep`` is
  returned, ``UnitPrice*`` covers the first 96 hours only (the model's docstring), which
  the price's ``notes`` then say. For ``PREPAID``, ``OriginalPrice`` / ``DiscountPrice``
  is the prepaid amount; the model gives 1-, 3- and 5-year amounts in separate
  ``*OneYear`` / ``*ThreeYear`` / ``*FiveYear`` fields, so the plain field is read as
  the one-month amount.

The price used is the discounted one (what this account would pay), the cheapest zone
of the region (zone named in ``notes``). Currency: the API returns amounts in 元 (the
model's docstring: "单位：元"), i.e. CNY, on the China site this SDK targets by default.

Regions: the service only asks regions in the provider's region list, which follows
the API's supported-region list (tencentcloud.com/document/product/213/33254, 2025-11-13);
a region outside it (``ap-mumbai``, still named by the GPU docs) is refused up front with
the reason instead of a failing call.

Errors (``TencentCloudSDKException.code``): ``RequestLimitExceeded*``, ``InternalError*``,
``ServerNetworkError`` (non-200) and ``ClientNetworkError`` are transient; the rest
(``AuthFailure*``, ``UnauthorizedOperation``, a non-JSON body) are not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

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
    utc_now,
)

SDK_MODULE = "tencentcloud.cvm.v20170312.cvm_client"
EXTRA = "tencent"
CREDENTIALS = ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY")
TOKEN = "TENCENTCLOUD_SESSION_TOKEN"  # noqa: S105 (the variable name, not a secret)
API = "DescribeZoneInstanceConfigInfos"
MAX_FILTER_VALUES = 100
CHARGE_TYPES: Mapping[LiveBilling, str] = {
    "on_demand": "POSTPAID_BY_HOUR",
    "monthly": "PREPAID",
    "spot": "SPOTPAID",
}
ALL_BILLINGS: tuple[LiveBilling, ...] = ("on_demand", "monthly", "spot")
UNSUPPORTED_REGIONS = frozenset({"ap-mumbai"})
"""Regions the GPU docs name that DescribeZoneInstanceConfigInfos does not serve."""
TRANSIENT_CODES = (
    "RequestLimitExceeded",
    "InternalError",
    "ServerNetworkError",
    "ClientNetworkError",
)


def _translate(exc: Exception) -> LivePriceError:
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import (
        TencentCloudSDKException,
    )

    if isinstance(exc, TencentCloudSDKException):
        code = str(exc.code or "")
        text = f"{API}: {code}: {exc.message}"
        if code.startswith(TRANSIENT_CODES):
            return TransientLivePriceError(text)
        if code in ("JSONDecodeError", "KeyError", "TypeError", "AttributeError"):
            return LivePriceError(f"{API}: malformed payload ({code}: {exc.message})")
        return LivePriceError(text)
    return LivePriceError(f"{API}: {type(exc).__name__}: {exc}")


class TencentLivePrices:
    """:class:`~service.catalog.models.LivePriceSource` for Tencent Cloud CVM."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        billings: Sequence[LiveBilling] = ALL_BILLINGS,
        clock: Clock = utc_now,
    ) -> None:
        """``endpoint`` (``http://host:port``) replaces ``cvm.tencentcloudapi.com`` for
        tests against a local stand-in; production leaves it ``None``."""
        self._endpoint = endpoint
        self._environ = environ
        self._timeout_s = timeout_s
        self._billings = tuple(billings)
        self._clock = clock

    def live_prices_configured(self) -> bool:
        """Credentials are set (whether or not the SDK is installed)."""
        return credentials_present(CREDENTIALS, self._environ)

    def live_prices_available(self) -> tuple[bool, str | None]:
        return availability(SDK_MODULE, EXTRA, CREDENTIALS, self._environ)

    def _client(self, region: str) -> Any:
        from tencentcloud.common.credential import Credential
        from tencentcloud.common.profile.client_profile import ClientProfile
        from tencentcloud.common.profile.http_profile import HttpProfile
        from tencentcloud.cvm.v20170312.cvm_client import CvmClient

        env = os.environ if self._environ is None else self._environ
        credential = Credential(
            env.get(CREDENTIALS[0]), env.get(CREDENTIALS[1]), env.get(TOKEN) or None
        )
        http = HttpProfile(reqTimeout=max(1, round(self._timeout_s)))
        if self._endpoint:
            url = urlsplit(self._endpoint)
            http = HttpProfile(protocol=url.scheme, endpoint=url.netloc, reqTimeout=http.reqTimeout)
        return CvmClient(credential, region, ClientProfile(httpProfile=http))

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        ok, reason = self.live_prices_available()
        if not ok:
            raise LivePriceError(f"live prices unavailable: {reason}")
        if region in UNSUPPORTED_REGIONS:
            raise LivePriceError(
                f"{API}: {region} is not in the API's supported-region list (2025-11-13)"
            )
        client = self._client(region)
        as_of = iso_utc(self._clock())
        wanted = list(dict.fromkeys(instance_types))
        best: dict[tuple[str, LiveBilling], tuple[float, str, bool]] = {}
        for start in range(0, len(wanted), MAX_FILTER_VALUES):
            chunk = wanted[start : start + MAX_FILTER_VALUES]
            for item in self._query(client, chunk):
                quote = self._quote(item, set(chunk))
                if quote is None:
                    continue
                name, billing, amount, zone, tiered = quote
                current = best.get((name, billing))
                if current is None or amount < current[0]:
                    best[(name, billing)] = (amount, zone, tiered)
        return [
            self._price(name, region, billing, as_of, amount, zone, tiered)
            for (name, billing), (amount, zone, tiered) in sorted(best.items())
        ]

    def _query(self, client: Any, names: list[str]) -> list[Any]:
        from tencentcloud.cvm.v20170312 import models

        by_type = models.Filter()
        by_type.Name = "instance-type"
        by_type.Values = names
        by_charge = models.Filter()
        by_charge.Name = "instance-charge-type"
        by_charge.Values = [CHARGE_TYPES[b] for b in self._billings]
        request = models.DescribeZoneInstanceConfigInfosRequest()
        request.Filters = [by_type, by_charge]
        try:
            response = client.DescribeZoneInstanceConfigInfos(request)
        except Exception as exc:
            raise _translate(exc) from exc
        items = response.InstanceTypeQuotaSet
        if items is None:
            raise LivePriceError(f"malformed payload: {API} has no InstanceTypeQuotaSet")
        return list(items)

    def _quote(
        self, item: Any, wanted: set[str]
    ) -> tuple[str, LiveBilling, float, str, bool] | None:
        """(type, billing, amount, zone, tiered) of one zone row, or ``None`` to skip."""
        name = item.InstanceType
        billing = next((b for b, c in CHARGE_TYPES.items() if c == item.InstanceChargeType), None)
        if name not in wanted or billing is None or billing not in self._billings:
            return None
        price = item.Price
        if price is None:
            raise LivePriceError(f"malformed payload: {API} {name} {billing} has no Price")
        where = f"{API} {name} {item.Zone} {item.InstanceChargeType}"
        if billing == "monthly":
            raw = price.DiscountPrice if price.DiscountPrice is not None else price.OriginalPrice
            amount = parse_amount(raw, f"{where} DiscountPrice")
            tiered = False
        else:
            if price.ChargeUnit not in (None, "HOUR"):
                raise LivePriceError(f"{where}: unexpected ChargeUnit {price.ChargeUnit!r}")
            raw = (
                price.UnitPriceDiscount if price.UnitPriceDiscount is not None else price.UnitPrice
            )
            amount = parse_amount(raw, f"{where} UnitPriceDiscount")
            tiered = price.UnitPriceSecondStep is not None
        return name, billing, amount, str(item.Zone), tiered

    @staticmethod
    def _price(
        name: str,
        region: str,
        billing: LiveBilling,
        as_of: str,
        amount: float,
        zone: str,
        tiered: bool,
    ) -> Price:
        notes = f"cheapest zone {zone}; discounted price; CPU+RAM+GPU only (disks, network extra)"
        if tiered:
            notes += "; tiered on-demand price, this is the first 96 h tier"
        if billing == "monthly":
            return live_price(
                instance_type=name,
                region=region,
                billing=billing,
                api=API,
                as_of=as_of,
                per_month=amount,
                notes=notes,
            )
        return live_price(
            instance_type=name,
            region=region,
            billing=billing,
            api=API,
            as_of=as_of,
            per_hour=amount,
            notes=notes,
        )


def make_live_source() -> LivePriceSource:
    """Entry point found by :mod:`service.catalog.live.discovery`."""
    return TencentLivePrices()
