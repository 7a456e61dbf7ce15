"""Refused input a chatbot can correct by itself (expert review 3: R12, R13, R17, R18e):
an enum or type error names the values the field takes and the closest one, a number
sent as text says the number, concepts that are not fields say how to express them,
paths are full, and quantized checkpoint names resolve to their preset. Through the
HTTP app, in both languages."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

FINETUNE = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e7}
SERVING = {"kind": "inference", "model": "qwen2.5-7b"}


def refused(client: TestClient[Litestar], body: dict[str, Any] | bytes, lang: str) -> Any:
    if isinstance(body, bytes):
        response = client.post(
            "/v1/recommend",
            content=body,
            headers={"content-type": "application/json", "accept-language": lang},
        )
    else:
        response = client.post("/v1/recommend", json=body, headers={"accept-language": lang})
    assert response.status_code == 400, response.text
    (item,) = response.json()["extra"]
    return item


@pytest.mark.parametrize(
    ("body", "key", "suggestion", "en", "zh"),
    [
        ({"workload": {**FINETUNE, "method": "LoRA"}}, "workload.method", "lora",
         "method must be one of freeze, full, lora, qlora, not 'LoRA'; did you mean lora?",
         "method 应为 freeze、full、lora、qlora 之一，实际为 'LoRA'；是否想写 lora？"),
        ({"workload": {**FINETUNE, "kind": "fine-tune"}}, "workload.kind", "finetune",
         "kind must be one of pretrain, finetune, inference, rlhf, preprocess, not "
         "'fine-tune'; did you mean finetune?", "是否想写 finetune？"),
        ({"workload": FINETUNE, "lang": "cn"}, "lang", "zh", "did you mean zh?", "实际为 'cn'"),
        ({"workload": FINETUNE, "objective": "cheapest"}, "objective", "cost",
         "objective must be one of balanced, cost, time, not 'cheapest'; did you mean cost?",
         "是否想写 cost？"),
        ({"workload": FINETUNE, "objective": "便宜"}, "objective", "cost", "did you mean cost?",
         "objective 应为 balanced、cost、time 之一，实际为 '便宜'；是否想写 cost？"),
        ({"workload": FINETUNE, "constraints": {"billing": ["ondemand"]}},
         "constraints.billing[0]", "on_demand", "did you mean on_demand?", "on_demand"),
        # review 6 H8: the words of the clouds' own price pages
        ({"workload": FINETUNE, "constraints": {"billing": ["hourly"]}},
         "constraints.billing[0]", "on_demand", "did you mean on_demand?", "on_demand"),
        ({"workload": FINETUNE, "constraints": {"billing": ["按小时"]}},
         "constraints.billing[0]", "on_demand", "did you mean on_demand?", "on_demand"),
        ({"workload": FINETUNE, "constraints": {"billing": ["yearly"]}},
         "constraints.billing[0]", "monthly", "did you mean monthly?", "monthly"),
        ({"workload": {**FINETUNE, "tokens": "10M"}}, "workload.tokens", "10000000",
         "tokens must be a number, not the text '10M': write 10000000 (without quotes)",
         "tokens 应为数字，实际为字符串 '10M'：请写作 10000000（不加引号）"),
        ({"workload": FINETUNE, "constraints": {"deadline_hours": "3天"}},
         "constraints.deadline_hours", "72", "write 72", "请写作 72"),
        ({"workload": {**FINETUNE, "seq_len": "4k"}}, "workload.seq_len", "4096",
         "seq_len must be an integer, not the text '4k': write 4096", "应为整数，实际为字符串"),
        ({"workload": FINETUNE, "constraints": {"providers": "阿里云"}}, "constraints.providers",
         '["阿里云"]', 'providers is a list, not a single value: write ["阿里云"]',
         'providers 应为数组（列表），不能是单个值：请写作 ["阿里云"]'),
        ({"workload": FINETUNE, "model": "qwen2.5-7b"}, "model", "workload.model",
         "did you mean workload.model?", "是否想写 workload.model？"),
        ({"workload": {**FINETUNE, "model": "通义千问7B"}}, "workload.model", "qwen2.5-7b",
         "did you mean qwen2.5-7b, qwen2-7b, qwen-7b?", "是否想写 qwen2.5-7b"),
    ],
)  # fmt: skip
def test_a_refused_value_names_the_valid_ones_and_the_closest(
    client: TestClient[Litestar], body: dict[str, Any], key: str, suggestion: str, en: str,
    zh: str,
) -> None:  # fmt: skip
    english, chinese = refused(client, body, "en"), refused(client, body, "zh")
    assert english["key"] == chinese["key"] == key
    assert english["suggestions"][0] == chinese["suggestions"][0] == suggestion
    assert en in english["message"], english
    assert zh in chinese["message"], chinese
    assert "Expected `" not in english["message"]
    assert "null" not in chinese["message"]


@pytest.mark.parametrize(
    ("field", "suggestion", "en", "zh"),
    [
        ("users", "concurrency", "concurrency is the number of requests served at the same time",
         "concurrency 是同时处理的请求数"),
        ("qps", "target_tokens_per_s", "requests per second × output tokens per answer",
         "每秒请求数 × 每个回答的输出 tokens"),
        ("latency_ms", "concurrency", "There is no latency target field", "没有延迟目标字段"),
    ],
)  # fmt: skip
def test_serving_concepts_that_are_not_fields_say_how_to_express_them(
    client: TestClient[Litestar], field: str, suggestion: str, en: str, zh: str
) -> None:
    body = {"workload": {**SERVING, field: 100}}
    english, chinese = refused(client, body, "en"), refused(client, body, "zh")
    assert english["key"] == f"workload.{field}"
    assert english["suggestions"][0] == suggestion
    assert en in english["message"]
    assert zh in chinese["message"]
    assert chinese["message"].startswith(f"未知字段 `{field}`")


@pytest.mark.parametrize("field", ["epochs", "dataset_size"])
def test_epochs_and_dataset_size_say_tokens_is_their_product(
    client: TestClient[Litestar], field: str
) -> None:
    body = {"workload": {**FINETUNE, field: 3}}
    english, chinese = refused(client, body, "en"), refused(client, body, "zh")
    assert english["suggestions"][0] == "tokens"
    assert "epochs × tokens in the dataset" in english["message"]
    assert "epoch 数 × 数据集的 token 数" in chinese["message"]


def test_a_duplicate_key_is_named_by_its_full_path(client: TestClient[Litestar]) -> None:
    body = (
        b'{"workload": {"kind": "finetune", "model": "qwen2.5-7b", "seq_len": 2048, '
        b'"seq_len": 4096}}'
    )
    item = refused(client, body, "en")
    assert item["key"] == "workload.seq_len"
    assert item["message"].startswith("duplicate key `seq_len`")


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", "must be a JSON object, not a list"), ("zh", "请求体应为 JSON 对象，不能是数组")],
)
def test_a_body_that_is_not_an_object_is_said_so(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    item = refused(client, b"[1]", lang)
    assert item["key"] == "body"
    assert words in item["message"]


@pytest.mark.parametrize(
    ("query", "en", "zh"),
    [
        ("max_price=-1", "max_price must be a number > 0, not -1.0", "max_price 应为 > 0 的数字"),
        ("limit=0", "limit must be an integer >= 1, not 0", "limit 应为 ≥ 1 的整数，实际为 0"),
    ],
)
def test_a_query_bound_names_the_value_sent(
    client: TestClient[Litestar], query: str, en: str, zh: str
) -> None:
    english = client.get(f"/v1/offers?{query}", headers={"accept-language": "en"})
    chinese = client.get(f"/v1/offers?{query}", headers={"accept-language": "zh"})
    assert english.status_code == chinese.status_code == 400
    assert en in english.json()["extra"][0]["message"]
    assert zh in chinese.json()["extra"][0]["message"]


# --- quantized checkpoints (R17) ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "preset", "precision", "scheme"),
    [
        ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "qwen2.5-72b", "int4", "GPTQ int4"),
        ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8", "qwen2.5-72b", "int8", "GPTQ int8"),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b", "int4", "AWQ"),
        ("Qwen/Qwen3-8B-FP8", "qwen3-8b", "fp8", "FP8"),
    ],
)
def test_a_quantized_checkpoint_is_its_preset_in_its_precision(
    client: TestClient[Litestar], name: str, preset: str, precision: str, scheme: str
) -> None:
    quantized = {"workload": {"kind": "inference", "model": name}, "top_k": 1}
    explicit = {"workload": {"kind": "inference", "model": preset, "precision": precision},
                "top_k": 1}  # fmt: skip
    en = recommend(client, {**quantized, "lang": "en"})
    zh = recommend(client, {**quantized, "lang": "zh"})
    same = recommend(client, {**explicit, "lang": "en"})
    assert en["estimate"]["model"] == preset
    assert en["estimate"]["memory"]["weights_gib"] == pytest.approx(
        same["estimate"]["memory"]["weights_gib"], rel=1e-9
    )
    assert en["options"][0]["instance_type"] == same["options"][0]["instance_type"]
    said = f"{name} is the {scheme} checkpoint of {preset}"
    assert any(w.startswith(said) for w in en["warnings"]), en["warnings"]
    assert any(a.startswith(said) for a in en["estimate"]["assumptions"])
    assert any(f"{name} 是 {preset} 的 {scheme} 量化权重" in w for w in zh["warnings"])


def test_an_explicit_precision_that_contradicts_the_checkpoint_is_a_400(
    client: TestClient[Litestar],
) -> None:
    body = {"workload": {"kind": "inference", "model": "Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4",
                         "precision": "fp16"}}  # fmt: skip
    item = refused(client, body, "en")
    assert item["key"] == "workload.precision"
    assert item["suggestions"] == ["int4", "qwen2.5-72b"]
    assert "stores GPTQ int4 weights, so precision fp16 contradicts it" in item["message"]
    assert "与之矛盾" in refused(client, body, "zh")["message"]


def test_training_a_serving_checkpoint_points_to_its_preset(client: TestClient[Litestar]) -> None:
    body = {"workload": {**FINETUNE, "model": "Qwen/Qwen2.5-7B-Instruct-AWQ"}}
    item = refused(client, body, "en")
    assert item["key"] == "workload.model"
    assert item["suggestions"] == ["qwen2.5-7b"]
    qlora = {"workload": {**FINETUNE, "model": "Qwen/Qwen2.5-7B-Instruct-AWQ", "method": "qlora"}}
    assert recommend(client, qlora)["estimate"]["model"] == "qwen2.5-7b"


def test_estimate_sizes_a_checkpoint_in_its_precision(client: TestClient[Litestar]) -> None:
    def weights(model: str, **extra: str) -> float:
        body = {"workload": {"kind": "inference", "model": model, **extra}}
        response = client.post("/v1/estimate", json=body)
        assert response.status_code == 200, response.text
        return float(response.json()["memory"]["weights_gib"])

    int4 = weights("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4")
    assert int4 == pytest.approx(weights("qwen2.5-72b", precision="int4"), rel=1e-9)
    assert int4 < 0.4 * weights("qwen2.5-72b")


@pytest.mark.parametrize(
    ("family", "members"),
    [("A100", ["A100-40GB", "A100-80GB"]), ("V100", ["V100-16GB", "V100-32GB", "V100-32GB-PCIe"]),
     ("910B", ["Ascend-910B1", "Ascend-910B2", "Ascend-910B3", "Ascend-910B4"])],
)  # fmt: skip
def test_an_estimate_placed_on_a_family_names_its_chips(
    client: TestClient[Litestar], family: str, members: list[str]
) -> None:
    """R18c: 'unknown accelerator A100' for a family recommend and offers accept."""
    body = {"workload": SERVING, "placement": {"accelerator": family, "count": 1}}
    en = client.post("/v1/estimate", json=body, headers={"accept-language": "en"})
    zh = client.post("/v1/estimate", json=body, headers={"accept-language": "zh"})
    assert en.status_code == zh.status_code == 400
    item = en.json()["extra"][0]
    assert item["key"] == "placement.accelerator"
    assert item["suggestions"] == members
    assert f"{family!r} comes as " in item["message"]
    assert "unknown" not in item["message"]
    assert "请选择其一" in zh.json()["extra"][0]["message"]
