"""The per-framework capability table and the server-network term (review 3: R3, R15,
R14), as numbers: which layouts each framework may run, where tensor parallelism may run,
and how fast a data-parallel ring moves across servers."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import AcceleratorSpec
from service.sizing import Placement, Workload, estimate
from service.sizing.compute import (
    Cluster,
    data_parallel_link_gbps,
    ring_link_gbps,
    time_for,
)
from service.sizing.memory import training_layouts
from service.sizing.parallelism import (
    FRAMEWORK_PARALLELISM,
    framework_limit,
    framework_parallelism,
    limits,
    tensor_parallel_limit,
)
from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.profiles import TrainFramework
from service.sizing.resolve import resolve_workload

MODELS = ModelRegistry(builtin_presets())
ACC = AcceleratorRegistry(builtin_accelerators())
REPO = Path(__file__).resolve().parents[2]
ASCEND = {
    a.name: a
    for a in msgspec.json.decode(
        (REPO / "plugins/huawei/accelerators.json").read_bytes(), type=list[AcceleratorSpec]
    )
}


def spec(name: str) -> AcceleratorSpec:
    found = ACC.resolve(name) or ASCEND.get(name)
    assert found is not None, name
    return found


def test_every_framework_has_a_sourced_row() -> None:
    """Each ``workload.framework`` value has a capability row naming a public page."""
    assert set(FRAMEWORK_PARALLELISM) == set(typing.get_args(TrainFramework))
    for name, cap in FRAMEWORK_PARALLELISM.items():
        if name != "generic":
            assert "https://" in cap.source, name


@pytest.mark.parametrize(
    ("framework", "stage", "tensor", "pipeline", "bits", "allowed"),
    [
        ("hf", 3, 1, 1, None, True),  # ZeRO-3 / FSDP
        ("hf", 3, 1, 1, 4, True),  # FSDP/ZeRO-3 QLoRA (PEFT 0.10, bnb_4bit_quant_storage)
        ("hf", 3, 1, 1, 8, False),  # no sharded 8-bit base
        ("hf", 2, 1, 1, 8, True),
        ("hf", 0, 2, 1, None, False),  # no training TP in Trainer/PEFT (R3)
        ("hf", 3, 2, 1, None, False),
        ("llama-factory", 1, 1, 2, None, False),  # no pipeline either
        ("unsloth", 0, 1, 1, 4, False),  # one GPU only (R15)
        ("unsloth", 3, 1, 1, None, False),
        ("torchtune", 3, 1, 1, 4, True),  # FSDP2 QLoRA
        ("torchtune", 0, 1, 1, None, False),  # no DDP mode
        ("torchtitan", 3, 8, 8, None, True),  # FSDP + TP + PP
        ("torchtitan", 3, 2, 1, 4, False),  # never TP with a k-bit base
        ("deepspeed", 2, 1, 1, None, True),
        ("deepspeed", 1, 4, 1, None, True),  # AutoTP with ZeRO-1
        ("deepspeed", 3, 4, 1, None, False),  # AutoTP is ZeRO 0-2 only, PP ZeRO-1 at most
        ("megatron", 1, 8, 4, None, True),  # distributed optimizer + TP + PP
        ("megatron", 3, 1, 1, None, False),  # no ZeRO-3
        ("mindspeed", 0, 8, 1, None, True),
        ("generic", 3, 2, 2, None, True),
    ],
)
def test_capability_table(
    framework: str, stage: int, tensor: int, pipeline: int, bits: int | None, allowed: bool
) -> None:
    assert framework_parallelism(framework).allows(stage, tensor, pipeline, bits=bits) is allowed


@pytest.mark.parametrize(
    ("accelerator", "per_node", "limit"),
    [
        ("A10", 4, 1),  # PCIe Gen4 (the gn7i boxes of R3)
        ("L20", 8, 1),
        ("T4", 8, 1),
        ("A30", 4, 2),  # NVLink bridge pairs two cards
        ("A100-40GB", 8, 8),  # NVLink/NVSwitch: the whole server
        ("A100-80GB", 2, 2),  # but never beyond one server's devices
        ("H20", 8, 8),
        ("Ascend-910B3", 8, 8),  # HCCS
    ],
)
def test_tensor_parallel_stays_in_one_nvlink_server(
    accelerator: str, per_node: int, limit: int
) -> None:
    assert tensor_parallel_limit(spec(accelerator), per_node) == limit


def _rw(**w: Any) -> Any:
    base = {"kind": "finetune", "model": "qwen2.5-72b", "method": "full", "seq_len": 4096,
            "tokens": 2e8}  # fmt: skip
    return resolve_workload(msgspec.convert({**base, **w}, Workload), MODELS)


def test_layouts_follow_the_framework() -> None:
    """The ladder's (tensor, pipeline) pairs: only data parallelism under HF, none beyond
    it with a 4-bit base, TP and PP for Megatron (powers of two dividing the 64 heads)."""
    assert training_layouts(_rw(framework="hf"), 8) == [(1, 1)]
    assert training_layouts(_rw(method="qlora", framework="generic"), 8) == [(1, 1)]
    assert training_layouts(_rw(framework="megatron"), 16) == [
        (1, 1), (2, 1), (4, 1), (8, 1), (8, 2),
    ]  # fmt: skip
    # an explicit layout is sized as asked (estimates of what the user names)
    assert training_layouts(_rw(framework="hf"), 8, tensor_parallel=2) == [(2, 1)]


def test_limit_sentences() -> None:
    assert limits("unsloth", 1, 0, 1, 1)  # said even on one GPU: why no bigger server
    assert not limits("hf", 1, 0, 1, 1)
    assert limits("hf", 8, 3, 1, 1)
    assert not limits("hf", 8, 1, 1, 1)
    assert limits("megatron", 16, 1, 8, 2)
    assert not limits("torchtitan", 16, 3, 8, 2)
    assert framework_limit("unsloth", "en") == (
        "Unsloth (open source) trains on one GPU only, so only single-GPU layouts are considered"
    )
    assert framework_limit("unsloth", "zh") == "Unsloth（开源版）只支持单卡训练，因此只考虑单卡方案"


A100 = "A100-80GB"


@pytest.mark.parametrize(
    ("accelerator", "devices", "tp", "cluster", "gbps"),
    [
        (A100, 8, 1, None, 300.0),  # one server: NVLink 3 at 600/2
        (A100, 96, 1, None, 300.0),  # no servers named: the NVLink ring (old rule)
        (A100, 96, 1, Cluster(8, 800.0), 100.0),  # 4x200 Gbit/s RoCE (ml.hpcpni2): 100 GB/s
        (A100, 96, 8, Cluster(8, 800.0), 12.5),  # TP 8: one NIC (100 Gbit/s) per ring
        (A100, 96, 2, Cluster(8, 800.0), 50.0),  # 4 rings share the server's 100 GB/s
        ("H20", 24, 1, Cluster(8, 32.0), 4.0),  # eRDMA 32 Gbit/s (gn8v-8x.16xlarge)
        ("H100-80GB", 128, 1, Cluster(8, 3200.0), 400.0),  # 8x400 Gbit/s IB < NVLink 450
        ("A10", 16, 1, Cluster(8, 3200.0), 10.0),  # PCIe across sockets stays the bottleneck
    ],
)
def test_data_parallel_link(
    accelerator: str, devices: int, tp: int, cluster: Cluster | None, gbps: float
) -> None:
    link = data_parallel_link_gbps(spec(accelerator), devices, tp, cluster, tp)
    assert link == pytest.approx(gbps, rel=1e-9)


def test_ring_inside_a_server_is_unchanged() -> None:
    a10 = spec("A10")
    assert data_parallel_link_gbps(a10, 8) == ring_link_gbps(a10, 8) == 10.0


def test_zero3_gather_over_a_slow_network_costs_time() -> None:
    """72B full fine-tune, ZeRO-3 on 3 x 8 H20, 4096-token micro-steps: about 48 s of
    compute each (12 s forward, 36 s backward). Over 32 Gbit/s eRDMA each ring moves
    4 GB/s, so the weight gather (23/24 x 145 GB / 4 GB/s = 34.8 s) exposes 22.8 s behind
    the forward, and the backward's gather plus half the gradient reduce-scatter (34.8 +
    34.8 s) exposes 33.6 s: 48 + 56.4 = 104 s, 2.18x the NVLink-only hours. At 3200
    Gbit/s (a ring at min(450, 400) GB/s) the traffic hides and the hours do not move."""
    rw = _rw(framework="hf")
    h20 = spec("H20")
    alone = time_for(rw, h20, 24, zero_stage=3)
    slow = time_for(rw, h20, 24, zero_stage=3, cluster=Cluster(8, 32.0))
    fast = time_for(rw, h20, 24, zero_stage=3, cluster=Cluster(8, 3200.0))
    assert alone is not None
    assert slow is not None
    assert fast is not None
    assert fast.hours == pytest.approx(alone.hours, rel=1e-9)
    assert slow.hours / alone.hours == pytest.approx(2.18, rel=0.02)
    assert slow.mfu is not None
    assert alone.mfu is not None
    assert slow.mfu == pytest.approx(alone.mfu * alone.hours / slow.hours, rel=1e-6)


def test_estimate_network_note() -> None:
    """/v1/estimate says the figure it timed the servers' traffic on."""
    w = msgspec.convert(
        {"kind": "finetune", "model": "qwen2.5-7b", "method": "full", "tokens": 1e8}, Workload
    )
    p = msgspec.convert({"accelerator": "A100-80GB", "count": 16}, Placement)
    notes = estimate(w, p, MODELS, ACC).assumptions
    assert any(
        "Across 2 servers of 8" in n
        and "800 Gbit/s per server (100 Gbit/s per accelerator, assumed" in n
        for n in notes
    ), notes
