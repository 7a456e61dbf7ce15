"""Batching a serving job to a throughput target: how many sequences one server runs at once.

A throughput target is aggregate tokens/s over many requests, and a serving engine
batches them (continuous batching, Yu et al. 2022, Orca; Kwon et al. 2023, vLLM): a decode
step reads the weights once for the whole batch, so a server's rate grows with its batch
until the KV cache fills or the scheduler's ceiling (:attr:`EngineProfile.max_batch`) is
reached. Sizing such a target at one sequence per server replicates single-stream servers
— tens of times the accelerators an engine needs. When the request gives no concurrency,
the planner sizes each server at the batch its memory holds, or at the smallest batch that
already reaches the target on one server (lower latency, same machine). A batch job (a
fixed number of output tokens, no target) has no latency to keep: it runs at the batch its
memory holds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from service.sizing.profiles import ASCEND_MAX_BATCH, engine_profile
from service.sizing.resolve import ResolvedWorkload, inference_budget
from service.sizing.workload import Inference, Workload

BATCH_HEADROOM_FRAC = 0.10
"""Device memory kept free when choosing the batch: the planner's default headroom
(``constraints.min_headroom_pct`` = 10), so ``/v1/estimate`` batches the same job on the
same server as ``/v1/recommend`` does."""

BATCHED_TARGET: dict[Literal["zh", "en"], str] = {
    "zh": "未给出并发数：按推理引擎的连续批处理，假设同时处理约 {b} 个请求，"
    "这是单台达到目标吞吐所需的最少并发。",
    "en": "No concurrency was given: assumed about {b} requests served at once (the "
    "engine's continuous batching), the fewest with which one node reaches the target.",
}
"""The words for a batch that reaches the target on one server (both routes say them)."""
BATCHED_ROOM: dict[Literal["zh", "en"], str] = {
    "zh": "未给出并发数：按推理引擎的连续批处理，假设每台同时处理约 {b} 个请求："
    "其上每个引擎实例处理其 KV 缓存能容纳的数量，最多为引擎默认的批上限。",
    "en": "No concurrency was given: assumed about {b} requests served at once per node "
    "(the engine's continuous batching): each engine instance on it serves as many as its "
    "KV cache holds, up to the engine's default batch limit.",
}
"""The words for a batch as large as one server holds (the target needs more servers).
The limit is said per engine instance after the server's figure, which several copies
share (review 11s V9: "1024 per node (at most 256 per engine instance)" read as a
contradiction)."""
BATCHED_JOB: dict[Literal["zh", "en"], str] = {
    "zh": "未给出并发数：固定输出量的离线批量任务按推理引擎的连续批处理运行，"
    "假设每台同时生成约 {b} 条序列：其上每个引擎实例生成其 KV 缓存能容纳的数量，"
    "最多为引擎默认的批上限（{lim}）。",
    "en": "No concurrency was given: a batch job of a fixed number of output tokens runs "
    "with the engine's continuous batching, so assumed about {b} sequences generated at "
    "once per node: each engine instance on it runs as many as its KV cache holds, up to "
    "the engine's default batch limit ({lim}).",
}
"""The words for a batch job's batch (no target: as many as one server holds; both routes
say them); ``{lim}``: :func:`batch_limit_words` of the job's engine."""

_LIMIT_SETTING = {"vllm": "max_num_seqs", "lmdeploy": "max_batch_size"}
"""The setting that caps the engines whose default :attr:`EngineProfile.max_batch` was
checked (see there); the others are planned at vLLM's."""


def batch_limit_words(engine: str, lang: Literal["zh", "en"], ascend: bool = False) -> str:
    """The engine's default batch limit as a batch job's words say it: its own setting
    (vLLM ``max_num_seqs`` 256, LMDeploy ``max_batch_size`` 128), or vLLM's 256 for an
    engine whose default is not checked (an LMDeploy job was told vLLM's 256: review 9b).
    ``ascend``: on an Ascend NPU the engine is named as it runs there
    (:data:`~service.sizing.profiles.ON_ASCEND`: LMDeploy's PyTorch engine, not the
    CUDA-only TurboMind), and where its own default differs from the one planned
    (:data:`~service.sizing.profiles.ASCEND_MAX_BATCH`, 256) both are said (review 13s S6)."""
    profile = engine_profile(engine, ascend)
    setting = _LIMIT_SETTING.get(profile.name)
    label = profile.label_in(lang)
    own = ASCEND_MAX_BATCH.get(profile.name) if ascend else None
    if setting is not None and own is not None and own != profile.max_batch:
        if lang == "zh":
            return f"{label} 在昇腾上的 {setting} 默认 {own}，此处按 {profile.max_batch} 计"
        return f"{label} {setting} {own} by default on Ascend, {profile.max_batch} assumed"
    if setting is not None:
        if lang == "zh":
            return f"{label} 的 {setting} 默认 {profile.max_batch}"
        return f"{label} {setting} {profile.max_batch}"
    if lang == "zh":
        return f"{label} 的默认值未核实，按 vLLM 的 {profile.max_batch} 计"
    return f"{profile.label}'s own not checked, vLLM's {profile.max_batch} assumed"


ENCODER_BATCH_TARGET: dict[Literal["zh", "en"], str] = {
    "zh": "未给出并发数：假设{each}每次前向编码约 {b} 条序列，这是单台达到目标吞吐所需的最小批量。",
    "en": "No concurrency was given: assumed batches of about {b} {noun} per forward pass"
    "{each}, the smallest with which one node reaches the target.",
}
"""An encoder's batch (sequences per forward pass) that reaches the target on one server;
``{each}``: :func:`encoder_each` (a server of several copies states one copy's batch);
``{noun}``: :func:`sequences_noun`."""
ENCODER_BATCH_ROOM: dict[Literal["zh", "en"], str] = {
    "zh": "未给出并发数：假设每台{each}每次前向编码约 {b} 条序列，即显存能容纳的批量"
    "（不超过引擎默认的批上限）。",
    "en": "No concurrency was given: assumed batches of about {b} {noun} per forward pass "
    "per node{each}, as many as its memory holds (at most the engine's default batch limit).",
}
"""An encoder's batch as large as one server holds (the target needs more servers)."""

_EACH_COPY: dict[Literal["zh", "en"], str] = {"zh": "每个副本", "en": " on each copy of the model"}


def sequences_noun(b: int) -> str:
    """ "sequence" or "sequences" after the number ``b`` (Chinese has no plural)."""
    return "sequence" if b == 1 else "sequences"


def encoder_each(lang: Literal["zh", "en"], copies: int) -> str:
    """The words an encoder's batch sentence says it per copy with, when the server runs
    several copies (each its own forward passes: the batch said is one copy's)."""
    return _EACH_COPY[lang] if copies > 1 else ""


def batches(workload: Workload) -> bool:
    """Serving without a concurrency on an engine that batches, either to a throughput
    target or as a batch job (a fixed number of output tokens, no latency target): an
    offline job is run at the engine's batch limit — vLLM's ``LLM.generate`` schedules up
    to ``max_num_seqs`` sequences per step (``EngineArgs``, see
    :attr:`EngineProfile.max_batch`) — not one sequence at a time."""
    return (
        isinstance(workload, Inference)
        and workload.concurrency is None
        and (workload.target_tokens_per_s is not None or bool(workload.output_tokens))
        and engine_profile(workload.serving_engine).max_batch > 1
    )


def batches_to_target(workload: Workload) -> bool:
    """Serving with a throughput target and no concurrency, on an engine that batches."""
    return (
        isinstance(workload, Inference)
        and workload.concurrency is None
        and workload.target_tokens_per_s is not None
        and engine_profile(workload.serving_engine).max_batch > 1
    )


def degree_target(workload: Workload) -> float:
    """The tokens/s a served workload's tensor-parallel degree is chosen to reach on one
    server's copies (:func:`~service.sizing.replicas.lowest_fit`): its throughput target
    when the request leaves the batch to the server (no concurrency): copies at a lower
    degree then each batch up to what reaches it. ``math.inf`` (the fastest degree) when
    the sequences are fixed: a concurrency given, or none and no target (one stream), or a
    batch job (its hours follow its rate, review 10 K6). Decoding reads every weight once
    per step whatever the batch, so splitting a fixed set of sequences over more copies
    cuts each copy's batch and the server's rate with it: Qwen3-32B at 64 x 4k on 8 x H20
    is 4,656 tokens/s at tensor parallel 8 and 1,129 as 8 one-card copies of 8 sequences
    each (session 13, the concurrency half of ``enctp13`` taken back)."""
    if not isinstance(workload, Inference):
        return math.inf
    if workload.concurrency is None and workload.target_tokens_per_s is not None:
        return workload.target_tokens_per_s
    return math.inf


def batch_ceiling(workload: Inference) -> int:
    """The engine's default ceiling on sequences run at once."""
    return engine_profile(workload.serving_engine).max_batch


def at_concurrency(rw: ResolvedWorkload, concurrency: int) -> ResolvedWorkload:
    """``rw`` served at ``concurrency`` sequences (KV cache, prefill chunk and logits
    re-sized; the architecture and weights are the same)."""
    workload = rw.workload
    assert isinstance(workload, Inference)
    assert rw.arch is not None
    served = msgspec.structs.replace(workload, concurrency=concurrency)
    asked: list[str] = []
    inference_budget(workload, rw.arch, asked)
    notes: list[str] = []
    budget = inference_budget(served, rw.arch, notes)
    said = dict(zip(asked, notes, strict=True))  # the KV-cache note names the sequences
    assumptions = tuple(said.get(note, note) for note in rw.assumptions)
    return dataclasses.replace(rw, workload=served, inference=budget, assumptions=assumptions)


def batch_for(
    fits: Callable[[int], bool], rate: Callable[[int], float], ceiling: int, target: float
) -> int | None:
    """Sequences one server runs: the largest batch up to ``ceiling`` that ``fits`` its
    memory, or, when that batch reaches ``target`` tokens/s alone, the smallest that does
    (memory grows and the rate does not fall with the batch: both searches are binary);
    ``None`` when not even one sequence fits."""
    if not fits(1):
        return None
    lo, hi = 1, ceiling
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    if rate(lo) < target:
        return lo
    lo, hi = 1, lo
    while lo < hi:
        mid = (lo + hi) // 2
        if rate(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


RATE_TIE_REL = 1e-9
"""Rates of two degrees this close are one rate (see
:data:`service.sizing.replicas.RATE_TIE_REL`, the same rule)."""


def copies_batch(
    degrees: Sequence[int],
    copies: Callable[[int], int],
    fits: Callable[[int, int], bool],
    rate: Callable[[int, int], float],
    ceiling: int,
    target: float,
) -> tuple[int, int] | None:
    """(sequences on the server, tensor-parallel degree) of a server batched without a
    concurrency, when it may hold several copies of the model (review 10 K6/R7; session
    13 ``enctp13``).

    The engine's batch limit (``ceiling``: vLLM ``max_num_seqs``, LMDeploy
    ``max_batch_size``, :attr:`~service.sizing.profiles.EngineProfile.max_batch`) is a
    setting of one engine instance's scheduler, and each data-parallel copy is its own
    instance with its own KV-cache pool (vLLM's data-parallel deployment guide:
    "model weights are replicated across separate instances/GPUs to process independent
    batches of requests", https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/).
    So each ``degree`` (ascending) is batched on its own: ``copies(degree)`` copies, each
    at most at the largest batch up to ``ceiling`` that ``fits`` its memory (``fits(
    sequences on the server, degree)``), timed by ``rate(sequences, degree)``.

    A throughput target (``target`` finite) is served at the *lowest* degree whose copies
    reach it (:func:`lowest_reaching`), each copy at the fewest sequences that do: a model
    that fits fewer devices than the server has is served as data-parallel copies, not
    split over every card ("If your model fits in a single GPU, you probably don't need to
    use distributed inference", vLLM Distributed Inference and Serving,
    https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html): every wider split
    adds an all-reduce per layer, while copies add throughput in proportion. A target no
    degree reaches on one server, and a batch job (``target`` infinite: output tokens per
    hour is what counts), keep the fastest degree at the batch each copy's memory holds
    (:func:`fastest_at_room`; a wider one only when strictly faster, as
    :func:`~service.sizing.replicas.fastest` keeps it). ``None``: not even one sequence
    fits."""

    def own(t: int, c: int) -> int | None:  # the largest batch each copy's memory holds
        return batch_for(lambda b: fits(c * b, t), lambda b: 0.0, ceiling, math.inf)

    if math.isfinite(target):
        reached = lowest_reaching(degrees, copies, own, rate, target)
        if reached is not None:
            return reached
    return fastest_at_room(degrees, copies, own, rate, target)


def lowest_reaching(
    degrees: Sequence[int],
    copies: Callable[[int], int],
    own: Callable[[int, int], int | None],
    rate: Callable[[int, int], float],
    target: float,
) -> tuple[int, int] | None:
    """(sequences on the server, degree) of the lowest of ``degrees`` (ascending) whose
    ``copies(degree)`` copies, each at the batch its memory holds (``own(degree,
    copies)``), reach ``target`` tokens/s together, at the fewest sequences per copy that
    do (rate grows with the batch: binary search); ``None`` when no degree does."""
    for t in degrees:
        c = copies(t)
        each = own(t, c)
        if each is not None and rate(c * each, t) >= target:
            fewest = batch_for(lambda b: True, lambda b: rate(c * b, t), each, target)  # noqa: B023
            return c * (fewest or each), t
    return None


def fastest_at_room(
    degrees: Sequence[int],
    copies: Callable[[int], int],
    own: Callable[[int, int], int | None],
    rate: Callable[[int, int], float],
    target: float,
) -> tuple[int, int] | None:
    """(sequences on the server, degree) of the fastest of ``degrees`` with each copy at
    the batch its memory holds (``own``), a wider degree kept only when strictly faster;
    when that reaches ``target``, at the fewest sequences per copy that do. ``None``: no
    degree holds one sequence."""
    top: tuple[int, int, float] | None = None  # (degree, batch per copy, rate)
    for t in degrees:
        c = copies(t)
        each = own(t, c)
        if each is None:
            continue
        r = rate(c * each, t)
        if top is None or r > top[2] * (1.0 + RATE_TIE_REL):
            top = (t, each, r)
    if top is None:
        return None
    t, each, r = top
    c = copies(t)
    if r >= target:
        each = batch_for(lambda b: True, lambda b: rate(c * b, t), each, target) or each
    return c * each, t
