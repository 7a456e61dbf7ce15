"""Review leftover R11: an image model's training host is sized by its data pipeline.

JPEG decoding and augmentation run in DataLoader worker processes on the CPU, one per
vCPU: Ultralytics trains YOLO with 8 workers per rank (per GPU under DDP) and
torchvision's classification reference with 16 per process (one process per GPU), so a
ResNet/ViT/YOLO training host needs at least 8 vCPUs per accelerator (16 recommended).
Diffusion fine-tuning is bound by the UNet step (diffusers' example loads in the main
process by default), so it keeps the generic 4-8.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.sizing import ResolvedWorkload, Workload, host_for, resolve_workload
from service.sizing.host import loader_vcpus_per_device
from service.sizing.presets import ModelRegistry, builtin_presets

MODELS = ModelRegistry(builtin_presets())


def rw_of(**obj: Any) -> ResolvedWorkload:
    return resolve_workload(msgspec.convert(obj, Workload), MODELS)


RESNET = {"kind": "pretrain", "model": "resnet-50", "tokens": 10**8, "image_size": 224}


@pytest.mark.parametrize(
    "workload",
    [
        RESNET,
        {"kind": "finetune", "model": "vit-b-16", "method": "full", "tokens": 10**7},
        {"kind": "pretrain", "model": "yolov8-m", "tokens": 10**7},
    ],
)
def test_image_training_takes_8_to_16_vcpus_per_accelerator(workload: dict[str, Any]) -> None:
    rw = rw_of(**workload)
    assert loader_vcpus_per_device(rw) == (8, 16)
    host = host_for(rw, 4)
    assert (host.vcpus, host.vcpus_recommended) == (32, 64)
    assert (host_for(rw, 1).vcpus, host_for(rw, 1).vcpus_recommended) == (8, 16)


@pytest.mark.parametrize(
    "workload",
    [
        {"kind": "finetune", "model": "sd-1.5", "method": "full", "tokens": 10**5},
        {"kind": "inference", "model": "resnet-50"},
        {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 10**7},
    ],
)
def test_other_jobs_keep_4_to_8(workload: dict[str, Any]) -> None:
    rw = rw_of(**workload)
    assert loader_vcpus_per_device(rw) is None
    host = host_for(rw, 4)
    assert (host.vcpus, host.vcpus_recommended) == (16, 32)
