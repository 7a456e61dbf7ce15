"""Request and response structs of ``POST /v1/recommend`` (pinned field names).

Bounds live in the types (msgspec ``Meta``) so that the OpenAPI contract, the validator
and schemathesis agree on what a valid request is.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from service.catalog.models import AcceleratorRef, Billing, PriceSource
from service.sizing.results import EstimateResponse
from service.sizing.workload import Workload

Objective = Literal["cost", "time", "balanced"]
Lang = Literal["zh", "en"]

TOP_K_MAX = 50
"""The most options one answer may ask for (the planner indexes that many per bucket)."""

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class Constraints(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the answer must respect. Every field is optional."""

    providers: Annotated[
        Annotated[list[Name], msgspec.Meta(min_length=1, max_length=16)] | None,
        msgspec.Meta(
            description="Only these clouds (names from GET /v1/providers, e.g. `alibaba`, "
            "`tencent`); default: every loaded provider."
        ),
    ] = None
    regions: Annotated[
        Annotated[list[Name], msgspec.Meta(min_length=1, max_length=64)] | None,
        msgspec.Meta(
            description="Only offers sold in these regions (region ids, e.g. `cn-beijing`, "
            "`ap-shanghai`); default: any region."
        ),
    ] = None
    accelerators: (
        Annotated[
            list[Name],
            msgspec.Meta(
                min_length=1, max_length=32, description="Names or families: A100, 910B, NVIDIA A10"
            ),
        ]
        | None
    ) = None
    billing: (
        Annotated[
            list[Billing],
            msgspec.Meta(
                min_length=1,
                max_length=3,
                description="Default: on_demand and monthly, plus spot when interruptible",
            ),
        ]
        | None
    ) = None
    interruptible: Annotated[
        bool | None,
        msgspec.Meta(
            description="May the job run on spot (preemptible) capacity? Default: true for "
            "training (it checkpoints), false for inference and preprocessing."
        ),
    ] = None
    cuda_required: Annotated[
        bool,
        msgspec.Meta(
            description="Only NVIDIA (CUDA) accelerators: excludes Ascend NPUs (CANN) when the "
            "code depends on CUDA kernels."
        ),
    ] = False
    max_price_per_hour: Annotated[
        Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None,
        msgspec.Meta(
            description="Highest acceptable price in CNY per hour for the whole option (all nodes"
            " together)."
        ),
    ] = None
    budget: Annotated[
        Annotated[float, msgspec.Meta(gt=0, le=1e12)] | None,
        msgspec.Meta(description="Highest acceptable total cost of the job in CNY."),
    ] = None
    deadline_hours: Annotated[
        Annotated[float, msgspec.Meta(gt=0, le=87_600)] | None,
        msgspec.Meta(description="The job must finish within this many wall-clock hours."),
    ] = None
    max_nodes: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=512)] | None,
        msgspec.Meta(
            description="Most servers one option may use (multi-node training needs RDMA). "
            "Not given: 16, or with a deadline as many as it needs up to 64."
        ),
    ] = None
    min_headroom_pct: Annotated[
        float,
        msgspec.Meta(
            ge=0,
            le=90,
            description="Accelerator memory that must stay free, in percent of each device's "
            "memory, as a margin against fragmentation and spikes.",
        ),
    ] = 10.0
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
    """``POST /v1/recommend`` body: the workload, the constraints, how to rank and in which
    language."""

    workload: Annotated[
        Workload,
        msgspec.Meta(
            description="The job to size: pre-training, fine-tuning, inference or preprocessing "
            "(`kind` selects which)."
        ),
    ]
    constraints: Annotated[
        Constraints,
        msgspec.Meta(
            description="What every option must respect (clouds, regions, accelerators, billing, "
            "price, budget, deadline); all optional."
        ),
    ] = msgspec.field(default_factory=Constraints)
    objective: Annotated[
        Objective,
        msgspec.Meta(
            description="How options are ranked: `cost` (lowest total cost), `time` (shortest "
            "job) or `balanced`: the options costing within the estimate's own spread of the "
            "cheapest (about 30 % for training, 28 % for inference: costs that close cannot be "
            "told apart) first, fastest first, then the others by cost. The cost weighed is the "
            "job's total; per training token for training without `tokens`; per output token "
            "for open-ended serving, where the fastest is the highest throughput (per hour when "
            "sized to `target_tokens_per_s`). Unpriced options rank last."
        ),
    ] = "cost"
    top_k: Annotated[
        int,
        msgspec.Meta(ge=1, le=TOP_K_MAX, description="How many options to return, best first."),
    ] = 5
    lang: Annotated[
        Lang | None,
        msgspec.Meta(
            description="Language of reasons, warnings, advice and summary: `zh` or `en`. "
            "Default: the first of them in the Accept-Language header, then `zh`."
        ),
    ] = None


class Option(msgspec.Struct, frozen=True, kw_only=True):
    """One ranked option: what to rent (type, count, billing, region), its price with source
    and date, the estimated time and cost, and why."""

    rank: Annotated[
        int, msgspec.Meta(description="Position in the answer, 1 = best for the objective.")
    ]
    provider: Annotated[
        str, msgspec.Meta(description="Cloud provider name (as in GET /v1/providers).")
    ]
    region: Annotated[
        str | None,
        msgspec.Meta(
            description="Region id the price applies to; `null` when the price applies wherever "
            "the type is sold."
        ),
    ]
    regions: Annotated[
        list[str],
        msgspec.Meta(
            description="Every region this same offer (type and price) is known in; empty when no"
            " source says where it is sold."
        ),
    ]
    instance_type: Annotated[
        str,
        msgspec.Meta(
            description="The cloud's exact instance type name, as its console and API spell it."
        ),
    ]
    family: Annotated[
        str, msgspec.Meta(description="Instance family the type belongs to, e.g. `gn7i`.")
    ]
    accelerator: Annotated[
        AcceleratorRef | None,
        msgspec.Meta(
            description="The accelerators of one server (name, count, memory each); `null` for a "
            "CPU-only server."
        ),
    ]
    nodes: Annotated[
        int,
        msgspec.Meta(
            description="Servers this option uses (1 unless the job needs more memory or speed "
            "than one server has)."
        ),
    ]
    vcpus: Annotated[int, msgspec.Meta(description="vCPUs of one server.")]
    memory_gib: Annotated[float, msgspec.Meta(description="RAM of one server in GiB.")]
    rdma: Annotated[
        str | None,
        msgspec.Meta(
            description="High-speed interconnect between servers (`rdma`, `erdma`, `none`); "
            "`null` when the catalog does not say."
        ),
    ]
    billing: Annotated[
        Billing,
        msgspec.Meta(
            description="How the price is charged: `on_demand` (per hour), `monthly` (a month, "
            "shown per hour) or `spot` (preemptible)."
        ),
    ]
    price_per_hour: Annotated[
        float | None,
        msgspec.Meta(
            description="CNY per hour for all `nodes` together; `null` = price unknown (such "
            "options are never ranked as cheap)."
        ),
    ]
    price_source: Annotated[
        PriceSource | None,
        msgspec.Meta(
            description="Where the price comes from: `live` (the cloud's price API), `override` "
            "(the operator's file), `snapshot` (a published list-price snapshot) or "
            "`estimated`; `null` when unpriced."
        ),
    ]
    price_as_of: Annotated[
        str | None,
        msgspec.Meta(description="Date (or month) the price was valid on; `null` when unpriced."),
    ]
    price_source_ref: Annotated[
        str | None,
        msgspec.Meta(
            description="Exact provenance of the price (repository path at a commit, or "
            "URL) for audits; the reasons name the source in words."
        ),
    ] = None
    price_estimated: Annotated[
        bool,
        msgspec.Meta(
            description="True when the price is an estimate, not a quote by the cloud (the "
            "reasons say what it is based on)."
        ),
    ]
    currency: Annotated[
        str, msgspec.Meta(description="Currency of every amount of this option (CNY).")
    ]
    hours: Annotated[
        float | None,
        msgspec.Meta(
            description="Estimated wall-clock hours of the job on this option; `null` when it "
            "cannot be estimated (e.g. serving without `output_tokens`)."
        ),
    ]
    total_cost: Annotated[
        float | None,
        msgspec.Meta(
            description="Estimated total cost in CNY (`price_per_hour` x `hours`, or the months a"
            " monthly price needs); `null` when price or hours are unknown."
        ),
    ]
    per_device_gib: Annotated[
        float | None,
        msgspec.Meta(description="Accelerator memory the job needs on each device, in GiB."),
    ]
    headroom_gib: Annotated[
        float | None,
        msgspec.Meta(description="Accelerator memory left free on each device, in GiB."),
    ]
    zero_stage: Annotated[
        int | None,
        msgspec.Meta(
            description="DeepSpeed ZeRO stage the estimate assumes (training); `null` for "
            "inference and CPU jobs."
        ),
    ]
    tensor_parallel: Annotated[
        int | None,
        msgspec.Meta(
            description="Tensor-parallel degree the estimate assumes (inference); `null` when not"
            " used."
        ),
    ]
    throughput_tokens_per_s: Annotated[
        float | None,
        msgspec.Meta(
            description="Estimated decode throughput of this option in tokens per second "
            "(inference); for an encoder-only model, tokens encoded per second."
        ),
    ] = None
    price_per_million_tokens: Annotated[
        float | None,
        msgspec.Meta(
            description="Cost in CNY of generating one million tokens at that throughput "
            "(inference)."
        ),
    ] = None
    break_even_hours: Annotated[
        float | None,
        msgspec.Meta(
            description="Monthly billing: job length in hours above which the month costs less "
            "than on-demand."
        ),
    ] = None
    pareto: Annotated[
        bool,
        msgspec.Meta(
            description="True when no other option of the answer is both cheaper and faster (on "
            "the cost-time Pareto front)."
        ),
    ]
    confidence: Annotated[
        str,
        msgspec.Meta(
            description="How well the catalog row is sourced: `high` (the cloud's own "
            "documentation), `medium` or `low`."
        ),
    ]
    reasons: Annotated[
        list[str],
        msgspec.Meta(
            description="Why this option, in sentences in the answer's language (fit, cost, time,"
            " price source)."
        ),
    ]
    warnings: Annotated[
        list[str],
        msgspec.Meta(
            description="What to check before renting it (stale or estimated price, spot "
            "interruptions, unknown specs), in the answer's language."
        ),
    ]
    price_low_per_hour: Annotated[
        float | None,
        msgspec.Meta(
            description="Estimated prices: low end of the estimate's range, CNY per hour for all "
            "nodes; `null` for quoted or unknown prices."
        ),
    ] = None
    price_high_per_hour: Annotated[
        float | None,
        msgspec.Meta(
            description="Estimated prices: high end of the range, CNY per hour for all nodes "
            "(ranking counts the estimate at this value); `null` otherwise."
        ),
    ] = None


class Advice(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of practical advice for the job, in the answer's language."""

    topic: Annotated[
        str,
        msgspec.Meta(
            description="What the advice is about (a stable key such as `spot`, `storage`, "
            "`multi_node`, `ascend`), for clients that group or filter it."
        ),
    ]
    text: Annotated[
        str, msgspec.Meta(description="The advice, as a sentence in the answer's language.")
    ]


class CatalogRef(msgspec.Struct, frozen=True, kw_only=True):
    """A provider catalog an answer was computed from, with its dates."""

    provider: Annotated[str, msgspec.Meta(description="Provider name.")]
    as_of: Annotated[
        str,
        msgspec.Meta(
            description="Date of the provider's catalog snapshot (instance types and specs)."
        ),
    ]
    prices_as_of: Annotated[
        str | None,
        msgspec.Meta(
            description="Date of the newest prices used for this provider; `null` when it has none."
        ),
    ] = None
    prices_oldest: Annotated[
        str | None,
        msgspec.Meta(
            description="Date of the oldest confirmed price of this provider; `null` when none."
        ),
    ] = None


class RelaxHint(msgspec.Struct, frozen=True, kw_only=True):
    """``did you mean``: the nearest option if one constraint were relaxed."""

    constraint: Annotated[
        str,
        msgspec.Meta(
            description="The constraint that, relaxed, would let options through (e.g. "
            "`max_price_per_hour`, `accelerators`), or the workload field whose change "
            "would (`method`: QLoRA instead of LoRA, or LoRA/QLoRA instead of a full "
            "fine-tune; `max_accelerators` for a training job: also how many accelerators "
            "it needs at the fewest; `chunked_loss`: Liger's fused loss "
            "in the same trainer; `framework`: a chunked-loss trainer, or "
            "for RLHF a trainer with colocated vLLM rollouts; `global_batch_size`: a "
            "short fine-tune or DPO run at the recipes' batch of 128, wider than the "
            "short-run batch that made it miss the deadline; "
            "serving: `precision` for lower-precision weights, `target_tokens_per_s` or "
            "`concurrency` for less load, `max_nodes` for more servers)."
        ),
    ]
    removed: Annotated[
        int, msgspec.Meta(description="How many candidates this constraint removed.")
    ]
    nearest: Annotated[
        str | None,
        msgspec.Meta(
            description="The nearest option if this constraint were relaxed, as a sentence; "
            "`null` when there is none."
        ),
    ] = None


class RecommendResponse(msgspec.Struct, frozen=True, kw_only=True):
    """``POST /v1/recommend`` answer: ranked options, the summary sentence, advice and the
    catalogs used."""

    options: Annotated[
        list[Option],
        msgspec.Meta(
            description="The ranked options, best first; empty when nothing fits the constraints "
            "(`warnings` and `relax` then say why)."
        ),
    ]
    estimate: Annotated[
        EstimateResponse | None,
        msgspec.Meta(
            description="The /v1/estimate answer for the top option's placement (memory, compute,"
            " time, host); `null` when there is no option."
        ),
    ]
    advice: Annotated[
        list[Advice],
        msgspec.Meta(
            description="Practical advice for this job (spot, storage, monitoring, multi-node, "
            "...), in the answer's language."
        ),
    ]
    summary: Annotated[
        str,
        msgspec.Meta(
            description="One sentence to show or say first: what to rent, where, for how long and"
            " at what cost."
        ),
    ]
    catalogs: Annotated[
        list[CatalogRef],
        msgspec.Meta(
            description="The provider catalogs the answer was computed from, with their dates."
        ),
    ]
    warnings: Annotated[
        list[str],
        msgspec.Meta(
            description="Warnings about the answer as a whole (e.g. nothing fits, prices "
            "unknown), in the answer's language."
        ),
    ]
    objective: Annotated[Objective, msgspec.Meta(description="The ranking objective used.")]
    lang: Annotated[Lang, msgspec.Meta(description="The language of every text in the answer.")]
    considered: Annotated[
        int,
        msgspec.Meta(
            description="Offers (instance type x region x billing) considered before the "
            "constraints were applied."
        ),
    ]
    relax: Annotated[
        list[RelaxHint],
        msgspec.Meta(
            description="When nothing fits: per constraint that removed candidates and whose "
            "lifting leaves an option, how many it removed and the nearest option without it."
        ),
    ] = msgspec.field(default_factory=list)
