"""The exact formula layer: KV bytes, weights, Korthikanti activations, ZeRO, FLOPs."""

from __future__ import annotations

from typing import Any

import pytest

from service.sizing import formulas as f
from service.sizing.presets import ModelRegistry, builtin_presets

REGISTRY = ModelRegistry(builtin_presets())
MIB = 2.0**20


@pytest.mark.parametrize(
    ("preset_id", "kib_per_token"),
    [
        # anchors-estimation.md §1.1 table (bf16)
        ("llama-2-7b", 512),
        ("llama-2-13b", 800),
        ("llama-2-70b", 320),
        ("llama-3-8b", 128),
        ("llama-3-70b", 320),
        ("mistral-7b", 128),
        ("qwen2.5-7b", 56),
        ("qwen2.5-14b", 192),
        ("qwen2.5-72b", 320),
    ],
)
def test_kv_bytes_per_token(preset_id: str, kib_per_token: int) -> None:
    p = REGISTRY.resolve(preset_id)
    assert p is not None
    assert p.layers
    assert p.kv_heads
    assert p.head_dim
    assert f.kv_cache_bytes_per_token(p.layers, p.kv_heads, p.head_dim, 2) == kib_per_token * 1024


def test_kv_opt13b_vllm_paper() -> None:
    """vLLM paper: OPT-13B 800 KB per token = 2 x 5120 x 40 x 2."""
    assert f.kv_cache_bytes_per_token(40, 40, 128, 2) == 819_200


def test_mla_caches_only_the_latent() -> None:
    """DeepSeek-V3: (512 + 64) x 61 layers x 2 bytes."""
    assert f.kv_cache_bytes_per_token(61, 128, 128, 2, mla_dim=576) == 576 * 61 * 2


@pytest.mark.parametrize(
    ("t", "sp", "recompute", "mib"),
    [
        (1, False, "none", 2736),
        (8, False, "none", 552),
        (8, True, "selective", 102),
        (1, False, "full", 48),
    ],
)
def test_korthikanti_gpt3(t: int, sp: bool, recompute: f.Recompute, mib: float) -> None:
    """Korthikanti et al. 2022 on GPT-3 175B (s=2048, b=1, h=12288, a=96)."""
    got = f.korthikanti_layer_bytes(
        2048, 1, 12288, 96, t, sequence_parallel=sp, recompute=recompute
    )
    assert got / MIB == mib


@pytest.mark.parametrize("t", [1, 2, 8])
def test_generalized_activations_reduce_to_korthikanti(t: int) -> None:
    """GPT block (MHA, GELU I=4h, dropout, no FlashAttention, fp16) = sbh(10+24/t+5as/(ht))."""
    u, s = f.layer_activation_bytes(
        s=2048,
        b=1,
        h=12288,
        heads=96,
        head_dim=128,
        kv_heads=96,
        intermediate=4 * 12288,
        glu=False,
        dropout=True,
        flash_attention=False,
    )
    assert u + s / t == f.korthikanti_layer_bytes(2048, 1, 12288, 96, t)


def llama7b_layer(s: int, **kw: Any) -> tuple[float, float]:
    """One LLaMA-2-7B layer's (unsharded, sharded) activation bytes at micro-batch 1."""
    return f.layer_activation_bytes(
        s=s, b=1, h=4096, heads=32, head_dim=128, kv_heads=32, intermediate=11008, **kw
    )


def test_flash_attention_drops_the_score_term() -> None:
    def layer(flash: bool) -> tuple[float, float]:
        return llama7b_layer(4096, flash_attention=flash)

    (u1, s1), (u2, s2) = layer(False), layer(True)
    assert u1 == u2
    # no-dropout score tensor: softmax output 2·a·s²·b; FA keeps an fp32 LSE per head/position
    assert s1 - s2 == 2 * 32 * 4096 * 4096 - 32 * 4096 * 4


def test_gqa_shrinks_activations() -> None:
    mha = sum(
        f.layer_activation_bytes(
            s=1024, b=1, h=4096, heads=32, head_dim=128, kv_heads=32, intermediate=14336
        )
    )
    gqa = sum(
        f.layer_activation_bytes(
            s=1024, b=1, h=4096, heads=32, head_dim=128, kv_heads=8, intermediate=14336
        )
    )
    assert mha - gqa == 1024 * 2 * 2 * (32 - 8) * 128


def test_weights_bf16_from_exact_counts() -> None:
    p = REGISTRY.resolve("llama-2-7b")
    assert p is not None
    assert p.params_b * 1e9 * 2 / 2**30 == pytest.approx(12.5513, abs=1e-4)  # vLLM log 12.5523


@pytest.mark.parametrize(("stage", "gb"), [(0, 120.0), (1, 31.40625), (2, 16.640625), (3, 1.875)])
def test_zero_paper_figure_1(stage: int, gb: float) -> None:
    """ZeRO paper Fig. 1: Ψ = 7.5B, N = 64, K = 12."""
    assert f.zero_model_state_bytes(7.5e9, 64, stage) / 1e9 == pytest.approx(gb)


def test_nf4_constants() -> None:
    """QLoRA: 0.5 bit/param absmax, 0.127 with double quantization (saving 0.373)."""
    assert f.NF4_ABSMAX_BITS == 0.5
    assert pytest.approx(0.127, abs=5e-4) == f.NF4_DOUBLE_QUANT_BITS
    saving = f.quant_constant_bytes(65e9, double_quant=False) - f.quant_constant_bytes(65e9)
    assert saving / 1e9 == pytest.approx(3.03, rel=0.01)


def test_flops() -> None:
    assert f.training_flops(175e9, 300e9) == pytest.approx(3.15e23)
    p = REGISTRY.resolve("llama-2-7b")
    assert p is not None
    assert p.layers
    assert p.heads
    assert p.head_dim
    got = f.training_flops_with_attention(
        p.params_b * 1e9, [512, 1024, 2048], p.layers, p.heads, p.head_dim
    )
    assert got == pytest.approx(153_555_818_250_240, rel=1e-4)  # verl test expectation


def test_logits_bytes() -> None:
    assert f.logits_bytes(8192, 1, 128256) == 8192 * 128256 * 10
    assert f.logits_bytes(8192, 1, 128256, fp32_loss=False) == 8192 * 128256 * 6


@pytest.mark.parametrize(("dropout", "per_score"), [(False, 4 + 2), (True, 4 + 1 + 2)])
def test_fp32_softmax_keeps_the_probabilities_and_their_16bit_copy(
    dropout: bool, per_score: int
) -> None:
    """Eager attention with the softmax in fp32 (Hugging Face models, autocast): fp32
    probabilities for the softmax backward plus the 16-bit copy the value matmul saves
    (and with dropout its one-byte mask)."""

    def layer(softmax_bytes: float | None) -> float:
        return llama7b_layer(
            2048, dropout=dropout, flash_attention=False, softmax_bytes=softmax_bytes
        )[1]

    score = 32 * 2048 * 2048
    fused = 2 + (1 + 2 if dropout else 0)  # Korthikanti: 16-bit softmax (+ mask, output)
    assert layer(4.0) - layer(None) == score * (per_score - fused)
