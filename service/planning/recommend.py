"""``recommend``: workload + constraints + catalog → ranked, explained options.

Pure: the same request on the same catalog snapshot gives the same answer (no clock, no
I/O), which is what makes answers cacheable by (request, catalog fingerprint).

Pipeline: resolve the workload (sizing) → resolve constraint names (registry) → filter
offers, counting what each constraint removed → candidate placements that fit memory,
with time and cost per billing mode → budget/deadline → rank by objective, mark the
Pareto front, fold regions → options with reasons, advice, summary. When nothing is left,
each constraint that removed something is lifted in turn to find the nearest option
("did you mean").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from service.accelerators import AcceleratorRegistry
from service.catalog import CatalogSnapshot, OfferBucket
from service.errors import InputError
from service.planning import texts
from service.planning.advice import AdviceContext, build_advice
from service.planning.candidates import Candidate
from service.planning.cost import CHECKPOINT_INTERVAL_H
from service.planning.filters import USER_CONSTRAINTS, OfferFilter, relaxed
from service.planning.options import build_option
from service.planning.plan import Plan, make_plan, select
from service.planning.schema import (
    CatalogRef,
    Lang,
    RecommendRequest,
    RecommendResponse,
    RelaxHint,
)
from service.planning.variants import PlacementMemo, VariantBuilder, memory_signature
from service.planning.variants import Workload as PlanWorkload
from service.providers import Billing
from service.sizing import (
    EstimateResponse,
    HostRequirements,
    ResolvedWorkload,
    estimate_resolved,
    host_for,
    resolve_workload,
)
from service.sizing.presets import ModelRegistry
from service.sizing.workload import Inference, Placement, Preprocess, Workload, validate_workload


@dataclass(frozen=True, slots=True)
class PlanContext:
    snapshot: CatalogSnapshot
    accelerators: AcceleratorRegistry
    models: ModelRegistry
    stale_live: frozenset[str] = frozenset()
    memo: PlacementMemo | None = None
    """Placements shared across requests (see :class:`PlacementMemo`); ``None`` = none."""
    """Providers whose live prices are past their TTL (served, marked stale)."""

    @property
    def fingerprint(self) -> str:
        """What the answer depends on besides the request (the cache key's other half)."""
        if not self.stale_live:
            return self.snapshot.fingerprint
        return f"{self.snapshot.fingerprint}:stale={','.join(sorted(self.stale_live))}"


def recommend(req: RecommendRequest, ctx: PlanContext, lang: Lang) -> RecommendResponse:
    signature = memory_signature(req.workload)
    rw = _resolve(req.workload, ctx, signature)
    interruptible = _interruptible(req)
    flt = build_filter(req, ctx, interruptible)
    builder = VariantBuilder(_plan_workload(rw, req), ctx.accelerators, ctx.memo, signature)
    plan = _plan(ctx.snapshot.buckets, flt, builder, req)
    serving = isinstance(req.workload, Inference)
    top = select(plan, req.top_k)
    if not top:  # explain: count what each constraint removed, offer by offer
        plan = _plan(ctx.snapshot.buckets, flt, builder, req, count_removed=True)
    warnings = list(ctx.snapshot.warnings)
    hints: list[RelaxHint] = []
    no_fit = None
    if not top:
        hints = relax_hints(flt, plan.removed, builder, req, ctx, lang)
        no_fit = _explain(plan.removed, lang)
        warnings.append(no_fit)
        warnings.extend(_hint_text(h, lang) for h in hints if h.nearest)
    options = [
        build_option(
            i + 1,
            c,
            req.objective,
            serving,
            builder.wl.open_ended,
            cann=_runs_cann(ctx, c),
            live_stale=c.offer.provider in ctx.stale_live,
            lang=lang,
            need=builder.need,
        )
        for i, c in enumerate(top)
    ]
    first = top[0] if top else None
    estimate = _estimate_for(first, rw, req, ctx)
    host = estimate.host if estimate is not None else host_for(rw, 1)
    return RecommendResponse(
        options=options,
        estimate=estimate,
        advice=build_advice(_advice_context(rw, req, top, interruptible, host), lang),
        summary=texts.summary(
            lang,
            _display_name(ctx, first.offer.provider) if first else "",
            first,
            _accel_text(first),
            builder.wl.open_ended,
            no_fit,
        ),
        catalogs=[
            CatalogRef(provider=p.name, as_of=p.as_of, prices_as_of=p.prices_as_of)
            for p in ctx.snapshot.providers
        ],
        warnings=warnings,
        objective=req.objective,
        lang=lang,
        considered=len(ctx.snapshot.offers),
        relax=hints,
    )


def _resolve(workload: Workload, ctx: PlanContext, signature: bytes) -> ResolvedWorkload:
    """The resolved workload, shared through the memo by requests for the same job at
    other lengths (validated every time: the rules also cover the length fields)."""
    if ctx.memo is None:
        return resolve_workload(workload, ctx.models)
    validate_workload(workload)
    resolved = ctx.memo.shared(
        ("resolved", ctx.models, signature), lambda: resolve_workload(workload, ctx.models)
    )
    return resolved.with_length(workload)


def _interruptible(req: RecommendRequest) -> bool:
    if req.constraints.interruptible is not None:
        return req.constraints.interruptible
    return not isinstance(req.workload, Inference | Preprocess)


def build_filter(req: RecommendRequest, ctx: PlanContext, interruptible: bool) -> OfferFilter:
    """Resolve names in the constraints; reject unknown or contradictory ones."""
    c = req.constraints
    known_providers = {p.name for p in ctx.snapshot.providers}
    providers = None
    if c.providers is not None:
        for i, name in enumerate(c.providers):
            if name not in known_providers:
                raise InputError(
                    f"constraints.providers[{i}]",
                    f"unknown provider {name!r}",
                    sorted(known_providers),
                )
        providers = frozenset(c.providers)
    accelerators = None
    if c.accelerators is not None:
        names: set[str] = set()
        for i, query in enumerate(c.accelerators):
            matches = ctx.accelerators.matching(query)
            if not matches:
                raise InputError(
                    f"constraints.accelerators[{i}]",
                    f"unknown accelerator {query!r}",
                    ctx.accelerators.suggest(query),
                )
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
        )
    billing = _billing(req, interruptible)
    return OfferFilter(
        cpu_only=isinstance(req.workload, Preprocess),
        providers=providers,
        regions=frozenset(c.regions) if c.regions is not None else None,
        accelerators=accelerators,
        excluded_accelerators=excluded,
        billing=billing,
        max_price_per_hour=c.max_price_per_hour,
    )


def _billing(req: RecommendRequest, interruptible: bool) -> frozenset[Billing]:
    asked = req.constraints.billing
    if asked is None:
        default: set[Billing] = {"on_demand", "monthly"}
        if interruptible:
            default.add("spot")
        return frozenset(default)
    if "spot" in asked and not interruptible:
        if set(asked) == {"spot"}:
            raise InputError(
                "constraints.billing",
                "spot was the only billing mode asked for, but the job is not interruptible "
                "(constraints.interruptible=false or an inference/preprocess workload)",
                status_code=422,
            )
        return frozenset(b for b in asked if b != "spot")
    return frozenset(asked)


def _plan_workload(rw: ResolvedWorkload, req: RecommendRequest) -> PlanWorkload:
    c = req.constraints
    return PlanWorkload(
        rw=rw,
        serving=isinstance(req.workload, Inference),
        cpu_only=isinstance(req.workload, Preprocess),
        max_nodes=c.max_nodes,
        scale_out=req.objective != "cost" or c.deadline_hours is not None,
        target_tokens_per_s=getattr(req.workload, "target_tokens_per_s", None),
        headroom_frac=c.min_headroom_pct / 100,
        output_tokens=getattr(req.workload, "output_tokens", None),
    )


def _plan(
    buckets: Sequence[OfferBucket],
    flt: OfferFilter,
    builder: VariantBuilder,
    req: RecommendRequest,
    relax: str | None = None,
    count_removed: bool = False,
) -> Plan:
    c = req.constraints
    return make_plan(
        buckets,
        flt,
        builder,
        req.objective,
        None if relax == "budget" else c.budget,
        None if relax == "deadline_hours" else c.deadline_hours,
        req.top_k,
        count_removed,
    )


def relax_hints(
    flt: OfferFilter,
    removed: Counter[str],
    builder: VariantBuilder,
    req: RecommendRequest,
    ctx: PlanContext,
    lang: Lang,
) -> list[RelaxHint]:
    """For each constraint that removed candidates: the best option without it."""
    hints = []
    for constraint in (*USER_CONSTRAINTS, "budget", "deadline_hours"):
        if not removed.get(constraint):
            continue
        relaxed_filter = relaxed(flt, constraint) if constraint in USER_CONSTRAINTS else flt
        plan = _plan(ctx.snapshot.buckets, relaxed_filter, builder, req, relax=constraint)
        best = select(plan, 1)
        nearest = _describe(best[0], lang) if best else None
        hints.append(RelaxHint(constraint=constraint, removed=removed[constraint], nearest=nearest))
    return hints


def _describe(c: Candidate, lang: Lang) -> str:
    o = c.offer
    nodes = f"{c.nodes}×" if c.nodes > 1 else ""
    price = (
        f"¥{c.price_per_hour:,.2f}/h"
        if c.price_per_hour is not None
        else ("价格未知" if lang == "zh" else "price unknown")
    )
    parts = [f"{o.provider} {nodes}{o.instance.instance_type}", price]
    if c.hours is not None:
        parts.append(f"{c.hours:.1f} h")
    if c.total_cost is not None:
        parts.append(f"¥{c.total_cost:,.2f}")
    return ", ".join(parts)


_REMOVED_LABEL: dict[str, dict[Lang, str]] = {
    "workload": {"zh": "类型不符（GPU/CPU）", "en": "wrong kind (GPU vs CPU)"},
    "memory": {"zh": "显存不足", "en": "not enough accelerator memory"},
    "unknown_accelerator": {"zh": "加速卡规格未知", "en": "accelerator spec unknown"},
    "unknown_specs": {"zh": "规格未知", "en": "specs unknown"},
}


def _explain(removed: Counter[str], lang: Lang) -> str:
    parts = []
    for key, count in removed.most_common():
        label = _REMOVED_LABEL.get(key, {}).get(lang, key)
        parts.append(f"{label}: {count}")
    if lang == "zh":
        return "没有方案同时满足所有约束；被排除的数量 — " + "，".join(parts)
    return "No option satisfies every constraint; removed — " + ", ".join(parts)


def _hint_text(hint: RelaxHint, lang: Lang) -> str:
    if lang == "zh":
        return f"若放宽 {hint.constraint}，最接近的方案是：{hint.nearest}"
    return f"Relaxing {hint.constraint} would allow: {hint.nearest}"


def _display_name(ctx: PlanContext, provider: str) -> str:
    catalog = ctx.snapshot.provider(provider)
    return catalog.display_name if catalog else provider


def _accel_text(c: Candidate | None) -> str:
    if c is None:
        return ""
    row = c.offer.instance
    if row.accelerator is None:
        return f"{row.vcpus} vCPU / {row.memory_gib:g} GiB"
    return f"{row.accelerator_count}×{row.accelerator}"


def _runs_cann(ctx: PlanContext, c: Candidate) -> bool:
    spec = ctx.accelerators.resolve(c.offer.instance.accelerator or "")
    return spec is not None and spec.stack == "cann"


def _estimate_for(
    c: Candidate | None, rw: ResolvedWorkload, req: RecommendRequest, ctx: PlanContext
) -> EstimateResponse | None:
    if c is None:
        return None
    row = c.offer.instance
    placement = None
    if row.accelerator is not None:
        placement = Placement(
            accelerator=row.accelerator,
            count=c.devices,
            zero_stage=_zero_stage(c, req),
        )
    return estimate_resolved(rw, placement, ctx.accelerators)


def _zero_stage(c: Candidate, req: RecommendRequest) -> Literal[0, 1, 2, 3] | None:
    if c.fit is None or isinstance(req.workload, Inference):
        return None
    stage = c.fit.zero_stage
    return stage if stage in (0, 1, 2, 3) else None  # type: ignore[return-value]


def _advice_context(
    rw: ResolvedWorkload,
    req: RecommendRequest,
    top: Sequence[Candidate],
    interruptible: bool,
    host: HostRequirements,
) -> AdviceContext:
    """``host``: the estimate's, for the top option's devices (one device without one)."""
    accelerators = frozenset(c.offer.instance.accelerator or "" for c in top) - {""}
    return AdviceContext(
        kind=str(type(req.workload).__struct_config__.tag),
        params_b=rw.params_b,
        interruptible=interruptible,
        uses_spot=any(c.offer.billing == "spot" for c in top),
        multi_node=any(c.nodes > 1 for c in top) and not isinstance(req.workload, Inference),
        accelerators=accelerators,
        ascend=any(a.startswith("Ascend") for a in accelerators),
        unpriced=any(not c.priced for c in top),
        snapshot_prices=any(
            c.offer.price is not None and c.offer.price.price_source == "snapshot" for c in top
        ),
        vcpus=host.vcpus,
        ram_gib=host.ram_gib,
        disk_gib=host.disk_gib,
        checkpoint_interval_h=CHECKPOINT_INTERVAL_H,
    )
