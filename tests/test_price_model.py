"""The price model (service/catalog/price_model.py): fitted numbers, ranges, borrowing, unknowns,
monthly and spot relations, and the shipped catalogs' coverage."""

from __future__ import annotations

import pytest

from service.catalog.aggregate import CatalogService
from service.catalog.models import InstanceType, Price, SpotRules
from service.catalog.price_model import (
    BORROWED_SPREAD,
    CatalogPrices,
    estimate_hourly,
    estimated_prices,
    fit_price_model,
)
from service.hooks.loader import get_plugin_manager


def row(name: str, acc: str | None, count: int, vcpus: int, mem: float) -> InstanceType:
    return InstanceType(
        instance_type=name,
        family=name.split(".")[0],
        accelerator=acc,
        accelerator_count=count,
        accelerator_memory_gib=24.0 if acc else None,
        vcpus=vcpus,
        memory_gib=mem,
        regions=("r1",),
        source="test",
        as_of="2026-01",
    )


def price(
    name: str, per_hour: float, billing: str = "on_demand", month: float | None = None
) -> Price:
    return Price(
        instance_type=name,
        region="r1",
        billing=billing,  # type: ignore[arg-type]
        price_per_hour=per_hour,
        price_per_month=month,
        source="test list",
        as_of="2025-06",
    )


# An exact linear world: card-hour 10, vCPU 0.5, GiB 0.1.
def truth(count: int, vcpus: int, mem: float) -> float:
    return 10 * count + 0.5 * vcpus + 0.1 * mem


SHAPES = [
    (1, 8, 32.0),
    (1, 16, 64.0),
    (2, 16, 128.0),
    (4, 32, 256.0),
    (1, 32, 64.0),
    (8, 64, 512.0),
]
ROWS = [row(f"a.{i}", "A10", c, v, m) for i, (c, v, m) in enumerate(SHAPES)]
PRICES = [price(r.instance_type, truth(*s)) for r, s in zip(ROWS, SHAPES, strict=True)]
PRICES += [
    price(r.instance_type, truth(*s) * 480 / 730, "monthly", truth(*s) * 480)
    for r, s in zip(ROWS[:3], SHAPES[:3], strict=True)
]
NEW = row("a.new", "A10", 2, 24, 96.0)
T4 = row("a.t4", "T4", 1, 8, 32.0)
RULES = SpotRules(
    discount_floor=0.1,
    discount_cap=1.0,
    interruption_rate_per_hour=0.05,
    source="doc",
    as_of="2026-01",
)
CAT = CatalogPrices(name="p", rows=(*ROWS, NEW, T4), prices=PRICES, spot_rules=RULES)


def test_fit_recovers_the_terms_of_an_exact_world() -> None:
    terms = fit_price_model([CAT]).terms("p")
    assert terms is not None
    assert terms.cards["A10"].value == pytest.approx(10.0, rel=1e-3)
    assert terms.vcpu_hour == pytest.approx(0.5, rel=1e-2)
    assert terms.gib_hour == pytest.approx(0.1, rel=1e-2)
    est = estimate_hourly(terms, NEW)
    assert est is not None
    assert est.point == pytest.approx(truth(2, 24, 96.0), rel=1e-3)  # 41.6
    # residuals are ~0, so the range is the minimum ±15 %
    assert est.low == pytest.approx(est.point * 0.85, rel=1e-3)
    assert est.high == pytest.approx(est.point * 1.15, rel=1e-3)
    assert est.basis.startswith("2 × A10 at ¥10.00 per card-hour (from 6 priced p types)")
    assert est.basis_zh.startswith("2 卡 × A10 每卡每小时 ¥10.00")


def test_an_accelerator_nobody_prices_stays_unknown() -> None:
    terms = fit_price_model([CAT]).terms("p")
    assert terms is not None
    assert estimate_hourly(terms, T4) is None
    names = {(p.instance_type, p.billing) for p in estimated_prices(CAT, fit_price_model([CAT]))}
    assert ("a.t4", "on_demand") not in names


def test_estimates_cover_only_what_no_confirmed_price_covers() -> None:
    out = estimated_prices(CAT, fit_price_model([CAT]))
    by_key = {(p.instance_type, p.billing): p for p in out}
    assert ("a.0", "on_demand") not in by_key, "a confirmed price is never re-estimated"
    new = by_key[("a.new", "on_demand")]
    assert new.estimated
    assert new.price_source == "estimated"
    assert new.basis
    assert new.price_low is not None
    assert new.price_high is not None
    assert new.price_low < new.price_per_hour < new.price_high
    assert new.ranking_price == new.price_high
    month = by_key[("a.new", "monthly")]
    assert month.price_per_month == pytest.approx(new.price_per_hour * 480, rel=1e-3)
    assert "480 on-demand hours" in (month.basis or "")


def test_spot_estimate_follows_the_documented_rules() -> None:
    out = estimated_prices(CAT, fit_price_model([CAT]))
    spot = {p.instance_type: p for p in out if p.billing == "spot"}
    confirmed = spot["a.0"]  # built on the confirmed on-demand price 10 + 4 + 3.2
    assert confirmed.price_per_hour == pytest.approx(17.2)
    assert confirmed.price_low == pytest.approx(1.72)
    assert confirmed.price_high == pytest.approx(17.2)
    assert confirmed.interruption_rate_per_hour == 0.05
    assert "10%–100% of the on-demand price" in (confirmed.basis or "")
    assert "¥17.20/h" in (confirmed.basis or "")
    no_rules = CatalogPrices(name="p", rows=CAT.rows, prices=CAT.prices)
    assert not [
        p for p in estimated_prices(no_rules, fit_price_model([no_rules])) if p.billing == "spot"
    ]


def test_a_provider_without_prices_borrows_card_hours_with_a_wider_range() -> None:
    other = CatalogPrices(name="q", rows=(row("q.a10", "A10", 2, 24, 96.0),), prices=())
    model = fit_price_model([CAT, other])
    terms = model.terms("q")
    assert terms is not None
    assert terms.host_borrowed
    card = terms.cards["A10"]
    assert card.borrowed
    assert card.providers == ("p",)
    est = estimate_hourly(terms, other.rows[0])
    assert est is not None
    assert est.point == pytest.approx(truth(2, 24, 96.0), rel=1e-2)
    assert est.high == pytest.approx(est.point * (1 + BORROWED_SPREAD), rel=1e-3)
    assert "(borrowed from p)" in est.basis


def test_cpu_rows_stay_unknown_without_a_confirmed_cpu_price() -> None:
    terms = fit_price_model([CAT]).terms("p")
    assert terms is not None
    assert estimate_hourly(terms, row("c.1", None, 0, 8, 32.0)) is None


def shipped(estimates: bool) -> dict[str, list[Price]]:
    pm = get_plugin_manager()
    snap = CatalogService(pm.hook.suanli_register_providers, price_estimates=estimates).load()
    return {c.name: list(c.prices) for c in snap.providers}


def test_shipped_catalogs_every_accelerated_row_is_priced_estimated_or_unknown() -> None:
    on = shipped(True)
    off = shipped(False)
    assert all(not p.estimated for prices in off.values() for p in prices)
    for prices in on.values():
        for p in prices:
            if p.estimated:
                assert p.basis, p
                assert p.price_low is not None, p
                assert p.price_high is not None, p
                assert p.price_low <= (p.price_per_hour or 0) <= p.price_high + 1e-9, p
    huawei = {p.instance_type: p for p in on["huawei"] if p.billing == "on_demand"}
    # 8 × 910B3: the only Ascend price (1 × Snt9b3, ¥29.55/h) times eight
    assert huawei["modelarts.bm.npu.arm.8snt9b2.d"].price_per_hour == pytest.approx(
        8 * 29.55, rel=1e-3
    )
    assert "modelarts.bm.npu.arm.4snt9b1" not in huawei, "910B4 has no priced peer: unknown"
    assert "modelarts.bm.snt9.xlarge.8" not in huawei, "Ascend 910 has no priced peer: unknown"
    volc = {p.instance_type for p in on["volcengine"] if p.estimated}
    assert "ml.pni2.28xlarge" in volc, "A100-80GB is priced at Alibaba"
    assert "ml.hpcpni3ln.45xlarge" not in volc, "H20 is priced nowhere: unknown"


def test_supersede_keeps_the_replaced_price_as_history() -> None:
    from service.catalog.snapshot_provider import supersede

    old = price("a.0", 17.2)
    newer = Price(
        instance_type="a.0",
        region="r1",
        billing="on_demand",
        price_per_hour=15.0,
        source="newer list",
        as_of="2026-09",
    )
    (merged,) = supersede([old], [newer])
    assert merged.price_per_hour == 15.0
    assert [(h.price_per_hour, h.source, h.as_of) for h in merged.history] == [
        (17.2, "test list", "2025-06")
    ]
    stale = Price(
        instance_type="a.0",
        region="r1",
        billing="on_demand",
        price_per_hour=9.0,
        source="older",
        as_of="2020",
    )
    assert supersede([merged], [stale]) == [merged], "an older figure never replaces a newer"


def test_a_borrowed_estimate_is_dated_by_the_prices_it_stands_on() -> None:
    """An estimate is as old as the confirmed prices behind it: a provider with no quote of
    its own borrows p's card-hour and host rates, so its estimates carry p's date (never an
    epoch year), and a provider's own newer quote does not make a borrowed price look new."""
    other = CatalogPrices(name="q", rows=(row("q.a10", "A10", 2, 24, 96.0),), prices=())
    model = fit_price_model([CAT, other])
    (estimate,) = estimated_prices(other, model)
    assert estimate.as_of == "2025-06"
    t4_priced = CatalogPrices(
        name="r",
        rows=(row("r.t4", "T4", 1, 8, 32.0), row("r.a10", "A10", 1, 8, 32.0)),
        prices=(Price(instance_type="r.t4", region="r1", billing="on_demand",
                      price_per_hour=5.0, source="r list", as_of="2026-09"),),
    )  # fmt: skip
    model = fit_price_model([CAT, t4_priced])
    borrowed = [p for p in estimated_prices(t4_priced, model) if p.instance_type == "r.a10"]
    assert [p.as_of for p in borrowed if p.billing == "on_demand"] == ["2025-06"]


def test_the_chinese_basis_names_a_cloud_without_spaces_around_it() -> None:
    """Chinese puts no spaces around a Chinese word: 来自阿里云的, not 来自 阿里云 的 (a
    Latin name keeps them: 来自 p 的, below)."""
    named = CatalogPrices(name="p", rows=CAT.rows, prices=CAT.prices, display_name="Pcloud (派云)")
    model = fit_price_model([named])
    terms = model.terms("p")
    assert terms is not None
    est = estimate_hourly(terms, NEW)
    assert est is not None
    assert "来自派云的" in est.basis_zh, est.basis_zh
    assert "按派云的" in est.basis_zh, est.basis_zh


# A world whose RAM is not priced apart: card-hour 10, vCPU 0.5, nothing per GiB.
FREE_RAM = CatalogPrices(
    name="p",
    rows=(*ROWS, NEW),
    prices=[
        price(r.instance_type, 10 * c + 0.5 * v) for r, (c, v, _) in zip(ROWS, SHAPES, strict=True)
    ],
)


def test_a_rate_fitted_at_zero_is_left_out_of_the_basis() -> None:
    terms = fit_price_model([FREE_RAM]).terms("p")
    assert terms is not None
    assert terms.gib_hour == pytest.approx(0.0, abs=5e-4)
    est = estimate_hourly(terms, NEW)
    assert est is not None
    assert est.point == pytest.approx(10 * 2 + 0.5 * 24, rel=1e-3)
    assert est.basis == (
        "2 × A10 at ¥10.00 per card-hour (from 6 priced p types), "
        "plus host rates ¥0.50 per vCPU-hour (fitted on 6 priced p types)"
    )
    assert est.basis_zh == (
        "2 卡 × A10 每卡每小时 ¥10.00（来自 p 的 6 个已定价机型），"
        "加主机费率 每 vCPU 每小时 ¥0.50（按 p 的 6 个已定价机型拟合）"
    )


def test_cards_alone_when_the_fit_prices_no_host_term() -> None:
    cards_only = CatalogPrices(
        name="p",
        rows=(*ROWS, NEW),
        prices=[
            price(r.instance_type, 10.0 * c) for r, (c, _, _) in zip(ROWS, SHAPES, strict=True)
        ],
    )
    terms = fit_price_model([cards_only]).terms("p")
    assert terms is not None
    est = estimate_hourly(terms, NEW)
    assert est is not None
    assert est.basis == "2 × A10 at ¥10.00 per card-hour (from 6 priced p types)"
    assert est.basis_zh == "2 卡 × A10 每卡每小时 ¥10.00（来自 p 的 6 个已定价机型）"
    assert estimate_hourly(terms, row("c.1", None, 0, 8, 32.0)) is None


def test_no_shipped_basis_prints_a_zero_rate() -> None:
    """A rate the fit put at zero reads as a price ("¥0.000 per GiB-hour"); it is left out."""
    bases = [
        text
        for prices in shipped(True).values()
        for p in prices
        for text in (p.basis, p.basis_zh)
        if text
    ]
    assert len(bases) > 100  # the shipped catalogs carry many estimates
    assert [b for b in bases if "¥0.000" in b or "¥0.00 " in b] == []
