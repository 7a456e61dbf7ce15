"""The request and response structs of ``GET /v1/offers`` (pinned field names).

Every field is described with ``msgspec.Meta(description=...)``: the same struct is the
query parser's type (:mod:`service.api.query`), the OpenAPI parameters and response
schema, the CLI's ``--json`` and the MCP tool's structured answer.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from service.catalog.models import AcceleratorRef, Billing, PriceSource, Rdma
from service.planning.schema import CatalogRef

SortKey = Literal["price", "price_per_accelerator", "memory", "total_memory"]
GroupKey = Literal["accelerator", "provider", "region"]

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
MAX_LIMIT = 500


def hourly_within(
    per_hour: float | None, billing: str | None, max_price: float, monthly_asked: bool
) -> bool:
    """Whether a price passes a ``max_price`` per hour, like for like (review 3, R18k): a
    subscription's month / 730 h is what an hour costs only when every hour of the month
    is used, so it is compared with an hourly cap only when monthly billing is asked for
    (``GT4.4XLARGE96`` is ¥28.64 per hour on demand, not the ¥18.83 of its month)."""
    if per_hour is None or per_hour > max_price:
        return False
    return billing != "monthly" or monthly_asked


class OfferQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Filters (combined with AND), sort, grouping and paging of ``GET /v1/offers``."""

    accelerator: Annotated[
        list[Name],
        msgspec.Meta(
            examples=[["A100"]],
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
                ge=1,
                le=1024,
                examples=[1],
                description="At least this many accelerators per instance.",
            ),
        ]
        | None
    ) = None
    max_accelerators: (
        Annotated[
            int,
            msgspec.Meta(
                ge=0,
                le=1024,
                examples=[8],
                description="At most this many accelerators per instance; `0` lists "
                "CPU-only instance types only (as for a preprocessing job; `include_cpu` "
                "implied).",
            ),
        ]
        | None
    ) = None
    min_accelerator_memory_gib: (
        Annotated[
            float,
            msgspec.Meta(
                ge=0,
                le=4096,
                examples=[40],
                description="At least this much memory per accelerator, in GiB.",
            ),
        ]
        | None
    ) = None
    provider: Annotated[
        list[Name],
        msgspec.Meta(
            examples=[["tencent"]],
            max_length=16,
            description="Provider names from GET /v1/providers or the names people use "
            "(repeatable), e.g. `alibaba`, `aliyun`, `阿里云`, `火山引擎`.",
        ),
    ] = msgspec.field(default_factory=list)
    region: Annotated[
        list[Name],
        msgspec.Meta(
            examples=[["ap-beijing"]],
            max_length=64,
            description="Region ids (repeatable), e.g. `cn-beijing`, `ap-shanghai`. An offer "
            "whose region is unknown never matches.",
        ),
    ] = msgspec.field(default_factory=list)
    billing: Annotated[
        list[Billing],
        msgspec.Meta(
            examples=[["on_demand"]],
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
                examples=[100],
                description="At most this many CNY per hour for the instance, compared with "
                "what an hour costs: on-demand and spot prices per hour; a monthly price is "
                "the month / 730 h only when the whole month is used, so monthly offers count "
                "(at that rate) only when `billing=monthly` is asked. Unpriced offers never "
                "match.",
            ),
        ]
        | None
    ) = None
    min_vcpus: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=100_000, examples=[8], description="At least this many vCPUs."),
        ]
        | None
    ) = None
    min_memory_gib: (
        Annotated[
            float,
            msgspec.Meta(
                ge=0, le=1_000_000, examples=[32], description="At least this much host RAM, GiB."
            ),
        ]
        | None
    ) = None
    include_cpu: Annotated[
        bool,
        msgspec.Meta(
            examples=[False],
            description="Also list CPU-only instance types (default: accelerator offers only).",
        ),
    ] = False
    fold_regions: Annotated[
        bool,
        msgspec.Meta(
            examples=[True],
            description="One offer per instance type, billing and price, listing in "
            "`regions` every region where that same price holds (`sky show-gpus` style); "
            "default: one offer per region.",
        ),
    ] = False
    priced_only: Annotated[
        bool, msgspec.Meta(examples=[True], description="Leave out offers whose price is unknown.")
    ] = False
    sort: Annotated[
        SortKey,
        msgspec.Meta(
            examples=["price"],
            description="`price` (CNY per hour, cheapest first), `price_per_accelerator` "
            "(per accelerator-hour, cheapest first), `memory` (memory per accelerator, "
            "largest first) or `total_memory` (accelerator memory of the instance, largest "
            "first). Unknown prices always come last.",
        ),
    ] = "price"
    group_by: Annotated[
        list[GroupKey],
        msgspec.Meta(
            examples=[["provider"]],
            max_length=3,
            description="Also summarise the matching offers per `accelerator`, `provider` "
            "and/or `region` (repeatable): counts, price ranges and the cheapest offer.",
        ),
    ] = msgspec.field(default_factory=list)
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_LIMIT, examples=[20], description="Offers per page (1-500).")
    ] = 50
    offset: Annotated[
        int, msgspec.Meta(ge=0, le=1_000_000, examples=[0], description="Offers to skip (paging).")
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
    regions: Annotated[
        list[str],
        msgspec.Meta(
            description="With `fold_regions`: every region of this same offer (type, "
            "billing, price), `region` first; otherwise just `region` (empty if unknown)."
        ),
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
    estimated: Annotated[
        int,
        msgspec.Meta(description="Of the priced, how many prices are estimates, not quotes."),
    ]
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
        list[str],
        msgspec.Meta(
            description="Providers that failed to load, and asked accelerators no loaded "
            "catalog lists, in words."
        ),
    ]
