"""Stand-in for Volcano Engine billing ``QueryPriceForPayAsYouGo`` / ``QueryPriceForSubscription``.

The SDK posts JSON to ``/?Action=<name>&Version=2022-01-01``. Answers follow Volcano's
envelope ``{"ResponseMetadata": {...}, "Result": {...}}`` (the ``QueryPriceForRenew``
doc example, volcengine.com/docs/6269/1477208), with ``Result`` built from
``volcenginesdkbilling.models`` response classes and serialized by the SDK's own
request builder ``sanitize_for_serialization`` (JSON keys from each ``attribute_map``).
Errors put ``Error {Code, Message}`` into ``ResponseMetadata``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from volcenginesdkbilling import models as m
from volcenginesdkcore.interceptor.interceptors.build_request_interceptor import (
    sanitize_for_serialization,
)

from .standin import Reply, Request

PAYG = "QueryPriceForPayAsYouGo"
SUBSCRIPTION = "QueryPriceForSubscription"


def action_of(method: str, path: str, query: dict[str, str], headers: dict[str, str]) -> str:
    return query.get("Action", "")


def _meta(action: str) -> dict[str, object]:
    return {
        "RequestId": "standin-volc",
        "Action": action,
        "Version": "2022-01-01",
        "Service": "billing",
        "Region": "cn-beijing",
    }


def error(status: int, action: str, code: str, message: str) -> Reply:
    meta = _meta(action) | {"Error": {"Code": code, "Message": message}}
    return Reply(status, {"ResponseMetadata": meta})


@dataclass
class VolcenginePrices:
    """Quotes keyed by ``(product, configuration_code)``: (original, discounted) amounts."""

    hourly: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    monthly: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    currency: str = "CNY"
    discount_means: str = "total"
    """``total``: DiscountAmount is what is paid; ``saving``: what the discount takes off."""
    send_price: bool = True
    """Whether the line carries ``Price`` (the per-line paid amount)."""

    def answer(self, request: Request) -> Reply:
        if request.action not in (PAYG, SUBSCRIPTION):
            return error(404, request.action, "InvalidActionOrVersion", "unknown action")
        body = request.json()
        product = str(body.get("Product"))
        table = self.hourly if request.action == PAYG else self.monthly
        out_cls = (
            m.ConfigListForQueryPriceForPayAsYouGoOutput
            if request.action == PAYG
            else m.ConfigListForQueryPriceForSubscriptionOutput
        )
        lines = []
        for item in body.get("ConfigList") or []:  # type: ignore[attr-defined]
            quote = table.get((product, item["ConfigurationCode"]))
            if quote is None:
                continue
            original, discounted = quote
            saving = f"{float(original) - float(discounted):.4f}"
            lines.append(
                out_cls(
                    configuration_code=item["ConfigurationCode"],
                    charge_item_code=item.get("ChargeItemCode"),
                    original_amount=original,
                    discount_amount=discounted if self.discount_means == "total" else saving,
                    price=discounted if self.send_price else None,
                    quantity=item.get("Quantity", 1),
                )
            )
        response_cls = (
            m.QueryPriceForPayAsYouGoResponse
            if request.action == PAYG
            else m.QueryPriceForSubscriptionResponse
        )
        result = response_cls(
            config_list=lines,
            currency=self.currency,
            total_original_amount=str(sum(float(x.original_amount) for x in lines)),
            total_discount_amount=str(sum(float(x.discount_amount) for x in lines)),
        )
        return Reply(
            200,
            {
                "ResponseMetadata": _meta(request.action),
                "Result": sanitize_for_serialization(result),
            },
        )
