"""The CPU side of a job: vCPUs, RAM, disk and network, from the seeds' practice.

Seed practice (shared/seeds, both articles): CPU:GPU = 4:1 to 8:1 cores ("一张 GPU 卡建议
搭配至少 4-8 核"), RAM from 32 GB upward and hundreds of GB for large models, fast cloud
disks for data, and RDMA for any multi-node training. Preprocessing runs on CPU-only
instances (c7/r7 class) sized by data volume and the wanted wall-clock time.
"""

from __future__ import annotations

import math

import msgspec

from service.sizing.compute import PREPROCESS_MB_PER_VCPU_S
from service.sizing.formulas import GIB
from service.sizing.resolve import ResolvedWorkload
from service.sizing.results import HostRequirements, Network
from service.sizing.workload import Finetune

VCPUS_PER_DEVICE_MIN = 4
VCPUS_PER_DEVICE_RECOMMENDED = 8
MIN_RAM_GIB = 32.0
RAM_PER_DEVICE_GIB = 8.0
"""Data-loader workers and pinned buffers per accelerator (prior)."""
SYSTEM_DISK_GIB = 100.0
"""OS, CUDA/CANN, framework images and logs (prior)."""
DEVICES_PER_NODE = 8
"""The largest common GPU server: more accelerators than this span nodes (RDMA)."""
PREPROCESS_DEFAULT_VCPUS = 16
"""Without a deadline: a 16-vCPU instance (seed: 8-16 cores for preprocessing)."""
PREPROCESS_MAX_VCPUS = 1024
DATASET_BYTES_PER_TOKEN = 4.0
"""Tokenized data on disk: uint32 token ids (raw text is about as large again)."""
OFFLOAD_BUFFER = 1.5
"""DeepSpeed estimators' ``additional_buffer_factor``."""
LOADER_KINDS = frozenset({"cnn", "vit", "detector"})
"""Image models trained on decoded, augmented JPEGs at hundreds to thousands of images/s
per GPU: the CPU's decode and augmentation is the bottleneck NVIDIA DALI was built to
lift ("On dense GPU systems, deep learning applications can be significantly
bottlenecked on the CPU", https://docs.nvidia.com/deeplearning/dali/archives/dali_150/
release-notes/rel_0_1_1.html). Diffusion is not one of them: its UNet step takes seconds
per batch and diffusers' training example loads in the main process by default
(``--dataloader_num_workers`` default 0, huggingface/diffusers
examples/text_to_image/train_text_to_image.py @000280f5)."""
LOADER_VCPUS_PER_DEVICE_MIN = 8
"""DataLoader workers per accelerator in Ultralytics' YOLO training defaults (``workers:
8 # (int) dataloader workers (per RANK if DDP)``, ultralytics/ultralytics
ultralytics/cfg/default.yaml @00033e8f,
https://github.com/ultralytics/ultralytics/blob/main/ultralytics/cfg/default.yaml), one
worker process per vCPU: the fewer of the two recipes below."""
LOADER_VCPUS_PER_DEVICE_RECOMMENDED = 16
"""DataLoader workers per training process (one process per GPU under torchrun) in
torchvision's classification reference (``-j/--workers`` default 16, pytorch/vision
references/classification/train.py @017e9b99,
https://github.com/pytorch/vision/blob/main/references/classification/train.py)."""


def loader_vcpus_per_device(rw: ResolvedWorkload) -> tuple[int, int] | None:
    """(minimum, recommended) vCPUs per accelerator that training an image model's JPEG
    pipeline needs (:data:`LOADER_KINDS`: ResNet-, ViT- and YOLO-style models), or
    ``None`` when the data pipeline does not set the host (language models read token
    ids; diffusion and inference are bound by the model). Why a floor per accelerator:
    every GPU's training process runs its own pool of decode workers, one per vCPU, so
    the host's vCPUs scale with the GPUs it feeds."""
    if rw.training is None or rw.arch is None or rw.arch.kind not in LOADER_KINDS:
        return None
    return LOADER_VCPUS_PER_DEVICE_MIN, LOADER_VCPUS_PER_DEVICE_RECOMMENDED


def host_for(
    rw: ResolvedWorkload, devices: int, servers: int | None = None, data: bool = True
) -> HostRequirements:
    """Host requirements for ``devices`` accelerators over ``servers`` (default: the
    fewest servers of :data:`DEVICES_PER_NODE`; ``devices == 0`` or a preprocess workload:
    the CPU-only sizing). Training needs RDMA only when it spans servers: a single
    16-GPU server (Tencent's BMGNV4, 16 x A10) keeps its traffic inside (review 5 G2).
    ``data=False``: without the job's data on the disk (:func:`with_data` adds it)."""
    if rw.kind == "preprocess" or rw.arch is None:
        return _preprocess_host(rw)
    devices = max(devices, 1)
    arch = rw.arch
    weights = checkpoint_gib(rw)
    offload = _offload_ram_gib(rw, devices)
    ram = max(MIN_RAM_GIB, 1.2 * weights + RAM_PER_DEVICE_GIB * devices) + offload
    disk = SYSTEM_DISK_GIB + weights
    if rw.training is not None:
        w = rw.workload
        full = not isinstance(w, Finetune) or w.method in ("full", "freeze")
        # a resumable checkpoint: 16-bit weights + fp32 master and Adam states (16 B/param)
        ckpt = arch.params * 16.0 / GIB if full else rw.training.trainable_params * 16.0 / GIB
        disk += 2 * ckpt  # keep the last two
        tokens = data_disk_gib(rw) if data else None
        if tokens is not None:
            disk += tokens
    if servers is None:
        servers = math.ceil(devices / DEVICES_PER_NODE)
    network: Network = "rdma" if servers > 1 and rw.training is not None else "standard"
    per_device = loader_vcpus_per_device(rw) or (
        VCPUS_PER_DEVICE_MIN,
        VCPUS_PER_DEVICE_RECOMMENDED,
    )
    return HostRequirements(
        vcpus=per_device[0] * devices,
        vcpus_recommended=per_device[1] * devices,
        ram_gib=ram,
        disk_gib=disk,
        network=network,
        offload_ram_gib=offload,
    )


def data_disk_gib(rw: ResolvedWorkload) -> float | None:
    """Disk for a training job's tokenized data and its raw text (``None``: serving, no
    token count, or an image model, whose dataset no field sizes): the one host figure
    that grows with the job's length."""
    if rw.training is None or rw.tokens is None or rw.image_model:
        return None
    return rw.tokens * DATASET_BYTES_PER_TOKEN * 2 / GIB


def with_data(host: HostRequirements, rw: ResolvedWorkload) -> HostRequirements:
    """``host``, sized by :func:`host_for` for ``rw``'s job without its data
    (``data=False``), with ``rw``'s data on its disk: the same figures :func:`host_for`
    gives ``rw`` (the data is the last term of its disk). Why: the same job at another
    length keeps the rest."""
    data = data_disk_gib(rw)
    if data is None:
        return host
    return msgspec.structs.replace(host, disk_gib=host.disk_gib + data)


def checkpoint_gib(rw: ResolvedWorkload) -> float:
    """GiB of the weights as the job loads them: serving reads the checkpoint in its own
    format (an FP8 or int4 checkpoint is 1 or ~0.56 bytes per parameter, and vLLM/SGLang
    load its safetensors through mmap, with no 16-bit copy in RAM); training starts from
    16-bit weights (QLoRA quantizes a 16-bit checkpoint as it loads)."""
    arch = rw.arch
    assert arch is not None
    if rw.inference is not None and rw.inference.weights > 0:
        return rw.inference.weights / GIB
    return arch.params * 2.0 / GIB


def _offload_ram_gib(rw: ResolvedWorkload, devices: int) -> float:
    """ZeRO-Offload host RAM over all nodes, from DeepSpeed's estimators (zero_init on):
    stages 1-2: P·max(4·gpus_per_node, 16)·1.5 per node; stage 3: 16P·1.5 (optimizer)
    or 18P·1.5 (all) in total."""
    b = rw.training
    if b is None or b.offload == "none":
        return 0.0
    p = b.trainable_params
    nodes = math.ceil(devices / DEVICES_PER_NODE)
    if b.offload == "all":
        return p * 18 * OFFLOAD_BUFFER / GIB
    per_node = min(devices, DEVICES_PER_NODE)
    return p * max(4 * per_node, 16) * OFFLOAD_BUFFER * nodes / GIB


def _preprocess_host(rw: ResolvedWorkload) -> HostRequirements:
    data_mb = rw.data_gb * 1000.0
    if rw.target_hours:
        need = data_mb / (rw.target_hours * 3600.0)
        vcpus = min(max(math.ceil(need / PREPROCESS_MB_PER_VCPU_S), 4), PREPROCESS_MAX_VCPUS)
    else:
        vcpus = PREPROCESS_DEFAULT_VCPUS
    # The sustained rate the vCPUs process at (= data / time, computed without dividing by
    # a time that underflows to 0 for a tiny data_gb).
    rate = vcpus * PREPROCESS_MB_PER_VCPU_S
    data_gib = rw.data_gb * 1e9 / GIB
    return HostRequirements(
        vcpus=vcpus,
        vcpus_recommended=vcpus,
        ram_gib=max(MIN_RAM_GIB, 4.0 * vcpus),
        disk_gib=SYSTEM_DISK_GIB + 2.2 * data_gib,
        network="standard",
        io_mb_per_s=2.0 * rate,
    )
