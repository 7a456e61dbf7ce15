"""Operator price overrides: validated as a whole, applied with precedence, line numbers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.app import create_app
from service.catalog.models import InstanceType, Price
from service.catalog.overrides import OverrideError, apply_overrides, load_overrides
from tests.conftest import app_settings

ROW = InstanceType(
    instance_type="GN7.2XLARGE32",
    family="GN7",
    accelerator="T4",
    accelerator_count=1,
    accelerator_memory_gib=16,
    vcpus=8,
    memory_gib=32,
    source="test row",
    as_of="2021",
)
LIST_PRICE = Price(
    instance_type="GN7.2XLARGE32",
    region="*",
    billing="on_demand",
    price_per_hour=8.68,
    source="list price",
    as_of="2021",
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "overrides.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_fixed_price_replaces_the_snapshot(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[override]]\nprovider = "tencent"\ninstance_type = "GN7.2XLARGE32"\n'
        'billing = "on_demand"\nprice_per_hour = 6.2\nas_of = "2026-10-01"\nnote = "deal"\n',
    )
    overrides = load_overrides(path)
    prices = apply_overrides("tencent", [ROW], [LIST_PRICE], overrides)
    assert len(prices) == 1
    assert prices[0].price_per_hour == 6.2
    assert prices[0].price_source == "override"
    assert prices[0].source == "override:line 1 (deal)"
    assert prices[0].as_of == "2026-10-01"


def test_discount_scales_matching_family_only(tmp_path: Path) -> None:
    path = write(tmp_path, '[[override]]\nprovider = "tencent"\nfamily = "gn7"\ndiscount = 0.8\n')
    other = Price(
        instance_type="OTHER", region="*", billing="on_demand", price_per_hour=10.0,
        source="x", as_of="2021",
    )  # fmt: skip
    prices = apply_overrides("tencent", [ROW], [LIST_PRICE, other], load_overrides(path))
    by_type = {p.instance_type: p for p in prices}
    assert by_type["GN7.2XLARGE32"].price_per_hour == pytest.approx(8.68 * 0.8)
    assert by_type["GN7.2XLARGE32"].price_source == "override"
    assert by_type["OTHER"].price_per_hour == 10.0  # not in the family: untouched
    assert apply_overrides("alibaba", [ROW], [LIST_PRICE], load_overrides(path)) == [LIST_PRICE]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            '[[override]]\nprovider = "a"\nprice_per_hour = 1\n\n'
            '[[override]]\nprovider = "b"\nprice_per_hour = -3\n',
            5,
            ">= 0",
        ),
        ('[[override]]\nprovider = "a"\n', 1, "exactly one of"),
        ('[[override]]\nprovider = "a"\ndiscount = 0.5\nprice_per_hour = 2\n', 1, "exactly one"),
        ('[[override]]\nprovider = "a"\ndiscount = 0.5\ncolour = "red"\n', 1, "unknown field"),
        ('[[override]]\nprovider = "a"\ndiscount = 0.5\nbilling = "weekly"\n', 1, "weekly"),
    ],
)
def test_bad_entries_name_their_line(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(OverrideError) as info:
        load_overrides(path)
    message = str(info.value)
    assert f"{path}:{line}:" in message
    assert reason in message or reason.replace(">= 0", "> 0") in message


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[[override]]\nprovider = "a"\ndiscount = = 0.5\n')
    with pytest.raises(OverrideError, match="line 3"):
        load_overrides(path)


def test_bad_override_file_stops_app_creation(tmp_path: Path) -> None:
    path = write(tmp_path, '[[override]]\nprovider = "a"\n')
    with pytest.raises(OverrideError):
        create_app(app_settings(price_overrides=str(path)))


def test_override_wins_in_the_served_catalog(
    tmp_path: Path, make_client: Callable[..., TestClient[Litestar]]
) -> None:
    path = write(
        tmp_path,
        '[[override]]\nprovider = "tencent"\ninstance_type = "GN7.2XLARGE32"\n'
        'billing = "on_demand"\nprice_per_hour = 5.5\n',
    )
    client = make_client(price_overrides=str(path))
    page = client.get(
        "/v1/providers/tencent/instance-types", params={"accelerator": "T4", "billing": "on_demand"}
    ).json()
    item = next(i for i in page["items"] if i["instance_type"] == "GN7.2XLARGE32")
    assert [(p["price_per_hour"], p["price_source"]) for p in item["prices"]] == [(5.5, "override")]
