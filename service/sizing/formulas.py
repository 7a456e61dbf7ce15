"""The published formulas, as plain functions of numbers (no structs, no registry).

Each function names its source. They are the "exact formula" layer the reference cases
test to the byte; :mod:`service.sizing.resolve` and :mod:`service.sizing.memory` combine
them into a per-device breakdown.
"""

from __future__ import annotations

from typing import Literal

GIB = float(2**30)
"""Bytes in a GiB. Every ``_gib`` field divides by this."""

Recompute = Literal["none", "selective", "full"]

# --- quantization constants (QLoRA paper, Dettmers et al. 2023, §3) -------------------

NF4_ABSMAX_BITS = 32 / 64
"""One fp32 absmax per block of 64 weights: 0.5 extra bits per parameter."""
NF4_DOUBLE_QUANT_BITS = 8 / 64 + 32 / (64 * 256)
"""Double quantization: 8-bit absmax per 64 weights + one fp32 constant per 256 blocks:
0.127 bits per parameter (the paper's figure)."""
GROUP128_INT4_BITS = (16 + 4) / 128
"""GPTQ/AWQ int4 with group size 128 (their default): an fp16 scale and a 4-bit zero per
group: 0.156 extra bits per parameter."""


def quant_constant_bytes(params: float, *, double_quant: bool = True) -> float:
    """Bytes of NF4 quantization constants for ``params`` quantized weights."""
    bits = NF4_DOUBLE_QUANT_BITS if double_quant else NF4_ABSMAX_BITS
    return params * bits / 8


# --- KV cache (vLLM paper, Kwon et al. 2023; anchors §1.5) ----------------------------


def kv_cache_bytes_per_token(
    layers: int, kv_heads: int, head_dim: int, bytes_per_value: float, mla_dim: int | None = None
) -> float:
    """K and V for one token over all layers: 2·L·kv_heads·head_dim·bytes (GQA aware).

    With multi-head latent attention only the compressed latent (``mla_dim`` elements per
    layer) is cached.
    """
    if mla_dim is not None:
        return layers * mla_dim * bytes_per_value
    return 2 * layers * kv_heads * head_dim * bytes_per_value


# --- activations (Korthikanti et al. 2022, "Reducing Activation Recomputation") -------


def korthikanti_layer_bytes(
    s: int,
    b: int,
    h: int,
    a: int,
    t: int = 1,
    *,
    sequence_parallel: bool = False,
    recompute: Recompute = "none",
) -> float:
    """Activation bytes of one GPT layer in fp16 with dropout, exactly as the paper's
    Table 2 states them (s = sequence, b = micro-batch, h = hidden, a = heads, t = TP)."""
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh
    if recompute == "selective":
        return 34.0 * sbh / t if sequence_parallel else sbh * (10.0 + 24.0 / t)
    if sequence_parallel:
        return sbh / t * (34.0 + 5.0 * a * s / h)
    if t == 1:
        return sbh * (34.0 + 5.0 * a * s / h)
    return sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t))


def layer_activation_bytes(
    *,
    s: int,
    b: int,
    h: int,
    heads: int,
    head_dim: int,
    kv_heads: int,
    intermediate: int,
    bytes_per_value: float = 2,
    glu: bool = True,
    dropout: bool = False,
    flash_attention: bool = True,
    softmax_bytes: float | None = None,
) -> tuple[float, float]:
    """(unsharded, tensor-parallel-sharded) activation bytes one layer saves for backward.

    Korthikanti's accounting generalized to GQA, gated MLPs of any width, no dropout and
    FlashAttention. It reduces to the paper's ``sbh(10 + 24/t + 5as/(ht))`` for a GPT
    block (MHA, GELU with I = 4h, dropout, no FlashAttention, 2-byte values):

    - unsharded: attention and MLP block inputs (2 x B·sbh), two norm inputs (2 x B·sbh),
      two dropout masks (2 x sbh, one byte each);
    - sharded: Q, K, V and the attention output (B·sb·(2·a·d + 2·kv·d)), the MLP
      intermediates (GELU: input and output, 2 x B·sbI; SwiGLU: gate, up, activation and
      product, 4 x B·sbI), and without FlashAttention the score-sized tensors
      (softmax output B·as²b, plus its dropout mask as²b and output B·as²b). FlashAttention
      keeps only an fp32 log-sum-exp per head and position.

    ``softmax_bytes`` is the dtype the softmax returns when it differs from ``B``
    (Hugging Face eager attention and autocast compute it in fp32, 4): the backward keeps
    those probabilities and the ``B``-byte copy the value matmul saved.
    """
    B = bytes_per_value
    sb = float(s * b)
    unsharded = sb * h * B * 4 + (sb * h * 2 if dropout else 0.0)
    q_dim = heads * head_dim
    kv_dim = kv_heads * head_dim
    sharded = sb * B * (2 * q_dim + 2 * kv_dim)
    sharded += sb * intermediate * B * (4 if glu else 2)
    if flash_attention:
        sharded += heads * sb * 4
    else:
        score = float(heads) * s * s * b
        sm = B if softmax_bytes is None else softmax_bytes
        copy = B if dropout or sm != B else 0.0
        sharded += score * (sm + (1 if dropout else 0) + copy)
    return unsharded, sharded


LOGITS_EXTRA_BYTES = 8
"""Per logit beyond the output dtype when the loss runs in fp32 (torch autocast, HF's
``logits.float()``): the fp32 log-softmax and its fp32 gradient (vram.asmirnov: b·s·V·4
bytes, stored twice). Not in Korthikanti's formula, and the largest single tensor with
128k-152k vocabularies."""


def logits_bytes(
    s: int, b: int, vocab: int, bytes_per_value: float = 2, *, fp32_loss: bool = True
) -> float:
    """Training logits: the lm-head output plus the loss's log-softmax and gradient, in
    fp32 under autocast or, with DeepSpeed's 16-bit engines (no autocast), in 16-bit."""
    per = bytes_per_value + LOGITS_EXTRA_BYTES if fp32_loss else 3 * bytes_per_value
    return float(s) * b * vocab * per


# --- compute (Kaplan et al. 2020; Hoffmann et al. 2022; verl flops_counter) ------------


def training_flops(active_params: float, tokens: float) -> float:
    """C = 6·N·D: 2ND forward + 4ND backward (model FLOPs; recompute not counted)."""
    return 6.0 * active_params * tokens


def training_flops_with_attention(
    dense_params: float, seqlens: list[int], layers: int, heads: int, head_dim: int
) -> float:
    """verl's sequence-aware count: 6·N·Σs + 12·Σs²·L·a·d (N incl. embedding and head)."""
    tokens = sum(seqlens)
    square = sum(s * s for s in seqlens)
    return 6.0 * dense_params * tokens + 12.0 * square * layers * heads * head_dim


# --- ZeRO model states (Rajbhandari et al. 2020, Fig. 1) ------------------------------


def zero_model_state_bytes(params: float, devices: int, stage: int, k: float = 12) -> float:
    """Per-device bytes of fp16 weights + fp16 grads + K bytes of optimizer state (K = 12
    for mixed-precision Adam): stage 0 (2+2+K)Ψ, 1: 4Ψ + KΨ/N, 2: 2Ψ + (2+K)Ψ/N,
    3: (4+K)Ψ/N."""
    n = float(devices)
    if stage == 0:
        return (4 + k) * params
    if stage == 1:
        return 4 * params + k * params / n
    if stage == 2:
        return 2 * params + (2 + k) * params / n
    return (4 + k) * params / n
