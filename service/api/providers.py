"""``/v1/providers``, ``/v1/providers/{name}/instance-types`` and ``/v1/accelerators``."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.exceptions import NotFoundException, ValidationException
from litestar.params import PathParameter, QueryParameter

from service.catalog import ProviderCatalog
from service.errors import InputError
from service.live_prices import LivePriceState
from service.names import resolve_provider
from service.providers import (
    AcceleratorRef,
    AcceleratorSpec,
    Billing,
    InstanceType,
    Price,
    PriceSource,
    Rdma,
)
from service.state import SuanliDep

LivePriceInfo = LivePriceState
"""Per provider: live prices on, why not, their age, stale flag and last refresh error."""


class ProviderInfo(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    display_name: str | None
    currency: str | None
    regions: list[str]
    instance_types: int
    priced_instance_types: int
    as_of: str | None
    """Date of the catalog snapshot."""
    prices_as_of: str | None
    status: str
    """``loaded``, ``failed`` (plugin import or provider call failed) or ``excluded``
    (not in ``SUANLI_PLUGINS``)."""
    error: str | None = None
    live_prices: LivePriceInfo | None = None


class PriceItem(msgspec.Struct, frozen=True, kw_only=True):
    region: str
    billing: Billing
    price_per_hour: float | None
    price_per_month: float | None
    currency: str
    price_source: PriceSource
    estimated: bool
    source: str
    as_of: str


class InstanceTypeItem(msgspec.Struct, frozen=True, kw_only=True):
    instance_type: str
    family: str
    accelerator: AcceleratorRef | None
    vcpus: int | None
    memory_gib: float | None
    network_gbps: float | None
    rdma: Rdma | None
    local_nvme: str | None
    regions: list[str]
    source: str
    as_of: str
    confidence: str
    notes: str | None
    prices: list[PriceItem]


class InstanceTypePage(msgspec.Struct, frozen=True, kw_only=True):
    items: list[InstanceTypeItem]
    total: int
    limit: int
    offset: int


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
            return price.price_per_hour is not None and price.price_per_hour <= self.max_price
        return True


def filter_instance_types(
    catalog: ProviderCatalog, flt: InstanceTypeFilter
) -> list[InstanceTypeItem]:
    by_type: dict[str, list[Price]] = {}
    for price in catalog.prices:
        by_type.setdefault(price.instance_type, []).append(price)
    items = []
    for row in catalog.instance_types:
        kept = flt.keep(row, by_type.get(row.instance_type, []))
        if kept is not None:
            items.append(_item(row, kept))
    return items


class ProvidersController(Controller):
    path = "/v1"
    tags = ["catalog"]

    @get("/providers", sync_to_thread=False, summary="Loaded providers")
    def providers(self, suanli: SuanliDep) -> list[ProviderInfo]:
        """Every provider plugin: what loaded, its regions, catalog size and date, live
        price status; failed and excluded plugins are listed with the reason."""
        snapshot = suanli.catalog.snapshot
        infos: dict[str, ProviderInfo] = {}
        for catalog in snapshot.providers:
            priced = {p.instance_type for p in catalog.prices if p.price_per_hour}
            infos[catalog.name] = ProviderInfo(
                name=catalog.name,
                display_name=catalog.display_name,
                currency=catalog.currency,
                regions=list(catalog.regions),
                instance_types=len(catalog.instance_types),
                priced_instance_types=len(priced),
                as_of=catalog.as_of,
                prices_as_of=catalog.prices_as_of,
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
        raises=[NotFoundException, ValidationException],
    )
    def instance_types(
        self,
        suanli: SuanliDep,
        name: Annotated[str, PathParameter(max_length=64)],
        accelerator: Annotated[
            str | None, QueryParameter(max_length=64, description="Name or family, e.g. A100, 910B")
        ] = None,
        # schema_extra repeats the zero bounds: litestar drops falsy bounds (ge=0, gt=0)
        # of optional parameters from the OpenAPI document.
        min_accelerator_memory_gib: Annotated[
            float | None, QueryParameter(ge=0, le=4096, schema_extra={"minimum": 0})
        ] = None,
        min_accelerators: Annotated[
            int | None, QueryParameter(ge=0, le=1024, schema_extra={"minimum": 0})
        ] = None,
        region: Annotated[str | None, QueryParameter(max_length=64)] = None,
        max_price: Annotated[
            float | None,
            QueryParameter(
                gt=0, le=1_000_000, description="CNY per hour", schema_extra={"exclusiveMinimum": 0}
            ),
        ] = None,
        billing: Annotated[Billing | None, QueryParameter()] = None,
        cpu_only: Annotated[bool | None, QueryParameter()] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
        offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
    ) -> InstanceTypePage:
        """Instance types with their prices. Filters combine with AND; a type whose
        regions are unknown never matches a ``region`` filter unless a price names it."""
        snapshot = suanli.catalog.snapshot
        resolved = resolve_provider(name, (p.name for p in snapshot.providers), fold=False)
        catalog = snapshot.provider(resolved) if resolved is not None else None
        if catalog is None:
            known = [p.name for p in snapshot.providers]
            raise NotFoundException(
                detail=f"unknown provider {name!r}; known providers: {', '.join(known)}",
                extra={"known": known},
            )
        accelerators = None
        if accelerator is not None:
            matches = suanli.accelerators.matching(accelerator)
            if not matches:
                raise InputError(
                    "accelerator",
                    f"unknown accelerator {accelerator!r}",
                    suanli.accelerators.suggest(accelerator),
                    source="query",
                )
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

    @get("/accelerators", sync_to_thread=False, summary="Accelerator registry")
    def accelerators(self, suanli: SuanliDep) -> list[AcceleratorSpec]:
        """Every GPU/NPU the catalogs use, with dense throughput figures and sources."""
        return sorted(suanli.accelerators.all(), key=lambda s: (s.vendor, s.name))


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
