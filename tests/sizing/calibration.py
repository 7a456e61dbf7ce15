"""Score the sizing engine against the published measurements (dev and hold-out apart).

``tests/sizing/data/published-measurements.json`` records, for each case, the request in
the API's shape plus descriptive fields the API has no knob for (``torch_compile``,
``input_len``, ...). :func:`translate` turns a case into a real ``/v1/estimate`` request
(dropping only those descriptive fields, each listed in :data:`DESCRIPTIVE` with why) and
:func:`predict` runs it through :func:`service.sizing.estimate`, returning the figure the
case measured, in the case's unit, with the range the engine returns for it.

This module is imported by ``test_calibration.py`` (the thresholds) and can be run as a
script to print the per-case table: ``.venv/bin/python -m tests.sizing.calibration dev``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from plugins.huawei import ascend_accelerators
from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.catalog.models import AcceleratorSpec
from service.sizing import EstimateResponse, Inference, Placement, Workload, estimate
from service.sizing.presets import ModelRegistry, builtin_presets

DATA = Path(__file__).resolve().parent / "data" / "published-measurements.json"
DOC: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DOC["cases"]
MODELS = ModelRegistry(builtin_presets())
REGISTRY = AcceleratorRegistry([*ascend_accelerators(), *builtin_accelerators()])

CATEGORIES = ("train_memory", "inference_memory", "train_time", "inference_throughput")

DESCRIPTIVE: dict[str, str] = {
    "activation_checkpointing": "which recompute policy: `selective-op` is "
    "gradient_checkpointing `selective`; `full`/`none` agree with gradient_checkpointing; "
    "layer-selective policies are sized as full recompute",
    "torch_compile": "compilation changes speed by a few percent; for torchtune it also "
    "compiles the loss (compiled_loss, see translate())",
    "fp8_scope": "which layers run FP8; precision carries that FP8 is used",
    "quantization": "the int4/int8 method (AWQ/GPTQ/bnb); precision and quant_bits carry the "
    "bits, and a bnb case whose notes name its bitsandbytes release sends it as "
    "bitsandbytes_version (see translate())",
    "output_len": "the generated part of context_len",
    "global_batch_size": "optimizer batch; throughput per token does not depend on it",
    "lora_modules": "module names; lora_targets carries attention vs all linear",
    "engine_settings": "engine flags (max_model_len, gpu_memory_utilization) recorded for "
    "reference",
    "framework_detail": "prose about the framework version",
    "fsdp_mixed_precision_mode": "FSDP's dtype policy; precision/mixed_precision carry it",
    "composer_precision": "Composer's precision name; precision carries it",
    "activation_cpu_offload": "false in every case that records it",
    "packed": "sequence packing: seq_len is the packed length",
    "optimizer_in_backward": "torchtune's fused optimizer step (memory detail not sized)",
    "activation_offloading": "torchtune's activation offloading: offload_activations",
    "loss": "the loss implementation: chunked_loss",
    "load": "how the benchmark loads the engine (offline / online)",
    "num_requests": "requests in the benchmark; the rate is per request or per second",
    "num_prompts": "prompts in the RLHF run; tokens carries the work",
    "multi_token_prediction": "MTP heads (not sized)",
}
"""Workload fields of the data file that describe the setup but are not API fields."""
INFERENCE_DESCRIPTIVE = {
    "flash_attention": "serving engines pick their own attention kernels; the engine "
    "profile sizes the prefill workspace",
}
"""Training fields some inference cases also record."""
RENAMED = {"generation_len": "response_len"}
"""Data-file names of API fields (RLHF rollouts)."""
MODEL_DESCRIPTIVE = {"architecture_source"}
FRAMEWORKS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "llm-foundry": (
        "torchtune",
        "MosaicML llm-foundry: PyTorch FSDP with fused kernels and flash-attn's fused "
        "cross-entropy, the torchtune profile's loss (chunked, 3 B/logit) and speed",
        {},
    ),
    "colossalai": (
        "deepspeed",
        "ColossalAI Gemini: ZeRO-3-style chunked sharding without autocast, the DeepSpeed "
        "profile; its LLaMA example trains Hugging Face's LlamaForCausalLM, whose forward "
        "upcasts the logits itself (`logits = logits.float()` since transformers 4.31, "
        "https://github.com/huggingface/transformers/blob/v4.31.0/src/transformers/models/"
        "llama/modeling_llama.py), so the loss is the fp32 one (no chunking)",
        {"chunked_loss": False},
    ),
}
"""Frameworks the data names that the API has no profile for: the closest profile, why,
and the workload fields the framework's own code fixes."""

BNB_RELEASE = re.compile(r"bitsandbytes ([0-9]+\.[0-9]+(?:\.[0-9]+)?(?:\.post[0-9]+)?)")
"""A bitsandbytes release named in a case's notes."""

RDMA_PER_GPU = re.compile(r"(\d+) Gb/s RDMA per GPU")
NODE_NETWORK = re.compile(r"(\d+) Gbps node-node interconnect")
"""The cluster network a source states (torchtitan's Grand Teton hosts: "400 Gb/s RDMA per
GPU"; llm-foundry's A100 tables: "1600 Gbps node-node interconnect"), for multi-server
cases: what their data-parallel traffic is timed on instead of the default."""
PLACEMENT_DESCRIPTIVE = {
    "context_parallel",
    "pipeline_schedule",
    "model_split",
    "expert_parallel",
    "count_note",
}
"""Placement fields the API has no knob for (context parallelism is applied to memory by
dividing the sequence, see :func:`translate`)."""

UNIT_BYTES = {"GiB": 2.0**30, "GB": 1e9, "MiB": 2.0**20, "MB": 1e6}
UNIT_SCALE = {
    "tokens/s": 1.0,
    "thousand tokens/s": 1e3,
    "samples/s": 1.0,
    "hours": 1.0,
    "days": 24.0,
    "minutes": 1 / 60,
    "GPU-hours": 1.0,
    "million GPU-hours": 1e6,
}
GIB = 2.0**30
TRAIN_TOKENS = 1e9
"""Tokens given to training cases that state none (time is linear in them)."""


class Lookup:
    """The accelerator registry plus the parts the data file lists as not yet in it."""

    def __init__(self) -> None:
        self.extra: dict[str, AcceleratorSpec] = {}
        h100 = REGISTRY.resolve("H100-80GB")
        if h100 is not None and "H100-96GB-HBM2e" in DOC.get("accelerators_not_in_registry", {}):
            # torchtitan docs/performance.md: 96 GB HBM2e at 2.4 TB/s, same SXM compute
            self.extra["H100-96GB-HBM2e"] = msgspec.structs.replace(
                h100,
                name="H100-96GB-HBM2e",
                memory_gib=96e9 / GIB,
                mem_bandwidth_gbps=2400,
                aliases=(),
            )

    def resolve(self, name: str) -> AcceleratorSpec | None:
        return self.extra.get(name) or REGISTRY.resolve(name)

    def suggest(self, name: str) -> list[str]:
        return REGISTRY.suggest(name)


LOOKUP = Lookup()


def _model(m: Any) -> Any:
    return {k: v for k, v in m.items() if k not in MODEL_DESCRIPTIVE} if isinstance(m, dict) else m


def _stated_network(case: dict[str, Any]) -> float | None:
    """Gbit/s per 8-GPU server that the case's source states (:data:`RDMA_PER_GPU`)."""
    stated = f"{case.get('notes', '')} {case.get('source', {}).get('locator', '')}"
    per_gpu = RDMA_PER_GPU.search(stated)
    if per_gpu is not None:
        return float(per_gpu.group(1)) * 8
    node = NODE_NETWORK.search(stated)
    return None if node is None else float(node.group(1))


def _encoder(model: Any) -> bool:
    """Whether a case's model is encoder-only (a BERT preset, or ``encoder_only``)."""
    if isinstance(model, str):
        preset = MODELS.resolve(model)
        return preset is not None and preset.kind == "encoder"
    return bool(model.get("encoder_only"))


def translate(case: dict[str, Any]) -> tuple[Workload, Placement]:
    """The case's request as the API decodes it (descriptive fields dropped)."""
    w = {RENAMED.get(k, k): v for k, v in case["workload"].items() if k not in DESCRIPTIVE}
    for key in ("model", "critic_model", "reward_model"):
        if key in w:
            w[key] = _model(w[key])
    if w["kind"] == "rlhf":
        w.pop("prompt_len", None)  # seq_len = prompt + response carries it
    if w["kind"] == "inference":
        w = {k: v for k, v in w.items() if k not in INFERENCE_DESCRIPTIVE}
    ac = str(case["workload"].get("activation_checkpointing", ""))
    if ac == "selective-op":
        w["gradient_checkpointing"] = "selective"
    loss = case["workload"].get("loss")
    if loss in ("cross-entropy", "chunked cross-entropy"):
        w["chunked_loss"] = loss == "chunked cross-entropy"
    if case["workload"].get("activation_offloading") is not None:
        w["offload_activations"] = bool(case["workload"]["activation_offloading"])
    if case["workload"].get("torch_compile") and w.get("framework") == "torchtune":
        # torchtune's recipes compile the loss with the model when compile=True
        # (training.compile_loss, torchtune/training/_compile.py); torchtitan compiles the
        # transformer blocks only, not the loss
        w["compiled_loss"] = True
    bnb = BNB_RELEASE.search(str(case.get("notes", "")))
    if str(case["workload"].get("quantization", "")).startswith("bnb") and bnb:
        # the environment the source states (e.g. the ms-swift benchmark's "bitsandbytes
        # 0.41.3.post2"): which release decides whether 4-bit inputs are kept
        w.setdefault("bitsandbytes_version", bnb.group(1))
    if w.get("framework") in FRAMEWORKS:
        profile, _, fixed = FRAMEWORKS[w["framework"]]
        w = {**fixed, **w, "framework": profile}
    if "input_len" in w:
        w["prompt_len"] = w.pop("input_len")
    cp = int(case["placement"].get("context_parallel") or 1)
    if cp > 1 and case["category"] == "train_memory" and "seq_len" in w:
        # context parallelism (ring attention) shards every sequence over cp devices: each
        # holds the activations and logits of seq_len / cp tokens
        w["seq_len"] = max(int(w["seq_len"]) // cp, 1)
    pp = int(case["placement"].get("pipeline_parallel") or 1)
    if pp > 1 and "micro_batch_size" in w:
        # the recorded batch is the local batch; pipeline schedules split it into as many
        # micro-batches as stages (torchtitan's default), and memory holds those in flight
        w["micro_batch_size"] = max(int(w["micro_batch_size"]) // pp, 1)
    if w["kind"] in ("pretrain", "finetune", "rlhf") and w.get("tokens") is None:
        w["tokens"] = TRAIN_TOKENS
    if w.get("concurrency", 1) is None:
        w["concurrency"] = 1  # replaced by the largest batch that fits, see predict()
    if w["kind"] == "inference" and "output_tokens" not in w and not _encoder(w["model"]):
        w["output_tokens"] = 1e6  # an encoder generates none: the API refuses it
    w = {k: v for k, v in w.items() if v is not None}  # not stated: the API default
    if str(w.get("offload", "none")).startswith("auto"):
        # ColossalAI Gemini's "auto" placement runs the fp32 master weights and Adam moments
        # as a hybrid CPU optimizer that uses none of the device's spare memory by default
        # (GeminiOptimizer gpu_margin_mem_ratio=0.0, "meaningless when placement_policy is
        # not 'auto'", colossalai/zero/gemini/gemini_optimizer.py,
        # https://github.com/hpcaitech/ColossalAI/blob/f756f681a3362e9d2d7060108d2d2e77de391abe/colossalai/zero/gemini/gemini_optimizer.py):
        # the optimizer states are offloaded, the 16-bit chunks stay on the device
        w["offload"] = "optimizer"
    p = {k: v for k, v in case["placement"].items() if k not in PLACEMENT_DESCRIPTIVE}
    if p.get("count") is None:
        p["count"] = 1  # accelerator-hours only: the total does not depend on the count
    network = _stated_network(case)
    if w["kind"] in ("pretrain", "finetune", "rlhf") and p["count"] > 8 and network:
        p["nodes"] = p["count"] // 8  # both sources' servers hold 8 GPUs
        p["network_gbps"] = network
    if w["kind"] in ("pretrain", "finetune", "rlhf") and p["count"] > 1:
        # a layout the source does not state is plain data parallelism (FSDP/ZeRO), not
        # whatever tensor-parallel degree would make the job fit
        p.setdefault("tensor_parallel", 1)
        p.setdefault("pipeline_parallel", 1)
    return msgspec.convert(w, Workload, strict=True), msgspec.convert(p, Placement)


@dataclass(frozen=True)
class Prediction:
    case_id: str
    category: str
    split: str
    measured: float
    predicted: float
    low: float
    high: float
    tolerance_pct: float
    duration: bool = False
    """The quantity is a duration (hours, days): slower means larger."""

    @property
    def ratio(self) -> float:
        """measured / estimated of a memory or a speed: for durations, the speed ratio
        estimated / measured, so that > 1 always means "more than estimated" of memory or
        speed, the sense the calibrated spreads are kept in."""
        if self.duration:
            return self.predicted / self.measured if self.measured else math.inf
        return self.measured / self.predicted if self.predicted else math.inf

    @property
    def within(self) -> bool:
        return abs(self.predicted - self.measured) <= self.measured * self.tolerance_pct / 100

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high


ALLOCATED_SOURCES = {
    "https://github.com/QwenLM/Qwen2.5/": "the Qwen2.5/Qwen3 speed benchmarks' 'GPU "
    "Memory(GB)' / '(MB)' columns read below the weights' own size in decimal units (Qwen2.5-7B "
    "BF16: 14.38 vs 15.23 GB of weights; Qwen3-8B: 15,950 vs 16,380 MB), so they are binary "
    "units (GiB/MiB) of allocated tensors, without CUDA context",
}
"""Sources whose memory column is binary units of allocated tensors."""
LIVE_SOURCES = {
    "https://github.com/QwenLM/Qwen2.5/blob/c7f51a1a1ce3d4bb750bc545cd2673fff4c5a8f9/docs/"
    "source/getting_started/speed_benchmark.md": "the Qwen3 speed benchmark's 'GPU Memory(MB)' "
    "grows with the input length by exactly the KV cache of the added tokens and nothing else "
    "(Qwen3-0.6B BF16: 1394 -> 4755 MB from 1 to 30720 tokens, +3361 MiB against 112 KiB x "
    "30719 = 3360 MiB of KV; Qwen3-8B BF16: 15947 -> 16811 MB to 6144 tokens, +864 MiB "
    "against 144 KiB x 6143 = 864 MiB): no prefill workspace, so it reads the tensors alive "
    "after generation, the weights and the KV cache, not a peak",
}
"""Sources whose memory column is the weights and KV cache alive after generation."""
BINARY = {"GB": "GiB", "MB": "MiB"}
ALLOCATED_BASES = ("active_bytes", "max_memory_allocated", "allocator peak")
"""Readings of allocated (or active) tensor bytes: no CUDA context, no allocator slack."""


def _allocated(case: dict[str, Any]) -> bool:
    url = case["source"]["url"]
    basis = case["measured"].get("basis", "")
    return any(url.startswith(p) for p in ALLOCATED_SOURCES) or any(
        b in basis for b in ALLOCATED_BASES
    )


def _run(case: dict[str, Any]) -> EstimateResponse:
    workload, placement = translate(case)
    if isinstance(workload, Inference) and case["workload"].get("concurrency", 1) is None:
        workload = msgspec.structs.replace(
            workload, concurrency=_largest_batch(workload, placement)
        )
    return estimate(workload, placement, MODELS, LOOKUP)


OFFLINE_MEMORY_SHARE = 0.9
"""vLLM's and TensorRT-LLM's default share of device memory for weights + KV cache
(gpu_memory_utilization 0.9, kv_cache_free_gpu_mem_fraction 0.9)."""


def _largest_batch(workload: Inference, placement: Placement) -> int:
    """Offline benchmarks queue every request at once: the engine runs as many sequences
    as its KV cache holds. With paged KV and in-flight batching, requests are at every
    stage of their decode, so a sequence holds on average its prompt plus half its output.
    The largest concurrency whose memory at that mean length fits 90 % of the device."""
    spec = LOOKUP.resolve(placement.accelerator)
    assert spec is not None
    mean = workload.context_len
    if workload.prompt_len:
        mean = workload.prompt_len + (workload.context_len - workload.prompt_len) // 2
    sizing = msgspec.structs.replace(workload, context_len=mean, prompt_len=None)
    lo, hi = 1, 8192
    while lo < hi:
        mid = (lo + hi + 1) // 2
        w = msgspec.structs.replace(sizing, concurrency=mid)
        r = estimate(w, placement, MODELS, LOOKUP)
        if r.memory.per_device_gib <= spec.memory_gib * OFFLINE_MEMORY_SHARE:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _scale(unit: str) -> float:
    if unit not in UNIT_SCALE:  # pragma: no cover - the data test restricts units
        raise AssertionError(f"unit {unit} is not scored")
    return UNIT_SCALE[unit]


def predict(case: dict[str, Any]) -> Prediction | None:
    """The engine's figure for the quantity the case measured, with its range; ``None``
    when the case cannot be scored (an accelerator without published figures)."""
    if LOOKUP.resolve(case["placement"]["accelerator"]) is None:
        return None
    r = _run(case)
    m = case["measured"]
    q = m["quantity"]
    count = int(case["placement"].get("count") or 1)
    w = case["workload"]
    if q in ("peak_memory_per_device", "memory_total"):
        allocated = _allocated(case)
        unit = m["unit"]
        if any(case["source"]["url"].startswith(p) for p in ALLOCATED_SOURCES):
            unit = BINARY.get(unit, unit)
        scale = GIB / UNIT_BYTES[unit] * (count if q == "memory_total" else 1)
        lo, hi = r.memory.range_gib
        # an allocated reading counts tensors only: without the context and allocator slack
        # the engine adds on top (its overhead term)
        slack = r.memory.overhead_gib if allocated else 0.0
        value = (r.memory.per_device_gib - slack) * scale
        low, high = (lo - slack) * scale, (hi - slack) * scale
        if any(case["source"]["url"].startswith(p) for p in LIVE_SOURCES):
            # weights and KV cache only: the range keeps its relative spread
            live = (r.memory.weights_gib + r.memory.kv_cache_gib) * scale
            low, high = low * live / value, high * live / value
            value = live
    elif q in ("tokens_per_s_per_device", "samples_per_s_total", "step_time_s"):
        assert r.time is not None, case["id"]
        tokens = float(w.get("tokens") or TRAIN_TOKENS)
        h_lo, h_hi = r.time.hours_range
        rate = [tokens / (h * 3600) for h in (r.time.hours, h_hi, h_lo)]
        if q == "tokens_per_s_per_device":
            rate = [x / count for x in rate]
        else:
            rate = [x / int(w["seq_len"]) for x in rate]
        value, low, high = (x / _scale(m["unit"]) for x in rate)
    elif q in ("wall_clock_hours", "device_hours"):
        assert r.time is not None, case["id"]
        per = count if q == "device_hours" else 1
        h_lo, h_hi = r.time.hours_range
        value, low, high = (h * per / _scale(m["unit"]) for h in (r.time.hours, h_lo, h_hi))
    elif q in ("output_tokens_per_s", "total_tokens_per_s"):
        assert r.throughput_tokens_per_s is not None, case["id"]
        assert r.throughput_range is not None, case["id"]
        per = 1.0
        if m["per"] == "request":
            per = float(w.get("concurrency") or 1)
        factor = 1.0
        if q == "total_tokens_per_s":
            out = int(w.get("output_len") or w["context_len"])
            factor = int(w["context_len"]) / out
        value = r.throughput_tokens_per_s / per * factor
        low = r.throughput_range[0] / per * factor
        high = r.throughput_range[1] / per * factor
    elif q == "batch_latency_ms":
        # an encoder's batch of `concurrency` sequences is one forward pass: its latency is
        # the batch's tokens over the tokens encoded per second
        assert r.throughput_tokens_per_s, case["id"]
        assert r.throughput_range is not None, case["id"]
        batch_tokens = int(w["concurrency"]) * int(w["context_len"]) * 1e3
        value = batch_tokens / r.throughput_tokens_per_s
        low, high = (batch_tokens / x for x in reversed(r.throughput_range))
    else:  # pragma: no cover - the data test restricts quantities
        raise AssertionError(f"{case['id']}: quantity {q} is not scored")
    return Prediction(
        case_id=case["id"],
        category=case["category"],
        split=case["split"],
        measured=float(m["value"]),
        predicted=value,
        low=low,
        high=high,
        tolerance_pct=float(case["tolerance_pct"]),
        duration=q in ("wall_clock_hours", "device_hours", "step_time_s", "batch_latency_ms"),
    )


def predictions(split: str) -> list[Prediction]:
    out = []
    for c in CASES:
        if c["split"] == split:
            p = predict(c)
            if p is not None:
                out.append(p)
    return out


def unscored(split: str) -> list[str]:
    """Cases of ``split`` whose accelerator has no figures in the registry."""
    return [
        c["id"]
        for c in CASES
        if c["split"] == split and LOOKUP.resolve(c["placement"]["accelerator"]) is None
    ]


@dataclass(frozen=True)
class Score:
    category: str
    n: int
    within: int
    inside: int

    @property
    def within_share(self) -> float:
        return self.within / self.n if self.n else 1.0

    @property
    def inside_share(self) -> float:
        return self.inside / self.n if self.n else 1.0


def scores(preds: list[Prediction]) -> dict[str, Score]:
    """Per category and ``all``: cases within tolerance and measured values inside range."""
    out: dict[str, Score] = {}
    for cat in (*CATEGORIES, "all"):
        sel = [p for p in preds if cat in ("all", p.category)]
        out[cat] = Score(
            category=cat,
            n=len(sel),
            within=sum(p.within for p in sel),
            inside=sum(p.inside for p in sel),
        )
    return out


def spread(preds: list[Prediction], category: str) -> tuple[float, float]:
    """(5th, 95th percentile) of the ratio (see :attr:`Prediction.ratio`) for a category:
    what :data:`service.sizing.uncertainty.SPREADS` holds for the dev split."""
    logs = sorted(math.log(p.ratio) for p in preds if p.category == category)
    if len(logs) < 3:
        return 1.0, 1.0
    qs = statistics.quantiles(logs, n=20, method="inclusive")
    return math.exp(qs[0]), math.exp(qs[-1])


def main(split: str) -> None:  # pragma: no cover - a developer's report
    preds = predictions(split)
    for p in sorted(preds, key=lambda p: (p.category, p.case_id)):
        flag = "ok " if p.within else "BAD"
        rng = "in " if p.inside else "out"
        print(
            f"{flag} {rng} {p.category:21s} {p.case_id:48s} meas {p.measured:10.4g} "
            f"pred {p.predicted:10.4g} ratio {p.ratio:6.3f} [{p.low:.4g}, {p.high:.4g}]"
        )
    for s in scores(preds).values():
        print(
            f"{s.category:21s} n={s.n:3d} within {s.within_share:6.1%} inside {s.inside_share:6.1%}"
        )
    for cat in CATEGORIES:
        lo, hi = spread(preds, cat)
        n = sum(p.category == cat for p in preds)
        print(f"{cat}: Spread(low={lo:.3f}, high={hi:.3f}, cases={n})")
    print("not scored:", unscored(split))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1] if len(sys.argv) > 1 else "dev")
