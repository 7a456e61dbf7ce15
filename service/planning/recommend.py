"""``recommend``: workload + constraints + catalog → ranked, explained options.

Pure: the same request on the same catalog snapshot gives the same answer (no clock, no
I/O), which is what makes answers cacheable by (request, catalog fingerprint).

Pipeline: resolve the workload (sizing) → resolve constraint names (provider aliases in
both languages, accelerator families, regions the providers declare) → filter offers,
counting what each constraint removed → candidate placements that fit memory on devices
that can run the job's precision (:mod:`service.catalog.capabilities`), with exactly the asked
accelerator count when there is one, and time and cost per billing mode (no
subscription for a job of unknown length) → budget/deadline → rank by objective (unknown
prices after known ones, :mod:`service.planning.unpriced`), mark the Pareto front, fold
regions → options with reasons, advice, summary. When nothing is left, each constraint
that removed something is lifted in turn to find the nearest option ("did you mean").
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.aggregate import CatalogSnapshot, OfferBucket
from service.catalog.capabilities import hardware_notes
from service.catalog.models import Billing
from service.catalog.names import localized_name, region_suggestions, resolve_provider
from service.planning import texts
from service.planning.advice import AdviceContext, build_advice
from service.planning.candidates import Candidate
from service.planning.cost import CHECKPOINT_INTERVAL_H
from service.planning.filters import USER_CONSTRAINTS, OfferFilter, relaxed
from service.planning.indexes import known_regions_of, monthly_prices, single_node
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
from service.runtime.errors import InputError
from service.sizing import (
    EstimateResponse,
    HostRequirements,
    ResolvedWorkload,
    estimate_resolved,
    host_for,
    resolve_workload,
)
from service.sizing.presets import ModelRegistry
from service.sizing.workload import (
    Finetune,
    Inference,
    Placement,
    Preprocess,
    Pretrain,
    Workload,
    validate_workload,
)


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
        no_fit = _explain(plan.removed, req, lang)
        warnings.append(("" if lang == "zh" else " ").join(no_fit))
        warnings.extend(_hint_text(h, lang) for h in hints if h.nearest)
    length_unknown = _length_unknown(req.workload)
    monthly = monthly_prices(ctx.snapshot.buckets, ctx.memo) if length_unknown and top else {}
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
            hardware=_hardware(ctx, c, builder.wl.precision, serving),
            monthly_per_month=monthly.get((c.offer.provider, c.offer.instance.instance_type)),
        )
        for i, c in enumerate(top)
    ]
    first = top[0] if top else None
    alternative = None
    if first is not None and not first.priced:
        alternative = _cheapest_priced(plan) or _cheapest_by_cost(flt, builder, req, ctx)
    estimate = _estimate_for(first, rw, req, ctx)
    host = estimate.host if estimate is not None else host_for(rw, 1)
    return RecommendResponse(
        options=options,
        estimate=estimate,
        advice=build_advice(_advice_context(rw, req, top, interruptible, host), lang),
        summary=texts.summary(
            lang,
            _display_name(ctx, first.offer.provider, lang) if first else "",
            first,
            _accel_text(first),
            builder.wl.open_ended,
            no_fit,
            alternative=_describe(alternative, ctx, lang) if alternative else None,
        ),
        catalogs=[
            CatalogRef(
                provider=p.name,
                as_of=p.as_of,
                prices_as_of=p.prices_as_of,
                prices_oldest=p.prices_oldest,
            )
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
        chosen: set[str] = set()
        for i, name in enumerate(c.providers):
            provider = resolve_provider(name, known_providers)
            if provider is None:
                raise InputError(
                    f"constraints.providers[{i}]",
                    f"unknown provider {name!r}",
                    sorted(known_providers),
                )
            chosen.add(provider)
        providers = frozenset(chosen)
    regions = None
    if c.regions is not None:
        known_regions = known_regions_of(ctx.snapshot, ctx.memo)
        for i, region in enumerate(c.regions):
            if region not in known_regions:
                raise InputError(
                    f"constraints.regions[{i}]",
                    f"unknown region {region!r}: no loaded provider sells in it",
                    region_suggestions(region, known_regions),
                )
        regions = frozenset(c.regions)
    cpu_only = isinstance(req.workload, Preprocess)
    for field in ("accelerator_count", "max_accelerators"):
        if cpu_only and getattr(c, field) is not None:
            raise InputError(
                f"constraints.{field}",
                f"{field} applies to accelerator jobs; preprocessing runs on CPUs only",
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
        )
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
    flt = OfferFilter(
        cpu_only=cpu_only,
        providers=providers,
        regions=regions,
        accelerators=accelerators,
        excluded_accelerators=excluded,
        billing=billing,
        max_price_per_hour=c.max_price_per_hour,
        min_vcpus=c.min_vcpus,
        min_memory_gib=c.min_memory_gib,
        accelerator_count=c.accelerator_count,
        max_accelerators=c.max_accelerators,
    )
    if c.accelerator_count is not None:
        flt = dataclasses.replace(
            flt, single_node=single_node(ctx.snapshot.buckets, flt, c.accelerator_count, ctx.memo)
        )
    return flt


def _length_unknown(workload: Workload) -> bool:
    """A training job without a token count: its length (and so its bill) is unknown."""
    return isinstance(workload, Pretrain | Finetune) and workload.tokens is None


def _billing(req: RecommendRequest, interruptible: bool) -> frozenset[Billing]:
    asked = req.constraints.billing
    if asked is None:
        # A job of unknown length is never put on a subscription by default: a month is a
        # commitment of thousands of yuan for a job that may take hours. Open-ended
        # serving may rank monthly (its options say it is a commitment).
        default: set[Billing] = {"on_demand"}
        if not _length_unknown(req.workload):
            default.add("monthly")
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
        accelerator_count=c.accelerator_count,
        max_accelerators=c.max_accelerators,
        precision=getattr(req.workload, "precision", "bf16"),
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
    for constraint in (*USER_CONSTRAINTS, *_SIZE_CONSTRAINTS, "budget", "deadline_hours"):
        if not removed.get(constraint):
            continue
        relaxed_filter = flt
        relaxed_builder = builder
        if constraint in USER_CONSTRAINTS:
            relaxed_filter = relaxed(flt, constraint)
        elif constraint in _SIZE_CONSTRAINTS:  # placements change too: a builder without it
            relaxed_filter = relaxed(flt, constraint)
            wl = (
                dataclasses.replace(builder.wl, accelerator_count=None)
                if constraint == "accelerator_count"
                else dataclasses.replace(builder.wl, max_accelerators=None)
            )
            relaxed_builder = VariantBuilder(wl, ctx.accelerators, ctx.memo, builder.signature)
        plan = _plan(ctx.snapshot.buckets, relaxed_filter, relaxed_builder, req, relax=constraint)
        best = select(plan, 1)
        nearest = _describe(best[0], ctx, lang) if best else None
        hints.append(RelaxHint(constraint=constraint, removed=removed[constraint], nearest=nearest))
    return hints


_SIZE_CONSTRAINTS = ("accelerator_count", "max_accelerators")
"""Constraints the placements depend on (lifting them needs another variant builder)."""


def _describe(c: Candidate, ctx: PlanContext, lang: Lang) -> str:
    o = c.offer
    nodes = f"{c.nodes}×" if c.nodes > 1 else ""
    unit = "/小时" if lang == "zh" else "/h"
    estimated = c.offer.price is not None and c.offer.price.estimated
    price = (
        ("价格未知" if lang == "zh" else "price unknown")
        if c.price_per_hour is None
        else (
            f"约 ¥{c.price_per_hour:,.2f}{unit}（估算）"
            if lang == "zh"
            else f"about ¥{c.price_per_hour:,.2f}{unit} (estimated)"
        )
        if estimated
        else f"¥{c.price_per_hour:,.2f}{unit}"
    )
    name = _display_name(ctx, o.provider, lang)
    what = f"{nodes}{o.instance.instance_type}"
    head = (
        f"{name} {what}（{_accel_text(c)}）"
        if lang == "zh"
        else f"{what} on {name} ({_accel_text(c)})"
    )
    parts = [head, price]
    if c.hours is not None:
        parts.append(f"{c.hours:.1f} 小时" if lang == "zh" else f"{c.hours:.1f} h")
    if c.total_cost is not None:
        parts.append(f"¥{c.total_cost:,.2f}")
    return ("，" if lang == "zh" else ", ").join(parts)


def _explain(removed: Counter[str], req: RecommendRequest, lang: Lang) -> list[str]:
    """One sentence per constraint that removed offers (largest first), after a first
    sentence that says nothing is left; the job's kind (GPU vs CPU rows) is not a
    constraint and is not listed."""
    c = req.constraints
    values = {
        "n_acc": c.accelerator_count,
        "max_acc": c.max_accelerators,
        "vcpus": c.min_vcpus,
        "ram": c.min_memory_gib,
        "precision": str(getattr(req.workload, "precision", "")).upper(),
        "nodes": c.max_nodes,
    }
    sentences = [texts.t("no_option", lang)]
    for key, count in removed.most_common():
        if key == "workload" or not count:
            continue
        sentences.append(texts.removed_sentence(key, count, lang, values))
    return sentences


def _hint_text(hint: RelaxHint, lang: Lang) -> str:
    return texts.t(
        "relax_hint", lang, what=texts.constraint_name(hint.constraint, lang), best=hint.nearest
    )


def _display_name(ctx: PlanContext, provider: str, lang: Lang) -> str:
    catalog = ctx.snapshot.provider(provider)
    return localized_name(catalog.display_name, lang) if catalog else provider


def _hardware(ctx: PlanContext, c: Candidate, precision: str, serving: bool) -> tuple[str, ...]:
    """Sentence keys for what the option's device changes about the job (capabilities)."""
    name = c.offer.instance.accelerator
    return _hardware_notes(ctx.accelerators, name, precision, serving) if name else ()


@functools.lru_cache(maxsize=1024)
def _hardware_notes(
    registry: AcceleratorRegistry, name: str, precision: str, serving: bool
) -> tuple[str, ...]:
    spec = registry.resolve(name)
    if spec is None:
        return ()
    notes = hardware_notes(spec, precision, serving)
    if serving and not spec.mem_bandwidth_gbps:
        notes = (*notes, "no_bandwidth")
    return notes


def _cheapest_by_cost(
    flt: OfferFilter, builder: VariantBuilder, req: RecommendRequest, ctx: PlanContext
) -> Candidate | None:
    """The cheapest priced candidate when the answer's walk saw none (ranked by time, the
    fastest can all be unpriced): one bounded cost ranking of one candidate."""
    cheapest = msgspec.structs.replace(req, objective="cost", top_k=1)
    best = select(_plan(ctx.snapshot.buckets, flt, builder, cheapest), 1)
    return best[0] if best and best[0].priced else None


def _cheapest_priced(plan: Plan) -> Candidate | None:
    """The cheapest priced candidate the plan holds (job total, else hourly price)."""
    best: tuple[float, float] | None = None
    chosen = None
    for offer, v, per_hour, total, hours, regions in plan.entries:
        if per_hour is None:
            continue
        key = (0.0, total) if total is not None else (1.0, per_hour)
        if best is None or key < best:
            best, chosen = key, (offer, v, per_hour, total, hours, regions)
    if chosen is None:
        return None
    offer, v, per_hour, total, hours, regions = chosen
    candidate = Candidate(offer, v.nodes, v.devices, v.fit, hours, per_hour, total)
    candidate.regions = list(regions)
    return candidate


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
