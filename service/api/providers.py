"""``/v1/providers``, ``/v1/providers/{name}/instance-types`` and ``/v1/accelerators``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get
from litestar.exceptions import NotFoundException, ValidationException
from litestar.openapi.spec import Example
from litestar.params import PathParameter, QueryParameter

from service.api.query import given_twice, unknown_parameter
from service.api.state import SuanliDep
from service.catalog.aggregate import ProviderCatalog, prices_by_type
from service.catalog.coverage import coverage
from service.catalog.live.status import LivePriceState
from service.catalog.models import (
    AcceleratorRef,
    AcceleratorSpec,
    Billing,
    InstanceType,
    Price,
    PriceSource,
    Rdma,
    SpotRules,
)
from service.catalog.names import resolve_provider
from service.offers.listing import offer_index, unknown_region
from service.offers.schema import hourly_within
from service.runtime.errors import error_lang

LivePriceInfo = LivePriceState
"""Per provider: live prices on, why not, their age, stale flag and last refresh error."""


class IncompleteRow(msgspec.Struct, frozen=True, kw_only=True):
    """A row kept out of recommendations because a needed field is unconfirmed."""

    instance_type: Annotated[str, msgspec.Meta(description="The cloud's instance type name.")]
    missing: Annotated[
        list[str],
        msgspec.Meta(description="Fields the planner needs that no source confirmed."),
    ]


class ProviderInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A provider plugin: what loaded, its regions, catalog size and dates, live-price status."""

    name: Annotated[
        str,
        msgspec.Meta(description="Provider name to use in `constraints.providers` and in paths."),
    ]
    display_name: Annotated[
        str | None,
        msgspec.Meta(description="Human-readable name; `null` for a provider that did not load."),
    ]
    currency: Annotated[
        str | None,
        msgspec.Meta(
            description="Currency of its prices; `null` for a provider that did not load."
        ),
    ]
    regions: Annotated[list[str], msgspec.Meta(description="Region ids of the catalog.")]
    instance_types: Annotated[int, msgspec.Meta(description="Instance types in the catalog.")]
    priced_instance_types: Annotated[
        int, msgspec.Meta(description="Instance types with at least one confirmed price.")
    ]
    as_of: Annotated[
        str | None,
        msgspec.Meta(
            description="Date of the catalog snapshot; `null` for a provider that did not load."
        ),
    ]
    prices_as_of: Annotated[
        str | None,
        msgspec.Meta(
            description="Date of the newest confirmed price this provider serves; `null` when none."
        ),
    ]
    status: Annotated[
        str,
        msgspec.Meta(
            description="`loaded`, `failed` (plugin import or provider call failed; see `error`) "
            "or `excluded` (not in SUANLI_PLUGINS)."
        ),
    ]
    error: Annotated[
        str | None,
        msgspec.Meta(description="Why the provider failed to load; `null` when it loaded."),
    ] = None
    live_prices: Annotated[
        LivePriceInfo | None,
        msgspec.Meta(
            description="Live-price status: on or off and why, age of the prices, last refresh "
            "error; `null` for a provider that did not load."
        ),
    ] = None
    prices_oldest: Annotated[
        str | None,
        msgspec.Meta(description="Date of the oldest confirmed price this provider serves."),
    ] = None
    accelerated_instance_types: Annotated[
        int, msgspec.Meta(description="Instance types with a GPU or NPU.")
    ] = 0
    accelerated_with_regions: Annotated[
        int,
        msgspec.Meta(description="Accelerated instance types a source places in a region."),
    ] = 0
    estimated_instance_types: Annotated[
        int,
        msgspec.Meta(
            description="Instance types without a confirmed price that carry a price estimate."
        ),
    ] = 0
    unknown_price_instance_types: Annotated[
        int, msgspec.Meta(description="Instance types whose price is unknown (no estimate).")
    ] = 0
    incomplete_instance_types: Annotated[
        list[IncompleteRow],
        msgspec.Meta(
            description="Instance types left out of recommendations, with the missing fields."
        ),
    ] = []
    regions_source: Annotated[
        str | None, msgspec.Meta(description="Where this provider's region ids come from.")
    ] = None
    spot_rules: Annotated[
        SpotRules | None,
        msgspec.Meta(description="The provider's documented spot rules behind spot estimates."),
    ] = None


class PriceItem(msgspec.Struct, frozen=True, kw_only=True):
    """One price of an instance type: region, billing, amount, source and date."""

    region: Annotated[
        str, msgspec.Meta(description="Region id, or `*` for a list price given without region.")
    ]
    billing: Annotated[Billing, msgspec.Meta(description="`on_demand`, `monthly` or `spot`.")]
    price_per_hour: Annotated[
        float | None,
        msgspec.Meta(
            description="CNY per hour (for monthly billing: the month's price divided by 730 h); "
            "`null` when unknown."
        ),
    ]
    price_per_month: Annotated[
        float | None, msgspec.Meta(description="CNY per month (monthly billing); `null` otherwise.")
    ]
    currency: Annotated[str, msgspec.Meta(description="Currency of the amounts.")]
    price_source: Annotated[
        PriceSource, msgspec.Meta(description="`live`, `override`, `snapshot` or `estimated`.")
    ]
    estimated: Annotated[
        bool, msgspec.Meta(description="True for a price not quoted by the cloud (an estimate).")
    ]
    source: Annotated[
        str,
        msgspec.Meta(
            description="Where the price is published: a URL or a repository path at a commit."
        ),
    ]
    as_of: Annotated[str, msgspec.Meta(description="Date (or month) the price was valid on.")]
    basis: Annotated[str | None, msgspec.Meta(description="What an estimated price stands on.")] = (
        None
    )
    price_low: Annotated[
        float | None, msgspec.Meta(description="Estimates: low end of the range, CNY per hour.")
    ] = None
    price_high: Annotated[
        float | None, msgspec.Meta(description="Estimates: high end of the range, CNY per hour.")
    ] = None


class InstanceTypeItem(msgspec.Struct, frozen=True, kw_only=True):
    """One instance type of a provider's catalog, with its sourced specs and prices."""

    instance_type: Annotated[str, msgspec.Meta(description="The cloud's exact instance type name.")]
    family: Annotated[str, msgspec.Meta(description="Instance family.")]
    accelerator: Annotated[
        AcceleratorRef | None,
        msgspec.Meta(
            description="The accelerators of one server (name, count, memory each); `null` for a "
            "CPU-only type."
        ),
    ]
    vcpus: Annotated[
        int | None, msgspec.Meta(description="vCPUs; `null` when the source does not say.")
    ]
    memory_gib: Annotated[
        float | None, msgspec.Meta(description="RAM in GiB; `null` when the source does not say.")
    ]
    network_gbps: Annotated[
        float | None,
        msgspec.Meta(
            description="Network bandwidth in Gbit/s; `null` when the source does not say."
        ),
    ]
    rdma: Annotated[
        Rdma | None,
        msgspec.Meta(description="`rdma`, `erdma` or `none`; `null` when the source does not say."),
    ]
    local_nvme: Annotated[
        str | None,
        msgspec.Meta(
            description="Local NVMe disks as the cloud describes them (e.g. `2 x 3.5 TB`); `null`"
            " when none or not stated."
        ),
    ]
    regions: Annotated[
        list[str],
        msgspec.Meta(
            description="Regions where the type is sold; empty when no source says where."
        ),
    ]
    source: Annotated[
        str,
        msgspec.Meta(
            description="Where the specs are published: a URL or a repository path at a commit."
        ),
    ]
    as_of: Annotated[str, msgspec.Meta(description="Date the specs were read.")]
    confidence: Annotated[
        str, msgspec.Meta(description="How well the row is sourced: `high`, `medium` or `low`.")
    ]
    notes: Annotated[
        str | None, msgspec.Meta(description="Caveats about the row; `null` when none.")
    ]
    prices: Annotated[
        list[PriceItem],
        msgspec.Meta(
            description="The type's prices that pass the filters (region, billing, max price)."
        ),
    ]
    zones: Annotated[
        list[str], msgspec.Meta(description="Availability zones a source names for this type.")
    ] = []
    regions_note: Annotated[
        str | None,
        msgspec.Meta(description="Why the region list is short or empty, and where it comes from."),
    ] = None
    missing_fields: Annotated[
        list[str],
        msgspec.Meta(description="Fields no source confirmed; the type is not recommended then."),
    ] = []
    usage: Annotated[
        list[str],
        msgspec.Meta(
            description="What the type can run when its source restricts it (`inference`: a "
            "ModelArts public inference pool flavor, never offered for training); empty when "
            "no source restricts it."
        ),
    ] = []
    usage_note: Annotated[
        str | None, msgspec.Meta(description="Where the usage restriction comes from.")
    ] = None


class InstanceTypePage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of instance types and the total that matched the filters."""

    items: Annotated[
        list[InstanceTypeItem], msgspec.Meta(description="This page of instance types.")
    ]
    total: Annotated[
        int, msgspec.Meta(description="Instance types matching the filters, over all pages.")
    ]
    limit: Annotated[int, msgspec.Meta(description="Page size used.")]
    offset: Annotated[int, msgspec.Meta(description="Items skipped before this page.")]


def _price_item(price: Price) -> PriceItem:
    return PriceItem(
        region=price.region,
        billing=price.billing,
        price_per_hour=price.price_per_hour,
        price_per_month=price.price_per_month,
        currency=price.currency,
        price_source=price.price_source,
        estimated=price.estimated,
        source=price.source,
        as_of=price.as_of,
        basis=price.basis,
        price_low=price.price_low,
        price_high=price.price_high,
    )


def _item(row: InstanceType, prices: list[Price]) -> InstanceTypeItem:
    return InstanceTypeItem(
        instance_type=row.instance_type,
        family=row.family,
        accelerator=AcceleratorRef.of(row),
        vcpus=row.vcpus,
        memory_gib=row.memory_gib,
        network_gbps=row.network_gbps,
        rdma=row.rdma,
        local_nvme=row.local_nvme,
        regions=list(row.regions),
        source=row.source,
        as_of=row.as_of,
        confidence=row.confidence,
        notes=row.notes,
        prices=[_price_item(p) for p in prices],
        zones=list(row.zones),
        regions_note=row.regions_note,
        missing_fields=list(row.missing_fields),
        usage=list(row.usage),
        usage_note=row.usage_note,
    )


class InstanceTypeFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Query filters of ``GET /v1/providers/{name}/instance-types`` (all optional)."""

    accelerators: frozenset[str] | None = None
    min_accelerator_memory_gib: float | None = None
    min_accelerators: int | None = None
    region: str | None = None
    max_price: float | None = None
    billing: Billing | None = None
    cpu_only: bool | None = None

    def keep(self, row: InstanceType, prices: list[Price]) -> list[Price] | None:
        """The row's prices that pass, or ``None`` when the row itself is filtered out."""
        if self.cpu_only is not None and row.is_cpu_only != self.cpu_only:
            return None
        if self.accelerators is not None and row.accelerator not in self.accelerators:
            return None
        if (
            self.min_accelerator_memory_gib is not None
            and (row.accelerator_memory_gib or 0) < self.min_accelerator_memory_gib
        ):
            return None
        if self.min_accelerators is not None and row.accelerator_count < self.min_accelerators:
            return None
        selected = [p for p in prices if self._price_ok(p)]
        if self.region is not None and self.region not in row.regions:
            regional = [p for p in selected if p.region == self.region]
            if not regional:
                return None
        needs_price = self.max_price is not None or self.billing is not None
        if needs_price and not selected:
            return None
        return selected if needs_price else prices

    def _price_ok(self, price: Price) -> bool:
        if self.billing is not None and price.billing != self.billing:
            return False
        if self.region is not None and price.region not in (self.region, "*"):
            return False
        if self.max_price is not None:
            monthly = self.billing == "monthly"
            return hourly_within(price.price_per_hour, price.billing, self.max_price, monthly)
        return True


def filter_instance_types(
    catalog: ProviderCatalog, flt: InstanceTypeFilter
) -> list[InstanceTypeItem]:
    by_type = prices_by_type(catalog)
    items = []
    for row in catalog.instance_types:
        kept = flt.keep(row, by_type.get(row.instance_type, []))
        if kept is not None:
            items.append(_item(row, kept))
    return items


class ProvidersController(Controller):
    path = "/v1"
    tags = ["catalog"]

    @get(
        "/providers", sync_to_thread=False, summary="Loaded providers", operation_id="listProviders"
    )
    def providers(self, suanli: SuanliDep) -> list[ProviderInfo]:
        """Every provider plugin: what loaded, its regions, catalog size and date, live
        price status; failed and excluded plugins are listed with the reason."""
        snapshot = suanli.catalog.snapshot
        infos: dict[str, ProviderInfo] = {}
        for catalog in snapshot.providers:
            cov = coverage(catalog)
            infos[catalog.name] = ProviderInfo(
                name=catalog.name,
                display_name=catalog.display_name,
                currency=catalog.currency,
                regions=list(catalog.regions),
                instance_types=cov.rows,
                priced_instance_types=cov.priced,
                as_of=catalog.as_of,
                prices_as_of=catalog.prices_as_of,
                prices_oldest=catalog.prices_oldest,
                accelerated_instance_types=cov.accelerated,
                accelerated_with_regions=cov.accelerated_with_regions,
                estimated_instance_types=cov.estimated,
                unknown_price_instance_types=cov.unknown,
                incomplete_instance_types=[
                    IncompleteRow(instance_type=name, missing=list(missing))
                    for name, missing in cov.incomplete
                ],
                regions_source=catalog.regions_source,
                spot_rules=catalog.spot_rules,
                status="loaded",
                live_prices=suanli.live_price_info(catalog.name),
            )
        for status in snapshot.statuses:
            if status.status != "ok":
                infos[status.name] = _absent(status.name, "failed", status.error)
        for plugin in suanli.plugin_report:
            if plugin.status != "loaded" and plugin.name not in infos:
                infos[plugin.name] = _absent(plugin.name, plugin.status, plugin.error)
        return [infos[name] for name in sorted(infos)]

    @get(
        "/providers/{name:str}/instance-types",
        sync_to_thread=False,
        summary="A provider's instance types, filtered and paged",
        operation_id="listInstanceTypes",
        raises=[NotFoundException, ValidationException],
    )
    def instance_types(
        self,
        request: Request[Any, Any, Any],
        suanli: SuanliDep,
        name: Annotated[
            str,
            PathParameter(
                max_length=64,
                description="Provider name, as listed by GET /v1/providers.",
                examples=_example("alibaba"),
            ),
        ],
        accelerator: Annotated[
            str | None,
            QueryParameter(
                max_length=64,
                description="Name or family, e.g. A100, 910B",
                examples=_example("A100"),
            ),
        ] = None,
        # schema_extra repeats the zero bounds: litestar drops falsy bounds (ge=0, gt=0)
        # of optional parameters from the OpenAPI document.
        min_accelerator_memory_gib: Annotated[
            float | None,
            QueryParameter(
                ge=0,
                le=4096,
                schema_extra={"minimum": 0},
                description="Memory of each accelerator at least this many GiB.",
                examples=_example(40),
            ),
        ] = None,
        min_accelerators: Annotated[
            int | None,
            QueryParameter(
                ge=0,
                le=1024,
                schema_extra={"minimum": 0},
                description="At least this many accelerators per instance.",
                examples=_example(1),
            ),
        ] = None,
        region: Annotated[
            str | None,
            QueryParameter(
                max_length=64,
                description="Sold in this region (a region id, e.g. cn-beijing).",
                examples=_example("cn-beijing"),
            ),
        ] = None,
        max_price: Annotated[
            float | None,
            QueryParameter(
                gt=0,
                le=1_000_000,
                description="Only prices of at most this many CNY per hour: on-demand and spot "
                "per hour; a monthly price (the month / 730 h, what an hour costs only when "
                "the whole month is used) only with billing=monthly.",
                schema_extra={"exclusiveMinimum": 0},
                examples=_example(60),
            ),
        ] = None,
        billing: Annotated[
            Billing | None,
            QueryParameter(
                description="Only prices of this billing.", examples=_example("on_demand")
            ),
        ] = None,
        cpu_only: Annotated[
            bool | None,
            QueryParameter(
                description="true: only types without accelerators; false: only with.",
                examples=_example(False),
            ),
        ] = None,
        limit: Annotated[
            int, QueryParameter(ge=1, le=500, description="Page size.", examples=_example(20))
        ] = 50,
        offset: Annotated[
            int,
            QueryParameter(
                ge=0, le=1_000_000, description="Items to skip (paging).", examples=_example(0)
            ),
        ] = 0,
    ) -> InstanceTypePage:
        """Instance types with their prices. Filters combine with AND; a type whose
        regions are unknown never matches a ``region`` filter unless a price names it.
        Unknown parameters and region names are a 400 with the closest valid ones."""
        _strict_query(request.query_params.multi_items())
        snapshot = suanli.catalog.snapshot
        resolved = resolve_provider(name, (p.name for p in snapshot.providers), fold=False)
        catalog = snapshot.provider(resolved) if resolved is not None else None
        if catalog is None:
            known = [p.name for p in snapshot.providers]
            zh = error_lang(None, request.headers.get("accept-language")) == "zh"
            raise NotFoundException(
                detail=f"未知云厂商 {name!r}；已加载：{'、'.join(known)}"
                if zh
                else f"unknown provider {name!r}; known providers: {', '.join(known)}",
                extra={"known": known},
            )
        if region is not None and region not in (regions := offer_index(snapshot).regions):
            raise unknown_region(region, regions)
        accelerators = None
        if accelerator is not None:
            matches = suanli.accelerators.named(accelerator, "accelerator", "query")
            accelerators = frozenset(spec.name for spec in matches)
        flt = InstanceTypeFilter(
            accelerators=accelerators,
            min_accelerator_memory_gib=min_accelerator_memory_gib,
            min_accelerators=min_accelerators,
            region=region,
            max_price=max_price,
            billing=billing,
            cpu_only=cpu_only,
        )
        items = filter_instance_types(catalog, flt)
        return InstanceTypePage(
            items=items[offset : offset + limit], total=len(items), limit=limit, offset=offset
        )

    @get(
        "/accelerators",
        sync_to_thread=False,
        summary="Accelerator registry",
        operation_id="listAccelerators",
    )
    def accelerators(self, suanli: SuanliDep) -> list[AcceleratorSpec]:
        """Every GPU/NPU the catalogs use, with dense throughput figures and sources."""
        return sorted(suanli.accelerators.all(), key=lambda s: (s.vendor, s.name))


_INSTANCE_TYPE_QUERY = (
    "accelerator",
    "min_accelerator_memory_gib",
    "min_accelerators",
    "region",
    "max_price",
    "billing",
    "cpu_only",
    "limit",
    "offset",
)
"""The query parameters of ``instance_types`` (litestar would silently ignore others)."""


def _strict_query(pairs: Iterable[tuple[str, object]]) -> None:
    """A 400 for a parameter the route does not know (``?acelerator=A100`` listed every
    type) or gives twice (litestar kept one of them): nothing a user sent is ignored, as
    on ``/v1/offers`` (:func:`service.api.query.parse_query`)."""
    seen: set[str] = set()
    for name, _ in pairs:
        if name not in _INSTANCE_TYPE_QUERY:
            raise unknown_parameter(name, _INSTANCE_TYPE_QUERY)
        if name in seen:
            raise given_twice(name)
        seen.add(name)


def _example(value: object) -> list[Example]:
    """The one example of a parameter (it feeds the contract and schemathesis)."""
    return [Example(summary="example", value=value)]


def _absent(name: str, status: str, error: str | None) -> ProviderInfo:
    return ProviderInfo(
        name=name,
        display_name=None,
        currency=None,
        regions=[],
        instance_types=0,
        priced_instance_types=0,
        as_of=None,
        prices_as_of=None,
        status=status,
        error=error,
    )
