"""Work and time: FLOPs of the job, hours on a placement, serving throughput.

- Training: the FLOPs the hardware runs per token (forward, backward without weight
  gradients for frozen weights, attention, recompute; see
  :func:`service.sizing.resolve.training_flops_per_token`) over devices x dense peak x a
  utilization prior (:mod:`service.sizing.mfu`: ``steady`` or ``run``), plus ZeRO-Offload
  traffic over the host link. FP8 runs at its measured gain over BF16, not at its peak. On
  Hopper the attention kernel's FLOPs run at FlashAttention-2's 35 % of peak where the
  prior is higher (:func:`attention_extra_seconds`).
- Image models: 3 x forward FLOPs per sample (forward + 2x backward) x samples; 2 x for
  LoRA on a frozen UNet (no weight gradients; + 1 recomputed forward when checkpointed).
- Serving: a decode step reads the weights the step touches (MoE: only the experts the
  batch routes to) and the KV cache at the engine's share of peak bandwidth, plus the
  engine's per-step and per-layer launch overheads (and the all-reduces of tensor
  parallelism); or it is compute-bound at 2·P_active per token, whichever is slower. With
  a prompt length, each request's prefill time is added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import msgspec

from service.catalog.models import AcceleratorSpec
from service.sizing import diffusion, encoder
from service.sizing.dequant import DequantTerms
from service.sizing.formulas import training_flops
from service.sizing.mfu import (
    IMAGE_FORWARD_FLOOR_S,
    attention_utilization,
    generation,
    image_training_prior,
    mfu_prior,
)
from service.sizing.moe import moe_training_factor
from service.sizing.profiles import ServeEngine, engine_profile
from service.sizing.resolve import ResolvedWorkload, rollout_tensor_parallel
from service.sizing.results import ComputeEstimate, TimeEstimate
from service.sizing.uncertainty import hours_range
from service.sizing.workload import Inference, Preprocess

BANDWIDTH_EFFICIENCY = 0.85
"""Fraction of peak HBM bandwidth a large streaming read sustains (GEMV-shaped decode
kernels read the weights once per step); the engine's overheads are modelled separately
(:data:`service.sizing.profiles.ENGINES`)."""
QUANT_BANDWIDTH_EFFICIENCY = {"int4": 0.75, "int8": 0.85, "fp8": 0.9}
"""Share of the 16-bit kernels' effective bandwidth that dequantizing weight-only kernels
(AWQ/GPTQ/Marlin int4, int8, FP8) reach at small batch: unpacking and scaling cost ALU
time per byte (vLLM's int4 decode runs at 1.6-1.8x its 16-bit speed for 3.5x fewer bytes
in the Qwen2.5 speed benchmark). Engines with their own fused w4a16 kernels
(:attr:`~service.sizing.profiles.EngineProfile.fused_int4`) lose almost nothing."""
FUSED_INT4_EFFICIENCY = 0.95
"""LMDeploy TurboMind's and TensorRT-LLM's w4a16 kernels: LMDeploy reports 4-bit decode at
2.4x its FP16 speed (docs/en/quantization/w4a16.md), i.e. near-full bandwidth on 3.5x
fewer bytes."""
DECODE_COMPUTE_MFU = 0.5
"""Fraction of dense peak a large decode batch sustains when compute-bound (prior)."""
PREFILL_MFU = 0.5
"""Fraction of dense peak a prefill sustains (large matmuls; prior)."""
ALLREDUCE_LATENCY_S = 25e-6
"""One small-message all-reduce over NVLink/HCCS (NCCL ring latency, 10-30 µs in
nccl-tests); tensor parallelism does two per layer per decode step."""
PCIE_BIDIRECTIONAL_GBPS = 64.0
"""PCIe 4.0 x16 both directions (the registry's figure for parts without NVLink), the
all-reduce path when a part publishes no interconnect."""
PCIE_GEN3_BIDIRECTIONAL_GBPS = 32.0
"""PCIe 3.0 x16 both directions: parts that name a Gen3 link but publish no figure."""
NCCL_PCIE_GEN4_X16_GBPS = 24.0
"""What one direction of a PCIe Gen4 x16 link carries for NCCL: its topology model rates
Gen3 x16 at ``PCI_BW 12.0`` and scales by generation (NVIDIA/nccl src/graph/topo.h;
``NCCL_DEBUG=INFO`` dumps show ``PCI[24.0]`` for Gen4 x16 GPUs, e.g.
https://github.com/NVIDIA/nccl-tests/issues/307). Parts whose registry link is Gen3 x16
(32 GB/s both ways) get half."""
NCCL_INTER_SOCKET_GBPS = 10.0
"""NCCL's figure for the CPU-to-CPU link a ring crosses when its GPUs hang off both sockets
of a PCIe server: ``SKL_QPI_BW 10.0`` (Intel Skylake to Cooper/Ice Lake UPI) in
NVIDIA/nccl src/graph/topo.h (AMD Zen 3/4 ``AMD_ZEN34_BW 24.0``; the Intel figure is the
one the Chinese clouds' A10/T4/L20 servers have). Without NVLink the ring's slowest hop
sets the bus bandwidth."""
PCIE_GPUS_PER_SOCKET = 4
"""GPUs behind one CPU socket in an 8-GPU PCIe server (4 + 4, the layout of the 8-GPU
PCIe topologies posted in nccl-tests#307 and nccl#1530): rings over more cross sockets."""


def ring_link_gbps(accelerator: AcceleratorSpec, devices: int) -> float:
    """One direction of the slowest hop of a ring over ``devices``: NVLink/HCCS parts at
    half their published bidirectional figure (NVLink 4 900 GB/s, NVLink 3 600 GB/s);
    PCIe parts at NCCL's PCIe figure, and at the inter-socket figure once the ring spans
    both sockets (:data:`PCIE_GPUS_PER_SOCKET`)."""
    name = (accelerator.interconnect or "").lower()
    link = accelerator.interconnect_gbps or (
        PCIE_GEN3_BIDIRECTIONAL_GBPS if "gen3" in name else PCIE_BIDIRECTIONAL_GBPS
    )
    bridged = "bridge" in name  # an NVLink bridge pairs two cards; rings over more use PCIe
    if link > PCIE_BIDIRECTIONAL_GBPS and not (bridged and devices > 2):
        return link / 2.0
    link = min(link, PCIE_BIDIRECTIONAL_GBPS)
    pcie = NCCL_PCIE_GEN4_X16_GBPS * link / PCIE_BIDIRECTIONAL_GBPS
    if devices > PCIE_GPUS_PER_SOCKET:
        return min(pcie, NCCL_INTER_SOCKET_GBPS)
    return pcie


def allreduce_seconds(
    accelerator: AcceleratorSpec, devices: int, nbytes: float, link_gbps: float | None = None
) -> float:
    """Bandwidth time of one ring all-reduce of ``nbytes`` over ``devices``: each device
    sends and receives 2(n-1)/n of the buffer (NCCL's bus-bandwidth definition,
    https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md) over the ring's
    slowest hop (``link_gbps``, GB/s; default :func:`ring_link_gbps` inside one server).
    An all-gather or a reduce-scatter is half."""
    if devices <= 1:
        return 0.0
    link = link_gbps if link_gbps is not None else ring_link_gbps(accelerator, devices)
    return 2.0 * (devices - 1) / devices * nbytes / (link * 1e9)


RDMA_DEFAULT_GBPS_PER_ACCELERATOR = 100.0
"""Network between GPU servers, Gbit/s per accelerator, where neither the catalog nor the
request gives one: Volcano Engine's ml.hpcpni2.28xlarge (8 x A100-80GB) carries 4 x 200
Gbit/s RoCE, "100 Gbps per GPU" (the row's note in plugins/volcengine/catalog.json, from
the BlitzScale paper's Table 2; /work/shared/reference/catalog-notes-2.md), the slowest
RDMA figure any catalog row states (Volcano's H20 servers have 8 x 400 Gbit/s; the
reference clusters of torchtitan's and MosaicML's published runs 400 and 200 Gbit/s per
GPU, tests/sizing/data/published-measurements.json): a conservative default."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """The servers a training job spans: accelerators per server and the network
    between servers (Gbit/s per server, all its RDMA/eRDMA NICs together)."""

    per_node: int
    network_gbps: float


def data_parallel_link_gbps(
    accelerator: AcceleratorSpec,
    devices: int,
    model_parallel: int = 1,
    cluster: Cluster | None = None,
    tensor_parallel: int = 1,
) -> float:
    """One direction of the slowest hop (GB/s) of the data-parallel rings of a job on
    ``devices`` with ``model_parallel`` (tensor x pipeline) ranks per replica.

    Inside one server it is :func:`ring_link_gbps` over the replicas. Across servers
    every ring also crosses the network once per server: NCCL builds one ring (channel)
    per NIC, so the rings of one data-parallel group together move a server's data at its
    whole network rate (e.g. 8 x 400 Gbit/s = 400 GB/s on a DGX H100, the inter-node bus
    bandwidth nccl-tests reports there; PERFORMANCE.md: the bus bandwidth is that of the
    slowest link, NVLink, PCI or network). Tensor parallelism is the innermost rank
    order (Megatron-LM, torchtitan: TP inside a server, then data, then pipeline
    parallelism across servers), so the ``tensor_parallel`` groups of a server run their
    data-parallel collectives at the same time and share its network: each ring gets
    ``network / tensor_parallel`` — with TP over the whole server, one NIC's worth per
    GPU. The slower of that and the server's own ring (NVLink/HCCS, or PCIe across
    sockets) is the link."""
    dp = max(devices // max(model_parallel, 1), 1)
    if cluster is None or devices <= cluster.per_node:
        return ring_link_gbps(accelerator, dp)
    tp = min(max(tensor_parallel, 1), cluster.per_node)
    local = min(max(cluster.per_node // tp, 1), dp)
    network = cluster.network_gbps / 8.0 / tp
    if local <= 1:
        return network  # one replica per server: GPU -> NIC -> GPU, no in-server hop
    return min(ring_link_gbps(accelerator, local), network)


HOST_LINK_GBPS = 25.0
"""Effective host<->device bandwidth of a PCIe 4.0 x16 link (32 GB/s raw per direction,
about 25 GB/s achieved), the path ZeRO-Offload moves gradients and weights over."""
FP8_GAIN = 1.3
"""FP8 training speed over BF16 on the same part, measured: MosaicML llm-foundry's H100
3B/2k runs (30.6k vs 23.0-24.1k tokens/s/GPU, 1.27-1.33x), not the 2x of the peak
figures (casts, amax bookkeeping and non-matmul work stay at 16-bit speed)."""
PREPROCESS_MB_PER_VCPU_S = 5.0
"""Decode/clean/tokenize throughput per vCPU for Python data pipelines (prior; HF
tokenizers alone reach about 50 MB/s per server, Python-side cleaning is slower)."""


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
            flops=None
            if per_sample is None
            else (rw.image_passes * per_sample + rw.frozen_sample_flops) * tokens,
            tokens=tokens,
        )
    b = rw.training
    hw = None if b is None or not b.flops_per_token else b.flops_per_token * tokens
    return ComputeEstimate(
        flops=training_flops(arch.active_params, tokens), tokens=tokens, hardware_flops=hw
    )


def _image_forward_flops(rw: ResolvedWorkload) -> float | None:
    return rw.sample_flops


def convolutional(rw: ResolvedWorkload) -> bool:
    """A CNN or a detector: its fp32 runs at a TF32 rate where the part has one."""
    return rw.image_model and rw.arch is not None and rw.arch.kind in CONVOLUTIONAL_KINDS


CONVOLUTIONAL_KINDS = frozenset({"cnn", "detector"})


def training_peak(rw: ResolvedWorkload, accelerator: AcceleratorSpec) -> float | None:
    """:func:`peak_tflops` of ``rw``'s training precision and kind of network."""
    return peak_tflops(accelerator, getattr(rw.workload, "precision", "bf16"), convolutional(rw))


def image_serving_rate(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec
) -> tuple[float | None, float, str]:
    """(TFLOPS, share of it a full batch sustains, basis) of a served classifier, ViT or
    detector: the dense 16-bit peak (quantized weights still compute in 16-bit), an fp32
    model's fp32 or TF32 rate (:func:`peak_tflops`), at the image-training share of that
    rate (:func:`~service.sizing.mfu.image_training_prior`)."""
    b = rw.inference
    precision = b.precision if b is not None else "bf16"
    conv = convolutional(rw)
    peak = (
        peak_tflops(accelerator, precision, conv)
        if precision == "fp32"
        else accelerator.dense_tflops_16bit
    )
    utilization, basis = image_training_prior(accelerator, precision, conv)
    return peak, utilization, basis


def peak_tflops(
    accelerator: AcceleratorSpec, precision: str, convolutional: bool = False
) -> float | None:
    """Dense peak for the training precision: FP32 for fp32 (a convolutional network's
    TF32 rate where the part has TF32, which PyTorch's cuDNN convolutions use by default:
    :func:`~service.sizing.diffusion.tf32_rate`), else BF16 (FP16 on parts without BF16).
    FP8 uses the 16-bit peak times :data:`FP8_GAIN` (see there)."""
    if precision == "fp32":
        if convolutional and accelerator.dense_tflops_16bit:
            return diffusion.tf32_rate(
                accelerator.dense_tflops_16bit, accelerator.supports_bf16, accelerator.fp32_tflops
            )
        return accelerator.fp32_tflops
    peak = accelerator.dense_tflops_16bit
    if precision == "fp8" and peak and accelerator.supports_fp8:
        return peak * FP8_GAIN
    return peak


def training_utilization(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, zero_stage: int | None = None
) -> tuple[float, str]:
    """(utilization prior, basis sentence) for the resolved training job: the dense
    prior, times the MoE factor of its framework (:mod:`service.sizing.moe`; ZeRO-3's
    per-expert gathers only when ``zero_stage`` is 3, so without a stage it is the
    highest utilization any layout reaches)."""
    b = rw.training
    basis = b.time_basis if b is not None else "run"
    framework = b.framework if b is not None else "generic"
    util, text = mfu_prior(
        rw.active_params_b,
        accelerator,
        image_model=rw.image_model,
        basis=basis,
        framework=framework,
        precision=getattr(rw.workload, "precision", "bf16"),
        convolutional=convolutional(rw),
    )
    if rw.image_model:
        fill, said = image_batch_fill(rw, accelerator, util)
        if fill < 1.0:
            util *= fill
            text += said
    moe = moe_training_factor(rw.arch, framework, zero_stage)
    if moe != 1.0:
        util *= moe
        text += f"; x{moe:.2f} for MoE experts under {framework} (see the MoE line)"
    return util, text


def image_batch_fill(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, utilization: float
) -> tuple[float, str]:
    """(share of the full-batch rate, sentence) an image model's micro-batch reaches
    (review 5 G8): a step computes its images at the full-batch utilization, but takes at
    least its passes' kernel launches (:data:`~service.sizing.mfu.IMAGE_FORWARD_FLOOR_S`
    each), so below the batch whose arithmetic outlasts them the rate falls in proportion
    to the batch. ResNet-50 on an A100 fills from about 100 images per device."""
    batch = getattr(rw.workload, "micro_batch_size", None) or 1
    per_image = rw.image_passes * (rw.sample_flops or 0.0) + rw.frozen_sample_flops
    peak = training_peak(rw, accelerator)
    if not per_image or not peak or utilization <= 0:
        return 1.0, ""
    compute_s = batch * per_image / (peak * 1e12 * utilization)
    floor_s = rw.image_passes * IMAGE_FORWARD_FLOOR_S
    fill = min(1.0, compute_s / floor_s)
    return fill, (
        f"; x{fill:.2f} for the batch: {batch} images per device compute in "
        f"{compute_s * 1e3:.1f} ms, less than the {floor_s * 1e3:.0f} ms a step's "
        f"{rw.image_passes:g} passes take to launch their kernels (about "
        f"{IMAGE_FORWARD_FLOOR_S * 1e3:g} ms per forward at small batches, ResNet-50 "
        "inference latency in the same README), so the device is not filled"
    )


def pipeline_efficiency(stages: int, micro_batches: int) -> float:
    """Share of a step the stages compute under the 1F1B schedule (Megatron-LM, torchtitan,
    DeepSpeed pipelines): the pipeline fills and drains around ``m`` micro-batches, so a
    step takes (m + p - 1) micro-batch slots for m of work — bubble (p - 1)/m of the ideal
    (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", §2.2.1, https://arxiv.org/abs/2104.04473)."""
    if stages <= 1:
        return 1.0
    m = max(micro_batches, 1)
    return m / (m + stages - 1)


def generation_time(output_tokens: float, tokens_per_s: float, devices: int) -> TimeEstimate | None:
    """Hours to generate ``output_tokens`` at ``tokens_per_s`` on ``devices`` (``None``
    without a rate): the one rule of a batch job's time, whether the rate is one group's
    (:func:`time_for`) or a deployment's replicas together (the estimate's serving layout)."""
    if tokens_per_s <= 0:
        return None
    hours = output_tokens / tokens_per_s / 3600.0
    return TimeEstimate(
        hours=hours,
        device_hours=hours * devices,
        mfu=None,
        hours_range=hours_range(hours, training=False),
    )


def time_for(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    devices: int,
    *,
    pipeline_parallel: int = 1,
    tensor_parallel: int = 1,
    zero_stage: int | None = None,
    cluster: Cluster | None = None,
) -> TimeEstimate | None:
    """Hours on ``devices`` x ``accelerator``; ``None`` when the work or the peak is unknown.

    With ``pipeline_parallel`` stages, steady-state training pays the 1F1B bubble
    (:func:`pipeline_efficiency`) over the step's micro-batches: the gradient-accumulation
    steps when given, else as many as stages (torchtitan's and Megatron's smallest
    schedule that keeps every stage busy in the steady phase). Data-parallel traffic
    (:func:`data_parallel_seconds`) bounds the steady rate from below where the link is
    too slow to hide it behind the compute; across the servers of ``cluster`` it runs
    over their network where that is slower (:func:`data_parallel_link_gbps`)."""
    if rw.arch is None or devices < 1:
        return None
    w = rw.workload
    if isinstance(w, Inference):
        if w.output_tokens is None:
            return None
        return generation_time(
            w.output_tokens, inference_throughput(rw, accelerator, devices), devices
        )
    timing = training_timing(
        rw,
        accelerator,
        devices,
        pipeline_parallel=pipeline_parallel,
        tensor_parallel=tensor_parallel,
        zero_stage=zero_stage,
        cluster=cluster,
    )
    return None if timing is None else timing.at(rw)


class TrainingTiming(msgspec.Struct, frozen=True):
    """What :func:`time_for` works out of a training placement before it reads the job's
    token count: the utilization, the rate, the work per token and the data-parallel link.
    None of it depends on the job's length (:data:`~service.sizing.resolve.LENGTH_FIELDS`),
    so the same job at another token count is timed by :meth:`at` alone. Why: an answer
    for another length of a known job re-timed its top option from scratch, which cost
    most of its estimate; :func:`time_for` is :func:`training_timing` then :meth:`at`, so a
    kept timing gives the very floats a fresh one does. A struct, not a frozen dataclass:
    the planner times every placement of a new shape through it, and a frozen dataclass's
    ``__init__`` sets its fields one ``object.__setattr__`` at a time (about 1.5 us)."""

    accelerator: AcceleratorSpec
    devices: int
    tensor_parallel: int
    zero_stage: int | None
    model_parallel: int
    util: float
    """The utilization prior, with the pipeline bubble of a steady-state basis."""
    rate: float
    """FLOP/s of the placement at ``util``."""
    per_token: float | None
    """FLOPs per token at the basis (hardware at the steady one, model at the whole-run
    one); ``None``: the work is the job's FLOPs (image models, no per-token figure)."""
    steady: bool
    link: float
    """The data-parallel rings' slowest hop, GB/s (:func:`data_parallel_link_gbps`)."""
    mfu: float
    """The utilization in model FLOPs, before the exposed traffic and attention."""
    dequant_step: float = 0.0
    """Seconds per micro-step of QLoRA's dequantization on one device
    (:func:`dequant_micro_step_seconds`: the model, the quantization, the framework and
    the device, none of them the job's length), worked out once with the rest."""

    def at(self, rw: ResolvedWorkload) -> TimeEstimate | None:
        """Hours of ``rw`` (the job this timing was worked out for, at any length);
        ``None`` without a token count or a FLOP count."""
        tokens = rw.tokens
        if tokens is None:
            return None
        b = rw.training
        devices = self.devices
        util = self.util
        per_token = self.per_token
        if per_token is not None and b is not None:
            accelerator = self.accelerator
            compute_s = per_token * tokens / self.rate
            seconds = compute_s + attention_extra_seconds(rw, accelerator, devices, util)
            link = self.link
            if self.steady or link <= NCCL_PCIE_GEN4_X16_GBPS:
                # exposed only where the link cannot keep up with the compute it overlaps;
                # the whole-run priors come from NVLink/HCCS clusters on fast RDMA and hold
                # their traffic already, so at that basis only PCIe-class links pay it on top
                seconds += data_parallel_seconds(
                    rw, accelerator, devices, self.zero_stage, self.model_parallel,
                    compute_s, link,
                )  # fmt: skip
            seconds += dequant_seconds(rw, devices, self.model_parallel, self.dequant_step)
            # achieved MFU: the model FLOPs over the whole wall clock, exposed traffic,
            # the slower attention and QLoRA's dequantization included
            mfu = self.mfu * (compute_s / seconds)
            seconds += offload_seconds(rw, devices)
            seconds += rollout_seconds(rw, accelerator, devices, self.tensor_parallel)
            basis = b.time_basis
        else:
            flops = compute_for(rw).flops
            if flops is None:
                return None
            seconds = flops / self.rate
            mfu = util
            basis = "run"
        hours = seconds / 3600.0
        return TimeEstimate(
            hours=hours,
            device_hours=hours * devices,
            mfu=mfu,
            hours_range=hours_range(hours, training=True),
            basis="steady" if basis == "steady" else "run",
        )


def training_timing(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    devices: int,
    *,
    pipeline_parallel: int = 1,
    tensor_parallel: int = 1,
    zero_stage: int | None = None,
    cluster: Cluster | None = None,
) -> TrainingTiming | None:
    """The length-independent part of :func:`time_for` of a training job (see there for
    the arguments); ``None`` where it gives no time: serving, no model, no token count,
    no FLOP count, no peak for the precision, a rollout on a device of unknown
    bandwidth."""
    w = rw.workload
    if rw.arch is None or devices < 1 or isinstance(w, Inference):
        return None
    peak = training_peak(rw, accelerator)
    if rw.tokens is None or compute_for(rw).flops is None or not peak:
        return None
    if rollout_untimed(rw, accelerator):
        return None
    util, _ = training_utilization(rw, accelerator, zero_stage)
    b = rw.training
    if pipeline_parallel > 1 and b is not None and b.time_basis == "steady":
        # the whole-run priors come from pipelined runs (Llama 3 405B: 16 stages), so
        # their bubble is already in them; the steady priors' anchors are FSDP runs
        replicas = devices // max(tensor_parallel * pipeline_parallel, 1)
        accumulation = accumulation_steps(w, replicas)
        util *= pipeline_efficiency(pipeline_parallel, accumulation or pipeline_parallel)
    rate = devices * peak * 1e12 * util
    model_parallel = tensor_parallel * pipeline_parallel
    per_token = None
    steady = False
    link = 0.0
    mfu = util
    if b is not None and b.flops_per_token and not rw.image_model:
        steady = b.time_basis == "steady"
        per_token = b.flops_per_token if steady else b.model_flops_per_token
        link = data_parallel_link_gbps(
            accelerator, devices, model_parallel, cluster, tensor_parallel
        )
        mfu = util * (b.model_flops_per_token / b.flops_per_token if steady else 1.0)
    return TrainingTiming(
        accelerator, devices, tensor_parallel, zero_stage, model_parallel, util, rate,
        per_token, steady, link, mfu,
        # a layout cannot split the base over more devices than it has
        dequant_micro_step_seconds(rw, accelerator, min(model_parallel, devices)),
    )  # fmt: skip


def attention_extra_seconds(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int, utilization: float
) -> float:
    """Seconds the attention kernel adds over the whole job beyond its share of the
    compute at ``utilization``: where the kernel's own ceiling
    (:func:`~service.sizing.mfu.attention_utilization`, FlashAttention-2 on Hopper) is
    below the job's utilization, the attention FLOPs (hardware FLOPs at the steady basis,
    model FLOPs at the whole-run one) run at that ceiling of the 16-bit peak — FP8
    recipes keep attention in 16-bit — and the rest at the prior. 0 otherwise (fp32
    training, parts without a figure, image models)."""
    b = rw.training
    cap = attention_utilization(accelerator)
    precision = getattr(rw.workload, "precision", "bf16")
    if b is None or cap is None or rw.tokens is None or rw.image_model or precision == "fp32":
        return 0.0
    attention = (
        b.attention_flops_per_token
        if b.time_basis == "steady"
        else b.attention_model_flops_per_token
    )
    peak = peak_tflops(accelerator, precision)
    peak16 = accelerator.dense_tflops_16bit
    if not attention or not peak or not peak16 or devices < 1 or utilization <= cap[0]:
        return 0.0
    work = attention * rw.tokens / devices
    return work / (peak16 * 1e12 * cap[0]) - work / (peak * 1e12 * utilization)


def dequant_terms(rw: ResolvedWorkload) -> DequantTerms | None:
    """What QLoRA's dequantization of ``rw`` depends on besides the device
    (:mod:`service.sizing.dequant`); ``None`` for a 16-bit base, a job without a model
    or without tokens per micro-step."""
    b, arch = rw.training, rw.arch
    bits = getattr(rw.workload, "effective_quant_bits", None)
    if b is None or arch is None or not b.quantized or not bits or not b.tokens_per_step:
        return None
    return DequantTerms(
        quantized_params=arch.linear_params,
        bits=bits,
        recompute=b.recompute,
        framework=b.framework,
        compiled=bool(getattr(rw.workload, "compiled_loss", False)),
        tokens=int(b.tokens_per_step),
    )


def dequant_micro_step_seconds(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, model_parallel: int = 1
) -> float:
    """Seconds one device spends per micro-step dequantizing a QLoRA base
    (:meth:`DequantTerms.micro_step_seconds`: 1/``model_parallel`` of the block linears
    under tensor or pipeline parallelism) at the device's memory bandwidth. 0 for a
    16-bit base, and where the registry has no bandwidth."""
    terms = dequant_terms(rw)
    bandwidth = accelerator.mem_bandwidth_gbps
    if terms is None or not bandwidth:
        return 0.0
    return terms.micro_step_seconds(bandwidth, model_parallel)


def dequant_seconds(
    rw: ResolvedWorkload, devices: int, model_parallel: int, per_step: float
) -> float:
    """QLoRA's dequantization over the whole job: ``per_step`` (its
    :func:`dequant_micro_step_seconds` on the device) times the micro-steps each device
    runs (tokens / (tokens per micro-step x data-parallel replicas)). It does not depend
    on the tokens of a micro-step, so it is a large share of a step at short sequences
    and small micro-batches."""
    b = rw.training
    if b is None or not per_step or rw.tokens is None or not b.tokens_per_step:
        return 0.0
    replicas = max(devices // max(model_parallel, 1), 1)
    return rw.tokens / (b.tokens_per_step * replicas) * per_step


def device_hours_floor(rw: ResolvedWorkload, accelerator: AcceleratorSpec) -> float | None:
    """A lower bound on ``devices x`` :func:`time_for` ``(rw, accelerator, devices, ...).hours``
    for a training job, whatever the device count and layout; ``None`` where
    :func:`time_for` gives no time (inference, unknown work or peak, a rollout on a
    device of unknown bandwidth).

    :func:`time_for` divides the work by ``devices x peak x utilization`` — the pipeline
    bubble only lowers that utilization — and adds only non-negative seconds (the slower
    attention kernel, exposed data-parallel traffic, offload, rollout), so the compute at
    the utilization prior on one device's worth of rate bounds it (the prior without a
    ZeRO stage: ZeRO-3's MoE factor only lowers it, :func:`training_utilization`): the
    planner skips sizing the instance shapes whose cost at this bound cannot enter the
    answer."""
    if rw.arch is None or isinstance(rw.workload, Inference) or rollout_untimed(rw, accelerator):
        return None
    compute = compute_for(rw)
    peak = training_peak(rw, accelerator)
    if compute.flops is None or not peak or rw.tokens is None:
        return None
    util, _ = training_utilization(rw, accelerator)
    if not util > 0:
        return None
    b = rw.training
    work = compute.flops
    dequant = 0.0
    if b is not None and b.flops_per_token and not rw.image_model:
        per_token = b.flops_per_token if b.time_basis == "steady" else b.model_flops_per_token
        work = per_token * rw.tokens
        dequant = _dequant_device_seconds_floor(rw, accelerator)
    return (work / (peak * 1e12 * util) + dequant) / 3600.0


DEQUANT_FLOOR_SLACK = 1 - 1e-9
"""The dequantization floor shrunk by far more than the rounding of the sums it bounds."""


def _dequant_device_seconds_floor(rw: ResolvedWorkload, accelerator: AcceleratorSpec) -> float:
    """QLoRA's dequantization in device-seconds, at least, whatever the layout: each of
    ``replicas = devices // model_parallel`` replicas runs tokens / (tokens per micro-step
    x replicas) micro-steps, and each of its ``model_parallel`` devices dequantizes
    1/``model_parallel`` of the base per micro-step (:func:`dequant_seconds`), so the
    devices together spend at least tokens / tokens per micro-step x one device's
    micro-step over the whole base (exactly that when the devices divide evenly; a layout
    with more model-parallel ranks than devices splits the base over its devices only,
    :func:`training_timing`). Why: the
    floor without it let the cost order of a QLoRA job place shapes a step's fixed
    dequantization rules out (the shapes bench's QLoRA third placed 37 % more)."""
    b = rw.training
    per_step = dequant_micro_step_seconds(rw, accelerator, 1)
    if b is None or not per_step or rw.tokens is None or not b.tokens_per_step:
        return 0.0
    return rw.tokens / b.tokens_per_step * per_step * DEQUANT_FLOOR_SLACK


ROLLOUT_ENGINES: dict[str, ServeEngine] = {
    "deepspeed": "hf",
    "hf": "hf",
    "llama-factory": "hf",
}
"""Which decode loop a framework's RLHF rollout runs. DeepSpeed-Chat's hybrid engine calls
Hugging Face ``generate()`` on the actor (``self.actor_model.module.generate`` in
applications/DeepSpeed-Chat/dschat/rlhf/ppo_trainer.py, microsoft/DeepSpeedExamples) with
DeepSpeed's inference kernels injected but no CUDA graphs, so every step pays the eager
loop's per-step and per-layer launch costs; TRL's PPO/GRPO trainers (``use_vllm=False``
by default) and LLaMA-Factory's PPO (``unwrap_model_for_generation`` + ``generate``) run
the same loop. verl, OpenRLHF and the Megatron-based stacks generate with vLLM or SGLang
(CUDA graphs): vLLM's overheads."""
ROLLOUT_DEFAULT_ENGINE: ServeEngine = "vllm"


def rollout_untimed(rw: ResolvedWorkload, accelerator: AcceleratorSpec) -> bool:
    """The job generates (a PPO/GRPO rollout) on a device with no published memory
    bandwidth. Decode reads the actor's weights every step, so its time is the bandwidth's
    to set: without one the generation phase — most of a step with long responses (verl
    and OpenRLHF time it apart from training for that reason) — cannot be timed, and the
    job's hours are unknown rather than those of its training part alone (review 4 F1)."""
    b = rw.training
    return b is not None and bool(b.rollout_weight_bytes) and not accelerator.mem_bandwidth_gbps


Untimed = Literal["tokens", "flops", "peak", "rollout_bandwidth"]
"""Why a training job has no time: no token count given; no compute figure known for the
model (no FLOP count, as for the image presets without one); the device publishes no
dense peak for the job's precision; a rollout on a device of unknown bandwidth."""


def untimed_reason(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec | None = None
) -> Untimed | None:
    """Why :func:`time_for` gives this training job no time (on ``accelerator``; without
    one, only what holds on every device: the job's length is then unknown everywhere),
    or ``None`` when it can (serving and preprocessing: ``None``). The answer says this
    reason, never a generic one (review 4 F4: "no tokens given" when tokens were)."""
    if isinstance(rw.workload, Inference | Preprocess):
        return None
    if rw.tokens is None:
        return "tokens"
    if compute_for(rw).flops is None:
        return "flops"
    if accelerator is None:
        return None
    if not peak_tflops(accelerator, getattr(rw.workload, "precision", "bf16")):
        return "peak"
    if rollout_untimed(rw, accelerator):
        return "rollout_bandwidth"
    return None


def rollout_seconds(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int, tensor_parallel: int = 1
) -> float:
    """RLHF generation time: sequences / (devices x batch) batches of ``response_len``
    decode steps, each reading the device's share of the engine's weights (the actor over
    the rollout's tensor degree, :func:`~service.sizing.resolve.rollout_tensor_parallel`,
    whose all-reduces of a few hundred KB per layer the estimate leaves out) and the
    batch's KV cache (at its mean
    length, prompt + half the response) at the serving bandwidth efficiency plus the
    framework's decode-loop overheads (:data:`ROLLOUT_ENGINES`), or compute-bound for
    large batches. 0 without a rollout; :func:`time_for` gives no time at all where the
    device's bandwidth is unknown (:func:`rollout_untimed`)."""
    b = rw.training
    arch = rw.arch
    if b is None or not b.rollout_weight_bytes or rw.tokens is None or not b.seq_len:
        return 0.0
    bw = accelerator.mem_bandwidth_gbps
    peak = accelerator.dense_tflops_16bit
    if not bw or not peak or arch is None:
        return 0.0
    engine = ROLLOUT_ENGINES.get(b.framework, ROLLOUT_DEFAULT_ENGINE)
    eng = engine_profile(engine)
    batch = max(b.rollout_batch, 1)
    context = b.seq_len - b.rollout_response_len / 2
    kv = b.rollout_kv_per_token
    read = b.rollout_weight_bytes / rollout_tensor_parallel(b, devices, tensor_parallel)
    read += kv * context * batch
    step = read / (bw * 1e9 * bandwidth_efficiency(engine, "bf16"))
    step += eng.step_overhead_s + b.rollout_layers * eng.layer_overhead_s
    rows = max(batch, mma_rows(accelerator, "bf16"))
    compute = 2.0 * arch.active_params * rows / (peak * 1e12 * DECODE_COMPUTE_MFU)
    sequences = rw.tokens / b.seq_len
    return sequences / (devices * batch) * b.rollout_response_len * max(step, compute)


_BYTES_16 = 2.0


def accumulation_steps(workload: object, replicas: int) -> int | None:
    """Micro-batches each data-parallel replica runs per optimizer step: the request's
    ``gradient_accumulation_steps``, else what its ``global_batch_size`` leaves over
    ``replicas`` replicas at its micro batch (Megatron-LM's ``num_micro_batches = global
    batch // (micro batch x data-parallel size)``, at least 1, NVIDIA/Megatron-LM
    ``megatron/core/num_microbatches_calculator.py``@00caa53a), else ``None`` (unknown)."""
    given = getattr(workload, "gradient_accumulation_steps", None)
    if given is not None:
        return int(given)
    batch = getattr(workload, "global_batch_size", None)
    if batch is None:
        return None
    micro = getattr(workload, "micro_batch_size", None) or 1
    return max(1, int(batch) // (micro * max(replicas, 1)))


def data_parallel_seconds(
    rw: ResolvedWorkload,
    accelerator: AcceleratorSpec,
    devices: int,
    zero_stage: int | None,
    model_parallel: int,
    compute_seconds: float,
    link_gbps: float | None = None,
) -> float:
    """Seconds of data-parallel collectives the job's compute (``compute_seconds`` over
    the whole job) does not hide, phase by phase as the frameworks overlap them:

    - ZeRO-3 / FSDP, every micro-step: an all-gather of the 16-bit weights ahead of the
      forward (prefetched, so it overlaps the forward) and again for the backward, plus
      a reduce-scatter of the trainable weights' gradients, both overlapping the backward
      (Rajbhandari et al. 2020, "ZeRO", §7: 1.5x the data-parallel volume; DeepSpeed's
      ``stage3_prefetch_bucket_size``, FSDP's ``forward_prefetch``/``backward_prefetch``).
      LoRA under ZeRO-3 still gathers the frozen weights.
    - DDP (stage 0): one all-reduce of the 16-bit gradients per optimizer step, bucketed
      so it overlaps the backward of the last micro-step only (``no_sync`` skips it on
      the others; PyTorch DDP design notes,
      https://pytorch.org/docs/stable/notes/ddp.html).
    - ZeRO-1/2: the gradients reduce-scattered during that backward (``overlap_comm``),
      then the updated 16-bit weights all-gathered after the optimizer step, which no
      compute overlaps.

    A phase costs the larger of its compute and its traffic. Traffic runs over the
    ring's slowest hop: ``link_gbps`` (GB/s, :func:`data_parallel_link_gbps` across
    servers), by default :func:`ring_link_gbps` inside one server."""
    b = rw.training
    arch = rw.arch
    if b is None or arch is None or rw.tokens is None or not b.tokens_per_step:
        return 0.0
    dp = devices // max(model_parallel, 1)
    if dp <= 1 or compute_seconds <= 0:
        return 0.0
    accumulation = accumulation_steps(rw.workload, dp) or 1
    micro_steps = rw.tokens / (b.tokens_per_step * dp)
    micro = compute_seconds / micro_steps
    forward_share = b.model_flops_per_token / 3.0 / b.flops_per_token
    forward = micro * min(forward_share, 1.0)
    backward = micro - forward
    shard = 1.0 / max(model_parallel, 1)
    link = link_gbps if link_gbps is not None else ring_link_gbps(accelerator, dp)
    gradients = allreduce_seconds(accelerator, dp, b.trainable_params * shard * _BYTES_16, link)
    if zero_stage == 3:
        gather = allreduce_seconds(accelerator, dp, arch.params * shard * _BYTES_16, link) / 2.0
        exposed = max(gather - forward, 0.0) + max(gather + gradients / 2.0 - backward, 0.0)
        return micro_steps * exposed
    if zero_stage in (1, 2):
        per_step = max(gradients / 2.0 - backward, 0.0) + gradients / 2.0
    else:
        per_step = max(gradients - backward, 0.0)
    return micro_steps / accumulation * per_step


def offload_seconds(rw: ResolvedWorkload, devices: int) -> float:
    """ZeRO-Offload host-link time of the whole job: each device moves its partition of
    the gradients and weights once per step, steps = tokens / (tokens per micro-step x
    devices) (one micro-step per optimizer step: the worst case)."""
    b = rw.training
    if b is None or not b.offload_bytes_per_step or rw.tokens is None or not b.tokens_per_step:
        return 0.0
    steps = rw.tokens / (b.tokens_per_step * devices)
    per_device = b.offload_bytes_per_step / devices
    return steps * per_device / (HOST_LINK_GBPS * 1e9)


def bandwidth_efficiency(engine: str, precision: str) -> float:
    """Share of peak bandwidth a decode step's weight reads reach under ``engine``."""
    eng = engine_profile(engine)
    quant = QUANT_BANDWIDTH_EFFICIENCY.get(precision, 1.0)
    if precision == "int4" and eng.fused_int4:
        quant = FUSED_INT4_EFFICIENCY
    return BANDWIDTH_EFFICIENCY * eng.bandwidth_efficiency * quant


MMA_MIN_ROWS = {"hopper": 64, "blackwell": 64}
"""Rows (tokens) a 16-bit/FP8 GEMM tile computes at least: Hopper's warpgroup MMA
(``wgmma.mma_async``, the instruction cuBLAS/CUTLASS sm90 kernels are built on) only has
m64nNk16 shapes (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate":
https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shape),
so a decode step of fewer than 64 tokens costs the tensor cores as much as 64. On a part
whose compute is small next to its bandwidth (H20: 148 TFLOPS BF16 for 4.0 TB/s, 37 FLOP
per byte against H100's 295) that floor, not the weight read, bounds small-batch decode."""
MMA_MIN_ROWS_DEFAULT = 16
"""Ampere/Ada ``mma.sync`` m16n8k16 tiles, and the weight-only int4/int8 kernels (Marlin,
AWQ/GPTQ GEMV) everywhere: 16 rows."""


def mma_rows(accelerator: AcceleratorSpec, precision: str) -> int:
    """The fewest tokens a decode GEMM pays for on ``accelerator`` (see :data:`MMA_MIN_ROWS`)."""
    if precision in ("int4", "int8"):
        return MMA_MIN_ROWS_DEFAULT
    return MMA_MIN_ROWS.get(generation(accelerator), MMA_MIN_ROWS_DEFAULT)


MMA_SYNC_HOPPER_SHARE = 0.75
"""Share of Hopper's dense 16-bit peak that the warp-level ``mma.sync`` instruction reaches:
the weight-only int4/int8 kernels the engines use (Marlin / AWQ-Marlin, AutoAWQ, exllama
GPTQ) are built on Ampere's ``mma.sync``, and on Hopper "without [``wgmma``] i.e. using
``mma`` instructions you can expect to achieve at best ~75% of peak" (vLLM PR #7174, the
Machete kernel, https://github.com/vllm-project/vllm/pull/7174, citing
https://hazyresearch.stanford.edu/blog/2024-05-12-tk and arXiv:2402.13499). On a part
whose compute is small for its bandwidth (H20) that moves the int4 decode from the
bandwidth bound to the compute bound. vLLM's own Machete (wgmma) GPTQ path on Hopper is
not told apart: the request carries the bits, not the kernel."""
MMA_SYNC_SHARE = {"hopper": MMA_SYNC_HOPPER_SHARE}
"""Per generation, the ``mma.sync`` share of the 16-bit peak; 1.0 where ``mma.sync`` is
the native tensor-core instruction (Ampere, Ada)."""


def decode_peak_tflops(accelerator: AcceleratorSpec, precision: str) -> float | None:
    """Dense peak the decode matmuls run at: FP8 weights and activations on FP8 parts
    (W8A8), otherwise the 16-bit peak; weight-only int4/int8 kernels dequantize to 16-bit
    and issue ``mma.sync``, which on Hopper reaches only :data:`MMA_SYNC_HOPPER_SHARE`."""
    if precision == "fp8" and accelerator.supports_fp8 and accelerator.fp8_tflops:
        return accelerator.fp8_tflops
    if precision == "fp32":
        return accelerator.fp32_tflops
    peak = accelerator.dense_tflops_16bit
    if precision in ("int4", "int8") and peak:
        return peak * MMA_SYNC_SHARE.get(generation(accelerator), 1.0)
    return peak


def expected_experts(experts: int, per_token: int, tokens: int) -> float:
    """Expected routed experts a decode step touches in one layer when ``tokens`` tokens
    each pick ``per_token`` of ``experts`` (uniform routing): E·(1 - (1 - k/E)^B)."""
    if experts <= 1:
        return 1.0
    k = min(per_token, experts)
    return experts * (1.0 - (1.0 - k / experts) ** max(tokens, 1))


QUANTIZED_PRECISIONS = frozenset({"int8", "int4", "fp8"})
"""Weight formats whose embeddings, head and norms stay 16-bit in a transformer."""


def decode_step_bytes(rw: ResolvedWorkload, concurrency: int) -> float:
    """Bytes one decode step reads: the dense weights (minus the input embedding table,
    of which a step reads one row per token; a quantized checkpoint keeps that table
    16-bit, see :func:`service.sizing.resolve.inference_budget`), the routed experts the
    batch touches, and the KV cache of every sequence at its mean length over the
    decode."""
    b = rw.inference
    arch = rw.arch
    assert b is not None
    assert arch is not None
    dense = b.weights - b.expert_weights
    if arch.vocab and arch.hidden and (not arch.tied or b.untied_head):
        if b.precision in QUANTIZED_PRECISIONS:
            per_param = 2.0
        else:
            per_param = b.weights / arch.params if arch.params else 2.0
        dense -= arch.vocab * arch.hidden * per_param
    experts = 0.0
    if b.expert_weights:
        share = expected_experts(b.experts, b.experts_per_token, concurrency) / b.experts
        experts = b.expert_weights * share
    passes = kv_passes(rw)
    return max(dense, 0.0) + experts + passes * b.kv_per_token * mean_context(rw) * concurrency


def kv_passes(rw: ResolvedWorkload) -> float:
    """Times a decode step moves the KV cache under the workload's engine: the engine's
    own passes, plus 2g where its attention copies the g-fold grouped KV heads out to every
    query head first (:attr:`~service.sizing.profiles.EngineProfile.gqa_expanded_kv`: the
    copy reads the cache once in place of the attention's read, writes g copies, and the
    attention reads the g copies; an MLA latent cache has no grouped heads to copy)."""
    b = rw.inference
    arch = rw.arch
    assert b is not None
    assert arch is not None
    eng = engine_profile(b.engine)
    passes = eng.kv_passes
    if eng.gqa_expanded_kv and not arch.mla_kv_dim and arch.heads and arch.kv_heads:
        groups = arch.heads / arch.kv_heads
        if groups > 1:
            passes += 2.0 * groups
    return passes


def mean_context(rw: ResolvedWorkload) -> float:
    """Tokens in a sequence's KV cache averaged over its decode: the prompt plus half the
    output when the prompt length is known, else the whole context (the worst case)."""
    b = rw.inference
    assert b is not None
    if b.prompt_len and b.context_len > b.prompt_len:
        return b.prompt_len + (b.context_len - b.prompt_len) / 2
    return float(b.context_len)


def inference_throughput(rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int) -> float:
    """Output tokens/s of one model replica spread over ``devices`` at the workload's
    concurrency (images/s for image models); 0.0 when the accelerator lacks the figures.

    step = max(bytes / (devices · bandwidth · efficiency) + engine overheads,
               2·P_active·concurrency / (devices · peak · 0.5));
    plain transformers splits the layers over the devices and runs them one after the
    other, so its bandwidth does not add up across devices (the others' does, by tensor
    parallelism). With ``prompt_len``, each request's prefill adds to its time.
    """
    b = rw.inference
    arch = rw.arch
    if b is None or arch is None or devices < 1:
        return 0.0
    peak = accelerator.dense_tflops_16bit
    if rw.diffusion is not None:
        return diffusion_throughput(rw, accelerator, devices)
    if rw.image_model:
        per_sample = _image_forward_flops(rw)
        rate, utilization, _ = image_serving_rate(rw, accelerator)
        if not rate or not per_sample:
            return 0.0
        return image_forward_rate(per_sample, b.concurrency, devices, rate, utilization)
    if rw.encoder:
        return encoder_throughput(rw, accelerator, devices)
    eng = engine_profile(b.engine)
    peak = decode_peak_tflops(accelerator, b.precision)
    concurrency = b.concurrency
    layers = arch.layers or 0
    sequential = not eng.chunked_prefill  # plain transformers: device_map pipeline
    if not accelerator.mem_bandwidth_gbps:
        # Decoding is bandwidth-bound: without the bandwidth the compute bound alone would
        # overstate the rate many times over, so there is no rate at all.
        return 0.0
    lanes = 1 if sequential else devices
    bw = lanes * accelerator.mem_bandwidth_gbps * 1e9
    efficiency = bandwidth_efficiency(b.engine, b.precision)
    memory_s = decode_step_bytes(rw, concurrency) / (bw * efficiency)
    overhead = eng.step_overhead_s + layers * eng.layer_overhead_s
    if b.experts > 1:
        overhead += layers * (b.experts * eng.expert_overhead_s + eng.moe_layer_latency_s)
    if devices > 1 and not sequential:
        # two all-reduces per layer (attention and MLP outputs) of the step's 16-bit
        # activations: latency plus bandwidth, which large batches make the larger part
        activations = concurrency * (arch.hidden or 0) * 2.0
        overhead += (
            2
            * layers
            * (ALLREDUCE_LATENCY_S + allreduce_seconds(accelerator, devices, activations))
        )
    times = [memory_s + overhead]
    if peak:
        rows = max(concurrency, mma_rows(accelerator, b.precision))
        times.append(2.0 * arch.active_params * rows / (devices * peak * 1e12 * DECODE_COMPUTE_MFU))
    step = max(times)
    if step <= 0:
        return 0.0
    output_len = b.context_len - b.prompt_len
    if b.prompt_len and output_len > 0 and peak:
        prefill = prefill_seconds(rw, b.prompt_len, concurrency, peak, devices)
        return concurrency * output_len / (prefill + output_len * step)
    return concurrency / step


def diffusion_rates(
    rw: ResolvedWorkload, accelerator: AcceleratorSpec
) -> tuple[float | None, float | None, float]:
    """(TFLOPS of the UNet steps and text encoders, TFLOPS of the VAE decode, utilization)
    of a served diffusion pipeline on ``accelerator``: the dense 16-bit peak (quantized
    weights still compute in 16-bit), an fp32 pipeline's fp32 rate, and a decode upcast
    to fp32 at the TF32 rate cuDNN's convolutions use (:func:`~service.sizing.diffusion.
    tf32_rate`); ``None`` where the registry has no such figure."""
    work = rw.diffusion
    assert work is not None
    precision = getattr(rw.workload, "precision", "bf16")
    if precision == "fp32":
        peak = accelerator.fp32_tflops
        decode = peak
    else:
        peak = accelerator.dense_tflops_16bit
        decode = (
            diffusion.tf32_rate(peak, accelerator.supports_bf16, accelerator.fp32_tflops)
            if peak and work.upcast_decode
            else peak
        )
    return peak, decode, diffusion.utilization_for(generation(accelerator))


def image_forward_rate(
    flops_per_image: float, images: int, devices: int, peak_tflops: float, utilization: float
) -> float:
    """Images per second of ``devices`` serving calls of ``images`` to an image model of one
    forward pass (CNN, ViT, detector), each device its own copy on an even share of the
    call's images (the call ends with the slowest share). A pass takes the longer of its
    kernels' launch floor (:data:`~service.sizing.mfu.IMAGE_FORWARD_FLOOR_S`: ResNet-50 at
    1-8 images is 12.8-13.7 ms on a V100 and on a T4, parts 4x apart in peak) and its
    arithmetic at the share of the peak the same kernels sustain on a full batch (the
    image-model training prior, :func:`~service.sizing.mfu.image_training_prior`). Before,
    the arithmetic alone said a single ResNet-50 image on an A10 ran at 4,584 images/s;
    NVIDIA measures 78 at batch 1 (DeepLearningExamples, ResNet-50 v1.5 inference)."""
    if images < 1 or devices < 1 or peak_tflops <= 0 or utilization <= 0:
        return 0.0
    share = math.ceil(images / devices)
    seconds = max(
        IMAGE_FORWARD_FLOOR_S, share * flops_per_image / (peak_tflops * 1e12 * utilization)
    )
    return images / seconds


def diffusion_throughput(rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int) -> float:
    """Images per second of a served diffusion pipeline on ``devices``
    (:func:`service.sizing.diffusion.images_per_second`); 0.0 without the device's rates."""
    b, work = rw.inference, rw.diffusion
    assert b is not None
    assert work is not None
    peak, decode, utilization = diffusion_rates(rw, accelerator)
    return diffusion.images_per_second(work, b.concurrency, devices, peak, decode, utilization)


def encoder_throughput(rw: ResolvedWorkload, accelerator: AcceleratorSpec, devices: int) -> float:
    """Tokens/s an encoder-only model encodes on ``devices`` (sequences/s x tokens per
    sequence): each batch of ``concurrency`` sequences is one forward pass, compute-bound at
    the encoder utilization prior, or bound by one read of the weights, plus the engine's
    per-layer launches (:mod:`service.sizing.encoder`); 0.0 without a peak."""
    b = rw.inference
    arch = rw.arch
    assert b is not None
    assert arch is not None
    peak = decode_peak_tflops(accelerator, b.precision)
    if not peak or not arch.layers or not arch.hidden:
        return 0.0
    utilization, _ = encoder.encoder_utilization(accelerator)
    per_sequence = encoder.flops_per_sequence(
        arch.params, arch.embedding_params, arch.layers, arch.hidden, b.context_len
    )
    seconds = encoder.forward_seconds(
        flops=per_sequence * b.concurrency,
        weight_bytes=b.weights,
        devices=devices,
        peak_tflops=peak,
        utilization=utilization,
        bandwidth_gbps=accelerator.mem_bandwidth_gbps,
        bandwidth_efficiency=bandwidth_efficiency(b.engine, b.precision),
        layers=arch.layers,
        layer_overhead_s=engine_profile(b.engine).layer_overhead_s,
    )
    return b.concurrency * b.context_len / seconds


def prefill_seconds(
    rw: ResolvedWorkload, prompt: int, concurrency: int, peak_tflops: float, devices: int
) -> float:
    """Compute time to prefill ``concurrency`` prompts: 2·P per token plus causal
    attention 2·L·(a·d)·s per token (half of the training convention's 4·L·a·d·s)."""
    arch = rw.arch
    assert arch is not None
    per_token = 2.0 * arch.active_params
    if arch.layers and arch.heads:
        q_dim = arch.heads * (arch.head_dim or (arch.hidden or 0) // arch.heads)
        per_token += 2.0 * arch.layers * q_dim * prompt
    return per_token * prompt * concurrency / (devices * peak_tflops * 1e12 * PREFILL_MFU)


def preprocess_hours(rw: ResolvedWorkload, vcpus: int) -> float | None:
    """Hours for a CPU-only preprocess job on ``vcpus`` at the per-vCPU throughput prior."""
    if rw.kind != "preprocess" or vcpus < 1:
        return None
    return rw.data_gb * 1000.0 / (vcpus * PREPROCESS_MB_PER_VCPU_S) / 3600.0
