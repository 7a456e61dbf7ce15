"""Transparent price estimates for instance types no source prices.

Three quarters of the catalog has no confirmed price. Leaving those rows unknown hides
most of the market; inventing numbers would be worse. This module fits a small, stated
model on the confirmed on-demand prices and labels everything it derives as an estimate
with its basis and a range. It is a pure function of the loaded catalogs.

The model (per provider ``p``, accelerator ``a``)::

    price_per_hour ≈ count × card_hour[p, a] + vcpus × vcpu_hour[p] + memory_gib × gib_hour[p]

* The host terms ``vcpu_hour[p]`` and ``gib_hour[p]`` and the card-hour prices of the
  accelerators ``p`` prices are fitted together by non-negative least squares on relative
  errors (a 1-card and an 8-card row weigh the same), on ``p``'s confirmed on-demand
  prices. A provider with fewer than :data:`MIN_ROWS_FOR_HOST_TERMS` priced rows borrows
  the median host terms of the providers that have enough.
* An accelerator ``p`` does not price borrows its card-hour price from the providers that
  do (their median), and the range widens to the spread between them.
* An accelerator nobody prices gets no estimate: the row stays unknown. So does a CPU-only
  row of a provider without a confirmed CPU-only price.
* Range: the point times the 10th..90th percentile of the fit's relative residuals on the
  provider's rows (at least ±:data:`MIN_SPREAD`); borrowed card-hour prices widen it to
  at least ±:data:`BORROWED_SPREAD` or the spread between the clouds' card-hour prices.
* Monthly: the provider's median ratio of a month's price to the on-demand hourly price
  over its types priced both ways (the range covers the smallest to the largest ratio).
* Spot: the provider's documented spot rules (:class:`~service.catalog.models.SpotRules`):
  between ``discount_floor`` and ``discount_cap`` of the on-demand price; the point is the
  cap (the dearest the rules allow), so a spot estimate never looks cheaper than it may be.

Live prices and operator overrides replace estimates: a row keeps its estimate only for a
(region, billing) that no confirmed price covers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from service.catalog.models import (
    ALL_REGIONS,
    HOURS_PER_MONTH,
    Billing,
    InstanceType,
    Price,
    SpotRules,
)
from service.catalog.names import localized_name

MIN_ROWS_FOR_HOST_TERMS = 6
"""Priced rows a provider needs before its own vCPU/RAM terms are fitted."""
MIN_SPREAD = 0.15
"""Smallest half-width of an estimate's range (relative)."""
BORROWED_SPREAD = 0.35
"""Smallest half-width when the card-hour price comes from other clouds."""
MODEL_AS_OF_FALLBACK = "unknown"
"""The date of an estimate no dated confirmed price stands behind (never shown as a year)."""
MODEL_SOURCE = (
    "Suanli price model (service/catalog/price_model.py) over the confirmed prices of this catalog"
)


@dataclass(frozen=True, slots=True)
class CardHour:
    """The card-hour price of one accelerator at one provider, and where it came from."""

    value: float
    rows: int
    providers: tuple[str, ...]
    borrowed: bool = False
    spread: float = 0.0
    """Relative half-width implied by the disagreement between clouds (borrowed only)."""
    as_of: str = MODEL_AS_OF_FALLBACK
    """Newest date of the confirmed prices this card-hour price comes from."""


@dataclass(frozen=True, slots=True)
class ProviderTerms:
    name: str
    display_name: str
    vcpu_hour: float
    gib_hour: float
    host_rows: int
    host_borrowed: bool
    cards: dict[str, CardHour]
    residual_low: float
    residual_high: float
    monthly_ratio: tuple[float, float, float] | None
    """(low, median, high) of price_per_month / on-demand price_per_hour."""
    newest: str
    """Newest date of this provider's own confirmed prices."""
    rows: int
    cpu_rows: int = 0
    """Confirmed CPU-only prices of this provider: without one, CPU-only rows stay
    unknown (host terms fitted on GPU rows alone do not price a CPU server)."""
    host_as_of: str = MODEL_AS_OF_FALLBACK
    """Newest date of the prices the host rates come from (the pooled clouds' when
    borrowed): an estimate is as old as the prices it stands on, not as the provider's
    own newest quote."""


@dataclass(frozen=True, slots=True)
class PriceModel:
    """The fitted model: one :class:`ProviderTerms` per provider."""

    providers: dict[str, ProviderTerms] = field(default_factory=dict)

    def terms(self, provider: str) -> ProviderTerms | None:
        return self.providers.get(provider)


@dataclass(frozen=True, slots=True)
class CatalogPrices:
    """What the model reads of one provider: its rows, its confirmed prices, spot rules."""

    name: str
    rows: Sequence[InstanceType]
    prices: Sequence[Price]
    spot_rules: SpotRules | None = None
    display_name: str = ""


def _confirmed(prices: Iterable[Price]) -> list[Price]:
    return [p for p in prices if not p.estimated and p.price_per_hour is not None]


def _on_demand_points(cat: CatalogPrices) -> list[tuple[InstanceType, float, str]]:
    """(row, hourly price, as_of): the cheapest confirmed on-demand price per type."""
    rows = {r.instance_type: r for r in cat.rows}
    best: dict[str, tuple[float, str]] = {}
    for p in _confirmed(cat.prices):
        row = rows.get(p.instance_type)
        if p.billing != "on_demand" or row is None or p.price_per_hour is None:
            continue
        if row.vcpus is None or row.memory_gib is None:
            continue
        if row.instance_type not in best or p.price_per_hour < best[row.instance_type][0]:
            best[row.instance_type] = (p.price_per_hour, p.as_of)
    return [(rows[name], value, as_of) for name, (value, as_of) in best.items()]


def _nnls(a: list[list[float]], b: list[float], sweeps: int = 4000) -> list[float]:
    """Non-negative least squares by cyclic coordinate descent (tiny systems only)."""
    n = len(a[0]) if a else 0
    x = [0.0] * n
    col_sq = [sum(row[j] ** 2 for row in a) for j in range(n)]
    residual = list(b)  # b - A x
    for _ in range(sweeps):
        moved = 0.0
        for j in range(n):
            if col_sq[j] == 0:
                continue
            grad = sum(a[i][j] * residual[i] for i in range(len(a)))
            new = max(0.0, x[j] + grad / col_sq[j])
            delta = new - x[j]
            if delta:
                for i in range(len(a)):
                    residual[i] -= a[i][j] * delta
                x[j] = new
                moved = max(moved, abs(delta))
        if moved < 1e-9:
            break
    return x


def _fit_provider(
    points: Sequence[tuple[InstanceType, float, str]],
) -> tuple[float, float, dict[str, float]]:
    """(vcpu_hour, gib_hour, card_hour per accelerator) on relative errors."""
    accelerators = sorted({row.accelerator for row, _, _ in points if row.accelerator})
    a: list[list[float]] = []
    b: list[float] = []
    for row, price, _ in points:
        features = [float(row.vcpus or 0), float(row.memory_gib or 0.0)]
        features += [
            float(row.accelerator_count) if row.accelerator == acc else 0.0 for acc in accelerators
        ]
        a.append([f / price for f in features])
        b.append(1.0)
    x = _nnls(a, b)
    return x[0], x[1], dict(zip(accelerators, x[2:], strict=True))


def _host_cost(vcpu_hour: float, gib_hour: float, row: InstanceType) -> float:
    return (row.vcpus or 0) * vcpu_hour + (row.memory_gib or 0.0) * gib_hour


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _monthly_ratio(cat: CatalogPrices) -> tuple[float, float, float] | None:
    hourly: dict[tuple[str, str], float] = {}
    monthly: dict[tuple[str, str], float] = {}
    for p in _confirmed(cat.prices):
        key = (p.instance_type, p.region)
        if p.billing == "on_demand" and p.price_per_hour:
            hourly[key] = p.price_per_hour
        elif p.billing == "monthly" and p.price_per_month:
            monthly[key] = p.price_per_month
    ratios = [monthly[k] / hourly[k] for k in monthly.keys() & hourly.keys()]
    if len(ratios) < 3:
        return None
    return min(ratios), statistics.median(ratios), max(ratios)


def _newest(dates: Iterable[str]) -> str:
    """The newest of some ``as_of`` dates (ISO prefixes: ``2021`` < ``2023-06``); the
    fallback only when none is dated."""
    return max((d for d in dates if d != MODEL_AS_OF_FALLBACK), default=MODEL_AS_OF_FALLBACK)


def _oldest(dates: Iterable[str]) -> str:
    """The oldest of some ``as_of`` dates: a spot estimate is as old as the on-demand
    price it scales, however new the spot rules (review 3 R7: 2023-06 card-hour rates
    were dated 2026-01, the rules' date)."""
    return min((d for d in dates if d != MODEL_AS_OF_FALLBACK), default=MODEL_AS_OF_FALLBACK)


def fit_price_model(catalogs: Sequence[CatalogPrices]) -> PriceModel:
    """Fit the model on every provider's confirmed on-demand prices (see module doc)."""
    points = {cat.name: _on_demand_points(cat) for cat in catalogs}
    dated = {name: max(as_of for _, _, as_of in pts) for name, pts in points.items() if pts}
    own: dict[str, tuple[float, float, dict[str, float]]] = {}
    for name, pts in points.items():
        if len(pts) >= MIN_ROWS_FOR_HOST_TERMS:
            own[name] = _fit_provider(pts)
    pooled_vcpu = statistics.median([v for v, _, _ in own.values()]) if own else 0.0
    pooled_gib = statistics.median([g for _, g, _ in own.values()]) if own else 0.0
    pooled_as_of = _newest(dated[name] for name in own)

    # Card-hour prices per provider: fitted, or from the provider's rows net of host terms.
    local_cards: dict[str, dict[str, CardHour]] = {}
    hosts: dict[str, tuple[float, float, bool]] = {}
    for name, pts in points.items():
        if name in own:
            vcpu, gib, fitted = own[name]
            counts: dict[str, int] = {}
            for row, _, _ in pts:
                if row.accelerator:
                    counts[row.accelerator] = counts.get(row.accelerator, 0) + 1
            local_cards[name] = {
                acc: CardHour(value, counts.get(acc, 0), (name,), as_of=dated[name])
                for acc, value in fitted.items()
                if value > 0
            }
            hosts[name] = (vcpu, gib, False)
            continue
        hosts[name] = (pooled_vcpu, pooled_gib, True)
        per_acc: dict[str, list[float]] = {}
        for row, price, _ in pts:
            if row.accelerator and row.accelerator_count > 0:
                net = price - _host_cost(pooled_vcpu, pooled_gib, row)
                if net > 0:
                    per_acc.setdefault(row.accelerator, []).append(net / row.accelerator_count)
        local_cards[name] = {
            acc: CardHour(statistics.median(v), len(v), (name,), as_of=dated[name])
            for acc, v in per_acc.items()
        }

    # Cross-provider card-hour prices, for accelerators a provider does not price itself.
    everywhere: dict[str, list[tuple[str, CardHour]]] = {}
    for name, own_cards in local_cards.items():
        for acc, own_card in own_cards.items():
            everywhere.setdefault(acc, []).append((name, own_card))

    model: dict[str, ProviderTerms] = {}
    for cat in catalogs:
        name = cat.name
        vcpu, gib, borrowed_host = hosts.get(name, (pooled_vcpu, pooled_gib, True))
        cards = dict(local_cards.get(name, {}))
        for acc, entries in everywhere.items():
            if acc in cards:
                continue
            values = [c.value for _, c in entries]
            spread = (max(values) / min(values) - 1.0) / 2 if len(values) > 1 else 0.0
            cards[acc] = CardHour(
                statistics.median(values),
                sum(c.rows for _, c in entries),
                tuple(sorted(n for n, _ in entries)),
                borrowed=True,
                spread=spread,
                as_of=_newest(c.as_of for _, c in entries),
            )
        residuals = []
        for row, price, _ in points.get(name, []):
            card = cards.get(row.accelerator or "")
            if row.accelerator and card is None:
                continue
            predicted = _host_cost(vcpu, gib, row) + (
                card.value * row.accelerator_count if card else 0.0
            )
            residuals.append(price / predicted - 1.0 if predicted > 0 else 0.0)
        low = min(-MIN_SPREAD, _quantile(residuals, 0.1))
        high = max(MIN_SPREAD, _quantile(residuals, 0.9))
        dates = [as_of for _, _, as_of in points.get(name, [])]
        model[name] = ProviderTerms(
            name=name,
            display_name=cat.display_name or name,
            vcpu_hour=vcpu,
            gib_hour=gib,
            host_rows=len(points.get(name, [])) if not borrowed_host else 0,
            host_borrowed=borrowed_host,
            cards=cards,
            residual_low=low,
            residual_high=high,
            monthly_ratio=_monthly_ratio(cat),
            newest=_newest(dates),
            rows=len(points.get(name, [])),
            cpu_rows=sum(1 for row, _, _ in points.get(name, []) if row.accelerator is None),
            host_as_of=pooled_as_of if borrowed_host else _newest(dates),
        )
    return PriceModel(model)


@dataclass(frozen=True, slots=True)
class Estimate:
    point: float
    low: float
    high: float
    basis: str
    """What the estimate stands on, as an English sentence fragment."""
    basis_zh: str = ""
    as_of: str = MODEL_AS_OF_FALLBACK
    """Newest date of the confirmed prices the estimate stands on."""


def estimate_hourly(
    terms: ProviderTerms, row: InstanceType, names: Mapping[str, str] | None = None
) -> Estimate | None:
    """The on-demand estimate for one row, or ``None`` when the model cannot say.
    ``names`` maps provider names to display names for the basis sentence."""
    if row.vcpus is None or row.memory_gib is None:
        return None
    host = _host_cost(terms.vcpu_hour, terms.gib_hour, row)
    if row.accelerator is None:
        if terms.host_borrowed or terms.cpu_rows == 0 or _host_terms(terms) is None:
            return None
        card_part, card = 0.0, None
    else:
        card = terms.cards.get(row.accelerator)
        if card is None or row.accelerator_count <= 0:
            return None
        card_part = card.value * row.accelerator_count
    point = card_part + host
    if point <= 0:
        return None
    low_rel, high_rel = terms.residual_low, terms.residual_high
    if card is not None and card.borrowed:
        widen = max(BORROWED_SPREAD, card.spread)
        low_rel, high_rel = min(low_rel, -widen), max(high_rel, widen)
    if terms.host_borrowed:
        low_rel, high_rel = min(low_rel, -BORROWED_SPREAD), max(high_rel, BORROWED_SPREAD)
    low = point * max(0.05, 1.0 + low_rel)
    high = point * (1.0 + high_rel)
    basis, basis_zh = _basis(terms, row, card, names)
    as_of = terms.host_as_of if card is None else _newest((terms.host_as_of, card.as_of))
    return Estimate(point, low, high, basis, basis_zh, as_of)


def _in_zh(name: str) -> str:
    """A name set into a Chinese sentence: no spaces around a Chinese name (来自阿里云的),
    one on the side where a Latin name meets Chinese text (来自 p 的)."""
    left = " " if name[:1].isascii() and name[:1].isalnum() else ""
    right = " " if name[-1:].isascii() and name[-1:].isalnum() else ""
    return f"{left}{name}{right}"


def _money(value: float) -> str:
    return f"¥{value:.2f}" if value >= 0.1 else f"¥{value:.3f}"


def _basis(
    terms: ProviderTerms,
    row: InstanceType,
    card: CardHour | None,
    names: Mapping[str, str] | None,
) -> tuple[str, str]:
    """(English, Chinese) basis: which priced rows and terms the estimate comes from."""
    shown = dict(names or {})
    shown.setdefault(terms.name, terms.display_name)
    host = _host_terms(terms)
    if host is None:
        host_en = host_zh = ""
    elif terms.host_borrowed:
        host_en = f"{host[0]} (median host rates of the clouds with enough priced types)"
        host_zh = f"{host[1]}（取定价机型足够多的云的主机费率中位数）"
    else:
        own_en, own_zh = (
            localized_name(terms.display_name, "en"),
            localized_name(terms.display_name, "zh"),
        )
        host_en = f"{host[0]} (fitted on {terms.rows} priced {own_en} types)"  # >= 6
        host_zh = f"{host[1]}（按{_in_zh(own_zh)}的 {terms.rows} 个已定价机型拟合）"
    if card is None or row.accelerator is None:
        return f"host rates {host_en}", f"主机费率 {host_zh}"
    where = "/".join(localized_name(shown.get(n, n), "en") for n in card.providers)
    where_zh = "/".join(localized_name(shown.get(n, n), "zh") for n in card.providers)
    acc = row.accelerator
    if card.borrowed:
        card_en = f"{acc} at {_money(card.value)} per card-hour ({BORROWED} {where})"
        card_zh = f"{acc} 每卡每小时 {_money(card.value)}（借用{_in_zh(where_zh)}的价格）"
    else:
        types = "type" if card.rows == 1 else "types"
        card_en = (
            f"{acc} at {_money(card.value)} per card-hour (from {card.rows} priced {where} {types})"
        )
        card_zh = (
            f"{acc} 每卡每小时 {_money(card.value)}"
            f"（来自{_in_zh(where_zh)}的 {card.rows} 个已定价机型）"
        )
    if host is None:  # the fit put the whole price on the cards
        return f"{row.accelerator_count} × {card_en}", f"{row.accelerator_count} 卡 × {card_zh}"
    return (
        f"{row.accelerator_count} × {card_en}, plus host rates {host_en}",
        f"{row.accelerator_count} 卡 × {card_zh}，加主机费率 {host_zh}",
    )


def _host_terms(terms: ProviderTerms) -> tuple[str, str] | None:
    """(English, Chinese) host rates, leaving out a rate the fit put at zero (the
    non-negative least squares clamps a term that does not pay to 0): "¥0.000 per
    GiB-hour" would read as a price, not as "this cloud's RAM is not priced apart"."""
    rates = [
        (terms.vcpu_hour, "per vCPU-hour", "每 vCPU 每小时"),
        (terms.gib_hour, "per GiB-hour", "每 GiB 每小时"),
    ]
    shown = [(_money(value), en, zh) for value, en, zh in rates if _money(value) != _money(0.0)]
    if not shown:
        return None
    return (
        " and ".join(f"{money} {en}" for money, en, _ in shown),
        "、".join(f"{zh} {money}" for money, _, zh in shown),
    )


def _row_regions_key(row: InstanceType) -> str:
    return row.regions[0] if len(row.regions) == 1 else ALL_REGIONS


def estimated_prices(cat: CatalogPrices, model: PriceModel) -> list[Price]:
    """Estimates for the (type, billing) pairs of one provider that no confirmed price
    covers: on demand from the model, monthly from the provider's monthly/hourly ratio,
    spot from its documented spot rules. Spot estimates also cover confirmed on-demand
    prices (a spot quote is its own billing mode)."""
    terms = model.terms(cat.name)
    if terms is None:
        return []
    names = {n: t.display_name for n, t in model.providers.items()}
    covered: dict[str, set[Billing]] = {}
    on_demand: dict[str, Price] = {}
    for p in cat.prices:
        if p.price_per_hour is None:
            continue
        covered.setdefault(p.instance_type, set()).add(p.billing)
        if p.billing == "on_demand" and not p.estimated:
            best = on_demand.get(p.instance_type)
            if best is None or (best.price_per_hour or 0) > p.price_per_hour:
                on_demand[p.instance_type] = p
    out: list[Price] = []
    for row in cat.rows:
        if row.missing_fields:
            continue
        have = covered.get(row.instance_type, set())
        region = _row_regions_key(row)
        hourly: Estimate | None = None
        if "on_demand" not in have:
            hourly = estimate_hourly(terms, row, names)
            if hourly is not None:
                out.append(_price(row, region, "on_demand", hourly))
        base = hourly
        confirmed = on_demand.get(row.instance_type)
        if base is None and confirmed is not None and confirmed.price_per_hour is not None:
            value = confirmed.price_per_hour
            base = Estimate(
                value,
                value,
                value,
                f"the confirmed on-demand price of {_money(value)}/h",
                f"已确认的按量价格 {_money(value)}/小时",
                confirmed.as_of,
            )
            region = confirmed.region
        if base is None:
            continue
        if "monthly" not in have and hourly is not None and terms.monthly_ratio is not None:
            out.append(_monthly(row, region, hourly, terms))
        rules = cat.spot_rules
        if "spot" not in have and rules is not None and rules.discount_floor is not None:
            out.append(_spot(row, region, base, rules))
    return out


def _price(row: InstanceType, region: str, billing: Billing, est: Estimate) -> Price:
    return Price(
        instance_type=row.instance_type,
        region=region,
        billing=billing,
        price_per_hour=round(est.point, 4),
        source=MODEL_SOURCE,
        as_of=est.as_of,
        price_source="estimated",
        estimated=True,
        basis=est.basis,
        basis_zh=est.basis_zh,
        price_low=round(est.low, 4),
        price_high=round(est.high, 4),
    )


def _monthly(row: InstanceType, region: str, hourly: Estimate, terms: ProviderTerms) -> Price:
    assert terms.monthly_ratio is not None
    low_r, mid_r, high_r = terms.monthly_ratio
    month = hourly.point * mid_r
    cloud_en, cloud_zh = (localized_name(terms.display_name, lang) for lang in ("en", "zh"))
    basis = (
        f"{hourly.basis}; a month costs {mid_r:.0f} on-demand hours at {cloud_en} "
        f"(median of its types priced both ways, {low_r:.0f}–{high_r:.0f})"
    )
    basis_zh = (
        f"{hourly.basis_zh}；{_in_zh(cloud_zh).lstrip()}包月约等于 {mid_r:.0f} 小时按量"
        f"（两种计费都有定价的机型的中位数，{low_r:.0f}–{high_r:.0f}）"
    )
    return Price(
        instance_type=row.instance_type,
        region=region,
        billing="monthly",
        price_per_hour=round(month / HOURS_PER_MONTH, 4),
        price_per_month=round(month, 2),
        source=MODEL_SOURCE,
        as_of=_newest((hourly.as_of, terms.newest)),
        price_source="estimated",
        estimated=True,
        basis=basis,
        basis_zh=basis_zh,
        price_low=round(hourly.low * low_r / HOURS_PER_MONTH, 4),
        price_high=round(hourly.high * high_r / HOURS_PER_MONTH, 4),
    )


def _spot(row: InstanceType, region: str, base: Estimate, rules: SpotRules) -> Price:
    floor = rules.discount_floor or 0.0
    cap = rules.discount_cap
    basis = (
        f"the provider's documented spot range, {floor:.0%}–{cap:.0%} of the on-demand price "
        f"(shown at the top), over {base.basis}"
    )
    basis_zh = (
        f"按云厂商公布的抢占式价格区间（按量价格的 {floor:.0%}–{cap:.0%}，取上限），"
        f"按量部分：{base.basis_zh}"
    )
    return Price(
        instance_type=row.instance_type,
        region=region,
        billing="spot",
        price_per_hour=round(base.point * cap, 4),
        source=f"{MODEL_SOURCE}; spot rules: {rules.source}",
        as_of=_oldest((base.as_of, rules.as_of)),
        price_source="estimated",
        estimated=True,
        basis=basis,
        basis_zh=basis_zh,
        price_low=round(base.low * floor, 4),
        price_high=round(base.high * cap, 4),
        interruption_rate_per_hour=rules.interruption_rate_per_hour,
    )


BORROWED = "borrowed from"
"""How an estimate's basis says its card-hour price is another cloud's (:func:`borrowed`)."""


def borrowed(price: Price | None) -> bool:
    """``price`` is an estimate whose card-hour price comes from other clouds (their
    median), not from the provider's own prices: what the answer's summary says of a
    top option priced so (review 4 F18)."""
    return price is not None and price.estimated and BORROWED in (price.basis or "")


def with_estimates(
    catalogs: Sequence[CatalogPrices], enabled: bool = True
) -> Mapping[str, list[Price]]:
    """Estimated prices per provider name (empty lists when estimates are switched off)."""
    if not enabled:
        return {cat.name: [] for cat in catalogs}
    model = fit_price_model(catalogs)
    return {cat.name: estimated_prices(cat, model) for cat in catalogs}
