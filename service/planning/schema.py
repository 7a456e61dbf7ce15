"""Request and response structs of ``POST /v1/recommend`` (pinned field names).

Bounds live in the types (msgspec ``Meta``) so that the OpenAPI contract, the validator
and schemathesis agree on what a valid request is.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from service.providers import AcceleratorRef, Billing, PriceSource
from service.sizing.results import EstimateResponse
from service.sizing.workload import Workload

Objective = Literal["cost", "time", "balanced"]
Lang = Literal["zh", "en"]

TOP_K_MAX = 50
"""The most options one answer may ask for (the planner indexes that many per bucket)."""

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class Constraints(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the answer must respect. Every field is optional."""

    providers: Annotated[list[Name], msgspec.Meta(max_length=16)] | None = None
    regions: Annotated[list[Name], msgspec.Meta(max_length=64)] | None = None
    accelerators: (
        Annotated[
            list[Name],
            msgspec.Meta(max_length=32, description="Names or families: A100, 910B, NVIDIA A10"),
        ]
        | None
    ) = None
    billing: (
        Annotated[
            list[Billing],
            msgspec.Meta(
                max_length=3,
                description="Default: on_demand and monthly, plus spot when interruptible",
            ),
        ]
        | None
    ) = None
    interruptible: bool | None = None
    """Default: true for training (checkpoints), false for inference and preprocessing."""
    cuda_required: bool = False
    max_price_per_hour: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None = None
    budget: Annotated[float, msgspec.Meta(gt=0, le=1e12, description="Total CNY")] | None = None
    deadline_hours: Annotated[float, msgspec.Meta(gt=0, le=87_600)] | None = None
    max_nodes: Annotated[int, msgspec.Meta(ge=1, le=512)] = 16
    min_headroom_pct: Annotated[float, msgspec.Meta(ge=0, le=90)] = 10.0
    accelerator_count: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=4096,
                description="Exactly this many accelerators in total, across all nodes "
                '("8 GPUs" = 8). One node when a type holds that many; split over nodes '
                "(RDMA only) when it does not. Training picks the ZeRO stage that fits.",
            ),
        ]
        | None
    ) = None
    max_accelerators: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=4096, description="At most this many accelerators in total."),
        ]
        | None
    ) = None
    min_vcpus: (
        Annotated[
            int,
            msgspec.Meta(ge=1, le=100_000, description="At least this many vCPUs per node."),
        ]
        | None
    ) = None
    min_memory_gib: (
        Annotated[
            float,
            msgspec.Meta(
                gt=0, le=1_000_000, description="At least this much host RAM (GiB) per node."
            ),
        ]
        | None
    ) = None


class RecommendRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    workload: Workload
    constraints: Constraints = msgspec.field(default_factory=Constraints)
    objective: Objective = "cost"
    top_k: Annotated[int, msgspec.Meta(ge=1, le=TOP_K_MAX)] = 5
    lang: Lang | None = None
    """Default from ``Accept-Language``, then ``zh``."""


class Option(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    provider: str
    region: str | None
    """Region id; ``null`` when the price applies wherever the type is sold."""
    regions: list[str]
    """Every region this same offer (type, price) is known in; empty = not published."""
    instance_type: str
    family: str
    accelerator: AcceleratorRef | None
    nodes: int
    vcpus: int
    memory_gib: float
    rdma: str | None
    billing: Billing
    price_per_hour: float | None
    """CNY per hour for all ``nodes`` together; ``null`` = price unknown (never ranked as
    cheap)."""
    price_source: PriceSource | None
    price_as_of: str | None
    price_source_ref: Annotated[
        str | None,
        msgspec.Meta(
            description="Exact provenance of the price (repository path at a commit, or "
            "URL) for audits; the reasons name the source in words."
        ),
    ] = None
    price_estimated: bool
    currency: str
    hours: float | None
    total_cost: float | None
    per_device_gib: float | None
    headroom_gib: float | None
    zero_stage: int | None
    tensor_parallel: int | None
    throughput_tokens_per_s: float | None = None
    price_per_million_tokens: float | None = None
    break_even_hours: float | None = None
    """Monthly billing: job length above which a month costs less than on-demand."""
    pareto: bool
    confidence: str
    reasons: list[str]
    warnings: list[str]


class Advice(msgspec.Struct, frozen=True, kw_only=True):
    topic: str
    text: str


class CatalogRef(msgspec.Struct, frozen=True, kw_only=True):
    provider: str
    as_of: str
    prices_as_of: str | None = None


class RelaxHint(msgspec.Struct, frozen=True, kw_only=True):
    """``did you mean``: the nearest option if one constraint were relaxed."""

    constraint: str
    removed: int
    """Candidates this constraint removed."""
    nearest: str | None = None


class RecommendResponse(msgspec.Struct, frozen=True, kw_only=True):
    options: list[Option]
    estimate: EstimateResponse | None
    """The ``/v1/estimate`` body for the top option's placement."""
    advice: list[Advice]
    summary: str
    catalogs: list[CatalogRef]
    warnings: list[str]
    objective: Objective
    lang: Lang
    considered: int
    """Offers considered before constraints."""
    relax: list[RelaxHint] = msgspec.field(default_factory=list)
