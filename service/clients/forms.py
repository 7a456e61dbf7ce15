"""CLI flags and MCP tool arguments -> the API's request bodies and query parameters.

Pure functions shared by :mod:`service.cli` and :mod:`service.mcp.server`. They validate
nothing the API validates: names, bounds and combinations go through as given, and the
API's 400 (field, reason, closest names) is what the user or the model reads. Only what a
shell cannot express is translated here: ``20M`` tokens, ``--count 2..8``, a ``13b``
model size, ``--set key=value`` for any other workload field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_AMOUNT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKmMbBgGtT]?)\s*$")
_MODEL_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*[bB]\s*$")
_RANGE = re.compile(r"^\s*([0-9]*)\s*\.\.\s*([0-9]*)\s*$")


class FlagError(ValueError):
    """A flag value the shell form cannot be read as (the message names the flag)."""


def amount(flag: str, text: str | float) -> float:
    """``20M`` -> 2e7, ``1.5B`` -> 1.5e9, ``3e6`` -> 3e6 (K, M, B/G, T suffixes)."""
    if isinstance(text, int | float):
        return text
    match = _AMOUNT.match(text)
    if match is None:
        raise FlagError(f"{flag}: expected a number such as 2e7, 20M or 1.5B, got {text!r}")
    value = float(match[1]) * _SUFFIX.get(match[2].lower(), 1.0)
    return int(value) if value.is_integer() else value


def model_ref(text: str) -> str | dict[str, float]:
    """A preset id or alias as given; ``13b`` (a bare size) -> ``{"params_b": 13}``."""
    match = _MODEL_SIZE.match(text)
    return {"params_b": float(match[1])} if match else text


def count_range(text: str) -> tuple[int | None, int | None]:
    """``8`` -> (8, 8); ``2..8`` -> (2, 8); ``4..`` -> (4, None); ``..2`` -> (None, 2)."""
    if text.strip().isdigit():
        return int(text), int(text)
    match = _RANGE.match(text)
    if match is None or not (match[1] or match[2]):
        raise FlagError(f"--count: expected N or MIN..MAX (e.g. 8, 2..8, 4..), got {text!r}")
    return (int(match[1]) if match[1] else None, int(match[2]) if match[2] else None)


def assignments(pairs: Sequence[str]) -> dict[str, Any]:
    """``--set key=value``: the value read as JSON when it parses, else as a string."""
    fields: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise FlagError(f"--set: expected KEY=VALUE, got {pair!r}")
        try:
            fields[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            fields[key.strip()] = raw
    return fields


def infer_kind(
    kind: str | None, *, method: str | None, data_gb: float | None, serving: bool
) -> str:
    """``--kind`` when given; else preprocess (``--data-gb``), inference (serving flags),
    otherwise finetune (the commonest job; ``--kind pretrain`` for from-scratch runs)."""
    if kind:
        return kind
    if data_gb is not None:
        return "preprocess"
    if serving and method is None:
        return "inference"
    return "finetune"


def workload(
    *,
    kind: str | None = None,
    model: str | None = None,
    method: str | None = None,
    tokens: str | float | None = None,
    seq_len: int | None = None,
    context_len: int | None = None,
    concurrency: int | None = None,
    precision: str | None = None,
    data_gb: float | None = None,
    extra: Sequence[str] = (),
    fields: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``workload`` object: only the flags given (the API fills its defaults);
    ``extra`` are ``key=value`` strings, ``fields`` a mapping (MCP) of other fields."""
    serving = context_len is not None or concurrency is not None
    body: dict[str, Any] = {
        "kind": infer_kind(kind, method=method, data_gb=data_gb, serving=serving)
    }
    given: dict[str, Any] = {
        "model": None if model is None else model_ref(model),
        "method": method,
        "tokens": None if tokens is None else amount("--tokens", tokens),
        "seq_len": seq_len,
        "context_len": context_len,
        "concurrency": concurrency,
        "precision": precision,
        "data_gb": data_gb,
    }
    body.update({k: v for k, v in given.items() if v is not None})
    body.update(assignments(extra))
    body.update(fields or {})
    return body


def constraints(
    *,
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpus: Sequence[str] = (),
    billing: Sequence[str] = (),
    max_price: float | None = None,
    budget: float | None = None,
    deadline_hours: float | None = None,
    max_nodes: int | None = None,
    interruptible: bool | None = None,
) -> dict[str, Any]:
    given: dict[str, Any] = {
        "providers": list(providers) or None,
        "regions": list(regions) or None,
        "accelerators": list(gpus) or None,
        "billing": list(billing) or None,
        "max_price_per_hour": max_price,
        "budget": budget,
        "deadline_hours": deadline_hours,
        "max_nodes": max_nodes,
        "interruptible": interruptible,
    }
    return {k: v for k, v in given.items() if v is not None}


def recommend_body(
    workload_body: dict[str, Any],
    constraint_body: dict[str, Any],
    *,
    objective: str | None = None,
    top_k: int | None = None,
    lang: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"workload": workload_body}
    if constraint_body:
        body["constraints"] = constraint_body
    given = {"objective": objective, "top_k": top_k, "lang": lang}
    body.update({k: v for k, v in given.items() if v is not None})
    return body


def estimate_body(
    workload_body: dict[str, Any],
    *,
    gpu: str | None = None,
    count: int | None = None,
    zero_stage: int | None = None,
) -> dict[str, Any]:
    """``placement`` only with ``--gpu`` (``--count`` alone has nothing to count)."""
    body: dict[str, Any] = {"workload": workload_body}
    if gpu is None:
        if count is not None or zero_stage is not None:
            raise FlagError("--count and --zero-stage need --gpu (the accelerator to place on)")
        return body
    placement: dict[str, Any] = {"accelerator": gpu}
    if count is not None:
        placement["count"] = count
    if zero_stage is not None:
        placement["zero_stage"] = zero_stage
    body["placement"] = placement
    return body


def offer_params(
    *,
    gpus: Sequence[str] = (),
    count: str | None = None,
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    billing: Sequence[str] = (),
    max_price: float | None = None,
    min_gpu_memory: float | None = None,
    min_accelerators: int | None = None,
    max_accelerators: int | None = None,
    min_vcpus: int | None = None,
    min_memory: float | None = None,
    include_cpu: bool = False,
    priced_only: bool = False,
    fold_regions: bool = False,
    sort: str | None = None,
    group_by: Sequence[str] = (),
    limit: int | None = None,
    offset: int | None = None,
) -> list[tuple[str, str]]:
    """Query parameters of ``GET /v1/offers``; ``--group-by a,b`` may be comma separated."""
    params: list[tuple[str, str]] = [("accelerator", g) for g in gpus]
    if count is not None:
        low, high = count_range(count)
        if low is not None:
            params.append(("min_accelerators", str(low)))
        if high is not None:
            params.append(("max_accelerators", str(high)))
    if min_accelerators is not None:
        params.append(("min_accelerators", str(min_accelerators)))
    if max_accelerators is not None:
        params.append(("max_accelerators", str(max_accelerators)))
    params += [("provider", p) for p in providers]
    params += [("region", r) for r in regions]
    params += [("billing", b) for b in billing]
    scalars = {
        "max_price": max_price,
        "min_accelerator_memory_gib": min_gpu_memory,
        "min_vcpus": min_vcpus,
        "min_memory_gib": min_memory,
        "sort": sort,
        "limit": limit,
        "offset": offset,
    }
    params += [(k, _query_value(v)) for k, v in scalars.items() if v is not None]
    if include_cpu:
        params.append(("include_cpu", "true"))
    if priced_only:
        params.append(("priced_only", "true"))
    if fold_regions:
        params.append(("fold_regions", "true"))
    for value in group_by:
        params += [("group_by", part.strip()) for part in value.split(",") if part.strip()]
    return params


def _query_value(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- one question's arguments (named as in service.clients.parameters) -> its request ---

_WORKLOAD = ("kind", "model", "method", "tokens", "seq_len", "context_len", "concurrency",
             "precision", "data_gb")  # fmt: skip


def workload_of(given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``workload`` of a recommend or estimate question's arguments."""
    return workload(
        **{name: given.get(name) for name in _WORKLOAD},
        extra=given.get("extra") or (),
        fields=given.get("workload_extra"),
    )


def _keywords(given: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The keywords of a builder above from the arguments that carry them (keyword ->
    argument name); the four filters recommend and offers share are lists of names."""
    lists = {"providers": "providers", "regions": "regions", "gpus": "accelerators"}
    picked: dict[str, Any] = {k: given.get(arg) or () for k, arg in lists.items()}
    picked["billing"] = given.get("billing") or ()
    picked.update({keyword: given.get(arg) for keyword, arg in names.items()})
    return picked


_CONSTRAINTS = {"max_price": "max_price_per_hour", "budget": "budget",
                "deadline_hours": "deadline_hours"}  # fmt: skip
_OFFERS = {"count": "count", "min_accelerators": "min_accelerators",
           "max_accelerators": "max_accelerators", "max_price": "max_price",
           "min_gpu_memory": "min_accelerator_memory_gib", "min_vcpus": "min_vcpus",
           "min_memory": "min_memory", "sort": "sort", "limit": "limit",
           "offset": "offset"}  # fmt: skip


def recommend_request(given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST /v1/recommend`` body of :data:`~service.clients.parameters.RECOMMEND`."""
    return recommend_body(
        workload_of(given),
        constraints(**_keywords(given, _CONSTRAINTS)),
        objective=given.get("objective"),
        top_k=given.get("top_k"),
        lang=given.get("lang"),
    )


def estimate_request(given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST /v1/estimate`` body of :data:`~service.clients.parameters.ESTIMATE`."""
    return estimate_body(
        workload_of(given),
        gpu=given.get("accelerator"),
        count=given.get("count"),
        zero_stage=given.get("zero_stage"),
    )


def offers_request(given: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``GET /v1/offers`` query of :data:`~service.clients.parameters.OFFERS`
    (``--all-regions`` is the CLI's way to say ``fold_regions=false``)."""
    return offer_params(
        **_keywords(given, _OFFERS),
        include_cpu=bool(given.get("include_cpu")),
        priced_only=bool(given.get("priced_only")),
        fold_regions=given.get("fold_regions", not given.get("all_regions", False)),
        group_by=given.get("group_by") or (),
    )
