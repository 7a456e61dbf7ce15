"""When a framework's missing tensor/pipeline parallelism matters to a job: only when the
job, on that accelerator, would fit on fewer devices by splitting its layers than any
layout the framework itself can launch (:func:`service.sizing.memory.needs_layer_split`)."""

from __future__ import annotations

from typing import Any

import msgspec

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.sizing import ResolvedWorkload, Workload, fit_placement, resolve_workload
from service.sizing.memory import needs_layer_split
from service.sizing.presets import ModelRegistry, builtin_presets

MODELS = ModelRegistry(builtin_presets())
ACC = AcceleratorRegistry(builtin_accelerators())
HEADROOM = 0.10


def rw_of(**obj: Any) -> ResolvedWorkload:
    return resolve_workload(msgspec.convert(obj, Workload), MODELS)


LORA_7B = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 10**7}
LORA_72B = {"kind": "finetune", "model": "qwen2.5-72b", "method": "lora", "seq_len": 4096,
            "tokens": 2 * 10**7}  # fmt: skip


def test_a_7b_lora_never_needs_split_layers() -> None:
    """It fits one A100-40GB as it is, and two A10s with ZeRO-3: no server count of
    either part is set by Hugging Face's missing tensor parallelism."""
    rw = rw_of(**LORA_7B)
    a100, a10 = ACC.get("A100-40GB"), ACC.get("A10")
    assert fit_placement(rw, a100, 1, HEADROOM) is not None
    assert fit_placement(rw, a10, 2, HEADROOM) is not None
    for devices in (1, 2, 4, 8):
        assert not needs_layer_split(rw, a100, devices, HEADROOM, per_node=8)
        assert not needs_layer_split(rw, a10, devices, HEADROOM, per_node=8)


def test_a_72b_lora_at_4k_needs_tensor_parallelism_on_eight_a100s() -> None:
    """Review 3 R3's job: on one 8xA100-40GB NVLink server it fits only with tensor
    parallelism (what HF Trainer cannot launch), so HF's 16 GPUs over two servers are
    set by that limit; a framework with tensor parallelism is not held by it."""
    rw = rw_of(**LORA_72B)
    a100 = ACC.get("A100-40GB")
    assert fit_placement(rw, a100, 8, HEADROOM) is None  # HF's own layouts: none on 8
    assert fit_placement(rw, a100, 8, HEADROOM, tensor_parallel=2, capable=False) is not None
    assert needs_layer_split(rw, a100, 16, HEADROOM, per_node=8)
    assert not needs_layer_split(rw, a100, 8, HEADROOM, per_node=8)  # nothing below 8 fits
    mega = rw_of(**LORA_72B, framework="megatron")
    assert not needs_layer_split(mega, a100, 16, HEADROOM, per_node=8)


def test_a_4bit_base_is_never_split() -> None:
    """bitsandbytes 4-bit layers are not sharded by a tensor-parallel plan in any trainer:
    the framework's limit never decides a QLoRA's layout."""
    rw = rw_of(kind="finetune", model="qwen2.5-72b", method="qlora", tokens=10**7)
    for name in ("A100-40GB", "A10"):
        assert not needs_layer_split(rw, ACC.get(name), 16, HEADROOM, per_node=8)
