"""Recorded-shape fixtures (tests/live/fixtures/*.json): one response per price API.

They document the wire shape each adapter reads, and guard against SDK upgrades: every
key of every fixture must be a field of the SDK's response model (walked recursively
through the model's own type tables), and each fixture, served by a stand-in, must
come out of the real SDK client and the adapter as the expected price.
"""

from __future__ import annotations

import importlib
import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .clouds import CASES
from .conftest import Clock
from .standin import Reply, serve

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def unknown_keys(
    data: Any, cls: Any, types_attr: str, resolve: Any, path: str = "$"
) -> Iterator[str]:
    """Keys of ``data`` that ``cls`` (a swagger-style model) does not declare."""
    types: dict[str, str] = getattr(cls, types_attr)
    names: dict[str, str] = cls.attribute_map
    by_json = {names[attr]: kind for attr, kind in types.items()}
    for key, value in data.items():
        kind = by_json.get(key)
        if kind is None:
            yield f"{path}.{key}"
            continue
        inner = re.fullmatch(r"list\[(\w+)\]", kind)
        name = inner.group(1) if inner else kind
        model = resolve(name)
        if model is None:
            continue
        for i, item in enumerate(value if inner else [value]):
            yield from unknown_keys(item, model, types_attr, resolve, f"{path}.{key}[{i}]")


def _resolver(module: str) -> Any:
    mod = importlib.import_module(module)
    return lambda name: getattr(mod, name, None) if name[0].isupper() else None


@pytest.mark.parametrize(
    ("fixture", "module", "model"),
    [
        (
            "huawei_ListOnDemandResourceRatings.json",
            "huaweicloudsdkbss.v2.model",
            "ListOnDemandResourceRatingsResponse",
        ),
        (
            "huawei_ListRateOnPeriodDetail.json",
            "huaweicloudsdkbss.v2.model",
            "ListRateOnPeriodDetailResponse",
        ),
    ],
)
def test_huawei_fixtures_use_only_model_fields(fixture: str, module: str, model: str) -> None:
    cls = getattr(importlib.import_module(module), model)
    assert list(unknown_keys(load(fixture), cls, "openapi_types", _resolver(module))) == []


@pytest.mark.parametrize(
    ("fixture", "model"),
    [
        ("volcengine_QueryPriceForPayAsYouGo.json", "QueryPriceForPayAsYouGoResponse"),
        ("volcengine_QueryPriceForSubscription.json", "QueryPriceForSubscriptionResponse"),
    ],
)
def test_volcengine_fixtures_use_only_model_fields(fixture: str, model: str) -> None:
    module = "volcenginesdkbilling.models"
    cls = getattr(importlib.import_module(module), model)
    result = load(fixture)["Result"]
    assert list(unknown_keys(result, cls, "swagger_types", _resolver(module))) == []


@pytest.mark.parametrize(
    ("fixture", "model"),
    [
        ("alibaba_DescribePrice.json", "DescribePriceResponseBody"),
        ("alibaba_DescribeSpotPriceHistory.json", "DescribeSpotPriceHistoryResponseBody"),
    ],
)
def test_alibaba_fixtures_round_trip_through_the_model(fixture: str, model: str) -> None:
    from alibabacloud_ecs20140526 import models

    data = load(fixture)
    assert getattr(models, model)().from_map(data).to_map() == data


def test_tencent_fixture_round_trips_without_unknown_fields() -> None:
    from tencentcloud.cvm.v20170312 import models

    data = load("tencent_DescribeZoneInstanceConfigInfos.json")["Response"]
    response = models.DescribeZoneInstanceConfigInfosResponse()
    with warnings.catch_warnings():  # the SDK warns about keys its model does not know
        warnings.simplefilter("error")
        response._deserialize(data)
    assert response._serialize() == data


SERVED = {
    "alibaba": (
        "DescribePrice",
        "alibaba_DescribePrice.json",
        ("ecs.gn7e-c16g1.4xlarge", "on_demand"),
        34.74,
    ),
    "tencent": (
        "DescribeZoneInstanceConfigInfos",
        "tencent_DescribeZoneInstanceConfigInfos.json",
        ("GN7.2XLARGE32", "on_demand"),
        8.68,
    ),
    "huawei": (
        "ListOnDemandResourceRatings",
        "huawei_ListOnDemandResourceRatings.json",
        ("pi2.3xlarge.4", "on_demand"),
        9.2,
    ),
    "volcengine": (
        "QueryPriceForPayAsYouGo",
        "volcengine_QueryPriceForPayAsYouGo.json",
        ("ecs.hpcpni3ln.45xlarge", "on_demand"),
        152.0,
    ),
}


@pytest.mark.parametrize("factory", CASES, ids=lambda f: f.__name__)
def test_fixture_served_to_the_sdk_yields_the_price(factory: Any) -> None:
    case = factory()
    action, fixture, (name, billing), amount = SERVED[case.name]
    payload = load(fixture)
    if case.name == "volcengine":  # align the fixture's code with the case's configuration
        payload["Result"]["ConfigList"][0]["ConfigurationCode"] = "standin-hpcpni3ln-45xl"
        payload["Result"]["ConfigList"][0]["ChargeItemCode"] = "standin"
    with serve(case.answer, case.action_of) as standin:
        standin.fail_next(action, *([Reply(200, payload)] * 3))
        source = case.make_source(standin.url, case.env, Clock())
        prices = source.live_prices(case.region, [name])
    quoted = {(p.instance_type, p.billing): p.price_per_hour for p in prices}
    assert quoted[(name, billing)] == amount
