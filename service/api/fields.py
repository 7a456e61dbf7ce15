"""The closest valid field names for an unknown one, from the request type itself.

A 400 for ``workload.seq_length`` says ``seq_len``: the names come from the msgspec type
at that path (every variant of a union), known synonyms first (``gpu_count`` ->
``accelerator_count``, one level down when that is where the field lives), then spelling.
Built only on the error path and cached per (type, path shape).
"""

from __future__ import annotations

import difflib
import functools
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
}
"""Names people and chatbots use for a field of another name (checked before spelling)."""


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
    for close in difflib.get_close_matches(lowered, fields, n=3, cutoff=0.6):
        if close not in found:
            found.append(close)
    return found[:3]


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
