"""Listing offers: one index per catalog snapshot, then filter, group and page.

An *offer* is one instance type in one region under one billing mode with its price.
Catalog rows the planner cannot use (a spec nobody confirmed) are listed too, with
``missing`` naming what is unknown: this is a catalog view, not a recommendation. A list
price given for every region (``"*"``) becomes one offer per region where the type is
sold. Unknown prices are ``null`` and sort after every priced offer, whatever the sort.

Every offer of a snapshot is built once, in every sort order, the first time the
snapshot is listed (:class:`OfferIndex`); a request then only filters (keeping the
order), groups and slices.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from typing import get_args

import msgspec

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.aggregate import CatalogSnapshot, ProviderCatalog, prices_by_type
from service.catalog.models import ALL_REGIONS, AcceleratorRef, InstanceType, Price
from service.catalog.names import (
    asked_region_ids,
    localized_name,
    region_suggestions,
    resolve_provider,
)
from service.offers.schema import (
    GroupKey,
    OfferGroupItem,
    OfferItem,
    OfferPage,
    OfferQuery,
    SortKey,
    hourly_within,
)
from service.planning.schema import CatalogRef
from service.runtime.errors import ErrorLang, InputError, closest


class _Resolved(msgspec.Struct, frozen=True):
    """The query's names resolved against the snapshot and the registry."""

    accelerators: frozenset[str] | None
    providers: frozenset[str] | None
    regions: frozenset[str] | None


def known_regions(snapshot: CatalogSnapshot) -> set[str]:
    """Every region id a provider, an instance type or a price names."""
    regions: set[str] = set()
    for catalog in snapshot.providers:
        regions.update(catalog.regions)
        for row in catalog.instance_types:
            regions.update(row.regions)
        regions.update(p.region for p in catalog.prices)
    regions.discard(ALL_REGIONS)
    return regions


def unknown_region(name: str, known: frozenset[str]) -> InputError:
    """The 400 for a ``region`` query parameter no loaded catalog names, with the closest
    region ids (every known one when none is close): the offer list and the instance-type
    listing refuse it in the same words."""
    return InputError(
        "region",
        f"unknown region {name!r}",
        region_suggestions(name, known) or sorted(known),
        source="query",
        zh=f"未知地域 {name!r}（请用地域 ID）",
    )


def _resolve(query: OfferQuery, index: OfferIndex, registry: AcceleratorRegistry) -> _Resolved:
    if (
        query.min_accelerators is not None
        and query.max_accelerators is not None
        and query.min_accelerators > query.max_accelerators
    ):
        raise InputError(
            "max_accelerators",
            f"max_accelerators ({query.max_accelerators}) is below min_accelerators "
            f"({query.min_accelerators})",
            source="query",
            zh=f"max_accelerators（{query.max_accelerators}）小于 min_accelerators"
            f"（{query.min_accelerators}）：没有报价能同时满足",
        )
    accelerators: set[str] | None = None
    if query.accelerator:
        accelerators = set()
        for name in query.accelerator:
            accelerators.update(spec.name for spec in registry.named(name, "accelerator", "query"))
    providers = None
    if query.provider:
        loaded = index.providers
        chosen: set[str] = set()
        for name in query.provider:
            provider = resolve_provider(name, loaded)
            if provider is None:
                raise InputError(
                    "provider",
                    f"unknown provider {name!r}; loaded: {', '.join(sorted(loaded)) or 'none'}",
                    closest(name, loaded),
                    source="query",
                    zh=f"未知云厂商 {name!r}；已加载：{'、'.join(sorted(loaded)) or '无'}",
                )
            chosen.add(provider)
        providers = frozenset(chosen)
    regions = None
    if query.region:
        known = index.regions
        asked: set[str] = set()
        for name in query.region:
            # a city is its region on every cloud, as in /v1/recommend (review 8 K3)
            found = asked_region_ids(name, known)
            if isinstance(found, str):
                raise unknown_region(name, known)
            asked.update(found)
        regions = frozenset(asked)
    return _Resolved(
        accelerators=None if accelerators is None else frozenset(accelerators),
        providers=providers,
        regions=regions,
    )


def _row_matches(row: InstanceType, query: OfferQuery, names: frozenset[str] | None) -> bool:
    if row.is_cpu_only:
        # max_accelerators=0 asks for CPU-only types (review 10 R6)
        if not (query.include_cpu or query.max_accelerators == 0) or names is not None:
            return False
        if query.min_accelerators is not None or query.min_accelerator_memory_gib is not None:
            return False
    else:
        if names is not None and row.accelerator not in names:
            return False
        count = row.accelerator_count
        if query.min_accelerators is not None and count < query.min_accelerators:
            return False
        if query.max_accelerators is not None and count > query.max_accelerators:
            return False
        wanted = query.min_accelerator_memory_gib
        if wanted is not None and (row.accelerator_memory_gib is None or
                                   row.accelerator_memory_gib < wanted):  # fmt: skip
            return False
    if query.min_vcpus is not None and (row.vcpus is None or row.vcpus < query.min_vcpus):
        return False
    wanted_ram = query.min_memory_gib
    return wanted_ram is None or (row.memory_gib is not None and row.memory_gib >= wanted_ram)


def _item(
    catalog: ProviderCatalog, row: InstanceType, region: str | None, price: Price | None
) -> OfferItem:
    count = row.accelerator_count
    per_hour = None if price is None else price.price_per_hour
    memory = row.accelerator_memory_gib
    return OfferItem(
        provider=catalog.name,
        provider_display_name=catalog.display_name,
        region=region,
        regions=[] if region is None else [region],
        instance_type=row.instance_type,
        family=row.family,
        accelerator=AcceleratorRef.of(row),
        total_accelerator_memory_gib=None if memory is None or not count else memory * count,
        vcpus=row.vcpus,
        memory_gib=row.memory_gib,
        network_gbps=row.network_gbps,
        rdma=row.rdma,
        billing=None if price is None else price.billing,
        price_per_hour=per_hour,
        price_per_month=None if price is None else price.price_per_month,
        price_per_accelerator_hour=(
            None if per_hour is None or not count else round(per_hour / count, 4)
        ),
        currency=catalog.currency if price is None else price.currency,
        price_source=None if price is None else price.price_source,
        price_estimated=False if price is None else price.estimated,
        price_basis=None if price is None else price.basis,
        price_reference=None if price is None else price.source,
        price_as_of=None if price is None else price.as_of,
        source=row.source,
        as_of=row.as_of,
        confidence=row.confidence,
        missing=list(row.missing_fields),
    )


class _Entry(msgspec.Struct, frozen=True):
    """An offer with the catalog row and price it was built from (what filters read)."""

    provider: str
    row: InstanceType
    price: Price | None
    item: OfferItem


def _entries(catalog: ProviderCatalog) -> list[_Entry]:
    by_type = prices_by_type(catalog)
    entries = []
    for row in catalog.instance_types:
        prices: Sequence[Price | None] = by_type.get(row.instance_type) or [None]
        for price in prices:
            if price is None or price.region == ALL_REGIONS:
                regions: Sequence[str | None] = row.regions or [None]
            else:
                regions = [price.region]
            entries += [
                _Entry(catalog.name, row, price, _item(catalog, row, region, price))
                for region in regions
            ]
    return entries


class OfferIndex:
    """Every offer of one catalog snapshot, built once, in each sort order."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        entries = [entry for catalog in snapshot.providers for entry in _entries(catalog)]
        self.orders: dict[SortKey, tuple[_Entry, ...]] = {}
        for sort in get_args(SortKey):
            key = _sort_key(sort)
            self.orders[sort] = tuple(sorted(entries, key=lambda e: key(e.item)))
        self.regions = frozenset(known_regions(snapshot))
        self.providers = frozenset(c.name for c in snapshot.providers)
        self.accelerators = frozenset(e.row.accelerator for e in entries if e.row.accelerator)
        """Accelerators some loaded catalog lists (whatever their price)."""


_INDEXES: list[tuple[CatalogSnapshot, OfferIndex]] = []
_INDEX_LOCK = threading.Lock()
_KEEP = 4
"""Snapshots indexed at once (one per app; tests build several apps in one process)."""


def offer_index(snapshot: CatalogSnapshot) -> OfferIndex:
    """The snapshot's index, built on its first listing (snapshots are immutable)."""
    for indexed, index in _INDEXES:
        if indexed is snapshot:
            return index
    with _INDEX_LOCK:
        for indexed, index in _INDEXES:
            if indexed is snapshot:
                return index
        index = OfferIndex(snapshot)
        _INDEXES.insert(0, (snapshot, index))
        del _INDEXES[_KEEP:]
        return index


def _keeps(entry: _Entry, query: OfferQuery, resolved: _Resolved) -> bool:
    """Does the offer pass every filter of the query?"""
    if resolved.providers is not None and entry.provider not in resolved.providers:
        return False
    if not _row_matches(entry.row, query, resolved.accelerators):
        return False
    price = entry.price
    per_hour = None if price is None else price.price_per_hour
    needs_price = query.priced_only or query.max_price is not None or bool(query.billing)
    if needs_price and (price is None or per_hour is None):
        return False
    if price is not None and query.billing and price.billing not in query.billing:
        return False
    if query.max_price is not None and not hourly_within(
        per_hour, price.billing if price else None, query.max_price, "monthly" in query.billing
    ):
        return False
    return resolved.regions is None or entry.item.region in resolved.regions


def _sort_key(sort: SortKey) -> Callable[[OfferItem], tuple[object, ...]]:
    def tail(o: OfferItem) -> tuple[float, str, str, str, str]:
        price = o.price_per_hour
        return (
            price if price is not None else 0.0,
            o.provider,
            o.instance_type,
            o.region or "",
            o.billing or "",
        )

    if sort == "price":
        return lambda o: (o.price_per_hour is None, *tail(o))
    if sort == "price_per_accelerator":
        return lambda o: (
            o.price_per_accelerator_hour is None,
            o.price_per_accelerator_hour or 0.0,
            o.price_per_hour is None,
            *tail(o),
        )
    if sort == "memory":
        return lambda o: (
            o.accelerator is None or o.accelerator.memory_gib is None,
            -(o.accelerator.memory_gib or 0.0) if o.accelerator else 0.0,
            o.price_per_hour is None,
            *tail(o),
        )
    return lambda o: (
        o.total_accelerator_memory_gib is None,
        -(o.total_accelerator_memory_gib or 0.0),
        o.price_per_hour is None,
        *tail(o),
    )


def fold_regions(offers: Sequence[OfferItem]) -> list[OfferItem]:
    """Offers that differ only in region, folded into the first (in the given order),
    which lists them all in ``regions``."""
    folds: dict[tuple[str, str, str | None, float | None], list[str]] = {}
    first: list[tuple[OfferItem, list[str]]] = []
    for offer in offers:
        key = (offer.provider, offer.instance_type, offer.billing, offer.price_per_hour)
        regions = folds.get(key)
        if regions is None:
            regions = folds[key] = list(offer.regions)
            first.append((offer, regions))
        else:
            regions.extend(r for r in offer.regions if r not in regions)
    return [msgspec.structs.replace(offer, regions=regions) for offer, regions in first]


def _group_value(offer: OfferItem, key: GroupKey) -> str | None:
    if key == "accelerator":
        return None if offer.accelerator is None else offer.accelerator.name
    if key == "provider":
        return offer.provider
    return offer.region


def _groups(offers: Sequence[OfferItem], keys: Sequence[GroupKey]) -> list[OfferGroupItem]:
    """Summaries in the order of each group's first offer (offers are already sorted)."""
    members: dict[tuple[str | None, ...], list[OfferItem]] = {}
    for offer in offers:
        members.setdefault(tuple(_group_value(offer, k) for k in keys), []).append(offer)
    groups = []
    for values, group in members.items():
        prices = [o.price_per_hour for o in group if o.price_per_hour is not None]
        per_acc = [
            o.price_per_accelerator_hour for o in group if o.price_per_accelerator_hour is not None
        ]
        groups.append(
            OfferGroupItem(
                key=dict(zip(keys, values, strict=True)),
                offers=len(group),
                priced=len(prices),
                estimated=sum(o.price_estimated for o in group if o.price_per_hour is not None),
                accelerator_counts=sorted({o.accelerator.count for o in group if o.accelerator}),
                min_price_per_hour=min(prices, default=None),
                max_price_per_hour=max(prices, default=None),
                min_price_per_accelerator_hour=min(per_acc, default=None),
                max_price_per_accelerator_hour=max(per_acc, default=None),
                providers=sorted({o.provider for o in group}),
                regions=sorted({region for o in group for region in o.regions}),
                best=group[0],
            )
        )
    return groups


def list_offers(
    query: OfferQuery,
    snapshot: CatalogSnapshot,
    registry: AcceleratorRegistry,
    lang: ErrorLang = "en",
) -> OfferPage:
    """Every offer of ``snapshot`` matching ``query``, sorted, paged and grouped; the
    warnings in ``lang`` (the request's ``Accept-Language``).

    Raises :class:`InputError` (a 400 naming the query parameter, with suggestions) for
    unknown accelerator, provider or region names and a count range that is empty.
    """
    index = offer_index(snapshot)
    resolved = _resolve(query, index, registry)
    offers = [e.item for e in index.orders[query.sort] if _keeps(e, query, resolved)]
    if query.fold_regions:
        offers = fold_regions(offers)
    group_keys = list(dict.fromkeys(query.group_by))
    return OfferPage(
        items=offers[query.offset : query.offset + query.limit],
        total=len(offers),
        priced=sum(o.price_per_hour is not None for o in offers),
        limit=query.limit,
        offset=query.offset,
        sort=query.sort,
        groups=_groups(offers, group_keys) if group_keys else None,
        catalogs=[
            CatalogRef(provider=c.name, as_of=c.as_of, prices_as_of=c.prices_as_of)
            for c in snapshot.providers
        ],
        warnings=[
            *snapshot.warnings,
            *_unlisted(query, index, registry, lang),
            *_unpriced(query, index, resolved, lang, bool(offers)),
        ],
    )


def _unlisted(
    query: OfferQuery, index: OfferIndex, registry: AcceleratorRegistry, lang: ErrorLang
) -> list[str]:
    """A sentence per asked accelerator that no loaded catalog lists: an empty page for
    ``H800`` says that no cloud here sells it, not merely that the filters matched nothing."""
    return [
        f"已加载的云厂商目录中没有 {name}：这是已知的加速卡，但已加载的云都不提供。"
        if lang == "zh"
        else f"No loaded provider catalog lists {name}: it is a known accelerator, but none "
        "of the loaded clouds offers it."
        for name in query.accelerator
        if not {spec.name for spec in registry.matching(name)} & index.accelerators
    ]


_BILLING_WORDS = {"on_demand": ("on-demand", "按量"), "monthly": ("monthly", "包月"),
                  "spot": ("spot", "竞价")}  # fmt: skip


def _billings(billings: Collection[str], lang: ErrorLang) -> str:
    """``["on_demand", "monthly"]`` -> ``on-demand or monthly`` / ``按量或包月``."""
    words = [_BILLING_WORDS[b][lang == "zh"] for b in _BILLING_WORDS if b in billings]
    return ("或" if lang == "zh" else " or ").join(words)


def _unpriced(
    query: OfferQuery, index: OfferIndex, resolved: _Resolved, lang: ErrorLang, found: bool
) -> list[str]:
    """An empty page only because its offers have no known price (``max_price``,
    ``billing`` and ``priced_only`` pass priced offers only): says how many were left out,
    so that an L20 without public prices does not read as an L20 nobody sells. Offers
    priced in another billing mode only are said apart, per cloud that has no price in
    the mode asked (review 10 R1: Tencent Cloud's 436 priced offers under ``billing=spot``
    were counted as having no known price; no loaded catalog has Tencent spot prices)."""
    if found or not (query.priced_only or query.max_price is not None or query.billing):
        return []
    unpriced = msgspec.structs.replace(query, priced_only=False, max_price=None, billing=[])
    rest = [e for e in index.orders[query.sort] if _keeps(e, unpriced, resolved)]
    priced = [e for e in rest if e.price is not None and e.price.price_per_hour is not None]
    n = len(rest) - len(priced)
    out: list[str] = []
    if query.billing:
        sold = {
            e.provider for e in priced if e.price is not None and e.price.billing in query.billing
        }
        other = [e for e in priced if e.provider not in sold]
        for provider in sorted({e.provider for e in other}):
            mine = [e for e in other if e.provider == provider]
            name = localized_name(mine[0].item.provider_display_name, lang)
            have = _billings({e.price.billing for e in mine if e.price is not None}, lang)
            asked = _billings(query.billing, lang)
            out.append(
                f"{name}另有 {len(mine)} 个符合其余条件的报价，但已加载的目录中都没有{asked}价格"
                f"（只有{have}价格）。"
                if lang == "zh"
                else f"{len(mine)} offers of {name} match the other filters, but none has a "
                f"{asked} price in the loaded catalogs (they are priced {have} only)."
            )
    if not n:
        return out
    if lang == "zh":
        return [
            *out,
            f"另有 {n} 个符合其余条件的报价没有公开价格：价格或计费方式条件只保留已知价格的报价。",
        ]
    return [
        *out,
        f"{n} offers match the other filters but have no known price: price and billing "
        "filters keep only offers whose price is known.",
    ]
