"""Session 13, branch left13 (docs/answer-review.md): what was left of review 10 R8 and
review 11, each through the real app.

1. ``workload.global_batch_size``: the sequences of one optimizer step, a training
   setting (micro batch x data-parallel replicas x accumulation steps, DeepSpeed's
   ``train_batch_size``). Sent, it replaces the planner's assumed batch (Stanford
   Alpaca's 128, or the power of two leaving a short run about 500 optimizer steps): the
   job is not spread past ``global batch / micro batch`` replicas, and the time counts
   one gradient exchange per optimizer step at the accumulation that batch implies.
   Serving has no optimizer step: there the field is a 400 that says so.
2. PPO / GRPO: one optimizer update takes verl's ``ppo_mini_batch_size`` of 256 prompts
   (times the responses per prompt), so their width is bounded too.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

LORA_7B: dict[str, Any] = {
    "kind": "finetune",
    "model": "qwen2.5-7b",
    "method": "lora",
    "tokens": 1_000_000_000,
    "seq_len": 2048,
}
"""1e9 tokens at 2k = 488,281 sequences: long enough for the recipe's 128 to bind."""


def _replicas(option: dict[str, Any]) -> int:
    devices = option["nodes"] * option["accelerator"]["count"]
    return devices // (option.get("tensor_parallel") or 1)


def _bound_said(option: dict[str, Any], lang: str) -> list[str]:
    mark = "More servers would not make it faster" if lang == "en" else "再加服务器也不会更快"
    return [r for r in option["reasons"] if r.startswith(mark)]


def _post(client: TestClient[Litestar], route: str, body: dict[str, Any], lang: str) -> Any:
    """``body`` posted to ``route`` in ``lang`` (recommend reads it from the body, estimate
    from the Accept-Language header)."""
    if route == "/v1/recommend":
        return client.post(route, json={**body, "lang": lang})
    return client.post(route, json=body, headers={"Accept-Language": lang})


def _error(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    extra = response.json()["extra"]
    assert len(extra) == 1, extra
    return dict(extra[0])


# --- 1. global_batch_size on recommend ----------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_global_batch_bounds_a_fine_tunes_width_and_its_time(
    client: TestClient[Litestar], lang: str
) -> None:
    asked = {"objective": "time", "top_k": 5}
    free = recommend(client, {**asked, "workload": LORA_7B}, lang)["options"]
    bounded = recommend(client, {**asked, "workload": {**LORA_7B, "global_batch_size": 32}}, lang)[
        "options"
    ]
    assert free
    assert bounded
    assert _replicas(free[0]) == 128  # 16 x 8 A100-80GB: the default 128 (and max_nodes)
    for option in bounded:
        assert _replicas(option) <= 32, (option["instance_type"], option["nodes"])
    top = bounded[0]
    assert _replicas(top) == 32  # 4 x 8: one sequence per replica per optimizer step
    # a quarter of the devices: about four times as long (the fixed start-up aside)
    assert 3.0 < top["hours"] / free[0]["hours"] < 4.5
    said = _bound_said(top, lang)
    assert len(said) == 1, top["reasons"]
    assert "32" in said[0]
    assert "500" not in said[0]  # the batch asked, not the short-run rule


def test_a_global_batch_lifts_the_short_runs_smaller_batch(
    client: TestClient[Litestar],
) -> None:
    # review 10 R8: 1e8 tokens at 4k get a global batch of 32 by default (4 x 8 A100)
    workload = {"kind": "finetune", "model": "qwen2.5-32b", "method": "lora",
                "tokens": 100_000_000, "seq_len": 4096}  # fmt: skip
    asked = {"objective": "time", "constraints": {"deadline_hours": 12}, "lang": "en"}
    default = recommend(client, {**asked, "workload": workload})["options"][0]
    assert _replicas(default) == 32
    wide = recommend(client, {**asked, "workload": {**workload, "global_batch_size": 128}})
    top = wide["options"][0]
    assert _replicas(top) > 32
    assert top["hours"] < default["hours"]


def test_a_larger_micro_batch_takes_its_share_of_the_global_batch(
    client: TestClient[Litestar],
) -> None:
    workload = {**LORA_7B, "global_batch_size": 64, "micro_batch_size": 4}
    body = recommend(client, {"workload": workload, "objective": "time", "lang": "en"})
    assert body["options"]
    assert all(_replicas(o) <= 16 for o in body["options"])  # 4 x 16 = 64


def test_pre_training_with_a_global_batch_is_bounded_by_it(
    client: TestClient[Litestar],
) -> None:
    workload = {"kind": "pretrain", "model": "llama-3-8b", "tokens": 100_000_000_000,
                "seq_len": 4096, "global_batch_size": 64}  # fmt: skip
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 20_000},
         "lang": "en"},
    )  # fmt: skip
    assert body["options"]
    assert all(_replicas(o) <= 64 for o in body["options"])
    assert "pre-training" in _bound_said(body["options"][0], "en")[0]


@pytest.mark.parametrize("algorithm", ["dpo", "ppo", "grpo"])
def test_rlhf_takes_a_global_batch(client: TestClient[Litestar], algorithm: str) -> None:
    workload = {"kind": "rlhf", "algorithm": algorithm, "model": "qwen2.5-1.5b",
                "tokens": 10_000_000_000, "global_batch_size": 16}  # fmt: skip
    body = recommend(
        client,
        {"workload": workload, "objective": "time", "constraints": {"deadline_hours": 5000}},
        "en",
    )
    assert body["options"]
    assert all(_replicas(o) <= 16 for o in body["options"])


# --- 1. what is refused ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "serving takes no optimizer steps"),
        ("zh", "推理没有优化步"),
    ],
)
@pytest.mark.parametrize("route", ["/v1/recommend", "/v1/estimate"])
def test_serving_with_a_global_batch_is_a_400_that_says_why(
    client: TestClient[Litestar], lang: str, said: str, route: str
) -> None:
    workload = {"kind": "inference", "model": "qwen2.5-7b", "global_batch_size": 32}
    error = _error(_post(client, route, {"workload": workload}, lang))
    assert error["key"] == "workload.global_batch_size"
    assert said in error["message"], error["message"]


@pytest.mark.parametrize("value", [0, 65_537, 12.5])
@pytest.mark.parametrize("route", ["/v1/recommend", "/v1/estimate"])
def test_a_global_batch_out_of_range_is_a_400(
    client: TestClient[Litestar], value: float, route: str
) -> None:
    workload = {**LORA_7B, "global_batch_size": value}
    error = _error(_post(client, route, {"workload": workload}, "en"))
    assert error["key"] == "workload.global_batch_size"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"micro_batch_size": 8, "global_batch_size": 4}, "at least one micro-batch"),
        ({"micro_batch_size": 4, "global_batch_size": 18}, "whole number of micro-batches"),
        ({"gradient_accumulation_steps": 4, "global_batch_size": 6}, "accumulation steps"),
    ],
)
@pytest.mark.parametrize("route", ["/v1/recommend", "/v1/estimate"])
def test_a_global_batch_that_no_layout_can_take_is_a_400(
    client: TestClient[Litestar], extra: dict[str, int], said: str, route: str
) -> None:
    workload = {**LORA_7B, **extra}
    error = _error(_post(client, route, {"workload": workload}, "en"))
    assert error["key"] == "workload.global_batch_size"
    assert said in error["message"], error["message"]


# --- 1. global_batch_size on estimate ------------------------------------------------

FULL_7B = {"kind": "finetune", "model": "qwen2.5-7b", "method": "full",
           "tokens": 1_000_000_000, "seq_len": 2048}  # fmt: skip
ON_16 = {"accelerator": "A100-80GB", "count": 16, "nodes": 2, "zero_stage": 2}


def test_estimate_times_one_gradient_exchange_per_optimizer_step(
    client: TestClient[Litestar],
) -> None:
    def hours(workload: dict[str, Any]) -> float:
        r = client.post("/v1/estimate", json={"workload": workload, "placement": ON_16})
        assert r.status_code == 200, r.text
        return float(r.json()["time"]["hours"])

    every_micro_step = hours(FULL_7B)  # no batch given: an exchange per micro-step
    accumulated = hours({**FULL_7B, "global_batch_size": 512})  # 32 micro-steps a step
    same = hours({**FULL_7B, "gradient_accumulation_steps": 32})
    assert accumulated < every_micro_step
    assert accumulated == pytest.approx(same, rel=1e-9)  # 512 = 1 x 16 x 32


def test_estimate_refuses_more_replicas_than_the_global_batch_has_room_for(
    client: TestClient[Litestar],
) -> None:
    body = {"workload": {**FULL_7B, "global_batch_size": 8}, "placement": ON_16}
    error = _error(_post(client, "/v1/estimate", body, "en"))
    assert error["key"] == "workload.global_batch_size"
    assert "16 data-parallel replicas" in error["message"], error["message"]


# --- 2. PPO / GRPO: verl's 256 prompts per optimizer update --------------------------


@pytest.mark.parametrize(("algorithm", "most"), [("ppo", 256), ("grpo", 1280)])
def test_ppo_and_grpo_are_bounded_by_verls_mini_batch(
    client: TestClient[Litestar], algorithm: str, most: int
) -> None:
    # before: unbounded, 64 x 8 A100-80GB (512 replicas) for PPO and GRPO alike
    workload = {"kind": "rlhf", "algorithm": algorithm, "model": "qwen2.5-1.5b",
                "tokens": 100_000_000_000}  # fmt: skip
    body = recommend(
        client,
        {"workload": workload, "objective": "time",
         "constraints": {"deadline_hours": 5000, "max_nodes": 64}},
        "en",
    )  # fmt: skip
    options = body["options"]
    assert options
    assert all(_replicas(o) <= most for o in options)
    if algorithm == "ppo":
        top = options[0]
        assert _replicas(top) == 256
        assert "every 256 sequences" in _bound_said(top, "en")[0]


# --- 4. an explicit engine for an image model ------------------------------------------


@pytest.mark.parametrize("route", ["/v1/recommend", "/v1/estimate"])
@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "text engines do not serve diffusion pipelines"),
        ("zh", "文本推理引擎不运行扩散模型流水线"),
    ],
)
def test_vllm_sent_for_a_diffusion_model_is_a_400(
    client: TestClient[Litestar], route: str, lang: str, said: str
) -> None:
    # before: engine "vllm" was the field's default, so it could not be told from a
    # request that left it out, and the image pipeline was planned as if it were absent
    workload = {"kind": "inference", "model": "sdxl", "concurrency": 2, "engine": "vllm"}
    body: dict[str, Any] = {"workload": workload}
    if route == "/v1/estimate":
        body["placement"] = {"accelerator": "A10", "count": 1}
    error = _error(_post(client, route, body, lang))
    assert error["key"] == "workload.engine"
    assert said in error["message"], error["message"]
    assert "vLLM" in error["message"]


def test_no_engine_still_means_vllm_for_a_text_model_and_the_pipeline_for_an_image_one(
    client: TestClient[Litestar],
) -> None:
    text = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8}
    left_out = client.post("/v1/estimate", json={"workload": text,
                                                 "placement": {"accelerator": "A10"}})  # fmt: skip
    sent = client.post("/v1/estimate", json={"workload": {**text, "engine": "vllm"},
                                             "placement": {"accelerator": "A10"}})  # fmt: skip
    assert left_out.status_code == sent.status_code == 200
    assert left_out.json() == sent.json()
    image = {"kind": "inference", "model": "sdxl", "concurrency": 2}
    assert client.post("/v1/recommend", json={"workload": image, "top_k": 1}).status_code == 200


def test_the_contract_says_the_engine_has_no_fixed_default() -> None:
    import json
    from pathlib import Path

    contract = json.loads(
        (Path(__file__).resolve().parent.parent / "openapi/openapi.json").read_text()
    )
    engine = contract["components"]["schemas"]["Inference"]["properties"]["engine"]
    assert engine.get("default") is None


# --- 5. a reranker's rate in pairs scored --------------------------------------------

RERANK = {"kind": "inference", "model": "bge-reranker-v2-m3", "target_tokens_per_s": 200_000}


@pytest.mark.parametrize(
    ("lang", "pairs", "not_said"),
    [
        ("en", "query–passage pairs scored per second", "sequences per second encoded"),
        ("zh", "每秒打分的查询–段落对", "每秒编码约"),
    ],
)
def test_a_reranker_is_said_to_score_query_passage_pairs(
    client: TestClient[Litestar], lang: str, pairs: str, not_said: str
) -> None:
    for objective in ("cost", "time"):
        body = recommend(client, {"workload": RERANK, "objective": objective, "top_k": 3}, lang)
        options = body["options"]
        assert options
        assert pairs in body["summary"], body["summary"]
        assert not_said not in body["summary"]
        for option in options:
            rates = [r for r in option["reasons"] if pairs in r]
            assert rates, option["reasons"]
            assert not [r for r in option["reasons"] if not_said in r], option["reasons"]
        assert any(pairs in w for w in body["warnings"]), body["warnings"]  # the target read


def test_an_embedding_model_still_encodes_sequences(client: TestClient[Litestar]) -> None:
    workload = {**RERANK, "model": "bge-m3"}
    body = recommend(client, {"workload": workload, "top_k": 1}, "en")
    assert "sequences per second encoded" in body["summary"]
    assert "pairs" not in body["summary"]


def test_the_reranker_estimate_states_its_rate_in_pairs(client: TestClient[Litestar]) -> None:
    workload = {"kind": "inference", "model": "bge-reranker-base", "concurrency": 32}
    r = client.post(
        "/v1/estimate", json={"workload": workload, "placement": {"accelerator": "A10"}}
    )
    assert r.status_code == 200, r.text
    rate = [a for a in r.json()["assumptions"] if a.startswith("Encoder throughput")]
    assert rate
    assert "query–passage pairs scored per second" in rate[0]


# --- 6. the fewest accelerators over every kind in the catalog ------------------------

V3_FULL = {"kind": "finetune", "model": "deepseek-v3", "method": "full", "tokens": 100_000_000}
FEWEST = re.compile(r"the fewest that hold it are (\d+) \((\d+) servers of (\d+)×([\w-]+)\)")


def _fewest(answer: dict[str, Any]) -> tuple[int, str]:
    said = [w for w in answer["warnings"] if "the fewest that hold it" in w]
    assert len(said) == 1, answer["warnings"]
    found = FEWEST.search(said[0])
    assert found, said[0]
    return int(found.group(1)), found.group(4)


def test_the_fewest_accelerators_are_looked_for_in_every_kind_not_only_the_ranked_ones(
    client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 8 K9's count came from the kinds of server among the ten cheapest options
    without the limit: a kind ranked below them was never asked. Ranked to one option
    (8 x Ascend-910B3 servers, the cheapest), the count must still be H20's."""
    monkeypatch.setattr("service.planning.recommend.BEYOND_LIMIT_KINDS", 1)
    answer = recommend(client, {"workload": V3_FULL, "constraints": {"max_accelerators": 8}}, "en")
    assert answer["options"] == []
    assert _fewest(answer) == (144, "H20")  # before: 224 Ascend-910B3, the cheapest's kind
    # no other kind holds it on as few: A100-80GB and 910B3 do not at 144
    for other in ("A100-80GB", "Ascend-910B3"):
        at = {"accelerators": [other], "accelerator_count": 144, "max_nodes": 64}
        held = recommend(client, {"workload": V3_FULL, "constraints": at}, "en")
        assert held["options"] == [], (other, held["options"][0]["instance_type"])


def test_the_fewest_accelerators_stay_within_the_accelerators_asked(
    client: TestClient[Litestar],
) -> None:
    constraints = {"max_accelerators": 8, "accelerators": ["910B"]}
    answer = recommend(client, {"workload": V3_FULL, "constraints": constraints}, "en")
    count, accelerator = _fewest(answer)
    assert accelerator.startswith("Ascend-910B")
    assert count > 144
