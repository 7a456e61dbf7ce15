"""Stand-in for Alibaba ECS ``DescribePrice`` and ``DescribeSpotPriceHistory``.

Responses are built from the SDK's response models in ``alibabacloud_ecs20140526.models``
(``DescribePriceResponseBody`` ..., ``DescribeSpotPriceHistoryResponseBody`` ...) and
serialized with their own ``to_map()``, so they have exactly the documented shape.
Errors follow the ECS error body ``{RequestId, HostId, Code, Message}`` with HTTP 400 for
client errors (throttling is ``400 Throttling``) and 5xx for server errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from alibabacloud_ecs20140526 import models as m

from .standin import Reply, Request

ACTIONS = ("DescribePrice", "DescribeSpotPriceHistory")


def action_of(method: str, path: str, query: dict[str, str], headers: dict[str, str]) -> str:
    """The SDK (ACS3 signature) names the action in ``x-acs-action``; RPC style in ``Action``."""
    return headers.get("x-acs-action") or query.get("Action", "")


def error(status: int, code: str, message: str) -> Reply:
    return Reply(
        status,
        {"RequestId": "STANDIN-ERR", "HostId": "127.0.0.1", "Code": code, "Message": message},
    )


@dataclass
class AlibabaPrices:
    """What the stand-in quotes; keys are ``(region, instance_type)``."""

    hourly: dict[tuple[str, str], float] = field(default_factory=dict)
    monthly: dict[tuple[str, str], float] = field(default_factory=dict)
    spot: dict[tuple[str, str], list[tuple[str, str, float]]] = field(default_factory=dict)
    """``(zone, timestamp, price)`` history rows."""
    currency: str = "CNY"
    disk_trade_price: float = 0.3
    """Default system disk line DescribePrice itemizes next to the instance."""
    instance_resource: str = "instanceType"
    """How the instance line names itself (the API reference spells ``InstanceType``)."""
    itemized: bool = True
    """Whether ``DetailInfos`` is returned at all."""
    essd_rejected: set[str] = field(default_factory=set)
    """Types answering ``InvalidSystemDiskCategory.ValueNotSupported`` to an ESSD disk."""

    def answer(self, request: Request) -> Reply:
        params = {**request.query, **request.form()}
        region, name = params.get("RegionId", ""), params.get("InstanceType", "")
        if request.action == "DescribePrice":
            table = self.monthly if params.get("PriceUnit") == "Month" else self.hourly
            if name in self.essd_rejected and params.get("SystemDisk.Category") == "cloud_essd":
                return error(
                    400,
                    "InvalidSystemDiskCategory.ValueNotSupported",
                    "The specified system disk category is not supported by the instance type.",
                )
            if (region, name) not in table:
                return error(
                    400,
                    "InvalidInstanceType.ValueNotSupported",
                    "The specified InstanceType does not exist or beyond the permitted range.",
                )
            return Reply(200, self.describe_price(table[(region, name)]).to_map())
        if request.action == "DescribeSpotPriceHistory":
            rows = self.spot.get((region, name), [])
            return Reply(
                200, self.spot_history(name, rows, self.hourly.get((region, name))).to_map()
            )
        return error(400, "InvalidAction.NotFound", f"unknown action {request.action!r}")

    def describe_price(self, amount: float) -> m.DescribePriceResponseBody:
        disk = self.disk_trade_price
        return m.DescribePriceResponseBody(
            request_id="STANDIN-PRICE",
            price_info=m.DescribePriceResponseBodyPriceInfo(
                price=m.DescribePriceResponseBodyPriceInfoPrice(
                    currency=self.currency,
                    original_price=amount + disk,
                    discount_price=0.0,
                    trade_price=amount + disk,
                    detail_infos=None
                    if not self.itemized
                    else m.DescribePriceResponseBodyPriceInfoPriceDetailInfos(
                        detail_info=[
                            m.DescribePriceResponseBodyPriceInfoPriceDetailInfosDetailInfo(
                                resource=self.instance_resource,
                                original_price=amount,
                                discount_price=0.0,
                                trade_price=amount,
                            ),
                            m.DescribePriceResponseBodyPriceInfoPriceDetailInfosDetailInfo(
                                resource="systemDisk",
                                original_price=disk,
                                discount_price=0.0,
                                trade_price=disk,
                            ),
                        ]
                    ),
                ),
                rules=m.DescribePriceResponseBodyPriceInfoRules(rule=[]),
            ),
        )

    def spot_history(
        self, name: str, rows: list[tuple[str, str, float]], origin: float | None
    ) -> m.DescribeSpotPriceHistoryResponseBody:
        return m.DescribeSpotPriceHistoryResponseBody(
            request_id="STANDIN-SPOT",
            currency=self.currency,
            next_offset=0,
            spot_prices=m.DescribeSpotPriceHistoryResponseBodySpotPrices(
                spot_price_type=[
                    m.DescribeSpotPriceHistoryResponseBodySpotPricesSpotPriceType(
                        instance_type=name,
                        io_optimized="optimized",
                        network_type="vpc",
                        origin_price=origin,
                        spot_price=price,
                        timestamp=stamp,
                        zone_id=zone,
                    )
                    for zone, stamp, price in rows
                ]
            ),
        )
