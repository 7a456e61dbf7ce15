"""Stand-in for Tencent CVM ``DescribeZoneInstanceConfigInfos`` (API 3.0, TC3 signed).

The SDK posts JSON to ``/`` with the action in ``X-TC-Action``; the answer is
``{"Response": {...}}`` built from ``tencentcloud.cvm.v20170312.models``
(``InstanceTypeQuotaItem``, ``ItemPrice``) via their own ``_serialize()``. API 3.0
reports every error, throttling included, as HTTP 200 with ``Response.Error``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tencentcloud.cvm.v20170312 import models as m

from .standin import Reply, Request

ACTION = "DescribeZoneInstanceConfigInfos"


def action_of(method: str, path: str, query: dict[str, str], headers: dict[str, str]) -> str:
    return headers.get("x-tc-action", "")


def error(code: str, message: str) -> Reply:
    return Reply(
        200, {"Response": {"Error": {"Code": code, "Message": message}, "RequestId": "standin"}}
    )


@dataclass(frozen=True)
class ZoneQuote:
    zone: str
    instance_type: str
    charge_type: str
    """POSTPAID_BY_HOUR, PREPAID or SPOTPAID."""
    amount: float
    """Hourly unit price (discounted) for postpaid/spot; prepaid amount for PREPAID."""
    list_amount: float | None = None
    second_step: float | None = None
    status: str = "SELL"


@dataclass
class TencentPrices:
    quotes: dict[str, list[ZoneQuote]] = field(default_factory=dict)
    """Region -> zone rows."""

    def answer(self, request: Request) -> Reply:
        if request.action != ACTION:
            return error("InvalidAction", f"unknown action {request.action!r}")
        region = request.headers.get("x-tc-region", "")
        filters = {
            f["Name"]: set(f["Values"])
            for f in request.json().get("Filters", [])  # type: ignore[attr-defined]
        }
        types = filters.get("instance-type")
        charges = filters.get("instance-charge-type")
        rows = [
            q
            for q in self.quotes.get(region, [])
            if (types is None or q.instance_type in types)
            and (charges is None or q.charge_type in charges)
        ]
        response = m.DescribeZoneInstanceConfigInfosResponse()
        response.InstanceTypeQuotaSet = [self.item(q) for q in rows]
        response.RequestId = "standin-zone-config"
        return Reply(200, {"Response": response._serialize()})

    @staticmethod
    def item(quote: ZoneQuote) -> m.InstanceTypeQuotaItem:
        price = m.ItemPrice()
        if quote.charge_type == "PREPAID":
            price.OriginalPrice = quote.list_amount or quote.amount
            price.DiscountPrice = quote.amount
            price.Discount = round(100.0 * quote.amount / (quote.list_amount or quote.amount), 1)
        else:
            price.UnitPrice = quote.list_amount or quote.amount
            price.UnitPriceDiscount = quote.amount
            price.ChargeUnit = "HOUR"
            price.Discount = round(100.0 * quote.amount / (quote.list_amount or quote.amount), 1)
            if quote.second_step is not None:
                price.UnitPriceSecondStep = quote.second_step
                price.UnitPriceDiscountSecondStep = quote.second_step
        item = m.InstanceTypeQuotaItem()
        item.Zone = quote.zone
        item.InstanceType = quote.instance_type
        item.InstanceChargeType = quote.charge_type
        item.InstanceFamily = quote.instance_type.split(".")[0]
        item.TypeName = quote.instance_type
        item.Status = quote.status
        item.Price = price
        item.LocalDiskTypeList = []
        return item
