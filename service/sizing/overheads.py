"""Fixed start-up and wind-down time of a training job: what no amount of GPUs shortens.

The training-loop time (:func:`service.sizing.compute.time_for`) scales with the work
over the devices, so a 4-minute job on 64 GPUs looks as cheap as a 32-minute one on 8.
A rented job also waits for its nodes and pays for them while it does: every node boots
and bootstraps in parallel, reads the checkpoint it starts from off its own data disk,
and the job ends by writing its result. Those seconds are per job (wall clock) and are
billed on every node, so they favour fewer nodes for short jobs.

- Node start: a cloud VM launched cold and bootstrapped to run a job takes about 5
  minutes ("EC2-based cold start (no warm pool): ~5 minutes ... launch instance,
  bootstrap the runner, and register it", and a Karpenter-provisioned node for a pod
  also ~5 minutes; https://sbhn.g1b.me/item/44053826, a mirror of Hacker News item
  44053826). Nodes start in parallel: once per job.
- Checkpoint read and final save: the 16-bit weights (2 B/param) a fine-tune or RLHF
  run starts from (a pre-training run starts from random weights), and what it saves at
  the end (the 16-bit weights; LoRA/QLoRA: the fp32 adapters, 4 B per trainable
  parameter), at the throughput of an Alibaba Cloud ESSD PL1 data disk of the job's
  disk size: min{120 + 0.5 x capacity GiB, 350} MB/s
  (https://help.aliyun.com/zh/rds/apsaradb-rds-for-mariadb/upgrade-from-standard-ssds-to-essds,
  "单盘吞吐量性能计算公式"; PL1 is the default performance level of the ESSDs the
  Chinese clouds attach).

NCCL's communicator set-up (seconds) and evaluation (not asked for) are left out: the
figure is a floor on the fixed part, not an estimate of everything around the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.runtime.bounded import IdentityMemo
from service.sizing.host import host_for
from service.sizing.resolve import ResolvedWorkload, TrainingBudget
from service.sizing.workload import Finetune, Pretrain

NODE_START_S = 300.0
"""Launch and bootstrap of a cold cloud VM (see the module docstring)."""
ESSD_PL1_BASE_MB_S = 120.0
ESSD_PL1_MB_S_PER_GIB = 0.5
ESSD_PL1_MAX_MB_S = 350.0
"""ESSD PL1 single-disk throughput: min{120 + 0.5 x capacity, 350} MB/s."""
CHECKPOINT_BYTES_PER_PARAM = 2.0
"""A 16-bit (bf16/fp16) safetensors checkpoint."""
ADAPTER_BYTES_PER_PARAM = 4.0
"""PEFT saves the trained fp32 adapter weights."""


@dataclass(frozen=True, slots=True)
class JobOverhead:
    """The fixed seconds of one training job, by part."""

    start_s: float
    load_s: float
    save_s: float
    disk_mb_s: float

    @property
    def seconds(self) -> float:
        return self.start_s + self.load_s + self.save_s

    @property
    def hours(self) -> float:
        return self.seconds / 3600.0


def disk_mb_per_s(disk_gib: float) -> float:
    """Throughput of one ESSD PL1 disk of ``disk_gib``."""
    return min(ESSD_PL1_BASE_MB_S + ESSD_PL1_MB_S_PER_GIB * disk_gib, ESSD_PL1_MAX_MB_S)


def job_overhead(rw: ResolvedWorkload, disk_gib: float) -> JobOverhead | None:
    """The fixed part of the training job ``rw`` on nodes with ``disk_gib`` data disks;
    ``None`` for serving, preprocessing and jobs of unknown shape."""
    b = rw.training
    arch = rw.arch
    if b is None or arch is None:
        return None
    w = rw.workload
    rate = disk_mb_per_s(disk_gib) * 1e6
    load = 0.0 if isinstance(w, Pretrain) else arch.params * CHECKPOINT_BYTES_PER_PARAM
    if isinstance(w, Finetune) and b.lora:
        saved = b.trainable_params * ADAPTER_BYTES_PER_PARAM
    else:
        saved = arch.params * CHECKPOINT_BYTES_PER_PARAM
    return JobOverhead(NODE_START_S, load / rate, saved / rate, rate / 1e6)


def class_overhead(rw: ResolvedWorkload) -> JobOverhead | None:
    """:func:`job_overhead` on the disk the job needs without its dataset (the system
    image, the weights and two checkpoints, :func:`service.sizing.host.host_for`): the
    same for the job at any length, so answers that differ only in tokens share it."""
    b = rw.training
    if b is None or rw.arch is None:
        return None
    kept = _CLASS_OVERHEADS.get(b)
    if kept is None:
        kept = job_overhead(rw, host_for(rw.with_tokens(None), 1).disk_gib)
        assert kept is not None  # a training job of known shape has one
        _CLASS_OVERHEADS.put(b, kept)
    return kept


_CLASS_OVERHEADS: IdentityMemo[TrainingBudget, JobOverhead] = IdentityMemo(64)
""":func:`class_overhead` per training budget (64: more than the requests a planner works
on at once). Why: a new job shape asks it three times — its class's answer terms, its
request's placer (the hours added to every option) and the estimate's notes — on the
resolved workload or copies of it at other lengths, which share the budget object; the
overhead depends on nothing such a copy changes (the disk it is read at leaves the
dataset out), and the budget is immutable, so the kept value is the one a new
computation would give."""


def overhead_note(overhead: JobOverhead) -> str:
    """The assumption sentence of :func:`job_overhead` (English, as the estimate's)."""
    return (
        f"Fixed time per job, not in this estimate's hours: about {overhead.seconds / 60:.0f} min "
        f"({NODE_START_S / 60:.0f} min to start and bootstrap the nodes, in parallel; "
        f"{overhead.load_s / 60:.1f} min to read the starting checkpoint and "
        f"{overhead.save_s / 60:.1f} min to save the result at {overhead.disk_mb_s:.0f} MB/s, "
        "an ESSD PL1 data disk of this size). Recommendations add it to each option's hours "
        "and bill it on every node."
    )
