"""Resolve a workload once: architecture, byte budgets and the assumptions behind them.

Everything that depends only on the workload (not on the accelerator or device count) is
computed here, once per request, so the planner's hundreds of ``fit_placement`` calls are a
handful of multiplications each. The result, :class:`ResolvedWorkload`, holds *unsharded
totals in bytes*; :mod:`service.sizing.memory` divides them by the placement's ZeRO and
tensor-parallel degrees.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import msgspec

from service.runtime.errors import InputError
from service.sizing import formulas as f
from service.sizing import vit
from service.sizing.copying import copier
from service.sizing.diffusion import DiffusionWork, pipeline_work
from service.sizing.encoder import workspace_bytes as encoder_workspace
from service.sizing.presets import TRANSFORMER_KINDS, ModelPreset, ModelRegistry
from service.sizing.profiles import (
    CHUNKED_LOSS_BYTES,
    CHUNKED_LOSS_NOTE,
    COMPILED_CHUNKED_LOSS_BYTES,
    COMPILED_CHUNKED_LOSS_NOTE,
    UPCAST_LOSS_BYTES,
    UPCAST_LOSS_NOTE,
    FrameworkProfile,
    engine_profile,
    framework_profile,
)
from service.sizing.unet import (
    UNetConfig,
    attention_blocks,
    frozen_forward_flops,
    serving_working_set,
    unet_forward_flops,
)
from service.sizing.workload import (
    Finetune,
    Inference,
    ModelSpec,
    Preprocess,
    Pretrain,
    Rlhf,
    Workload,
    validate_workload,
)

# --- priors (each stated in the response's assumptions) -------------------------------

TRAIN_OVERHEAD_GIB = 1.0
"""CUDA/CANN context, cuBLAS workspace and NCCL buffers per device (anchors §4: 1-2 GiB;
gpu_poor charges 650 MB, the EleutherAI cookbook observed up to 5 GiB)."""
INFER_OVERHEAD_GIB = 1.0
FRAGMENTATION = 0.10
"""Allocator fragmentation and caching slack on top of the training tensors (anchors §4:
5-10 %)."""
INFER_FRAGMENTATION = 0.0
FREEZE_TRAINABLE_LAYERS = 2
"""LLaMA-Factory's ``freeze_trainable_layers`` default: the last 2 layers train."""
PREFILL_CHUNK_TOKENS = 2048
"""Tokens per prefill step when sizing the inference workspace (chunked prefill)."""
YOLO_DENSITY_REFERENCE = "resnet-50"
DIFFUSION_DENSITY_REFERENCE = "sd-1.5"
"""The UNet whose measured activations per latent pixel stand in for a diffusion model
without its own figure (SDXL: same 320/640/1280-channel UNet family)."""
IMAGE_TRAINING_PASSES = 3.0
IMAGE_KINDS = frozenset({"cnn", "detector", "diffusion", "vit"})

_BYTES_16 = 2.0
_OPT_STATE_BYTES = {
    "adamw": 8.0,
    "adamw_8bit": 2.0,
    "paged_adamw": 8.0,
    "paged_adamw_8bit": 2.0,
    "sgd": 4.0,
    "adafactor": 0.0,
}
"""Optimizer state bytes per trainable parameter in fp32 (cookbook: AdamW m+v 8,
SGD momentum 4, 8-bit Adam 2 (bitsandbytes block-wise 8-bit states, Dettmers et al.
2022); paged variants have the same bytes but page them to host RAM under pressure;
Adafactor's factored moments are O(rows+cols))."""
_EIGHT_BIT_OPTIMIZERS = frozenset({"adamw_8bit", "paged_adamw_8bit"})
"""Optimizers whose states are 8-bit codes with block-wise scales (Dettmers et al. 2022,
https://arxiv.org/abs/2110.02861; torchao ``AdamW8bit``, block size 256,
https://github.com/pytorch/ao/blob/main/torchao/optim/README.md): 2 B/param in any
parameter dtype."""
SEQ2SEQ = "seq2seq"
"""Arch kind of an encoder-decoder model given with encoder_layers/decoder_layers (T5)."""
_WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
_KV_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8": 1.0, "int8": 1.0}


@dataclass(frozen=True, slots=True)
class Arch:
    """A model's shape as the formulas need it (transformer fields ``None`` for CNNs)."""

    kind: str
    params: float
    active_params: float
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    intermediate: int | None = None
    """Per-token MLP width: one expert's width x experts used per token (+ shared)."""
    vocab: int | None = None
    tied: bool = False
    glu: bool = True
    dropout: bool = False
    fused_qkv: bool = False
    experts: int = 1
    expert_intermediate: int | None = None
    mla_kv_dim: int | None = None
    embedding_params: float = 0.0
    largest_layer_params: float = 0.0
    frozen_params: float = 0.0
    experts_per_token: int = 1
    shared_experts: int = 0
    encoder_layers: int | None = None
    """Encoder-decoder models: encoder layers (``layers`` = encoder + decoder)."""
    attention_blocks: tuple[tuple[int, int], ...] = ()
    """Diffusion UNets: (channels, transformer blocks of that width), see the preset."""
    context_dim: int | None = None
    """Diffusion UNets: the text embeddings' width (cross-attention keys and values)."""

    @property
    def transformer(self) -> bool:
        return self.kind in TRANSFORMER_KINDS or self.kind == SEQ2SEQ

    @property
    def decoder_layers(self) -> int | None:
        """Layers that hold a KV cache when serving (all but the encoder's)."""
        if self.layers is None:
            return None
        return self.layers - (self.encoder_layers or 0)

    @property
    def routed_expert_params(self) -> float:
        """Parameters of all routed experts (0 for dense models): 3·h·I (gated) or
        2·h·I per expert per MoE layer."""
        if self.experts <= 1 or self.hidden is None or self.expert_intermediate is None:
            return 0.0
        per = (3 if self.glu else 2) * self.hidden * self.expert_intermediate
        return float(per * self.experts * (self.layers or 0))

    @property
    def linear_params(self) -> float:
        """Parameters in the block linears (what 4/8-bit quantization applies to)."""
        norms = (
            0.0
            if self.layers is None or self.hidden is None
            else (2 * self.layers + 1) * self.hidden
        )
        return max(self.params - self.embedding_params - norms, 0.0)


@dataclass(frozen=True, slots=True)
class TrainingBudget:
    """Unsharded training totals in bytes (per data-parallel replica)."""

    frozen_weights: float
    train_weights: float
    grads: float
    grads_zero3: float
    """Gradient bytes under ZeRO-3 (DeepSpeed reduce-scatters fp16 grads straight into
    the fp32 partition, so its stage-3 estimator charges 4 B/param, not 6)."""
    optimizer: float
    trainable_params: float
    live_weights: float
    """ZeRO-3: the largest layer gathered whole in 16-bit (DeepSpeed charges it)."""
    live_grads: float
    """...and its 16-bit gradient (trainable layers only)."""
    deepspeed: bool
    act_unsharded: float
    act_sharded: float
    offload: str
    flops_per_token: float = 0.0
    """Hardware FLOPs per training token: forward + backward (no weight gradients for
    frozen weights) + attention + recompute (see :func:`training_flops_per_token`)."""
    model_flops_per_token: float = 0.0
    """Model FLOPs per token (6·N + attention, no recompute): what MFU is measured in."""
    attention_flops_per_token: float = 0.0
    """The attention-kernel part of :attr:`flops_per_token` (scores and weighted sum,
    forward, backward and a full recompute's forward: :func:`attention_flops_per_token`),
    timed at the attention kernel's own utilization where it is lower
    (:func:`service.sizing.mfu.attention_utilization`)."""
    attention_model_flops_per_token: float = 0.0
    """The attention part of :attr:`model_flops_per_token` (3 x the forward's)."""
    tokens_per_step: float = 0.0
    """Tokens one device processes per micro-step (micro-batch x sequence)."""
    offload_bytes_per_step: float = 0.0
    """Bytes one data-parallel replica moves over the host link per step (ZeRO-Offload)."""
    framework: str = "hf"
    time_basis: str = "steady"
    fp8: bool = False
    recompute: bool = False
    lora: bool = False
    quantized: bool = False
    pipeline_layers: int = 1
    """Layers, for pipeline-stage division of the weights (transformers)."""
    grads_replace_activations: bool = False
    """No gradient accumulation: on one device the backward frees activations as it creates
    gradients, so the peak holds the larger of the two."""
    rollout_weight_bytes: float = 0.0
    """RLHF: 16-bit actor weights each decode step of the rollout reads (0 = no rollout)."""
    rollout_response_len: int = 0
    rollout_layers: int = 0
    rollout_batch: int = 1
    rollout_kv_per_token: float = 0.0
    """RLHF: 16-bit KV-cache bytes per token of the actor (all layers, all KV heads)."""
    rollout_kv_heads: int = 1
    """KV heads of the actor: the most ways the rollout engine's tensor parallelism
    splits the KV cache."""
    rollout_heads: int = 1
    """Attention heads of the actor: the rollout's tensor-parallel degree divides them."""
    rollout_tp: int = 1
    """The rollout engine's default tensor-parallel degree (see :data:`ROLLOUT_TP`)."""
    seq_len: int = 0
    pipeline_unsharded_grads: float = 0.0
    """Bytes of the whole gradient a pipeline stage accumulates unsharded in the reduce
    dtype between micro-batches (torchtitan: FSDP2 under pipeline schedules, see
    :attr:`service.sizing.profiles.FrameworkProfile.pipeline_keeps_unsharded`); 0 when the
    framework reduce-scatters every micro-batch."""


@dataclass(frozen=True, slots=True)
class InferenceBudget:
    """Unsharded serving totals in bytes."""

    weights: float
    kv_per_token: float
    kv_shards_max: int
    context_len: int
    concurrency: int
    act_unsharded: float
    act_sharded: float
    engine: str = "vllm"
    expert_weights: float = 0.0
    """Bytes of all routed experts (MoE); a decode step reads only those the batch uses."""
    experts: int = 1
    experts_per_token: int = 1
    precision: str = "bf16"
    prompt_len: int = 0
    layer_split: bool = False
    """The engine splits layers over the devices (plain transformers' device_map) instead
    of tensor parallelism: memory divides by the device count, bandwidth does not add."""
    untied_head: bool = False
    """A tied-embedding model whose output head is held as its own 16-bit matrix
    (:data:`FP8_TIED_HEAD_NOTE`): ``weights`` counts it, and a decode step reads it while
    the input table is only looked up."""


LENGTH_FIELDS = ("tokens", "output_tokens")
"""Workload fields that set how long a job runs and nothing else: memory, placements and
the resolved model never depend on them."""


@dataclass(frozen=True, slots=True)
class ResolvedWorkload:
    """A workload with everything the placement-independent formulas can tell."""

    workload: Workload
    kind: str
    model_id: str | None
    arch: Arch | None
    training: TrainingBudget | None
    inference: InferenceBudget | None
    tokens: float | None
    assumptions: tuple[str, ...]
    image_model: bool = False
    """Vision models: ``tokens`` counts samples and compute is 3 x forward FLOPs."""
    sample_flops: float | None = None
    """Forward FLOPs per sample at the workload's image size (vision models)."""
    frozen_sample_flops: float = 0.0
    """FLOPs a training step runs forward only on each sample (a diffusion model's VAE
    encoder and text encoders), on top of ``image_passes x sample_flops``."""
    image_passes: float = 3.0
    """Forward passes' worth of FLOPs per training sample (vision models): 3 for full
    training (forward + backward with weight gradients), 2 for LoRA on a frozen UNet
    (+1 recomputed forward under checkpointing)."""
    data_gb: float = 0.0
    target_hours: float | None = None
    beyond_positions: tuple[int, int] | None = None
    no_bf16: ResolvedWorkload | None = None
    """The same serving job in fp16, for a device without BF16, when fp16 costs more
    memory than the bf16 asked for: a diffusion pipeline whose VAE diffusers upcasts to
    fp32 in fp16 (SDXL's ``force_upcast``); ``None`` when the memory is the same."""
    """(tokens per sequence, the preset's trained positions) when the job's sequences are
    longer than the decoder was trained on (:func:`positions_note`); ``None`` otherwise."""
    checkpoint: tuple[str, str] | None = None
    """(the name sent, how its weights are stored) when ``model`` named a quantized
    checkpoint of the preset (``…-GPTQ-Int4``: ``GPTQ int4``); ``None`` otherwise."""
    decode_peak: bool = False
    """Serving a diffusion pipeline whose peak working set is the VAE decoding the call's
    images (not the UNet's step): what a sentence on a tight fit names (review 10 S7c1)."""
    diffusion: DiffusionWork | None = None
    """Serving a diffusion pipeline: the work of one image of a call, by phase, which
    times it (:mod:`service.sizing.diffusion`); ``None`` for every other job."""
    reranker: bool = False
    """Serving a cross-encoder reranker (a bge-reranker preset): each sequence is a query and
    passage pair scored, which is what its rate is said in."""

    @property
    def params_b(self) -> float:
        return 0.0 if self.arch is None else self.arch.params / 1e9

    def with_length(self, workload: Workload) -> ResolvedWorkload:
        """This resolution for ``workload``, which differs from the resolved one at most
        in :data:`LENGTH_FIELDS` (nothing else here depends on them), so resolving can be
        shared between requests for the same job at other lengths."""
        if isinstance(workload, Preprocess):
            return self
        kind = type(workload)
        fields = _LENGTHS_OF.get(kind)
        if fields is None:
            fields = _LENGTHS_OF[kind] = tuple(f for f in LENGTH_FIELDS if hasattr(workload, f))
        changes = {f: getattr(workload, f) for f in fields}
        tokens = workload.output_tokens if isinstance(workload, Inference) else workload.tokens
        return self._copy(msgspec.structs.replace(self.workload, **changes), tokens)

    def with_tokens(self, tokens: float | None) -> ResolvedWorkload:
        """This resolution with ``tokens`` (the planner times a placement on one token:
        hours are linear in them), as ``dataclasses.replace`` would make it."""
        return self._copy(self.workload, tokens)

    def _copy(self, workload: Workload, tokens: float | None) -> ResolvedWorkload:
        """A copy with ``workload`` and ``tokens``, every other field shared. Why not
        ``dataclasses.replace``: it checks each field's kind and runs the generated
        ``__init__`` — several times the cost, and the planner copies a resolution a few
        times per request. There is no ``__post_init__`` to skip."""
        new = _copy_at(self, workload, tokens)
        if self.no_bf16 is not None and isinstance(workload, Inference):
            fp16 = msgspec.structs.replace(workload, precision="fp16")
            object.__setattr__(new, "no_bf16", self.no_bf16._copy(fp16, tokens))
        return new

    @property
    def active_params_b(self) -> float:
        return 0.0 if self.arch is None else self.arch.active_params / 1e9

    @property
    def encoder(self) -> bool:
        """Serving an encoder-only model: one forward over all tokens, no decode
        (:mod:`service.sizing.encoder`)."""
        return self.inference is not None and self.arch is not None and self.arch.kind == "encoder"


_LENGTHS_OF: dict[type, tuple[str, ...]] = {}
"""The :data:`LENGTH_FIELDS` each workload type has (:meth:`ResolvedWorkload.with_length`)."""
_copy_at = copier(ResolvedWorkload, ("workload", "tokens"))
"""What :meth:`ResolvedWorkload._copy` builds: every field shared but the two it sets."""


# --- architecture --------------------------------------------------------------------


_ARCHS: dict[int, tuple[ModelPreset, Arch]] = {}
""":func:`arch_from_preset` per preset object (held, so that its id stays its own): a
preset's shape is read by every request for it."""
_ARCHS_MAX = 4096


def arch_from_preset(p: ModelPreset) -> Arch:
    """Arch of a preset: per-token MLP width, embeddings and the largest single layer
    (once per preset object: the Arch is frozen)."""
    found = _ARCHS.get(id(p))
    if found is not None and found[0] is p:
        return found[1]
    arch = _arch_of_preset(p)
    if len(_ARCHS) < _ARCHS_MAX:
        _ARCHS[id(p)] = (p, arch)
    return arch


def _arch_of_preset(p: ModelPreset) -> Arch:
    params = p.params_b * 1e9
    active = (p.active_params_b or p.params_b) * 1e9
    if p.kind not in TRANSFORMER_KINDS or p.hidden is None:
        return Arch(
            kind=p.kind,
            params=params,
            active_params=active,
            frozen_params=(p.frozen_params_b or 0.0) * 1e9,
            largest_layer_params=params,
            attention_blocks=() if p.unet is None else attention_blocks(p.unet),
            context_dim=None if p.unet is None else p.unet.cross_attention_dim,
        )
    if p.heads is None or p.layers is None:
        raise InputError(
            "workload.model",
            f"preset {p.id} lacks the layers/heads a {p.kind} model needs",
            zh=f"预设 {p.id} 缺少 {p.kind} 模型所需的层数/注意力头数",
        )
    head_dim = p.head_dim or p.hidden // p.heads
    per_token_i = None
    if p.intermediate is not None:
        per_token_i = p.intermediate * (p.experts_per_token + p.shared_experts)
    vocab = p.vocab or 0
    embedding = float(vocab * p.hidden * (1 if p.tied_embeddings else 2))
    largest = float(max(vocab * p.hidden, p.hidden * (p.intermediate or 0), p.hidden * p.hidden))
    return Arch(
        kind=p.kind,
        params=params,
        active_params=active,
        layers=p.layers,
        hidden=p.hidden,
        heads=p.heads,
        kv_heads=p.kv_heads or p.heads,
        head_dim=head_dim,
        intermediate=per_token_i,
        vocab=p.vocab,
        tied=p.tied_embeddings,
        glu=p.glu,
        dropout=p.dropout,
        fused_qkv=p.fused_qkv,
        experts=p.experts,
        expert_intermediate=p.intermediate,
        mla_kv_dim=p.mla_kv_dim,
        embedding_params=embedding,
        largest_layer_params=largest,
        frozen_params=(p.frozen_params_b or 0.0) * 1e9,
        experts_per_token=p.experts_per_token,
        shared_experts=p.shared_experts,
    )


def nearest_preset(
    params_b: float, models: ModelRegistry, kind: str = "decoder"
) -> ModelPreset | None:
    """The dense ``kind`` preset (decoder, or encoder) closest in (log) size: the shape a
    bare ``params_b`` gets."""
    best: ModelPreset | None = None
    best_d = math.inf
    for p in models.all():
        if p.kind != kind or p.hidden is None or p.heads is None or p.layers is None:
            continue
        d = abs(math.log(params_b / p.params_b))
        if d < best_d:
            best, best_d = p, d
    return best


def _embeddings_look_tied(non_block_params: float, embedding_matrix: float) -> bool:
    """Whether a described model's parameter count is better explained by one shared
    embedding/output matrix than by two (what is left of ``params_b`` after the blocks,
    ``vocab · hidden`` each). Taking this from the nearest preset by size instead made the
    estimate fall when the parameter count rose (a 2.5B count of a 2.2B model's shape
    reached a tied preset and halved the fp32 embeddings QLoRA keeps)."""
    return abs(non_block_params - embedding_matrix) < abs(non_block_params - 2 * embedding_matrix)


def arch_from_spec(spec: ModelSpec, models: ModelRegistry, notes: list[str]) -> Arch:
    """Arch of a ``{params_b, ...}`` model: given fields win, the rest come from the
    nearest preset's shape (scaled where a given field changes it)."""
    encoder = bool(spec.encoder_only)
    base = nearest_preset(spec.params_b, models, "encoder" if encoder else "decoder")
    if base is None or base.hidden is None or base.heads is None or base.layers is None:
        raise InputError(
            "workload.model",
            f"no {'encoder' if encoder else 'decoder'} preset is registered to infer a shape from",
            zh=f"没有可用来推断模型结构的{'编码器' if encoder else '解码器'}预设",
        )
    given = {
        k
        for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
        if getattr(spec, k) is not None
    }
    hidden = spec.hidden or base.hidden
    base_head_dim = base.head_dim or base.hidden // base.heads
    if spec.heads is not None:
        heads = spec.heads
    elif spec.hidden is None:
        heads = base.heads
    elif spec.head_dim is not None and hidden % spec.head_dim == 0:
        heads = hidden // spec.head_dim
    else:
        heads = hidden // base_head_dim if hidden % base_head_dim == 0 else 1
    head_dim = spec.head_dim or max(hidden // heads, 1)
    # an encoder's attention is multi-head: no KV cache to shrink, so no GQA to inherit
    kv_heads = spec.kv_heads or (heads if encoder else min(base.kv_heads or base.heads, heads))
    if heads % kv_heads:
        kv_heads = heads
    intermediate = spec.intermediate or max(
        round(hidden * (base.intermediate or 4 * base.hidden) / base.hidden), 1
    )
    vocab = spec.vocab or base.vocab or 32000
    glu = base.glu if spec.gated_mlp is None else spec.gated_mlp
    attn = hidden * (2 * heads * head_dim + 2 * kv_heads * head_dim)
    layers = spec.layers or base.layers
    if spec.hidden is not None and spec.layers is None:
        # keep the parameter count: P ≈ 12·L·h² for a dense block
        scaled = base.layers * (spec.params_b / base.params_b) * (base.hidden / hidden) ** 2
        layers = min(max(1, round(scaled)), 1024)
    if spec.tied_embeddings is not None:
        tied = spec.tied_embeddings
    elif encoder:
        tied = True  # one embedding table; the served encoder has no output head
    elif (spec.experts or 1) > 1:
        tied = base.tied_embeddings
    else:
        mlp = (3 if glu else 2) * hidden * intermediate
        block = layers * (attn + mlp)
        tied = _embeddings_look_tied(spec.params_b * 1e9 - block, vocab * hidden)
    missing = sorted({"layers", "hidden", "heads", "kv_heads", "intermediate", "vocab"} - given)
    if missing:
        notes.append(
            f"Architecture fields not given ({', '.join(missing)}) were taken from the nearest "
            f"{'encoder ' if encoder else ''}preset by size, {base.id} ({base.params_b:.2f}B): "
            f"layers {layers}, hidden {hidden}, heads {heads}/{kv_heads} KV, intermediate "
            f"{intermediate}, vocab {vocab}."
            + ("" if encoder else _encoder_hint(spec.params_b, base, models))
        )
    params = spec.params_b * 1e9
    embedding = float(vocab * hidden * (1 if tied else 2))
    experts = spec.experts or 1
    k = min(spec.experts_per_token or (2 if experts > 1 else 1), experts)
    shared = spec.shared_experts or 0
    per_expert_i = intermediate
    if experts > 1 and spec.intermediate is None:
        # routed experts hold what attention and embeddings leave: P ≈ E + L·(attn + (n+s)·3hI)
        rest = max(params - embedding - layers * attn, 0.0)
        per_expert_i = max(round(rest / (layers * (experts + shared) * 3 * hidden)), 1)
    active = (spec.active_params_b or spec.params_b) * 1e9
    if experts > 1 and spec.active_params_b is None:
        routed = 3.0 * hidden * per_expert_i * experts * layers
        active = max(params - routed * (1 - k / experts), params * k / experts)
        notes.append(
            f"MoE: {experts} routed experts of width {per_expert_i}, {k} per token"
            + (f" + {shared} shared" if shared else "")
            + f" -> {active / 1e9:.2f}B active parameters per token."
        )
    enc = spec.encoder_layers
    if enc is not None and spec.decoder_layers is not None:
        layers = enc + spec.decoder_layers
    moe = experts > 1 or (spec.active_params_b is not None and spec.active_params_b < spec.params_b)
    kind = SEQ2SEQ if enc is not None else ("moe" if moe else "decoder")
    if encoder:
        kind = "encoder"
    return Arch(
        kind=kind,
        params=params,
        active_params=active,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=per_expert_i * (k + shared) if experts > 1 else intermediate,
        vocab=vocab,
        tied=tied,
        glu=glu,
        dropout=base.dropout,
        experts=experts,
        expert_intermediate=per_expert_i,
        embedding_params=min(embedding, params),
        largest_layer_params=float(max(vocab * hidden, hidden * intermediate)),
        experts_per_token=k,
        shared_experts=shared,
        encoder_layers=enc,
    )


def _encoder_hint(params_b: float, base: ModelPreset, models: ModelRegistry) -> str:
    """A sentence for a described model filled as a decoder when an encoder preset is at
    least as near in size (a 0.33B model is as likely a bge/gte embedding model as a small
    chat model): how to say which it is. Empty otherwise."""
    encoder = nearest_preset(params_b, models, "encoder")
    if encoder is None:
        return ""
    if abs(math.log(params_b / encoder.params_b)) > abs(math.log(params_b / base.params_b)):
        return ""
    return (
        f" It is sized as a decoder (causal language model); for an encoder-only model such "
        f"as BERT or a bge/gte embedding or reranker model, send encoder_only: true to take "
        f"the shape of {encoder.id} and serve it as one forward pass."
    )


_VISION_LANGUAGE = re.compile(
    r"(?:^|[-_/ .])(?:vl|vlm)(?:$|[-_/ .\d])|llava|internvl|minicpm-?v|glm-?4v|cogvlm",
    re.IGNORECASE,
)
"""Names of vision-language models (Qwen2-VL, Qwen2.5-VL, LLaVA, InternVL, MiniCPM-V,
GLM-4V, CogVLM): a language model behind a vision encoder."""

_QWEN_VL = re.compile(r"qwen2(?:\.5)?-vl", re.IGNORECASE)

QWEN_VL_FACTS = (
    " (Qwen2-VL and Qwen2.5-VL: a vision encoder of about 675M parameters, and one token "
    "per 28 x 28 pixels, up to 16,384 per image at the processor's default max_pixels)"
)
"""Qwen2-VL's vision encoder is a 675M-parameter ViT (Qwen2-VL report,
https://arxiv.org/abs/2409.12191, section 2.1); its processor merges 2 x 2 patches of 14
pixels into one token, up to ``max_pixels`` 12,845,056 per image (``preprocessor_config
.json`` of https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct): 12,845,056 / 784 = 16,384."""

QWEN_VL_FACTS_ZH = (
    "（Qwen2-VL 与 Qwen2.5-VL 的视觉编码器约 6.75 亿参数，每 28 × 28 像素一个 token，"
    "按处理器默认的 max_pixels 每张图最多 16,384 个）"
)


def vision_language_note(model: str) -> tuple[str, str]:
    """(en, zh) sentences added to an unknown preset's refusal when ``model`` names a
    vision-language model: the suggestions are text models, which size its language
    half only; empty strings for any other name."""
    if not _VISION_LANGUAGE.search(model):
        return "", ""
    qwen = bool(_QWEN_VL.search(model))
    return (
        f" {model} is a vision-language model: no preset sizes its vision encoder or its "
        "images' tokens. A text model suggested sizes its language half only; add the "
        f"images' tokens to context_len{QWEN_VL_FACTS if qwen else ''} and keep memory "
        "free for the vision encoder.",
        f"{model} 是视觉语言模型：没有预设能估算它的视觉编码器和图像 token。建议的文本模型"
        f"只覆盖其语言部分；请把图像的 token 数计入 context_len{QWEN_VL_FACTS_ZH if qwen else ''}，"
        "并为视觉编码器留出显存。",
    )


def resolve_model(
    model: str | ModelSpec, models: ModelRegistry, notes: list[str]
) -> tuple[str | None, Arch, ModelPreset | None]:
    """(preset id, Arch, preset) for a workload's ``model``; InputError with suggestions
    for an unknown name."""
    if isinstance(model, ModelSpec):
        return None, arch_from_spec(model, models, notes), None
    checkpoint = models.checkpoint(model)
    preset = checkpoint.preset if checkpoint is not None else models.resolve(model)
    if checkpoint is not None:
        notes.append(
            f"{model} is the {checkpoint.scheme} checkpoint of {checkpoint.preset.id}: its "
            f"architecture, with {checkpoint.precision} weights."
        )
    if preset is None:
        suggestions = models.suggest(model)
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        vl_en, vl_zh = vision_language_note(model)
        raise InputError(
            "workload.model",
            f"unknown model preset {model!r} (GET /v1/models lists them){hint}{vl_en}",
            suggestions,
            zh=f"未知模型预设 {model!r}（GET /v1/models 列出全部预设）"
            + (f"；是否想写 {', '.join(suggestions)}？" if suggestions else "")
            + ("" if suggestions or not vl_zh else "。")
            + vl_zh,
        )
    notes.append(f"Model {preset.id}: {preset.params_b:.3f}B parameters ({preset.source}).")
    return preset.id, arch_from_preset(preset), preset


# --- training budget -----------------------------------------------------------------


def lora_params(arch: Arch, rank: int, targets: str) -> float:
    """Trainable adapter parameters r·Σ(d_in + d_out) over the targeted linears."""
    if arch.attention_blocks and arch.context_dim:
        return unet_lora_params(arch.attention_blocks, arch.context_dim, rank, targets)
    if not arch.transformer or arch.hidden is None or arch.layers is None:
        return 0.0
    h = arch.hidden
    q = (arch.heads or 1) * (arch.head_dim or h)
    kv = (arch.kv_heads or 1) * (arch.head_dim or h)
    attn = h + q + 2 * kv + (q + h) if arch.fused_qkv else h + q + 2 * (h + kv) + (q + h)
    per_layer = float(attn)
    if targets == "all_linear" and arch.expert_intermediate is not None:
        i = arch.expert_intermediate
        mlp = (2 * (h + i) + (i + h)) if arch.glu else 2 * (h + i)
        per_layer += mlp * max(arch.experts, 1)
    return rank * per_layer * arch.layers


def unet_lora_params(
    blocks: tuple[tuple[int, int], ...], context: int, rank: int, targets: str
) -> float:
    """LoRA parameters r·Σ(d_in + d_out) on a diffusion UNet's transformer blocks.

    Each block of width d has a self-attention (``to_q``, ``to_k``, ``to_v``, ``to_out.0``,
    all d x d: 8·r·d) and a cross-attention whose keys and values read the text
    embeddings (q and out d x d, k and v from ``context``: r·(6d + 2·context)) — the
    modules diffusers' ``train_text_to_image_lora.py`` and DreamBooth-LoRA scripts target
    (``target_modules=["to_k", "to_q", "to_v", "to_out.0"]``). ``all_linear`` adds the
    GEGLU feed-forward (d -> 8d and 4d -> d: 14·r·d). SD 1.5 at rank 4: 797,184, the
    ~3 MB fp32 file of the Hugging Face LoRA blog (https://huggingface.co/blog/lora)."""
    per_rank = 0.0
    for width, count in blocks:
        per_block = 14 * width + 2 * context
        if targets == "all_linear":
            per_block += 14 * width
        per_rank += per_block * count
    return rank * per_rank


def lora_targets_of(w: Pretrain | Finetune, arch: Arch) -> str:
    """The linears LoRA adapts: the request's, else attention only on a diffusion UNet
    (diffusers' LoRA scripts) and every linear on a transformer (PEFT ``all-linear``,
    LLaMA-Factory ``lora_target: all``)."""
    targets = w.lora_targets if isinstance(w, Finetune) else None
    if targets is not None:
        return targets
    return "attention" if arch.attention_blocks else "all_linear"


CNN_KINDS = frozenset({"cnn", "detector"})
"""Convolutional image models, trained with SGD and momentum unless told otherwise."""


def optimizer_of(w: Pretrain | Finetune, arch: Arch) -> str:
    """The optimizer: the request's, else SGD with momentum for a CNN or detector
    (torchvision's classification reference, ``references/classification/train.py``:
    ``--opt`` default ``sgd``, ``--momentum`` 0.9,
    https://github.com/pytorch/vision/blob/bde124ee2f3419fe31ad79c858af40206e8bf792/references/classification/train.py)
    and AdamW for the rest. YOLO's ``optimizer=auto`` picks AdamW up to 10,000 iterations
    and SGD above (ultralytics ``engine/trainer.py`` ``build_optimizer``); the number of
    iterations is the job's length, which memory must not depend on, so a detector is
    sized with SGD's smaller states only when asked and with AdamW's otherwise."""
    if w.optimizer is not None:
        return w.optimizer
    return "sgd" if arch.kind == "cnn" else "adamw"


def _weight_bytes_16(arch: Arch, precision: str) -> float:
    return arch.params * (4.0 if precision == "fp32" else _BYTES_16)


def _quantized_bytes(arch: Arch, bits: int, unquantized_bytes: float = _BYTES_16) -> float:
    """Frozen 4/8-bit base: block linears quantized (+ NF4 double-quant constants at 4 bit),
    embeddings, head and norms at ``unquantized_bytes`` (16-bit, anchors §4; fp32 after
    PEFT's ``prepare_model_for_kbit_training``)."""
    linear = arch.linear_params
    const = f.NF4_DOUBLE_QUANT_BITS / 8 if bits == 4 else 0.0
    return linear * (bits / 8 + const) + (arch.params - linear) * unquantized_bytes


def checkpointing_on(w: Pretrain | Finetune | Rlhf) -> bool:
    """Full recompute: the request's gradient checkpointing, or its framework's default
    (``"selective"`` is not full recompute, see :func:`selective_recompute`)."""
    if w.gradient_checkpointing is not None:
        return w.gradient_checkpointing is True
    return framework_profile(w.framework).checkpointing


def image_checkpointing(w: Pretrain | Finetune) -> bool:
    """Gradient checkpointing of a CNN, detector or diffusion UNet: only when asked.
    Their trainers check nothing by default — diffusers' ``train_text_to_image*.py`` and
    DreamBooth scripts take ``--gradient_checkpointing`` (off unless passed), torchvision's
    reference and Ultralytics have none — so the Hugging Face Trainer default of the
    ``framework`` field does not apply to them."""
    return w.gradient_checkpointing is True


def recompute_on(w: Pretrain | Finetune, arch: Arch) -> bool:
    """Full recompute for this model: :func:`image_checkpointing` for an image model
    (a ViT trains under torchvision's recipe, not the Hugging Face Trainer), else
    :func:`checkpointing_on`."""
    if arch.kind in IMAGE_KINDS:
        return image_checkpointing(w)
    return checkpointing_on(w)


def selective_recompute(w: Pretrain | Finetune | Rlhf) -> bool:
    """Op-level selective recompute (torchtitan's ``selective`` AC with the op policy):
    every other matmul output is saved, the rest of the layer is recomputed."""
    return w.gradient_checkpointing == "selective"


def time_basis_of(w: Pretrain | Finetune | Rlhf) -> str:
    """``steady`` for fine-tuning and RLHF, ``run`` for pre-training, unless given."""
    if w.time_basis is not None:
        return w.time_basis
    return "run" if isinstance(w, Pretrain) else "steady"


def training_budget(w: Pretrain | Finetune, arch: Arch, notes: list[str]) -> TrainingBudget:
    method = w.method if isinstance(w, Finetune) else "full"
    prof = framework_profile(w.framework)
    fp32 = w.precision == "fp32"
    weight_b = 4.0 if fp32 else _BYTES_16
    optimizer = optimizer_of(w, arch)
    state = _OPT_STATE_BYTES[optimizer]
    if w.optimizer is None and arch.kind == "detector":
        notes.append(
            "Optimizer: Ultralytics' optimizer=auto picks AdamW up to 10,000 iterations and "
            "SGD with momentum above; sized with AdamW's larger states (send optimizer sgd "
            "for a long run)."
        )
    elif w.optimizer is None and arch.kind == "cnn":
        notes.append(
            "Optimizer: SGD with momentum, as torchvision's classification reference trains "
            "it (send optimizer for another)."
        )
    if fp32:
        grad_b, master_b = 4.0, 0.0
    elif w.mixed_precision:
        grad_b, master_b = _BYTES_16, 4.0
    else:
        # pure 16-bit: torch optimizers keep their states in the parameters' dtype (half
        # of fp32); 8-bit optimizers store uint8 states whatever the parameter dtype
        # (bitsandbytes Optimizer8bit, torchao AdamW8bit), so theirs do not shrink
        grad_b, master_b = _BYTES_16, 0.0
        state = state if optimizer in _EIGHT_BIT_OPTIMIZERS else state / 2
    deepspeed = prof.zero3_live_params
    ds_grad_extra = prof.grad_extra_bytes if w.mixed_precision and not fp32 else 0.0

    frozen_w = arch.frozen_params * _BYTES_16
    unet_lora = method == "lora" and bool(arch.attention_blocks)
    if method in ("lora", "qlora"):
        if not arch.transformer and not unet_lora:
            _refuse_adapters(method, arch)
        rank = w.lora_rank if isinstance(w, Finetune) else 16
        targets = lora_targets_of(w, arch)
        trainable = lora_params(arch, rank, targets)
        bits = w.effective_quant_bits if isinstance(w, Finetune) else None
        rest_b = 4.0 if prof.kbit_upcast else _BYTES_16
        frozen_w = (
            _quantized_bytes(arch, bits, rest_b) if bits else _weight_bytes_16(arch, w.precision)
        )
        # adapters train in fp32: weights 4 + grads 4 + optimizer states
        train_w, grads, opt = trainable * 4.0, trainable * 4.0, trainable * state
        grads_z3 = grads
        if unet_lora:
            # the note names the frozen UNet, text encoder and VAE itself
            notes.append(unet_lora_note(arch, rank, targets, trainable, optimizer, state, fp32))
        else:
            notes.append(
                f"{'QLoRA' if method == 'qlora' else 'LoRA'} adapters: rank {rank} on "
                f"{'attention' if targets == 'attention' else 'all linear'} layers = "
                f"{trainable / 1e6:.1f}M trainable parameters, kept in fp32 with their "
                f"gradients and {optimizer} states ({4 + 4 + state:g} B/param)."
            )
            notes.append(_frozen_base_note(bits, prof.kbit_upcast, fp32, weight_b))
    else:
        trainable = arch.params - arch.frozen_params
        if method == "freeze":
            layers = arch.layers or 1
            per_layer = arch.linear_params / layers
            trainable = min(per_layer * FREEZE_TRAINABLE_LAYERS, trainable)
            frozen_w = (arch.params - trainable) * weight_b
            notes.append(
                f"Freeze tuning trains the last {FREEZE_TRAINABLE_LAYERS} layers "
                f"({trainable / 1e9:.2f}B parameters; LLaMA-Factory default) and keeps the rest "
                "frozen in 16-bit."
            )
        elif arch.frozen_params:
            notes.append(
                f"{arch.frozen_params / 1e9:.3f}B parameters stay frozen (VAE and text encoder)."
            )
        train_w = trainable * weight_b
        grads = trainable * (grad_b + ds_grad_extra)
        grads_z3 = trainable * (4.0 if deepspeed and ds_grad_extra else grad_b + ds_grad_extra)
        opt = trainable * (master_b + state)
        total = weight_b + grad_b + ds_grad_extra + master_b + state
        label = "fp32" if fp32 else ("mixed precision" if w.mixed_precision else "pure 16-bit")
        # an image model trains under torchvision, Ultralytics or diffusers: the request's
        # framework (Hugging Face Trainer by default) is not the accounting it follows
        accounting = "" if arch.kind in IMAGE_KINDS else f", {prof.label} accounting"
        notes.append(
            f"Model states ({label}, {optimizer}{accounting}): weights "
            f"{weight_b:g} + gradients {grad_b + ds_grad_extra:g} + optimizer "
            f"{master_b + state:g} = {total:g} bytes per trainable parameter"
            + (" (ZeRO paper: 2 + 2 + 12)" if total == 16 and not fp32 else "")
            + (
                " (DeepSpeed estimator: fp32 gradient buffer included)"
                if ds_grad_extra and deepspeed
                else (" (fp32 main gradients)" if ds_grad_extra else "")
            )
            + "."
        )
    live_w = arch.largest_layer_params * _BYTES_16
    live_g = live_w if method in ("full", "freeze") else 0.0
    act_u, act_s = training_activations(w, arch, notes)
    lora = method in ("lora", "qlora")
    recompute = recompute_on(w, arch) and arch.transformer
    selective = selective_recompute(w) and arch.transformer
    model_fpt, hw_fpt = training_flops_per_token(
        arch, w.seq_len, lora=lora, freeze_params=trainable if method == "freeze" else None,
        recompute=recompute,
        selective=selective,
    )  # fmt: skip
    attn_model, attn_hw = attention_flops_per_token(arch, w.seq_len, recompute=recompute)
    return TrainingBudget(
        frozen_weights=frozen_w,
        train_weights=train_w,
        grads=grads,
        grads_zero3=grads_z3,
        optimizer=opt,
        trainable_params=trainable,
        live_weights=live_w,
        live_grads=live_g,
        deepspeed=deepspeed,
        act_unsharded=act_u,
        act_sharded=act_s,
        offload=w.offload,
        flops_per_token=hw_fpt,
        model_flops_per_token=model_fpt,
        attention_flops_per_token=attn_hw,
        attention_model_flops_per_token=attn_model,
        tokens_per_step=float(w.seq_len * (w.micro_batch_size or 1)),
        offload_bytes_per_step=_offload_bytes(w.offload, trainable),
        framework=w.framework,
        time_basis=time_basis_of(w),
        fp8=w.precision == "fp8",
        recompute=recompute,
        lora=lora,
        quantized=method == "qlora",
        pipeline_layers=arch.layers or 1,
        grads_replace_activations=w.gradient_accumulation_steps == 1,
        pipeline_unsharded_grads=(
            trainable * (4.0 if w.mixed_precision or fp32 else grad_b)
            if prof.pipeline_keeps_unsharded
            else 0.0
        ),
    )


def _frozen_base_note(bits: int | None, upcast: bool, fp32: bool, weight_b: float) -> str:
    """The assumption line of a transformer's frozen base under LoRA/QLoRA."""
    if not bits:
        return f"Frozen base in {'fp32' if fp32 else '16-bit'} ({weight_b:g} B/param)."
    return (
        f"Frozen base in {bits}-bit: block linears at {bits / 8:g} B/param"
        + (" + NF4 double-quantization constants (0.127 bit/param)" if bits == 4 else "")
        + (
            "; embeddings, head and norms cast to fp32 by PEFT's prepare_model_for_kbit_training."
            if upcast
            else "; embeddings, head and norms stay 16-bit."
        )
    )


def _refuse_adapters(method: str, arch: Arch) -> None:
    """A 400 for adapters where the model has no linears they can take: a CNN or
    detector (convolutions), or QLoRA on a diffusion UNet (no 4-bit UNet recipe)."""
    if arch.kind == "diffusion":
        raise InputError(
            "workload.method",
            f"{method} trains adapters on a 4-bit copy of a transformer; a diffusion model "
            "trains 'lora' (adapters on its UNet's attention, as diffusers' LoRA scripts), "
            "'full' or 'freeze'",
            ["lora", "full", "freeze"],
            zh=f"{method} 在 Transformer 的 4-bit 副本上训练适配器；扩散模型请用 'lora'（在 UNet "
            "的注意力层上加适配器，即 diffusers 的 LoRA 脚本）、'full' 或 'freeze'",
        )
    raise InputError(
        "workload.method",
        f"{method} adapts transformer linears; a convolutional {arch.kind} model trains "
        "'full' or 'freeze'",
        ["full", "freeze"],
        zh=f"{method} 作用于 Transformer 的线性层；卷积类 {arch.kind} 模型只能用 'full' 或 "
        "'freeze' 训练",
    )


def unet_lora_note(
    arch: Arch, rank: int, targets: str, trainable: float, optimizer: str, state: float,
    fp32: bool,
) -> str:  # fmt: skip
    """The assumption line of LoRA on a diffusion UNet."""
    blocks = sum(count for _, count in arch.attention_blocks)
    where = (
        "attention projections (to_q, to_k, to_v, to_out)"
        if targets == "attention"
        else "attention and feed-forward linears"
    )
    return (
        f"LoRA adapters: rank {rank} on the {where} of the UNet's {blocks} transformer "
        f"blocks = {trainable / 1e6:.1f}M trainable parameters, kept in fp32 with their "
        f"gradients and {optimizer} states ({4 + 4 + state:g} B/param); the frozen UNet, "
        f"text encoder and VAE stay in {'fp32' if fp32 else '16-bit'} "
        f"({arch.params / 1e9:.3f}B parameters: diffusers' train_text_to_image_lora.py "
        "casts them to the mixed-precision dtype and the adapters to fp32)."
    )


def _offload_bytes(offload: str, trainable: float) -> float:
    """ZeRO-Offload traffic per step over the host link: 16-bit gradients down and updated
    16-bit weights up (4 B/param, Ren et al. 2021 §4); offloading the parameters too
    fetches them again for forward and backward (+4 B/param)."""
    if offload == "none":
        return 0.0
    return trainable * (8.0 if offload == "all" else 4.0)


def training_flops_per_token(
    arch: Arch,
    seq_len: int,
    *,
    lora: bool = False,
    freeze_params: float | None = None,
    recompute: bool = False,
    selective: bool = False,
) -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) per training token.

    Forward 2·N_active per token plus attention 4·L·(a·d)·s (scores and weighted sum,
    not halved for causal masks: the Megatron/MosaicML/verl convention); backward twice
    the forward (input and weight gradients). Frozen weights get no weight gradients
    (LoRA/QLoRA, freeze tuning): their backward is one forward's worth. Recompute
    (gradient checkpointing) repeats the forward; selective recompute half the matmuls
    (attention is saved). Model FLOPs are 6·N + 12·L·a·d·s: what published MFU figures
    count.
    """
    n = arch.active_params
    attn_fwd = 0.0
    if arch.transformer and arch.layers and arch.heads and arch.kind != "vit":
        q_dim = arch.heads * (arch.head_dim or (arch.hidden or 0) // arch.heads)
        attn_fwd = 4.0 * arch.layers * q_dim * seq_len
    fwd = 2.0 * n + attn_fwd
    model = 3.0 * fwd
    if lora:
        hw = fwd + (2.0 * n + 2.0 * attn_fwd)  # input gradients only + attention backward
    elif freeze_params is not None:
        hw = fwd + 2.0 * n + 2.0 * attn_fwd + 2.0 * min(freeze_params, n)
    else:
        hw = model
    if recompute:
        hw += fwd
    elif selective:
        hw += n
    return model, hw


def attention_flops_per_token(
    arch: Arch, seq_len: int, *, recompute: bool = False
) -> tuple[float, float]:
    """(model, hardware) attention FLOPs per training token: the 4·L·(a·d)·s of the
    forward (:func:`training_flops_per_token`'s term) three times (forward, and a backward
    of twice that, which frozen weights do not change: the activation gradients still
    flow), plus the forward again under full recompute (selective recompute saves the
    attention, so it adds none). The attention kernel (FlashAttention) runs apart from the
    matmuls of the weights, at its own utilization."""
    if not (arch.transformer and arch.layers and arch.heads and arch.kind != "vit"):
        return 0.0, 0.0
    q_dim = arch.heads * (arch.head_dim or (arch.hidden or 0) // arch.heads)
    fwd = 4.0 * arch.layers * q_dim * seq_len
    return 3.0 * fwd, (4.0 if recompute else 3.0) * fwd


def image_activation_bytes(
    arch: Arch,
    preset: ModelPreset | None,
    image_size: int | None,
    checkpointed: bool,
    models: ModelRegistry,
    notes: list[str],
) -> tuple[float, int]:
    """(bytes per sample in 16-bit, image side) for an image model."""
    ref_size = (preset.image_size if preset else None) or 224
    size = image_size or ref_size
    per_mib = None
    if preset is not None:
        if checkpointed and preset.activation_mib_per_sample_checkpointed is not None:
            per_mib = preset.activation_mib_per_sample_checkpointed
        else:
            per_mib = preset.activation_mib_per_sample
    if per_mib is not None and preset is not None:
        notes.append(
            f"Activations per sample at {ref_size}px: {per_mib:.1f} MiB in 16-bit "
            f"({preset.activation_source}); scaled by image area."
        )
    else:
        diffusion = arch.kind == "diffusion"
        ref = models.resolve(DIFFUSION_DENSITY_REFERENCE if diffusion else YOLO_DENSITY_REFERENCE)
        density = 0.0
        if ref is not None and ref.activation_mib_per_sample and ref.image_size:
            ref_mib = ref.activation_mib_per_sample
            if checkpointed and ref.activation_mib_per_sample_checkpointed is not None:
                ref_mib = ref.activation_mib_per_sample_checkpointed
            density = ref_mib / ref.image_size**2
        per_mib = density * ref_size**2
        donor = "Stable Diffusion 1.5's UNet" if diffusion else "ResNet-50"
        notes.append(
            f"No public per-sample activation figure for {preset.id if preset else 'this model'}: "
            f"assumed {donor}'s activation density per pixel ({per_mib:.0f} MiB per "
            f"{ref_size}px image in 16-bit"
            + (", with gradient checkpointing" if diffusion and checkpointed else "")
            + "; low confidence)."
        )
    return per_mib * 2**20 * (size / ref_size) ** 2, size


def image_serving_activation_bytes(
    arch: Arch,
    preset: ModelPreset | None,
    image_size: int | None,
    models: ModelRegistry,
    notes: list[str],
) -> float | None:
    """Bytes per sample in 16-bit alive at the peak of a convolutional image model's
    forward without gradients, at ``image_size`` (``None``: no such figure, nor a donor's).

    A served forward keeps no layer's output for a backward pass: each is freed once the
    layers reading it ran, so the peak is a few feature maps at once (a residual block's
    input, its branches' outputs), well below the training figure, which keeps what the
    backward reads (ResNet-50: 5.3 against 41.7 MiB per 224 px image). A model without its
    own figure takes ResNet-50's per pixel, as its training figure does."""
    ref_size = (preset.image_size if preset else None) or 224
    size = image_size or ref_size
    if preset is not None and preset.serving_activation_mib_per_sample is not None:
        per_mib = preset.serving_activation_mib_per_sample
        notes.append(
            f"Activations at the peak of one image's forward (a served forward keeps none for "
            f"a backward pass) at {ref_size}px: {per_mib:.2f} MiB in 16-bit "
            f"({preset.serving_activation_source}); scaled by image area."
        )
    else:
        if arch.kind == "diffusion":
            return None
        ref = models.resolve(YOLO_DENSITY_REFERENCE)
        if ref is None or not ref.serving_activation_mib_per_sample or not ref.image_size:
            return None
        per_mib = ref.serving_activation_mib_per_sample / ref.image_size**2 * ref_size**2
        notes.append(
            f"No public figure of {preset.id if preset else 'this model'}'s forward peak: "
            f"assumed ResNet-50's per pixel ({per_mib:.1f} MiB per {ref_size}px image in "
            "16-bit, a served forward keeping no activations for a backward pass; low "
            "confidence)."
        )
    return per_mib * 2**20 * (size / ref_size) ** 2


def training_activations(
    w: Pretrain | Finetune, arch: Arch, notes: list[str]
) -> tuple[float, float]:
    """(unsharded, TP-sharded) activation bytes per device for one micro-batch."""
    b = w.micro_batch_size or 1
    B = 4.0 if w.precision == "fp32" else _BYTES_16
    if not arch.transformer:
        return 0.0, 0.0  # image models: filled by resolve_workload (needs the preset)
    assert arch.layers is not None
    assert arch.hidden is not None
    assert arch.heads is not None
    s = w.seq_len
    if arch.kind == "vit":  # its patches at the image size asked (review 8 K4: was 224's)
        s = vit_tokens(getattr(w, "image_size", None) or VIT_IMAGE_SIZE)
    u, sh = f.layer_activation_bytes(
        s=s,
        b=b,
        h=arch.hidden,
        heads=arch.heads,
        head_dim=arch.head_dim or arch.hidden // arch.heads,
        kv_heads=arch.heads if arch.mla_kv_dim else (arch.kv_heads or arch.heads),
        intermediate=arch.intermediate or 4 * arch.hidden,
        bytes_per_value=B,
        glu=arch.glu,
        dropout=arch.dropout,
        flash_attention=w.flash_attention,
        softmax_bytes=4.0 if framework_profile(w.framework).fp32_softmax else None,
    )
    L = arch.layers
    prof = framework_profile(w.framework)
    offloaded = prof.offloaded_checkpoints
    if isinstance(w, Pretrain | Finetune) and w.offload_activations is not None:
        offloaded = w.offload_activations
    if recompute_on(w, arch) and offloaded:
        unsharded, sharded = u, sh
        how = "checkpoints offloaded to host RAM: the device holds one layer's full set"
    elif recompute_on(w, arch):
        unsharded = L * s * b * arch.hidden * B + u
        sharded = sh
        how = "full recomputation: each layer keeps its input (2sbh) plus one layer's full set"
        kept = kept_4bit_inputs(w, arch, B)
        if kept:
            unsharded += kept
            how += (
                "; this bitsandbytes release keeps every 4-bit linear's input, which "
                f"non-reentrant checkpointing cannot free (+{kept / f.GIB:.2f} GiB)"
            )
    elif selective_recompute(w):
        # every other matmul output saved: half of q, k, v, o, gate, up, down per layer
        q_dim = arch.heads * (arch.head_dim or arch.hidden // arch.heads)
        kv_dim = (arch.kv_heads or arch.heads) * (arch.head_dim or arch.hidden // arch.heads)
        inter = arch.intermediate or 4 * arch.hidden
        outputs = q_dim + 2 * kv_dim + 2 * arch.hidden + (2 if arch.glu else 1) * inter
        unsharded = L * s * b * arch.hidden * B
        sharded = L * s * b * B * outputs / 2
        how = (
            "selective recomputation: each layer keeps its input and every other matmul "
            "output (torchtitan's op policy)"
        )
    else:
        unsharded, sharded = L * u, L * sh
        how = "no recomputation: every layer keeps its full set"
    logits = 0.0
    if arch.vocab and arch.kind != "vit":
        chunked = isinstance(w, Pretrain | Finetune) and w.chunked_loss
        if isinstance(w, Pretrain | Finetune) and w.chunked_loss is not None:
            prof = dataclasses.replace(
                prof,
                logit_bytes=CHUNKED_LOSS_BYTES if chunked else UPCAST_LOSS_BYTES,
                loss_note=CHUNKED_LOSS_NOTE if chunked else UPCAST_LOSS_NOTE,
            )
        if (
            isinstance(w, Pretrain | Finetune)
            and w.compiled_loss
            and prof.logit_bytes == CHUNKED_LOSS_BYTES
        ):
            # only the chunked loss: a compiled whole-vocabulary loss has no published
            # breakdown of what its fused kernels still keep in fp32
            prof = dataclasses.replace(
                prof,
                logit_bytes=COMPILED_CHUNKED_LOSS_BYTES,
                loss_note=COMPILED_CHUNKED_LOSS_NOTE,
            )
        logits = loss_bytes(prof, s, b, arch.vocab, B)
        if recompute_on(w, arch):
            # the loss peaks before the backward recomputes any layer, and its buffers are
            # freed by the time one is: the peak is the larger of the two, not their sum
            sharded = max(sharded, logits)
            how += "; the loss peak and the recomputed layer do not coincide (the larger counts)"
        else:
            sharded += logits
    if isinstance(w, Finetune) and w.bitsandbytes_version and not kept_4bit_inputs(w, arch, B):
        notes.append(
            f"bitsandbytes {w.bitsandbytes_version}: no 4-bit linear input is kept past "
            "checkpointing here (from 0.43.2 bitsandbytes keeps none; before it, only "
            "ms-swift's non-reentrant checkpointing of a 4-bit base keeps them)."
        )
    attn = "FlashAttention (no s x s scores)" if w.flash_attention else "materialized s x s scores"
    loss = (
        f"; logits {logits / f.GIB:.2f} GiB ({prof.label}: {prof.loss_note})"
        if arch.vocab and arch.kind != "vit"
        else ""  # a ViT's classifier head has no vocabulary-wide logits
    )
    notes.append(
        f"Activations (Korthikanti et al. 2022, generalized to GQA/SwiGLU): s={s}, b={b}, {attn}, "
        f"{how}{loss}."
    )
    return unsharded, sharded


BNB_INPUTS_FIXED = (0, 43, 2)
"""bitsandbytes 0.43.2 stopped keeping the 4-bit matmul's input (``ctx.tensors = (None,
B)``; CHANGELOG 0.43.2, https://github.com/TimDettmers/bitsandbytes/blob/main/CHANGELOG.md)."""


def _release(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a release string such as ``0.41.3.post2``."""
    major, minor, patch = ([int(p) for p in re.findall(r"[0-9]+", version)] + [0, 0, 0])[:3]
    return major, minor, patch


def kept_4bit_inputs(w: Pretrain | Finetune, arch: Arch, B: float) -> float:
    """Bytes of 4-bit linears' inputs that survive checkpointing, over all layers.

    bitsandbytes before 0.43.2 keeps ``A`` on ``ctx`` in ``MatMul4Bit.forward``
    (``ctx.tensors = (A, B)``, not ``save_for_backward``,
    https://github.com/TimDettmers/bitsandbytes/blob/29e3420c6de4c62086603aff47107ef378062e91/bitsandbytes/autograd/_functions.py);
    non-reentrant checkpointing (ms-swift's, see profiles) keeps every layer's graph and
    frees only hooked saved tensors, so these inputs live until that layer's backward.
    Linears that read one tensor share it (q/k/v or Qwen's c_attn read the norm output;
    gate and up the second norm's): per token the qkv input (h), the attention output
    (h), the MLP input (h; a MoE copies it for each routed expert and the shared one) and
    the MLP's inner activation (``intermediate``), in the compute dtype (ms-swift sets
    ``bnb_4bit_compute_dtype`` to the model dtype: ``select_bnb`` in
    https://github.com/modelscope/ms-swift/blob/46922151e06cdfc110882e182757674f12352f2c/swift/llm/utils/argument.py).
    That checkpointing cannot see a plain ``ctx`` attribute is what bitsandbytes issue
    #2034 describes for the weight it still keeps that way
    (https://github.com/bitsandbytes-foundation/bitsandbytes/issues/2034)."""
    if not (
        isinstance(w, Finetune)
        and w.effective_quant_bits == 4
        and w.bitsandbytes_version is not None
        and _release(w.bitsandbytes_version) < BNB_INPUTS_FIXED
        and framework_profile(w.framework).nonreentrant_checkpointing
        and arch.layers
        and arch.hidden
    ):
        return 0.0
    h = arch.hidden
    mlp_inputs = h * (arch.experts_per_token + arch.shared_experts) if arch.experts > 1 else h
    per_token = 2 * h + mlp_inputs + (arch.intermediate or 4 * h)
    return float(arch.layers) * w.seq_len * (w.micro_batch_size or 1) * per_token * B


def loss_bytes(prof: FrameworkProfile, s: int, b: int, vocab: int, B: float) -> float:
    """Bytes of the logits and the loss at its peak under ``prof`` (fp32 training doubles
    the 16-bit terms)."""
    per = prof.logit_bytes * (2.0 if B == 4.0 else 1.0)
    return float(s) * b * vocab * per


# --- inference budget ----------------------------------------------------------------

FP8_TIED_HEAD_NOTE = (
    "FP8 under plain transformers: the output head of this tied-embedding model is held as "
    "a 16-bit matrix of its own beside the embedding table (as the Qwen3 speed benchmark's "
    "FP8 rows of the tied 0.6B, 1.7B and 4B models show), one more vocabulary x hidden x 2 "
    "bytes."
)
"""Why a tied model served in FP8 by transformers carries a second 16-bit vocabulary
matrix. The Qwen3 speed benchmark (transformers 4.51.3, H20; its 'GPU Memory(MB)' is the
weights and KV cache alive after generation in MiB, https://github.com/QwenLM/Qwen2.5/blob/c7f51a1a1ce3d4bb750bc545cd2673fff4c5a8f9/docs/source/getting_started/speed_benchmark.md)
lists, at input length 1, FP8 rows above the FP8 block linears (1 B/param) + one 16-bit
embedding table + the KV cache by one more 16-bit vocabulary matrix for each of the three
tied models: Qwen3-0.6B 1217 MiB (+276 against 151,936 x 1024 x 2 B = 297 MiB), 1.7B
2726 MiB (+564 against 593), 4B 5281 MiB (+788 against 742); the untied 8B and 32B FP8
rows show no excess. Which loading step unties the head is not pinned to code here, so
the term is applied where it was measured: engine ``hf``, precision ``fp8``, tied models."""


def inference_budget(w: Inference, arch: Arch, notes: list[str]) -> InferenceBudget:
    precision = w.precision
    if arch.transformer and precision in ("int8", "int4", "fp8"):
        linear = arch.linear_params
        extra = f.GROUP128_INT4_BITS / 8 if precision == "int4" else 0.0
        weights = linear * (_WEIGHT_BYTES[precision] + extra) + (arch.params - linear) * _BYTES_16
        notes.append(
            f"Weights in {precision}: block linears at {_WEIGHT_BYTES[precision]:g} B/param"
            + (" + group-128 scales/zeros (0.156 bit/param, GPTQ/AWQ default)" if extra else "")
            + "; embeddings and head 16-bit."
        )
    else:
        weights = arch.params * _WEIGHT_BYTES[precision]
        notes.append(f"Weights in {precision}: {_WEIGHT_BYTES[precision]:g} bytes per parameter.")
    untied_head = (
        precision == "fp8"
        and w.engine == "hf"
        and arch.kind in ("decoder", "moe")
        and arch.tied
        and bool(arch.vocab and arch.hidden)
    )
    if untied_head:
        assert arch.vocab
        assert arch.hidden
        weights += arch.vocab * arch.hidden * _BYTES_16
        notes.append(FP8_TIED_HEAD_NOTE)
    kv_dtype = w.kv_cache_precision or ("fp32" if precision == "fp32" else "bf16")
    kv_b = _KV_BYTES[kv_dtype]
    kv_per_token = 0.0
    shards = 1
    act_u = act_s = 0.0
    if arch.kind == "encoder" and arch.layers and arch.hidden and arch.heads:
        act_u, act_s = _encoder_workspace(w, arch, notes)
    elif arch.transformer and arch.layers and arch.hidden and arch.heads:
        head_dim = arch.head_dim or arch.hidden // arch.heads
        kv_heads = arch.kv_heads or arch.heads
        if arch.kind in ("decoder", "moe"):
            kv_per_token = f.kv_cache_bytes_per_token(
                arch.layers, kv_heads, head_dim, kv_b, arch.mla_kv_dim
            )
            shards = 1 if arch.mla_kv_dim else kv_heads
            notes.append(
                f"KV cache in {kv_dtype}: "
                + (
                    f"MLA latent {arch.mla_kv_dim} x {arch.layers} layers"
                    if arch.mla_kv_dim
                    else f"2 x {arch.layers} layers x {kv_heads} KV heads x {head_dim}"
                )
                + f" = {kv_per_token / 1024:.0f} KiB per token, x {w.context} tokens x "
                f"{w.streams} sequences."
            )
        elif arch.kind == SEQ2SEQ and arch.decoder_layers:
            # each decoder layer caches its self-attention K/V and the cross-attention K/V
            # of the encoder output: two K/V pairs per position
            kv_per_token = 2 * f.kv_cache_bytes_per_token(
                arch.decoder_layers, kv_heads, head_dim, kv_b
            )
            shards = kv_heads
            notes.append(
                f"KV cache (encoder-decoder) in {kv_dtype}: self- and cross-attention K/V in "
                f"{arch.decoder_layers} decoder layers = {kv_per_token / 1024:.0f} KiB per token."
            )
        eng = engine_profile(w.serving_engine)
        prompt = w.prompt_len or w.context
        if eng.chunked_prefill:
            chunk = min(prompt * w.streams, eng.prefill_chunk)
            how = f"{eng.label} prefills in chunks of up to {eng.prefill_chunk} tokens"
        else:
            chunk = prompt
            how = f"{eng.label} prefills each prompt whole"
        B = 4.0 if precision == "fp32" else _BYTES_16
        q = arch.heads * head_dim
        act_u = chunk * arch.hidden * B * 4
        act_s = (
            chunk
            * B
            * (2 * q + 2 * kv_heads * head_dim + 3 * (arch.intermediate or 4 * arch.hidden))
        )
        if arch.vocab:
            act_s += w.streams * arch.vocab * 4.0
        notes.append(
            f"Inference workspace ({how}): one layer's intermediates for {chunk} tokens "
            "plus fp32 logits of the last position per sequence."
        )
        if eng.reservation:
            notes.append(eng.reservation + ".")
    expert_w = 0.0
    if arch.experts > 1 and arch.transformer:
        per_param = weights / arch.params if arch.params else _BYTES_16
        expert_w = min(arch.routed_expert_params * per_param, weights)
    return InferenceBudget(
        weights=weights,
        kv_per_token=kv_per_token,
        kv_shards_max=max(shards, 1),
        context_len=w.context,
        concurrency=w.streams,
        act_unsharded=act_u,
        act_sharded=act_s,
        engine=w.serving_engine,
        expert_weights=expert_w,
        experts=arch.experts,
        experts_per_token=arch.experts_per_token,
        precision=precision,
        prompt_len=w.prompt_len or 0,
        layer_split=not engine_profile(w.serving_engine).chunked_prefill,
        untied_head=untied_head,
    )


def _encoder_workspace(w: Inference, arch: Arch, notes: list[str]) -> tuple[float, float]:
    """An encoder's forward workspace: one layer over the whole batch (no KV cache)."""
    assert arch.hidden
    assert arch.heads
    tokens = w.context * w.streams
    act_u, act_s = encoder_workspace(
        tokens=tokens,
        hidden=arch.hidden,
        heads=arch.heads,
        head_dim=arch.head_dim or arch.hidden // arch.heads,
        intermediate=arch.intermediate or 4 * arch.hidden,
        bytes_per_value=4.0 if w.precision == "fp32" else _BYTES_16,
    )
    notes.append(
        f"Encoder-only model: each batch of {w.streams} sequences x {w.context} tokens is "
        "one forward pass that generates nothing and keeps no cache between requests; its "
        f"workspace is one layer's hidden states, Q/K/V and MLP intermediates for the "
        f"{tokens:,} tokens (fused or flash attention keeps the scores on chip)."
    )
    return act_u, act_s


ENCODER_POSITIONS = 512
"""An encoder's tokens per sequence when neither the request nor a preset says: BERT's
and RoBERTa's learned position table (``max_position_embeddings`` 512 in
google-bert/bert-base-uncased's config.json, the bert-base preset's source; RoBERTa's 514
are 512 tokens plus 2 padding offsets), which the bge/gte/e5 models built on them keep."""


def _encoder_context(w: Inference, preset: ModelPreset | None, notes: list[str]) -> Inference:
    """``w`` with an encoder's ``context_len`` when the request left it out: the model's own
    positions (review 6: the decoders' 4096 was refused for every BERT), said in the
    assumptions; ``w`` itself when it was given (a value sent is never replaced)."""
    if w.context_len is not None:
        return w
    positions = preset.max_positions if preset is not None and preset.max_positions else None
    length = positions or ENCODER_POSITIONS
    notes.append(
        f"context_len left out: {length} tokens per sequence, "
        + (
            f"the {positions} positions {preset.id} encodes at most"
            if positions is not None and preset is not None
            else "the 512 positions of BERT and RoBERTa encoders"
        )
        + " (sequences are padded or truncated to it at most; give context_len for shorter "
        "inputs, which encode faster)."
    )
    return msgspec.structs.replace(w, context_len=length)


ENCODER_ONLY_FIELDS = {
    "output_tokens": ("it generates no tokens", "它不生成 token"),
    "prompt_len": (
        "it has no prompt and output parts; give each sequence's tokens as context_len and a "
        "rate as target_tokens_per_s = sequences per second × context_len",
        "它的序列没有提示与输出之分；请用 context_len 给出每条序列的 tokens，速率用 "
        "target_tokens_per_s = 每秒序列数 × context_len 给出",
    ),
    "kv_cache_precision": ("it keeps no KV cache", "它没有 KV 缓存"),
}
"""Serving fields that describe generation, which an encoder does not do (a 400 each)."""


def _check_encoder_serving(w: Inference, preset: ModelPreset | None) -> None:
    """Refuse what an encoder cannot serve: generation fields and sequences longer than
    its learned positions (BERT's absolute position table ends at 512)."""
    for name, (en, zh) in ENCODER_ONLY_FIELDS.items():
        if getattr(w, name) is not None:
            raise InputError(
                f"workload.{name}",
                f"{name} describes generation, but an encoder-only model encodes each "
                f"sequence in one forward pass: {en}",
                zh=f"{name} 描述的是生成，而仅编码器模型一次前向即完成编码：{zh}",
            )
    if preset is not None and preset.max_positions and w.context > preset.max_positions:
        raise InputError(
            "workload.context_len",
            f"{preset.id} encodes at most {preset.max_positions} tokens per sequence; "
            f"context_len is {w.context}: give context_len {preset.max_positions} or less",
            zh=f"{preset.id} 每条序列最多编码 {preset.max_positions} 个 token；context_len 为 "
            f"{w.context}：请给出不超过 {preset.max_positions} 的 context_len",
        )


# --- entry point ----------------------------------------------------------------------


def positions_note(
    workload: Workload, arch: Arch, preset: ModelPreset | None, notes: list[str]
) -> tuple[int, int] | None:
    """A decoder's sequences longer than its trained positions (``max_position_embeddings``
    of its config.json): not refused, since RoPE models are stretched past them (YaRN,
    dynamic NTK) and memory and time are still sized for the length asked, but said —
    quality past the trained context is not the model's. Encoders refuse it (learned
    absolute positions end there)."""
    if preset is None or not preset.max_positions or arch.kind not in ("decoder", "moe"):
        return None
    if isinstance(workload, Inference):
        length = workload.context
    elif isinstance(workload, Pretrain | Finetune):
        length = workload.seq_len
    else:
        return None
    if length <= preset.max_positions:
        return None
    notes.append(
        f"{preset.id} was trained to {preset.max_positions} positions; {length} tokens per "
        "sequence go beyond them (sized as asked; needs RoPE scaling such as YaRN)."
    )
    return length, preset.max_positions


def checkpoint_view(workload: Workload, models: ModelRegistry) -> Workload:
    """``workload`` served in the weight format its quantized checkpoint's name implies
    (review 3 R17: ``Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4`` is int4), when ``precision``
    was left at its default; the workload itself otherwise (an explicit other precision
    is refused by :func:`resolve_workload`). The planner and the estimate size the view."""
    if not isinstance(workload, Inference) or not isinstance(workload.model, str):
        return workload
    checkpoint = models.checkpoint(workload.model)
    if checkpoint is None or workload.precision != DEFAULT_SERVING_PRECISION:
        return workload
    return msgspec.structs.replace(workload, precision=checkpoint.precision)


DEFAULT_SERVING_PRECISION = "bf16"
"""``Inference.precision``'s default: a checkpoint's own format replaces it."""


def _check_checkpoint(workload: Workload, models: ModelRegistry) -> tuple[str, str] | None:
    """(name, scheme) of a quantized checkpoint named by ``model``; a 400 when the
    request contradicts its weight format or trains it with a method that cannot."""
    model = getattr(workload, "model", None)
    checkpoint = models.checkpoint(model) if isinstance(model, str) else None
    if checkpoint is None or model is None:
        return None
    base = checkpoint.preset.id
    if isinstance(workload, Inference):
        if workload.precision != checkpoint.precision:
            raise InputError(
                "workload.precision",
                f"{model} stores {checkpoint.scheme} weights, so precision "
                f"{workload.precision} contradicts it: leave precision out (or set it to "
                f"{checkpoint.precision}), or give model {base} to serve it in "
                f"{workload.precision}",
                [checkpoint.precision, base],
                zh=f"{model} 的权重是 {checkpoint.scheme}，precision {workload.precision} "
                f"与之矛盾：请不填 precision（或写 {checkpoint.precision}），或把 model 写成 {base}"
                f" 以 {workload.precision} 部署",
            )
    elif not (isinstance(workload, Finetune) and workload.method == "qlora"):
        raise InputError(
            "workload.model",
            f"{model} is a quantized checkpoint ({checkpoint.scheme}) for serving; to train, "
            f"give model {base} (method qlora trains LoRA adapters on a 4-bit copy of it)",
            [base],
            zh=f"{model} 是用于推理部署的 {checkpoint.scheme} 量化权重；训练请把 model 写成 {base}"
            "（method 为 qlora 时在其 4-bit 副本上训练 LoRA 适配器）",
        )
    return model, checkpoint.scheme


def resolve_workload(workload: Workload, models: ModelRegistry) -> ResolvedWorkload:
    """Validate and resolve ``workload`` once: model, architecture and byte budgets.

    Raises :class:`InputError` naming the field for an unknown preset (with the closest
    names) or an inconsistent architecture.
    """
    workload = checkpoint_view(workload, models)
    validate_workload(workload)
    checkpoint = _check_checkpoint(workload, models)
    if checkpoint is not None:
        return dataclasses.replace(_resolve_workload(workload, models), checkpoint=checkpoint)
    return _resolve_workload(workload, models)


def _image_engine_error(model_id: str, engine: str, kind: str) -> InputError:
    """An engine sent for an image model, which none of them serves: the service plans
    the model's own PyTorch pipeline (diffusers, torchvision/timm), so the field would
    otherwise be ignored. ``vllm`` sent is refused too: the field has no default, so a
    request that names vLLM for a diffusion model is told apart from one that names no
    engine (which is planned as the pipeline)."""
    names = {"vllm": "vLLM", "sglang": "SGLang", "lmdeploy": "LMDeploy",
             "tensorrt-llm": "TensorRT-LLM", "mindie": "MindIE",
             "hf": "Hugging Face transformers"}  # fmt: skip
    name = names.get(engine, engine)
    if kind == "diffusion":
        why = "text engines do not serve diffusion pipelines; it runs as its own diffusers pipeline"
        why_zh = "文本推理引擎不运行扩散模型流水线，它由自身的 diffusers 流水线运行"
    else:
        why = "text engines do not serve image models; it runs as its own PyTorch program "
        why += "(torchvision or timm)"
        why_zh = "文本推理引擎不运行图像模型，它由自身的 PyTorch 程序（torchvision 或 timm）运行"
    return InputError(
        "workload.engine",
        f"{name} serves language models, not {model_id}: {why}, which the plan sizes; leave "
        "the engine out",
        zh=f"{name} 服务的是语言模型，不能服务 {model_id}：{why_zh}，方案即按此估算；"
        "请不要指定推理引擎",
    )


def _resolve_workload(workload: Workload, models: ModelRegistry) -> ResolvedWorkload:
    notes: list[str] = []
    if isinstance(workload, Preprocess):
        return ResolvedWorkload(
            workload=workload,
            kind="preprocess",
            model_id=None,
            arch=None,
            training=None,
            inference=None,
            tokens=None,
            assumptions=(),
            data_gb=workload.data_gb,
            target_hours=workload.target_hours,
        )
    if isinstance(workload, Rlhf):
        return resolve_rlhf(workload, models)
    model_id, arch, preset = resolve_model(workload.model, models, notes)
    image_model = arch.kind in IMAGE_KINDS
    if not isinstance(workload, Inference) and workload.micro_batch_size is None:
        batch = RECIPE_BATCH.get(arch.kind, (1, ""))
        workload = msgspec.structs.replace(workload, micro_batch_size=batch[0])
        if batch[1]:
            notes.append(
                f"No micro_batch_size given: {batch[0]} images per device per step, {batch[1]}; "
                "memory and time are both at this batch."
            )
    image_size = workload.image_size
    if image_size is not None and not image_model:
        raise image_size_error(model_id, arch, models)
    sample_flops = _sample_flops(preset, image_size)
    if isinstance(workload, Inference) and arch.kind == "encoder":
        workload = _encoder_context(workload, preset, notes)
    beyond = positions_note(workload, arch, preset, notes)
    if isinstance(workload, Inference):
        if arch.kind == "encoder":
            _check_encoder_serving(workload, preset)
        if image_model and workload.engine is not None:
            raise _image_engine_error(model_id or "this model", workload.engine, arch.kind)
        if image_model and arch.kind != "diffusion":
            workload = _image_target_batch(workload, notes)
        said = len(notes)
        inf = inference_budget(workload, arch, notes)
        if image_model:
            # a text engine's prefill workspace and KV-cache pool are not an image model's
            # (no prompt, no cache): keep only the weights' note of the LLM budget
            notes[said:] = [n for n in notes[said:] if n.startswith("Weights")]
            inf = _image_inference(workload, arch, preset, models, inf, notes)
        return ResolvedWorkload(
            workload=workload,
            kind="inference",
            model_id=model_id,
            arch=arch,
            training=None,
            inference=inf,
            tokens=workload.output_tokens,
            assumptions=tuple(notes),
            image_model=image_model,
            sample_flops=sample_flops,
            beyond_positions=beyond,
            no_bf16=_fp16_serving(workload, preset, models),
            decode_peak=image_model and _decode_peaks(workload, arch, preset),
            diffusion=_diffusion_work(workload, arch, preset),
            reranker=preset is not None and preset.scores_pairs,
        )
    if arch.kind == "vit":
        workload = _vit_training_view(workload, preset, notes)
    if (
        preset is not None
        and arch.kind == "encoder"
        and preset.max_positions
        and workload.seq_len > preset.max_positions
    ):
        raise InputError(
            "workload.seq_len",
            f"{preset.id} has {preset.max_positions} positions; seq_len {workload.seq_len} "
            "exceeds it",
            zh=f"{preset.id} 最多支持 {preset.max_positions} 个位置，"
            f"seq_len {workload.seq_len} 超出了上限",
        )
    budget = training_budget(workload, arch, notes)
    frozen_flops = 0.0
    if preset is not None and preset.unet is not None:
        size = image_size or preset.image_size or 512
        sample_flops = unet_forward_flops(preset.unet, size)
        frozen_flops = frozen_forward_flops(preset.unet, size)
        notes.append(
            f"Work per image at {size}px, counted from the UNet's config (convolutions, "
            f"attention and feed-forward of every block): UNet forward "
            f"{sample_flops / 1e12:.2f} TFLOPs; VAE encoder and text encoder forward "
            f"{frozen_flops / 1e12:.2f} TFLOPs without gradients (diffusers' training "
            "scripts encode each batch; caching the latents saves it)."
        )
    if not arch.transformer:
        per_sample, _ = image_activation_bytes(
            arch, preset, image_size, image_checkpointing(workload), models, notes
        )
        scale = _fp32_scale(workload.precision)
        budget = _replace_acts(budget, per_sample * scale * (workload.micro_batch_size or 1), 0.0)
    passes = IMAGE_TRAINING_PASSES
    if image_model:
        passes = image_training_passes(budget.lora, image_checkpointing(workload), notes)
    if image_model:
        notes.append("Vision models: `tokens` counts training samples (images).")
    return ResolvedWorkload(
        workload=workload,
        kind=workload.kind,
        model_id=model_id,
        arch=arch,
        training=budget,
        inference=None,
        tokens=workload.tokens,
        assumptions=tuple(notes),
        image_model=image_model,
        beyond_positions=beyond,
        sample_flops=sample_flops,
        frozen_sample_flops=frozen_flops,
        image_passes=passes,
    )


RECIPE_BATCH: dict[str, tuple[int, str]] = {
    "cnn": (
        32,
        "torchvision's classification recipe (references/classification/train.py "
        "--batch-size default 32, images per GPU)",
    ),
    "detector": (
        16,
        "Ultralytics' training default (batch=16, ultralytics/cfg/default.yaml)",
    ),
    "vit": (
        32,
        "torchvision's classification recipe, which trains vit_b_16 too "
        "(references/classification/train.py --batch-size default 32, images per GPU; "
        "its README trained the published vit_b_16 weights at 64 per GPU)",
    ),
}
"""Images per device per step when a training request gives no ``micro_batch_size``: the
reference recipe's own default for the model's kind (review 5 G8: sizing memory at one
image while timing a full batch's rate made ResNet-50 train at 25k images/s on 8 NPUs).
A ViT is trained by the same torchvision script (review 8 K4: at one image a step it was
timed launch-bound, 1M images at 384 px in 10.9 h on a T4); diffusion (diffusers' scripts
run at batch 1) and text models take 1."""


def image_training_passes(lora: bool, checkpointed: bool, notes: list[str]) -> float:
    """Forward passes' worth of FLOPs per training image: forward + backward with weight
    gradients (3), or, with LoRA, input gradients only through the frozen weights (one
    forward's worth, as the LLM LoRA path counts it: 2); plus the forward gradient
    checkpointing recomputes. Said in the assumptions when it is not the plain 3."""
    passes = (2.0 if lora else IMAGE_TRAINING_PASSES) + (1.0 if checkpointed else 0.0)
    if lora or checkpointed:
        notes.append(
            f"Work per training image: {passes:g} forward passes ("
            + (
                "forward and input gradients, no weight gradients for the frozen weights"
                if lora
                else "forward and a backward with weight gradients"
            )
            + (", plus the forward gradient checkpointing recomputes" if checkpointed else "")
            + ")."
        )
    return passes


def image_size_error(model_id: str | None, arch: Arch, models: ModelRegistry) -> InputError:
    """The 400 for ``image_size`` on a model that is not an image model: a text preset,
    or a model given by its size (the API sizes those as transformers over tokens and has
    no field for an image architecture), with the image presets closest in size."""
    near = sorted(
        (p for p in models.all() if p.kind in IMAGE_KINDS),
        key=lambda p: abs(math.log(p.params_b * 1e9 / max(arch.params, 1.0))),
    )
    ids = [p.id for p in near[:3]]
    listed = ", ".join(ids)
    if model_id is None:
        en = (
            "image_size applies to image models, and a model given by its size is sized as "
            "a text transformer over tokens (there is no field for an image architecture): "
            f"name an image-model preset instead (closest in size: {listed}) or leave "
            "image_size out"
        )
        zh = (
            "image_size 只适用于图像模型；只给出参数量的模型按文本 Transformer（按 token）估算，"
            "无法表示图像模型结构：请改用图像模型预设"
            f"（规模最接近的有 {listed}），或去掉 image_size"
        )
    else:
        en = (
            f"{model_id} is a text model, so image_size does not apply: leave it out, or "
            f"name an image-model preset (closest in size: {listed})"
        )
        zh = (
            f"{model_id} 是文本模型，image_size 不适用：请去掉它，或改用图像模型预设"
            f"（规模最接近的有 {listed}）"
        )
    return InputError("workload.image_size", en, ids, zh=zh)


def _sample_flops(preset: ModelPreset | None, image_size: int | None) -> float | None:
    """Forward FLOPs per sample, scaled by image area from the preset's reference size."""
    if preset is None or preset.forward_gflops is None or preset.image_size is None:
        return None
    size = image_size or preset.image_size
    return preset.forward_gflops * 1e9 * (size / preset.image_size) ** 2


def _fp32_scale(precision: str) -> float:
    """An image model's activations at ``precision`` over its 16-bit figure."""
    return 2.0 if precision == "fp32" else 1.0


def _replace_acts(b: TrainingBudget, unsharded: float, sharded: float) -> TrainingBudget:
    return dataclasses.replace(b, act_unsharded=unsharded, act_sharded=sharded)


VIT_IMAGE_SIZE = 224
"""ViT-B/16's training resolution (torchvision ``ViT_B_16_Weights.IMAGENET1K_V1``)."""


def vit_tokens(image_size: int) -> int:
    """Tokens a ViT with 16 px patches sees per image: the patches plus [CLS]
    (Dosovitskiy et al. 2020; 197 at 224 px, 577 at 384 px)."""
    return (image_size // 16) ** 2 + 1


def _vit_training_view(
    w: Pretrain | Finetune, preset: ModelPreset | None, notes: list[str]
) -> Pretrain | Finetune:
    """ViT trains on patch tokens: seq_len = (image/16)^2 + 1 class token."""
    import msgspec

    size = w.image_size or (preset.image_size if preset else None) or VIT_IMAGE_SIZE
    tokens = vit_tokens(size)
    notes.append(f"ViT-B/16 at {size}px sees {tokens} tokens per image (16px patches + [CLS]).")
    return msgspec.structs.replace(w, seq_len=tokens)


def _image_inference(
    w: Inference,
    arch: Arch,
    preset: ModelPreset | None,
    models: ModelRegistry,
    inf: InferenceBudget,
    notes: list[str],
) -> InferenceBudget:
    """Image-model serving: weights + the working set of ``concurrency`` samples per
    forward (a diffusion pipeline: :func:`_diffusion_serving_bytes`)."""
    if arch.kind == "vit" and arch.hidden and arch.heads and arch.layers:
        size = w.image_size or (preset.image_size if preset else None) or 224
        s = (size // 16) ** 2 + 1
        mlp = arch.intermediate or 4 * arch.hidden
        values = vit.forward_peak(s, arch.hidden, mlp, size)
        act = values * _BYTES_16 * _fp32_scale(w.precision) * w.streams
        notes.append(
            f"Activations at the peak of one image's forward ({s} tokens at {size}px): inside "
            f"an encoder block's MLP, its two {mlp}-wide outputs and five {arch.hidden}-wide "
            f"sequences, {values * _BYTES_16 / 2**20:.2f} MiB per image in 16-bit (torchvision's "
            "VisionTransformer forward; a served forward keeps none for a backward pass)."
        )
    elif arch.kind == "diffusion" and preset is not None and preset.unet is not None:
        act = _diffusion_serving_bytes(w, preset, preset.unet, notes)
    else:
        served = image_serving_activation_bytes(arch, preset, w.image_size, models, notes)
        if served is None:
            served, _ = image_activation_bytes(arch, preset, w.image_size, False, models, notes)
            notes.append(
                "Image-model serving: the training activation figure is used as an upper bound."
            )
        act = served * w.streams * _fp32_scale(w.precision)
    return InferenceBudget(
        weights=inf.weights,
        kv_per_token=0.0,
        kv_shards_max=1,
        context_len=w.context,
        concurrency=w.streams,
        act_unsharded=act,
        act_sharded=0.0,
        precision=inf.precision,
    )


def _decode_peaks(w: Inference, arch: Arch, preset: ModelPreset | None) -> bool:
    """The served diffusion pipeline peaks in its VAE decode (:attr:`ResolvedWorkload.
    decode_peak`), as :func:`_diffusion_serving_bytes` sizes it."""
    if arch.kind != "diffusion" or preset is None or preset.unet is None:
        return False
    size = w.image_size or preset.image_size or 512
    ws = serving_working_set(preset.unet, size, w.streams, w.precision)
    return ws.vae >= ws.unet


IMAGE_TARGET_BATCH = 32
"""Images per call an image server (CNN, ViT, detector) is sized and timed at when the
request gives a throughput target and no concurrency: a server batches requests (Triton's
dynamic batcher, TorchServe's ``batch_size``). 32 is where NVIDIA's ResNet-50 v1.5
mixed-precision latency leaves its launch floor (V100: 15.8 ms at 32 against 12.8 at 1,
2,146 images/s, 63 % of a 256 batch's 3,382; T4: 1,128, 94 % of 1,198: NVIDIA
DeepLearningExamples ``PyTorch/Classification/ConvNets/resnet50v1.5/README.md``
@291f0d02, "Inference performance results"): most of the throughput, at a batch whose
memory (sized from the training activations, an upper bound for serving) a 640 px
detector still holds on a 24 GB card. A diffusion pipeline is not batched so: one image
already fills the device (:mod:`service.sizing.diffusion`)."""


def _image_target_batch(w: Inference, notes: list[str]) -> Inference:
    """``w`` at :data:`IMAGE_TARGET_BATCH` images per call when it has a throughput target
    and no concurrency (one image per call would meet a target with dozens of servers
    each launch-bound at about 77 images/s), with the note that says so."""
    if w.concurrency is not None or w.target_tokens_per_s is None:
        return w
    notes.append(
        f"No concurrency was given with a throughput target: assumed {IMAGE_TARGET_BATCH} "
        "images per call on each server, batched by the server (Triton's dynamic batcher, "
        "TorchServe's batch_size), where ResNet-50's measured latency leaves its launch floor; "
        "memory and rate are at this batch."
    )
    return msgspec.structs.replace(w, concurrency=IMAGE_TARGET_BATCH)


def _diffusion_work(w: Inference, arch: Arch, preset: ModelPreset | None) -> DiffusionWork | None:
    """What one image of a served diffusion pipeline's call computes, at the request's
    image size (the preset's default) and diffusers' default 50 steps with guidance."""
    if arch.kind != "diffusion" or preset is None or preset.unet is None:
        return None
    size = w.image_size or preset.image_size or 512
    return pipeline_work(preset.unet, size, w.precision)


def _fp16_serving(
    w: Inference, preset: ModelPreset | None, models: ModelRegistry
) -> ResolvedWorkload | None:
    """:attr:`ResolvedWorkload.no_bf16`: ``w`` resolved in fp16 when it is a bf16 request
    of a diffusion pipeline whose VAE diffusers upcasts in fp16."""
    upcast = preset is not None and preset.unet is not None and preset.unet.vae_force_upcast
    if not upcast or w.precision != "bf16":
        return None
    return resolve_workload(msgspec.structs.replace(w, precision="fp16"), models)


def _diffusion_serving_bytes(
    w: Inference, preset: ModelPreset, u: UNetConfig, notes: list[str]
) -> float:
    """A text-to-image server's working set over the weights for ``concurrency`` images
    per call (:func:`service.sizing.unet.serving_working_set`): serving keeps nothing for
    a backward pass, so the peak is the larger of the UNet's forward and the VAE decode.
    PyTorch >= 2.0 with diffusers' default ``AttnProcessor2_0`` (SDPA) is assumed.

    Checked against Hugging Face's SDXL measurement (tests/test_review10_sdxl.py):
    fp16 + SDPA, 4 images per call at 1024 px on an A100, 21.72 GiB
    ``torch.cuda.max_memory_allocated`` (and 21.72 GiB without SDPA, 28.09 GiB in fp32;
    https://huggingface.co/blog/simple_sdxl_optimizations, notebook
    huggingface/notebooks diffusers/exploring_simple optimizations_for_sdxl.ipynb
    @77458f17); this model gives 18.6 and 24.9 GiB."""
    size = w.image_size or preset.image_size or 512
    images = w.streams
    ws = serving_working_set(u, size, images, w.precision)
    gib = 2**30
    decode = "fp32" if ws.decode_bytes == 4 else "16-bit"
    upcast = (
        f" (diffusers upcasts {preset.display_name}'s VAE to fp32 before decoding, as it "
        "overflows in fp16, and holds its weights in fp32 meanwhile)"
        if u.vae_force_upcast and w.precision not in ("bf16", "fp32")
        else ""
    )
    last = u.vae_block_out_channels[0]
    notes.append(
        f"Serving memory of {images} image{'s' if images > 1 else ''} per call at {size} px: "
        "nothing is kept for a backward pass, so the peak is the weights plus the larger "
        f"of the UNet's forward over {2 * images} latents (each image twice, for "
        f"classifier-free guidance: {ws.unet / gib:.1f} GiB with PyTorch's fused attention) "
        f"and the VAE decoding all {images} at once ({ws.vae / gib:.1f} GiB: its last "
        f"up-block holds up to 768 channel planes of {size}×{size} in {decode}, three "
        f"times its {last * 2} input channels{upcast}). Decoding one image at a time "
        "(diffusers' enable_vae_slicing) divides the decode by the images per call."
    )
    return ws.peak


# --- RLHF: several models on the same devices -------------------------------------------


ROLLOUT_BATCH = 16
"""Sequences per device per rollout batch by default: DeepSpeed-Chat step 3's
``--per_device_generation_batch_size`` default (training/step3_rlhf_finetuning/main.py)."""


ROLLOUT_TP: dict[str, int] = {"deepspeed": 1, "hf": 1, "llama-factory": 1}
"""Tensor-parallel degree the rollout engine shards the generating copy of the actor by.
vLLM/SGLang rollouts (verl, OpenRLHF, the Megatron/MindSpeed stacks): verl's default
``actor_rollout_ref.rollout.tensor_model_parallel_size: 2`` (verl
verl/trainer/config/rollout/rollout.yaml @b10cabe4, also in its Qwen2-7B GRPO example
examples/grpo_trainer/run_qwen2-7b.sh @3f388066, https://github.com/volcengine/verl).
DeepSpeed-Chat's hybrid engine generates with ``--inference_tp_size`` 1 by default
(applications/DeepSpeed-Chat/training/step3_rlhf_finetuning/main.py,
microsoft/DeepSpeedExamples: "Tensor-parallelism degree used for the
inference-optimization", ``default=1``), and TRL's
and LLaMA-Factory's ``generate()`` run on the unwrapped training model: one whole copy."""
ROLLOUT_TP_DEFAULT = 2


ROLLOUT_BYTES_PER_RANK = 16e9
"""16-bit actor weights one rollout-engine rank holds at most: verl's recipes raise the
generation TP with the model, 2 for Qwen2.5-7B (15 GB: examples/grpo_trainer) and 4 for
Qwen2.5-32B (64 GB: recipe/dapo run_dapo_qwen2.5_32b.sh, ``gen_tp=4``,
https://github.com/volcengine/verl) — about 16 GB per rank either way — so the engine
leaves the device's memory to the KV cache and the training states (review 6 H2)."""
ROLLOUT_TP_MAX = 8
"""A generation engine's tensor degree stays within one server's NVLink domain."""


def rollout_tensor_parallel(b: TrainingBudget, devices: int, tensor_parallel: int = 1) -> int:
    """The rollout engine's tensor-parallel degree on ``devices``: the framework's default
    (:data:`ROLLOUT_TP`), for a vLLM/SGLang rollout raised with the model to
    :data:`ROLLOUT_BYTES_PER_RANK` of weights per rank (at most :data:`ROLLOUT_TP_MAX`; a
    generate() loop or DeepSpeed's hybrid engine keeps its own flag), at least the
    training's own tensor degree (verl's Megatron backend reshards to it, never below), at
    most the devices, halved until it divides the attention heads (vLLM's requirement)."""
    by_size = 1  # vLLM/SGLang rollouts only: the recipes above; the others keep their flag
    while (
        b.rollout_tp >= ROLLOUT_TP_DEFAULT
        and by_size < ROLLOUT_TP_MAX
        and b.rollout_weight_bytes > ROLLOUT_BYTES_PER_RANK * by_size
    ):
        by_size *= 2
    r = max(min(max(b.rollout_tp, tensor_parallel, by_size), devices), 1)
    while r > 1 and b.rollout_heads % r:
        r //= 2
    return r


def rollout_phase_bytes(
    b: TrainingBudget, devices: int, tensor_parallel: int = 1
) -> tuple[float, float]:
    """(generating weights, KV cache) bytes per device in the rollout: the engine's 16-bit
    copy of the actor over its tensor degree r, and the KV of the sequences it generates at
    once at full length (prompt + response): ``rollout_batch`` per device, so r x that per
    engine, split r ways up to the KV heads (:func:`rollout_tensor_parallel`). (0, 0)
    without a rollout."""
    if not b.rollout_weight_bytes:
        return 0.0, 0.0
    r = rollout_tensor_parallel(b, devices, tensor_parallel)
    kv = b.rollout_kv_per_token * b.seq_len * b.rollout_batch * r / min(r, b.rollout_kv_heads)
    return b.rollout_weight_bytes / r, kv


def _trained_view(w: Rlhf, model: str | ModelSpec, micro_batch: int) -> Finetune:
    return Finetune(
        model=model,
        seq_len=w.seq_len,
        micro_batch_size=micro_batch,
        precision=w.precision,
        mixed_precision=w.mixed_precision,
        optimizer=w.optimizer,
        gradient_checkpointing=w.gradient_checkpointing,
        flash_attention=w.flash_attention,
        framework=w.framework,
        time_basis=w.time_basis or "steady",
        tokens=w.tokens,
        method=w.method,
        lora_rank=w.lora_rank,
    )


def _forward_flops(arch: Arch, seq_len: int) -> float:
    """Forward FLOPs per token of a frozen model (reference, reward): 2·N + attention."""
    model, _ = training_flops_per_token(arch, seq_len)
    return model / 3.0


def _once(said: list[str], more: list[str]) -> list[str]:
    """``more`` without the lines already in ``said`` or repeated in it (the critic and
    reward model of the actor's shape would say the actor's lines again: review 4 F16)."""
    seen = set(said)
    kept = []
    for note in more:
        if note not in seen:
            seen.add(note)
            kept.append(note)
    return kept


def resolve_rlhf(w: Rlhf, models: ModelRegistry) -> ResolvedWorkload:
    """PPO / GRPO / DPO as one training budget on shared devices (colocated, as verl,
    OpenRLHF and TRL run them): the trained models' states add up, the frozen reference
    and reward models add 16-bit weights (LoRA: the reference is the frozen base itself),
    activations are those of the larger trained model (they train one after the other),
    and the FLOPs per token add every model's forward/backward plus the rollout's
    forward over the response."""
    notes: list[str] = []
    actor_id, actor, _ = resolve_model(w.model, models, notes)
    micro = w.micro_batch_size * (2 if w.algorithm == "dpo" else 1)
    budget = training_budget(_trained_view(w, w.model, micro), actor, notes)
    parts = [f"actor {actor.params / 1e9:.1f}B (trained, {w.method})"]
    frozen = budget.frozen_weights
    flops = budget.flops_per_token
    model_flops = budget.model_flops_per_token
    acts_u, acts_s = budget.act_unsharded, budget.act_sharded
    train_w, grads, grads_z3, opt = (
        budget.train_weights, budget.grads, budget.grads_zero3, budget.optimizer
    )  # fmt: skip
    trainable = budget.trainable_params
    ref_fwd = _forward_flops(actor, w.seq_len)
    if w.method != "lora":
        frozen += actor.params * _BYTES_16
        parts.append("reference (frozen copy of the actor, 16-bit)")
    else:
        parts.append("reference = the frozen base under the adapters (no second copy)")
    flops += ref_fwd
    model_flops += ref_fwd
    if w.algorithm in ("ppo", "grpo"):
        # the experience pass re-runs the actor over prompt + response for the old
        # log-probabilities the clipped objective divides by (DeepSpeed-Chat
        # ``generate_experience``: ``self.actor_model(seq, ...)``; verl ``compute_log_prob``;
        # OpenRLHF ``make_experience``): one more forward than the training step's own
        flops += ref_fwd
        model_flops += ref_fwd
        parts.append("actor forward for the old log-probabilities")
    role_notes: list[str] = []  # the critic's and reward model's: each fact said once
    same_shape: list[str] = []
    if w.algorithm == "ppo":
        critic_model = w.critic_model or w.model
        critic_id, critic, _ = resolve_model(critic_model, models, role_notes)
        cb = training_budget(_trained_view(w, critic_model, micro), critic, role_notes)
        if critic_id == actor_id:
            same_shape.append("critic")
        frozen += cb.frozen_weights
        train_w += cb.train_weights
        grads += cb.grads
        grads_z3 += cb.grads_zero3
        opt += cb.optimizer
        trainable += cb.trainable_params
        acts_u, acts_s = max(acts_u, cb.act_unsharded), max(acts_s, cb.act_sharded)
        critic_fwd = _forward_flops(critic, w.seq_len)  # the values of the experience pass
        flops += cb.flops_per_token + critic_fwd
        model_flops += cb.model_flops_per_token + critic_fwd
        parts.append(f"critic {critic.params / 1e9:.1f}B (trained, plus a forward for the values)")
    reward_model = w.reward_model if w.reward_model is not None else (
        w.model if w.algorithm == "ppo" else None
    )  # fmt: skip
    if reward_model is not None:
        reward_id, reward, _ = resolve_model(reward_model, models, role_notes)
        if reward_id == actor_id:
            same_shape.append("reward model")
        frozen += reward.params * _BYTES_16
        flops += _forward_flops(reward, w.seq_len)
        model_flops += _forward_flops(reward, w.seq_len)
        parts.append(f"reward model {reward.params / 1e9:.1f}B (frozen, 16-bit)")
    elif w.algorithm == "grpo":
        parts.append("rule-based reward (no reward model)")
    notes.extend(_once(notes, role_notes))
    if same_shape:
        roles = " and ".join(same_shape)
        notes.append(f"{roles[0].upper()}{roles[1:]}: same shape as the actor ({actor_id}).")
    rollout_bytes = 0.0
    kv_per_token = 0.0
    if w.algorithm in ("ppo", "grpo"):
        rollout_bytes = actor.params * _BYTES_16
        if actor.layers and actor.heads:
            head_dim = actor.head_dim or (actor.hidden or 0) // actor.heads
            kv_heads = actor.kv_heads or actor.heads
            kv_per_token = 2.0 * actor.layers * kv_heads * head_dim * _BYTES_16
        notes.append(
            f"Rollout: the actor generates {w.response_len} tokens per sequence, "
            f"{w.rollout_batch_size or ROLLOUT_BATCH} sequences per device at a time; each "
            "decode step reads the actor's 16-bit weights (memory-bandwidth bound, as in the "
            "serving estimate), so larger rollout batches shorten it almost proportionally."
        )
        tp = ROLLOUT_TP.get(w.framework, ROLLOUT_TP_DEFAULT)
        notes.append(
            "Rollout memory: the generation engine holds its own 16-bit copy of the actor"
            + (
                f" (tensor parallel {tp} on {tp} or more devices, verl's default, or the "
                "training's own tensor degree when larger)"
                if tp > 1
                else " (whole on each device, as DeepSpeed-Chat's hybrid engine and "
                "generate() on the training model hold it, unless the training itself runs "
                "tensor parallel)"
            )
            + f" plus the KV cache of its sequences at full length ({w.seq_len} tokens), "
            "next to the training states, which stay on the device. The estimate assumes "
            "the engine frees that memory while the models train (verl's default "
            "free_cache_engine, vLLM sleep mode in verl and OpenRLHF), so the peak is the "
            "larger of the training and the generation phase, not their sum."
        )
    if w.algorithm == "dpo":
        notes.append("DPO: each pair trains on a chosen and a rejected sequence (micro-batch x 2).")
    notes.append(f"RLHF ({w.algorithm.upper()}) on shared devices: " + "; ".join(parts) + ".")
    combined = dataclasses.replace(
        budget,
        frozen_weights=frozen,
        train_weights=train_w,
        grads=grads,
        grads_zero3=grads_z3,
        optimizer=opt,
        trainable_params=trainable,
        act_unsharded=acts_u,
        act_sharded=acts_s,
        flops_per_token=flops * (2 if w.algorithm == "dpo" else 1),
        model_flops_per_token=model_flops * (2 if w.algorithm == "dpo" else 1),
        # the actor's own attention (the other models' is left in the matmul share)
        attention_flops_per_token=budget.attention_flops_per_token
        * (2 if w.algorithm == "dpo" else 1),
        attention_model_flops_per_token=budget.attention_model_flops_per_token
        * (2 if w.algorithm == "dpo" else 1),
        time_basis=w.time_basis or "steady",
        rollout_weight_bytes=rollout_bytes,
        rollout_response_len=min(w.response_len, w.seq_len),
        rollout_layers=actor.layers or 0,
        rollout_batch=w.rollout_batch_size or ROLLOUT_BATCH,
        rollout_kv_per_token=kv_per_token,
        rollout_kv_heads=actor.kv_heads or actor.heads or 1,
        rollout_heads=actor.heads or 1,
        rollout_tp=ROLLOUT_TP.get(w.framework, ROLLOUT_TP_DEFAULT),
        seq_len=w.seq_len,
    )
    return ResolvedWorkload(
        workload=w,
        kind="rlhf",
        model_id=actor_id,
        arch=actor,
        training=combined,
        inference=None,
        tokens=w.tokens,
        assumptions=tuple(notes),
    )
