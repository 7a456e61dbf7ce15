"""Stage 6, explain: the ranked candidates as the answer people and chatbots read.

Options with reasons and warnings (:mod:`service.planning.options`; built only for the
``top_k`` options shown), the sizing estimate of the top option, advice, the one-line
summary, and when nothing is left, one sentence per constraint that removed offers and,
for each, the nearest option without it ("did you mean", ranked again with the
constraint lifted).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from service.catalog.models import AcceleratorSpec, InstanceType
from service.catalog.names import localized_name, outside_mainland, region_city
from service.planning import texts
from service.planning.advice import AdviceContext, build_advice, storage_shown
from service.planning.candidates import Candidate
from service.planning.context import PlanContext
from service.planning.cost import CHECKPOINT_INTERVAL_H, break_even_hours
from service.planning.filters import USER_CONSTRAINTS, OfferFilter, relaxed
from service.planning.indexes import monthly_prices, on_demand_quote
from service.planning.memo import PlanCache
from service.planning.network import node_network
from service.planning.options import (
    OptionParts,
    OptionTerms,
    fill_option,
    said_in_advice,
    untimed_of,
)
from service.planning.place import (
    DEFAULT_HEADROOM,
    SPAN_LEAST_DEVICES,
    SPAN_MOST_SERVERS,
    Placer,
)
from service.planning.price import Plan
from service.planning.rank import plan_for, select
from service.planning.resolve import Resolved
from service.planning.schema import (
    Advice,
    CatalogRef,
    Lang,
    Objective,
    RecommendRequest,
    RecommendResponse,
    RelaxHint,
)
from service.planning.width import asked_global_batch
from service.runtime.errors import InputError
from service.sizing import (
    EstimateResponse,
    Fit,
    HostRequirements,
    PlacedEstimate,
    ResolvedWorkload,
    estimate_resolved,
    host_for,
    placed_estimate,
)
from service.sizing.batch import at_concurrency, batches_to_target
from service.sizing.compute import dequant_terms, untimed_reason
from service.sizing.host import loader_vcpus_per_device
from service.sizing.memory import fit_placement, limit_decides
from service.sizing.moe import moe_training_factor
from service.sizing.resolve import CNN_KINDS
from service.sizing.uncertainty import hours_range
from service.sizing.workload import Inference, Placement, Pretrain

WHERE_KEPT = 64
"""Places to buy kept per class of answers (one per provider and regions its top
options show)."""
ADVICE_PIECES = 64
"""Advice pieces kept per class of answers (a dozen topics, a few variants each)."""
ADVICE_LISTS = 32
"""Whole advice lists kept per class of answers: one per (options' accelerators, billing
and prices, host figures) its answers show, a handful at the lengths asked."""
PLACED_ESTIMATES = 32
"""Estimate parts kept per class of answers (one per placement its top options show)."""
SUMMARY_FRAMES = 32
"""Summaries but for the job's figures kept per class of answers (one per top option its
answers show at the lengths asked)."""


class AnswerParts:
    """What the answers of one class (the same request at any job length, in one
    language, over one catalog) share in this stage: their options but for the job's
    figures (:class:`~service.planning.options.OptionParts`), the providers' names, the
    catalogs cited, the estimate's length-independent parts, the advice lists
    (:meth:`advice_for`) and the top options' summaries but for the job's figures
    (:meth:`summary_frame`). Kept in the planner's cache (:meth:`PlanCache.answer_class`)."""

    __slots__ = (
        "_advice",
        "_advice_lists",
        "_class_advice",
        "_frames",
        "_names",
        "_placed",
        "_placements",
        "_shown_lists",
        "_where",
        "catalogs",
        "options",
        "terms",
    )

    def __init__(self, terms: OptionTerms, ctx: PlanContext) -> None:
        self.terms = terms
        self.options = OptionParts(terms)
        self._names: dict[str, str] = {}
        self._advice: dict[tuple[object, ...], Advice] = {}
        self._advice_lists: dict[tuple[object, ...], list[Advice]] = {}
        self._shown_lists: dict[tuple[object, ...], list[Advice]] = {}
        self._class_advice: dict[str, Any] | None = None
        self._placed: dict[Placement, PlacedEstimate] = {}
        self._placements: dict[tuple[int, int, int, int], tuple[object, object, Placement]] = {}
        self._where: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
        self._frames: dict[tuple[object, ...], tuple[object, texts.SummaryFrame | None]] = {}
        self.catalogs = [
            CatalogRef(
                provider=p.name,
                as_of=p.as_of,
                prices_as_of=p.prices_as_of,
                prices_oldest=p.prices_oldest,
            )
            for p in ctx.snapshot.providers
        ]

    def advice(self) -> dict[tuple[object, ...], Advice]:
        """Advice pieces written for the class (see :func:`build_advice`), bounded: the
        storage advice shows the job's data size, one piece per length."""
        if len(self._advice) >= ADVICE_PIECES:
            self._advice.clear()
        return self._advice

    def advice_for(
        self,
        rw: ResolvedWorkload,
        req: RecommendRequest,
        top: Sequence[Candidate],
        interruptible: bool,
        host: HostRequirements,
        ctx: PlanContext,
        asked: frozenset[str] | None = None,
        shown: Sequence[object] | None = None,
    ) -> list[Advice]:
        """The answer's advice (:func:`build_advice` of :func:`_advice_of`), kept per
        what it depends on beyond the class: the options' accelerators, billing and
        prices, and the host figures it shows (the disk only where the storage piece
        shows it: :func:`~service.planning.advice.storage_shown`; it grows with the
        job's tokens, the other figures do not). The class's own fields (kind,
        precision, engine, model) are worked out once. Why: answers of one class at other
        lengths almost always show the same list, and building its context and topics
        cost about a tenth of the explain stage (6-8 of its 67-82 us, measured warm).

        ``shown``: the options' parts (:class:`~service.planning.options.OptionPart`, one
        per (offer, fit, nodes), compared by identity) each followed by whether its option
        is unpriced, which is everything :func:`_answer_advice` reads of them; with the
        host's figures it keys the list directly, so an answer showing the options an
        earlier one showed skips reading them again (about 1 us of the stage, in a
        request). Bounded like the lists; the key holds its parts alive."""
        base = self._class_advice
        if base is None:
            base = self._class_advice = _class_advice(rw, req, interruptible, ctx)
        disk = host.disk_gib if storage_shown(base["kind"], host.disk_gib) else None
        fast = None
        if shown is not None:
            fast = (*shown, host.vcpus, host.ram_gib, disk)
            known = self._shown_lists.get(fast)
            if known is not None:
                return list(known)
        per = _answer_advice(top, bool(base["serving"]), asked)
        key = (*per.values(), host.vcpus, host.ram_gib, disk)
        found = self._advice_lists.get(key)
        if found is None:
            if len(self._advice_lists) >= ADVICE_LISTS:
                self._advice_lists.clear()
            found = self._advice_lists[key] = build_advice(
                _advice_of(base, per, host), self.terms.lang, self.advice()
            )
        if fast is not None:
            if len(self._shown_lists) >= ADVICE_LISTS:
                self._shown_lists.clear()
            self._shown_lists[fast] = found
        return list(found)  # the answer's own list: a response never shares a mutable one

    def placed(
        self, rw: ResolvedWorkload, spec: AcceleratorSpec, placement: Placement
    ) -> PlacedEstimate:
        """The length-independent part of the estimate on ``placement`` (memory fit and
        notes: the class's job at any length holds the same memory, so it is sized once per
        placement its answers show, bounded)."""
        placed = self._placed.get(placement)
        if placed is None:
            if len(self._placed) >= PLACED_ESTIMATES:
                self._placed.clear()
            placed = self._placed[placement] = placed_estimate(rw, spec, placement)
        return placed

    def placement(self, c: Candidate, rw: ResolvedWorkload, req: RecommendRequest) -> Placement:
        """:func:`_placement` of the top option ``c``, kept per (offer, fit, nodes,
        devices), bounded: it reads the offer's row, the fit's ZeRO stage and tensor
        degree, the node and device counts, and of ``rw`` and ``req`` only what the class
        fixes (training or serving, the engine's layer split). The offer and fit are held
        and compared by identity. Why: answers at other lengths mostly estimate the same
        top option, and its placement is hashed again by the estimate's memo
        (:meth:`placed`) — one built object rather than one per answer."""
        key = (id(c.offer), id(c.fit), c.nodes, c.devices)
        found = self._placements.get(key)
        if found is None or found[0] is not c.offer or found[1] is not c.fit:
            if len(self._placements) >= PLACED_ESTIMATES:
                self._placements.clear()
            found = self._placements[key] = (c.offer, c.fit, _placement(c, rw, req))
        return found[2]

    def where(self, c: Candidate | None, req: RecommendRequest) -> dict[str, Any]:
        """:func:`_where` of ``c``, kept per (provider, regions), bounded: it reads only
        those and whether the class's request names regions, and answers at other
        lengths show the same few top options (the city lookups cost about 2 us)."""
        if c is None:
            return {}
        key = (c.offer.provider, tuple(c.regions))
        found = self._where.get(key)
        if found is None:
            if len(self._where) >= WHERE_KEPT:
                self._where.clear()
            found = self._where[key] = _where(c, req, self.terms.lang)
        return found

    def summary_frame(
        self, c: Candidate, ctx: PlanContext, req: RecommendRequest
    ) -> texts.SummaryFrame | None:
        """:func:`~service.planning.texts.summary_frame` of the top option ``c``, kept per
        (offer, nodes, price per hour, regions), bounded: what it reads besides the
        class's terms (language, open-ended) and request (whether it names regions) —
        the provider's name and the cities are the offer's and regions', the accelerator
        text the offer's row and the nodes, the price sentences the offer's price and the
        option's price per hour. The offer is held and compared by identity (its id alone
        could be another's once it is gone). Why: answers of the class at other lengths
        mostly show the same top option, and its first sentence but for the hours and
        total cost about a microsecond and a half to write."""
        key = (id(c.offer), c.nodes, c.price_per_hour, tuple(c.regions))
        found = self._frames.get(key)
        if found is None or found[0] is not c.offer:
            lang = self.terms.lang
            frame = texts.summary_frame(
                lang, self.name(ctx, c.offer.provider), c, _accel_text(c, lang),
                self.terms.open_ended, **self.where(c, req),
            )  # fmt: skip
            if len(self._frames) >= SUMMARY_FRAMES:
                self._frames.clear()
            found = self._frames[key] = (c.offer, frame)
        return found[1]

    def name(self, ctx: PlanContext, provider: str) -> str:
        """The provider's name in the answer's language."""
        name = self._names.get(provider)
        if name is None:
            name = self._names[provider] = _display_name(ctx, provider, self.terms.lang)
        return name


def answer_terms(
    req: RecommendRequest, placer: Placer, ctx: PlanContext, lang: Lang
) -> OptionTerms:
    """The terms of ``req``'s class of answers (see :class:`OptionTerms`)."""
    return OptionTerms(
        objective=req.objective,
        serving=isinstance(req.workload, Inference),
        open_ended=placer.job.open_ended,
        to_target=placer.job.to_target,
        lang=lang,
        need=placer.need,
        accelerators=ctx.accelerators,
        precision=placer.job.precision,
        stale_live=ctx.stale_live,
        fixed_hours=placer.fixed_hours(),
        method=getattr(req.workload, "method", None),
        framework=None if placer.job.rw.training is None else placer.job.rw.training.framework,
        limit_said=_limit_said(placer, ctx),
        encoded_len=_encoded_len(placer.job.rw),
        images=isinstance(req.workload, Inference) and placer.job.rw.image_model,
        convolutional=placer.job.rw.arch is not None and placer.job.rw.arch.kind in CNN_KINDS,
        engine=placer.job.engine,
        sequences=_sequences(placer.job.rw),
        streams=_streams(req, placer.job.rw),
        image_batch=_image_batch(req, placer.job.rw),
        moe=bool(placer.job.rw.inference and placer.job.rw.inference.experts > 1),
        fp16_upcast=placer.job.rw.no_bf16 is not None,
        image_peak=_image_peak(placer.job.rw) if isinstance(req.workload, Inference) else None,
        untimed=untimed_reason(placer.job.rw),
        generates=bool(placer.job.rw.training and placer.job.rw.training.rollout_weight_bytes),
        batch_asked=asked_global_batch(req.workload) is not None,
        pairs=placer.job.rw.reranker,
        pretraining=isinstance(req.workload, Pretrain),
        dequant=dequant_terms(placer.job.rw),
    )


def _image_batch(req: RecommendRequest, rw: ResolvedWorkload) -> int | None:
    """:attr:`OptionTerms.image_batch`: the images per call the resolution filled in for an
    image model whose request gave no concurrency (``resolve._image_target_batch`` decides
    when; this only reads its outcome)."""
    sent, served = req.workload, rw.workload
    if not rw.image_model or not isinstance(sent, Inference) or sent.concurrency is not None:
        return None
    return served.concurrency if isinstance(served, Inference) else None


def _streams(req: RecommendRequest, rw: ResolvedWorkload) -> int | None:
    """The requests a user waits on at once (:attr:`OptionTerms.streams`): online serving
    of a text model at the concurrency the request gives, above one."""
    workload = req.workload
    if not isinstance(workload, Inference) or rw.image_model or rw.encoder:
        return None
    if workload.output_tokens is not None or (workload.concurrency or 1) <= 1:
        return None
    return workload.concurrency


def _sequences(rw: ResolvedWorkload) -> int | None:
    """The concurrency each server runs, which its copies of the model share (``None``:
    an image model, whose rate is its devices' together, or no serving)."""
    if rw.inference is None or rw.image_model:
        return None
    return rw.inference.concurrency


def _limit_said(placer: Placer, ctx: PlanContext) -> Callable[[InstanceType, Fit, int], bool]:
    """:func:`~service.sizing.memory.limit_decides` for the options of ``placer``'s job,
    on each row's accelerator (with the memory the row states) and server size, at the
    planner's headroom; once per (part, memory, devices, server size, layout)."""
    job = placer.job
    safe = job.headroom_frac > DEFAULT_HEADROOM
    seen: dict[tuple[str, float | None, int, int, int | None, int, int], bool] = {}

    def said(row: InstanceType, fit: Fit, devices: int) -> bool:
        name, memory, per_node = (
            row.accelerator or "",
            row.accelerator_memory_gib,
            row.accelerator_count,
        )
        layout = (fit.zero_stage, fit.tensor_parallel, fit.pipeline_parallel)
        key = (name, memory, devices, per_node, *layout)
        found = seen.get(key)
        if found is None:
            spec = ctx.accelerators.resolve(name)
            if spec is None:
                found = True  # unknown part: say what the framework rules out, as before
            else:
                spec = placer.fits.spec_for(spec, memory or spec.memory_gib)
                found = limit_decides(
                    job.rw, spec, fit, devices, job.headroom_frac, safe=safe, per_node=per_node
                )
            seen[key] = found
        return found

    return said


def _image_peak(rw: ResolvedWorkload) -> str | None:
    """What sets a served image model's peak (:attr:`~service.planning.options.
    OptionTerms.image_peak`); ``None`` for a text model."""
    if not rw.image_model:
        return None
    if rw.decode_peak:
        return "decode"
    return "unet" if rw.arch is not None and rw.arch.kind == "diffusion" else "forward"


def _encoded_len(rw: ResolvedWorkload) -> int | None:
    """Tokens per sequence of a served encoder (its rate is in sequences/s), else ``None``."""
    return rw.inference.context_len if rw.encoder and rw.inference is not None else None


@dataclass(slots=True)
class Ranked:
    """Stage 5's hand-off: the resolved request, its placer, the plan and the top
    candidates (the plan counts every removal when ``top`` is empty; only read)."""

    resolved: Resolved
    placer: Placer
    plan: Plan
    top: list[Candidate]


def explain(
    ranked: Ranked,
    ctx: PlanContext,
    cache: PlanCache,
    lang: Lang,
    parts: AnswerParts | None = None,
) -> RecommendResponse:
    """The answer of ``ranked`` (``parts``: what its class of answers shares, built here
    for this answer alone when not given)."""
    resolved, placer, plan, top = ranked.resolved, ranked.placer, ranked.plan, ranked.top
    req, rw, flt = resolved.request, resolved.rw, resolved.flt
    if parts is None:
        parts = AnswerParts(answer_terms(req, placer, ctx, lang), ctx)
    terms = parts.terms
    open_ended = terms.open_ended
    warnings = list(ctx.snapshot.warnings)
    if rw.checkpoint is not None:
        name, scheme = rw.checkpoint
        precision = str(getattr(req.workload, "precision", ""))
        warnings.append(texts.t("checkpoint", lang, name=name, scheme=scheme, m=rw.model_id,
                                p=precision.upper()))  # fmt: skip
    if rw.beyond_positions is not None:
        asked, trained = rw.beyond_positions
        warnings.append(texts.t("beyond_positions", lang, m=rw.model_id, n=asked, p=trained))
    hints: list[RelaxHint] = []
    no_fit = None
    if not top:
        worded = relax_hints(flt, plan.removed, placer, req, ctx, lang)
        hints = [hint for hint, _ in worded]
        need = (
            _memory_need(flt, rw, ctx, lang, placer.job.headroom_frac, _span_servers(placer))
            if plan.removed.get("memory")
            else (None, None)
        )
        no_fit = _explain(
            plan.removed, req, lang, placer.job.max_nodes, _unlisted(flt, ctx), need, open_ended
        )
        if no_fit[SUMMARY_SENTENCES:]:  # the summary says the first ones (review 6 H9)
            warnings.append(("" if lang == "zh" else " ").join(no_fit[SUMMARY_SENTENCES:]))
        warnings.extend(text for _, text in worded)
    if top and plan.hidden_spot:
        shown = any(c.shown_spot for c in top)
        warnings.append(texts.t("hidden_spot_shown" if shown else "hidden_spot", lang,
                                n=plan.hidden_spot))  # fmt: skip
    if top:
        warnings.extend(_scale_notes(top[0], placer, lang))
        warnings.extend(
            _deadline_risk(top, rw.kind, req.constraints.deadline_hours, ctx, lang, req.objective)
        )
    encoded = _encoded_len(rw)
    target = placer.job.target_tokens_per_s
    if encoded and target:
        warnings.append(
            texts.t(
                "encoder_target_pairs" if rw.reranker else "encoder_target",
                lang,
                tps=target,
                sps=target / encoded,
                n=encoded,
            )
        )
    # the class's (:func:`~service.planning.resolve.length_unknown` of its job, which
    # reads only whether the length is given and the model's compute figure)
    unknown_length = terms.untimed is not None
    monthly = monthly_prices(ctx.snapshot.buckets, cache) if unknown_length and top else {}
    option_part = parts.options.part
    options = []
    on_show: list[object] = []  # each option's part and whether it is unpriced: advice_for
    for i, c in enumerate(top):
        offer = c.offer
        if offer.billing == "monthly" and c.on_demand_per_hour is None:
            _on_demand_of(c, ctx, cache)
        month = monthly.get((offer.provider, offer.instance.instance_type)) if monthly else None
        part = option_part(c, cache, month)
        on_show.append(part)
        on_show.append(c.price_per_hour is None)
        options.append(fill_option(i + 1, c, part, terms, req.constraints.budget))
    options = said_in_advice(options, terms.serving, terms.engine, terms.images, lang)
    first = top[0] if top else None
    alternative = over_budget = None
    if first is not None and not first.priced:
        alternative = _cheapest_priced(plan) or _cheapest_by_cost(flt, placer, req, ctx)
        if alternative is None and req.constraints.budget is not None:  # review 7 J23
            cheapest = _cheapest_by_cost(flt, placer, req, ctx, relax="budget")
            if cheapest is not None:
                over_budget = texts.over_budget(
                    req.constraints.budget, _describe(cheapest, ctx, lang), lang
                )
                warnings.append(over_budget)
    estimate = _estimate_for(first, rw, req, ctx, parts)
    host = estimate.host if estimate is not None else host_for(rw, 1)
    frame = (
        parts.summary_frame(first, ctx, req)
        if first is not None and first.hours is not None and not open_ended
        else None
    )
    summary = (
        texts.framed_summary(frame, first, lang)
        if frame is not None and first is not None
        else texts.summary(
            lang,
            parts.name(ctx, first.offer.provider) if first else "",
            first,
            _accel_text(first, lang),
            open_ended,
            no_fit,
            alternative=_describe(alternative, ctx, lang) if alternative else None,
            over_budget=over_budget,
            image_model=rw.image_model,
            encoded_len=encoded,
            pairs=rw.reranker,
            # said only of an option without hours (the summary reads it nowhere else)
            untimed=(
                untimed_of(first, terms) if first is not None and first.hours is None else "unknown"
            ),
            **parts.where(first, req),
        )
    )
    return RecommendResponse(
        options=options,
        estimate=estimate,
        advice=parts.advice_for(
            rw, req, top, resolved.interruptible, host, ctx, flt.accelerators, on_show
        ),
        summary=summary,
        catalogs=list(parts.catalogs),
        warnings=warnings,
        objective=req.objective,
        lang=lang,
        considered=len(ctx.snapshot.offers),
        relax=hints,
    )


SUMMARY_SENTENCES = 2
"""An empty answer's summary: the first sentences of why nothing is left (nothing meets
every constraint, and the constraint that removed the most); the warnings say the rest
(:func:`~service.planning.texts.summary`)."""


LONG_PLAN_HOURS = 720.0
"""A month of wall-clock time: a training plan this long on demand is a subscription's
case (review 4 F13: a 1,862 h pre-train was quoted per hour without a word on it)."""


FULL_SERVER = 8
"""Accelerators of a whole GPU/NPU server: the types clouds sell in RDMA clusters (a
1-4 card slice is not one, so its single server goes without saying)."""


def _deadline_risk(
    top: Sequence[Candidate],
    kind: str,
    deadline: float | None,
    ctx: PlanContext,
    lang: Lang,
    objective: str = "cost",
) -> list[str]:
    """The top option meets the deadline at its estimate but not at the high end of the
    estimate's calibrated range (review 8 K1: 335.1 h for a 336 h deadline, up to 505 h):
    said, with the first listed option that meets it even there, or that none does. The
    range's factor is the job kind's (:func:`~service.sizing.uncertainty.hours_range`),
    the same for every option of the answer; preprocessing has no calibrated range."""
    first = top[0]
    if deadline is None or first.hours is None or kind == "preprocess":
        return []
    training = kind != "inference"
    high = hours_range(first.hours, training)[1]
    if high <= deadline:
        return []
    words = texts.t(
        "deadline_risk",
        lang,
        deadline=texts.hours_asked(deadline, lang),
        hours=texts.duration(first.hours, lang),
        high=texts.duration(high, lang),
    )
    safe = next(
        (
            c
            for c in top[1:]
            if c.hours is not None and hours_range(c.hours, training)[1] <= deadline
        ),
        None,
    )
    if safe is None:  # ranked by time already: only more servers are faster
        tail = "deadline_none_safe_time" if objective == "time" else "deadline_none_safe"
        return [words + texts.t(tail, lang)]
    assert safe.hours is not None
    return [
        words
        + texts.t(
            "deadline_safe",
            lang,
            safe=_describe(safe, ctx, lang),
            high=texts.duration(hours_range(safe.hours, training)[1], lang),
        )
    ]


def _scale_notes(c: Candidate, placer: Placer, lang: Lang) -> list[str]:
    """The top training option's limits of scale (review 4 F13): one whole server of a
    type whose catalog row does not confirm RDMA, when more servers would matter (a deadline,
    the time objective, or a plan over a month); and a plan of over a month on demand."""
    job = placer.job
    if job.serving or job.cpu_only or c.hours is None:
        return []
    notes = []
    row = c.offer.instance
    long_plan = c.hours >= LONG_PLAN_HOURS
    whole = row.accelerator_count >= FULL_SERVER  # what clusters are built of
    if c.nodes == 1 and whole and row.rdma is None and (job.scale_out or long_plan):
        notes.append(texts.t("single_server", lang, type=row.instance_type))
    if long_plan and c.offer.billing == "on_demand":
        notes.append(texts.t("long_on_demand", lang, days=c.hours / 24))
    return notes


def _where(c: Candidate | None, req: RecommendRequest, lang: Lang) -> dict[str, Any]:
    """The summary's place to buy (review 3 R18b, R2): the regions asked that the option
    is sold in, or its only region, by city; and whether that is outside mainland China."""
    if c is None or not c.regions:
        return {}
    if req.constraints.regions is None and len(c.regions) > 1:
        return {}
    provider = c.offer.provider
    shown = c.regions[:3]
    return {
        "cities": [region_city(provider, r, lang) for r in shown],
        "abroad": outside_mainland(provider, c.regions),
    }


def relax_hints(
    flt: OfferFilter,
    removed: Counter[str],
    placer: Placer,
    req: RecommendRequest,
    ctx: PlanContext,
    lang: Lang,
) -> list[tuple[RelaxHint, str]]:
    """For each constraint that removed candidates: the best option without it, and the
    sentence saying so. Lifting an accelerator limit first looks among the same or newer
    generations and the one before (:func:`_substitutes`): someone who asked for an RTX
    4090 wants BF16 and current engines, not the cheapest Volta card (review 4 F17)."""
    hints = []
    for constraint in (*USER_CONSTRAINTS, *_SIZE_CONSTRAINTS, "budget", "deadline_hours"):
        if not removed.get(constraint):
            continue
        relaxed_filter = flt
        relaxed_placer = placer
        if constraint in USER_CONSTRAINTS:
            relaxed_filter = relaxed(flt, constraint)
        elif constraint in _SIZE_CONSTRAINTS:  # placements change too: a placer without it
            relaxed_filter = relaxed(flt, constraint)
            relaxed_placer = placer.without(constraint)
        # Without the deadline the nearest option is the fastest one, not the cheapest;
        # without a price limit the cheapest, whatever the ranking asked (review 7 J28).
        nearest_by = _NEAREST_BY.get(constraint)
        asked = msgspec.structs.replace(req, objective=nearest_by) if nearest_by else req
        best: list[Candidate] = []
        generations = None
        if constraint == "accelerators" and flt.accelerators:
            names = _substitutes(flt.accelerators, ctx)
            if names is not None:
                alike = dataclasses.replace(flt, accelerators=names)
                best = select(plan_for(ctx.snapshot.buckets, alike, placer, asked), 1)
                generations = _generation_of(best[0], ctx) if best else None
        if not best:
            plan = plan_for(
                ctx.snapshot.buckets, relaxed_filter, relaxed_placer, asked, relax=constraint
            )
            best = select(plan, 1)
        if best:  # a hint without a nearest option tells the user nothing to relax
            nearest = _describe(best[0], ctx, lang)
            hint = RelaxHint(constraint=constraint, removed=removed[constraint], nearest=nearest)
            text = (
                _hint_text(hint, lang)
                if generations is None
                else texts.t(
                    "relax_substitute",
                    lang,
                    gens=generations,
                    best=nearest,
                    article="an" if generations[0] in "AEIOU" else "a",
                )
            )
            hints.append((hint, text))
    return hints


_NEAREST_BY: dict[str, Objective] = {
    "deadline_hours": "time",
    "max_price_per_hour": "cost",
    "budget": "cost",
}
"""The ranking that finds the option nearest to a lifted limit: the fastest for a
deadline, the cheapest for a price limit."""


def lever_hint(
    field: str,
    workload: object,
    c: Candidate,
    removed: int,
    ctx: PlanContext,
    lang: Lang,
    rollout_tp: int = 0,
    key: str | None = None,
    figures: dict[str, int | str] | None = None,
) -> tuple[RelaxHint, str]:
    """The hint and sentence of a lever that changes the job's memory (``field``: the
    workload field changed, ``method`` or ``framework``; or a serving lever,
    ``precision`` or ``max_nodes``), ``workload`` as changed, with its nearest option
    (``rollout_tp``: an RLHF trainer with vLLM rollouts, at this tensor degree there;
    ``key``: the sentence's own text, e.g. a full fine-tune changed to LoRA; ``figures``:
    the global batch lever's batches and optimizer steps,
    :func:`~service.planning.recommend.batch_lever`)."""
    nearest = _describe(c, ctx, lang)
    hint = RelaxHint(constraint=field, removed=removed, nearest=nearest)
    if figures is not None:
        return hint, texts.t(f"lever_{field}", lang, best=nearest, **figures)
    if key is not None:
        return hint, texts.t(key, lang, best=nearest)
    if rollout_tp:
        fw = str(getattr(workload, "framework", ""))
        return hint, texts.t("lever_rollout", lang, fw=fw, r=rollout_tp, best=nearest)
    if field in ("target_tokens_per_s", "concurrency"):  # serving: less load
        load = getattr(workload, field)
        return hint, texts.t(f"lever_{field}", lang, load=load, best=nearest)
    if field in ("precision", "max_nodes"):  # serving levers
        precision = str(getattr(workload, "precision", ""))
        how = texts.LOWER_WEIGHTS.get(precision.upper(), {}).get(lang, "")
        return hint, texts.t(f"lever_{field}", lang, p=precision.upper(), how=how, n=c.nodes,
                             best=nearest)  # fmt: skip
    framework = str(getattr(workload, "framework", ""))
    label = {"unsloth": "Unsloth", "torchtune": "torchtune"}.get(framework, framework)
    return hint, texts.t(f"lever_{field}", lang, fw=label, best=nearest)


def beyond_limit_hint(
    limit: int,
    cheapest: Candidate,
    fewest: Candidate | None,
    zero_stage: int | None,
    full_finetune: bool,
    removed: int,
    ctx: PlanContext,
    lang: Lang,
    offloaded: Candidate | None = None,
) -> tuple[RelaxHint, str]:
    """The hint and sentence of a training job that no ``limit`` accelerators hold
    (review 8 K9): ``fewest``, the option at the fewest accelerators the planner's fit
    holds it on (its sharding: ``zero_stage``), and ``cheapest``, the planner's nearest
    option without the limit (the same option when it is the fewest too; ``None``: the
    planner did not confirm a count below the cheapest option's, which alone is said;
    ``offloaded``: the cheapest option with ZeRO-Offload as well, said when it needs
    fewer accelerators)."""
    nearest = _describe(cheapest, ctx, lang)
    hint = RelaxHint(constraint="max_accelerators", removed=removed, nearest=nearest)
    what = texts.t("beyond_what_full" if full_finetune else "beyond_what", lang)
    if fewest is None:  # the fewest were not confirmed by the planner: the cheapest only
        return hint, texts.t("lever_beyond_limit_plain", lang, what=what, max=limit,
                             best=nearest)  # fmt: skip
    same = fewest is cheapest
    text = texts.t(
        "lever_beyond_limit_same" if same else "lever_beyond_limit",
        lang,
        what=what,
        max=limit,
        how=texts.t("beyond_how_zero3" if zero_stage == 3 else "beyond_how", lang),
        count=fewest.devices,
        layout=_layout(fewest, lang),
        fewest=_describe(fewest, ctx, lang),
        best=nearest,
    )
    if offloaded is not None and offloaded.devices < fewest.devices:
        text += ("" if lang == "zh" else " ") + texts.t(
            "lever_beyond_limit_offload",
            lang,
            count=offloaded.devices,
            layout=_layout(offloaded, lang),
            best=_describe(offloaded, ctx, lang),
        )
    return hint, text


def _layout(c: Candidate, lang: Lang) -> str:
    """An option's servers in words: "18 servers of 8×H20"."""
    row = c.offer.instance
    key = "beyond_layout" if c.nodes > 1 else "beyond_layout_one"
    return texts.t(key, lang, s=c.nodes, n=max(row.accelerator_count, 1), acc=row.accelerator)


def precision_short_sentence(resolved: Resolved, placer: Placer, ctx: PlanContext,
                             lang: Lang) -> str | None:  # fmt: skip
    """Serving: why even the lowest precision tried as a lever does not help (review 8
    K10): the memory per device of the widest layout the request allows at that
    precision (``resolved``; ``placer``: the replicas as the planner spans them), or
    ``None`` when that layout holds the model (another constraint is the reason)."""
    held, need = _memory_need(resolved.flt, resolved.rw, ctx, lang,
                              placer.job.headroom_frac, _span_servers(placer))  # fmt: skip
    if held is not False or need is None:
        return None
    precision = str(getattr(resolved.request.workload, "precision", "")).upper()
    how = texts.LOWER_WEIGHTS.get(precision, {}).get(lang, "")
    return texts.t("lever_precision_none", lang, p=precision, how=how, need=need)


_GENERATIONS = ("Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell")
"""NVIDIA's generations, oldest first (the registry's ``architecture``)."""


def _substitutes(asked: frozenset[str], ctx: PlanContext) -> frozenset[str] | None:
    """The accelerators that stand in for ``asked`` (CUDA only): the same generation or
    newer, or one generation older (an Ada request gets Ada, Hopper or Ampere: BF16,
    FlashAttention-2 and current engines; never Volta); ``None`` when an asked accelerator
    has no known generation. The hint names the generation of the option found among
    them (:func:`_generation_of`), not this range."""
    ranks = []
    for name in asked:
        spec = ctx.accelerators.resolve(name)
        arch = None if spec is None else spec.architecture
        if spec is None or spec.stack != "cuda" or arch not in _GENERATIONS:
            return None
        ranks.append(_GENERATIONS.index(arch))
    lowest = max(min(ranks) - 1, 0)
    return frozenset(
        s.name
        for s in ctx.accelerators.all()
        if s.stack == "cuda" and s.architecture in _GENERATIONS[lowest:]
    )


def _generation_of(c: Candidate, ctx: PlanContext) -> str | None:
    """The NVIDIA generation of the substitute found (review 5 G11: the hint named the
    range searched, "Volta/Pascal or newer", which held the very generations an AWQ
    checkpoint was refused on; the option found is what the sentence can vouch for)."""
    spec = ctx.accelerators.resolve(c.offer.instance.accelerator or "")
    arch = None if spec is None else spec.architecture
    return arch if arch in _GENERATIONS else None


def _unlisted(flt: OfferFilter, ctx: PlanContext) -> tuple[str, int] | None:
    """The accelerators asked for, when no offer of any loaded catalog carries one of them
    (review 4 F17: "none of the four clouds list an RTX 4090" is the fact, not a count of
    offers with other cards), with the number of catalogs loaded."""
    asked = flt.accelerators
    if not asked or any(o.instance.accelerator in asked for o in ctx.snapshot.offers):
        return None
    return "/".join(sorted(asked)), len(ctx.snapshot.providers)


_SIZE_CONSTRAINTS = ("accelerator_count", "max_accelerators")
"""Constraints the placements depend on (lifting them needs another placer)."""


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
        f"{name} {what}（{_accel_text(c, lang)}）"
        if lang == "zh"
        else f"{what} on {name} ({_accel_text(c, lang)})"
    )
    parts = [head, price]
    if c.hours is not None:
        parts.append(texts.duration(c.hours, lang))
    if c.total_cost is not None:
        parts.append(f"¥{c.total_cost:,.2f}")
    return ("，" if lang == "zh" else ", ").join(parts)


_REFUSED_DEVICE = ("engine", "engine_stack", "framework_stack", "precision")
"""Constraints under which a device cannot run the job at all (the engine does not start
on it or not on its stack — MindIE on a GPU —, it has no units for the precision): with
``constraints.accelerators``, the reason the accelerators asked for are gone (review 9b S4;
``engine_stack``: session 11)."""

_FITTED_FIRST = ("deadline_hours", "budget")
"""Constraints that remove options that hold the job (placed and timed): when they removed
any, they are the reason the answer is empty, whatever the count of offers too small for
it (review 4 F3: a deadline missed must not read as a memory shortage)."""


def _explain(
    removed: Counter[str],
    req: RecommendRequest,
    lang: Lang,
    max_nodes: int,
    unlisted: tuple[str, int] | None = None,
    need: tuple[bool | None, str | None] = (None, None),
    open_ended: bool = False,
) -> list[str]:
    """One sentence per constraint that removed offers (a deadline or budget that removed
    placed options first, then largest first), after a first sentence that says nothing
    is left; the job's kind (GPU vs CPU rows) is not a constraint and is not listed."""
    c = req.constraints
    values = {
        "n_acc": c.accelerator_count,
        "max_acc": c.max_accelerators,
        "vcpus": c.min_vcpus,
        "ram": c.min_memory_gib,
        "precision": str(getattr(req.workload, "precision", "")).upper(),
        "nodes": max_nodes,
        "engine": texts.engine_name(
            req.workload.serving_engine if isinstance(req.workload, Inference) else ""
        ),
        "checkpoint": str(getattr(req.workload, "model", "")),
    }
    sentences = [texts.t("no_option", lang)]
    held, short = need  # short: the largest server's need; held: it holds the job

    def rank(item: tuple[str, int]) -> int:
        if item[0] in _FITTED_FIRST:
            return 0
        if item[0] in _REFUSED_DEVICE and c.accelerators:
            # the accelerators asked for were removed because the engine or the precision
            # does not run on them: that is the reason, not the count of offers of other
            # accelerators the user's own filter left out (SGLang on V100, FP8 on A10)
            return 1
        if item[0] == "memory":
            # held: only smaller offers were short; not held: no server the request
            # allows holds the job, which is why it is empty, whatever the count of
            # offers the user's own filters left out (review 8 K2)
            return 3 if held else (1 if held is False else 2)
        return 2

    order = sorted(removed.most_common(), key=rank)
    for key, count in order:
        if key == "workload" or not count:
            continue
        if key == "accelerators" and unlisted is not None:
            sentences.append(texts.unlisted_sentence(*unlisted, lang))
            continue
        said = "budget_serving" if key == "budget" and open_ended else key  # the commitment
        sentence = texts.removed_sentence(said, count, lang, values)
        if key == "memory" and short is not None:  # the figure and its largest part
            sentence = f"{sentence[:-1]}：{short}" if lang == "zh" else f"{sentence[:-1]}: {short}"
        sentences.append(sentence)
    return sentences


_MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")


def _span_servers(placer: Placer) -> int:
    """Servers the widest serving replica the request allows spans (1: replicas were not
    allowed to span servers): the empty answer's figure is for that layout, not for one
    server the planner already went past (review 5 G1)."""
    job = placer.job
    if not job.span_servers:
        return 1
    return max(1, min(job.max_nodes, SPAN_MOST_SERVERS))


def _memory_need(
    flt: OfferFilter,
    rw: ResolvedWorkload,
    ctx: PlanContext,
    lang: Lang,
    headroom: float,
    servers: int = 1,
) -> tuple[bool | None, str | None]:
    """What one server of the largest accelerator memory the request allows needs per
    device, and the largest part of it, when even that server is short (review 4 F11:
    "not enough memory" without the figure gives a user, or a chatbot relaying it,
    nothing to change; when the largest server holds the job, only smaller offers were
    short and another constraint is the reason, so memory is named after it): whether
    that server holds the job (``None``: not known) and the sentence when it does not.
    One sizing, only for an empty answer."""
    if rw.arch is None:
        return None, None
    rows = [
        o.instance
        for o in ctx.snapshot.offers
        if o.instance.accelerator_memory_gib
        and (flt.accelerators is None or o.instance.accelerator in flt.accelerators)
        and o.instance.accelerator not in flt.excluded_accelerators
    ]
    if not rows:
        return None, None
    row = max(rows, key=lambda r: (r.accelerator_memory_gib or 0.0, r.accelerator_count))
    assert row.accelerator is not None
    per_node = max(row.accelerator_count, 1)
    count = flt.accelerator_count
    if count is not None:  # the layout the user fixed, not one server (review 7 J16)
        servers = -(-count // per_node)
    elif per_node < SPAN_LEAST_DEVICES:
        servers = 1
    devices = per_node * servers if count is None else count
    if rw.training is not None and fit_placement(
        rw, ctx.accelerators.get(row.accelerator), devices, headroom, per_node=per_node
    ):
        # the planner's own test, at its headroom: a training layout holds it (review 8:
        # the estimate's first fit kept 5% free, so 8×H20 at ZeRO-1 read as short)
        return True, None
    placement = Placement(accelerator=row.accelerator, count=devices, nodes=servers)
    try:
        memory = estimate_resolved(rw, placement, ctx.accelerators).memory
    except InputError:  # a figure for the sentence, never a refused answer
        return None, None
    if memory.per_device_gib <= (row.accelerator_memory_gib or 0.0) * (1.0 - headroom):
        return True, None
    part = max(_MEMORY_PARTS, key=lambda p: float(getattr(memory, f"{p}_gib")))
    key = "memory_need" if servers == 1 else "memory_need_span"
    room = ""
    if count is not None:
        key = "memory_need_count" if servers == 1 else "memory_need_count_span"
        have = row.accelerator_memory_gib or 0.0
        if memory.per_device_gib <= have:  # short only of the headroom kept free
            room = texts.t("memory_room", lang, usable=have * (1.0 - headroom),
                           pct=headroom * 100)  # fmt: skip
    return False, texts.t(
        key,
        lang,
        count=count,
        room=room,
        s=servers,
        n=row.accelerator_count,
        acc=row.accelerator,
        have=row.accelerator_memory_gib,
        need=memory.per_device_gib,
        part=texts.t(f"part_{part}", lang),
        size=float(getattr(memory, f"{part}_gib")),
    )


def _hint_text(hint: RelaxHint, lang: Lang) -> str:
    return texts.t(
        "relax_hint", lang, what=texts.constraint_name(hint.constraint, lang), best=hint.nearest
    )


def _display_name(ctx: PlanContext, provider: str, lang: Lang) -> str:
    catalog = ctx.snapshot.provider(provider)
    return localized_name(catalog.display_name, lang) if catalog else provider


def _cheapest_by_cost(
    flt: OfferFilter,
    placer: Placer,
    req: RecommendRequest,
    ctx: PlanContext,
    relax: str | None = None,
) -> Candidate | None:
    """The cheapest priced candidate when the answer's walk saw none (ranked by time, the
    fastest can all be unpriced; ``relax="budget"``: the budget removed every priced one):
    one bounded cost ranking of one candidate."""
    cheapest = msgspec.structs.replace(req, objective="cost", top_k=1)
    best = select(plan_for(ctx.snapshot.buckets, flt, placer, cheapest, relax=relax), 1)
    return best[0] if best and best[0].priced else None


def _on_demand_of(c: Candidate, ctx: PlanContext, cache: PlanCache) -> None:
    """A shown monthly option's on-demand price, from the whole catalog in its regions
    (review 9 K12: ``billing: ["monthly"]`` leaves the planner no on-demand row to
    compare with), and its break-even when the planner had none."""
    offer = c.offer
    quote = on_demand_quote(
        ctx.snapshot.buckets, cache, (offer.provider, offer.instance.instance_type), c.regions
    )
    if quote is None:
        return
    c.on_demand_per_hour = quote.price_per_hour
    c.on_demand_estimated = quote.estimated
    price = offer.price
    if c.break_even_hours is None and price is not None and price.price_per_month:
        c.break_even_hours = break_even_hours(price.price_per_month, quote.price_per_hour)


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


def _accel_text(c: Candidate | None, lang: Lang) -> str:
    """What one node holds; over several nodes, per node and in all ("2×" before the type
    name alone reads as the node's cards being the total)."""
    if c is None:
        return ""
    row = c.offer.instance
    if row.accelerator is None:
        return f"{row.vcpus} vCPU / {row.memory_gib:g} GiB"
    cards = f"{row.accelerator_count}×{row.accelerator}"
    if c.nodes <= 1:
        return cards
    total = c.nodes * (row.accelerator_count or 0)
    return f"每台 {cards}，共 {total} 卡" if lang == "zh" else f"{cards} per node, {total} in all"


def _estimate_for(
    c: Candidate | None,
    rw: ResolvedWorkload,
    req: RecommendRequest,
    ctx: PlanContext,
    parts: AnswerParts,
) -> EstimateResponse | None:
    if c is None:
        return None
    row = c.offer.instance
    placement = None
    place = parts.placed
    # replicas: one per node, or per pipeline of servers when one server holds no replica
    replicas = c.nodes // (c.fit.pipeline_parallel if c.fit is not None else 1)
    if c.fit is not None and c.fit.batch is not None:
        # the option's batch on every replica, not one sequence; not kept by placement
        # alone (the same devices split over other nodes hold another batch)
        rw = at_concurrency(rw, c.fit.batch * replicas)
        place = placed_estimate
    elif replicas > 1 and rw.inference is not None and rw.arch is not None and not rw.image_model:
        # the planner serves the request's concurrency on every replica; the estimate
        # shares its concurrency out over the replicas
        rw = at_concurrency(rw, rw.inference.concurrency * replicas)
        place = placed_estimate
    if row.accelerator is not None:
        placement = parts.placement(c, rw, req)
    return estimate_resolved(rw, placement, ctx.accelerators, place)


def _placement(c: Candidate, rw: ResolvedWorkload, req: RecommendRequest) -> Placement:
    """The placement of option ``c`` (on an accelerator) that its estimate is for."""
    row = c.offer.instance
    assert row.accelerator is not None
    training = rw.training is not None
    network = node_network(row) if training and c.nodes > 1 else None
    return Placement(
        accelerator=row.accelerator,
        count=c.devices,
        nodes=c.nodes,
        zero_stage=_zero_stage(c, req),
        tensor_parallel=_tensor_parallel(c, rw),
        network_gbps=network[0] if network is not None and network[1] else None,
    )


def _tensor_parallel(c: Candidate, rw: ResolvedWorkload) -> int | None:
    """Serving: the option's tensor-parallel degree (the estimate, keeping less headroom,
    could pick a smaller one than the option's fit says); plain transformers splits layers
    over every device, which the estimate lays out itself."""
    if c.fit is None or rw.inference is None or rw.inference.layer_split:
        return None
    return c.fit.tensor_parallel


def _zero_stage(c: Candidate, req: RecommendRequest) -> Literal[0, 1, 2, 3] | None:
    if c.fit is None or isinstance(req.workload, Inference):
        return None
    stage = c.fit.zero_stage
    return stage if stage in (0, 1, 2, 3) else None  # type: ignore[return-value]


def _advice_of(base: dict[str, Any], per: dict[str, Any], host: HostRequirements) -> AdviceContext:
    """The advice context of one answer: its class's fields (:func:`_class_advice`), its
    options' (:func:`_answer_advice`) and ``host``'s figures."""
    accelerators = per["accelerators"]
    return AdviceContext(
        kind=base["kind"],
        params_b=base["params_b"],
        interruptible=base["interruptible"],
        uses_spot=per["uses_spot"],
        multi_node=per["multi_node"],
        accelerators=accelerators,
        ascend=any(a.startswith("Ascend") for a in accelerators),
        unpriced=per["unpriced"],
        snapshot_prices=per["snapshot_prices"],
        vcpus=host.vcpus,
        ram_gib=host.ram_gib,
        disk_gib=host.disk_gib,
        checkpoint_interval_h=CHECKPOINT_INTERVAL_H,
        providers=per["providers"],
        has_options=per["has_options"],
        image_loader=base["image_loader"],
        moe_expert_loop=base["moe_expert_loop"],
        precision=base["precision"],
        release_fp8=base["release_fp8"],
        encoder=base["encoder"],
        image_serving=base["image_serving"],
        batch=base["batch"],
        engine=base["engine"],
        single_stream_target=base["single_stream_target"],
    )


def _answer_advice(
    top: Sequence[Candidate], serving: bool, asked: frozenset[str] | None = None
) -> dict[str, Any]:
    """What the advice reads of the answer's options (in a fixed order: the values are a
    memo key). An answer without options reads the accelerators the user ``asked`` for
    instead, so a job asked on Ascend NPUs alone is not advised in GPU words (CUDA images,
    DCGM, serverless GPU: review 11s V8)."""
    names: set[str] = set()
    providers: dict[str, None] = {}
    uses_spot = multi_node = unpriced = snapshot_prices = False
    for c in top:
        offer = c.offer
        providers[offer.provider] = None
        if offer.instance.accelerator:
            names.add(offer.instance.accelerator)
        uses_spot = uses_spot or offer.billing == "spot"
        multi_node = multi_node or c.nodes > 1
        unpriced = unpriced or c.price_per_hour is None
        price = offer.price
        snapshot_prices = snapshot_prices or (
            price is not None and price.price_source == "snapshot"
        )
    if not top and asked:
        names = set(asked)
    return {
        "accelerators": frozenset(names),
        "uses_spot": uses_spot,
        "multi_node": multi_node and not serving,
        "unpriced": unpriced,
        "snapshot_prices": snapshot_prices,
        "has_options": bool(top),
        "providers": tuple(providers),
    }


def _class_advice(
    rw: ResolvedWorkload, req: RecommendRequest, interruptible: bool, ctx: PlanContext
) -> dict[str, Any]:
    """What the advice reads of the request and its resolved workload: the same for the
    request at any job length (none of it reads ``tokens`` or ``output_tokens``)."""
    serving = isinstance(req.workload, Inference)
    preset = ctx.models.resolve(rw.model_id) if serving and rw.model_id else None
    release_fp8 = preset.display_name if preset and preset.release_precision == "fp8" else None
    return {
        "serving": serving,
        "kind": str(type(req.workload).__struct_config__.tag),
        "params_b": rw.params_b,
        "interruptible": interruptible,
        "image_loader": loader_vcpus_per_device(rw) is not None,
        "moe_expert_loop": moe_training_factor(
            rw.arch, getattr(req.workload, "framework", ""), None
        )
        < 1.0,
        "precision": getattr(req.workload, "precision", "bf16"),
        "release_fp8": release_fp8,
        "encoder": rw.encoder,
        "image_serving": serving and rw.image_model,
        "batch": serving and bool(getattr(req.workload, "output_tokens", None)),
        "engine": req.workload.serving_engine
        if serving and isinstance(req.workload, Inference)
        else None,
        "single_stream_target": (
            getattr(req.workload, "target_tokens_per_s", None)
            if getattr(req.workload, "concurrency", None) in (1, None)
            and not batches_to_target(req.workload)
            else None
        ),
    }
