"""What the planner keeps between calls within and across requests gives the numbers a
fresh computation gives: memoized memory per training budget, the shared accelerator
verdicts, the cheap copies of a resolution and a resolution used as built."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.planning.memo import PlanCache
from service.planning.place import support_verdict
from service.planning.resolve import Job, resolve, resolve_job
from service.planning.schema import RecommendRequest
from service.sizing import ResolvedWorkload, resolve_workload
from service.sizing.copying import copier
from service.sizing.memory import _training_memory, _training_memory_of, memory_for
from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.workload import Workload
from tests.conftest import builtin_plan_context

MODELS = ModelRegistry(builtin_presets())
ACCELERATORS = AcceleratorRegistry(builtin_accelerators())


def _resolve(**fields: object) -> ResolvedWorkload:
    obj = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8, **fields}
    return resolve_workload(msgspec.convert(obj, Workload), MODELS)


def _request() -> RecommendRequest:
    obj = {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora",
                        "tokens": 1e8}}  # fmt: skip
    return msgspec.convert(obj, RecommendRequest)


def test_memory_of_a_copy_at_another_length_is_the_budgets_own() -> None:
    rw = _resolve(seq_len=2048)
    longer = rw.with_length(msgspec.structs.replace(rw.workload, tokens=3e9))
    assert longer.training is rw.training
    for devices, stage, t, pp in [(1, 0, 1, 1), (8, 3, 1, 1), (8, 2, 2, 2), (16, 1, 8, 2)]:
        kept = _training_memory(rw, devices, stage, t, pp)
        assert _training_memory(longer, devices, stage, t, pp) is kept
        assert kept == _training_memory_of(rw.training, devices, stage, t, pp)  # type: ignore[arg-type]


def test_memory_of_another_budget_is_never_a_kept_one() -> None:
    short, long = _resolve(seq_len=512), _resolve(seq_len=4096)
    a = memory_for(short, 8, 2)
    b = memory_for(long, 8, 2)
    assert b.activations_gib > a.activations_gib
    assert b == _training_memory_of(long.training, 8, 2, 1, 1)  # type: ignore[arg-type]


def test_with_tokens_is_dataclasses_replace() -> None:
    rw = _resolve(seq_len=1024)
    assert rw.with_tokens(1.0) == dataclasses.replace(rw, tokens=1.0)
    assert rw.with_tokens(None) == dataclasses.replace(rw, tokens=None)
    assert rw.with_tokens(1.0).workload is rw.workload


def test_copies_share_every_other_field_as_dataclasses_replace_would() -> None:
    """The generated copiers (:mod:`service.sizing.copying`) give what
    ``dataclasses.replace`` gives, sharing the other fields' objects, for a resolution
    (:meth:`ResolvedWorkload.with_length`) and its job (:meth:`Job.at_length`)."""
    rw = _resolve(seq_len=1024)
    other = msgspec.structs.replace(rw.workload, tokens=3e9)
    longer = rw.with_length(other)
    assert longer == dataclasses.replace(rw, workload=other, tokens=3e9)
    assert all(
        getattr(longer, f.name) is getattr(rw, f.name)
        for f in dataclasses.fields(rw)
        if f.name not in ("workload", "tokens")
    )
    job = resolve(_request(), builtin_plan_context(), PlanCache()).job
    at = job.at_length(longer, 5.0)
    assert at == dataclasses.replace(job, rw=longer, output_tokens=5.0)
    assert at.rw is longer
    assert at.precision is job.precision


def test_a_copier_refuses_a_field_its_class_lacks() -> None:
    with pytest.raises(ValueError, match="no fields"):
        copier(Job, ("rw", "no_such_field"))


def test_support_verdict_names_the_reason_or_the_spec() -> None:
    assert support_verdict(ACCELERATORS, "no-such-part", "bf16", False, None, None) == (
        "unknown_accelerator"
    )
    a100 = support_verdict(ACCELERATORS, "A100-80GB", "fp8", False, None, None)
    assert a100 == "precision"  # no FP8 tensor cores
    h100 = support_verdict(ACCELERATORS, "H100-80GB", "bf16", False, None, None)
    assert h100 == ACCELERATORS.resolve("H100-80GB")
    mindie = support_verdict(ACCELERATORS, "H100-80GB", "bf16", True, None, "mindie")
    assert mindie == "engine_stack"  # an Ascend-only engine


def test_a_fresh_resolution_is_used_as_built() -> None:
    ctx = builtin_plan_context()
    workload = msgspec.convert(
        {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8}, Workload
    )
    cache = PlanCache()
    first = resolve_job(workload, ctx, cache, b"signature")
    assert first == resolve_workload(workload, ctx.models)
    again = msgspec.structs.replace(workload, tokens=2e8)
    other = resolve_job(again, ctx, cache, b"signature")  # the same job at another length
    assert other.tokens == 2e8
    assert other.training is first.training
    assert other == resolve_workload(again, ctx.models)
