"""Review 7, the low and medium findings left by its first branch (docs: /v1/recommend
answers through the real app):

* J29: the Volta caveat follows the serving engine: vLLM's V1 sentence for vLLM, none for
  LMDeploy, whose TurboMind serves FP16 and AWQ/GPTQ INT4 on V100; SGLang never lands there;
* J11/J19: autoscaling and scale-to-zero are online-serving advice, never given to an
  offline batch job; an encoder is told what INT8 buys it (throughput, not memory);
* J21: the spot total of a zh summary is one clean clause (no 按按), in every billing mode;
* J9/J17/J3: the English catalog-confidence warning is one sentence, as the Chinese one, and
  the cataloguer's notes stay in the instance-type catalog;
* J16: the memory sentence of an empty answer is at the accelerator count the user fixed.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend
from tests.test_review7 import FULL_70B_ON_16

CODER_32B_INT4_ON_V100 = {
    "workload": {
        "kind": "inference",
        "model": "qwen2.5-coder-32b",
        "precision": "int4",
        "concurrency": 16,
        "context_len": 8192,
    },
    "constraints": {"accelerators": ["V100"]},
}


def _warnings(body: dict[str, Any]) -> list[str]:
    return [w for o in body["options"] for w in o["warnings"]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lmdeploy_on_a_v100_gets_no_vllm_caveat(client: TestClient[Litestar], lang: str) -> None:
    workload = {**CODER_32B_INT4_ON_V100["workload"], "engine": "lmdeploy"}
    body = recommend(client, {**CODER_32B_INT4_ON_V100, "workload": workload}, lang)
    assert body["options"]
    assert all(o["accelerator"]["name"].startswith("V100") for o in body["options"])
    said = _warnings(body)
    assert not any("vLLM" in w for w in said), said  # neither V1 nor its AWQ kernels
    assert not any("V1" in w for w in said), said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_vllm_on_a_v100_keeps_its_v1_and_awq_caveats(
    client: TestClient[Litestar], lang: str
) -> None:
    workload = {**CODER_32B_INT4_ON_V100["workload"], "engine": "vllm"}
    body = recommend(client, {**CODER_32B_INT4_ON_V100, "workload": workload}, lang)
    assert body["options"]
    for option in body["options"]:
        said = " ".join(option["warnings"])
        assert "V1" in said, said
        assert "AWQ" in said, said


def test_plain_pytorch_on_a_v100_is_told_of_flash_attention_not_of_vllm(
    client: TestClient[Litestar],
) -> None:
    body = {
        "workload": {"kind": "inference", "model": "qwen2.5-7b", "engine": "hf", "concurrency": 4},
        "constraints": {"accelerators": ["V100"]},
    }
    said = _warnings(recommend(client, body, "en"))
    assert said
    assert any("FlashAttention-2" in w and "SDPA" in w for w in said), said
    assert not any("V1 engine" in w for w in said), said


def test_sglang_never_lands_on_a_v100(client: TestClient[Litestar]) -> None:
    workload = {**CODER_32B_INT4_ON_V100["workload"], "engine": "sglang"}
    body = recommend(client, {**CODER_32B_INT4_ON_V100, "workload": workload}, "en")
    assert body["options"] == []


BATCH_30B = {
    "workload": {
        "kind": "inference",
        "model": "qwen3-30b-a3b",
        "output_tokens": 500_000_000,
        "context_len": 4096,
    },
    "constraints": {"providers": ["tencent"]},
}
ONLINE_7B = {"workload": {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 32}}
EMBEDDINGS = {
    "workload": {
        "kind": "inference",
        "model": "bge-m3",
        "target_tokens_per_s": 1_024_000,
        "context_len": 512,
    },
}
AUTOSCALING = {"en": ("autoscale", "scale to zero"), "zh": ("配置弹性伸缩", "缩到零")}


def _serving(body: dict[str, Any]) -> str:
    found = [a["text"] for a in body["advice"] if a["topic"] == "serving"]
    assert len(found) == 1, body["advice"]
    return str(found[0])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("precision", ["bf16", "int4"])
def test_a_batch_job_gets_no_autoscaling_advice(
    client: TestClient[Litestar], lang: str, precision: str
) -> None:
    workload = {**BATCH_30B["workload"], "precision": precision}
    text = _serving(recommend(client, {**BATCH_30B, "workload": workload}, lang))
    assert not any(word in text for word in AUTOSCALING[lang]), text
    assert ("offline" if lang == "en" else "离线") in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_online_serving_keeps_its_autoscaling_advice(
    client: TestClient[Litestar], lang: str
) -> None:
    text = _serving(recommend(client, ONLINE_7B, lang))
    assert all(word in text for word in AUTOSCALING[lang]), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_encoder_is_told_int8_buys_throughput(client: TestClient[Litestar], lang: str) -> None:
    text = _serving(recommend(client, EMBEDDINGS, lang))
    assert "INT8" in text, text
    assert not any(word in text for word in ("INT4", "vLLM", "scale to zero", "缩到零")), text
    assert ("throughput" if lang == "en" else "吞吐") in text, text


FULL_7B = {
    "workload": {
        "kind": "finetune",
        "model": "qwen2.5-7b",
        "method": "full",
        "seq_len": 4096,
        "tokens": 300_000_000,
    },
    "top_k": 1,
}


@pytest.mark.parametrize(
    ("billing", "words"),
    [
        ("spot", ("以按量价格估算，总费用约 ¥", "at the on-demand price.")),
        ("on_demand", ("，总费用约 ¥", "in total.")),
        ("monthly", ("，总费用约 ¥", "in total.")),
    ],
)
def test_the_summary_total_is_one_clean_clause_in_every_billing(
    client: TestClient[Litestar], billing: str, words: tuple[str, str]
) -> None:
    constraints: dict[str, Any] = {"billing": [billing]}
    if billing == "spot":
        constraints["interruptible"] = True
    for lang, word in zip(("zh", "en"), words, strict=True):
        body = recommend(client, {**FULL_7B, "constraints": constraints}, lang)
        assert body["options"][0]["billing"] == billing
        summary = body["summary"]
        assert word in summary, summary
        assert not any(w in summary for w in ("按按", "估算价计", "on-demand estimate")), summary


MINDIE_72B_ON_910B = {
    "workload": {
        "kind": "inference",
        "model": "qwen2.5-72b",
        "engine": "mindie",
        "concurrency": 16,
    },
    "constraints": {"accelerators": ["910B3"]},
    "top_k": 5,
}


def test_the_english_catalog_confidence_warning_is_one_sentence(
    client: TestClient[Litestar],
) -> None:
    en = recommend(client, MINDIE_72B_ON_910B, "en")
    zh = recommend(client, MINDIE_72B_ON_910B, "zh")
    en_said = [w for w in _warnings(en) if w.startswith("Catalog confidence")]
    zh_said = [w for w in _warnings(zh) if w.startswith("目录可信度")]
    assert en_said
    assert len(en_said) == len(zh_said)
    for warning in en_said:
        assert len(warning) < 260, warning  # was 500-900 characters of cataloguing notes
        assert warning.count(". ") == 0, warning
        assert warning.endswith("."), warning
        assert all(w in warning for w in ("official source", "console")), warning
        assert not any(w in warning for w in ("user reports", "Snt9")), warning


def test_the_cataloguers_notes_stay_in_the_instance_type_catalog(
    client: TestClient[Litestar],
) -> None:
    option = next(
        o
        for o in recommend(client, MINDIE_72B_ON_910B, "en")["options"]
        if o["confidence"] != "high"
    )
    rows: list[dict[str, Any]] = []
    while True:
        response = client.get(
            f"/v1/providers/{option['provider']}/instance-types", params={"offset": len(rows)}
        )
        assert response.status_code == 200, response.text
        page = response.json()
        rows.extend(page["items"])
        if not page["items"] or len(rows) >= page["total"]:
            break
    row = next(r for r in rows if r["instance_type"] == option["instance_type"])
    assert len(row["notes"] or "") > 100


FULL_70B_ON_16_INTERRUPTIBLE = {
    **FULL_70B_ON_16,
    "constraints": {**FULL_70B_ON_16["constraints"], "interruptible": True},
}
"""Review 7's J16 job (:data:`tests.test_review7.FULL_70B_ON_16`), interruptible."""


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ("16 accelerators asked", "2 servers of 8×H20", "86.4 GiB usable")),
        ("zh", ("要求的 16 张卡", "2 台 8×H20", "可用 86.4 GiB")),
    ],
)
def test_the_memory_sentence_is_at_the_accelerator_count_asked(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    body = recommend(client, FULL_70B_ON_16_INTERRUPTIBLE, lang)
    assert body["options"] == []
    said = body["summary"]  # review 8 K2: no allowed layout holds it, said first
    assert all(word in said for word in words), said
    assert not any(w in said for w in ("159.9", "one server of", "单台")), said
