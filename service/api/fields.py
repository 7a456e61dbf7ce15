"""The closest valid field names for an unknown one, from the request type itself.

A 400 for ``workload.seq_length`` says ``seq_len``: the names come from the msgspec type
at that path (every variant of a union), known synonyms first (``gpu_count`` ->
``accelerator_count``, one level down when that is where the field lives), then spelling.
Built only on the error path and cached per (type, path shape).
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from service.runtime.errors import closest

_INDEX = re.compile(r"\[\d+\]")

SYNONYMS: dict[str, tuple[str, ...]] = {
    "seq_length": ("seq_len",),
    "sequence_length": ("seq_len",),
    "max_seq_len": ("seq_len",),
    "max_length": ("seq_len", "context_len"),
    "context_length": ("context_len",),
    "batch_size": ("micro_batch_size",),
    "per_device_batch_size": ("micro_batch_size",),
    "gpu_count": ("accelerator_count", "count"),
    "num_gpus": ("accelerator_count", "count"),
    "n_gpus": ("accelerator_count", "count"),
    "gpus": ("accelerator_count", "accelerators", "count"),
    "gpu": ("accelerators", "accelerator"),
    "gpu_type": ("accelerators", "accelerator"),
    "topk": ("top_k",),
    "constraint": ("constraints",),
    "provider": ("providers",),
    "region": ("regions",),
    "dtype": ("precision",),
    "lora_r": ("lora_rank",),
    "num_tokens": ("tokens",),
    "dataset_tokens": ("tokens",),
    "max_price": ("max_price_per_hour",),
    "budget_cny": ("budget",),
    "deadline": ("deadline_hours",),
    "language": ("lang",),
    "users": ("concurrency",),
    "concurrent_users": ("concurrency",),
    "num_users": ("concurrency",),
    "qps": ("target_tokens_per_s",),
    "rps": ("target_tokens_per_s",),
    "requests_per_second": ("target_tokens_per_s",),
    "tps": ("target_tokens_per_s",),
    "tokens_per_second": ("target_tokens_per_s",),
    "target_sequences_per_s": ("target_tokens_per_s",),
    "sequences_per_s": ("target_tokens_per_s",),
    "sequences_per_second": ("target_tokens_per_s",),
    "embeddings_per_s": ("target_tokens_per_s",),
    "latency_ms": ("concurrency", "target_tokens_per_s"),
    "latency": ("concurrency", "target_tokens_per_s"),
    "ttft_ms": ("concurrency", "target_tokens_per_s"),
    "tpot_ms": ("concurrency", "target_tokens_per_s"),
    "p99_latency_ms": ("concurrency", "target_tokens_per_s"),
    "epochs": ("tokens",),
    "num_epochs": ("tokens",),
    "num_train_epochs": ("tokens",),
    "dataset_size": ("tokens",),
    "dataset_samples": ("tokens",),
    "num_samples": ("tokens",),
    "images": ("tokens",),
    "num_images": ("tokens",),
    "image_count": ("tokens",),
    "dataset_images": ("tokens",),
}
"""Names people and chatbots use for a field of another name (checked before spelling)."""

_USERS = (
    "A user is not a field: concurrency is the number of requests served at the same "
    "time (users who are waiting for an answer at once).",
    "没有“用户数”字段：concurrency 是同时处理的请求数（同一时刻在等回答的用户数）。",
)
_RATE = (
    "Requests per second are not a field: target_tokens_per_s is the output rate to "
    "reach, requests per second × output tokens per answer (5 requests/s × 200 tokens = "
    "1000); for an embedding model, sequences per second × context_len.",
    "没有“每秒请求数”字段：target_tokens_per_s 是要达到的输出速率，等于每秒请求数 × 每个回答的"
    "输出 tokens（每秒 5 个请求 × 200 tokens = 1000）；嵌入模型则为每秒序列数 × context_len。",
)
_SEQUENCES_TEXT = (
    "Sequences per second are not a field: for an embedding or other encoder-only model, "
    "target_tokens_per_s is the tokens encoded per second, sequences per second × "
    "context_len ({n} sequences/s of {tokens} tokens = {total}).",
    "没有“每秒序列数”字段：对嵌入等仅编码器模型，target_tokens_per_s 是每秒编码的 tokens，等于"
    "每秒序列数 × context_len（每秒 {n} 个 {tokens} tokens 的序列 = {total}）。",
)
_SEQUENCES = (
    _SEQUENCES_TEXT[0].format(n="2,000", tokens=512, total=1024000),
    _SEQUENCES_TEXT[1].format(n="2,000", tokens=512, total=1024000),
)
_SEQUENCES_ECHO = re.compile(
    r"^(?P<head>.*) Sequences per second are not a field: .* context_len \((?P<n>[0-9.,]+) "
    r"sequences/s of (?P<tokens>[0-9]+) tokens = (?P<total>[0-9.]+)\)\.$"
)
"""The sequences advice with the user's own numbers (review 6 H8), read back for zh."""
EXAMPLE_TOKENS = 512
"""Tokens per sequence of the example when the request does not send context_len: BERT's
positions (the commonest embedding length)."""
_LATENCY = (
    "There is no latency target field: give concurrency (requests at once) or "
    "target_tokens_per_s; each option states its decode throughput, and throughput ÷ "
    "concurrency is the tokens per second each user sees.",
    "没有延迟目标字段：请给出 concurrency（同时处理的请求数）或 target_tokens_per_s；"
    "每个方案都会给出解码吞吐，吞吐 ÷ 并发数即每个用户看到的每秒 tokens。",
)
_EPOCHS = (
    "Epochs are not a field: tokens is the number of training tokens in total, epochs × "
    "tokens in the dataset (3 epochs of 20M tokens: 60000000).",
    "没有 epoch 字段：tokens 是训练的总 token 数，等于 epoch 数 × 数据集的 token 数"
    "（3 个 epoch、每个 2000 万 tokens：60000000）。",
)
_IMAGES = (
    "Images are not a field: for an image model (CNN, detector, ViT, diffusion), tokens is "
    "the number of training samples in total, epochs × images in the dataset (90 epochs of "
    "ImageNet's 1,281,167 images: 115305030).",
    "没有图像数字段：对图像模型（CNN、检测、ViT、扩散模型），tokens 是训练样本总数，"
    "等于 epoch 数 × 数据集图像数（ImageNet 的 1,281,167 张图像训练 90 个 epoch：115305030）。",
)
_GLOBAL_BATCH = (
    "A global batch is the sequences of one optimizer step, a training setting: serving "
    "takes no optimizer steps (nor does data preparation); concurrency sets the sequences "
    "served at once.",
    "全局批量是每个优化步的序列数，属于训练设置：推理没有优化步（数据预处理也没有）；"
    "同时处理的序列数由 concurrency 设定。",
)
FIELD_ADVICE: dict[str, tuple[str, str]] = {
    "users": _USERS, "concurrent_users": _USERS, "num_users": _USERS,
    "qps": _RATE, "rps": _RATE, "requests_per_second": _RATE,
    "target_sequences_per_s": _SEQUENCES, "sequences_per_s": _SEQUENCES,
    "sequences_per_second": _SEQUENCES, "embeddings_per_s": _SEQUENCES,
    "latency_ms": _LATENCY, "latency": _LATENCY, "ttft_ms": _LATENCY, "tpot_ms": _LATENCY,
    "p99_latency_ms": _LATENCY,
    "epochs": _EPOCHS, "num_epochs": _EPOCHS, "num_train_epochs": _EPOCHS,
    "dataset_size": _EPOCHS, "dataset_samples": _EPOCHS, "num_samples": _EPOCHS,
    "images": _IMAGES, "num_images": _IMAGES, "image_count": _IMAGES, "dataset_images": _IMAGES,
    "global_batch_size": _GLOBAL_BATCH,
}  # fmt: skip
"""For a concept that is not a field, how to say it with the fields there are (English,
Chinese): the unknown-field 400 appends it to its "did you mean"."""
ADVICE_IN_CHINESE = {en: zh for en, zh in FIELD_ADVICE.values()}


def _count(value: object) -> float | None:
    """``value`` as a positive finite number (JSON ints and floats, not booleans)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def _figure(number: float) -> str:
    return str(int(number)) if number.is_integer() else f"{number:.6g}"


ECHOED = frozenset(k for k, v in FIELD_ADVICE.items() if v is _SEQUENCES)
"""Unknown field names whose advice echoes the value sent (read only for them: reading a
value decodes the body once more)."""


def field_advice(name: str, sent: object, context_len: object) -> tuple[str, str] | None:
    """How to say the concept ``name`` stands for with the fields there are (English,
    Chinese), or ``None``: :data:`FIELD_ADVICE`, with the user's own rate in the example of
    a sequences-per-second name (``sent``, times the ``context_len`` sent, else
    :data:`EXAMPLE_TOKENS`) when it is a positive number (review 6 H8)."""
    advice = FIELD_ADVICE.get(name.lower())
    rate = _count(sent)
    if advice is not _SEQUENCES or rate is None or rate > 1e9:
        return advice
    length = _count(context_len)
    tokens = int(length) if length is not None and length.is_integer() else EXAMPLE_TOKENS
    shown = {"n": _figure(rate), "tokens": tokens, "total": _figure(rate * tokens)}
    return _SEQUENCES_TEXT[0].format(**shown), _SEQUENCES_TEXT[1].format(**shown)


def advice_in_chinese(message: str) -> tuple[str, str] | None:
    """(the message before its advice, the advice in Chinese) for a message that ends in
    one of :func:`field_advice`'s sentences, or ``None``."""
    for english, chinese in ADVICE_IN_CHINESE.items():
        if message.endswith(f" {english}"):
            return message.removesuffix(f" {english}"), chinese
    echo = _SEQUENCES_ECHO.match(message)
    if echo is None:
        return None
    shown = {"n": echo["n"], "tokens": echo["tokens"], "total": echo["total"]}
    return echo["head"], _SEQUENCES_TEXT[1].format(**shown)


def suggest_parameters(name: str, known: Iterable[str]) -> list[str]:
    """Closest query parameters to the unknown ``name``: the same synonyms as the body
    (``gpu`` -> ``accelerator``; a plural the route takes in the singular too; a body
    field's name -> the parameter it is short for, ``max_price_per_hour`` -> ``max_price``),
    then spelling, then every name when nothing is close."""
    names = sorted(known)
    found: list[str] = []
    lowered = name.lower()
    targets = [*SYNONYMS.get(lowered, ()), *(k for k, v in SYNONYMS.items() if lowered in v)]
    for target in targets:
        for candidate in (target, target.removesuffix("s")):
            if candidate in names and candidate not in found:
                found.append(candidate)
    if not found:
        return closest(name, names)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return [*found, *(c for c in close if c not in found)][:3]


def suggest_fields(body_type: Any, path: str, name: str) -> list[str]:
    """Closest valid names for the unknown field ``name`` in the object at ``path``:
    known synonyms first (``gpu_count`` -> ``accelerator_count``, one level down when
    that is where it lives: ``constraints.accelerator_count``), then by spelling."""
    fields, nested = _fields_at(body_type, _INDEX.sub("[]", path))
    found: list[str] = []
    lowered = name.lower()
    for target in SYNONYMS.get(lowered, ()):
        if target in fields:
            found.append(target)
        else:
            found.extend(f"{parent}.{target}" for parent, sub in nested if target in sub)
    # a field sent one level too high (`model` beside `workload`): where it lives
    found.extend(f"{parent}.{lowered}" for parent, sub in nested
                 if lowered in sub and lowered not in fields)  # fmt: skip
    for close in difflib.get_close_matches(lowered, fields, n=3, cutoff=0.6):
        if close not in found and close != lowered:  # not itself (a field of another kind)
            found.append(close)
    return found[:3]


def values_at(body_type: Any, path: str) -> list[str]:
    """The values the field at ``path`` takes (``workload.method``: full, lora, qlora,
    freeze; ``workload.kind``: the workload kinds; a list's items: its item's), or []
    when it is not an enumeration."""
    parent, _, last = _INDEX.sub("[]", path).rpartition(".")
    index = last.endswith("[]")
    last = last.removesuffix("[]")
    if last == "":
        return []
    info: Any = msgspec.inspect.type_info(body_type)
    for name, is_index in _step_names(parent):
        if is_index:
            info = next((getattr(s, "item_type", None) for s in _lists(info)), None)
            if info is None:
                return []
            continue
        nxt = [f.type for s in _structs(info) for f in s.fields if f.name == name]
        if not nxt:
            return []
        info = msgspec.inspect.UnionType(tuple(nxt)) if len(nxt) > 1 else nxt[0]
    structs = _structs(info)
    tags = [str(s.tag) for s in structs if s.tag_field == last and s.tag is not None]
    if tags:
        return tags
    types = [f.type for s in structs for f in s.fields if f.name == last]
    if index:
        types = [getattr(t, "item_type", None) for f in types for t in _lists(f)]
    values: list[str] = []
    for kind in types:
        for member in _flat(kind):
            if isinstance(member, msgspec.inspect.LiteralType):
                values.extend(str(v) for v in member.values if str(v) not in values)
    if values and any(isinstance(m, msgspec.inspect.BoolType) for t in types for m in _flat(t)):
        values[:0] = ["true", "false"]
    return values


@functools.lru_cache(maxsize=256)
def _fields_at(
    body_type: Any, path: str
) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """Field names of the object(s) at ``path`` (all variants of a union), and of the
    objects one level below them."""
    info: Any = msgspec.inspect.type_info(body_type)
    for name, index in _step_names(path):
        structs = _structs(info)
        if index:
            info = next((getattr(s, "item_type", None) for s in _lists(info)), None)
            if info is None:
                return (), ()
            continue
        nxt = [f.type for s in structs for f in s.fields if f.name == name]
        if not nxt:
            return (), ()
        info = msgspec.inspect.UnionType(tuple(nxt)) if len(nxt) > 1 else nxt[0]
    fields: list[str] = []
    nested: list[tuple[str, tuple[str, ...]]] = []
    for struct in _structs(info):
        if struct.tag_field and struct.tag_field not in fields:
            fields.append(struct.tag_field)
        for f in struct.fields:
            if f.name not in fields:
                fields.append(f.name)
            subs = tuple(g.name for s in _structs(f.type) for g in s.fields)
            if subs:
                nested.append((f.name, subs))
    return tuple(fields), tuple(nested)


def _step_names(path: str) -> list[tuple[str, bool]]:
    return [(m["name"] or "", m["index"] is not None or m.group(0) == "[]")
            for m in re.finditer(r"\.?(?P<name>[^.\[]+)|\[(?P<index>\d*)\]", path)]  # fmt: skip


def _flat(info: Any) -> list[Any]:
    """The members of a (possibly nested) union, or the type itself; a described field
    (``Annotated[T, msgspec.Meta(...)]``) is its ``T``."""
    if isinstance(info, msgspec.inspect.Metadata):
        return _flat(info.type)
    if isinstance(info, msgspec.inspect.UnionType):
        return [m for t in info.types for m in _flat(t)]
    return [info]


def _structs(info: Any) -> list[Any]:
    return [t for t in _flat(info) if isinstance(t, msgspec.inspect.StructType)]


def _lists(info: Any) -> list[Any]:
    return [t for t in _flat(info) if isinstance(t, msgspec.inspect.ListType)]
