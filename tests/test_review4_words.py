"""Review 4's words on Ascend serving (F14), on an accelerator no catalog lists (F17) and
on empty answers whose way out is another method or framework (F11), in zh and en."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient


def recommend(client: TestClient[Litestar], body: dict[str, Any]) -> Any:
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()


MINDIE_72B = {"kind": "inference", "model": "qwen2.5-72b", "engine": "mindie",
              "context_len": 8192, "concurrency": 16}  # fmt: skip


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_ascend_serving_advice_follows_the_engine(client: TestClient[Litestar], lang: str) -> None:
    body = recommend(client, {"workload": MINDIE_72B, "lang": lang,
                              "constraints": {"accelerators": ["昇腾910B"]}})  # fmt: skip
    advice = " ".join(a["text"] for a in body["advice"])
    option_words = " ".join(w for o in body["options"] for w in o["warnings"])
    for words in (advice, option_words):
        assert "TensorRT" not in words
        assert "ONNX Runtime" not in words
        assert "CANN 迁移" not in words
        assert "needs CANN migration" not in words
    assert "msModelSlim" in advice
    assert "W8A8" in advice
    assert "vllm-ascend" in advice
    assert "MindIE" in advice
    assert "torch_npu" in advice
    # said once, in the advice, when every option is on an NPU (session 11, K11)
    assert ("无需迁移" if lang == "zh" else "no user code is migrated") in advice
    assert ("无需迁移" if lang == "zh" else "no user code is migrated") not in option_words


def test_ascend_training_still_names_the_torch_npu_port(client: TestClient[Litestar]) -> None:
    body = recommend(client, {"workload": {"kind": "finetune", "model": "qwen2.5-7b",
                                           "method": "lora", "tokens": 10_000_000},
                              "constraints": {"accelerators": ["910B"]}, "lang": "en"})  # fmt: skip
    advice = " ".join(a["text"] for a in body["advice"])
    assert "PyTorch needs torch_npu" in advice
    assert "msModelSlim" not in advice


@pytest.mark.parametrize(
    ("lang", "fact", "substitute"),
    [("zh", "这 4 家云的目录里都没有 RTX-4090/RTX-4090D 机型", "架构的加速卡，最接近的方案是"),
     ("en", "None of the four clouds' catalogs list RTX-4090/RTX-4090D",
      " accelerator instead, the nearest option would be")],
)  # fmt: skip
def test_an_accelerator_no_catalog_lists_is_said_plainly_with_a_modern_substitute(
    client: TestClient[Litestar], lang: str, fact: str, substitute: str
) -> None:
    body = recommend(client, {"workload": {"kind": "inference", "model": "qwen2.5-7b",
                                           "context_len": 4096, "concurrency": 8},
                              "constraints": {"accelerators": ["RTX-4090", "4090D"]},
                              "lang": lang})  # fmt: skip
    assert not body["options"]
    assert fact in body["summary"]
    hint = next(h for h in body["relax"] if h["constraint"] == "accelerators")
    assert "V100" not in hint["nearest"]
    assert "P40" not in hint["nearest"]
    assert any(a in hint["nearest"] for a in ("A10", "L20", "L40", "A100", "H20", "H800"))
    assert any(substitute in w and hint["nearest"] in w for w in body["warnings"])


@pytest.mark.parametrize(
    ("lang", "words"),
    [("zh", "按单台 8×H20（每卡 96 GiB）计，每卡约需 135"), ("en", "each device needs about 135")],
)
def test_an_empty_answer_gives_the_memory_need_and_its_largest_part(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """Review 4 F11 (r04): 72B QLoRA at 32k tokens: about 135 GiB per device on 8 x H20,
    116 GiB of it activations (the estimate's figures, within 2 GiB)."""
    body = recommend(client, {"workload": {"kind": "finetune", "model": "qwen2.5-72b",
                                           "method": "qlora", "seq_len": 32768,
                                           "tokens": 20_000_000, "gradient_checkpointing": True},
                              "lang": lang})  # fmt: skip
    assert not body["options"]
    assert words in body["summary"]
    assert ("激活值（11" if lang == "zh" else "the activations (11") in body["summary"]


@pytest.mark.parametrize(
    ("lang", "words"), [("zh", "改用 QLoRA"), ("en", "With QLoRA instead of LoRA")]
)
def test_an_empty_lora_answer_offers_qlora_when_it_fits(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """Review 4 F11 (r01): 32B LoRA under ¥50/h fits nowhere; as QLoRA it does (4 x A10 or
    1 x A100-80GB at about ¥34-35/h): the lever is computed under the same price limit."""
    body = recommend(client, {"workload": {"kind": "finetune", "model": "qwen2.5-32b",
                                           "method": "lora", "seq_len": 4096,
                                           "tokens": 50_000_000},
                              "constraints": {"max_price_per_hour": 50}, "lang": lang})  # fmt: skip
    assert not body["options"]
    # 8 x H20 holds the LoRA (83.5 of 96 GiB): the price limit is the reason, named first
    assert ("每小时价格上限" if lang == "zh" else "per hour of use") in body["summary"]
    hint = next(h for h in body["relax"] if h["constraint"] == "method")
    price = float(re.search(r"¥([\d,.]+)(?:/小时|/h)", hint["nearest"])[1].replace(",", ""))
    assert price <= 50
    assert any(w.startswith(words) and hint["nearest"] in w for w in body["warnings"])


@pytest.mark.parametrize(("lang", "words"), [("zh", "改用 Unsloth 训练"), ("en", "With Unsloth")])
def test_a_long_sequence_answer_offers_a_chunked_loss_trainer(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """Review 4 F11 (r04, e03): 72B QLoRA at 32k fits one 80-96 GiB device with
    Unsloth's chunked cross-entropy; QLoRA is already asked, so no method lever."""
    body = recommend(client, {"workload": {"kind": "finetune", "model": "qwen2.5-72b",
                                           "method": "qlora", "seq_len": 32768,
                                           "tokens": 20_000_000, "gradient_checkpointing": True},
                              "lang": lang})  # fmt: skip
    assert not body["options"]
    # review 8 K7: Liger's fused loss in the same trainer is offered first
    assert [h["constraint"] for h in body["relax"]] == ["chunked_loss", "framework"]
    hint = body["relax"][1]
    assert "1×" in hint["nearest"]
    assert any(w.startswith(words) for w in body["warnings"])


@pytest.mark.parametrize(
    ("lang", "substitute", "wrong"),
    [("en", "With an Ampere accelerator instead", "Volta/Pascal"),
     ("zh", "改用 Ampere 架构的加速卡", "Volta/Pascal")],
)  # fmt: skip
def test_an_awq_substitute_names_the_generation_it_found(
    client: TestClient[Litestar], lang: str, substitute: str, wrong: str
) -> None:
    """Review 5 G11 (n14): AWQ on V100 is refused (vLLM's AWQ kernels need compute
    capability 7.5), and the hint then read "With an Volta/Pascal or newer accelerator":
    the very generations that fail, with the wrong article. It names the generation of the
    option it found (here an A100: Ampere)."""
    body = recommend(client, {"workload": {"kind": "inference",
                                           "model": "Qwen/Qwen2.5-32B-Instruct-AWQ",
                                           "context_len": 8192, "concurrency": 16},
                              "constraints": {"accelerators": ["V100"]}, "lang": lang})  # fmt: skip
    hint = next(h for h in body["relax"] if h["constraint"] == "accelerators")
    assert "A100" in hint["nearest"], hint
    said = " ".join(body["warnings"])
    assert substitute in said, said
    assert wrong not in said, said
    assert "an Volta" not in said, said
    assert "an Turing" not in said, said
