"""An empty offers page says why, in the request's language (review item N7): no loaded
catalog sells the accelerator (H800, L40S, RTX 4090), or its offers have no known price
and a price or billing filter keeps only priced ones (L20 under ``max_price``)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

ZH = {"accept-language": "zh-CN,zh;q=0.9"}


@pytest.mark.parametrize("name", ["H800", "L40S", "RTX 4090"])
def test_an_accelerator_no_catalog_sells_is_said_in_chinese_and_english(
    client: TestClient[Litestar], name: str
) -> None:
    en = client.get("/v1/offers", params={"accelerator": name}).json()
    assert en["total"] == 0
    assert [w for w in en["warnings"] if name in w] == [
        f"No loaded provider catalog lists {name}: it is a known accelerator, but none of "
        "the loaded clouds offers it."
    ]
    zh = client.get("/v1/offers", params={"accelerator": name}, headers=ZH).json()
    said = [w for w in zh["warnings"] if name in w]
    assert len(said) == 1
    assert said[0].startswith(f"已加载的云厂商目录中没有 {name}")


@pytest.mark.parametrize(
    ("headers", "words"),
    [({}, "have no known price"), (ZH, "没有公开价格")],
)
def test_offers_left_out_only_for_an_unknown_price_are_counted(
    client: TestClient[Litestar], headers: dict[str, str], words: str
) -> None:
    listed = client.get("/v1/offers", params={"accelerator": "L20"}).json()
    assert listed["total"] > 0
    assert listed["priced"] == 0
    assert not any("price" in w for w in listed["warnings"])  # nothing left out
    page = client.get(
        "/v1/offers", params={"accelerator": "L20", "max_price": 100}, headers=headers
    ).json()
    assert page["total"] == 0
    said = [w for w in page["warnings"] if words in w]
    assert len(said) == 1
    assert str(listed["total"]) in said[0]


def test_a_page_with_offers_has_no_unknown_price_note(client: TestClient[Litestar]) -> None:
    page = client.get("/v1/offers", params={"accelerator": "A100", "max_price": 100}).json()
    assert page["total"] > 0
    assert not any("no known price" in w for w in page["warnings"])
