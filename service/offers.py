"""Offers across every provider: filter, sort, group and page (``GET /v1/offers``).

The ``sky show-gpus`` / ``dstack offer`` view as a pure function over one catalog
snapshot: :func:`list_offers` (query + snapshot + accelerator registry -> page). The HTTP
route, the CLI (``suanli offers``) and the MCP tool (``list_offers``) all call it with
an :class:`OfferQuery`, so they answer the same thing and refuse the same input.

An *offer* is one instance type in one region under one billing mode with its price.
Catalog rows the planner cannot use (a spec nobody confirmed) are listed too, with
``missing`` naming what is unknown: this is a catalog view, not a recommendation. A list
price given for every region (``"*"``) becomes one offer per region where the type is
sold. Unknown prices are ``null`` and sort after every priced offer, whatever the sort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Literal

import msgspec

from service.accelerators import AcceleratorRegistry
from service.api.query import closest
from service.catalog import CatalogSnapshot, ProviderCatalog
from service.errors import InputError
from service.planning.schema import CatalogRef
from service.providers import (
    ALL_REGIONS,
    AcceleratorRef,
    Billing,
    InstanceType,
    Price,
    PriceSource,
    Rdma,
)

SortKey = Literal["price", "price_per_accelerator", "memory", "total_memory"]
GroupKey = Literal["accelerator", "provider", "region"]

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
MAX_LIMIT = 500


class OfferQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Filters (combined with AND), sort, grouping and paging of ``GET /v1/offers``."""

    accelerator: Annotated[
        list[Name],
        msgspec.Meta(
            max_length=32,
            description="Accelerator names or families (repeatable): `A100` (both A100s), "
            "`A100-80GB`, `910B` (every Ascend 910B), `nvidia a10`. Unknown names are a 400 "
            "with the closest known ones.",
        ),
    ] = msgspec.field(default_factory=list)
    min_accelerators: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1, le=1024, description="At least this many accelerators per instance."
            ),
        ]
        | None
    ) = None
    max_accelerators: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=1024, description="At most this many accelerators per instance."),
        ]
        | None
    ) = None
    min_accelerator_memory_gib: (
        Annotated[
            float,
            msgspec.Meta(
                ge=0, le=4096, description="At least this much memory per accelerator, in GiB."
            ),
        ]
        | None
    ) = None
    provider: Annotated[
        list[Name],
        msgspec.Meta(
            max_length=16,
            description="Provider names from GET /v1/providers (repeatable), e.g. `alibaba`.",
        ),
    ] = msgspec.field(default_factory=list)
    region: Annotated[
        list[Name],
        msgspec.Meta(
            max_length=64,
            description="Region ids (repeatable), e.g. `cn-beijing`, `ap-shanghai`. An offer "
            "whose region is unknown never matches.",
        ),
    ] = msgspec.field(default_factory=list)
    billing: Annotated[
        list[Billing],
        msgspec.Meta(
            max_length=3,
            description="Billing modes (repeatable): `on_demand`, `monthly`, `spot`. Offers "
            "without a price have no known billing and never match.",
        ),
    ] = msgspec.field(default_factory=list)
    max_price: (
        Annotated[
            float,
            msgspec.Meta(
                gt=0,
                le=1_000_000,
                description="At most this many CNY per hour for the instance (monthly prices "
                "count as the month / 730 h). Unpriced offers never match.",
            ),
        ]
        | None
    ) = None
    min_vcpus: (
        Annotated[int, msgspec.Meta(ge=1, le=100_000, description="At least this many vCPUs.")]
        | None
    ) = None
    min_memory_gib: (
        Annotated[
            float, msgspec.Meta(ge=0, le=1_000_000, description="At least this much host RAM, GiB.")
        ]
        | None
    ) = None
    include_cpu: Annotated[
        bool,
        msgspec.Meta(
            description="Also list CPU-only instance types (default: accelerator offers only)."
        ),
    ] = False
    priced_only: Annotated[
        bool, msgspec.Meta(description="Leave out offers whose price is unknown.")
    ] = False
    sort: Annotated[
        SortKey,
        msgspec.Meta(
            description="`price` (CNY per hour, cheapest first), `price_per_accelerator` "
            "(per accelerator-hour, cheapest first), `memory` (memory per accelerator, "
            "largest first) or `total_memory` (accelerator memory of the instance, largest "
            "first). Unknown prices always come last."
        ),
    ] = "price"
    group_by: Annotated[
        list[GroupKey],
        msgspec.Meta(
            max_length=3,
            description="Also summarise the matching offers per `accelerator`, `provider` "
            "and/or `region` (repeatable): counts, price ranges and the cheapest offer.",
        ),
    ] = msgspec.field(default_factory=list)
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_LIMIT, description="Offers per page (1-500).")
    ] = 50
    offset: Annotated[
        int, msgspec.Meta(ge=0, le=1_000_000, description="Offers to skip (paging).")
    ] = 0


class OfferItem(msgspec.Struct, frozen=True, kw_only=True):
    """One instance type in one region under one billing mode, with its price if known."""

    provider: Annotated[str, msgspec.Meta(description="Provider name, e.g. `alibaba`.")]
    provider_display_name: Annotated[
        str, msgspec.Meta(description="The provider's name for people.")
    ]
    region: Annotated[
        str | None,
        msgspec.Meta(description="Region id; `null` when no source says where it is sold."),
    ]
    instance_type: Annotated[str, msgspec.Meta(description="The cloud's exact API name.")]
    family: Annotated[str, msgspec.Meta(description="Instance family.")]
    accelerator: Annotated[
        AcceleratorRef | None,
        msgspec.Meta(description="Accelerator model, count and memory each; `null` = CPU only."),
    ]
    total_accelerator_memory_gib: Annotated[
        float | None,
        msgspec.Meta(description="Accelerator memory of the whole instance, GiB; null if unknown."),
    ]
    vcpus: Annotated[int | None, msgspec.Meta(description="vCPUs; `null` = unknown.")]
    memory_gib: Annotated[float | None, msgspec.Meta(description="Host RAM in GiB.")]
    network_gbps: Annotated[float | None, msgspec.Meta(description="Network bandwidth, Gbit/s.")]
    rdma: Annotated[
        Rdma | None, msgspec.Meta(description="Cluster network (`none`, `rdma`, `erdma`).")
    ]
    billing: Annotated[
        Billing | None,
        msgspec.Meta(description="`on_demand`, `monthly` or `spot`; `null` when unpriced."),
    ]
    price_per_hour: Annotated[
        float | None,
        msgspec.Meta(description="CNY per hour; `null` = unknown (sorted last, never cheap)."),
    ]
    price_per_month: Annotated[
        float | None, msgspec.Meta(description="CNY per month (monthly billing).")
    ]
    price_per_accelerator_hour: Annotated[
        float | None, msgspec.Meta(description="`price_per_hour` / accelerator count.")
    ]
    currency: Annotated[str, msgspec.Meta(description="Currency of the prices (CNY).")]
    price_source: Annotated[
        PriceSource | None,
        msgspec.Meta(description="`override`, `live`, `snapshot` or `estimated`."),
    ]
    price_estimated: Annotated[
        bool, msgspec.Meta(description="True when the price is an estimate, not a quote.")
    ]
    price_basis: Annotated[
        str | None, msgspec.Meta(description="What an estimated price stands on.")
    ]
    price_reference: Annotated[
        str | None, msgspec.Meta(description="Where the price comes from (URL or path).")
    ]
    price_as_of: Annotated[str | None, msgspec.Meta(description="Date of the price.")]
    source: Annotated[str, msgspec.Meta(description="Where the instance specs come from.")]
    as_of: Annotated[str, msgspec.Meta(description="Date of the instance specs.")]
    confidence: Annotated[str, msgspec.Meta(description="`high`, `medium` or `low`.")]
    missing: Annotated[
        list[str],
        msgspec.Meta(
            description="Specs no source confirmed; such a type is listed but never recommended."
        ),
    ]


class OfferGroupItem(msgspec.Struct, frozen=True, kw_only=True):
    """The matching offers that share the ``group_by`` values."""

    key: Annotated[
        dict[str, str | None],
        msgspec.Meta(
            description='The grouped values, e.g. `{"accelerator": "A100-80GB"}`; a null '
            "accelerator is CPU only, a null region unknown."
        ),
    ]
    offers: Annotated[int, msgspec.Meta(description="Matching offers in the group.")]
    priced: Annotated[int, msgspec.Meta(description="Of which with a known price.")]
    accelerator_counts: Annotated[
        list[int], msgspec.Meta(description="Accelerators per instance found in the group.")
    ]
    min_price_per_hour: Annotated[
        float | None, msgspec.Meta(description="Cheapest CNY per hour; null if none priced.")
    ]
    max_price_per_hour: Annotated[float | None, msgspec.Meta(description="Dearest CNY per hour.")]
    min_price_per_accelerator_hour: Annotated[
        float | None, msgspec.Meta(description="Cheapest CNY per accelerator-hour.")
    ]
    max_price_per_accelerator_hour: Annotated[
        float | None, msgspec.Meta(description="Dearest CNY per accelerator-hour.")
    ]
    providers: Annotated[list[str], msgspec.Meta(description="Providers in the group.")]
    regions: Annotated[list[str], msgspec.Meta(description="Known regions in the group.")]
    best: Annotated[
        OfferItem, msgspec.Meta(description="The group's first offer in the requested sort.")
    ]


class OfferPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of offers, the totals, and optionally a summary per group."""

    items: Annotated[list[OfferItem], msgspec.Meta(description="This page of offers, sorted.")]
    total: Annotated[int, msgspec.Meta(description="Offers matching the filters (all pages).")]
    priced: Annotated[int, msgspec.Meta(description="Of which with a known price.")]
    limit: Annotated[int, msgspec.Meta(description="Page size asked for.")]
    offset: Annotated[int, msgspec.Meta(description="Offers skipped.")]
    sort: Annotated[SortKey, msgspec.Meta(description="The order of `items`.")]
    groups: Annotated[
        list[OfferGroupItem] | None,
        msgspec.Meta(description="One summary per group when `group_by` is given, else null."),
    ]
    catalogs: Annotated[
        list[CatalogRef], msgspec.Meta(description="Date of each provider's catalog and prices.")
    ]
    warnings: Annotated[
        list[str], msgspec.Meta(description="Providers that failed to load, in words.")
    ]


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


def _resolve(
    query: OfferQuery, snapshot: CatalogSnapshot, registry: AcceleratorRegistry
) -> _Resolved:
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
        )
    accelerators: set[str] | None = None
    if query.accelerator:
        accelerators = set()
        for name in query.accelerator:
            matches = registry.matching(name)
            if not matches:
                raise InputError(
                    "accelerator",
                    f"unknown accelerator {name!r}",
                    registry.suggest(name),
                    source="query",
                )
            accelerators.update(spec.name for spec in matches)
    providers = None
    if query.provider:
        loaded = {c.name for c in snapshot.providers}
        for name in query.provider:
            if name not in loaded:
                raise InputError(
                    "provider",
                    f"unknown provider {name!r}; loaded: {', '.join(sorted(loaded)) or 'none'}",
                    closest(name, loaded),
                    source="query",
                )
        providers = frozenset(query.provider)
    regions = None
    if query.region:
        known = known_regions(snapshot)
        for name in query.region:
            if name not in known:
                raise InputError(
                    "region", f"unknown region {name!r}", closest(name, known), source="query"
                )
        regions = frozenset(query.region)
    return _Resolved(
        accelerators=None if accelerators is None else frozenset(accelerators),
        providers=providers,
        regions=regions,
    )


def _row_matches(row: InstanceType, query: OfferQuery, names: frozenset[str] | None) -> bool:
    if row.is_cpu_only:
        if not query.include_cpu or names is not None:
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


def _offers_of(
    catalog: ProviderCatalog, query: OfferQuery, resolved: _Resolved
) -> Iterable[OfferItem]:
    by_type: dict[str, list[Price]] = {}
    for listed in catalog.prices:
        by_type.setdefault(listed.instance_type, []).append(listed)
    needs_price = query.priced_only or query.max_price is not None or bool(query.billing)
    for row in catalog.instance_types:
        if not _row_matches(row, query, resolved.accelerators):
            continue
        prices: Sequence[Price | None] = by_type.get(row.instance_type) or [None]
        for price in prices:
            per_hour = None if price is None else price.price_per_hour
            if needs_price and per_hour is None:
                continue
            if price is not None and query.billing and price.billing not in query.billing:
                continue
            if query.max_price is not None and (per_hour is None or per_hour > query.max_price):
                continue
            if price is None or price.region == ALL_REGIONS:
                regions: Sequence[str | None] = row.regions or [None]
            else:
                regions = [price.region]
            for region in regions:
                if resolved.regions is not None and region not in resolved.regions:
                    continue
                yield _item(catalog, row, region, price)


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
                accelerator_counts=sorted({o.accelerator.count for o in group if o.accelerator}),
                min_price_per_hour=min(prices, default=None),
                max_price_per_hour=max(prices, default=None),
                min_price_per_accelerator_hour=min(per_acc, default=None),
                max_price_per_accelerator_hour=max(per_acc, default=None),
                providers=sorted({o.provider for o in group}),
                regions=sorted({o.region for o in group if o.region is not None}),
                best=group[0],
            )
        )
    return groups


def list_offers(
    query: OfferQuery, snapshot: CatalogSnapshot, registry: AcceleratorRegistry
) -> OfferPage:
    """Every offer of ``snapshot`` matching ``query``, sorted, paged and grouped.

    Raises :class:`InputError` (a 400 naming the query parameter, with suggestions) for
    unknown accelerator, provider or region names and a count range that is empty.
    """
    resolved = _resolve(query, snapshot, registry)
    offers = [
        offer
        for catalog in snapshot.providers
        if resolved.providers is None or catalog.name in resolved.providers
        for offer in _offers_of(catalog, query, resolved)
    ]
    offers.sort(key=_sort_key(query.sort))
    return OfferPage(
        items=offers[query.offset : query.offset + query.limit],
        total=len(offers),
        priced=sum(o.price_per_hour is not None for o in offers),
        limit=query.limit,
        offset=query.offset,
        sort=query.sort,
        groups=_groups(offers, list(dict.fromkeys(query.group_by))) if query.group_by else None,
        catalogs=[
            CatalogRef(provider=c.name, as_of=c.as_of, prices_as_of=c.prices_as_of)
            for c in snapshot.providers
        ],
        warnings=list(snapshot.warnings),
    )
