"""Stage 1, resolve: the request in the planner's terms.

The workload resolved by the sizing engine (shared through the cache by requests for the
same job at other lengths), the names in the constraints resolved (provider aliases in
both languages, accelerator families, regions the providers declare) into an
:class:`~service.planning.filters.OfferFilter`, and what placements depend on
(:class:`Job`). Unknown or contradictory input is refused here, naming the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from service.catalog.models import Billing
from service.catalog.names import asked_region_ids, region_suggestions, resolve_provider
from service.planning.context import PlanContext
from service.planning.filters import OfferFilter
from service.planning.indexes import known_regions_of, single_node
from service.planning.memo import PlanCache, memory_signature
from service.planning.schema import RecommendRequest
from service.runtime.errors import InputError
from service.sizing import ResolvedWorkload, resolve_workload
from service.sizing.batch import batch_ceiling, batches
from service.sizing.compute import untimed_reason
from service.sizing.copying import copier
from service.sizing.host import loader_vcpus_per_device
from service.sizing.workload import (
    Inference,
    Preprocess,
    Workload,
    validate_workload,
)


@dataclass(frozen=True, slots=True)
class Job:
    """What placing and timing the job needs to know about the request."""

    rw: ResolvedWorkload
    serving: bool
    cpu_only: bool
    max_nodes: int
    scale_out: bool
    target_tokens_per_s: float | None
    headroom_frac: float
    output_tokens: float | None = None
    """Inference with a known amount of output (a batch job): rank by the job's total."""
    accelerator_count: int | None = None
    """Exactly this many accelerators in total (``constraints.accelerator_count``)."""
    max_accelerators: int | None = None
    precision: str = "bf16"
    """The job's weights/compute format, checked against each device's capabilities."""
    engine: str | None = None
    """Serving: the engine asked for (default vLLM), checked against each device's
    generation; ``None`` for training and preprocessing, and for serving an image model
    (a plain PyTorch pipeline, which runs on every CUDA generation tabulated)."""
    framework: str | None = None
    """Training: the framework asked for, checked against each device's stack (MindSpeed
    runs on Ascend NPUs only); ``None`` for serving and preprocessing."""
    batch_ceiling: int | None = None
    """Serving to a throughput target, or a batch job, without a concurrency: each server
    is batched (:mod:`service.sizing.batch`) up to this many sequences; ``None`` = as
    asked."""
    span_servers: bool = False
    """Serving: replicas may span several servers (tensor parallel within one, pipeline
    stages across). Set only when no server the filters pass holds the model
    (:func:`~service.planning.recommend.recommend`): a model one server holds is never
    split."""

    def at_length(self, rw: ResolvedWorkload, output_tokens: float | None) -> Job:
        """This job for another length of the same request (``rw``: its resolution at
        that length): what :func:`job_of` would build for it, since no other field
        depends on the length fields (whether each is given and non-zero, which decides
        ``batch_ceiling``, is the same for a class of answers,
        :func:`~service.planning.memo.answer_signature`). Copied field by field, as
        :meth:`~service.sizing.resolve.ResolvedWorkload._copy` is: half the cost of
        building it again, once per answer."""
        return _job_at(self, rw, output_tokens)

    @property
    def open_ended(self) -> bool:
        """Serving with no job length: ranked by price per token, then per hour."""
        return self.serving and not self.output_tokens

    @property
    def to_target(self) -> bool:
        """Open-ended serving sized to a throughput target: every option already serves
        the target, so what differs is the capacity rented — ranked by the hour, price
        per token only as tie-break (capacity beyond the target is not traffic)."""
        return self.open_ended and bool(self.target_tokens_per_s)

    @property
    def checkpoint_scheme(self) -> str | None:
        """How the named quantized checkpoint stores its weights (``AWQ``, ``GPTQ int4``),
        checked against each device's kernels; ``None`` when no checkpoint was named."""
        checkpoint = self.rw.checkpoint
        return None if checkpoint is None else checkpoint[1]


_job_at = copier(Job, ("rw", "output_tokens"))
"""What :meth:`Job.at_length` builds: every field shared but the two it sets."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """Stage 1's hand-off: the request, its resolved job and filter."""

    request: RecommendRequest
    job: Job
    flt: OfferFilter
    interruptible: bool
    signature: bytes
    """The workload's memory signature (:func:`memory_signature`): what placements and
    lanes are memoized under."""

    @property
    def rw(self) -> ResolvedWorkload:
        return self.job.rw

    def at_length(self, request: RecommendRequest, job: Job) -> Resolved:
        """This hand-off for ``request``, a request of the same class at another length,
        and its ``job`` (:meth:`Job.at_length`): the filter, interruptibility and
        signature shared, copied as :meth:`Job.at_length` is (a frozen dataclass's
        ``__init__`` sets each field through ``object.__setattr__``; once per answer)."""
        return _resolved_at(self, request, job)


_resolved_at = copier(Resolved, ("request", "job"))
"""What :meth:`Resolved.at_length` builds: every field shared but the two it sets."""


def resolve(req: RecommendRequest, ctx: PlanContext, cache: PlanCache) -> Resolved:
    signature = memory_signature(req.workload)
    rw = resolve_job(req.workload, ctx, cache, signature)
    interruptible = is_interruptible(req)
    loader = loader_vcpus_per_device(rw)  # an image model's JPEG pipeline sets the host
    flt = build_filter(
        req,
        ctx,
        cache,
        interruptible,
        None if loader is None else loader[0],
        unknown_length=length_unknown(rw),
    )
    return Resolved(req, job_of(rw, req), flt, interruptible, signature)


def resolve_job(
    workload: Workload, ctx: PlanContext, cache: PlanCache, signature: bytes
) -> ResolvedWorkload:
    """The resolved workload, shared through the cache by requests for the same job at
    other lengths (validated every time: the rules also cover the length fields).

    One resolved for this very ``workload`` is returned as it is: :func:`resolve_workload`
    validated it, and its length fields are this request's (its ``workload`` may still
    be another object: a default filled in, such as an image model's micro-batch)."""
    built: list[ResolvedWorkload] = []

    def build() -> ResolvedWorkload:
        built.append(resolve_workload(workload, ctx.models))
        return built[0]

    resolved = cache.shared(("resolved", ctx.models, signature), build)
    if not built and resolved.workload is not workload:  # resolved for another request
        validate_workload(workload)
        resolved = resolved.with_length(workload)
    return resolved


def is_interruptible(req: RecommendRequest) -> bool:
    if req.constraints.interruptible is not None:
        return req.constraints.interruptible
    return not isinstance(req.workload, Inference | Preprocess)


def _region_refused(region: str, i: int, why: str, known_regions: frozenset[str]) -> InputError:
    """The 400 for ``constraints.regions[i]`` when it asks for no loaded region
    (``why``: :func:`~service.catalog.names.asked_region_ids`): an unknown id, a city whose
    ids mean other cities on other clouds, or a city no loaded cloud has a region in
    (review 8 K3: ``上海`` was a 400 saying no provider sells there)."""
    suggestions = region_suggestions(region, known_regions)
    field = f"constraints.regions[{i}]"
    if why == "ambiguous":
        return InputError(
            field,
            f"{region!r} is a city, and some of its region ids name other cities on other "
            "clouds: give the region id of the cloud you mean",
            suggestions,
            zh=f"{region!r} 是城市名，且它的部分地域 ID 在其他云上指另一座城市："
            "请写所选云的地域 ID",
        )
    if why == "absent":
        return InputError(
            field,
            f"{region!r} is a city in which no loaded provider has a region",
            suggestions,
            zh=f"{region!r} 是城市名，已加载的云厂商在该城市都没有地域",
        )
    return InputError(
        field,
        f"unknown region {region!r}: no loaded provider sells in it",
        suggestions,
        zh=f"未知地域 {region!r}：已加载的云厂商都不在该地域销售（请用地域 ID）",
    )


def build_filter(
    req: RecommendRequest,
    ctx: PlanContext,
    cache: PlanCache,
    interruptible: bool,
    loader_vcpus: int | None = None,
    *,
    unknown_length: bool = False,
) -> OfferFilter:
    """Resolve names in the constraints; reject unknown or contradictory ones
    (``loader_vcpus``: the job's own floor of host vCPUs per accelerator;
    ``unknown_length``: the job's hours are unknown on every device,
    :func:`length_unknown`, so its default billing leaves subscriptions out)."""
    c = req.constraints
    known_providers = {p.name for p in ctx.snapshot.providers}
    providers = None
    if c.providers is not None:
        chosen: set[str] = set()
        for i, name in enumerate(c.providers):
            provider = resolve_provider(name, known_providers)
            if provider is None:
                raise InputError(
                    f"constraints.providers[{i}]",
                    f"unknown provider {name!r}",
                    sorted(known_providers),
                    zh=f"未知云厂商 {name!r}",
                )
            chosen.add(provider)
        providers = frozenset(chosen)
    regions = None
    if c.regions is not None:
        known_regions = known_regions_of(ctx.snapshot, cache)
        asked: set[str] = set()
        for i, region in enumerate(c.regions):
            found = asked_region_ids(region, known_regions)
            if isinstance(found, str):
                raise _region_refused(region, i, found, known_regions)
            asked.update(found)
        regions = frozenset(asked)
    cpu_only = isinstance(req.workload, Preprocess)
    for field in ("accelerator_count", "max_accelerators"):
        if cpu_only and getattr(c, field) is not None:
            raise InputError(
                f"constraints.{field}",
                f"{field} applies to accelerator jobs; preprocessing runs on CPUs only",
                zh=f"{field} 只适用于使用加速卡的任务；数据预处理只在 CPU 上运行",
            )
    if (
        c.accelerator_count is not None
        and c.max_accelerators is not None
        and c.accelerator_count > c.max_accelerators
    ):
        raise InputError(
            "constraints.accelerator_count",
            f"accelerator_count ({c.accelerator_count}) exceeds max_accelerators "
            f"({c.max_accelerators})",
            zh=f"accelerator_count（{c.accelerator_count}）超过了 max_accelerators"
            f"（{c.max_accelerators}）",
        )
    accelerators = None
    if c.accelerators is not None:
        names: set[str] = set()
        for i, query in enumerate(c.accelerators):
            matches = ctx.accelerators.named(query, f"constraints.accelerators[{i}]")
            names.update(spec.name for spec in matches)
        accelerators = frozenset(names)
    excluded = frozenset(
        s.name for s in ctx.accelerators.all() if c.cuda_required and s.stack != "cuda"
    )
    if accelerators and excluded and accelerators <= excluded:
        raise InputError(
            "constraints.cuda_required",
            "cuda_required excludes every accelerator named in constraints.accelerators "
            "(Ascend NPUs run CANN, not CUDA)",
            status_code=422,
            zh="cuda_required 排除了 constraints.accelerators 中的所有加速卡"
            "（昇腾 NPU 使用 CANN，而不是 CUDA）",
        )
    billing = _billing(req, interruptible, unknown_length)
    flt = OfferFilter(
        cpu_only=cpu_only,
        providers=providers,
        regions=regions,
        accelerators=accelerators,
        excluded_accelerators=excluded,
        billing=billing,
        billing_asked=frozenset(c.billing) if c.billing is not None else None,
        max_price_per_hour=c.max_price_per_hour,
        min_vcpus=c.min_vcpus,
        min_memory_gib=c.min_memory_gib,
        accelerator_count=c.accelerator_count,
        max_accelerators=c.max_accelerators,
        training=not isinstance(req.workload, Inference | Preprocess),
        loader_vcpus=loader_vcpus,
    )
    if c.accelerator_count is not None:
        flt = dataclasses.replace(
            flt, single_node=single_node(ctx.snapshot.buckets, flt, c.accelerator_count, cache)
        )
    return flt


def length_unknown(rw: ResolvedWorkload) -> bool:
    """A training job (pre-training, fine-tuning, RLHF) whose hours are unknown on every
    device: no token count given, or no compute figure known for the model (review 4 F4:
    an sd-1.5 fine-tune with tokens, or DPO without them, went on a subscription). Its
    length, and so its bill, is unknown."""
    return untimed_reason(rw) is not None


def _billing(
    req: RecommendRequest, interruptible: bool, unknown_length: bool
) -> frozenset[Billing]:
    asked = req.constraints.billing
    if asked is None:
        # A job of unknown length is never put on a subscription by default: a month is a
        # commitment of thousands of yuan for a job that may take hours. Open-ended
        # serving may rank monthly (its options say it is a commitment). Where only some
        # devices cannot time the job, the pricer leaves their subscriptions out.
        default: set[Billing] = {"on_demand"}
        if not unknown_length:
            default.add("monthly")
        if interruptible:
            default.add("spot")
        return frozenset(default)
    if "spot" in asked and not interruptible:
        if set(asked) == {"spot"}:
            raise _spot_only_refused(req)
        return frozenset(b for b in asked if b != "spot")
    return frozenset(asked)


def _spot_only_refused(req: RecommendRequest) -> InputError:
    """The 422 for spot as the only billing of a job that cannot be interrupted, in a
    user's words (review 11s V7: it named ``constraints.interruptible=false``): a spot
    server can be reclaimed at any time, which a serving job meets as dropped requests and
    a job marked not interruptible as lost work."""
    if req.constraints.interruptible is False:
        return InputError(
            "constraints.billing",
            "spot was the only billing asked for, but the job is marked not interruptible, "
            "and a spot server can be reclaimed at any time: allow on-demand or monthly "
            "billing too, or mark the job interruptible if it checkpoints and can resume",
            status_code=422,
            zh="只要求了竞价（spot）计费，但该任务被标为不可中断，而竞价实例随时可能被回收："
            "请同时允许按量或包月计费；若任务会保存检查点、可以续跑，可把它标为可中断",
        )
    return InputError(
        "constraints.billing",
        "spot was the only billing asked for, but a spot server can be reclaimed at any "
        "time, and serving (or preprocessing, unless marked interruptible) is not planned "
        "on servers that can vanish mid-request: allow on-demand billing too (spot replicas "
        "behind an on-demand base are a deployment choice), or mark an offline job "
        "interruptible if it can stop and resume",
        status_code=422,
        zh="只要求了竞价（spot）计费，但竞价实例随时可能被回收，推理服务（以及未标为可中断的"
        "预处理）不会规划在可能中途消失的机器上：请同时允许按量计费（在按量副本之外加竞价副本"
        "属于部署时的选择）；离线任务若能停下后续跑，可把它标为可中断",
    )


DEFAULT_MAX_NODES = 16
"""Most servers an option may use when the request does not say (``max_nodes``)."""
DEADLINE_MAX_NODES = 64
"""Most servers a deadline may call for when the request does not say: 64 servers of
8 GPUs (512 devices). Up to a few hundred GPUs the planner's one network figure per
server (:class:`~service.sizing.compute.Cluster`: data-parallel traffic over each node's
RDMA bandwidth) is a fair first estimate; past that the fabric's topology (spine layers,
rail-optimised networks) decides, and such clusters are reserved under contract rather
than rented from a catalog. A larger ``max_nodes`` (up to the schema's 512) is honoured."""


def node_limit(req: RecommendRequest) -> int:
    """The most servers one option may use: ``max_nodes`` when given; otherwise 16, or
    as many as a deadline may need up to :data:`DEADLINE_MAX_NODES` (review 4 F3: a
    1T-token pre-train under 720 h needs about 32 servers of 8 A100s)."""
    c = req.constraints
    if c.max_nodes is not None:
        return c.max_nodes
    return DEADLINE_MAX_NODES if c.deadline_hours is not None else DEFAULT_MAX_NODES


def job_of(rw: ResolvedWorkload, req: RecommendRequest) -> Job:
    c = req.constraints
    return Job(
        rw=rw,
        serving=isinstance(req.workload, Inference),
        cpu_only=isinstance(req.workload, Preprocess),
        max_nodes=node_limit(req),
        scale_out=req.objective != "cost" or c.deadline_hours is not None,
        target_tokens_per_s=getattr(req.workload, "target_tokens_per_s", None),
        headroom_frac=c.min_headroom_pct / 100,
        output_tokens=getattr(req.workload, "output_tokens", None),
        accelerator_count=c.accelerator_count,
        max_accelerators=c.max_accelerators,
        precision=getattr(req.workload, "precision", "bf16"),
        # an image model is served by a PyTorch pipeline (diffusers, torchvision/timm),
        # under no text engine: no vLLM release, fraction or caveat applies (review 10 S7c)
        engine=(
            req.workload.serving_engine
            if isinstance(req.workload, Inference) and not rw.image_model
            else None
        ),
        framework=(
            None
            if isinstance(req.workload, (Inference, Preprocess))
            else getattr(req.workload, "framework", None)
        ),
        batch_ceiling=(
            batch_ceiling(req.workload)
            if isinstance(req.workload, Inference)
            and batches(req.workload)
            and not rw.image_model  # images/s do not grow with a KV-cache batch
            else None
        ),
    )
