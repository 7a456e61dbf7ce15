"""Request structs: defaults, bounds and the cross-field checks that name the field."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.runtime.errors import InputError
from service.sizing import Finetune, Inference, ModelSpec, Placement, Preprocess, Pretrain, Workload
from service.sizing.workload import validate_workload


def decode(obj: dict[str, Any]) -> Workload:
    w: Workload = msgspec.convert(obj, Workload)
    return w


def test_tagged_union_and_defaults() -> None:
    w = decode({"kind": "finetune", "model": "llama-2-7b"})
    assert isinstance(w, Finetune)
    assert w.kind == "finetune"
    # lora_targets and optimizer default by model (all_linear / adamw for a transformer,
    # attention on a diffusion UNet, sgd for a CNN), and so does micro_batch_size (1; a
    # CNN's recipe batch 32, a detector's 16): resolved in resolve.py
    assert (w.method, w.quant_bits, w.lora_rank, w.lora_targets) == ("lora", None, 16, None)
    assert (w.seq_len, w.micro_batch_size, w.precision, w.optimizer) == (2048, None, "bf16", None)
    assert w.mixed_precision
    assert w.gradient_checkpointing is None  # the framework's default (on for hf)
    assert (w.framework, w.time_basis) == ("hf", None)
    assert w.flash_attention
    assert w.tokens is None
    q = decode({"kind": "finetune", "model": "llama-2-7b", "method": "qlora"})
    assert isinstance(q, Finetune)
    assert q.effective_quant_bits == 4
    i = decode({"kind": "inference", "model": {"params_b": 7}})
    assert isinstance(i, Inference)
    # context_len not given: None (an encoder's default is its positions), sized as 4096
    assert (i.context_len, i.context) == (None, 4096)
    assert (i.concurrency, i.streams, i.precision) == (
        None,  # not given: 1 sequence, or batched by the planner to a throughput target
        1,
        "bf16",
    )
    assert isinstance(i.model, ModelSpec)
    assert isinstance(decode({"kind": "preprocess", "data_gb": 10}), Preprocess)


def test_pretrain_needs_tokens() -> None:
    with pytest.raises(msgspec.ValidationError, match="tokens"):
        decode({"kind": "pretrain", "model": "llama-2-7b"})
    assert isinstance(decode({"kind": "pretrain", "model": "llama-2-7b", "tokens": 2e12}), Pretrain)


def test_unknown_fields_are_refused() -> None:
    """A field the job does not have would silently answer another job (strict bodies)."""
    with pytest.raises(msgspec.ValidationError, match="unknown field `temperature`"):
        decode({"kind": "inference", "model": "llama-2-7b", "temperature": 0.7})
    with pytest.raises(msgspec.ValidationError, match=r"unknown field `layerz` - at `\$.model`"):
        decode({"kind": "inference", "model": {"params_b": 7, "layerz": 3}})


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"kind": "inference", "model": {"params_b": 0}}, "$.model.params_b"),
        ({"kind": "inference", "model": {"params_b": -7}}, "$.model.params_b"),
        ({"kind": "inference", "model": {"params_b": 5000}}, "$.model.params_b"),
        ({"kind": "inference", "model": {"params_b": 7, "layers": 0}}, "$.model.layers"),
        ({"kind": "inference", "model": {"params_b": 7, "hidden": 10**7}}, "$.model.hidden"),
        ({"kind": "finetune", "model": "x", "seq_len": 0}, "$.seq_len"),
        ({"kind": "finetune", "model": "x", "seq_len": 2**21}, "$.seq_len"),
        ({"kind": "pretrain", "model": "x", "tokens": 1e16}, "$.tokens"),
        ({"kind": "finetune", "model": "x", "micro_batch_size": 0}, "$.micro_batch_size"),
        ({"kind": "inference", "model": "x", "concurrency": 10**6}, "$.concurrency"),
        ({"kind": "preprocess", "data_gb": 0}, "$.data_gb"),
        ({"kind": "finetune", "model": "", "method": "lora"}, "$.model"),
        ({"kind": "finetune", "model": "x" * 200}, "$.model"),
        ({"kind": "finetune", "model": "x", "quant_bits": 3, "method": "qlora"}, "$.quant_bits"),
        ({"kind": "training", "model": "x"}, "kind"),
    ],
)
def test_bounds_name_the_field(obj: dict[str, Any], path: str) -> None:
    with pytest.raises(msgspec.ValidationError) as err:
        decode(obj)
    assert path in str(err.value)


def test_placement_bounds() -> None:
    assert msgspec.convert({"accelerator": "A100-80GB"}, Placement).count == 1
    for bad in (
        {"accelerator": "A100", "count": 0},
        {"accelerator": "A100", "count": 5000},
        {"accelerator": "A100", "zero_stage": 4},
        {"accelerator": ""},
    ):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(bad, Placement)


@pytest.mark.parametrize(
    ("obj", "placement", "field"),
    [
        (
            {"kind": "finetune", "model": "x", "method": "lora", "quant_bits": 4},
            None,
            "workload.quant_bits",
        ),
        (
            {"kind": "finetune", "model": "x", "method": "full", "quant_bits": 8},
            None,
            "workload.quant_bits",
        ),
        (
            {"kind": "inference", "model": {"params_b": 7, "hidden": 4096, "heads": 30}},
            None,
            "workload.model.heads",
        ),
        (
            {"kind": "inference", "model": {"params_b": 7, "heads": 32, "kv_heads": 5}},
            None,
            "workload.model.kv_heads",
        ),
        (
            {"kind": "inference", "model": {"params_b": 7, "heads": 8, "kv_heads": 16}},
            None,
            "workload.model.kv_heads",
        ),
        (
            {"kind": "inference", "model": {"params_b": 7, "active_params_b": 8}},
            None,
            "workload.model.active_params_b",
        ),
        (
            {"kind": "finetune", "model": "x", "offload": "all"},
            {"accelerator": "A100", "zero_stage": 2},
            "workload.offload",
        ),
        (
            {"kind": "inference", "model": "x"},
            {"accelerator": "A100", "zero_stage": 1},
            "placement.zero_stage",
        ),
    ],
)
def test_cross_field_checks_name_the_field(
    obj: dict[str, Any], placement: dict[str, Any] | None, field: str
) -> None:
    p = None if placement is None else msgspec.convert(placement, Placement)
    with pytest.raises(InputError) as err:
        validate_workload(decode(obj), p)
    assert err.value.field == field


def test_head_dim_allows_heads_not_dividing_hidden() -> None:
    validate_workload(
        decode(
            {
                "kind": "inference",
                "model": {"params_b": 7, "hidden": 3072, "heads": 16, "head_dim": 256},
            }
        )
    )
