"""``recommend``: workload + constraints + catalog → ranked, explained options.

Pure: the same request on the same catalog snapshot gives the same answer (no clock, no
I/O), which is what makes answers cacheable by (request, catalog fingerprint).

A pipeline of six stages, each a module with one job and a typed hand-off:

1. **resolve** (:mod:`.resolve`): the workload sized, the constraint names resolved
   into a filter → :class:`~.resolve.Resolved`;
2. **filter** (:mod:`.filters`): the catalog's buckets that pass → ``Passing`` rows;
3. **place** (:mod:`.place`): where the job fits on each instance shape, and for how
   long → ``Placements`` and ``Variant`` s;
4. **price** (:mod:`.price`): each (offer group, variant) priced and keyed → ``Plan``;
5. **rank** (:mod:`.rank`): branch and bound over the lanes (:mod:`.lanes`, the
   filter's rows joined with their placements, ordered by :mod:`.bounds`), pulling 2-4
   as far as the answer needs, then the best ``top_k`` Pareto-marked → ``Candidate`` s;
6. **explain** (:mod:`.explain`): options, estimate, advice, summary; when nothing is
   left, what removed what and the nearest option per lifted constraint.

What answers share across requests sits behind one seam, the
:class:`~service.planning.memo.PlanCache` the stages consult; what the answers of one
class (the same request at any job length) share in the explain stage is kept there per
class (:class:`~service.planning.explain.AnswerParts`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from service.catalog.aggregate import OfferBucket
from service.catalog.models import AcceleratorSpec, InstanceType
from service.planning.candidates import Candidate
from service.planning.context import PlanContext
from service.planning.explain import (
    FULL_SERVER,
    AnswerParts,
    Ranked,
    answer_terms,
    beyond_limit_hint,
    explain,
    lever_hint,
    precision_short_sentence,
)
from service.planning.faster import with_faster
from service.planning.filters import Shape, passing
from service.planning.lanes import LaneIndex, lane_index
from service.planning.memo import PlanCache, answer_signature
from service.planning.place import Placer
from service.planning.rank import plan_for, select, with_best_spot
from service.planning.resolve import DEADLINE_MAX_NODES, Resolved, node_limit, resolve
from service.planning.schema import Lang, RecommendRequest, RecommendResponse, RelaxHint
from service.planning.width import default_global_batch, global_batch, micro_batch, shortened
from service.runtime.errors import InputError
from service.sizing.profiles import CHUNKED_LOSS_BYTES, PROFILES
from service.sizing.resolve import (
    ROLLOUT_TP,
    ROLLOUT_TP_DEFAULT,
    checkpoint_view,
    rollout_tensor_parallel,
)
from service.sizing.workload import Finetune, Inference, Rlhf, Workload, validate_workload

__all__ = ["PlanContext", "recommend"]


def recommend(req: RecommendRequest, ctx: PlanContext, lang: Lang) -> RecommendResponse:
    view = checkpoint_view(req.workload, ctx.models)  # a quantized checkpoint's precision
    if view is not req.workload:
        req = msgspec.structs.replace(req, workload=view)
    cache = ctx.cache()
    buckets = ctx.snapshot.buckets
    # The snapshot by identity: the class holds it, so no other one can take its id.
    key = (answer_signature(req, req.workload), lang, id(ctx.snapshot), ctx.stale_live,
           ctx.accelerators, ctx.models)  # fmt: skip
    known = cache.answer_class(buckets, key, lambda: AnswerClass(req, ctx, cache, lang))
    resolved = known.resolved(req)
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature, known.share)
    index = known.lanes(buckets, placer)
    plan = plan_for(buckets, resolved.flt, placer, req, index=index)
    top = select(plan, req.top_k)
    if not top and placer.job.serving and not placer.job.cpu_only and not index.lanes(placer):
        # no server the filters pass holds the model: replicas over several servers
        placer = placer.spanning()
        index = known.spanning_lanes(buckets, placer)
        plan = plan_for(buckets, resolved.flt, placer, req, index=index)
        top = select(plan, req.top_k)
    top = with_faster(top, buckets, resolved.flt, placer, req)
    if resolved.interruptible:
        top = with_best_spot(top, plan, buckets, resolved.flt, placer, req)
    if not top:  # explain: count what each constraint removed, offer by offer
        plan = plan_for(buckets, resolved.flt, placer, req, count_removed=True, index=index)
    answer = explain(Ranked(resolved, placer, plan, top), ctx, cache, lang, known.parts)
    if not top:
        answer = _with_levers(answer, req, plan.removed, ctx, cache, lang)
    return answer


LONG_SEQUENCE = 8192
"""Tokens per sequence from which the logits (sequence x vocabulary) decide a fine-tune's
memory: at 32k tokens and Qwen's 152k vocabulary, 16 B per logit is 74 GiB (review 4 F11)."""


SERVED_LOWER = {
    "bf16": ("int8", "int4"),
    "fp16": ("int8", "int4"),
    "fp32": ("int8", "int4"),
    "fp8": ("int4",),
    "int8": ("int4",),
}
"""Serving: the weight formats below each precision, tried in this order as levers
(review 5 G5: a 7B chatbot under ¥6.85/h fits one A10 in INT4). Whether a device runs a
format is the planner's own capability check, so a lever names only devices that do."""


UNITS_MISSING = {"fp8": "int8"}
"""Serving: the weight format a device without FP8 units serves at the same memory, tried
as a lever when the precision asked removed devices (review 11s V3): A100 and Ascend 910B
run W8A8 INT8 (vLLM's compressed-tensors INT8 on Ampere; msModelSlim W8A8 loaded by MindIE
or vllm-ascend, e.g. Qwen3-235B-A22B-W8A8 on one Atlas 800I A2,
https://docs.vllm.ai/projects/ascend/en/latest/tutorials/models/Qwen3-235B-A22B.html).
Whether a device runs it is the planner's own capability check."""


LOAD_SHARES = (0.5, 0.25)
"""Serving: the shares of the asked load (throughput target, else concurrent sequences)
tried as levers, the larger first: what the servers allowed do reach, to a factor of 2."""


def serving_levers(
    req: RecommendRequest, removed: Counter[str]
) -> list[tuple[str, RecommendRequest]]:
    """Other ways to serve the same model that an empty answer can name, each with the
    field it changes (review 5 G5): lower-precision weights and half or a quarter of the
    load when memory, the node limit or the price cap removed options, and more servers
    when ``max_nodes`` did."""
    workload = req.workload
    if not isinstance(workload, Inference):
        return []
    found: list[tuple[str, RecommendRequest]] = []
    if removed.get("precision") and workload.precision in UNITS_MISSING:
        # the devices asked have no units for the format: the one they serve instead
        instead = msgspec.structs.replace(workload, precision=UNITS_MISSING[workload.precision])
        found.append(("precision", msgspec.structs.replace(req, workload=instead)))
    if removed.get("memory") or removed.get("max_nodes") or removed.get("max_price_per_hour"):
        for precision in SERVED_LOWER.get(workload.precision, ()):
            lower = msgspec.structs.replace(workload, precision=precision)
            found.append(("precision", msgspec.structs.replace(req, workload=lower)))
    short = removed.get("memory") or removed.get("max_nodes") or removed.get("max_price_per_hour")
    target, users = workload.target_tokens_per_s, workload.concurrency
    for share in LOAD_SHARES if short else ():  # less load on the servers allowed
        if target:
            lighter = msgspec.structs.replace(workload, target_tokens_per_s=target * share)
            found.append(("target_tokens_per_s", msgspec.structs.replace(req, workload=lighter)))
        elif users is not None and users > 1:
            lighter = msgspec.structs.replace(workload, concurrency=max(int(users * share), 1))
            found.append(("concurrency", msgspec.structs.replace(req, workload=lighter)))
    c = req.constraints
    if removed.get("max_nodes") and c.max_nodes is not None:
        wider = msgspec.structs.replace(c, max_nodes=None)
        found.append(("max_nodes", msgspec.structs.replace(req, constraints=wider)))
    return found


OFFLOAD_FRAMEWORKS = frozenset({"hf", "deepspeed", "llama-factory", "ms-swift"})
"""Trainers that run DeepSpeed ZeRO, hence its ZeRO-Offload (``offload_optimizer``): the
Hugging Face Trainer and the stacks built on it (LLaMA-Factory, ms-swift) take a DeepSpeed
config, https://huggingface.co/docs/transformers/main/en/deepspeed ("ZeRO-Offload"). Not
Megatron/MindSpeed (distributed optimizer, no ZeRO-3), torchtune, torchtitan or Unsloth."""
LIGER_FRAMEWORKS = frozenset({"hf", "llama-factory", "ms-swift"})
"""Trainers that switch on Liger Kernel's fused linear cross-entropy, which computes the
loss in chunks without the full fp32 logits (sized as ``chunked_loss``): the Hugging Face
Trainer's ``use_liger_kernel=True`` (transformers docs/source/en/trainer.md, "Liger
Kernel"; https://github.com/linkedin/Liger-Kernel), LLaMA-Factory's
``enable_liger_kernel: true`` and ms-swift's ``--use_liger_kernel true``, both passed on to
that Trainer (review 8 K7: a 32k LoRA was told to move to Unsloth instead)."""
VLLM_ROLLOUTS = "ms-swift"
"""The RLHF trainer an empty answer names when a generate()-loop rollout does not fit:
ms-swift's GRPO runs vLLM colocated with the training (``--use_vllm true --vllm_mode
colocate --vllm_tensor_parallel_size 4 --sleep_level 1`` in
examples/train/grpo/internal/vllm_vl7b.sh @32e19a4e,
https://github.com/modelscope/ms-swift), sized as the vLLM rollouts of
:func:`~service.sizing.resolve.rollout_tensor_parallel`."""


def levers(workload: Workload) -> list[tuple[str, Workload]]:
    """Other ways to run the same fine-tune that need less memory, each with the field it
    changes (review 4 F11): QLoRA instead of LoRA (the frozen base in 4 bits); for a full
    fine-tune under a ZeRO trainer, ZeRO-Offload of the optimizer states and gradients to
    CPU RAM (review 7 J16: 70B on exactly 16 A100-80GB fits only so); for a full
    fine-tune, LoRA, else QLoRA (review 8 K9: a method change, said as such); for long
    sequences, a loss computed in chunks that keeps no fp32 copy of the logits: first
    Liger's fused loss in the same trainer (:data:`LIGER_FRAMEWORKS`), then a trainer
    built around one (Unsloth for LoRA/QLoRA, torchtune for full fine-tunes, often
    cheaper but a change of stack); all sized by
    :data:`~service.sizing.profiles.CHUNKED_LOSS_BYTES`. For a PPO/GRPO job whose
    rollout runs the training model's own generate() loop (DeepSpeed-Chat's hybrid engine,
    TRL, LLaMA-Factory: a whole 16-bit copy of the actor on every device), a trainer that
    rolls out on colocated vLLM, tensor parallel over the devices (:data:`VLLM_ROLLOUTS`)."""
    if isinstance(workload, Rlhf):
        whole_copy = ROLLOUT_TP.get(workload.framework, ROLLOUT_TP_DEFAULT) == 1
        if workload.algorithm in ("ppo", "grpo") and whole_copy:
            return [("framework", msgspec.structs.replace(workload, framework=VLLM_ROLLOUTS))]
        return []
    if not isinstance(workload, Finetune):
        return []
    found: list[tuple[str, Workload]] = []
    if workload.method == "lora":
        found.append(("method", msgspec.structs.replace(workload, method="qlora")))
    if (
        workload.method == "full"
        and workload.offload == "none"
        and workload.framework in OFFLOAD_FRAMEWORKS
    ):
        found.append(("offload", msgspec.structs.replace(workload, offload="optimizer")))
    if workload.method == "full":  # a method change: LoRA, else QLoRA (review 8 K9)
        for method in ("lora", "qlora"):  # the adapters' optimizer needs no offload
            adapted = msgspec.structs.replace(workload, method=method, offload="none")
            found.append(("method", adapted))
    profile = PROFILES.get(workload.framework)
    if (
        workload.seq_len >= LONG_SEQUENCE
        and profile is not None
        and profile.logit_bytes > CHUNKED_LOSS_BYTES
        and workload.method in ("full", "lora", "qlora")
    ):
        if workload.framework in LIGER_FRAMEWORKS and not workload.chunked_loss:
            # first the same trainer with its fused, chunked loss (review 8 K7)
            found.append(("chunked_loss", msgspec.structs.replace(workload, chunked_loss=True)))
        chunked = "torchtune" if workload.method == "full" else "unsloth"
        found.append(("framework", msgspec.structs.replace(workload, framework=chunked)))
    return found


def batch_lever(workload: Workload) -> tuple[Workload, dict[str, int | str]] | None:
    """A short fine-tune (or DPO) planned at the short-run rule's smaller global batch
    (:func:`~service.planning.width.global_batch`: the power of two leaving about 500
    optimizer steps), changed to the recipes' batch (:data:`~service.planning.width.
    FINETUNE_GLOBAL_BATCH`, Stanford Alpaca's 128), with the figures its sentence says;
    ``None`` when the request sent a batch or an accumulation, or the rule did not bind.
    The smaller batch caps the data-parallel replicas at batch / micro batch, so a
    deadline every option misses may be met at the recipes' batch (session 13 rev13t)."""
    if not isinstance(workload, Finetune | Rlhf):
        return None
    if getattr(workload, "gradient_accumulation_steps", None):
        return None
    tokens, seq_len = workload.tokens, workload.seq_len
    batch, recipe = global_batch(workload, tokens), default_global_batch(workload)
    micro = micro_batch(workload)
    if batch is None or recipe is None or not tokens or not seq_len or recipe % micro:
        return None
    if not shortened(workload, batch) or (
        isinstance(workload, Rlhf) and workload.algorithm != "dpo"
    ):
        return None
    sequences = tokens / seq_len
    pairs = isinstance(workload, Rlhf)  # DPO's batch counts preference pairs
    figures: dict[str, int | str] = {
        "batch": recipe, "assumed": batch, "replicas": max(batch // micro, 1),
        "steps": round(sequences / batch), "new_steps": round(sequences / recipe),
        "unit_en": "pairs" if pairs else "sequences", "unit_zh": "对样本" if pairs else "条序列",
    }  # fmt: skip
    return msgspec.structs.replace(workload, global_batch_size=recipe), figures


def _with_levers(
    answer: RecommendResponse,
    req: RecommendRequest,
    removed: Counter[str],
    ctx: PlanContext,
    cache: PlanCache,
    lang: Lang,
) -> RecommendResponse:
    """An empty answer with, for each lever that changes the job's memory
    (:func:`levers`, when memory removed options) or how it is served
    (:func:`serving_levers`), the nearest option it lets through under the same
    constraints: computed, not guessed (one bounded ranking per lever, only for an empty
    answer; per field, the first lever that finds one). A training job short of memory
    under ``max_accelerators`` is also told how many accelerators it needs
    (:func:`_beyond_limit`); a served model that no lower precision lets through, why
    (review 8 K10: the memory per device at the lowest one tried)."""
    hints, words = [], []
    short = removed.get("memory", 0)
    tried = [
        (field, msgspec.structs.replace(req, workload=workload))
        for field, workload in (levers(req.workload) if short else [])
    ]
    batch = batch_lever(req.workload) if removed.get("deadline_hours", 0) else None
    if batch is not None:  # the deadline missed at the short run's own smaller batch
        tried.append(("global_batch_size", msgspec.structs.replace(req, workload=batch[0])))
    said: set[str] = set()
    lowest: tuple[Resolved, Placer] | None = None  # serving: the lowest precision tried
    for field, changed in [*tried, *serving_levers(req, removed)]:
        if field in said:  # the first lever of a field that lets an option through
            continue
        asked = msgspec.structs.replace(changed, top_k=1)
        try:
            resolved = resolve(asked, ctx, cache)
        except InputError:
            continue  # the lever does not apply to this job (e.g. a model QLoRA cannot load)
        placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
        best = select(plan_for(ctx.snapshot.buckets, resolved.flt, placer, asked), 1)
        if not best and field == "precision" and not resolved.job.cpu_only:
            # as recommend() serves a model no server holds: replicas over several servers
            placer = placer.spanning()
            best = select(plan_for(ctx.snapshot.buckets, resolved.flt, placer, asked), 1)
            lowest = (resolved, placer)
        if best:
            count = removed.get(field, 0) or short
            if field == "global_batch_size":
                count = removed["deadline_hours"]
            b, fit = resolved.rw.training, best[0].fit
            tp = 0
            if isinstance(asked.workload, Rlhf) and b is not None and fit is not None:
                tp = rollout_tensor_parallel(b, best[0].devices, fit.tensor_parallel)
            key = None
            if field == "method" and getattr(req.workload, "method", None) == "full":
                key = f"lever_method_{getattr(asked.workload, 'method', '')}"
            figures = batch[1] if batch is not None and field == "global_batch_size" else None
            hint, text = lever_hint(
                field, asked.workload, best[0], count, ctx, lang, tp, key, figures
            )
            hints.append(hint)
            words.append(text)
            said.add(field)
    beyond = _beyond_limit(answer, req, removed, ctx, cache, lang, said) if short else None
    if beyond is not None:  # how many accelerators the job needs, said first
        hints.insert(0, beyond[0])
        words.insert(0, beyond[1])
    advice = answer.advice
    if short and lowest is not None and "precision" not in said:
        sentence = precision_short_sentence(*lowest, ctx, lang)
        if sentence is not None:  # and no advice that quantization would cut the memory
            words.append(sentence)
            advice = [a for a in advice if a.topic != "serving"]
    if not hints and not words:
        return answer
    return msgspec.structs.replace(
        answer, relax=[*answer.relax, *hints], warnings=[*answer.warnings, *words], advice=advice
    )


BEYOND_LIMIT_KINDS = 10
"""Options a training job beyond its ``max_accelerators`` is ranked to (one planner run):
the kinds of server among them are where the fewest accelerators are looked for."""


def _beyond_limit(
    answer: RecommendResponse,
    req: RecommendRequest,
    removed: Counter[str],
    ctx: PlanContext,
    cache: PlanCache,
    lang: Lang,
    said: set[str],
) -> tuple[RelaxHint, str] | None:
    """A training job that no ``max_accelerators`` hold (review 8 K9: DeepSeek-V3 full
    fine-tune on 8 accelerators was told only its 1,388 GiB per device): the cheapest
    option without the limit, over as many servers as a deadline may call for
    (:data:`~service.planning.resolve.DEADLINE_MAX_NODES`, or the ``max_nodes`` asked),
    and the fewest accelerators that hold it: for each kind of server among the options
    ranked, the fewest servers the planner's own fit holds it on (a bisection below the
    planner's node count, whose ladder doubles past 8 servers), priced by the planner at
    that exact count (an unpriced one ranked by time); for a full fine-tune whose
    ZeRO-Offload lever did not fit the limit (``said``: the levers that did), the cheapest
    option with offload too, when it needs fewer. At most four planner runs; ``None``
    when the relax hints already lifted the limit, or nothing fits without it either."""
    c = req.constraints
    limit = c.max_accelerators
    if (
        limit is None
        or c.accelerator_count is not None
        or isinstance(req.workload, Inference)
        or any(h.constraint == "max_accelerators" for h in answer.relax)
    ):
        return None
    nodes = c.max_nodes if c.max_nodes is not None else max(node_limit(req), DEADLINE_MAX_NODES)
    wider = msgspec.structs.replace(c, max_accelerators=None, max_nodes=nodes)
    asked = msgspec.structs.replace(req, constraints=wider, top_k=BEYOND_LIMIT_KINDS)
    try:
        resolved = resolve(asked, ctx, cache)
    except InputError:
        return None
    if resolved.job.serving or resolved.job.cpu_only:
        return None
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    found = select(plan_for(ctx.snapshot.buckets, resolved.flt, placer, asked), BEYOND_LIMIT_KINDS)
    if not found:
        return None
    cheapest = found[0]
    fewest: Candidate | None = None
    for devices, accelerator in _fewest_kinds(resolved, placer, ctx, cache, nodes):
        row = cheapest.offer.instance
        if accelerator == row.accelerator and devices == cheapest.nodes * row.accelerator_count:
            fewest = cheapest
            break
        exact = msgspec.structs.replace(wider, accelerator_count=devices,
                                        accelerators=[accelerator])  # fmt: skip
        at = msgspec.structs.replace(req, constraints=exact, top_k=1)
        fewest = _first_option(at, ctx, cache)
        if fewest is not None and fewest.offer.price is None:  # unpriced: the cost
            # ranking keeps the catalog's order (96 h where another type of it takes 11 h)
            fewest = _first_option(msgspec.structs.replace(at, objective="time"), ctx, cache)
        if fewest is not None:
            break
    zero = None if fewest is None or fewest.fit is None else fewest.fit.zero_stage
    workload = req.workload
    full = isinstance(workload, Finetune) and workload.method == "full"
    offloaded = None
    offload = [w for field, w in levers(workload) if field == "offload"]
    if fewest is not None and offload and "offload" not in said:
        # ZeRO-Offload did not fit the limit either: how few it needs without it
        light = msgspec.structs.replace(asked, workload=offload[0], top_k=1)
        offloaded = _first_option(light, ctx, cache)
    count = removed.get("max_accelerators", 0) or removed.get("memory", 0)
    return beyond_limit_hint(limit, cheapest, fewest, zero, full, count, ctx, lang, offloaded)


FEWEST_TRIES = 3
"""Kinds of server :func:`_beyond_limit` prices at their fewest accelerators at most, the
fewest first, until the planner places one (a kind whose fit holds the job may still be
refused at that exact count, e.g. by a framework's layout limit)."""


def _fewest_kinds(
    resolved: Resolved, placer: Placer, ctx: PlanContext, cache: PlanCache, nodes: int
) -> list[tuple[int, str]]:
    """(accelerators, accelerator) at the fewest servers that hold the job, for every kind
    of server in the catalog that passes the request's filters (review 8 K9, session 13:
    the kinds among the ten cheapest options alone missed a larger-memory kind ranked
    below them), at most ``nodes`` servers of it (one without RDMA); the fewest first, in
    whole servers of 8 first (140 devices as 35 × 4 read as 18 servers of 8: the 18 × 8
    layout, fewer servers, is the one to name), then the fewest servers. At most
    :data:`FEWEST_TRIES`, one per accelerator."""
    rows = passing(ctx.snapshot.buckets, resolved.flt, cache)
    kinds: dict[Shape, InstanceType] = {}
    for part in (rows.priced(), rows.unpriced()):
        for shape, row in part.shapes:
            kinds.setdefault(shape, row)
    ranked: list[tuple[tuple[int, int], int, str]] = []
    fits = placer.fits
    for shape, row in kinds.items():
        spec = ctx.accelerators.resolve(row.accelerator or "")
        if spec is None or not placer.placeable(row, shape):
            continue
        per_node = max(row.accelerator_count, 1)
        most = nodes if shape[3] else 1
        if fits.fit_within(spec, per_node * most, fits.tp_limit(spec, per_node)) is None:
            continue
        servers = _fewest_servers(placer, spec, per_node, most)
        devices = servers * per_node
        ranked.append(((-(-devices // FULL_SERVER), servers), devices, row.accelerator or ""))
    ranked.sort()
    out: list[tuple[int, str]] = []
    for _, devices, accelerator in ranked:
        if all(a != accelerator for _, a in out):
            out.append((devices, accelerator))
        if len(out) == FEWEST_TRIES:
            break
    return out


def _first_option(at: RecommendRequest, ctx: PlanContext, cache: PlanCache) -> Candidate | None:
    """The first option the planner ranks for ``at`` (a lever's request), ``None`` when it
    has none or is not a request the service takes."""
    try:
        resolved = resolve(at, ctx, cache)
    except InputError:
        return None
    placer = Placer(resolved.job, ctx.accelerators, cache, resolved.signature)
    best = select(plan_for(ctx.snapshot.buckets, resolved.flt, placer, at), 1)
    return best[0] if best else None


def _fewest_servers(placer: Placer, spec: AcceleratorSpec, per_node: int, servers: int) -> int:
    """The fewest servers of ``per_node`` × ``spec`` whose devices hold the job by the
    planner's own fit (:meth:`~service.planning.place.FitCache.fit_within`), at most
    ``servers`` (where the planner placed it): a bisection, the sharded memory per device
    falling as the devices grow."""
    fits = placer.fits
    tp_max = fits.tp_limit(spec, per_node)
    low, high = 0, servers  # low does not hold it, high does
    while high - low > 1:
        middle = (low + high) // 2
        if fits.fit_within(spec, per_node * middle, tp_max) is not None:
            high = middle
        else:
            low = middle
    return high


class AnswerClass:
    """What the answers of one class — the same request at any job length, in one
    language — share: the request resolved (but for its length), its lanes and the
    explain stage's parts. Built by the first request of the class (a request the resolve
    stage refuses builds nothing: the next one is refused the same way)."""

    __slots__ = ("_index", "_spanning", "first", "parts", "share", "snapshot")

    def __init__(self, req: RecommendRequest, ctx: PlanContext, cache: PlanCache, lang: Lang):
        self.snapshot = ctx.snapshot
        """Held so that its id, in the class's key, is never another snapshot's."""
        self.first = resolve(req, ctx, cache)
        placer = Placer(self.first.job, ctx.accelerators, cache, self.first.signature)
        self.share = placer.share()
        """What the placers of the class's answers share (:meth:`Placer.share`)."""
        self.parts = AnswerParts(answer_terms(req, placer, ctx, lang), ctx)
        self._index: LaneIndex | None = None
        self._spanning: LaneIndex | None = None

    def resolved(self, req: RecommendRequest) -> Resolved:
        """The resolve stage's hand-off for ``req``, a request of this class: the filter
        and signature are the class's; the workload is resolved again for its length as
        :func:`~service.planning.resolve.resolve_job` does (validated: the rules also
        cover the length fields)."""
        first = self.first
        job = first.job
        if job.rw.workload is not req.workload:
            validate_workload(req.workload)
            rw = job.rw.with_length(req.workload)
            job = job.at_length(rw, getattr(req.workload, "output_tokens", None))
        return first.at_length(req, job)

    def lanes(self, buckets: Sequence[OfferBucket], placer: Placer) -> LaneIndex:
        """The class's lanes (one filter, one workload shape, the catalog's ``buckets``)."""
        if self._index is None:
            self._index = lane_index(buckets, self.first.flt, placer)
        return self._index

    def spanning_lanes(self, buckets: Sequence[OfferBucket], placer: Placer) -> LaneIndex:
        """The class's lanes with serving replicas over several servers (``placer``:
        :meth:`~service.planning.place.Placer.spanning`)."""
        if self._spanning is None:
            self._spanning = lane_index(buckets, self.first.flt, placer)
        return self._spanning
