"""``GET /v1/providers`` coverage counts and honest dates; provenance of the shipped data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

ROOT = Path(__file__).resolve().parent.parent


def providers(client: TestClient[Litestar]) -> dict[str, Any]:
    return {p["name"]: p for p in client.get("/v1/providers").json()}


def test_counts_and_dates_per_provider(client: TestClient[Litestar]) -> None:
    info = providers(client)
    for name in ("alibaba", "tencent", "huawei", "volcengine"):
        p = info[name]
        rows = p["instance_types"]
        assert isinstance(rows, int)
        parts = [p["priced_instance_types"], p["estimated_instance_types"]]
        parts.append(p["unknown_price_instance_types"])
        assert sum(parts) == rows, name
        assert 0 <= p["accelerated_with_regions"] <= p["accelerated_instance_types"]
    # prices_as_of is the newest confirmed price date, prices_oldest the oldest
    assert info["huawei"]["prices_as_of"] == "2026-05-15"
    assert info["alibaba"]["prices_as_of"] == "2023-06"
    assert info["alibaba"]["prices_oldest"] == "2023-06"
    assert info["tencent"]["prices_as_of"] == "2021"
    assert info["volcengine"]["prices_as_of"] is None, "Volcano has no confirmed price"
    assert info["tencent"]["accelerated_with_regions"] == 42
    assert info["huawei"]["accelerated_with_regions"] == 13
    assert info["tencent"]["priced_instance_types"] == 28
    spot = info["alibaba"]["spot_rules"]
    assert isinstance(spot, dict)
    assert spot["discount_floor"] == 0.1
    assert spot["protection_hours"] == 1.0
    assert info["tencent"]["spot_rules"] is None, "Tencent publishes no spot discount"


def test_incomplete_rows_name_their_missing_fields(client: TestClient[Litestar]) -> None:
    info = providers(client)
    incomplete = info["volcengine"]["incomplete_instance_types"]
    volc = {r["instance_type"]: r["missing"] for r in incomplete}
    assert volc["ml.pni3ln.8xlarge"] == ["vcpus", "memory_gib", "accelerator_memory_gib"]
    assert volc["ml.hpcpni2l.28xlarge"] == ["vcpus"]
    huawei = info["huawei"]["incomplete_instance_types"]
    assert not [r for r in huawei if "910" in r["instance_type"] or "snt9" in r["instance_type"]]


def test_switching_estimates_off_leaves_unpriced_rows_unknown(
    make_client: Callable[..., TestClient[Litestar]],
) -> None:
    on = providers(make_client())
    off = providers(make_client(price_estimates=False))
    for name in on:
        assert off[name]["estimated_instance_types"] == 0
        assert off[name]["priced_instance_types"] == on[name]["priced_instance_types"]
    assert on["huawei"]["estimated_instance_types"] > 0


def test_instance_types_show_regions_note_zones_and_estimate_range(
    client: TestClient[Litestar],
) -> None:
    page = client.get("/v1/providers/tencent/instance-types", params={"limit": 500}).json()
    rows = {r["instance_type"]: r for r in page["items"]}
    gt4 = rows["GT4.41XLARGE948"]
    assert gt4["zones"] == ["ap-guangzhou-4", "ap-shanghai-4", "ap-beijing-5"]
    assert "ap-mumbai" not in rows["GN7.2XLARGE32"]["regions"]
    assert "Mumbai" in rows["GN7.2XLARGE32"]["regions_note"]
    pnv4 = rows["PNV4.7XLARGE116"]
    estimate = next(p for p in pnv4["prices"] if p["billing"] == "on_demand")
    assert estimate["estimated"] is True
    assert estimate["price_low"] < estimate["price_per_hour"] < estimate["price_high"]
    assert "A10" in estimate["basis"]


def test_no_internal_store_ids_in_shipped_sources() -> None:
    pattern = re.compile(r"index (file )?ids?\s+\d", re.IGNORECASE)
    for path in [*ROOT.glob("plugins/*/*.json"), *ROOT.glob("plugins/*/*.py"), ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        assert not pattern.search(text), f"{path.relative_to(ROOT)} cites a store id"
    for path in ROOT.glob("plugins/*/catalog.json"):
        for row in json.loads(path.read_text(encoding="utf-8"))["instance_types"]:
            assert row["source"].strip(), row["instance_type"]


def test_recommend_catalogs_carry_honest_price_dates(client: TestClient[Litestar]) -> None:
    body = {"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}
    catalogs = {
        c["provider"]: c for c in client.post("/v1/recommend", json=body).json()["catalogs"]
    }
    assert catalogs["huawei"]["prices_as_of"] == "2026-05-15"
    assert catalogs["tencent"]["prices_oldest"] == "2021"
    assert catalogs["volcengine"]["prices_as_of"] is None
