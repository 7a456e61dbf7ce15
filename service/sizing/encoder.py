"""Encoder-only models served: embedding, rerank and classification (review 4 F9).

A BERT-style encoder answers a request with one forward pass over all of its tokens at
once (bidirectional attention, no causal mask): there are no decode steps and no KV cache.
The work of a batch is known in FLOPs, and on a tensor-core part a batch of a few thousand
tokens is compute-bound, so

    sequences/s = devices x dense peak x utilization / FLOPs per sequence,
    FLOPs per sequence = 2 x block parameters x s + 4 x layers x s^2 x hidden

(the embedding tables are looked up, not multiplied: they are left out of the matmul
parameters; the attention term is Q·K^T and scores·V, 2·s²·h each per layer). A small
batch can instead be bound by reading the weights once per forward, and every forward
pays the engine's per-layer kernel launches. Memory is the weights plus the workspace of
one batch's forward (a layer's inputs, Q/K/V, the MLP intermediates and the attention
scores of the whole batch); nothing is kept between requests.

The utilization prior comes from NVIDIA's published TensorRT BERT inference benchmark
(:data:`ENCODER_MFU`); generations it does not cover take their steady training prior
scaled by Ampere's ratio of the two.
"""

from __future__ import annotations

from service.catalog.models import AcceleratorSpec
from service.sizing.mfu import _STEADY, generation

TENSORRT_BERT = (
    "https://github.com/NVIDIA/TensorRT/blob/007c34702bc7878285e3123eb39829a1f9aef3f0/"
    "demo/BERT/README.md"
)
"""NVIDIA TensorRT demo/BERT README, section 'Inference performance': FP16 latency of
BERT-base and BERT-large per (sequence length, batch) on A100-40GB, A30 and T4."""

ENCODER_MFU: dict[str, tuple[float, str]] = {
    "ampere": (
        0.59,
        "BERT-large, 384 tokens, batch 128, FP16: 163.70 ms on A100-40GB (782 sequences/s, "
        "62 % of 312 TFLOPS) and 342.30 ms on A30 (374/s, 56 % of 165 TFLOPS)",
    ),
    "turing": (
        0.32,
        "BERT-large, 384 tokens, batch 128, FP16: 1518.35 ms on T4 (84 sequences/s, 32 % of "
        "65 TFLOPS: the 70 W card cannot hold its boost clock)",
    ),
}
"""Fraction of the dense 16-bit peak a large encoder batch sustains, per generation:
FLOPs per sequence (module docstring) x sequences/s over the peak, from the rows named
(:data:`TENSORRT_BERT`). These are TensorRT's fused BERT kernels, the fastest published
path; the estimate says so."""
ANCHOR_GENERATION = "ampere"
"""The generation both tables are anchored on: its encoder/steady-training ratio carries
the encoder prior to generations without an encoder measurement."""


def encoder_utilization(accelerator: AcceleratorSpec) -> tuple[float, str]:
    """(share of dense peak, basis) of an encoder forward on ``accelerator``."""
    gen = generation(accelerator)
    found = ENCODER_MFU.get(gen)
    if found is not None:
        value, text = found
        return value, f"TensorRT BERT benchmark ({TENSORRT_BERT}): {text}"
    steady = _STEADY.get(gen, _STEADY["unknown"])[0]
    ratio = ENCODER_MFU[ANCHOR_GENERATION][0] / _STEADY[ANCHOR_GENERATION][0]
    return steady * ratio, (
        f"no encoder benchmark for this generation: its steady training prior x{ratio:.2f}, "
        f"Ampere's ratio of the TensorRT BERT benchmark ({TENSORRT_BERT}) to it"
    )


def block_params(params: float, embedding_params: float) -> float:
    """Parameters the forward multiplies: all but the embedding tables (looked up)."""
    return max(params - embedding_params, 0.0)


def flops_per_sequence(
    params: float, embedding_params: float, layers: int, hidden: int, tokens: int
) -> float:
    """Forward FLOPs of one sequence of ``tokens``: 2·P_block·s + 4·L·s²·h."""
    return 2.0 * block_params(params, embedding_params) * tokens + 4.0 * layers * tokens**2 * hidden


def forward_seconds(
    *,
    flops: float,
    weight_bytes: float,
    devices: int,
    peak_tflops: float,
    utilization: float,
    bandwidth_gbps: float | None,
    bandwidth_efficiency: float,
    layers: int,
    layer_overhead_s: float,
) -> float:
    """One batch's forward over ``devices`` replicas (an encoder fits one device; each
    replica takes its share of the batch): the slower of the compute and one read of a
    replica's weights (small batches), plus the engine's kernel launches per layer."""
    compute = flops / (devices * peak_tflops * 1e12 * utilization)
    read = 0.0
    if bandwidth_gbps:
        read = weight_bytes / (bandwidth_gbps * 1e9 * bandwidth_efficiency)
    return max(compute, read) + layers * layer_overhead_s


def workspace_bytes(
    *,
    tokens: int,
    hidden: int,
    heads: int,
    head_dim: int,
    intermediate: int,
    bytes_per_value: float,
) -> tuple[float, float]:
    """(unsharded, tensor-parallel-sharded) bytes of one layer's forward over a batch of
    ``tokens`` tokens: the layer's input, output, residual and
    norm copies of the hidden states (4·B·t·h), Q/K/V and the attention output
    (4·B·t·a·d) and the MLP's input and output at its width (2·B·t·I, GELU). No s × s
    score matrix: the serving engines run encoders with fused or flash attention, which
    keeps the scores on chip — text-embeddings-inference with Flash Attention for BERT,
    XLM-RoBERTa (bge-m3) and the other supported encoders
    (https://github.com/huggingface/text-embeddings-inference, "Supported Models"),
    TensorRT's fused multi-head attention for BERT (NVIDIA/TensorRT demo/BERT), PyTorch
    SDPA in transformers. Review 6 H4: bge-m3 at 8k with the scores counted needed 68 GiB
    of workspace for 16 sequences; without them about 4 GiB. One layer, since a forward
    keeps no activations for a backward."""
    unsharded = 4.0 * tokens * hidden * bytes_per_value
    q = heads * head_dim
    sharded = tokens * bytes_per_value * (4 * q + 2 * intermediate)
    return unsharded, sharded
