"""Stand-in for Huawei BSS ``ListOnDemandResourceRatings`` and ``ListRateOnPeriodDetail``.

Responses are built from ``huaweicloudsdkbss.v2.model`` response classes and serialized
with the SDK's own ``sanitize_for_serialization`` (JSON keys from each model's
``attribute_map``). Errors use Huawei's body ``{error_code, error_msg}`` with the HTTP
status (429 for API gateway throttling, 400 for a product BSS cannot find).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from huaweicloudsdkbss.v2 import model as m
from huaweicloudsdkcore.utils.http_utils import sanitize_for_serialization

from .standin import Reply, Request

ON_DEMAND_PATH = "/v2/bills/ratings/on-demand-resources"
PERIOD_PATH = "/v2/bills/ratings/period-resources/subscribe-rate"
ACTIONS = {ON_DEMAND_PATH: "ListOnDemandResourceRatings", PERIOD_PATH: "ListRateOnPeriodDetail"}


def action_of(method: str, path: str, query: dict[str, str], headers: dict[str, str]) -> str:
    return ACTIONS.get(path, path)


def error(status: int, code: str, message: str) -> Reply:
    return Reply(status, {"error_code": code, "error_msg": message})


def _json(model: object) -> dict[str, object]:
    data: dict[str, object] = sanitize_for_serialization(model)
    return data


@dataclass
class HuaweiPrices:
    """What the stand-in quotes; keys are ``(region, resource_spec)``, e.g.
    ``("cn-north-4", "pi2.3xlarge.4.linux")``."""

    hourly: dict[tuple[str, str], float] = field(default_factory=dict)
    monthly: dict[tuple[str, str], float] = field(default_factory=dict)
    monthly_best_offer: dict[tuple[str, str], float] = field(default_factory=dict)
    currency: str | None = "CNY"

    def answer(self, request: Request) -> Reply:
        body = request.json()
        infos = body.get("product_infos") or []
        assert isinstance(infos, list)
        table = self.hourly if request.action == "ListOnDemandResourceRatings" else self.monthly
        for info in infos:
            if (info["region"], info["resource_spec"]) not in table:
                return error(400, "CBC.99006006", f"产品未发现: {info['resource_spec']}")
        if request.action == "ListOnDemandResourceRatings":
            return Reply(200, _json(self.on_demand(infos)))
        if request.action == "ListRateOnPeriodDetail":
            return Reply(200, _json(self.period(infos)))
        return error(404, "APIGW.0101", "The API does not exist or has not been published")

    def on_demand(self, infos: list[dict[str, str]]) -> m.ListOnDemandResourceRatingsResponse:
        results = [
            m.DemandProductRatingResult(
                id=info["id"],
                product_id=f"OFFI-{info['resource_spec']}",
                amount=Decimal(str(self.hourly[(info["region"], info["resource_spec"])])),
                discount_amount=Decimal(0),
                official_website_amount=Decimal(
                    str(self.hourly[(info["region"], info["resource_spec"])])
                ),
                measure_id=1,
                discount_rating_results=[],
            )
            for info in infos
        ]
        total = sum((r.amount for r in results), Decimal(0))
        return m.ListOnDemandResourceRatingsResponse(
            amount=total,
            discount_amount=Decimal(0),
            official_website_amount=total,
            measure_id=1,
            currency=self.currency,
            product_rating_results=results,
        )

    def period(self, infos: list[dict[str, str]]) -> m.ListRateOnPeriodDetailResponse:
        official = [
            m.PeriodProductOfficialRatingResult(
                id=info["id"],
                product_id=f"OFFI-{info['resource_spec']}",
                official_website_amount=Decimal(
                    str(self.monthly[(info["region"], info["resource_spec"])])
                ),
                measure_id=1,
            )
            for info in infos
        ]
        best = [
            m.PeriodProductRatingResult(
                id=info["id"],
                product_id=f"OFFI-{info['resource_spec']}",
                amount=Decimal(
                    str(self.monthly_best_offer[(info["region"], info["resource_spec"])])
                ),
                official_website_amount=Decimal(
                    str(self.monthly[(info["region"], info["resource_spec"])])
                ),
                measure_id=1,
            )
            for info in infos
            if (info["region"], info["resource_spec"]) in self.monthly_best_offer
        ]
        discounts = (
            [
                m.OptionalDiscountRatingResult(
                    discount_id="standin-discount",
                    discount_type=605,
                    discount_name="商务授权折扣",
                    best_offer=1,
                    measure_id=1,
                    product_rating_results=best,
                )
            ]
            if best
            else []
        )
        return m.ListRateOnPeriodDetailResponse(
            official_website_rating_result=m.OfficialWebsiteRatingResult(
                official_website_amount=sum(
                    (o.official_website_amount for o in official), Decimal(0)
                ),
                measure_id=1,
                product_rating_results=official,
            ),
            optional_discount_rating_results=discounts,
            currency=self.currency,
        )
