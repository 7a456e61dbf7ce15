"""Hypothesis properties of the memory model (fixed architectures, any sizes)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.runtime.errors import InputError
from service.sizing import Placement, Workload, estimate, memory_for, resolve_workload
from service.sizing.presets import ModelRegistry, builtin_presets

MODELS = ModelRegistry(builtin_presets())
LLM_PRESETS = [p.id for p in builtin_presets() if p.kind in ("decoder", "moe")]

presets = st.sampled_from(LLM_PRESETS)
methods = st.sampled_from(["full", "lora", "qlora", "freeze"])
frameworks = st.sampled_from(["generic", "deepspeed"])
seq = st.integers(1, 65_536)
batch = st.integers(1, 64)
devices = st.integers(1, 512)


def _workload(obj: dict[str, Any]) -> Workload:
    w: Workload = msgspec.convert(obj, Workload)
    return w


def per_device(obj: dict[str, Any], n: int = 1, stage: int | None = None, tp: int = 1) -> float:
    rw = resolve_workload(_workload(obj), MODELS)
    return memory_for(rw, n, stage, tp).per_device_gib


def shape(params_b: float) -> dict[str, Any]:
    """A fixed Llama-2-7B shape whose parameter count varies."""
    return {
        "params_b": params_b,
        "layers": 32,
        "hidden": 4096,
        "heads": 32,
        "kv_heads": 32,
        "intermediate": 11008,
        "vocab": 32000,
    }


@settings(max_examples=60, deadline=None)
@given(st.floats(0.5, 100), st.floats(1.0, 2.0), methods, st.booleans())
@example(2.0, 1.25, "qlora", False)  # 2.5B reached a tied preset: its fp32 embeddings halved
def test_non_decreasing_in_params(p: float, factor: float, method: str, inference: bool) -> None:
    base = {"kind": "inference"} if inference else {"kind": "finetune", "method": method}
    assert (
        per_device({**base, "model": shape(p)})
        <= per_device({**base, "model": shape(p * factor)}) + 1e-9
    )


@settings(max_examples=60, deadline=None)
@given(presets, methods, seq, seq, batch, st.booleans(), st.booleans())
def test_non_decreasing_in_seq_len_and_batch(
    model: str, method: str, s1: int, s2: int, b: int, ckpt: bool, flash: bool
) -> None:
    lo, hi = sorted((s1, s2))
    w = {
        "kind": "finetune",
        "model": model,
        "method": method,
        "gradient_checkpointing": ckpt,
        "flash_attention": flash,
    }
    assert per_device({**w, "seq_len": lo, "micro_batch_size": b}) <= per_device(
        {**w, "seq_len": hi, "micro_batch_size": b}
    )
    assert per_device({**w, "seq_len": lo, "micro_batch_size": b}) <= per_device(
        {**w, "seq_len": lo, "micro_batch_size": b + 1}
    )


@settings(max_examples=60, deadline=None)
@given(
    presets,
    st.integers(1, 131_072),
    st.integers(1, 131_072),
    st.integers(1, 256),
    st.sampled_from(["bf16", "fp8", "int8", "int4"]),
    st.integers(1, 8),
)
def test_non_decreasing_in_context_and_concurrency(
    model: str, c1: int, c2: int, conc: int, precision: str, n: int
) -> None:
    lo, hi = sorted((c1, c2))
    w = {"kind": "inference", "model": model, "precision": precision}
    assert per_device({**w, "context_len": lo, "concurrency": conc}, n) <= per_device(
        {**w, "context_len": hi, "concurrency": conc}, n
    )
    assert per_device({**w, "context_len": lo, "concurrency": conc}, n) <= per_device(
        {**w, "context_len": lo, "concurrency": conc + 1}, n
    )


@settings(max_examples=80, deadline=None)
@given(
    presets,
    methods,
    frameworks,
    devices,
    st.sampled_from(["adamw", "adamw_8bit", "sgd", "adafactor"]),
    st.booleans(),
)
def test_higher_zero_stage_never_needs_more(
    model: str, method: str, framework: str, n: int, optimizer: str, mixed: bool
) -> None:
    w = {
        "kind": "finetune",
        "model": model,
        "method": method,
        "framework": framework,
        "optimizer": optimizer,
        "mixed_precision": mixed,
    }
    stages = [per_device(w, n, k) for k in range(4)]
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(stages))


@settings(max_examples=40, deadline=None)
@given(presets, seq, batch)
def test_qlora_below_lora_below_full(model: str, s: int, b: int) -> None:
    w = {"kind": "finetune", "model": model, "seq_len": s, "micro_batch_size": b}
    q, lo, full = (per_device({**w, "method": m}) for m in ("qlora", "lora", "full"))
    assert q < lo < full


@settings(max_examples=80, deadline=None)
@given(
    presets,
    methods,
    frameworks,
    devices,
    st.sampled_from([None, 0, 1, 2, 3]),
    st.sampled_from(["none", "optimizer", "all"]),
    seq,
)
def test_parts_sum_to_the_total(
    model: str, method: str, framework: str, n: int, stage: int | None, offload: str, s: int
) -> None:
    w = {
        "kind": "finetune",
        "model": model,
        "method": method,
        "framework": framework,
        "offload": offload,
        "seq_len": s,
    }
    rw = resolve_workload(_workload(w), MODELS)
    m = memory_for(rw, n, stage)
    parts = (
        m.weights_gib,
        m.gradients_gib,
        m.optimizer_gib,
        m.activations_gib,
        m.kv_cache_gib,
        m.overhead_gib,
    )
    assert all(x >= 0 for x in parts)
    assert (
        m.per_device_gib == sum(parts)
        or abs(m.per_device_gib - sum(parts)) < 1e-9 * m.per_device_gib
    )


# --- fuzz: any in-bounds request gives an answer or an InputError, never a crash ---------

ACCELERATORS = AcceleratorRegistry(builtin_accelerators())
model_specs = st.fixed_dictionaries(
    {"params_b": st.floats(0.001, 3000)},
    optional={
        "layers": st.integers(1, 1024),
        "hidden": st.integers(1, 131_072),
        "heads": st.integers(1, 4096),
        "kv_heads": st.integers(1, 4096),
        "head_dim": st.integers(1, 4096),
        "intermediate": st.integers(1, 1_048_576),
        "vocab": st.integers(1, 4_194_304),
        "tied_embeddings": st.booleans(),
        "active_params_b": st.floats(0.001, 3000),
    },
)
models_any = st.one_of(st.sampled_from([p.id for p in builtin_presets()]), model_specs)
training = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["pretrain", "finetune"]),
        "model": models_any,
        "tokens": st.floats(1, 1e15),
    },
    optional={
        "seq_len": st.integers(1, 1_048_576),
        "micro_batch_size": st.integers(1, 65_536),
        "precision": st.sampled_from(["bf16", "fp16", "fp32", "fp8"]),
        "mixed_precision": st.booleans(),
        "optimizer": st.sampled_from(["adamw", "adamw_8bit", "sgd", "adafactor"]),
        "gradient_checkpointing": st.booleans(),
        "flash_attention": st.booleans(),
        "framework": st.sampled_from(["generic", "deepspeed"]),
        "offload": st.sampled_from(["none", "optimizer", "all"]),
        "method": st.sampled_from(["full", "lora", "qlora", "freeze"]),
        "quant_bits": st.sampled_from([4, 8]),
        "lora_rank": st.integers(1, 4096),
        "lora_targets": st.sampled_from(["attention", "all_linear"]),
        "image_size": st.integers(8, 16_384),
    },
)
serving = st.fixed_dictionaries(
    {"kind": st.just("inference"), "model": models_any},
    optional={
        "precision": st.sampled_from(["bf16", "fp16", "fp32", "fp8", "int8", "int4"]),
        "context_len": st.integers(1, 1_048_576),
        "concurrency": st.integers(1, 100_000),
        "output_tokens": st.floats(1, 1e15),
        "target_tokens_per_s": st.floats(0.001, 1e9),
        "kv_cache_precision": st.sampled_from(["bf16", "fp16", "fp32", "fp8", "int8"]),
    },
)
placements = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "accelerator": st.sampled_from([*ACCELERATORS.names(), "Z9000"]),
            "count": st.integers(1, 4096),
        },
        optional={"zero_stage": st.sampled_from([0, 1, 2, 3])},
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(training, serving), placements)
def test_any_request_is_answered_or_refused_with_a_field(
    body: dict[str, Any], placement: dict[str, Any] | None
) -> None:
    try:
        w = msgspec.convert(body, Workload)
    except msgspec.ValidationError:
        return  # e.g. finetune-only fields on pretrain are ignored, bounds are the decoder's
    p = None if placement is None else msgspec.convert(placement, Placement)
    field: str | None
    try:
        r = estimate(w, p, MODELS, ACCELERATORS)
    except InputError as err:
        field = err.field
    else:
        field = None
        m = r.memory
        assert math.isfinite(m.per_device_gib)
        assert m.per_device_gib >= 0
        json = msgspec.json.encode(r)
        assert b"NaN" not in json
        assert b"Infinity" not in json
    if field is not None:
        assert field.startswith(("workload.", "placement."))


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from([p.id for p in builtin_presets()]),
    kind=st.sampled_from(["pretrain", "finetune", "inference"]),
    first=st.floats(1e3, 1e13),
    second=st.floats(1e3, 1e13),
)
def test_resolution_shared_across_lengths_equals_resolving_again(
    model: str, kind: str, first: float, second: float
) -> None:
    """``with_length`` (how the planner shares one resolution between requests for the
    same job at other lengths) gives exactly what resolving the other request gives."""
    field = "output_tokens" if kind == "inference" else "tokens"
    obj: dict[str, Any] = {"kind": kind, "model": model, field: first}
    try:
        base = resolve_workload(_workload(obj), MODELS)
    except InputError:
        return  # a preset this kind refuses (checked elsewhere)
    other = _workload({**obj, field: second})
    assert base.with_length(other) == resolve_workload(other, MODELS)
