"""Presets: exact counts from their configs, ids, aliases and the plugin hook."""

from __future__ import annotations

import re

import pytest

from service.hooks.registries import default_model_registry
from service.sizing.presets import (
    ModelPreset,
    ModelRegistry,
    bert_encoder_params,
    builtin_presets,
    decoder_params,
    fold_model_name,
)

REGISTRY = ModelRegistry(builtin_presets())

ISSUE_IDS = {
    "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
    "llama-3.1-70b", "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-0.5b",
    "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",
    "qwen-1.8b", "qwen-7b", "qwen-14b", "qwen-72b", "deepseek-v3", "resnet-50", "bert-base",
    "bert-large", "yolov8-m", "vit-b-16", "sd-1.5",
}  # fmt: skip

HF_TOTALS = {
    # anchors-estimation.md §1.1 and the Hugging Face model cards / safetensors totals
    "llama-2-7b": 6_738_415_616,
    "llama-3-8b": 8_030_261_248,
    "qwen2.5-72b": 72_706_203_648,
    "qwen2.5-0.5b": 494_032_768,
    "qwen-7b": 7_721_324_544,
    "llama-3.1-405b": 405_853_388_800,
}


def test_issue_presets_all_present() -> None:
    assert {p.id for p in REGISTRY.all()} >= ISSUE_IDS


@pytest.mark.parametrize("preset", builtin_presets(), ids=lambda p: p.id)
def test_preset_id_and_source(preset: ModelPreset) -> None:
    assert re.fullmatch(r"[a-z0-9]+(?:[.-][a-z0-9]+)*", preset.id)
    assert len(preset.source) > 20
    assert preset.params_b > 0
    if preset.active_params_b is not None:
        assert preset.active_params_b < preset.params_b


DECODERS = [p for p in builtin_presets() if p.kind in ("decoder", "moe") and p.mla_kv_dim is None]


@pytest.mark.parametrize("preset", DECODERS, ids=lambda p: p.id)
def test_config_formula_reproduces_exact_count(preset: ModelPreset) -> None:
    """Every Llama/Mistral/Qwen/Mixtral preset's count follows from its config fields."""
    assert preset.layers
    assert preset.hidden
    assert preset.heads
    assert preset.kv_heads
    assert preset.intermediate
    assert preset.vocab
    exact = decoder_params(
        layers=preset.layers,
        hidden=preset.hidden,
        heads=preset.heads,
        kv_heads=preset.kv_heads,
        intermediate=preset.intermediate,
        vocab=preset.vocab,
        tied_embeddings=preset.tied_embeddings,
        qkv_bias=preset.qkv_bias,
        head_dim=preset.head_dim,
        experts=preset.experts,
        qk_norm=preset.qk_norm,
    )
    assert exact == round(preset.params_b * 1e9)
    if preset.active_params_b is not None:
        active = decoder_params(
            layers=preset.layers,
            hidden=preset.hidden,
            heads=preset.heads,
            kv_heads=preset.kv_heads,
            intermediate=preset.intermediate,
            vocab=preset.vocab,
            head_dim=preset.head_dim,
            experts=preset.experts,
            experts_per_token=preset.experts_per_token,
            qk_norm=preset.qk_norm,
        )
        assert active == round(preset.active_params_b * 1e9)


@pytest.mark.parametrize(("preset_id", "total"), HF_TOTALS.items())
def test_known_totals(preset_id: str, total: int) -> None:
    p = REGISTRY.resolve(preset_id)
    assert p is not None
    assert round(p.params_b * 1e9) == total


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("llama-2-7b", "llama-2-7b"),
        ("Llama-2-7B", "llama-2-7b"),
        ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("qwen2.5-7b", "qwen2.5-7b"),
        ("Qwen/Qwen-7B-Chat", "qwen-7b"),
        ("Qwen/Qwen-1_8B", "qwen-1.8b"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b"),
        ("meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b"),
        ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("resnet50", "resnet-50"),
        ("google-bert/bert-base-uncased", "bert-base"),
        ("runwayml/stable-diffusion-v1-5", "sd-1.5"),
        ("yolov8m", "yolov8-m"),
        ("vit_b_16", "vit-b-16"),
    ],
)
def test_aliases_resolve(name: str, expected: str) -> None:
    p = REGISTRY.resolve(name)
    assert p is not None
    assert p.id == expected


def test_llama3_and_31_are_distinct_presets() -> None:
    a, b = REGISTRY.resolve("llama-3-8b"), REGISTRY.resolve("llama-3.1-8b")
    assert a is not None
    assert b is not None
    assert a.id != b.id


def test_unknown_name_has_close_suggestions() -> None:
    assert REGISTRY.resolve("lama-2-7b") is None
    assert REGISTRY.suggest("lama-2-7b")[0] == "llama-2-7b"
    assert "qwen2.5-7b" in REGISTRY.suggest("qwen2.5-8b")
    assert REGISTRY.suggest("zzzzzzzz") == []


def test_fold() -> None:
    assert fold_model_name("meta-llama/Llama-2-7b-chat-hf") == "llama27b"
    assert fold_model_name("bert-base") == "bertbase"  # "base" is part of the name


def test_first_registration_of_an_id_wins() -> None:
    custom = ModelPreset(
        id="llama-2-7b", display_name="mine", kind="decoder", params_b=1.0, source="a test preset"
    )
    reg = ModelRegistry([custom, *builtin_presets()])
    found = reg.resolve("llama-2-7b")
    assert found is not None
    assert found.params_b == 1.0
    assert len(reg) == len(builtin_presets())


def test_default_registry_collects_the_hook() -> None:
    reg = default_model_registry()
    assert {p.id for p in reg.all()} >= ISSUE_IDS


ISSUE_12_IDS = {
    "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
    "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-r1", "deepseek-r1-distill-qwen-1.5b",
    "deepseek-r1-distill-qwen-7b", "deepseek-r1-distill-qwen-14b",
    "deepseek-r1-distill-qwen-32b", "deepseek-r1-distill-llama-8b",
    "deepseek-r1-distill-llama-70b", "glm-4-9b", "llama-3.2-1b", "llama-3.2-3b",
    "llama-3.3-70b", "mistral-7b-v0.3", "mixtral-8x22b", "baichuan2-7b", "baichuan2-13b",
    "yi-1.5-6b", "yi-1.5-9b", "yi-1.5-34b", "internlm2.5-7b", "internlm2.5-20b",
}  # fmt: skip

PUBLISHED_TOTALS = {
    # config-formula totals; they round to the model cards' figures (0.6B, 8.2B, 30.5B /
    # 3.3B active, 1.24B, 3.21B), and Qwen3-0.6B's exact 596,049,920 also appears in public
    # code (a Qwen3Config comment found with the search tools)
    "qwen3-0.6b": 596_049_920,
    "qwen3-8b": 8_190_735_360,
    "qwen3-30b-a3b": 30_532_122_624,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
}


def test_issue_12_presets_present_with_public_sources() -> None:
    presets = {p.id: p for p in REGISTRY.all()}
    assert set(presets) >= ISSUE_12_IDS
    for preset_id in ISSUE_12_IDS:
        assert "https://huggingface.co/" in presets[preset_id].source, preset_id


@pytest.mark.parametrize(("preset_id", "total"), PUBLISHED_TOTALS.items())
def test_issue_12_published_totals(preset_id: str, total: int) -> None:
    preset = REGISTRY.resolve(preset_id)
    assert preset is not None
    assert round(preset.params_b * 1e9) == total


def test_moe_active_counts() -> None:
    a3b = REGISTRY.resolve("Qwen/Qwen3-30B-A3B")
    a22b = REGISTRY.resolve("Qwen/Qwen3-235B-A22B")
    assert a3b is not None
    assert a22b is not None
    assert a3b.active_params_b == pytest.approx(3.35, abs=0.01)
    assert a22b.active_params_b == pytest.approx(22.19, abs=0.01)


@pytest.mark.parametrize(
    ("asked", "preset_id", "architecture_of"),
    [
        ("Qwen/Qwen2-7B-Instruct", "qwen2-7b", "qwen2.5-7b"),
        ("qwen2-72b", "qwen2-72b", "qwen2.5-72b"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-coder-7b", "qwen2.5-7b"),
        ("qwen2.5-coder-32b-instruct", "qwen2.5-coder-32b", "qwen2.5-32b"),
        ("Qwen/QwQ-32B", "qwq-32b", "qwen2.5-32b"),
        ("01-ai/Yi-34B-Chat", "yi-34b", "yi-1.5-34b"),
        ("yi-6b", "yi-6b", "yi-1.5-6b"),
    ],
)
def test_same_architecture_releases_resolve_to_themselves(
    asked: str, preset_id: str, architecture_of: str
) -> None:
    """Models people ask for by name that share a preset's config.json architecture are
    sized with it and answered under their own name (not refused, not renamed)."""
    preset = REGISTRY.resolve(asked)
    base = REGISTRY.resolve(architecture_of)
    assert preset is not None
    assert base is not None
    assert preset.id == preset_id
    shape = ("params_b", "layers", "hidden", "heads", "kv_heads", "intermediate", "vocab")
    assert [getattr(preset, f) for f in shape] == [getattr(base, f) for f in shape]
    assert preset.source.startswith(f"https://huggingface.co/{preset.aliases[0]}/")


@pytest.mark.parametrize(
    ("preset_id", "vocab", "positions", "token_types"),
    [("bert-large", 30522, 512, 2), ("bge-large-zh-v1.5", 21128, 512, 2),
     ("bge-m3", 250002, 8194, 1)],
)  # fmt: skip
def test_bert_style_counts_follow_from_config(
    preset_id: str, vocab: int, positions: int, token_types: int
) -> None:
    """The BertModel/XLMRobertaModel count reproduces BERT-large's 335,141,888 as loaded,
    so the bge presets' counts (config.json fields) follow from the same formula."""
    p = REGISTRY.resolve(preset_id)
    assert p is not None
    exact = bert_encoder_params(layers=24, hidden=1024, intermediate=4096, vocab=vocab,
                                positions=positions, token_types=token_types)  # fmt: skip
    assert exact == round(p.params_b * 1e9)
    assert p.vocab == (vocab if preset_id != "bert-large" else 30522)
