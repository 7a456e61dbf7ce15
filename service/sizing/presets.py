"""Model presets: exact public architectures, each with its source.

A preset is data, not code: its fields are copied from the model's public ``config.json``
(or paper / model card), and the parameter count is the exact Hugging Face total. For the
Llama/Mistral/Qwen families the count is reproduced by :func:`decoder_params` from the
architecture fields alone; ``tests/sizing/test_presets.py`` checks that for every preset,
so a mistyped field cannot hide.

Image models (ResNet, YOLO, ViT, Stable Diffusion) carry a per-sample activation figure with
the source it came from; where no public figure exists the field is ``None`` and the engine
says which prior it used instead.

Presets come from every plugin through the ``suanli_register_models`` hook; the core's own
presets are :func:`builtin_presets`, registered by :mod:`service.hooks.core`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from service.sizing import resnet
from service.sizing.unet import UNetConfig

ModelKind = Literal["decoder", "moe", "encoder", "cnn", "vit", "detector", "diffusion"]
TRANSFORMER_KINDS: frozenset[str] = frozenset({"decoder", "moe", "encoder", "vit"})
"""Kinds whose memory follows the transformer formulas (and that LoRA can target)."""


class ModelPreset(msgspec.Struct, frozen=True, kw_only=True):
    """One model architecture with its provenance.

    Counts are exact where the source allows; ``None`` means not applicable (a CNN has no
    attention heads) or unknown.
    """

    id: str
    """Lowercase, hyphenated, version dots kept: ``llama-3.1-405b``, ``qwen2.5-7b``."""
    display_name: str
    kind: ModelKind
    params_b: float
    """Total parameters in billions (all experts), exact to the unit where published."""
    active_params_b: float | None = None
    """Parameters used per token (MoE); ``None`` = all of them."""
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    intermediate: int | None = None
    """MLP intermediate size; for MoE the size of *one* expert."""
    vocab: int | None = None
    tied_embeddings: bool = False
    qkv_bias: bool = False
    glu: bool = True
    """Gated MLP (SwiGLU: gate, up, down) vs. two-matrix MLP (GELU)."""
    fused_qkv: bool = False
    """One fused QKV projection (Qwen-1 ``c_attn``): LoRA adapts it as one matrix."""
    qk_norm: bool = False
    """RMSNorm on queries and keys per head (Qwen3): ``2·head_dim`` weights per layer."""
    dropout: bool = False
    """Dropout in the blocks (BERT/GPT-style): adds Korthikanti's mask bytes."""
    experts: int = 1
    experts_per_token: int = 1
    shared_experts: int = 0
    mla_kv_dim: int | None = None
    """Multi-head latent attention: elements cached per token per layer
    (``kv_lora_rank + qk_rope_head_dim``), replacing ``2·kv_heads·head_dim``."""
    max_positions: int | None = None
    scores_pairs: bool = False
    """A cross-encoder reranker: each sequence it encodes is one query and passage pair,
    scored (its rate is said in pairs scored per second)."""
    image_size: int | None = None
    """Default input side in pixels (image models)."""
    forward_gflops: float | None = None
    """Forward GFLOPs per sample at ``image_size`` (image models), 2 FLOPs per
    multiply-accumulate (torchvision's "GFLOPS" are MACs and are doubled here; Ultralytics
    already doubles)."""
    activation_mib_per_sample: float | None = None
    """Training activations per sample at ``image_size``, 16-bit, no checkpointing (MiB)."""
    activation_mib_per_sample_checkpointed: float | None = None
    activation_source: str | None = None
    serving_activation_mib_per_sample: float | None = None
    """Serving (a forward without gradients): the activations alive at once at the peak of
    one sample's forward at ``image_size``, 16-bit (MiB). A training figure keeps every
    layer's output for the backward; a forward frees each one once its consumers ran."""
    serving_activation_source: str | None = None
    frozen_params_b: float | None = None
    """Parameters that stay frozen in a full fine-tune (Stable Diffusion: VAE + text encoder)."""
    unet: UNetConfig | None = None
    """Diffusion models: the UNet's ``unet/config.json`` shape (and its text encoders'
    size), from which LoRA's adapters and the FLOPs of a training image follow
    (:mod:`service.sizing.unet`)."""
    aliases: tuple[str, ...] = ()
    source: str
    confidence: Literal["high", "medium", "low"] = "high"
    release_precision: Literal["fp8"] | None = None
    """The only weight format the authors publish, when it is not 16-bit (DeepSeek-V3/R1:
    FP8). A 16-bit plan of such a model sizes an upcast copy, which the answer says."""


def decoder_params(
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
    tied_embeddings: bool = False,
    qkv_bias: bool = False,
    head_dim: int | None = None,
    glu: bool = True,
    experts: int = 1,
    experts_per_token: int | None = None,
    qk_norm: bool = False,
) -> int:
    """Exact parameter count of a Llama/Mistral/Qwen-style decoder (RMSNorm, no other
    biases). ``experts_per_token`` given = count only the experts one token uses.

    P = V·h·(1|2) + L·[h·a·d + 2·h·kv·d + a·d·h (+ q/k/v biases) + MLP + 2h] + h
    (anchors-estimation.md §1.1; reproduces the Hugging Face totals exactly).
    """
    d = head_dim or hidden // heads
    attention = hidden * heads * d * 2 + 2 * hidden * kv_heads * d
    if qkv_bias:
        attention += heads * d + 2 * kv_heads * d
    used = experts if experts_per_token is None else experts_per_token
    mlp = used * (3 if glu else 2) * hidden * intermediate
    if experts > 1:
        mlp += hidden * experts  # router
    norms = 2 * hidden + (2 * d if qk_norm else 0)
    embeddings = vocab * hidden * (1 if tied_embeddings else 2)
    return embeddings + layers * (attention + mlp + norms) + hidden


_LLAMA2 = (
    "Llama 2 paper (Touvron et al. 2023, arXiv:2307.09288) and meta-llama/Llama-2-{s}-hf "
    "config.json; exact count reproduced by the config formula (anchors-estimation.md §1.1)"
)
_LLAMA3 = (
    "The Llama 3 Herd of Models (arXiv:2407.21783) Table 3 and meta-llama/{n} config.json; "
    "exact count reproduced by the config formula"
)
_QWEN25 = (
    "Qwen/Qwen2.5-{s} config.json (hidden, layers, heads, kv heads, intermediate, vocab, "
    "tie_word_embeddings) and model card; q/k/v biases; exact count reproduced by the formula"
)
_QWEN1 = (
    "Qwen/Qwen-{s} config.json (QWenConfig: hidden_size, num_hidden_layers, "
    "num_attention_heads, intermediate_size = 2 x MLP width, vocab_size) as listed in "
    "QwenLM/Qwen README; fused c_attn with bias, MHA; exact count reproduced by the formula"
)


def _decoder(
    id_: str,
    name: str,
    params: int,
    source: str,
    aliases: Sequence[str],
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
    max_positions: int,
    tied_embeddings: bool = False,
    qkv_bias: bool = False,
    fused_qkv: bool = False,
    head_dim: int | None = None,
    qk_norm: bool = False,
    confidence: Literal["high", "medium", "low"] = "high",
) -> ModelPreset:
    """A dense decoder-only transformer preset (head_dim = hidden / heads unless given)."""
    return ModelPreset(
        id=id_,
        display_name=name,
        kind="decoder",
        params_b=params / 1e9,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim or hidden // heads,
        intermediate=intermediate,
        vocab=vocab,
        tied_embeddings=tied_embeddings,
        qkv_bias=qkv_bias,
        fused_qkv=fused_qkv,
        qk_norm=qk_norm,
        max_positions=max_positions,
        aliases=tuple(aliases),
        source=source,
        confidence=confidence,
    )


def _qwen25(
    size: str,
    params: int,
    tied: bool,
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
) -> ModelPreset:
    return _decoder(
        f"qwen2.5-{size.lower()}",
        f"Qwen2.5-{size}",
        params,
        _QWEN25.format(s=size),
        (f"Qwen/Qwen2.5-{size}", f"Qwen2.5-{size}"),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        intermediate=intermediate,
        vocab=vocab,
        max_positions=32_768,
        tied_embeddings=tied,
        qkv_bias=True,
    )


def _qwen1(
    size: str,
    params: int,
    *,
    layers: int,
    hidden: int,
    heads: int,
    intermediate: int,
    vocab: int,
    max_positions: int,
) -> ModelPreset:
    return _decoder(
        f"qwen-{size.lower()}",
        f"Qwen-{size} (Qwen-1)",
        params,
        _QWEN1.format(s=size.replace(".", "_")),
        (f"Qwen/Qwen-{size.replace('.', '_')}", f"qwen1-{size.lower()}"),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        intermediate=intermediate,
        vocab=vocab,
        max_positions=max_positions,
        qkv_bias=True,
        fused_qkv=True,
    )


def builtin_presets() -> tuple[ModelPreset, ...]:
    """The core's presets (issue 4 list, then the families Chinese users ask for most),
    each with its source."""
    return _first_presets() + chinese_favourites() + same_architecture_releases()


def _first_presets() -> tuple[ModelPreset, ...]:
    return (
        _decoder(
            "llama-2-7b",
            "Llama-2-7B",
            6_738_415_616,
            _LLAMA2.format(s="7b"),
            ("meta-llama/Llama-2-7b-hf", "llama2-7b", "llama-7b"),
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=32,
            intermediate=11008,
            vocab=32000,
            max_positions=4096,
        ),
        _decoder(
            "llama-2-13b",
            "Llama-2-13B",
            13_015_864_320,
            _LLAMA2.format(s="13b"),
            ("meta-llama/Llama-2-13b-hf", "llama2-13b"),
            layers=40,
            hidden=5120,
            heads=40,
            kv_heads=40,
            intermediate=13824,
            vocab=32000,
            max_positions=4096,
        ),
        _decoder(
            "llama-2-70b",
            "Llama-2-70B",
            68_976_648_192,
            _LLAMA2.format(s="70b"),
            ("meta-llama/Llama-2-70b-hf", "llama2-70b"),
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            intermediate=28672,
            vocab=32000,
            max_positions=4096,
        ),
        _decoder(
            "llama-3-8b",
            "Llama-3-8B",
            8_030_261_248,
            _LLAMA3.format(n="Meta-Llama-3-8B"),
            ("meta-llama/Meta-Llama-3-8B", "meta-llama-3-8b", "llama3-8b"),
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            intermediate=14336,
            vocab=128256,
            max_positions=8192,
        ),
        _decoder(
            "llama-3-70b",
            "Llama-3-70B",
            70_553_706_496,
            _LLAMA3.format(n="Meta-Llama-3-70B"),
            ("meta-llama/Meta-Llama-3-70B", "meta-llama-3-70b", "llama3-70b"),
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            intermediate=28672,
            vocab=128256,
            max_positions=8192,
        ),
        _decoder(
            "llama-3.1-8b",
            "Llama-3.1-8B",
            8_030_261_248,
            _LLAMA3.format(n="Llama-3.1-8B"),
            (
                "meta-llama/Llama-3.1-8B",
                "meta-llama/Meta-Llama-3.1-8B",
                "meta-llama-3.1-8b",
                "llama3.1-8b",
            ),
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            intermediate=14336,
            vocab=128256,
            max_positions=131_072,
        ),
        _decoder(
            "llama-3.1-70b",
            "Llama-3.1-70B",
            70_553_706_496,
            _LLAMA3.format(n="Llama-3.1-70B"),
            (
                "meta-llama/Llama-3.1-70B",
                "meta-llama/Meta-Llama-3.1-70B",
                "meta-llama-3.1-70b",
                "llama3.1-70b",
            ),
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            intermediate=28672,
            vocab=128256,
            max_positions=131_072,
        ),
        _decoder(
            "llama-3.1-405b",
            "Llama-3.1-405B",
            405_853_388_800,
            _LLAMA3.format(n="Llama-3.1-405B"),
            (
                "meta-llama/Llama-3.1-405B",
                "meta-llama/Meta-Llama-3.1-405B",
                "meta-llama-3.1-405b",
                "llama-3-405b",
                "llama3.1-405b",
            ),
            layers=126,
            hidden=16384,
            heads=128,
            kv_heads=8,
            intermediate=53248,
            vocab=128256,
            max_positions=131_072,
        ),
        _decoder(
            "mistral-7b",
            "Mistral-7B-v0.1",
            7_241_732_096,
            "mistralai/Mistral-7B-v0.1 config.json and Mistral 7B paper (arXiv:2310.06825); "
            "exact count reproduced by the config formula (anchors-estimation.md §1.1)",
            ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"),
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            intermediate=14336,
            vocab=32000,
            max_positions=32_768,
        ),
        ModelPreset(
            id="mixtral-8x7b",
            display_name="Mixtral-8x7B-v0.1",
            kind="moe",
            params_b=46_702_792_704 / 1e9,
            active_params_b=12_879_925_248 / 1e9,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            head_dim=128,
            intermediate=14336,
            vocab=32000,
            experts=8,
            experts_per_token=2,
            max_positions=32_768,
            aliases=("mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b-v0.1"),
            source="mistralai/Mixtral-8x7B-v0.1 config.json (num_local_experts 8, "
            "num_experts_per_tok 2) and Mixtral paper (arXiv:2401.04088: 47B total, 13B "
            "active); exact totals from the config formula with a router per layer",
        ),
        _qwen25(
            "0.5B",
            494_032_768,
            True,
            layers=24,
            hidden=896,
            heads=14,
            kv_heads=2,
            intermediate=4864,
            vocab=151936,
        ),
        _qwen25(
            "1.5B",
            1_543_714_304,
            True,
            layers=28,
            hidden=1536,
            heads=12,
            kv_heads=2,
            intermediate=8960,
            vocab=151936,
        ),
        _qwen25(
            "3B",
            3_085_938_688,
            True,
            layers=36,
            hidden=2048,
            heads=16,
            kv_heads=2,
            intermediate=11008,
            vocab=151936,
        ),
        _qwen25(
            "7B",
            7_615_616_512,
            False,
            layers=28,
            hidden=3584,
            heads=28,
            kv_heads=4,
            intermediate=18944,
            vocab=152064,
        ),
        _qwen25(
            "14B",
            14_770_033_664,
            False,
            layers=48,
            hidden=5120,
            heads=40,
            kv_heads=8,
            intermediate=13824,
            vocab=152064,
        ),
        _qwen25(
            "32B",
            32_763_876_352,
            False,
            layers=64,
            hidden=5120,
            heads=40,
            kv_heads=8,
            intermediate=27648,
            vocab=152064,
        ),
        _qwen25(
            "72B",
            72_706_203_648,
            False,
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            intermediate=29568,
            vocab=152064,
        ),
        _qwen1(
            "1.8B",
            1_836_828_672,
            layers=24,
            hidden=2048,
            heads=16,
            intermediate=5504,
            vocab=151936,
            max_positions=8192,
        ),
        _qwen1(
            "7B",
            7_721_324_544,
            layers=32,
            hidden=4096,
            heads=32,
            intermediate=11008,
            vocab=151936,
            max_positions=8192,
        ),
        _qwen1(
            "14B",
            14_167_290_880,
            layers=40,
            hidden=5120,
            heads=40,
            intermediate=13696,
            vocab=152064,
            max_positions=2048,
        ),
        _qwen1(
            "72B",
            72_287_920_128,
            layers=80,
            hidden=8192,
            heads=64,
            intermediate=24576,
            vocab=152064,
            max_positions=32_768,
        ),
        ModelPreset(
            id="deepseek-v3",
            display_name="DeepSeek-V3",
            kind="moe",
            params_b=671.0,
            active_params_b=37.0,
            layers=61,
            hidden=7168,
            heads=128,
            kv_heads=128,
            head_dim=128,
            intermediate=2048,
            vocab=129280,
            experts=256,
            experts_per_token=8,
            shared_experts=1,
            mla_kv_dim=512 + 64,
            max_positions=163_840,
            aliases=("deepseek-ai/DeepSeek-V3", "deepseek-v3-base", "deepseek-ai/DeepSeek-V3-Base"),
            source="DeepSeek-V3 Technical Report (arXiv:2412.19437: 671B total, 37B activated, "
            "61 layers, MLA kv_lora_rank 512 + rope dim 64) and deepseek-ai/DeepSeek-V3 "
            "config.json (hidden 7168, 128 heads, 256 routed experts of 2048, 8 per token, 1 "
            "shared, vocab 129280); the 14B multi-token-prediction module is not counted. "
            "Released in FP8 only: config.json quantization_config (quant_method fp8, fmt e4m3, "
            "weight_block_size [128, 128], activation_scheme dynamic; "
            "https://github.com/deepseek-ai/DeepSeek-V3/blob/main/README_WEIGHTS.md) and the "
            "README: 'we only provide FP8 weights', BF16 through inference/fp8_cast_bf16.py "
            "(https://github.com/deepseek-ai/DeepSeek-V3#6-how-to-run-locally)",
            confidence="medium",
            release_precision="fp8",
        ),
        ModelPreset(
            id="resnet-50",
            display_name="ResNet-50",
            kind="cnn",
            params_b=25_557_032 / 1e9,
            image_size=224,
            forward_gflops=2 * 4.09,
            activation_mib_per_sample=resnet.saved_for_backward() * 2 / 2**20,
            activation_source="counted from torchvision resnet50's layer shapes at 1x3x224x224: "
            "what autograd saves, each convolution's and batch norm's input, the in-place "
            "ReLUs' outputs and the max pool's int64 indices, 21,876,736 values, 41.7 MiB per "
            "image in 16-bit (https://github.com/pytorch/vision/blob/054e54c573ba46e5b9c63f1e"
            "ea3ad4d103afbea2/torchvision/models/resnet.py; torchsummary's 286.56 MB "
            "'forward/backward pass size' counts every module's output, the in-place ReLUs "
            "again: 1.7x that)",
            serving_activation_mib_per_sample=resnet.forward_peak() * 2 / 2**20,
            serving_activation_source="torchvision resnet50 at 1x3x224x224 without gradients: "
            "the peak is the downsample branch of layer1's first Bottleneck, when the input "
            "(3x224x224), the block's input (64x56x56), its main branch's output and the "
            "downsample convolution's and batch norm's outputs (3 x 256x56x56) are alive at once "
            "(Bottleneck.forward runs the downsample after bn3, https://github.com/pytorch/vision/"
            "blob/054e54c573ba46e5b9c63f1eea3ad4d103afbea2/torchvision/models/resnet.py): "
            "2,759,680 values",
            aliases=("resnet50", "torchvision/resnet50", "microsoft/resnet-50"),
            source="torchvision ResNet50_Weights.IMAGENET1K_V1 (25,557,032 params, 4.09 GFLOPs "
            "at 224x224); He et al. 2015",
        ),
        ModelPreset(
            id="bert-base",
            display_name="BERT-base (uncased)",
            kind="encoder",
            params_b=109_482_240 / 1e9,
            layers=12,
            hidden=768,
            heads=12,
            kv_heads=12,
            head_dim=64,
            intermediate=3072,
            vocab=30522,
            tied_embeddings=True,
            qkv_bias=True,
            glu=False,
            dropout=True,
            max_positions=512,
            activation_source="Korthikanti et al. 2022 per-layer formula sbh(34 + 5as/h) "
            "(BERT is a post-LN GELU encoder with dropout, the formula's own block)",
            aliases=("bert-base-uncased", "google-bert/bert-base-uncased"),
            source="google-bert/bert-base-uncased config.json (12 layers, hidden 768, 12 "
            "heads, intermediate 3072, vocab 30522, max 512 positions); 109,482,240 params "
            "as loaded by transformers BertModel",
        ),
        ModelPreset(
            id="bert-large",
            display_name="BERT-large (uncased)",
            kind="encoder",
            params_b=335_141_888 / 1e9,
            layers=24,
            hidden=1024,
            heads=16,
            kv_heads=16,
            head_dim=64,
            intermediate=4096,
            vocab=30522,
            tied_embeddings=True,
            qkv_bias=True,
            glu=False,
            dropout=True,
            max_positions=512,
            activation_source="Korthikanti et al. 2022 per-layer formula sbh(34 + 5as/h)",
            aliases=("bert-large-uncased", "google-bert/bert-large-uncased"),
            source="google-bert/bert-large-uncased config.json (24 layers, hidden 1024, 16 "
            "heads, intermediate 4096, vocab 30522); 335,141,888 params as loaded by BertModel",
        ),
        ModelPreset(
            id="vit-b-16",
            display_name="ViT-B/16",
            kind="vit",
            params_b=86_567_656 / 1e9,
            layers=12,
            hidden=768,
            heads=12,
            kv_heads=12,
            head_dim=64,
            intermediate=3072,
            vocab=None,
            tied_embeddings=True,
            qkv_bias=True,
            glu=False,
            dropout=False,
            image_size=224,
            forward_gflops=2 * 17.56,
            activation_source="Korthikanti et al. 2022 per-layer formula with s = (224/16)^2 + 1 "
            "= 197 patch tokens (no dropout in torchvision's default ViT)",
            aliases=("vit_b_16", "google/vit-base-patch16-224", "vit-base-patch16-224"),
            source="torchvision ViT_B_16_Weights.IMAGENET1K_V1 (86,567,656 params, 17.56 GFLOPs "
            "at 224x224); Dosovitskiy et al. 2020 (12 layers, hidden 768, MLP 3072, 12 heads)",
        ),
        ModelPreset(
            id="vit-l-16",
            display_name="ViT-L/16",
            kind="vit",
            params_b=304_326_632 / 1e9,
            layers=24,
            hidden=1024,
            heads=16,
            kv_heads=16,
            head_dim=64,
            intermediate=4096,
            vocab=None,
            tied_embeddings=True,
            qkv_bias=True,
            glu=False,
            dropout=False,
            image_size=224,
            forward_gflops=2 * 61.555,
            activation_source="Korthikanti et al. 2022 per-layer formula with s = (224/16)^2 + 1 "
            "= 197 patch tokens (no dropout in torchvision's default ViT)",
            aliases=("vit_l_16", "google/vit-large-patch16-224", "vit-large-patch16-224"),
            source="torchvision ViT_L_16_Weights.IMAGENET1K_V1 (304,326,632 params, 61.555 GFLOPs "
            "at 224x224; vit_l_16: num_layers 24, num_heads 16, hidden_dim 1024, mlp_dim 4096, "
            "pytorch/vision torchvision/models/vision_transformer.py); Dosovitskiy et al. 2020 "
            "Table 1 (ViT-Large: 24 layers, hidden 1024, MLP 4096, 16 heads, 307M)",
        ),
        ModelPreset(
            id="yolov8-m",
            display_name="YOLOv8-m",
            kind="detector",
            params_b=25_902_640 / 1e9,
            image_size=640,
            forward_gflops=79.3,
            activation_source=None,
            aliases=("yolov8m", "yolov8m.pt", "ultralytics/yolov8m"),
            source="ultralytics/cfg/models/v8/yolov8.yaml scale m: 'YOLOv8m summary: 295 layers, "
            "25902640 parameters, 79.3 GFLOPs' (640x640)",
        ),
        ModelPreset(
            id="sd-1.5",
            display_name="Stable Diffusion 1.5",
            kind="diffusion",
            params_b=1.066,
            frozen_params_b=0.207,
            image_size=512,
            activation_mib_per_sample=2.50e9 / 2**20,
            activation_mib_per_sample_checkpointed=0.48e9 / 2**20,
            activation_source="ShivamShrirao/diffusers examples/dreambooth README (Tesla T4, fp16, "
            "512x512, xformers, 8-bit Adam): batch 1 -> 2 adds 2.50 GB without and 0.48 GB "
            "with gradient checkpointing (13.67 - 11.17 and 10.40 - 9.92 GB)",
            aliases=(
                "stable-diffusion-v1-5",
                "runwayml/stable-diffusion-v1-5",
                "stable-diffusion-v1-5/stable-diffusion-v1-5",
                "sd15",
                "sd-v1-5",
            ),
            source="CompVis/stable-diffusion README (860M UNet, 123M CLIP ViT-L/14 text encoder) "
            "plus the ~84M AutoencoderKL; fine-tuning trains the UNet only. Transformer "
            "blocks from https://huggingface.co/stable-diffusion-v1-5/stable-diffusion-v1-5/"
            "blob/main/unet/config.json (block_out_channels [320, 640, 1280, 1280], three "
            "CrossAttnDownBlock2D and three CrossAttnUpBlock2D, layers_per_block 2, one "
            "transformer layer each, cross_attention_dim 768): 5 at 320, 5 at 640, 6 at 1280 "
            "channels with the mid block, attention_head_dim 8 (diffusers takes it as 8 heads "
            "per level); VAE from its vae/config.json (block_out_channels [128, 256, 512, "
            "512], layers_per_block 2; the same AutoencoderKL layout as SDXL's, 83,653,863 "
            "parameters; StableDiffusionPipeline decodes in the pipeline's dtype)",
            unet=UNetConfig(
                block_out_channels=(320, 640, 1280, 1280),
                cross_attention=(True, True, True, False),
                transformer_layers=(1, 1, 1, 1),
                cross_attention_dim=768,
                text_encoder_params=123_060_480,
                attention_heads=(8, 8, 8, 8),
                vae_params=83_653_863,
            ),
            confidence="medium",
        ),
        ModelPreset(
            id="sdxl",
            display_name="Stable Diffusion XL 1.0 (base)",
            kind="diffusion",
            params_b=(2_567_463_684 + 123_060_480 + 694_659_840 + 83_653_863) / 1e9,
            frozen_params_b=(123_060_480 + 694_659_840 + 83_653_863) / 1e9,
            image_size=1024,
            activation_source=None,
            unet=UNetConfig(
                block_out_channels=(320, 640, 1280),
                cross_attention=(False, True, True),
                transformer_layers=(1, 2, 10),
                cross_attention_dim=2048,
                text_encoder_params=123_060_480 + 694_659_840,
                attention_heads=(5, 10, 20),
                vae_params=83_653_863,
                vae_force_upcast=True,
            ),
            aliases=(
                "stabilityai/stable-diffusion-xl-base-1.0",
                "stable-diffusion-xl-base-1.0",
                "sdxl-base",
                "sdxl-1.0",
                "sd-xl",
            ),
            source="Podell et al. 2023, SDXL (arXiv:2307.01952) Table 1 (2.6B UNet, CLIP ViT-L "
            "and OpenCLIP ViT-bigG text encoders, context dim 2048, transformer blocks 0/2/10 "
            "per level); https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/"
            "main/unet/config.json (block_out_channels [320, 640, 1280], "
            "transformer_layers_per_block [1, 2, 10], cross_attention_dim 2048): 10 "
            "transformer blocks at 640 and 60 at 1280 channels with the mid block, "
            "attention_head_dim [5, 10, 20] (heads per level, 64 wide); vae/config.json "
            "(https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/main/vae/"
            "config.json: block_out_channels [128, 256, 512, 512], layers_per_block 2, "
            "force_upcast true); parameters "
            "as loaded by diffusers/transformers: UNet 2,567,463,684, CLIPTextModel "
            "123,060,480, CLIPTextModelWithProjection 694,659,840, AutoencoderKL 83,653,863",
            confidence="medium",
        ),
    )


_HF = "https://huggingface.co/{repo}/blob/main/config.json"
_QWEN3_SRC = (
    _HF + " (head_dim 128, q/k RMSNorm, no q/k/v bias; values as transcribed in "
    "github citsjtu2020/LLM-Prof sglang/Model_Config.md @8434c8d1); exact count from the "
    "config formula"
)
_DISTILL = (
    "https://github.com/deepseek-ai/DeepSeek-R1 README (DeepSeek-R1-Distill models: base "
    "model {base}); architecture = {base} config.json; " + _HF
)


def _qwen3(
    size: str, params: int, tied: bool, *, layers: int, hidden: int, heads: int, kv_heads: int,
    intermediate: int, vocab: int,
) -> ModelPreset:  # fmt: skip
    repo = f"Qwen/Qwen3-{size}"
    return _decoder(
        f"qwen3-{size.lower()}",
        f"Qwen3-{size}",
        params,
        _QWEN3_SRC.format(repo=repo),
        (repo, f"Qwen3-{size}-Base", f"{repo}-Base", f"{repo}-FP8"),
        max_positions=40_960,
        tied_embeddings=tied,
        head_dim=128,
        qk_norm=True,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        intermediate=intermediate,
        vocab=vocab,
    )


def _qwen3_moe(
    size: str, params: int, active: int, *, layers: int, hidden: int, heads: int,
    kv_heads: int, intermediate: int,
) -> ModelPreset:  # fmt: skip
    repo = f"Qwen/Qwen3-{size}"
    return ModelPreset(
        id=f"qwen3-{size.lower()}",
        display_name=f"Qwen3-{size}",
        kind="moe",
        params_b=params / 1e9,
        active_params_b=active / 1e9,
        head_dim=128,
        vocab=151_936,
        experts=128,
        experts_per_token=8,
        qk_norm=True,
        max_positions=40_960,
        aliases=(repo, f"{repo}-Base", f"{repo}-FP8"),
        source=_QWEN3_SRC.format(repo=repo) + " (num_experts 128, num_experts_per_tok 8, "
        "moe_intermediate_size per expert)",
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        intermediate=intermediate,
    )


def _like(base: ModelPreset, id_: str, name: str, source: str, aliases: Sequence[str],
          confidence: Literal["high", "medium", "low"] = "high") -> ModelPreset:  # fmt: skip
    """A preset with another preset's architecture (a fine-tune or distill of it)."""
    return msgspec.structs.replace(
        base, id=id_, display_name=name, source=source, aliases=tuple(aliases),
        confidence=confidence,
    )  # fmt: skip


def chinese_favourites() -> tuple[ModelPreset, ...]:
    """Qwen3, DeepSeek-R1 (and distills), GLM-4, Llama 3.2/3.3, Mistral/Mixtral, Baichuan2,
    Yi-1.5, InternLM2.5: the families Chinese users ask for most, each from its config.json
    (counts reproduced by :func:`decoder_params`, checked by the preset tests)."""
    first = {p.id: p for p in _first_presets()}
    qwen3 = (
        _qwen3("0.6B", 596_049_920, True, layers=28, hidden=1024, heads=16, kv_heads=8,
               intermediate=3072, vocab=151_936),
        _qwen3("1.7B", 1_720_574_976, True, layers=28, hidden=2048, heads=16, kv_heads=8,
               intermediate=6144, vocab=151_936),
        _qwen3("4B", 4_022_468_096, True, layers=36, hidden=2560, heads=32, kv_heads=8,
               intermediate=9728, vocab=151_936),
        _qwen3("8B", 8_190_735_360, False, layers=36, hidden=4096, heads=32, kv_heads=8,
               intermediate=12288, vocab=151_936),
        _qwen3("14B", 14_768_307_200, False, layers=40, hidden=5120, heads=40, kv_heads=8,
               intermediate=17408, vocab=151_936),
        _qwen3("32B", 32_762_123_264, False, layers=64, hidden=5120, heads=64, kv_heads=8,
               intermediate=25600, vocab=151_936),
        _qwen3_moe("30B-A3B", 30_532_122_624, 3_353_032_704, layers=48, hidden=2048,
                   heads=32, kv_heads=4, intermediate=768),
        _qwen3_moe("235B-A22B", 235_093_634_560, 22_190_763_520, layers=94, hidden=4096,
                   heads=64, kv_heads=4, intermediate=1536),
    )  # fmt: skip
    distill_qwen_15 = _decoder(
        "deepseek-r1-distill-qwen-1.5b",
        "DeepSeek-R1-Distill-Qwen-1.5B",
        1_777_088_000,
        _DISTILL.format(base="Qwen2.5-Math-1.5B", repo="deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B")
        + " (untied embeddings: 1.78B on the model card, unlike tied Qwen2.5-1.5B)",
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "r1-distill-qwen-1.5b"),
        layers=28, hidden=1536, heads=12, kv_heads=2, intermediate=8960, vocab=151_936,
        max_positions=131_072, qkv_bias=True, confidence="medium",
    )  # fmt: skip
    distills = (
        distill_qwen_15,
        _distill("Qwen-7B", "Qwen2.5-Math-7B", first["qwen2.5-7b"]),
        _distill("Qwen-14B", "Qwen2.5-14B", first["qwen2.5-14b"]),
        _distill("Qwen-32B", "Qwen2.5-32B", first["qwen2.5-32b"]),
        _distill("Llama-8B", "Llama-3.1-8B", first["llama-3.1-8b"]),
        _distill("Llama-70B", "Llama-3.3-70B-Instruct", first["llama-3.1-70b"]),
    )
    v3 = first["deepseek-v3"]
    deepseek_r1 = _like(
        v3, "deepseek-r1", "DeepSeek-R1",
        "https://github.com/deepseek-ai/DeepSeek-R1 README (DeepSeek-R1 is trained on "
        "DeepSeek-V3-Base: same architecture, 671B total / 37B activated); "
        + _HF.format(repo="deepseek-ai/DeepSeek-R1"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528", "deepseek-r1-0528", "r1"),
        confidence="medium",
    )  # fmt: skip
    llama = (
        _decoder(
            "llama-3.2-1b", "Llama-3.2-1B", 1_235_814_400,
            _HF.format(repo="meta-llama/Llama-3.2-1B") + " (16 layers, hidden 2048, 32/8 "
            "heads, head_dim 64, tied embeddings); exact count from the config formula",
            ("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-1B-Instruct", "llama3.2-1b"),
            layers=16, hidden=2048, heads=32, kv_heads=8, intermediate=8192, vocab=128_256,
            max_positions=131_072, tied_embeddings=True,
        ),
        _decoder(
            "llama-3.2-3b", "Llama-3.2-3B", 3_212_749_824,
            _HF.format(repo="meta-llama/Llama-3.2-3B") + " (as transcribed in github "
            "citsjtu2020/LLM-Prof sglang/Model_Config.md @8434c8d1); exact count from the "
            "config formula",
            ("meta-llama/Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b"),
            layers=28, hidden=3072, heads=24, kv_heads=8, intermediate=8192, vocab=128_256,
            max_positions=131_072, tied_embeddings=True,
        ),
        _like(
            first["llama-3.1-70b"], "llama-3.3-70b", "Llama-3.3-70B-Instruct",
            _HF.format(repo="meta-llama/Llama-3.3-70B-Instruct") + " (the Llama 3.1 70B "
            "architecture: 80 layers, hidden 8192, 64/8 heads, vocab 128256)",
            ("meta-llama/Llama-3.3-70B-Instruct", "llama3.3-70b", "llama-3.3-70b-instruct"),
        ),
    )  # fmt: skip
    mistral = (
        _decoder(
            "mistral-7b-v0.3", "Mistral-7B-v0.3", 7_248_023_552,
            _HF.format(repo="mistralai/Mistral-7B-v0.3") + " (v0.1 architecture, vocab "
            "extended to 32768); exact count from the config formula",
            ("mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"),
            layers=32, hidden=4096, heads=32, kv_heads=8, intermediate=14336, vocab=32_768,
            max_positions=32_768,
        ),
        ModelPreset(
            id="mixtral-8x22b", display_name="Mixtral-8x22B-v0.1", kind="moe",
            params_b=140_630_071_296 / 1e9, active_params_b=39_161_468_928 / 1e9,
            layers=56, hidden=6144, heads=48, kv_heads=8, head_dim=128, intermediate=16384,
            vocab=32_768, experts=8, experts_per_token=2, max_positions=65_536,
            aliases=("mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1"),
            source=_HF.format(repo="mistralai/Mixtral-8x22B-v0.1") + " (56 layers, hidden "
            "6144, 48/8 heads, 8 experts of 16384, 2 per token, vocab 32768); totals from the "
            "config formula with a router per layer (the card says 141B / 39B active)",
        ),
    )  # fmt: skip
    others = (
        _decoder(
            "glm-4-9b", "GLM-4-9B", 9_399_951_360,
            _HF.format(repo="THUDM/glm-4-9b-chat") + " (ChatGLM: num_layers 40, hidden 4096, "
            "ffn_hidden_size 13696, 32 heads, multi_query_group_num 2, kv_channels 128, "
            "padded_vocab_size 151552, add_qkv_bias, untied output layer); exact count from "
            "the config formula (9.4B on the model card)",
            ("THUDM/glm-4-9b", "THUDM/glm-4-9b-chat", "zai-org/glm-4-9b-chat", "glm4-9b",
             "glm-4-9b-chat"),
            layers=40, hidden=4096, heads=32, kv_heads=2, intermediate=13696, vocab=151_552,
            max_positions=131_072, qkv_bias=True,
        ),
        _decoder(
            "baichuan2-7b", "Baichuan2-7B", 7_505_973_248,
            _HF.format(repo="baichuan-inc/Baichuan2-7B-Base") + " (32 layers, hidden 4096, "
            "32 heads (MHA), intermediate 11008, vocab 125696, fused W_pack without bias)",
            ("baichuan-inc/Baichuan2-7B-Base", "baichuan-inc/Baichuan2-7B-Chat",
             "baichuan2-7b-chat"),
            layers=32, hidden=4096, heads=32, kv_heads=32, intermediate=11008, vocab=125_696,
            max_positions=4096, fused_qkv=True,
        ),
        _decoder(
            "baichuan2-13b", "Baichuan2-13B", 13_896_668_160,
            _HF.format(repo="baichuan-inc/Baichuan2-13B-Base") + " (40 layers, hidden 5120, "
            "40 heads (MHA, ALiBi), intermediate 13696, vocab 125696, fused W_pack)",
            ("baichuan-inc/Baichuan2-13B-Base", "baichuan-inc/Baichuan2-13B-Chat",
             "baichuan2-13b-chat"),
            layers=40, hidden=5120, heads=40, kv_heads=40, intermediate=13696, vocab=125_696,
            max_positions=4096, fused_qkv=True,
        ),
        _yi("6B", 6_061_035_520, layers=32, hidden=4096, heads=32, kv_heads=4,
            intermediate=11008),
        _yi("9B", 8_829_407_232, layers=48, hidden=4096, heads=32, kv_heads=4,
            intermediate=11008),
        _yi("34B", 34_388_917_248, layers=60, hidden=7168, heads=56, kv_heads=8,
            intermediate=20480),
        _internlm("7b", 7_737_708_544, layers=32, hidden=4096, heads=32, kv_heads=8,
                  intermediate=14336),
        _internlm("20b", 19_861_149_696, layers=48, hidden=6144, heads=48, kv_heads=8,
                  intermediate=16384),
    )  # fmt: skip
    return qwen3 + distills + (deepseek_r1,) + llama + mistral + others


_SAME_ARCH = (
    _HF + " (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, "
    "intermediate_size, vocab_size and tie_word_embeddings equal to {base}'s config.json, so "
    "the parameter count is {base}'s)"
)


def same_architecture_releases() -> tuple[ModelPreset, ...]:
    """Releases people ask for by name whose config.json has exactly the architecture of a
    preset above (an earlier or later release, a code or reasoning fine-tune): a request
    for ``Qwen/QwQ-32B`` is sized as what it is and named as asked, instead of being
    refused or silently answered for another model."""
    base = {p.id: p for p in _first_presets() + chinese_favourites()}

    def like(base_id: str, repo: str, aliases: Sequence[str], **fields: int) -> ModelPreset:
        name = repo.split("/", 1)[1]
        preset = _like(
            base[base_id], name.lower(), name,
            _SAME_ARCH.format(repo=repo, base=base[base_id].display_name),
            (repo, *aliases),
        )  # fmt: skip
        return msgspec.structs.replace(preset, **fields) if fields else preset

    return (
        like("qwen2.5-7b", "Qwen/Qwen2-7B", ("Qwen/Qwen2-7B-Instruct",)),
        like("qwen2.5-72b", "Qwen/Qwen2-72B", ("Qwen/Qwen2-72B-Instruct",)),
        like("qwen2.5-7b", "Qwen/Qwen2.5-Coder-7B", ("Qwen/Qwen2.5-Coder-7B-Instruct",)),
        like("qwen2.5-32b", "Qwen/Qwen2.5-Coder-32B", ("Qwen/Qwen2.5-Coder-32B-Instruct",)),
        like("qwen2.5-32b", "Qwen/QwQ-32B", (), max_positions=40_960),
        like("yi-1.5-34b", "01-ai/Yi-34B", ("01-ai/Yi-34B-Chat",)),
        like("yi-1.5-6b", "01-ai/Yi-6B", ("01-ai/Yi-6B-Chat",)),
        _embedding_release(base["bert-large"], "BAAI/bge-large-en-v1.5",
                           "Qdrant/bge-large-en-v1.5-onnx/blob/4edbfe60e09d92aef82630a7c1474b93c4a4fc76"),
        _embedding_release(base["bert-base"], "BAAI/bge-base-en-v1.5",
                           "Xenova/bge-base-en-v1.5/blob/e2d28ebfab13ea949d9f56771a110479b7d55a8a"),
        *chinese_embedding_models(base["bert-large"]),
        *bge_rerankers(base["bert-base"], base["bert-large"]),
    )  # fmt: skip


_BGE_LARGE_ZH = (
    "https://huggingface.co/BAAI/bge-large-zh-v1.5/blob/79e7739b6ab944e86d6171e44d24c997fc1e0116"
)
_BGE_M3 = "https://huggingface.co/BAAI/bge-m3/blob/5617a9f61b028005a4858fdac845db406aefb181"
_MTEB_BGE = (
    "https://github.com/embeddings-benchmark/mteb/blob/e646368875c3d54e1e3b3a87ef54400c31993788/"
    "mteb/models/bge_models.py "
    "(these revisions pinned)"
)


def bert_encoder_params(*, layers: int, hidden: int, intermediate: int, vocab: int,
                        positions: int, token_types: int) -> int:  # fmt: skip
    """Exact parameter count of a BertModel/XLMRobertaModel with its pooler: word,
    position and token-type embeddings with their LayerNorm, per layer Q/K/V/O and the
    two GELU MLP matrices with biases and two LayerNorms, and the pooler's dense layer
    (reproduces BERT-large's 335,141,888)."""
    embeddings = (vocab + positions + token_types) * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * intermediate + intermediate
    layer += hidden + 4 * hidden
    return embeddings + layers * layer + hidden * hidden + hidden


def chinese_embedding_models(bert_large: ModelPreset) -> tuple[ModelPreset, ...]:
    """The default embedding models of Chinese RAG stacks (review 5 G6), from their
    config.json: bge-large-zh-v1.5 is BERT-large with BERT's 21,128-token Chinese
    vocabulary; bge-m3 is XLM-RoBERTa-large (250,002 tokens) with positions stretched to
    8,192. Both are served as encoders like BERT-large; the position tables (8.4M for
    bge-m3) count as block parameters in the FLOPs, about 3 % more than multiplied."""
    zh = bert_encoder_params(layers=24, hidden=1024, intermediate=4096, vocab=21_128,
                             positions=512, token_types=2)  # fmt: skip
    m3 = bert_encoder_params(layers=24, hidden=1024, intermediate=4096, vocab=250_002,
                             positions=8194, token_types=1)  # fmt: skip
    large_zh = msgspec.structs.replace(
        bert_large, id="bge-large-zh-v1.5", display_name="bge-large-zh-v1.5",
        params_b=zh / 1e9, vocab=21_128, aliases=("BAAI/bge-large-zh-v1.5",),
        source=f"{_BGE_LARGE_ZH}/config.json (BertModel: 24 layers, hidden 1024, 16 heads, "
        "intermediate 4096, vocab_size 21128, max_position_embeddings 512, type_vocab_size "
        f"2); {zh:,} parameters by the BertModel count; revision as pinned in {_MTEB_BGE}",
    )  # fmt: skip
    bge_m3 = msgspec.structs.replace(
        bert_large, id="bge-m3", display_name="bge-m3", params_b=m3 / 1e9, vocab=250_002,
        max_positions=8192, aliases=("BAAI/bge-m3",),
        source=f"{_BGE_M3}/config.json (XLMRobertaModel: 24 layers, hidden 1024, 16 heads, "
        "intermediate 4096, vocab_size 250002, max_position_embeddings 8194 = 8192 tokens + "
        "RoBERTa's 2 padding offsets, type_vocab_size 1; tokenizer_config.json "
        f"model_max_length 8192); {m3:,} parameters (the n_parameters MTEB lists for a "
        f"bge-m3 fine-tune of this shape); revision as pinned in {_MTEB_BGE}",
    )  # fmt: skip
    return large_zh, bge_m3


_BGE_RERANKERS = (
    "https://github.com/FlagOpen/FlagEmbedding/blob/9d4ec44dc8982b648b58a807c68d9820f86f08dd/"
    "FlagEmbedding/llm_reranker/README.md (model list: bge-reranker-base on xlm-roberta-base, "
    "bge-reranker-large on xlm-roberta-large, bge-reranker-v2-m3 on bge-m3)"
)
_XLMR_HEAD = (
    "huggingface/transformers src/transformers/models/xlm_roberta/modeling_xlm_roberta.py "
    "@c919542dd33c97943005f9a6e298e23d9ba6f009 (XLMRobertaForSequenceClassification: the "
    "encoder without its pooler, and XLMRobertaClassificationHead: dense hidden x hidden and "
    "out_proj hidden x num_labels, num_labels 1 for a reranker's score)"
)
_XLMR = "https://huggingface.co/FacebookAI/{repo}/blob/main/config.json"


def bge_rerankers(bert_base: ModelPreset, bert_large: ModelPreset) -> tuple[ModelPreset, ...]:
    """BAAI's cross-encoder rerankers, the second stage of Chinese RAG stacks (review 10
    R2): each is its base model's encoder with a one-score classification head, served
    like an embedding model (one forward pass over the query and passage pair). Shapes:
    xlm-roberta-base (12 layers, hidden 768, 12 heads, intermediate 3072) and -large (24,
    1024, 16, 4096), both vocab 250,002, 514 positions (512 tokens + RoBERTa's 2 padding
    offsets), one token type; v2-m3 is bge-m3's shape (8,192 tokens)."""

    def reranker(base: ModelPreset, name: str, positions: int, source: str) -> ModelPreset:
        if base.layers is None or base.hidden is None or base.intermediate is None:
            raise ValueError(f"{base.id} has no encoder shape")
        body = bert_encoder_params(layers=base.layers, hidden=base.hidden,
                                   intermediate=base.intermediate, vocab=250_002,
                                   positions=positions + 2, token_types=1)  # fmt: skip
        # the head replaces the pooler's dense layer with one of the same size, plus out_proj
        params = body + base.hidden + 1
        return msgspec.structs.replace(
            base, id=name, display_name=name, params_b=params / 1e9, vocab=250_002,
            max_positions=positions, aliases=(f"BAAI/{name}",), scores_pairs=True,
            source=f"{source}; {_BGE_RERANKERS}; {params:,} parameters: the encoder's count "
            f"by the XLMRobertaModel formula plus the score head ({_XLMR_HEAD})",
        )  # fmt: skip

    return (
        reranker(bert_base, "bge-reranker-base", 512,
                 _XLMR.format(repo="xlm-roberta-base") + " (12 layers, hidden 768, 12 heads, "
                 "intermediate 3072, vocab_size 250002, max_position_embeddings 514, "
                 "type_vocab_size 1)"),
        reranker(bert_large, "bge-reranker-large", 512,
                 _XLMR.format(repo="xlm-roberta-large") + " (24 layers, hidden 1024, 16 "
                 "heads, intermediate 4096, vocab_size 250002, max_position_embeddings 514, "
                 "type_vocab_size 1)"),
        reranker(bert_large, "bge-reranker-v2-m3", 8192,
                 f"{_BGE_M3}/config.json (bge-m3's shape: 8194 positions = 8192 tokens)"),
    )  # fmt: skip


_EMBEDDING_ARCH = (
    _HF + " (BertModel: hidden_size, num_hidden_layers, num_attention_heads, "
    "intermediate_size, vocab_size and max_position_embeddings equal to {base}'s config.json, "
    "so the parameter count is {base}'s; the same fields, with _name_or_path {repo}, in "
    "https://huggingface.co/{mirror}/config.json)"
)


def _embedding_release(base: ModelPreset, repo: str, mirror: str) -> ModelPreset:
    """An embedding model with exactly a BERT preset's architecture (BAAI's bge v1.5
    English models): an encoder, served as one forward pass per batch."""
    name = repo.split("/", 1)[1]
    source = _EMBEDDING_ARCH.format(repo=repo, base=base.display_name, mirror=mirror)
    return _like(base, name.lower(), name, source, (repo,))


def _distill(size: str, base_name: str, base: ModelPreset) -> ModelPreset:
    repo = f"deepseek-ai/DeepSeek-R1-Distill-{size}"
    return _like(
        base, f"deepseek-r1-distill-{size.lower()}", f"DeepSeek-R1-Distill-{size}",
        _DISTILL.format(base=base_name, repo=repo), (repo, f"r1-distill-{size.lower()}"),
    )  # fmt: skip


def _yi(
    size: str, params: int, *, layers: int, hidden: int, heads: int, kv_heads: int,
    intermediate: int,
) -> ModelPreset:  # fmt: skip
    repo = f"01-ai/Yi-1.5-{size}"
    return _decoder(
        f"yi-1.5-{size.lower()}", f"Yi-1.5-{size}", params,
        _HF.format(repo=repo) + " (Llama architecture, GQA, vocab 64000); exact count from "
        "the config formula",
        (repo, f"{repo}-Chat", f"yi1.5-{size.lower()}"),
        vocab=64_000, max_positions=4096, layers=layers, hidden=hidden, heads=heads,
        kv_heads=kv_heads, intermediate=intermediate,
    )  # fmt: skip


def _internlm(
    size: str, params: int, *, layers: int, hidden: int, heads: int, kv_heads: int,
    intermediate: int,
) -> ModelPreset:  # fmt: skip
    repo = f"internlm/internlm2_5-{size}"
    return _decoder(
        f"internlm2.5-{size}", f"InternLM2.5-{size.upper()}", params,
        _HF.format(repo=repo) + " (fused wqkv without bias, GQA, vocab 92544, untied output); "
        "exact count from the config formula",
        (repo, f"{repo}-chat", f"internlm2_5-{size}", f"internlm2.5-{size}-chat"),
        vocab=92_544, max_positions=32_768, fused_qkv=True, layers=layers, hidden=hidden,
        heads=heads, kv_heads=kv_heads, intermediate=intermediate,
    )  # fmt: skip


_DROP_TOKENS = frozenset({"instruct", "chat", "hf"})
_SPLIT = re.compile(r"[\s_\-]+")
_JUNK = re.compile(r"[\s_\-./()]+")


def fold_model_name(name: str) -> str:
    """Comparison key of a model name: case, org prefix, ``-Instruct``/``-Chat``/``-hf``
    suffixes and separators folded away (``meta-llama/Llama-2-7b-chat-hf`` -> ``llama27b``)."""
    base = name.strip().lower().rsplit("/", 1)[-1]
    tokens = [t for t in _SPLIT.split(base) if t and t not in _DROP_TOKENS]
    return _JUNK.sub("", "".join(tokens))


_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")
_FAMILY_JUNK = re.compile(r"[\s_\-./()]+|(?:instruct|chat|base|hf|fp8)$")


def family_and_size(name: str) -> tuple[str, float | None]:
    """``Qwen/Qwen3-8B-Instruct`` -> (``qwen3``, 8.0); ``deepseek-r1-distill-qwen-7b`` ->
    (``deepseekr1distillqwen``, 7.0); the first ``<number>b`` token is the size (MoE
    names ``30b-a3b`` count their total)."""
    base = name.strip().lower().rsplit("/", 1)[-1].replace("_", ".")
    match = _SIZE.search(base.replace("-", " "))
    if match is None:
        return _FAMILY_JUNK.sub("", base), None
    family = base[: match.start()].replace("-", " ")
    return re.sub(r"[\s_\-./()]+", "", family), float(match.group(1))


_CHECKPOINT = re.compile(
    r"[-_.](?:(?P<gptq>gptq)(?:[-_.]?(?P<gptq_bits>int4|int8|4bit|8bit))?|(?P<awq>awq)"
    r"|(?P<fp8>fp8)|(?P<bits>int4|int8))$",
    re.I,
)
"""The suffix of a quantized Hugging Face checkpoint of a preset's model: Qwen publishes
``Qwen2.5-72B-Instruct-GPTQ-Int4``/``-GPTQ-Int8``/``-AWQ`` (4-bit) and ``Qwen3-8B-FP8``
(https://huggingface.co/Qwen; AWQ is 4-bit weights, arXiv:2306.00978), the Qwen-1 chats
``Qwen-7B-Chat-Int4`` (GPTQ)."""


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """A quantized checkpoint of a preset: the architecture is the preset's, the suffix
    names the weight format."""

    preset: ModelPreset
    precision: Literal["int4", "int8", "fp8"]
    scheme: str
    """How its weights are stored, as the repo names it (``GPTQ int4``, ``AWQ``, ``FP8``)."""


_BRANDS = {
    "通义千问": "qwen", "千问": "qwen", "通义": "qwen", "智谱": "glm", "清言": "glm",
    "深度求索": "deepseek", "百川": "baichuan", "零一万物": "yi", "书生浦语": "internlm",
    "书生·浦语": "internlm", "浦语": "internlm", "羊驼": "llama", "骆驼": "llama",
}  # fmt: skip
"""Chinese names of model families -> the family as preset ids spell it (通义千问 is
Alibaba's Qwen, 智谱清言 Zhipu's GLM, 书生·浦语 Shanghai AI Lab's InternLM): a name
with the generation after the family (``千问2.5-7B``) resolves to that preset; without one
they suggest presets only, since ``通义千问7B`` could be Qwen, Qwen2 or Qwen2.5."""


def _latin_brand(name: str) -> str | None:
    """``通义千问7B`` -> ``qwen-7B``; ``None`` when no Chinese family name is in it."""
    for brand in sorted(_BRANDS, key=len, reverse=True):
        if brand in name:
            return name.replace(brand, f"{_BRANDS[brand]}-").replace("--", "-")
    return None


def _generations(family: str, rest: str) -> bool:
    """Whether a preset whose family is ``family`` + ``rest`` is one of the models a
    user's bare ``family`` means (review 8 K5: ``llama 70b`` suggested llama-2-7b and no
    Llama 3.x): any generation of a family named without one (``llama`` -> ``llama3.3``),
    and a release built on a named model (``deepseekr1`` -> ``deepseekr1distillqwen``),
    but not another generation of a named one (``qwen2`` is not ``qwen2.5``)."""
    if not rest:
        return False
    return not re.search(r"\d", family) or rest[0].isalpha()


class ModelRegistry:
    """Presets by id and alias; the first registration of an id wins (plugins before core)."""

    def __init__(self, presets: Iterable[ModelPreset]) -> None:
        self._by_id: dict[str, ModelPreset] = {}
        self._by_key: dict[str, ModelPreset] = {}
        for preset in presets:
            if preset.id in self._by_id:
                continue
            self._by_id[preset.id] = preset
            for name in (preset.id, preset.display_name, *preset.aliases):
                self._by_key.setdefault(fold_model_name(name), preset)

    def resolve(self, id_or_alias: str) -> ModelPreset | None:
        """The preset an id or alias names, or ``None``."""
        found = self._by_id.get(id_or_alias)
        if found is not None:
            return found
        found = self._by_key.get(fold_model_name(id_or_alias))
        if found is None and (latin := _latin_brand(id_or_alias)) is not None:
            # a Chinese family name with its generation (千问2.5-7B, 通义千问3-8B) names
            # one model (review 10 R3); without one (通义千问7B) it stays a suggestion
            brand = next(b for b in sorted(_BRANDS, key=len, reverse=True) if b in id_or_alias)
            family, size = family_and_size(latin)
            if size is not None and family != _BRANDS[brand]:
                return self._by_key.get(fold_model_name(latin))
        return found

    def checkpoint(self, name: str) -> Checkpoint | None:
        """The preset and weight format of a quantized checkpoint's name
        (``Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4`` -> qwen2.5-72b, int4), or ``None``."""
        match = _CHECKPOINT.search(name.strip())
        if match is None:
            return None
        preset = self.resolve(name.strip()[: match.start()])
        if preset is None:
            return None
        bits = (match["gptq_bits"] or match["bits"] or "").lower()
        if match["fp8"]:
            return Checkpoint(preset, "fp8", "FP8")
        if match["awq"]:
            return Checkpoint(preset, "int4", "AWQ")
        precision: Literal["int4", "int8"] = "int8" if bits.startswith(("int8", "8")) else "int4"
        scheme = f"GPTQ {precision}" if match["gptq"] else precision
        return Checkpoint(preset, precision, scheme)

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` preset ids closest to ``name`` (for 400 messages): the same family
        at the nearest sizes first (``qwen3-7b`` -> ``qwen3-8b``, ``qwen3-4b``), then
        spelling. Spelling alone suggests ``qwen-1.8b`` for ``qwen3-8b`` and
        ``llama-3.1-405b`` for ``glm-4-9b``."""
        latin = _latin_brand(name)
        family, size = family_and_size(latin or name)
        ids: list[str] = []
        if family:
            same = []
            for preset in self._by_id.values():
                p_family, p_size = family_and_size(preset.id)
                # a Chinese family name, or a Latin one without a generation (``llama``),
                # means every generation of it (Qwen, Qwen2, Qwen2.5; Llama 2, 3, 3.3);
                # a model's name, its releases built on it (deepseek-r1 -> its distills)
                wider = p_family.startswith(family) and (
                    latin or _generations(family, p_family[len(family) :])
                )
                if p_family == family or wider:
                    distance = abs(math.log(p_size / size)) if size and p_size else math.inf
                    # the newest generation of the plain model first (qwen2.5 before
                    # qwen2 and qwen, before qwen2.5-coder; llama-3.3 before llama-3.1)
                    rest = p_family[len(family) :] if wider else ""
                    newest = (*(-ord(c) for c in rest), 0)
                    derived = bool(re.search("[a-z]", rest))
                    same.append((distance, derived, newest, preset.params_b, preset.id))
            ids.extend(entry[-1] for entry in sorted(same))
        keys = difflib.get_close_matches(fold_model_name(name), self._by_key, n=n * 3, cutoff=0.5)
        for key in keys:
            preset_id = self._by_key[key].id
            if preset_id not in ids:
                ids.append(preset_id)
        return ids[:n]

    def all(self) -> tuple[ModelPreset, ...]:
        """Every preset, in registration order."""
        return tuple(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)
