"""Huawei Cloud live prices through the official BSS SDK (``huaweicloudsdkbss``).

Install with ``pip install 'suanli[huawei]'``; credentials come from the SDK's standard
variables ``HUAWEICLOUD_SDK_AK`` / ``HUAWEICLOUD_SDK_SK`` and ``HUAWEICLOUD_SDK_PROJECT_ID``
(the price inquiry body requires a project id: "我的凭证" -> "项目列表" lists them).
``HUAWEICLOUD_SDK_DOMAIN_ID`` (account id) is optional: without it the SDK looks it
up through IAM once. ``HUAWEICLOUD_SDK_SECURITY_TOKEN`` is used with temporary keys.
An IAM user needs the read-only permission ``billing:contract:viewDiscount``
(support.huaweicloud.com/api-oce/bcloud_01002.html).

APIs (BSS v2, global endpoint ``bss.myhuaweicloud.com``), SDK models read from
``huaweicloudsdkbss.v2.model``:

* ``ListOnDemandResourceRatings`` (``POST /v2/bills/ratings/on-demand-resources``):
  request ``RateOnDemandReq`` {``project_id``, ``product_infos``: ``DemandProductInfo``
  with ``cloud_service_type=hws.service.type.ec2``, ``resource_type=hws.resource.type.vm``,
  ``resource_spec=<flavor>.linux``, ``region``, ``usage_factor=Duration``,
  ``usage_value=1``, ``usage_measure_id=4`` (hour), ``subscription_num=1``}; response
  ``ListOnDemandResourceRatingsResponse`` {``currency`` (empty = CNY),
  ``product_rating_results``: ``DemandProductRatingResult`` {``id``, ``amount`` (total
  after discount), ``official_website_amount``, ``measure_id`` (1 = 元)}}.
* ``ListRateOnPeriodDetail`` (``POST /v2/bills/ratings/period-resources/subscribe-rate``):
  request ``RateOnPeriodReq`` {``project_id``, ``product_infos``: ``PeriodProductInfo``
  with ``period_type=2`` (month), ``period_num=1``}; response
  ``ListRateOnPeriodDetailResponse`` {``currency``, ``official_website_rating_result``
  (``OfficialWebsiteRatingResult.product_rating_results``:
  ``PeriodProductOfficialRatingResult`` {``id``, ``official_website_amount``}),
  ``optional_discount_rating_results`` (``OptionalDiscountRatingResult`` {``best_offer``,
  ``product_rating_results``: ``PeriodProductRatingResult`` {``id``, ``amount``}})}.
  The best offer's amount is used when the account has one, else the list price.

Parameter values follow Huawei's own price-inquiry example (csdp_faq_062502, "Price
Inquiry Example of Pay-Per-Use Products"). Up to 100 products per call. BSS answers an
unknown product with an error for the whole call, so a rejected batch is re-asked one
flavor at a time and only the unknown flavors go unpriced. No spot price: BSS has no
spot inquiry.

**ModelArts Ascend flavors are not asked.** BSS prices them under a ModelArts service
type whose ``cloud_service_type`` / ``resource_type`` / ``resource_spec`` codes Huawei
does not document (the documented inquiry example and the SDK models cover ECS only),
and ModelArts has no public price API of its own in the SDK. Asking BSS with ECS codes
for ``modelarts.*`` names would only produce "unknown product" errors, so those names are
skipped up front (:func:`priceable`) and keep their snapshot price or estimate.

Errors (``huaweicloudsdkcore.exceptions``): HTTP 429 and 5xx, connection errors and
timeouts are transient; 401/403 and other 4xx are not.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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

SDK_MODULE = "huaweicloudsdkbss.v2"
EXTRA = "huawei"
CREDENTIALS = ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID")
DOMAIN_ID = "HUAWEICLOUD_SDK_DOMAIN_ID"
TOKEN = "HUAWEICLOUD_SDK_SECURITY_TOKEN"  # noqa: S105 (the variable name, not a secret)
API_ON_DEMAND = "ListOnDemandResourceRatings"
API_MONTHLY = "ListRateOnPeriodDetail"
SERVICE_TYPE = "hws.service.type.ec2"
RESOURCE_TYPE = "hws.resource.type.vm"
HOUR_MEASURE_ID = 4
MONTH_PERIOD_TYPE = 2
YUAN_MEASURE_ID = 1
MAX_PRODUCTS = 100
ALL_BILLINGS: tuple[LiveBilling, ...] = ("on_demand", "monthly")


class _Rejected(LivePriceError):
    """Internal: BSS rejected the request itself (HTTP 400), e.g. an unknown flavor."""


def _translate(exc: Exception, api: str) -> LivePriceError:
    from huaweicloudsdkcore.exceptions import exceptions as hw

    if isinstance(exc, hw.ServiceResponseException):
        text = f"{api}: HTTP {exc.status_code} {exc.error_code}: {exc.error_msg}"
        if exc.status_code == 429 or exc.status_code >= 500:
            return TransientLivePriceError(text)
        if exc.status_code == 400:
            return _Rejected(text)
        return LivePriceError(text)
    if isinstance(exc, hw.ConnectionException | hw.RequestTimeoutException):
        return TransientLivePriceError(f"{api}: {type(exc).__name__}: {exc.error_msg}")
    if isinstance(exc, ValueError):
        return LivePriceError(f"{api}: malformed payload ({exc})")
    return LivePriceError(f"{api}: {type(exc).__name__}: {exc}")


MODELARTS_PREFIX = "modelarts."
"""ModelArts resource flavors: no documented BSS codes, so never sent to BSS."""


def priceable(flavor: str) -> bool:
    """Whether BSS can price this flavor with the documented ECS codes."""
    return not flavor.startswith(MODELARTS_PREFIX)


def _flavor_spec(flavor: str) -> str:
    return flavor if flavor.endswith((".linux", ".win")) else f"{flavor}.linux"


class HuaweiLivePrices:
    """:class:`~service.catalog.models.LivePriceSource` for Huawei Cloud ECS flavors."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        billings: Sequence[LiveBilling] = ALL_BILLINGS,
        clock: Clock = utc_now,
    ) -> None:
        """``endpoint`` (``http://host:port``) replaces ``bss.myhuaweicloud.com`` for tests
        against a local stand-in; production leaves it ``None``."""
        self._endpoint = endpoint
        self._environ = environ
        self._timeout_s = timeout_s
        self._billings = tuple(b for b in billings if b in ALL_BILLINGS)
        self._clock = clock

    def live_prices_configured(self) -> bool:
        """Credentials are set (whether or not the SDK is installed)."""
        return credentials_present(CREDENTIALS, self._environ)

    def live_prices_available(self) -> tuple[bool, str | None]:
        return availability(SDK_MODULE, EXTRA, CREDENTIALS, self._environ)

    def _env(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _client(self) -> Any:
        from huaweicloudsdkbss.v2 import BssClient
        from huaweicloudsdkbss.v2.region.bss_region import BssRegion
        from huaweicloudsdkcore.auth.credentials import GlobalCredentials
        from huaweicloudsdkcore.http.http_config import HttpConfig

        env = self._env()
        credentials = GlobalCredentials(
            env.get(CREDENTIALS[0]), env.get(CREDENTIALS[1]), env.get(DOMAIN_ID) or None
        )
        if env.get(TOKEN):
            credentials = credentials.with_security_token(env[TOKEN])
        config = HttpConfig(timeout=(self._timeout_s, self._timeout_s), retry_times=0)
        builder = BssClient.new_builder().with_http_config(config).with_credentials(credentials)
        if self._endpoint:
            builder = builder.with_endpoints([self._endpoint])
        else:
            builder = builder.with_region(BssRegion.CN_NORTH_1)
        return builder.build()

    def live_prices(self, region: str, instance_types: Sequence[str]) -> Sequence[Price]:
        ok, reason = self.live_prices_available()
        if not ok:
            raise LivePriceError(f"live prices unavailable: {reason}")
        client = self._client()
        project_id = self._env()[CREDENTIALS[2]]
        as_of = iso_utc(self._clock())
        names = [name for name in dict.fromkeys(instance_types) if priceable(name)]
        skipped = len(set(instance_types)) - len(names)
        if skipped:
            log.info("huawei %s: %d ModelArts flavors not asked (no BSS codes)", region, skipped)
        prices: list[Price] = []
        if not names:
            return prices
        if "on_demand" in self._billings:
            hourly = self._batched(
                names, lambda chunk: self._on_demand(client, project_id, region, chunk)
            )
            prices += [
                live_price(
                    instance_type=name,
                    region=region,
                    billing="on_demand",
                    api=API_ON_DEMAND,
                    as_of=as_of,
                    per_hour=amount,
                    notes="linux, instance only (disks, EIP extra); price after account discounts",
                )
                for name, amount in hourly.items()
            ]
        if "monthly" in self._billings:
            monthly = self._batched(
                names, lambda chunk: self._monthly(client, project_id, region, chunk)
            )
            prices += [
                live_price(
                    instance_type=name,
                    region=region,
                    billing="monthly",
                    api=API_MONTHLY,
                    as_of=as_of,
                    per_month=amount,
                    notes="linux, instance only (disks, EIP extra); 1-month subscription",
                )
                for name, amount in monthly.items()
            ]
        return prices

    def _batched(
        self, names: list[str], ask: Callable[[list[str]], dict[str, float]]
    ) -> dict[str, float]:
        """Ask in batches of 100; a batch BSS rejects is re-asked one flavor at a time,
        and a flavor rejected on its own is skipped (not sold in that region)."""
        out: dict[str, float] = {}
        for start in range(0, len(names), MAX_PRODUCTS):
            chunk = names[start : start + MAX_PRODUCTS]
            try:
                out.update(ask(chunk))
                continue
            except _Rejected as exc:
                if len(chunk) == 1:
                    log.info("huawei: no price for %s (%s)", chunk[0], exc)
                    continue
            for name in chunk:
                try:
                    out.update(ask([name]))
                except _Rejected as exc:
                    log.info("huawei: no price for %s (%s)", name, exc)
        return out

    def _on_demand(
        self, client: Any, project_id: str, region: str, names: list[str]
    ) -> dict[str, float]:
        from huaweicloudsdkbss.v2 import model

        infos = [
            model.DemandProductInfo(
                id=str(i),
                cloud_service_type=SERVICE_TYPE,
                resource_type=RESOURCE_TYPE,
                resource_spec=_flavor_spec(name),
                region=region,
                usage_factor="Duration",
                usage_value=1,
                usage_measure_id=HOUR_MEASURE_ID,
                subscription_num=1,
            )
            for i, name in enumerate(names)
        ]
        request = model.ListOnDemandResourceRatingsRequest(
            body=model.RateOnDemandReq(project_id=project_id, product_infos=infos)
        )
        try:
            response = client.list_on_demand_resource_ratings(request)
        except Exception as exc:
            raise _translate(exc, API_ON_DEMAND) from exc
        require_cny(response.currency or "CNY", API_ON_DEMAND)
        results = response.product_rating_results
        if results is None:
            raise LivePriceError(
                f"malformed payload: {API_ON_DEMAND} has no product_rating_results"
            )
        out: dict[str, float] = {}
        for item in results:
            name = self._name_of(item.id, names, API_ON_DEMAND)
            self._require_yuan(item.measure_id, API_ON_DEMAND)
            out[name] = parse_amount(item.amount, f"{API_ON_DEMAND} {name} amount")
        return out

    def _monthly(
        self, client: Any, project_id: str, region: str, names: list[str]
    ) -> dict[str, float]:
        from huaweicloudsdkbss.v2 import model

        infos = [
            model.PeriodProductInfo(
                id=str(i),
                cloud_service_type=SERVICE_TYPE,
                resource_type=RESOURCE_TYPE,
                resource_spec=_flavor_spec(name),
                region=region,
                period_type=MONTH_PERIOD_TYPE,
                period_num=1,
                subscription_num=1,
            )
            for i, name in enumerate(names)
        ]
        request = model.ListRateOnPeriodDetailRequest(
            body=model.RateOnPeriodReq(project_id=project_id, product_infos=infos)
        )
        try:
            response = client.list_rate_on_period_detail(request)
        except Exception as exc:
            raise _translate(exc, API_MONTHLY) from exc
        require_cny(response.currency or "CNY", API_MONTHLY)
        official = response.official_website_rating_result
        if official is None or official.product_rating_results is None:
            raise LivePriceError(
                f"malformed payload: {API_MONTHLY} has no official_website_rating_result"
            )
        out: dict[str, float] = {}
        for item in official.product_rating_results:
            name = self._name_of(item.id, names, API_MONTHLY)
            self._require_yuan(item.measure_id, API_MONTHLY)
            out[name] = parse_amount(item.official_website_amount, f"{API_MONTHLY} {name}")
        best = next(
            (d for d in response.optional_discount_rating_results or [] if d.best_offer == 1),
            None,
        )
        for item in (best.product_rating_results or []) if best else []:
            name = self._name_of(item.id, names, API_MONTHLY)
            self._require_yuan(item.measure_id, API_MONTHLY)
            out[name] = parse_amount(item.amount, f"{API_MONTHLY} {name} best offer")
        return out

    @staticmethod
    def _name_of(item_id: object, names: list[str], api: str) -> str:
        try:
            return names[int(str(item_id))]
        except (ValueError, IndexError):
            raise LivePriceError(
                f"malformed payload: {api} answered unknown id {item_id!r}"
            ) from None

    @staticmethod
    def _require_yuan(measure_id: object, api: str) -> None:
        if measure_id not in (None, YUAN_MEASURE_ID):
            raise LivePriceError(f"{api}: amount in measure unit {measure_id!r}, expected 1 (元)")


def make_live_source() -> LivePriceSource:
    """Entry point found by :mod:`service.catalog.live.discovery`."""
    return HuaweiLivePrices()
