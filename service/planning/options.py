"""One option of the answer: a candidate as the response shows it, with its ``reasons``
(why it fits and ranks) and ``warnings`` (what to watch for).

Most of an option depends only on the offer and its placement — the instance, memory
fit, network, price source, row confidence and their sentences — never on the job's
length, so those parts are kept in the planner's cache by value (:func:`offer_part` per
offer and node count, :func:`fit_part` per fit and shape, see
:meth:`~service.planning.memo.PlanCache.template`). Within one class of answers (the
same request at any job length) the option of an (offer, placement) is kept whole but
for the job's figures (:class:`OptionParts`); per request only those and the sentences
that carry them are filled in (rank, hours, cost, Pareto mark, spot overhead).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from service.catalog.accelerators import AcceleratorRegistry
from service.catalog.capabilities import framework_port, hardware_notes, method_notes
from service.catalog.models import AcceleratorRef, InstanceType, Offer
from service.catalog.names import price_source_label
from service.planning import texts
from service.planning.advice import SUPPLY_LIMITED, ascend_caveat
from service.planning.candidates import Candidate
from service.planning.cost import money_text, ranked_money_scale, shown_money
from service.planning.faster import SAME_COST
from service.planning.memo import PlanCache
from service.planning.network import node_network
from service.planning.schema import Lang, Objective, Option
from service.planning.width import FINETUNE_GLOBAL_BATCH, replicas
from service.sizing import Fit, HostRequirements
from service.sizing.batch import batch_limit_words, encoder_each, sequences_noun
from service.sizing.compute import peak_tflops
from service.sizing.dequant import DequantTerms
from service.sizing.mfu import IMAGE_FORWARD_FLOOR_S
from service.sizing.parallelism import (
    framework_limit,
    limits,
    sharded_traffic,
    sharding_words,
)
from service.sizing.profiles import engine_profile

STALE_BEFORE = "2025"
"""Prices dated before this year are flagged as possibly stale."""


@dataclass(frozen=True, slots=True)
class OfferPart:
    """What an option shows of its offer, whatever the job: kept per (offer, nodes)."""

    template: Option
    """The option with placeholders (rank 0, no fit, hours or cost, no texts) for the
    job's figures, filled per request with ``msgspec.structs.replace``."""
    price: tuple[str, ...]
    """Where the price comes from."""
    price_warnings: tuple[str, ...]
    """Stale, estimated or unknown price."""
    row_warnings: tuple[str, ...]
    """Low-confidence row, Ascend/CANN, supply-limited accelerator."""


@dataclass(frozen=True, slots=True)
class FitPart:
    """How the option holds the job, whatever its length: kept per (fit, shape)."""

    texts: tuple[str, ...]
    """Memory fit, ZeRO/TP, multi-node network."""
    per_device_gib: float | None
    headroom_gib: float | None
    zero_stage: int | None
    tensor_parallel: int | None
    warnings: tuple[str, ...] = ()
    """What to watch for in that layout (servers joined by no RDMA network)."""


def offer_part(
    offer: Offer,
    nodes: int,
    serving: bool,
    lang: Lang,
    accelerators: AcceleratorRegistry,
    precision: str,
    engine: str | None = None,
    fp16_upcast: bool = False,
    images: bool = False,
    convolutional: bool = False,
) -> OfferPart:
    """What the option says of ``offer`` on ``nodes`` nodes, for a job in ``precision``
    (its device's capabilities: :func:`service.catalog.capabilities.hardware_notes`;
    ``images``: a served image model, which runs as PyTorch code on torch_npu;
    ``convolutional``: a CNN or detector, which has no attention to speed up)."""
    row = offer.instance
    spec = accelerators.resolve(row.accelerator or "")
    cann = spec is not None and spec.stack == "cann"
    hardware: tuple[str, ...] = ()
    if spec is not None and row.accelerator:
        hardware = hardware_notes(spec, precision, serving, engine, images, convolutional)
        if fp16_upcast:
            hardware = tuple("fp16_serving_upcast" if k == "fp16_serving" else k for k in hardware)
        if serving and not spec.mem_bandwidth_gbps:
            hardware = (*hardware, "no_bandwidth")
    price = offer.price
    price_texts: list[str] = []
    price_warnings: list[str] = []
    if price is not None:
        kind = texts.price_kind(price.price_source, lang)
        source = texts.clip(price_source_label(price.source, lang))
        price_texts.append(texts.t("price_source", lang, src=source, as_of=price.as_of, kind=kind))
        if price.as_of < STALE_BEFORE and price.price_source == "snapshot":
            price_warnings.append(texts.t("stale", lang, as_of=price.as_of))
        if price.estimated and price.price_per_hour is not None:
            basis = (price.basis_zh if lang == "zh" else None) or price.basis or ""
            low = price.price_low if price.price_low is not None else price.price_per_hour
            high = price.price_high if price.price_high is not None else price.price_per_hour
            per = ("（每节点）" if lang == "zh" else " per node") if nodes > 1 else ""
            price_warnings.append(
                texts.t(
                    "estimated",
                    lang,
                    price=price.price_per_hour,
                    per=per,
                    basis=basis,
                    low=low,
                    high=high,
                )
            )
    else:
        price_warnings.append(texts.t("unpriced", lang))
    row_warnings = []
    if row.confidence != "high":
        row_warnings.append(texts.confidence_warning(row.confidence, lang))
    if cann:  # the caveat follows the stack: training ports code, serving engines do not
        row_warnings.append(texts.t(ascend_caveat(serving, engine, images), lang))
    if row.accelerator in SUPPLY_LIMITED:
        row_warnings.append(texts.t("supply", lang, acc=row.accelerator))
    row_warnings.extend(texts.t(key, lang, acc=row.accelerator) for key in hardware)
    template = Option(
        rank=0,
        provider=offer.provider,
        region=None if offer.region == "*" else offer.region,
        regions=[],
        instance_type=row.instance_type,
        family=row.family,
        accelerator=AcceleratorRef.of(row),
        nodes=nodes,
        vcpus=(row.vcpus or 0) * nodes,
        memory_gib=(row.memory_gib or 0.0) * nodes,
        rdma=row.rdma,
        billing=offer.billing,
        price_per_hour=None,
        price_source=price.price_source if price else None,
        price_as_of=price.as_of if price else None,
        price_source_ref=price.source if price else None,
        price_estimated=bool(price and price.estimated),
        currency="CNY",
        hours=None,
        total_cost=None,
        per_device_gib=None,
        headroom_gib=None,
        zero_stage=None,
        tensor_parallel=None,
        pareto=False,
        confidence=row.confidence,
        reasons=[],
        warnings=[],
    )
    return OfferPart(template, tuple(price_texts), tuple(price_warnings), tuple(row_warnings))


def said_in_advice(
    options: list[Option], serving: bool, engine: str | None, images: bool, lang: Lang
) -> list[Option]:
    """``options`` without the serving CANN caveat when every one is on an Ascend NPU
    (review 9 K11): the caveat is then the same for every option and the advice says it
    once, longer (its ``ascend`` topic: :func:`service.planning.advice._topics`, shown
    whenever an option is on an Ascend NPU). Where NPUs and GPUs are both listed it
    stays on the NPU options, which it tells apart. Training keeps it on every option
    (the scenario suite's "CANN migration said on every option")."""
    if not serving or not options:
        return options
    if not all(
        o.accelerator is not None and o.accelerator.name.startswith("Ascend") for o in options
    ):
        return options
    caveat = texts.t(ascend_caveat(serving, engine, images), lang)
    return [
        msgspec.structs.replace(o, warnings=[w for w in o.warnings if w != caveat]) for o in options
    ]


def fit_part(
    fit: Fit | None,
    row: InstanceType,
    nodes: int,
    devices: int,
    serving: bool,
    lang: Lang,
    to_target: bool = False,
    framework: str | None = None,
    encoder: bool = False,
    engine: str | None = None,
    sequences: int | None = None,
    moe: bool = False,
    trainer: str | None = None,
    ascend: bool = False,
) -> FitPart:
    """``row``: only its accelerator memory, network and whether it has accelerators
    are read; the part is kept per the first two and ``fit`` (only a CPU-only candidate
    has none). ``to_target``: a batched fit serves a throughput target (else a batch
    job). ``engine``: the serving engine a spanning replica is said to run under.
    ``sequences``: the request's concurrency on one server (``None``: batched, or an
    image model), shared by the copies of the model a server holds at a tensor-parallel
    degree below its accelerators (``moe``: a mixture-of-experts model). ``trainer``: the
    training framework, whose words name the layout's sharding (``framework`` is given only
    where its limit is said). ``ascend``: the row's accelerator is an Ascend NPU, where the
    batch limit names the engine as it runs there (review 13s S6)."""
    fit_texts: list[str] = []
    if fit is not None:
        layout: list[str] = []
        if not serving and fit.zero_stage:
            layout.append(sharding_words(trainer, fit.zero_stage, lang))
        if fit.tensor_parallel and fit.tensor_parallel > 1:
            layout.append(texts.t("tp", lang, tp=fit.tensor_parallel))
        if fit.pipeline_parallel > 1:
            layout.append(texts.t("pp", lang, pp=fit.pipeline_parallel))
        how = texts.layout_words(layout, lang)
        fit_texts.append(
            texts.t(
                "fits",
                lang,
                need=fit.memory.per_device_gib,
                have=row.accelerator_memory_gib or 0,
                head=fit.headroom_gib,
                how=how,
            )
        )
        if fit.checked_high:
            fit_texts.append(texts.t("fits_high", lang, high=fit.memory.range_gib[1]))
        if fit.shared and fit.batch is not None:
            fit_texts.append(
                texts.t(
                    "shared_concurrency",
                    lang,
                    b=fit.batch,
                    n=nodes,
                    total=sequences if sequences is not None else fit.batch * nodes,
                )
            )
        elif fit.batch is not None:
            # one replica reaches the target: the fewest requests that do; else what fits
            key = "batched_target" if nodes == fit.pipeline_parallel else "batched_room"
            if not to_target:
                key = "batched_job"
            b, each = fit.batch, ""
            if encoder:  # sequences per forward pass (each copy's own), no KV cache
                key = "encoder_batch_target" if nodes == 1 else "encoder_batch_room"
                groups = row.accelerator_count // max(fit.tensor_parallel, 1)
                n = min(groups, b) if fit.pipeline_parallel == 1 else 1
                b, each = -(-b // n), encoder_each(lang, n)
            lim = batch_limit_words(engine or "vllm", lang, ascend)
            fit_texts.append(texts.t(key, lang, b=b, lim=lim, each=each, noun=sequences_noun(b)))
        seqs = fit.batch if fit.batch is not None else sequences
        groups = row.accelerator_count // max(fit.tensor_parallel, 1)
        if serving and fit.pipeline_parallel == 1 and seqs and min(groups, seqs) > 1:
            n = min(groups, seqs)
            fit_texts.append(
                texts.copies(lang, n, fit.tensor_parallel, seqs, engine or "vllm", moe)
            )
    if (
        fit is not None
        and framework is not None
        and not serving
        and limits(framework, devices, fit.zero_stage, fit.tensor_parallel, fit.pipeline_parallel)
    ):
        limit = framework_limit(framework, lang)
        fit_texts.append(texts.t("framework_limit", lang, limit=limit))
    fit_warnings: tuple[str, ...] = ()
    if serving and fit is not None and fit.pipeline_parallel > 1:
        fit_texts.extend(_spanning(fit, row, nodes, lang, engine or "vllm"))
        if node_network(row) is None:
            fit_warnings = (texts.t("span_no_rdma", lang),)
    if nodes > 1 and not serving and not row.is_cpu_only:
        net = {"rdma": "RDMA", "erdma": "eRDMA"}.get(row.rdma or "", "VPC")
        fit_texts.append(texts.t("multi_node", lang, n=nodes, net=net, d=devices))
        network = node_network(row)
        if network is not None:
            gbps, stated = network
            fit_texts.append(
                texts.t(
                    "node_network" if stated else "node_network_assumed",
                    lang,
                    gbps=gbps,
                    per=gbps / max(row.accelerator_count, 1),
                    shard=sharded_traffic(trainer, lang),
                )
            )
    return FitPart(
        tuple(fit_texts),
        per_device_gib=_round(fit.memory.per_device_gib, 3) if fit else None,
        headroom_gib=_round(fit.headroom_gib, 3) if fit else None,
        zero_stage=fit.zero_stage if fit and not serving else None,
        tensor_parallel=fit.tensor_parallel if fit else None,
        warnings=fit_warnings,
    )


def _spanning(fit: Fit, row: InstanceType, nodes: int, lang: Lang, engine: str) -> list[str]:
    """Why and how a served model spans servers: one server's memory does not hold it,
    so each replica is ``fit.pipeline_parallel`` servers (tensor parallel within one,
    pipeline stages across) under the ``engine`` asked for, and what joins them. Only
    vLLM's guide is named as the source of the split (review 5 G10: a MindIE plan was
    said to be deployed "the way vLLM does")."""
    per, pp = fit.tensor_parallel, fit.pipeline_parallel
    key = "spans_servers" if per > 1 else "spans_servers_one"
    mem = row.accelerator_memory_gib or 0
    guide = texts.t("span_vllm_guide", lang) if engine == "vllm" else ""
    said = [
        texts.t(
            key, lang, per=per, mem=mem, pp=pp, d=per * pp,
            engine=texts.engine_name(engine), guide=guide,
        )
    ]  # fmt: skip
    if nodes > pp:
        said.append(texts.t("span_replicas", lang, r=nodes // pp, n=nodes))
    network = node_network(row)
    if network is not None:
        net = {"rdma": "RDMA", "erdma": "eRDMA"}.get(row.rdma or "", "RDMA")
        gbps, stated = network
        key = "span_network" if stated else "span_network_unstated"
        said.append(texts.t(key, lang, net=net, gbps=gbps))
    return said


OPTION_PARTS = 128
"""Options kept per class of answers: the few dozen (offer, placement) pairs its answers
show at the lengths asked, with room for larger ``top_k``."""


@dataclass(frozen=True, slots=True)
class OptionTerms:
    """What an option's sentences depend on besides its offer and placement: the terms of
    one class of answers (the same request at any job length)."""

    objective: Objective
    serving: bool
    open_ended: bool
    to_target: bool
    """Sized to a throughput target: ranked by the hour (``Job.to_target``)."""
    lang: Lang
    need: HostRequirements | None
    accelerators: AcceleratorRegistry
    precision: str
    """The job's (what the device's capabilities are checked for)."""
    stale_live: frozenset[str]
    """Providers whose live prices are past their TTL."""
    method: str | None = None
    """The fine-tune's method (QLoRA's caveats depend on the device)."""
    fixed_hours: float = 0.0
    """The training job's fixed start-up and save hours, in every option's hours
    (:meth:`~service.planning.place.Placer.fixed_hours`; the same at any job length)."""
    framework: str | None = None
    """The training framework (what layouts it can launch); ``None`` when serving."""
    limit_said: Callable[[InstanceType, Fit, int], bool] | None = None
    """Whether an option (row, fit, devices) says the framework's limit: only where the
    limit decided its layout (:func:`~service.sizing.memory.limit_decides`)."""
    encoded_len: int | None = None
    """A served encoder's tokens per sequence: its rate is said in sequences per second
    encoded, not as decode throughput; ``None`` otherwise."""
    images: bool = False
    """Serving an image model (CNN, detector, ViT, diffusion): its rate is said in images
    per second and its price per million images, not as decode throughput."""
    convolutional: bool = False
    """A CNN or detector (no attention layer): no FlashAttention-2 caveat."""
    engine: str | None = None
    """Serving: the engine (its memory budget and releases are said per option)."""
    sequences: int | None = None
    """Serving a text model at the request's concurrency: the sequences one server runs,
    which several copies of the model on it share; ``None`` otherwise."""
    moe: bool = False
    """Serving a mixture-of-experts model (how its copies are launched differs)."""
    fp16_upcast: bool = False
    """Serving in bf16 a diffusion pipeline that a device without BF16 runs in fp16, where
    diffusers decodes its VAE in fp32 (:attr:`~service.sizing.ResolvedWorkload.no_bf16`):
    that device's fallback costs memory, and its sentence says so."""
    untimed: str | None = None
    """Why the training job has no hours on any device (no token count, no compute figure
    for the model: :func:`~service.sizing.compute.untimed_reason`); ``None``: timed where
    the device allows. Whether a length is given is in the class's key."""
    generates: bool = False
    """The job has an RLHF rollout, which a device without a bandwidth cannot time."""
    pairs: bool = False
    """Serving a cross-encoder reranker: its rate is said in query–passage pairs scored
    per second (not sequences encoded)."""
    batch_asked: bool = False
    """Training at the request's own global batch (not the planner's assumed one)."""
    pretraining: bool = False
    """A pre-training run (what the global-batch sentence calls the job)."""
    dequant: DequantTerms | None = None
    """A QLoRA fine-tune: what each option's sentence on the dequantization's cost on its
    device reads (:mod:`service.sizing.dequant`); ``None`` for a 16-bit base."""
    image_batch: int | None = None
    """Serving an image model to a throughput target without a concurrency: the images per
    call it is sized and timed at (:data:`~service.sizing.resolve.IMAGE_TARGET_BATCH`),
    which its rate sentence says; ``None`` otherwise."""
    streams: int | None = None
    """Online serving of a text model at a concurrency above 1: the requests each server
    runs at once, among which its decode rate is shared (each option says what one of them
    sees, review 11s V4); ``None`` for one stream, an offline batch job or an encoder."""
    image_peak: str | None = None
    """Serving an image model: what sets its peak working set, ``decode`` (a diffusion
    pipeline's VAE decode), ``unet`` (its UNet step) or ``forward`` (a CNN/ViT/detector's
    forward pass); ``None`` for a text model (review 10 S7c1)."""


@dataclass(frozen=True, slots=True, eq=False)
class OptionPart:
    """One option of one class of answers, whatever the job's length: everything but its
    rank, hours, total cost, Pareto mark and the sentences that carry those numbers.

    Built once per (offer, placement) of the class (:class:`OptionParts`); per request
    :func:`fill_option` puts the job's figures in. Equal only to itself and hashed by
    identity (a memo key of the parts an answer shows,
    :meth:`~service.planning.explain.AnswerParts.advice_for`, holds them alive)."""

    offer: Offer
    fit: Fit | None
    template: Option
    """The option with every figure that does not depend on the job's length."""
    head: tuple[str, ...]
    """Reasons before the ranking sentence (host and memory fit, network)."""
    middle: tuple[str, ...]
    """Reasons between the ranking and the spot sentences (throughput, subscriptions)."""
    tail: tuple[str, ...]
    """Reasons after the spot sentence (price source, monthly information)."""
    warnings_head: tuple[str, ...]
    """Warnings before the unknown-hours one (price, stale live price)."""
    warnings_tail: tuple[str, ...]
    """Warnings after it (row confidence, hardware), without the unknown-regions one."""
    fixed_time: str | None = None
    """The sentence on the job's fixed hours (a timed training option says it; the same
    in every option of the class, written once per part rather than per answer)."""
    money_scale: float = 1.0
    """:func:`~service.planning.cost.ranked_money_scale` of the offer (its ranking
    sentence says it when an estimate was ranked at the top of its range)."""
    rank: texts.RankWriter | None = None
    """The class's ranking sentence (:func:`~service.planning.texts.rank_writer` of its
    terms, shared by its parts); ``None``: :func:`~service.planning.texts.rank_reason`."""


class OptionParts:
    """The :class:`OptionPart` s of one class of answers, by (offer, placement).

    Keyed by the identities of the offer and fit (catalog and placement values, kept alive
    by the parts that hold them, so an identity is never reused while its key is here) and
    the node count; bounded by dropping everything past ``limit`` (placements rebuilt
    after an eviction are other objects, and their parts are built again)."""

    __slots__ = ("_parts", "_rank", "limit", "terms")

    def __init__(self, terms: OptionTerms, limit: int = OPTION_PARTS) -> None:
        self.terms = terms
        self._parts: dict[tuple[int, int, int], OptionPart] = {}
        self.limit = limit
        self._rank = texts.rank_writer(
            terms.objective, terms.open_ended, terms.lang, terms.to_target, terms.encoded_len,
            terms.images, terms.pairs, terms.serving and not terms.open_ended,
        )  # fmt: skip

    def part(self, c: Candidate, cache: PlanCache, monthly_per_month: float | None) -> OptionPart:
        key = (id(c.offer), id(c.fit), c.nodes)
        part = self._parts.get(key)
        if part is None or part.offer is not c.offer or part.fit is not c.fit:
            part = option_part(c, self.terms, cache, monthly_per_month, self._rank)
            if len(self._parts) >= self.limit:
                self._parts.clear()
            self._parts[key] = part
        return part


def option_part(
    c: Candidate,
    terms: OptionTerms,
    cache: PlanCache,
    monthly_per_month: float | None,
    rank: texts.RankWriter | None = None,
) -> OptionPart:
    """The length-independent part of candidate ``c``'s option (``monthly_per_month``: the
    type's monthly price, shown as information to a job of unknown length billed on
    demand; ``rank``: the class's ranking sentence, :attr:`OptionPart.rank`)."""
    offer, row, nodes = c.offer, c.offer.instance, c.nodes
    serving, lang, accelerators, precision = (
        terms.serving, terms.lang, terms.accelerators, terms.precision
    )  # fmt: skip
    engine, upcast, images = terms.engine, terms.fp16_upcast, terms.images
    convolutional = terms.convolutional
    sold = cache.template(
        ("offer", offer, nodes, serving, lang, accelerators, precision, engine, upcast, images,
         convolutional),
        lambda: offer_part(
            offer, nodes, serving, lang, accelerators, precision, engine, upcast, images,
            convolutional,
        ),
    )  # fmt: skip
    spec = accelerators.resolve(row.accelerator or "")
    ascend = spec is not None and spec.stack == "cann"  # LMDeploy runs its PyTorch engine
    framework = terms.framework
    said = terms.limit_said
    if framework is not None and c.fit is not None and said is not None:
        framework = framework if said(row, c.fit, c.devices) else None
    held = cache.template(
        ("fit", c.fit, row.accelerator_memory_gib, node_network(row), row.rdma, nodes,
         c.devices, serving, lang, terms.to_target, framework, terms.encoded_len, engine,
         row.accelerator_count, terms.sequences, terms.moe, terms.framework, ascend),
        lambda: fit_part(c.fit, row, nodes, c.devices, serving, lang, terms.to_target, framework,
                         bool(terms.encoded_len), engine, terms.sequences, terms.moe,
                         terms.framework, ascend),
    )  # fmt: skip
    head, middle, tail, warnings_head, warnings_tail = _texts(c, sold, held, terms)
    if monthly_per_month and c.offer.billing == "on_demand" and c.price_per_hour:
        even = monthly_per_month / (c.price_per_hour / c.nodes)
        tail = (*tail, texts.t("monthly_info", lang, month=monthly_per_month, even=even))
    template = msgspec.structs.replace(
        sold.template,
        price_per_hour=_round(c.price_per_hour),
        price_low_per_hour=_estimate_bound(c, "low"),
        price_high_per_hour=_estimate_bound(c, "high"),
        throughput_tokens_per_s=_round(c.throughput_tokens_per_s, _rate_digits(c)),
        price_per_million_tokens=_shown(c.price_per_million_tokens),
        break_even_hours=_round(c.break_even_hours, 1),
        per_device_gib=held.per_device_gib,
        headroom_gib=held.headroom_gib,
        zero_stage=held.zero_stage,
        tensor_parallel=held.tensor_parallel,
    )
    fixed = terms.fixed_hours
    fixed_time = texts.t("fixed_time", lang, minutes=fixed * 60) if fixed and not serving else None
    return OptionPart(c.offer, c.fit, template, head, middle, tail, warnings_head, warnings_tail,
                      fixed_time, ranked_money_scale(offer), rank)  # fmt: skip


def fill_option(
    rank: int, c: Candidate, part: OptionPart, terms: OptionTerms, budget: float | None = None
) -> Option:
    """``part`` as the ``rank``-th option, with the job's figures of candidate ``c``
    (``budget``: the request's, said per option when serving is open-ended)."""
    lang = terms.lang
    write = part.rank
    ranked = (
        write(c, part.money_scale)
        if write is not None
        else texts.rank_reason(
            c, terms.objective, terms.open_ended, lang, terms.to_target, terms.encoded_len,
            part.money_scale, terms.images, terms.pairs,
            terms.serving and not terms.open_ended,
        )
    )  # fmt: skip
    hours, total, open_ended = c.hours, c.total_cost, terms.open_ended
    # one list, head to tail, rather than tuples rebuilt per sentence added
    reasons = [*part.head, ranked, *part.middle] if ranked else [*part.head, *part.middle]
    add = reasons.append
    if part.fixed_time is not None and hours is not None:
        add(part.fixed_time)
    if c.width_bound and rank == 1 and terms.objective == "time" and c.fit is not None:
        fit = c.fit
        copies = replicas(c.devices, fit.tensor_parallel, fit.pipeline_parallel)
        short = not terms.batch_asked and c.width_bound < FINETUNE_GLOBAL_BATCH
        add(texts.width_bound(c.width_bound, copies, short, lang, terms.pretraining))
    if c.outdated_engine and terms.objective != "time":
        add(_outdated_reason(c, terms))
    if terms.serving and c.fit is not None:
        if terms.engine is not None:
            edge = _engine_budget(c, terms.engine, lang, bool(terms.encoded_len))
            if edge is not None:
                add(edge)
        elif terms.image_peak is not None:
            tight = _pipeline_tight(c, terms.image_peak, lang)
            if tight is not None:
                add(tight)
    if c.spot is not None:
        add(texts.spot_reason(c, lang))
    if c.shown_spot:
        add(texts.t("spot_shown", lang))
    if c.same_cost_as is not None and total is not None and hours is not None:
        cheapest, slow = c.same_cost_as
        dearer = total > cheapest * (1 + SAME_COST) + 0.005
        key, pct = (
            ("faster_than_monthly", (total / cheapest - 1) * 100)
            if dearer
            else ("same_cost_faster", SAME_COST * 100)
        )
        fast_words, slow_words = texts.duration(hours, lang), texts.duration(slow, lang)
        add(texts.t(key, lang, pct=pct, total=total, cheapest=cheapest,
                    hours=fast_words, slow=slow_words))  # fmt: skip
    if hours and total and not open_ended and c.offer.billing == "monthly":
        add(texts.month_used(c, lang))
    if budget is not None and open_ended:
        lasts = texts.serving_budget(budget, c, lang)
        if lasts is not None:
            add(lasts)
    reasons.extend(part.tail)
    if hours is None and not open_ended:
        unknown = texts.hours_unknown(
            untimed_of(c, terms), lang, c.offer.instance.accelerator or ""
        )
        warnings = [*part.warnings_head, unknown, *part.warnings_tail]
    else:
        warnings = [*part.warnings_head, *part.warnings_tail]
    if not c.regions:
        warnings.append(_REGIONS_UNKNOWN[lang])
    if budget is not None and _unchecked(c, terms):
        warnings.append(texts.t("budget_unchecked", lang, budget=budget))
    return msgspec.structs.replace(
        part.template,
        rank=rank,
        regions=c.regions,
        hours=None if hours is None else round(hours, 3),
        total_cost=None if total is None else round(total, 2),
        pareto=c.pareto,
        reasons=reasons,
        warnings=warnings,
    )


_REGIONS_UNKNOWN: dict[Lang, str] = {
    "en": texts.t("regions_unknown", "en"),
    "zh": texts.t("regions_unknown", "zh"),
}
"""The warning of an option whose regions are not published, per language (a constant
sentence, looked up once rather than per option)."""


def _outdated_reason(c: Candidate, terms: OptionTerms) -> str:
    """Why a device the engine's current release does not run ranks after the others."""
    accelerator = c.offer.instance.accelerator or ""
    if terms.images:  # a PyTorch pipeline, no engine: Pascal has no tensor cores
        return texts.t("rank_no_tensor_cores", terms.lang, acc=accelerator)
    engine = texts.engine_name(terms.engine or "vllm")
    return texts.t("rank_outdated_engine", terms.lang, acc=accelerator, engine=engine)


ENGINE_SPARE_GIB = 1.0
"""Below this much of the engine's memory budget left per device, a serving plan is said
to be at the budget's edge: its KV-cache pool holds about the planned batch and nothing
for longer prompts or a bigger batch."""


PIPELINE_MARGIN = 0.25
"""A served image model's fit is said to be tight when the device's memory left over is
below this share of the pipeline's modelled peak (weights + working set): the tolerance
its model is checked to (tests/test_review10_sdxl.py, ``MEASURED_REL``), which Hugging
Face's SDXL measurement uses a good part of (21.72 GiB ``max_memory_allocated`` for
18.6 modelled, https://huggingface.co/blog/simple_sdxl_optimizations), before the
caching allocator's pool and cuDNN's workspaces. A PyTorch pipeline reserves no share of
the card up front, unlike vLLM's ``gpu_memory_utilization``: only its own peak counts."""


def _pipeline_tight(c: Candidate, peak: str, lang: Lang) -> str | None:
    """The sentence for a served image model whose peak leaves little of the device
    (review 10 S7c1: it said vLLM's 0.9 budget and KV-cache pool), else ``None``."""
    memory = c.offer.instance.accelerator_memory_gib
    if not memory or c.fit is None:
        return None
    m = c.fit.memory
    spare = memory - m.per_device_gib
    if spare >= PIPELINE_MARGIN * (m.weights_gib + m.activations_gib):
        return None
    fix = "pipeline_fix_images" if peak == "forward" else "pipeline_fix_diffusion"
    return texts.t(
        "pipeline_tight", lang, w=m.weights_gib, a=m.activations_gib,
        what=texts.t(f"pipeline_peak_{peak}", lang), need=m.per_device_gib,
        spare=spare, mem=memory, fix=texts.t(fix, lang),
    )  # fmt: skip


def _engine_budget(c: Candidate, engine: str, lang: Lang, encoder: bool = False) -> str | None:
    """The sentence for a fit at (or past) the edge of the engine's default memory budget
    (vLLM's gpu_memory_utilization 0.9: 28.8 of a 32 GiB card), else ``None``
    (``encoder``: an encoder's budget holds weights and activations, no KV-cache pool)."""
    fraction = engine_profile(engine).memory_fraction
    memory = c.offer.instance.accelerator_memory_gib
    if fraction is None or not memory or c.fit is None:
        return None
    budget = fraction * memory
    need = c.fit.memory.per_device_gib
    spare = budget - need
    if spare >= ENGINE_SPARE_GIB:
        return None
    name = texts.engine_name(engine)
    if spare < 0:
        needed = math.ceil(need / memory * 100) / 100
        return texts.t("engine_budget_over", lang, engine=name, f=fraction,
                       budget=budget, need=need, raise_to=needed)  # fmt: skip
    edge = "engine_budget_edge_encoder" if encoder else "engine_budget_edge"
    return texts.t(edge, lang, engine=name, f=fraction,
                   budget=budget, need=need, spare=spare)  # fmt: skip


def untimed_of(c: Candidate, terms: OptionTerms) -> str:
    """Why candidate ``c`` has no hours (a key of :func:`texts.hours_unknown`): the job's
    reason when no device can time it, else its device's (no decode rate when serving, no
    bandwidth for an RLHF rollout, no peak for the precision)."""
    if terms.serving:
        return "rate"
    if terms.untimed is not None:
        return terms.untimed
    spec = terms.accelerators.resolve(c.offer.instance.accelerator or "")
    if spec is None:
        return "unknown"
    if terms.generates and not spec.mem_bandwidth_gbps:
        return "rollout_bandwidth"
    return "unknown" if peak_tflops(spec, terms.precision) else "peak"


def _unchecked(c: Candidate, terms: OptionTerms) -> bool:
    """The option's money against the budget is unknown: no price, or (a finite job) no
    total because its hours are unknown."""
    if c.price_per_hour is None:
        return True
    return not terms.open_ended and c.total_cost is None


def _estimate_bound(c: Candidate, end: str) -> float | None:
    """An estimated price's range end for all the option's nodes (``None`` if quoted)."""
    price = c.offer.price
    if price is None or not price.estimated:
        return None
    value = price.price_low if end == "low" else price.price_high
    return None if value is None else _round(value * c.nodes)


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _rate_digits(c: Candidate) -> int:
    """Decimals of an option's rate: one, or three below 10 per second (a diffusion
    pipeline's 0.073 images per second would otherwise read 0.1)."""
    rate = c.throughput_tokens_per_s
    return 1 if rate is None or rate >= 10 else 3


def _shown(money: float | None) -> float | None:
    return None if money is None else shown_money(money)


def _pmt(money: float | None) -> str | None:
    return None if money is None else money_text(money)


def _texts(
    c: Candidate, sold: OfferPart, held: FitPart, terms: OptionTerms
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The memoized sentences around the job's own (see :class:`OptionPart`): reasons
    before the ranking sentence, between it and the spot sentence, after it; warnings
    before the unknown-hours one and after it."""
    row = c.offer.instance
    serving, open_ended, lang = terms.serving, terms.open_ended, terms.lang
    head: list[str] = []
    if c.fit is None and row.is_cpu_only and row.vcpus and row.memory_gib:
        need = terms.need
        assert need is not None
        head.append(
            texts.t(
                "cpu_fit",
                lang,
                n=c.nodes,
                nodes="1 node" if c.nodes == 1 else f"{c.nodes} nodes",
                v=row.vcpus * c.nodes,
                m=row.memory_gib * c.nodes,
                need_v=need.vcpus,
                need_m=need.ram_gib,
            )
        )
    head.extend(held.texts)
    middle: list[str] = []
    if serving and c.throughput_tokens_per_s:
        key = "serving" if c.price_per_million_tokens is not None else "serving_unpriced"
        sps = None
        if terms.encoded_len:
            key = key.replace("serving", "encoding_pairs" if terms.pairs else "encoding")
            sps = c.throughput_tokens_per_s / terms.encoded_len
        elif terms.images:
            key = key.replace("serving", "imaging")
        rate = texts.t(
            key,
            lang,
            tps=c.throughput_tokens_per_s,
            pmt=_pmt(c.price_per_million_tokens),
            sps=sps,
            rate=texts.image_rate(c.throughput_tokens_per_s) if terms.images else None,
            every=texts.image_every(c.throughput_tokens_per_s, lang) if terms.images else None,
        )
        if terms.image_batch and key.startswith("imaging"):
            one = 1 / IMAGE_FORWARD_FLOOR_S  # a launch-bound pass per image
            rate += texts.t("image_batch", lang, n=terms.image_batch, one=one)
        if terms.streams and key.startswith("serving"):
            # each replica (one server, or a pipeline of servers: one engine, one batch)
            # runs the concurrency; review rev13s S1: not each server of a pipeline
            stages = c.fit.pipeline_parallel if c.fit is not None else 1
            copies = max(1, c.nodes // max(1, stages))
            each, total = terms.streams, terms.streams * copies
            if c.fit is not None and c.fit.shared and c.fit.batch is not None:
                each, total = c.fit.batch, terms.streams  # the concurrency shared out
            per = round(c.throughput_tokens_per_s / copies / each, 1)
            if per > 0:
                key = "per_request"
                if copies > 1:
                    key = "per_request_servers" if stages == 1 else "per_request_replicas"
                rate += texts.t(key, lang, n=each, per=per, ms=1000 / per, total=total)
        middle.append(rate)
    if terms.dequant is not None and c.fit is not None and c.hours is not None:
        spec = terms.accelerators.resolve(row.accelerator or "")
        if spec is not None and spec.mem_bandwidth_gbps:
            layout = c.fit.tensor_parallel * c.fit.pipeline_parallel
            middle.append(
                terms.dequant.sentence(
                    lang, spec.name, spec.mem_bandwidth_gbps, layout, spec.supports_bf16
                )
            )
    if c.break_even_hours is not None:
        middle.append(texts.t("monthly", lang, even=c.break_even_hours))
    price = c.offer.price
    if open_ended and c.offer.billing == "monthly" and price and price.price_per_month:
        middle.append(texts.t("monthly_commitment", lang, month=price.price_per_month))
    warnings = [*sold.price_warnings, *held.warnings]
    if terms.method is not None and row.accelerator:
        spec = terms.accelerators.resolve(row.accelerator)
        if spec is not None:
            warnings.extend(texts.t(key, lang) for key in method_notes(spec, terms.method))
    if terms.framework is not None and row.accelerator:
        spec = terms.accelerators.resolve(row.accelerator)
        if spec is not None and framework_port(spec, terms.framework):
            warnings.append(texts.t("megatron_on_ascend", lang))  # review 11t T2
    if price is not None and price.price_source == "live" and c.offer.provider in terms.stale_live:
        warnings.append(texts.t("live_stale", lang, as_of=price.as_of))
    return tuple(head), tuple(middle), sold.price, tuple(warnings), sold.row_warnings
