"""Well-formed JSON with values the service cannot serve: each is a 400 naming the field
(``extra[].key`` is the request path), with the closest valid names for unknown names."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.hostile.conftest import RECOMMEND_OK, assert_error, error_item


def _finetune(**fields: Any) -> dict[str, Any]:
    return {"workload": {"kind": "finetune", "model": "llama-2-7b", **fields}}


@pytest.mark.parametrize(
    ("workload", "key"),
    [
        ({"kind": "pretrain", "model": "llama-2-7b", "tokens": 0}, "workload.tokens"),
        ({"kind": "pretrain", "model": "llama-2-7b", "tokens": -1e9}, "workload.tokens"),
        ({"kind": "finetune", "model": "llama-2-7b", "seq_len": 0}, "workload.seq_len"),
        ({"kind": "finetune", "model": "llama-2-7b", "seq_len": -2048}, "workload.seq_len"),
        ({"kind": "finetune", "model": "llama-2-7b", "micro_batch_size": 0},
         "workload.micro_batch_size"),
        ({"kind": "finetune", "model": "llama-2-7b", "lora_rank": -16}, "workload.lora_rank"),
        ({"kind": "finetune", "model": {"params_b": 0}}, "workload.model.params_b"),
        ({"kind": "finetune", "model": {"params_b": -7}}, "workload.model.params_b"),
        ({"kind": "finetune", "model": {"params_b": 7, "hidden": 0}}, "workload.model.hidden"),
        ({"kind": "inference", "model": "llama-2-7b", "context_len": 0},
         "workload.context_len"),
        ({"kind": "inference", "model": "llama-2-7b", "concurrency": -1},
         "workload.concurrency"),
        ({"kind": "inference", "model": "llama-2-7b", "target_tokens_per_s": 0},
         "workload.target_tokens_per_s"),
        ({"kind": "preprocess", "data_gb": 0}, "workload.data_gb"),
        ({"kind": "preprocess", "data_gb": -5}, "workload.data_gb"),
        # Denormal sizes: positive, but they underflow to 0 in the arithmetic (log, /).
        ({"kind": "finetune", "model": {"params_b": 5e-324}}, "workload.model.params_b"),
        ({"kind": "inference", "model": {"params_b": 5e-324}}, "workload.model.params_b"),
        ({"kind": "preprocess", "data_gb": 5e-324}, "workload.data_gb"),
        ({"kind": "preprocess", "data_gb": 1e7, "target_hours": 5e-324},
         "workload.target_hours"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("path", ["/v1/estimate", "/v1/recommend"])
def test_zero_and_negative_sizes_are_400(
    hostile: TestClient[Litestar], path: str, workload: dict[str, Any], key: str
) -> None:
    """The bound broken, said in the answer's language: a recommend request without
    lang is refused in Chinese (``≥``), in English (``>=``) when English is asked."""
    name = key.rsplit(".", 1)[1]
    response = hostile.post(path, json={"workload": workload})
    body = assert_error(response, 400, key=key, source="body")
    message = error_item(body, key)["message"]
    if path == "/v1/recommend":
        assert re.fullmatch(rf"{name} 应为 [≥>] [0-9.e-]+ 的(?:数字|整数)", message), body
    else:
        assert re.fullmatch(rf"{name} must be (?:a number|an integer) >=? [0-9.e-]+", message), body
    english = hostile.post(path, json={"workload": workload}, headers={"accept-language": "en"})
    body = assert_error(english, 400, key=key, source="body")
    message = error_item(body, key)["message"]
    assert re.fullmatch(rf"{name} must be (?:a number|an integer) >=? [0-9.e-]+", message), body


@pytest.mark.parametrize(
    ("workload", "key", "bad"),
    [
        ({"kind": "finetune", "model": "llama-2-7b", "method": "dpo"}, "workload.method", "dpo"),
        ({"kind": "finetune", "model": "llama-2-7b", "precision": "fp4"},
         "workload.precision", "fp4"),
        ({"kind": "finetune", "model": "llama-2-7b", "optimizer": "lion"},
         "workload.optimizer", "lion"),
        ({"kind": "inference", "model": "llama-2-7b", "precision": "int3"},
         "workload.precision", "int3"),
        ({"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "quant_bits": 3},
         "workload.quant_bits", "3"),
    ],
)  # fmt: skip
def test_unknown_enum_values_are_400(
    hostile: TestClient[Litestar], workload: dict[str, Any], key: str, bad: str
) -> None:
    response = hostile.post("/v1/estimate", json={"workload": workload})
    body = assert_error(response, 400, key=key, source="body")
    assert bad in error_item(body, key)["message"], body


def test_unknown_workload_kind_is_400(hostile: TestClient[Litestar]) -> None:
    response = hostile.post("/v1/estimate", json={"workload": {"kind": "train", "model": "x"}})
    body = assert_error(response, 400, key="workload.kind", source="body")
    assert "train" in error_item(body, "workload.kind")["message"], body


def test_missing_workload_kind_is_400(hostile: TestClient[Litestar]) -> None:
    response = hostile.post("/v1/estimate", json={"workload": {"model": "llama-2-7b"}})
    assert_error(response, 400, key="workload", mentions=("kind",))


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({**RECOMMEND_OK, "objective": "cheapest"}, "objective"),
        ({**RECOMMEND_OK, "lang": "fr"}, "lang"),
        ({**RECOMMEND_OK, "constraints": {"billing": ["reserved"]}}, "constraints.billing[0]"),
    ],
)
def test_unknown_recommend_enums_are_400(
    hostile: TestClient[Litestar], body: dict[str, Any], key: str
) -> None:
    assert_error(hostile.post("/v1/recommend", json=body), 400, key=key, source="body")


@pytest.mark.parametrize("top_k", [0, -1, 51, 10**6, 10**30])
def test_top_k_out_of_bounds_is_400(hostile: TestClient[Litestar], top_k: int) -> None:
    response = hostile.post("/v1/recommend", json={**RECOMMEND_OK, "top_k": top_k})
    assert_error(response, 400, key="top_k", source="body")


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ({"max_nodes": 10**6}, "constraints.max_nodes"),
        ({"max_price_per_hour": 0}, "constraints.max_price_per_hour"),
        ({"budget": -1}, "constraints.budget"),
        ({"budget": 1e308}, "constraints.budget"),
        ({"deadline_hours": 1e308}, "constraints.deadline_hours"),
        ({"min_headroom_pct": 100}, "constraints.min_headroom_pct"),
        ({"providers": [""]}, "constraints.providers[0]"),
    ],
)
def test_constraint_bounds_are_400(
    hostile: TestClient[Litestar], value: dict[str, Any], key: str
) -> None:
    response = hostile.post("/v1/recommend", json={**RECOMMEND_OK, "constraints": value})
    assert_error(response, 400, key=key, source="body")


@pytest.mark.parametrize("value", ["7", True, None, [7]])
def test_wrong_json_types_are_400(hostile: TestClient[Litestar], value: object) -> None:
    response = hostile.post(
        "/v1/estimate", json={"workload": {"kind": "finetune", "model": {"params_b": value}}}
    )
    assert_error(response, 400, key="workload.model.params_b", source="body")


@pytest.mark.parametrize("path", ["/v1/estimate", "/v1/recommend"])
def test_unknown_preset_is_400_with_suggestions(hostile: TestClient[Litestar], path: str) -> None:
    response = hostile.post(path, json=_finetune(model="llama-2-7"))
    body = assert_error(response, 400, key="workload.model", source="body")
    item = error_item(body, "workload.model")
    assert "llama-2-7" in item["message"], item
    assert item.get("suggestions"), item
    assert "llama-2-7b" in item["suggestions"], item


def test_unknown_preset_with_hostile_text_is_400_without_echoing_markup(
    hostile: TestClient[Litestar],
) -> None:
    response = hostile.post("/v1/estimate", json=_finetune(model="<script>alert(1)</script>"))
    assert_error(response, 400, key="workload.model")
    assert response.headers["content-type"].startswith("application/json")


def test_quant_bits_without_qlora_is_400(hostile: TestClient[Litestar]) -> None:
    response = hostile.post("/v1/estimate", json=_finetune(method="lora", quant_bits=4))
    assert_error(response, 400, key="workload.quant_bits", mentions=("qlora",))


def test_heads_not_dividing_hidden_is_400(hostile: TestClient[Litestar]) -> None:
    model = {"params_b": 7, "layers": 32, "hidden": 4096, "heads": 33}
    response = hostile.post("/v1/estimate", json=_finetune(model=model))
    assert_error(response, 400, key="workload.model.heads", mentions=("divide",))


def test_zero_stage_on_inference_is_400(hostile: TestClient[Litestar]) -> None:
    body = {
        "workload": {"kind": "inference", "model": "llama-2-7b"},
        "placement": {"accelerator": "A100-80GB", "count": 1, "zero_stage": 2},
    }
    response = hostile.post("/v1/estimate", json=body)
    assert_error(response, 400, key="placement.zero_stage", mentions=("inference",))


def test_unknown_accelerator_in_placement_is_400_with_suggestions(
    hostile: TestClient[Litestar],
) -> None:
    body = {**_finetune(), "placement": {"accelerator": "A100-81GB", "count": 8}}
    response = hostile.post("/v1/estimate", json=body)
    body_ = assert_error(response, 400, key="placement.accelerator", source="body")
    assert error_item(body_, "placement.accelerator").get("suggestions"), body_


@pytest.mark.parametrize("count", [0, -8, 10**6])
def test_placement_count_out_of_bounds_is_400(hostile: TestClient[Litestar], count: int) -> None:
    body = {**_finetune(), "placement": {"accelerator": "A100-80GB", "count": count}}
    assert_error(hostile.post("/v1/estimate", json=body), 400, key="placement.count")


def test_unknown_provider_in_constraints_is_400_with_known_ones(
    hostile: TestClient[Litestar],
) -> None:
    body = {**RECOMMEND_OK, "constraints": {"providers": ["aliyun-intl"]}}
    response = hostile.post("/v1/recommend", json=body)
    body_ = assert_error(response, 400, key="constraints.providers[0]", source="body")
    assert "alibaba" in error_item(body_, "constraints.providers[0]")["suggestions"], body_


def test_unknown_accelerator_in_constraints_is_400_with_suggestions(
    hostile: TestClient[Litestar],
) -> None:
    body = {**RECOMMEND_OK, "constraints": {"accelerators": ["H100-81GB"]}}
    response = hostile.post("/v1/recommend", json=body)
    body_ = assert_error(response, 400, key="constraints.accelerators[0]", source="body")
    assert error_item(body_, "constraints.accelerators[0]")["suggestions"], body_


def test_extreme_but_valid_workload_answers_200(hostile: TestClient[Litestar]) -> None:
    """At the documented bounds the service answers (possibly with no option), not 5xx."""
    body = {
        "workload": {
            "kind": "pretrain",
            "model": {"params_b": 3000},
            "tokens": 1e15,
            "seq_len": 1_048_576,
            "micro_batch_size": 65_536,
        },
        "top_k": 50,
    }
    response = hostile.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    assert isinstance(response.json()["options"], list)
    estimate = hostile.post("/v1/estimate", json={"workload": body["workload"]})
    assert estimate.status_code in (200, 400), estimate.text
