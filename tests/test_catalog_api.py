"""GET /v1/providers/{name}/instance-types and /v1/accelerators on the real catalogs."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

PINNED_ITEM = {"instance_type", "family", "accelerator", "vcpus", "memory_gib", "network_gbps",
               "rdma", "regions", "source", "as_of", "prices"}  # fmt: skip
PINNED_PRICE = {"region", "billing", "price_per_hour", "currency", "source", "as_of"}
PINNED_ACCEL = {"name", "vendor", "memory_gib", "mem_bandwidth_gbps", "bf16_tflops",
                "fp16_tflops", "int8_tops", "stack", "source"}  # fmt: skip


def page(client: TestClient[Litestar], provider: str, **params: Any) -> Any:
    response = client.get(f"/v1/providers/{provider}/instance-types", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_items_carry_the_pinned_fields(client: TestClient[Litestar]) -> None:
    body = page(client, "tencent", limit=500)
    assert body["total"] == len(body["items"]) > 30
    for item in body["items"]:
        assert set(item) >= PINNED_ITEM
        assert item["source"]
        assert item["as_of"]
        for price in item["prices"]:
            assert set(price) >= PINNED_PRICE
            assert price["currency"] == "CNY"


def test_spot_check_gn7i_is_one_a10(client: TestClient[Litestar]) -> None:
    items = page(client, "alibaba", accelerator="A10", limit=500)["items"]
    row = next(i for i in items if i["instance_type"] == "ecs.gn7i-c8g1.2xlarge")
    assert row["accelerator"] == {"name": "A10", "count": 1, "memory_gib": 24.0}
    assert (row["vcpus"], row["memory_gib"]) == (8, 30.0)


def test_accelerator_family_filter_matches_every_member(client: TestClient[Litestar]) -> None:
    items = page(client, "alibaba", accelerator="a100", limit=500)["items"]
    names = {i["accelerator"]["name"] for i in items}
    assert names == {"A100-40GB", "A100-80GB"}


def test_min_memory_min_count_and_cpu_only(client: TestClient[Litestar]) -> None:
    big = page(client, "alibaba", min_accelerator_memory_gib=80, min_accelerators=8, limit=500)
    assert big["items"]
    for item in big["items"]:
        assert item["accelerator"]["memory_gib"] >= 80
        assert item["accelerator"]["count"] >= 8
    cpu = page(client, "alibaba", cpu_only=True, limit=500)["items"]
    assert len(cpu) >= 5
    assert all(i["accelerator"] is None for i in cpu)


def test_max_price_and_billing_keep_only_matching_prices(client: TestClient[Litestar]) -> None:
    body = page(client, "tencent", max_price=10, billing="on_demand", limit=500)
    assert body["items"]
    for item in body["items"]:
        assert item["prices"]
        assert all(p["billing"] == "on_demand" for p in item["prices"])
        assert all(p["price_per_hour"] <= 10 for p in item["prices"])
    names = {i["instance_type"] for i in body["items"]}
    assert "GN7.2XLARGE32" in names  # 8.68 CNY/h
    assert not any(n.startswith("GT4") for n in names)  # 28.64 CNY/h and up


def test_region_filter(client: TestClient[Litestar]) -> None:
    items = page(client, "tencent", region="ap-chengdu", limit=500)["items"]
    assert items
    assert all("ap-chengdu" in i["regions"] for i in items)
    # a sold-elsewhere region is an empty page; an unknown one a 400 with suggestions
    assert page(client, "tencent", region="cn-beijing")["total"] == 0
    typo = client.get("/v1/providers/alibaba/instance-types", params={"region": "cn-bejing"})
    assert typo.status_code == 400
    item = typo.json()["extra"][0]
    assert (item["key"], item["suggestions"][0]) == ("region", "cn-beijing")


@pytest.mark.parametrize(
    ("params", "key", "suggestion"),
    [({"acelerator": "A100"}, "acelerator", "accelerator"), ({"limit": ["5", "6"]}, "limit", None)],
)
def test_unknown_or_repeated_parameter_is_400_not_ignored(
    client: TestClient[Litestar], params: dict[str, Any], key: str, suggestion: str | None
) -> None:
    """``?acelerator=A100`` listed all 109 Alibaba types, as if nothing had been asked."""
    response = client.get("/v1/providers/alibaba/instance-types", params=params)
    assert response.status_code == 400, response.text
    item = response.json()["extra"][0]
    assert item["key"] == key
    assert item.get("suggestions", [None])[0] == suggestion


def test_paging(client: TestClient[Litestar]) -> None:
    full = page(client, "alibaba", limit=500)
    first = page(client, "alibaba", limit=10, offset=0)
    second = page(client, "alibaba", limit=10, offset=10)
    assert first["total"] == second["total"] == full["total"]
    assert [i["instance_type"] for i in first["items"] + second["items"]] == [
        i["instance_type"] for i in full["items"][:20]
    ]
    assert page(client, "alibaba", offset=10_000)["items"] == []


def test_unknown_provider_is_404_naming_the_known_ones(client: TestClient[Litestar]) -> None:
    response = client.get("/v1/providers/aws/instance-types")
    assert response.status_code == 404
    body = response.json()
    assert "aws" in body["detail"]
    assert set(body["extra"]["known"]) == {"alibaba", "huawei", "tencent", "volcengine"}


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 100000}, "limit"),
        ({"offset": -1}, "offset"),
        ({"max_price": -5}, "max_price"),
        ({"billing": "weekly"}, "billing"),
        ({"cpu_only": "perhaps"}, "cpu_only"),
    ],
)
def test_bad_filter_is_400_naming_it(
    client: TestClient[Litestar], params: dict[str, Any], key: str
) -> None:
    response = client.get("/v1/providers/tencent/instance-types", params=params)
    assert response.status_code == 400
    assert response.json()["extra"][0]["key"] == key


def test_unknown_accelerator_filter_suggests(client: TestClient[Litestar]) -> None:
    response = client.get("/v1/providers/tencent/instance-types", params={"accelerator": "A1OO"})
    assert response.status_code == 400
    item = response.json()["extra"][0]
    assert item["key"] == "accelerator"
    assert item["source"] == "query"
    assert item["suggestions"]


def test_accelerators_registry_lists_dense_figures(client: TestClient[Litestar]) -> None:
    specs = {s["name"]: s for s in client.get("/v1/accelerators").json()}
    for spec in specs.values():
        assert set(spec) >= PINNED_ACCEL
    assert specs["A100-80GB"]["bf16_tflops"] == 312
    assert specs["T4"]["fp16_tflops"] == 65
    assert specs["T4"]["bf16_tflops"] is None
    assert specs["Ascend-910B3"]["stack"] == "cann"
    used = set()
    for provider in ("alibaba", "tencent", "huawei", "volcengine"):
        for item in page(client, provider, limit=500)["items"]:
            if item["accelerator"]:
                used.add(item["accelerator"]["name"])
    assert used <= set(specs), used - set(specs)
