"""Alibaba Cloud live prices through the official ECS SDK (``alibabacloud_ecs20140526``).

Install with ``pip install 'suanli[alibaba]'``; credentials come from the SDK's standard
variables ``ALIBABA_CLOUD_ACCESS_KEY_ID`` / ``ALIBABA_CLOUD_ACCESS_KEY_SECRET`` (plus
``ALIBABA_CLOUD_SECURITY_TOKEN`` for STS). The RAM policy needs only
``ecs:DescribePrice`` and ``ecs:DescribeSpotPriceHistory``.

APIs and the SDK models this module reads (``alibabacloud_ecs20140526.models``):

* ``DescribePrice`` (``DescribePriceRequest``: ``RegionId``, ``ResourceType=instance``,
  ``InstanceType``, ``PriceUnit`` ``Hour``/``Month``, ``Period=1``) answers
  ``DescribePriceResponseBody.PriceInfo.Price`` (``DescribePriceResponseBodyPriceInfoPrice``:
  ``Currency``, ``OriginalPrice``, ``DiscountPrice``, ``TradePrice`` = original minus
  discount, ``DetailInfos.DetailInfo[]`` with ``Resource`` and ``TradePrice`` per priced
  resource). The SDK doc says ``Currency`` is CNY on the China site, USD on the
  international site; only CNY is accepted. One instance type per call.
  **System disk.** The request names the system disk explicitly (``SystemDisk.Category
  = cloud_essd``, ``PerformanceLevel = PL0``, 40 GiB): the unset default depends on the
  site and date (``cloud_efficiency``, changed to ESSD PL0 for ESSD-only types after
  2026-01-30, notice aliyun.com/notice/117844), so an explicit disk gives the same
  quote everywhere. A family that rejects ESSD (``InvalidSystemDiskCategory.*``) is
  asked again without a disk. The price kept is the instance alone: the itemized line
  whose ``Resource`` is ``instanceType`` (compared case-insensitively: the API reference
  spells it ``InstanceType``, its examples ``instanceType``); without that line, the
  total minus every itemized non-instance line (system disk, image, bandwidth); with no
  itemization at all, the total, labelled as including the system disk.
* ``DescribeSpotPriceHistory`` (``DescribeSpotPriceHistoryRequest``: ``RegionId``,
  ``InstanceType``, ``NetworkType=vpc``, ``OSType=linux``, ``SpotDuration`` set
  explicitly (default 1: the price of a spot instance with the 1-hour protection period,
  the console's default; 0 asks for the cheaper no-protection price); default window:
  the last 3 hours) answers ``DescribeSpotPriceHistoryResponseBody``: ``Currency`` and
  ``SpotPrices.SpotPriceType[]`` (``ZoneId``, ``InstanceType``, ``SpotPrice``,
  ``OriginPrice``, ``Timestamp``). The spot price is the latest entry per zone, and the
  cheapest zone; the zone is named in the price's ``notes``.

Errors (``alibabacloud_tea_openapi.exceptions``): ``ThrottlingException``, a
``ClientException`` whose ``Code`` starts with ``Throttling`` (ECS answers HTTP 400
``Throttling``/``Throttling.User``), ``ServerException`` (5xx) and transport failures are
transient; an error code about the instance type (not sold in the region) drops that
type only; anything else (``InvalidAccessKeyId``, ``Forbidden.RAM``) fails the region.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
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
    require_cny,
    utc_now,
)

log = logging.getLogger(__name__)

SDK_MODULE = "alibabacloud_ecs20140526"
EXTRA = "alibaba"
CREDENTIALS = ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET")
TOKEN = "ALIBABA_CLOUD_SECURITY_TOKEN"  # noqa: S105 (the variable name, not a secret)
API_PRICE = "DescribePrice"
API_SPOT = "DescribeSpotPriceHistory"
ALL_BILLINGS: tuple[LiveBilling, ...] = ("on_demand", "monthly", "spot")


SYSTEM_DISK = {"category": "cloud_essd", "performance_level": "PL0", "size": 40}
"""The system disk named in every DescribePrice request (its price is excluded)."""


def _not_sold(code: str) -> bool:
    """Error codes that mean "this instance type has no price here", not "you are wrong"."""
    return "instancetype" in code.lower() or code in ("PriceNotFound", "InvalidParameter")


def _disk_rejected(code: str) -> bool:
    """The type does not take the requested system disk (e.g. no ESSD on old families)."""
    return code.lower().startswith("invalidsystemdiskcategory")


def instance_line(details: Sequence[Any], total: float, what: str) -> tuple[float, str]:
    """The instance's own price out of a DescribePrice answer, and how it was found.

    ``details`` are the ``DetailInfo`` items (``resource``, ``trade_price``). Pure, so the
    three cases (itemized instance line, only other lines, no itemization) are testable.
    """
    others = 0.0
    for item in details:
        resource = str(getattr(item, "resource", "") or "")
        amount = parse_amount(getattr(item, "trade_price", None), f"{what} {resource} TradePrice")
        if resource.lower() == "instancetype":
            return amount, "instance line"
        others += amount
    if details:
        log.warning("%s: no instanceType line; total minus %.4f of other lines", what, others)
        return total - others, "total minus the itemized disk/image lines"
    log.warning("%s: not itemized; the total includes the system disk", what)
    return total, "total, including a 40 GiB ESSD PL0 system disk (not itemized)"


def _translate(exc: Exception, what: str) -> LivePriceError:
    """Map an SDK exception to a transient or permanent :class:`LivePriceError`."""
    from alibabacloud_tea_openapi import exceptions as api_errors
    from darabonba.exceptions import UnretryableException

    if isinstance(exc, api_errors.ThrottlingException):
        return TransientLivePriceError(f"{what}: throttled ({exc.code})")
    if isinstance(exc, api_errors.ServerException):
        return TransientLivePriceError(f"{what}: HTTP {exc.status_code} {exc.code}")
    if isinstance(exc, api_errors.AlibabaCloudException):
        code = str(exc.code)
        if code.startswith("Throttling"):
            return TransientLivePriceError(f"{what}: throttled ({code})")
        return LivePriceError(f"{what}: HTTP {exc.status_code} {code}: {exc.message}")
    if isinstance(exc, UnretryableException):
        inner = getattr(exc, "inner_exception", None) or exc
        if isinstance(inner, ValueError):  # the body was not JSON
            return LivePriceError(f"{what}: malformed payload ({inner})")
        return TransientLivePriceError(f"{what}: {type(inner).__name__}: {inner}")
    return LivePriceError(f"{what}: {type(exc).__name__}: {exc}")


def _call(what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except LivePriceError:
        raise
    except Exception as exc:
        raise _translate(exc, what) from exc


class AlibabaLivePrices:
    """:class:`~service.catalog.models.LivePriceSource` for Alibaba Cloud ECS."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        billings: Sequence[LiveBilling] = ALL_BILLINGS,
        clock: Clock = utc_now,
        spot_duration: int = 1,
    ) -> None:
        """``endpoint`` (``http://host:port``) replaces the SDK's regional endpoint, for
        tests against a local stand-in; production leaves it ``None``. ``environ``
        defaults to ``os.environ`` (read at call time)."""
        self._endpoint = endpoint
        self._environ = environ
        self._timeout_ms = int(timeout_s * 1000)
        self._billings = tuple(billings)
        self._clock = clock
        self._spot_duration = spot_duration

    def live_prices_configured(self) -> bool:
        """Credentials are set (whether or not the SDK is installed)."""
        return credentials_present(CREDENTIALS, self._environ)

    def live_prices_available(self) -> tuple[bool, str | None]:
        return availability(SDK_MODULE, EXTRA, CREDENTIALS, self._environ)

    def _client(self, region: str) -> Any:
        from alibabacloud_ecs20140526.client import Client
        from alibabacloud_tea_openapi.utils_models import Config

        env = os.environ if self._environ is None else self._environ
        config = Config(
            access_key_id=env.get(CREDENTIALS[0]),
            access_key_secret=env.get(CREDENTIALS[1]),
            security_token=env.get(TOKEN) or None,
            region_id=region,
            read_timeout=self._timeout_ms,
            connect_timeout=self._timeout_ms,
        )
        if self._endpoint:
            url = urlsplit(self._endpoint)
            config.endpoint = url.netloc
            config.protocol = url.scheme
        return Client(config)

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        ok, reason = self.live_prices_available()
        if not ok:
            raise LivePriceError(f"live prices unavailable: {reason}")
        client = self._client(region)
        as_of = iso_utc(self._clock())
        prices: list[Price] = []
        for name in instance_types:
            prices += self._type_prices(client, region, name, as_of)
        return prices

    def _type_prices(self, client: Any, region: str, name: str, as_of: str) -> list[Price]:
        out: list[Price] = []
        try:
            if "on_demand" in self._billings:
                hourly, how = self._describe_price(client, region, name, "Hour")
                out.append(self._price(name, region, "on_demand", as_of, per_hour=hourly, how=how))
            if "monthly" in self._billings:
                monthly, how = self._describe_price(client, region, name, "Month")
                out.append(self._price(name, region, "monthly", as_of, per_month=monthly, how=how))
            if "spot" in self._billings:
                spot = self._spot_price(client, region, name)
                if spot is not None:
                    amount, zone = spot
                    protection = f"SpotDuration={self._spot_duration}"
                    out.append(
                        self._price(
                            name, region, "spot", as_of, per_hour=amount, zone=zone, how=protection
                        )
                    )
        except _NotSold as exc:
            log.info("alibaba %s %s: no price (%s)", region, name, exc)
        return out

    @staticmethod
    def _price(
        name: str,
        region: str,
        billing: LiveBilling,
        as_of: str,
        *,
        per_hour: float | None = None,
        per_month: float | None = None,
        zone: str | None = None,
        how: str | None = None,
    ) -> Price:
        api = API_SPOT if billing == "spot" else API_PRICE
        notes = "linux image, instance only (disks and bandwidth extra)"
        if how:
            notes += f"; {how}"
        if zone:
            notes = f"cheapest zone {zone}, latest quote; " + notes
        return live_price(
            instance_type=name,
            region=region,
            billing=billing,
            api=api,
            as_of=as_of,
            per_hour=per_hour,
            per_month=per_month,
            notes=notes,
        )

    def _describe_price(self, client: Any, region: str, name: str, unit: str) -> tuple[float, str]:
        from alibabacloud_ecs20140526 import models

        def request(with_disk: bool) -> Any:
            disk = models.DescribePriceRequestSystemDisk(**SYSTEM_DISK) if with_disk else None
            return models.DescribePriceRequest(
                region_id=region,
                resource_type="instance",
                instance_type=name,
                price_unit=unit,
                period=1,
                system_disk=disk,
            )

        what = f"{API_PRICE} {name} {unit}"
        try:
            body = self._ask(client, what, request(True))
        except _DiskRejected:
            body = self._ask(client, what, request(False))
        price = getattr(getattr(body, "price_info", None), "price", None)
        if price is None:
            raise LivePriceError(f"malformed payload: {what} has no PriceInfo.Price")
        require_cny(price.currency, API_PRICE)
        details = getattr(getattr(price, "detail_infos", None), "detail_info", None) or []
        total = parse_amount(price.trade_price, f"{what} TradePrice")
        return instance_line(details, total, what)

    @staticmethod
    def _ask(client: Any, what: str, request: Any) -> Any:
        try:
            return _call(what, lambda: client.describe_price(request)).body
        except LivePriceError as exc:
            cause = exc.__cause__
            code = str(getattr(cause, "code", ""))
            status = getattr(cause, "status_code", None)
            if not exc.retryable and status is not None and status < 500:
                if _disk_rejected(code) and request.system_disk is not None:
                    raise _DiskRejected(code) from exc
                if _not_sold(code):
                    raise _NotSold(f"{code}") from exc
            raise

    def _spot_price(self, client: Any, region: str, name: str) -> tuple[float, str] | None:
        from alibabacloud_ecs20140526 import models

        request = models.DescribeSpotPriceHistoryRequest(
            region_id=region,
            instance_type=name,
            network_type="vpc",
            ostype="linux",
            spot_duration=self._spot_duration,
        )
        what = f"{API_SPOT} {name}"
        body = _call(what, lambda: client.describe_spot_price_history(request)).body
        if body is None or getattr(body, "spot_prices", None) is None:
            raise LivePriceError(f"malformed payload: {what} has no SpotPrices")
        rows = body.spot_prices.spot_price_type or []
        if not rows:
            return None
        require_cny(body.currency, API_SPOT)
        latest: dict[str, tuple[str, float]] = {}
        for row in rows:
            if row.instance_type not in (None, name):
                continue
            stamp = str(row.timestamp or "")
            amount = parse_amount(row.spot_price, f"{what} SpotPrice")
            zone = str(row.zone_id or region)
            if zone not in latest or stamp > latest[zone][0]:
                latest[zone] = (stamp, amount)
        if not latest:
            return None
        zone, (_, amount) = min(latest.items(), key=lambda item: item[1][1])
        return amount, zone


class _NotSold(Exception):
    """Internal: this instance type has no price in this region."""


class _DiskRejected(Exception):
    """Internal: the type does not take the requested system disk; ask without one."""


def make_live_source() -> LivePriceSource:
    """Entry point found by :mod:`service.catalog.live.discovery`."""
    return AlibabaLivePrices()
