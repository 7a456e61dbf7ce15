"""Work and time: FLOPs of the job, hours on a placement, serving throughput.

- Training: C = 6·P_active·D (MoE counts active parameters), time = C / (devices · dense
  peak · MFU) with the MFU prior of :mod:`service.sizing.mfu`.
- Image models: 3 x forward FLOPs per sample (forward + 2x backward) x samples.
- Serving: decoding is bounded by memory bandwidth (each step reads the weights and the KV
  cache) or by compute (2·P_active per token), whichever is slower.
"""

from __future__ import annotations

from service.providers import AcceleratorSpec
from service.sizing.formulas import training_flops
from service.sizing.mfu import mfu_prior
from service.sizing.resolve import ResolvedWorkload
from service.sizing.results import ComputeEstimate, TimeEstimate
from service.sizing.workload import Finetune, Inference, Pretrain

BANDWIDTH_EFFICIENCY = 0.7
"""Fraction of peak HBM bandwidth a decode step sustains (no public anchor in the reference
set; serving engines typically reach 60-80 %)."""
DECODE_COMPUTE_MFU = 0.5
"""Fraction of dense peak a large decode batch sustains when compute-bound (prior)."""
PREPROCESS_MB_PER_VCPU_S = 5.0
"""Decode/clean/tokenize throughput per vCPU for Python data pipelines (prior; HF
tokenizers alone reach about 50 MB/s per server, Python-side cleaning is slower)."""
IMAGE_SERVING_MFU = 0.3


def compute_for(rw: ResolvedWorkload) -> ComputeEstimate:
    """FLOPs and tokens of the whole job (``flops=None`` where no count is known)."""
    arch = rw.arch
    if arch is None:
        return ComputeEstimate(flops=None, tokens=None)
    w = rw.workload
    if isinstance(w, Inference):
        tokens = w.output_tokens
        flops = None if tokens is None else 2.0 * arch.active_params * tokens
        if rw.image_model:
            flops = None
        return ComputeEstimate(flops=flops, tokens=tokens)
    tokens = rw.tokens
    if tokens is None:
        return ComputeEstimate(flops=None, tokens=None)
    if rw.image_model:
        per_sample = _image_forward_flops(rw)
        return ComputeEstimate(
            flops=None if per_sample is None else 3.0 * per_sample * tokens, tokens=tokens
        )
    return ComputeEstimate(flops=training_flops(arch.active_params, tokens), tokens=tokens)


def _image_forward_flops(rw: ResolvedWorkload) -> float | None:
    return rw.sample_flops


def peak_tflops(accelerator: AcceleratorSpec, precision: str) -> float | None:
    """Dense peak for the training precision: FP8 where supported, FP32 for fp32, else
    BF16 (FP16 on parts without BF16)."""
    if precision == "fp8" and accelerator.supports_fp8 and accelerator.fp8_tflops:
        return accelerator.fp8_tflops
    if precision == "fp32":
        return accelerator.fp32_tflops
    return accelerator.dense_tflops_16bit


def time_for(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int
) -> TimeEstimate | None:
    """Hours on ``devices`` x ``accelerator``; ``None`` when the work or the peak is unknown."""
    if rw.arch is None or devices < 1:
        return None
    w = rw.workload
    if isinstance(w, Inference):
        if w.output_tokens is None:
            return None
        tps = inference_throughput(rw, accelerator, devices)
        if tps <= 0:
            return None
        hours = w.output_tokens / tps / 3600.0
        return TimeEstimate(hours=hours, device_hours=hours * devices, mfu=None)
    flops = compute_for(rw).flops
    precision = w.precision if isinstance(w, Pretrain | Finetune) else "bf16"
    peak = peak_tflops(accelerator, precision)
    if flops is None or not peak:
        return None
    mfu, _ = mfu_prior(rw.active_params_b, accelerator, image_model=rw.image_model)
    hours = flops / (devices * peak * 1e12 * mfu) / 3600.0
    return TimeEstimate(hours=hours, device_hours=hours * devices, mfu=mfu)


def inference_throughput(rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int) -> float:
    """Decode tokens/s of one model replica spread over ``devices`` at the workload's
    concurrency (images/s for image models); 0.0 when the accelerator lacks the figures.

    step time = max(bytes read per step / (devices · bandwidth · 0.7),
                    2·P_active·concurrency / (devices · peak · 0.5))
    """
    b = rw.inference
    if b is None or rw.arch is None or devices < 1:
        return 0.0
    peak = accelerator.dense_tflops_16bit
    if rw.image_model:
        per_sample = _image_forward_flops(rw)
        if not peak or not per_sample:
            return 0.0
        return devices * peak * 1e12 * IMAGE_SERVING_MFU / per_sample
    concurrency = b.concurrency
    step_bytes = b.weights + b.kv_per_token * b.context_len * concurrency
    if not accelerator.mem_bandwidth_gbps:
        # Decoding is bandwidth-bound: without the bandwidth the compute bound alone would
        # overstate the rate many times over, so there is no rate at all.
        return 0.0
    times = [step_bytes / (devices * accelerator.mem_bandwidth_gbps * 1e9 * BANDWIDTH_EFFICIENCY)]
    if peak:
        times.append(
            2.0 * rw.arch.active_params * concurrency / (devices * peak * 1e12 * DECODE_COMPUTE_MFU)
        )
    return concurrency / max(times)


def preprocess_hours(rw: ResolvedWorkload, vcpus: int) -> float | None:
    """Hours for a CPU-only preprocess job on ``vcpus`` at the per-vCPU throughput prior."""
    if rw.kind != "preprocess" or vcpus < 1:
        return None
    return rw.data_gb * 1000.0 / (vcpus * PREPROCESS_MB_PER_VCPU_S) / 3600.0
