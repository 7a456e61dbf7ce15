"""Errors in the request's language (review P10): a request that says ``lang: "zh"`` (or
whose ``Accept-Language`` prefers Chinese) is told what is wrong in Chinese; the field
(``key``), its ``source`` and the ``suggestions`` stay exactly as in English, since a
client sends those back, and the error body keeps its one shape."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

FINETUNE = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e7}
BAD_REQUESTS: dict[str, tuple[dict[str, Any], int, str]] = {
    "region": ({"workload": FINETUNE, "constraints": {"regions": ["cn-bejing"]}}, 400, "未知地域"),
    "model": ({"workload": {**FINETUNE, "model": "qwen-7b-chatx"}}, 400, "未知模型预设"),
    "provider": ({"workload": FINETUNE, "constraints": {"providers": ["aws"]}}, 400, "未知云厂商"),
    "accelerator": (
        {"workload": FINETUNE, "constraints": {"accelerators": ["A1000"]}}, 400, "未知加速卡"
    ),
    "spot-only serving": (
        {"workload": {"kind": "inference", "model": "qwen2.5-7b"},
         "constraints": {"billing": ["spot"]}}, 422, "随时可能被回收",
    ),
    "wrong type": ({"workload": {**FINETUNE, "seq_len": "2048"}}, 400, "应为整数，实际为字符串"),
    "bound": ({"workload": {**FINETUNE, "seq_len": 0}}, 400, "应为 ≥ 1 的整数"),
    "unknown field": ({"workload": {**FINETUNE, "seq_length": 2048}}, 400, "未知字段 `seq_length`"),
    "missing field": ({"workload": {"kind": "finetune"}}, 400, "缺少必填字段 `model`"),
    "quant_bits without qlora": ({"workload": {**FINETUNE, "quant_bits": 4}}, 400, "只适用于"),
    "prompt longer than context": (
        {"workload": {"kind": "inference", "model": "qwen2.5-7b", "prompt_len": 9000,
                      "context_len": 4096}}, 400, "超过了 context_len",
    ),
    "dpo with a reward model": (
        {"workload": {"kind": "rlhf", "model": "qwen2.5-7b", "algorithm": "dpo",
                      "reward_model": "qwen2.5-7b"}}, 400, "不运行奖励模型",
    ),
}  # fmt: skip
LATIN_WORDS = re.compile(r"\b[a-z]{3,} [a-z]{3,}\b")
"""Two English words in a row: an untranslated phrase (names and ids are single tokens)."""


def error(client: TestClient[Litestar], body: dict[str, Any], **headers: str) -> Any:
    return client.post("/v1/recommend", json=body, headers=headers)


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_a_chinese_request_is_refused_in_chinese_with_the_same_fields(
    client: TestClient[Litestar], case: str
) -> None:
    body, status, words = BAD_REQUESTS[case]
    zh = error(client, {**body, "lang": "zh"})
    en = error(client, {**body, "lang": "en"})
    assert zh.status_code == en.status_code == status
    zh_body, en_body = zh.json(), en.json()
    assert zh_body.keys() == en_body.keys()
    (zh_item,), (en_item,) = zh_body["extra"], en_body["extra"]
    assert {k: v for k, v in zh_item.items() if k != "message"} == {
        k: v for k, v in en_item.items() if k != "message"
    }
    assert words in zh_item["message"]
    assert not LATIN_WORDS.search(zh_item["message"]), zh_item["message"]
    assert zh_body["detail"] == "请求校验失败：POST /v1/recommend"
    assert en_body["detail"] == "Validation failed for POST /v1/recommend"


def test_accept_language_chooses_when_the_body_does_not(client: TestClient[Litestar]) -> None:
    body = BAD_REQUESTS["region"][0]
    by_header = error(client, body, **{"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert "未知地域" in by_header.json()["extra"][0]["message"]
    body_wins = error(client, {**body, "lang": "en"}, **{"accept-language": "zh-CN"})
    assert body_wins.json()["extra"][0]["message"].startswith("unknown region")
    by_english_header = error(client, body, **{"accept-language": "en-US,en;q=0.9"})
    assert by_english_header.json()["extra"][0]["message"].startswith("unknown region")


def test_a_request_that_says_no_language_is_refused_in_chinese_like_its_answer(
    client: TestClient[Litestar],
) -> None:
    """Review 3 R18f: without lang or Accept-Language the answer is Chinese, and so is
    the 400 for the same body (it was English) — also from the decoder and the MCP path."""
    answered = client.post("/v1/recommend", json={"workload": FINETUNE})
    assert answered.json()["lang"] == "zh"
    unsaid = error(client, BAD_REQUESTS["region"][0])
    assert unsaid.json()["detail"] == "请求校验失败：POST /v1/recommend"
    assert "未知地域" in unsaid.json()["extra"][0]["message"]
    decoder = error(client, {"workload": {**FINETUNE, "seq_length": 2048}})
    assert "未知字段 `seq_length`" in decoder.json()["extra"][0]["message"]
    misspelt = error(client, {"workload": {**FINETUNE, "seq_length": 2048}, "lang": "EN"})
    assert "未知字段" in misspelt.json()["extra"][0]["message"]  # lang refused too: not said


def test_estimate_and_offers_follow_accept_language(client: TestClient[Litestar]) -> None:
    zh = {"accept-language": "zh-CN"}
    estimate = client.post(
        "/v1/estimate", json={"workload": {**FINETUNE, "model": "qwen-7b-chatx"}}, headers=zh
    )
    assert estimate.status_code == 400
    assert "未知模型预设" in estimate.json()["extra"][0]["message"]
    # a city is read as its regions since review 8 (K3): a mistyped id is refused
    offers = client.get("/v1/offers", params={"region": "cn-bejing"}, headers=zh)
    assert offers.status_code == 400
    item = offers.json()["extra"][0]
    assert "未知地域" in item["message"]
    assert item["suggestions"][0] == "cn-beijing"


@pytest.mark.parametrize("body", [b'{"a":', b'{"workload": {"kind": "finetune", "mod'])
def test_a_truncated_body_is_malformed_json_not_an_unknown_field(
    client: TestClient[Litestar], body: bytes
) -> None:
    """The typed decoder stops at the first field it refuses, so ``{"a":`` used to read
    as "unknown field `a`"; what is wrong is the JSON."""
    response = client.post(
        "/v1/recommend", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON is malformed")


@pytest.mark.parametrize(
    ("params", "key", "zh"),
    [
        ({"sort": "cheap"}, "sort", "应为 memory、price、price_per_accelerator、total_memory 之一"),
        ({"limit": "x"}, "limit", "应为整数，实际为 'x'"),
        ({"limit": "0"}, "limit", "应为 ≥ 1 的整数"),
        ({"priced_only": "yes"}, "priced_only", "应为 true 或 false"),
        ({"sortby": "price"}, "sortby", "未知查询参数 'sortby'"),
        ({"sort": ["price", "memory"]}, "sort", "重复给出"),
        ({"min_accelerators": "4", "max_accelerators": "2"}, "max_accelerators",
         "max_accelerators（2）小于 min_accelerators（4）"),
    ],
)  # fmt: skip
def test_offers_query_errors_follow_accept_language(
    client: TestClient[Litestar], params: dict[str, Any], key: str, zh: str
) -> None:
    """Review N6: the query parser's own messages were English under zh."""
    said = client.get("/v1/offers", params=params, headers={"accept-language": "zh-CN"})
    assert said.status_code == 400
    item = said.json()["extra"][0]
    assert item["key"] == key
    assert zh in item["message"], item["message"]
    english = client.get("/v1/offers", params=params).json()["extra"][0]
    assert re.search(r"[\u4e00-\u9fff]", english["message"]) is None
    assert english.get("suggestions") == item.get("suggestions")


@pytest.mark.parametrize(
    ("placement", "workload", "key", "zh"),
    [
        ({"accelerator": "A10", "count": 3, "tensor_parallel": 2}, "inference",
         "placement.tensor_parallel", "必须整除设备数"),
        ({"accelerator": "A10", "count": 2, "pipeline_parallel": 2}, "inference",
         "placement.pipeline_parallel", "流水线并行只用于训练任务"),
        ({"accelerator": "A10", "count": 1, "zero_stage": 3}, "inference",
         "placement.zero_stage", "ZeRO 阶段只适用于训练任务"),
        ({"accelerator": "A1000", "count": 1}, "inference", "placement.accelerator", "未知加速卡"),
    ],
)  # fmt: skip
def test_estimate_placement_errors_follow_accept_language(
    client: TestClient[Litestar], placement: dict[str, Any], workload: str, key: str, zh: str
) -> None:
    body = {"workload": {"kind": workload, "model": "qwen2.5-7b"}, "placement": placement}
    said = client.post("/v1/estimate", json=body, headers={"accept-language": "zh-CN"})
    assert said.status_code == 400, said.text
    item = said.json()["extra"][0]
    assert item["key"] == key
    assert zh in item["message"], item["message"]


@pytest.mark.parametrize(
    ("body", "zh"),
    [(b'{"a":', "JSON 格式错误：输入数据不完整"), (b'{"x": tru}', "JSON 格式错误：非法字符（第 ")],
)
def test_malformed_json_is_said_in_chinese(
    client: TestClient[Litestar], body: bytes, zh: str
) -> None:
    headers = {"content-type": "application/json", "accept-language": "zh-CN"}
    said = client.post("/v1/recommend", content=body, headers=headers)
    assert said.status_code == 400
    assert said.json()["detail"].startswith(zh), said.json()
    english = client.post(
        "/v1/recommend", content=body, headers={"content-type": "application/json"}
    )
    assert english.json()["detail"].startswith("JSON is malformed: ")


@pytest.mark.parametrize(
    ("path", "params", "status", "zh"),
    [
        ("/v1/providers/aws/instance-types", {}, 404, "未知云厂商 'aws'"),
        ("/v1/providers/alibaba/instance-types", {"acelerator": "A100"}, 400, "未知查询参数"),
        ("/v1/providers/alibaba/instance-types", {"region": "cn-bejing"}, 400, "未知地域"),
        ("/v1/providers/alibaba/instance-types", {"limit": "0"}, 400, "应为 ≥ 1 的整数"),
        ("/v1/providers/alibaba/instance-types", {"accelerator": "A1000"}, 400, "未知加速卡"),
    ],
)  # fmt: skip
def test_instance_type_errors_follow_accept_language(
    client: TestClient[Litestar], path: str, params: dict[str, Any], status: int, zh: str
) -> None:
    """The catalog route's own errors (unknown provider, parameter, region) were English
    only, or not errors at all."""
    said = client.get(path, params=params, headers={"accept-language": "zh-CN"})
    english = client.get(path, params=params)
    assert said.status_code == english.status_code == status
    extra = said.json()["extra"]
    message = said.json()["detail"] if status == 404 else extra[0]["message"]
    assert zh in message, said.json()
    assert not LATIN_WORDS.search(message), message
    assert re.search(r"[\u4e00-\u9fff]", english.text) is None


def test_an_overlong_accept_language_is_refused_in_the_language_it_starts_with(
    client: TestClient[Litestar],
) -> None:
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b"}}
    long = "zh-CN," + ",".join(["en;q=0.1"] * 40)
    said = client.post("/v1/recommend", json=body, headers={"accept-language": long})
    assert said.status_code == 400
    item = said.json()["extra"][0]
    assert (item["key"], item["message"]) == ("accept_language", "应为长度 ≤ 256 的字符串")
