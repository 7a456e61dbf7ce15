"""Serving precedence for prices: operator override > live > shipped snapshot > estimated.

Pure functions, no clock and no I/O: the request path calls them on data already in
memory, so a request never waits on a cloud API or on Redis.

Stale-while-revalidate: a live snapshot older than its TTL is still served, and the
merge says it is stale so the response can mark it while the refresh job (which keeps
the last good snapshot when a refresh fails) catches up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from service.catalog.live.adapter import parse_iso_utc
from service.catalog.live.store import LiveSnapshot
from service.catalog.models import ALL_REGIONS, Price, PriceSource

PRICE_SOURCE_RANK: dict[PriceSource, int] = {
    "override": 0,
    "live": 1,
    "snapshot": 2,
    "estimated": 3,
}
"""Lower wins. A row flagged ``estimated=True`` ranks as ``estimated`` whatever its
``price_source`` says."""


def rank(price: Price) -> int:
    """Precedence rank of one price row (lower wins)."""
    if price.estimated:
        return PRICE_SOURCE_RANK["estimated"]
    return PRICE_SOURCE_RANK[price.price_source]


def snapshot_age_s(live: LiveSnapshot, now: datetime) -> float:
    """Seconds since ``live`` was fetched; 0 when its clock ran ahead of ours."""
    return max(0.0, (now - parse_iso_utc(live.fetched_at)).total_seconds())


def merge_prices(
    snapshot_prices: Sequence[Price],
    live: LiveSnapshot | None,
    now: datetime,
    ttl_s: float,
    *,
    max_age_s: float | None = None,
) -> tuple[tuple[Price, ...], bool]:
    """Layer a live snapshot over a provider's other prices; returns ``(prices, stale)``.

    For each (instance type, region, billing) the row with the best precedence wins
    (:data:`PRICE_SOURCE_RANK`); ties keep the first row. ``snapshot_prices`` may
    already contain override rows, which then stay on top of live ones. Rows for
    different regions never shadow each other, including the ``"*"`` list-price rows:
    a live price for ``cn-beijing`` replaces a shipped ``cn-beijing`` price, and the
    caller picking a price for a region prefers the exact region (:func:`select_price`).

    ``stale`` is true when live prices were used and are older than ``ttl_s``: they are
    still served (stale-while-revalidate). Live prices older than ``max_age_s`` (when
    given) are not used at all, so a refresh that has failed for days falls back to
    the shipped prices instead of serving week-old live ones.
    """
    if live is None or not live.prices:
        return tuple(snapshot_prices), False
    age = snapshot_age_s(live, now)
    if max_age_s is not None and age > max_age_s:
        return tuple(snapshot_prices), False
    best: dict[tuple[str, str, str], Price] = {}
    for price in (*snapshot_prices, *live.prices):
        key = (price.instance_type, price.region, price.billing)
        current = best.get(key)
        if current is None or rank(price) < rank(current):
            best[key] = price
    return tuple(best.values()), age > ttl_s


def select_price(
    prices: Iterable[Price], instance_type: str, region: str, billing: str
) -> Price | None:
    """The price to quote for one offer: best precedence first, then the exact region
    over a ``"*"`` (region-less list) price. ``None`` when unpriced."""
    candidates = [
        p
        for p in prices
        if p.instance_type == instance_type
        and p.billing == billing
        and p.region in (region, ALL_REGIONS)
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda p: (rank(p), p.region == ALL_REGIONS))
