"""Session 14, branch words14 (docs/answer-review.md): review 13s S6 through the real app.

S6. LMDeploy's TurboMind is CUDA-only; on an Ascend NPU LMDeploy runs its PyTorch engine
through dlinfer (InternLM/lmdeploy@a5418b39 docs/en/get_started/ascend/get_started.md:
``PytorchEngineConfig(device_type="ascend")``, ``--backend pytorch --device ascend``), whose
``max_batch_size`` defaults to 256 there (InternLM/lmdeploy@726c5fe9 lmdeploy/utils.py
``get_max_batch_size``). An LMDeploy batch job on 910B said "LMDeploy (TurboMind)
max_batch_size 128"; a CUDA option keeps its words."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from service.planning import texts
from tests.answers import recommend

JOB: dict[str, Any] = {
    "kind": "inference",
    "model": "qwen2.5-7b",
    "engine": "lmdeploy",
    "output_tokens": 100_000_000,
}
WORDS = {
    "en": "(LMDeploy (PyTorch engine, dlinfer) max_batch_size 256 by default on Ascend, "
    "128 assumed)",
    "zh": "（LMDeploy（PyTorch 引擎，dlinfer） 在昇腾上的 max_batch_size 默认 256，此处按 128 计）",
}


def test_s6_an_ascend_option_names_lmdeploys_pytorch_engine(client: TestClient[Litestar]) -> None:
    body = {"workload": JOB, "constraints": {"accelerators": ["910B"]}}
    for lang in ("en", "zh"):
        answer = recommend(client, body, lang)
        assert answer["options"], answer
        for option in answer["options"]:
            assert option["accelerator"]["name"].startswith("Ascend"), option["accelerator"]
            said = [r for r in option["reasons"] if "max_batch_size" in r]
            assert len(said) == 1, option["reasons"]
            assert "TurboMind" not in said[0], said[0]
            assert WORDS[lang] in said[0], said[0]
        notes = answer["estimate"]["assumptions"]
        named = [a for a in notes if "TurboMind" in a]
        assert [a.count("TurboMind") for a in named] == [1], named  # only the decode note's
        assert "TurboMind is CUDA-only" in named[0], named
        assert named[0].startswith("Decode"), named
        assert "LMDeploy's PyTorch engine on Ascend" in named[0], named[0]
        pool = [a for a in notes if "cache_max_entry_count" in a]
        assert pool == [
            "LMDeploy's PyTorch engine gives its KV-cache pool cache_max_entry_count (0.8) of "
            "the memory left free after loading the weights (PytorchEngineConfig), so npu-smi "
            "shows more than the estimate."
        ], pool
        workspace = [a for a in notes if a.startswith("Inference workspace")]
        assert workspace == [
            "Inference workspace (sized for prefill chunks of up to 8192 tokens; LMDeploy "
            "(PyTorch engine, dlinfer) prefills 4096 tokens per step by default, "
            "max_prefill_token_num): one layer's intermediates for 8192 tokens plus fp32 "
            "logits of the last position per sequence."
        ], workspace


def test_s6_a_cuda_option_keeps_turbominds_words(client: TestClient[Litestar]) -> None:
    body = {"workload": JOB, "constraints": {"accelerators": ["A100-80GB"]}}
    for lang, words in (
        ("en", "(LMDeploy (TurboMind) max_batch_size 128)"),
        ("zh", "（LMDeploy（TurboMind） 的 max_batch_size 默认 128）"),
    ):
        answer = recommend(client, body, lang)
        first = answer["options"][0]
        notes = answer["estimate"]["assumptions"]
        assert any("(LMDeploy TurboMind: C++ engine" in a for a in notes), notes
        said = [r for r in first["reasons"] if "max_batch_size" in r]
        assert len(said) == 1, first["reasons"]
        assert words in said[0], said[0]


# F7 (review 13t): "a summary names the city asked for an option whose sold regions are
# unpublished (Tencent ap-shanghai: 腾讯云（上海） with the option's region unknown)". Not
# reproduced: every Tencent price is a list price (``region: null``, "the price applies
# wherever the type is sold", service/planning/schema.py), and the option's ``regions``
# are the type's published sold regions (DescribeZoneInstanceConfigInfos), which list
# ap-shanghai. An offer with no published region cannot pass a region constraint
# (filters.OfferFilter.group_reason), and an answer whose top option has none names no
# city. These pin that, so a change that names an unconfirmed city fails here.

LORA_7B: dict[str, Any] = {
    "kind": "finetune",
    "model": "qwen2.5-7b",
    "method": "lora",
    "tokens": 10_000_000,
}
L20_SERVING: dict[str, Any] = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8}


def _sold_regions(client: TestClient[Litestar], provider: str, instance_type: str) -> list[str]:
    page = client.get(f"/v1/providers/{provider}/instance-types", params={"limit": 500}).json()
    rows = {r["instance_type"]: r for r in page["items"]}
    regions: list[str] = rows[instance_type]["regions"]
    return regions


def test_f7_the_city_asked_is_named_only_where_the_catalog_sells_the_type(
    client: TestClient[Litestar],
) -> None:
    body = {
        "workload": LORA_7B,
        "constraints": {"providers": ["tencent"], "regions": ["ap-shanghai"]},
    }
    for lang, city in (("zh", "推荐腾讯云（上海） "), ("en", " on Tencent Cloud in Shanghai (")):
        answer = recommend(client, body, lang)
        first = answer["options"][0]
        assert city in answer["summary"], answer["summary"]
        assert first["regions"] == ["ap-shanghai"], first["regions"]
        assert first["region"] is None  # a list price: wherever the type is sold
        assert "ap-shanghai" in _sold_regions(client, "tencent", first["instance_type"])
        assert texts.t("regions_unknown", lang) not in first["warnings"], first["warnings"]


def test_f7_a_top_option_of_unpublished_regions_names_no_city(
    client: TestClient[Litestar],
) -> None:
    body = {"workload": L20_SERVING, "constraints": {"accelerators": ["L20"]}}
    for lang, head in (("zh", "推荐阿里云 ecs."), ("en", "Rent ecs.")):
        answer = recommend(client, body, lang)
        first = answer["options"][0]
        assert first["regions"] == [], first["regions"]
        assert _sold_regions(client, first["provider"], first["instance_type"]) == []
        assert texts.t("regions_unknown", lang) in first["warnings"], first["warnings"]
        assert answer["summary"].startswith(head), answer["summary"]
        if lang == "en":
            assert answer["summary"].startswith(f"Rent {first['instance_type']} on Alibaba Cloud (")
    # asked for Shanghai, the types of unpublished regions are not offered as Shanghai's
    shanghai = {**body, "constraints": {"accelerators": ["L20"], "regions": ["cn-shanghai"]}}
    for lang in ("zh", "en"):
        answer = recommend(client, shanghai, lang)
        assert answer["options"] == [], [o["regions"] for o in answer["options"]]
        assert "上海" not in answer["summary"], answer["summary"]
        assert "Shanghai" not in answer["summary"], answer["summary"]


QLORA_JOB: dict[str, Any] = {
    "kind": "finetune",
    "model": "qwen2.5-7b",
    "method": "qlora",
    "tokens": 20_000_000,
    "seq_len": 2048,
}
HALF = {
    "en": "QLoRA dequantizes the 4-bit base to {half} for every matmul",
    "zh": "QLoRA 每次矩阵乘都要把 4 位基座反量化为 {half}",
}


def test_qlora_on_a_part_without_bf16_dequantizes_to_fp16(client: TestClient[Litestar]) -> None:
    """bitsandbytes casts the dequantized base to the activations' dtype (``.to(A.dtype)``
    in ``MatMul4Bit``): fp16 on a V100 or T4, which are planned in FP16. The option said
    "to bf16" beside "V100-32GB has no BF16: planned in FP16"."""
    for accelerator, half in (("V100", "fp16"), ("T4", "fp16"), ("A10", "bf16")):
        body = {"workload": QLORA_JOB, "constraints": {"accelerators": [accelerator]}}
        for lang in ("en", "zh"):
            answer = recommend(client, body, lang)
            assert answer["options"], (accelerator, answer)
            for option in answer["options"]:
                said = [r for r in option["reasons"] if r.startswith("QLoRA")]
                assert len(said) == 1, option["reasons"]
                assert said[0].startswith(HALF[lang].format(half=half)), said[0]
            notes = [a for a in answer["estimate"]["assumptions"] if "dequantizes" in a]
            assert len(notes) == 1, answer["estimate"]["assumptions"]
            assert f"base weights to {half} for every matmul" in notes[0], notes[0]
