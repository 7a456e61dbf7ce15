"""Serving over pipeline stages: each stage caches only its own layers (review 5 G1, G4,
G10, G12).

A replica of DeepSeek-R1 over 2 servers of 8 H20 (tensor parallel 8, 2 pipeline stages)
was sized with the whole KV cache on every device: 68.6 GiB at 32k context x 32 users in
FP8, so 108.9 GiB per device and an empty answer. A pipeline stage runs, and caches, its
own layers only (vLLM's ``get_pp_indices`` splits the 61 layers 31 + 30), and MLA's
latent is replicated over the tensor-parallel ranks, so the heaviest stage holds 31/61 of
the cache: about 34.9 GiB, 75.2 GiB per device of vLLM's 86.4 usable — SGLang's
documented FP8 layout for R1 (2 x 8 H20).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.planning.unpriced import unpriced_order
from tests.test_multinode_serving import recommend

R1_FP8_LONG = {"kind": "inference", "model": "deepseek-r1", "precision": "fp8",
               "context_len": 32768, "concurrency": 32}  # fmt: skip
H20_USABLE = 96 * 0.9
"""vLLM's default gpu_memory_utilization of an H20 (the planner's default headroom)."""


def estimate(client: TestClient[Litestar], workload: dict[str, Any], **placement: Any) -> Any:
    response = client.post("/v1/estimate", json={"workload": workload, "placement": placement})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_stage_caches_only_its_own_layers(client: TestClient[Litestar]) -> None:
    one = estimate(client, R1_FP8_LONG, accelerator="H20", count=8)["memory"]
    two = estimate(client, R1_FP8_LONG, accelerator="H20", count=16, nodes=2)
    memory = two["memory"]
    # MLA: 576 latent values x 61 layers x 2 B = 70,272 B per token, replicated over TP
    full = 70272 * 32768 * 32 / 2**30
    assert one["kv_cache_gib"] == pytest.approx(full, rel=1e-6)  # 68.6 GiB on one server
    assert memory["kv_cache_gib"] == pytest.approx(full * 31 / 61, rel=1e-6)  # 34.9 GiB
    assert memory["weights_gib"] == pytest.approx(one["weights_gib"] / 2, rel=1e-6)
    assert memory["per_device_gib"] == pytest.approx(75.2, abs=0.5)
    assert two["placement"]["fits"] is True
    assert two["placement"]["pipeline_parallel"] == 2


def test_three_stages_divide_the_cache_by_layers(client: TestClient[Litestar]) -> None:
    """61 layers over 3 stages: the heaviest holds 21 of them."""
    r1 = {**R1_FP8_LONG, "precision": "bf16"}
    one = estimate(client, r1, accelerator="H20", count=8)["memory"]
    three = estimate(client, r1, accelerator="H20", count=24, nodes=3)["memory"]
    assert three["kv_cache_gib"] == pytest.approx(one["kv_cache_gib"] * 21 / 61, rel=1e-6)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_r1_at_32k_for_32_users_is_planned_on_two_h20_servers(
    client: TestClient[Litestar], lang: str
) -> None:
    answer = recommend(client, R1_FP8_LONG, lang)
    options = answer["options"]
    assert options, answer["warnings"]
    top = options[0]
    # prices unknown: the reference layout (2 x 8) before 3 x 4 (review 5 G12)
    assert (top["accelerator"]["name"], top["accelerator"]["count"], top["nodes"]) == (
        "H20", 8, 2,
    )  # fmt: skip
    for o in options:
        assert o["per_device_gib"] <= o["accelerator"]["memory_gib"] * 0.9 + 1e-6, o
    sized = estimate(client, R1_FP8_LONG, accelerator="H20", count=16, nodes=2)
    assert top["per_device_gib"] == pytest.approx(sized["memory"]["per_device_gib"], abs=0.01)
    assert top["per_device_gib"] <= H20_USABLE


def test_r1_in_bf16_at_32k_for_32_users_spans_h20_servers(client: TestClient[Litestar]) -> None:
    """BF16 (1,250 GiB of weights) with the same cache: 3-4 servers of 8 H20 hold it."""
    workload = {"kind": "inference", "model": "deepseek-ai/DeepSeek-R1", "context_len": 32768,
                "concurrency": 32}  # fmt: skip
    options = recommend(client, workload, "zh", accelerators=["H20"])["options"]
    assert options
    for o in options:
        assert o["accelerator"]["count"] == 8, o
        assert 3 <= o["nodes"] <= 4, o


def test_an_empty_answer_quotes_the_widest_replica_it_tried(
    client: TestClient[Litestar],
) -> None:
    """When no replica over up to 4 servers holds the job, the figure is for 4 servers,
    not for the one server the planner went past."""
    huge = {**R1_FP8_LONG, "context_len": 131072, "concurrency": 256}
    for lang, span, single in (
        ("zh", "即使一个副本跨 4 台 8×H20", "按单台"),
        ("en", "even with one replica over 4 servers of 8×H20", "on one server of"),
    ):
        answer = recommend(client, huge, lang, accelerators=["H20"])
        assert not answer["options"]
        # review 8 K2: when no allowed server holds the job, the memory sentence leads
        said = " ".join([answer["summary"], *answer["warnings"]])
        assert span in answer["summary"], said
        assert single not in said, said
        assert ("KV 缓存" if lang == "zh" else "the KV cache") in said


def test_unpriced_spanning_replicas_rank_fewer_servers_first() -> None:
    """Unknown prices: a replica of 2 servers before one of 3, though it has more cards;
    among replicas that do not span (stages 1) the fewest accelerators still lead."""
    two_by_eight = unpriced_order(16, 96.0, 128, 1024.0, 2, -1045.0, stages=2)
    three_by_four = unpriced_order(12, 96.0, 64, 512.0, 3, -626.0, stages=3)
    assert two_by_eight < three_by_four
    assert unpriced_order(1, 24.0, 8, 32.0, 1, -10.0) < unpriced_order(
        8, 80.0, 96, 1024.0, 1, -90.0
    )


R1_A100 = {"kind": "inference", "model": "deepseek-r1", "context_len": 8192, "concurrency": 16}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_deepseek_advice_offers_int8_where_there_is_no_fp8(
    client: TestClient[Litestar], lang: str
) -> None:
    """The advice for R1 in BF16 on A100 names the INT8 (W8A8) route on 2 servers, which
    the planner itself plans, and carries no request field name (review 5 G4)."""
    answer = recommend(client, R1_A100, lang, accelerators=["A100"])
    said = {a["topic"]: a["text"] for a in answer["advice"]}["precision"]
    assert "INT8" in said
    assert "fp8" not in said.replace("fp8_cast_bf16.py", "")  # FP8 the format, not a value
    assert "precision 设为" not in said
    assert "set precision to" not in said
    if lang == "zh":
        assert "只能用 BF16" not in said
        assert "改用 FP8 精度" in said
        assert "2 台 8×A100" in said
    else:
        assert "need the BF16 copy" not in said
        assert "2 servers of 8 A100s" in said
    # what the advice says the planner does: INT8 R1 on 2 x 8 A100-80GB and 2 x 8 910B3
    for accelerator in ("A100-80GB", "Ascend-910B3"):
        int8 = recommend(client, {**R1_A100, "precision": "int8"}, accelerators=[accelerator])
        eights = [o for o in int8["options"] if o["accelerator"]["count"] == 8]
        assert eights, (accelerator, int8["warnings"])
        assert {o["nodes"] for o in eights} == {2}, accelerator


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_spanning_plan_names_the_engine_asked_for(
    client: TestClient[Litestar], lang: str
) -> None:
    """A MindIE plan over 2 servers says MindIE, and not that it is vLLM's way (review 5
    G10); a vLLM plan still cites vLLM's guide."""
    mindie = {"kind": "inference", "model": "deepseek-v3", "precision": "int8",
              "engine": "mindie", "context_len": 8192, "concurrency": 16}  # fmt: skip
    options = recommend(client, mindie, lang, accelerators=["Ascend-910B3"])["options"]
    spans = [o for o in options if o["nodes"] > 1]
    assert spans
    for o in spans:
        said = " ".join(o["reasons"])
        assert "MindIE" in said, said
        assert "vLLM" not in said, said
    v3 = {"kind": "inference", "model": "deepseek-v3"}
    o = recommend(client, v3, lang, accelerators=["A100-80GB"])["options"][0]
    said = " ".join(o["reasons"])
    assert "vLLM" in said
    assert ("vLLM 分布式推理指南" if lang == "zh" else "vLLM's distributed serving guide") in said


def test_w8a8_on_ascend_is_not_called_unverified(client: TestClient[Litestar]) -> None:
    """msModelSlim's W8A8 is the documented INT8 of MindIE, vLLM-Ascend and SGLang on Atlas
    A2 (910B): an INT8 plan there carries no "kernels not verified" warning (review 5
    G10); INT4, which this service has no source for on Ascend, still does."""
    mindie = {"kind": "inference", "model": "qwen2.5-72b", "precision": "int8",
              "engine": "mindie"}  # fmt: skip
    for precision, warned in (("int8", False), ("int4", True)):
        job = {**mindie, "precision": precision}
        options = recommend(client, job, "zh", accelerators=["Ascend-910B3"])["options"]
        assert options
        for o in options:
            said = " ".join(o["warnings"])
            assert ("量化推理算子未经核实" in said) is warned, (precision, said)


def test_mindie_is_planned_on_ascend_only(client: TestClient[Litestar]) -> None:
    """MindIE runs on Ascend NPUs only: once a stage caches only its own layers, 4 x 8
    V100 hold DeepSeek-V3 in INT8, and they must still not be offered under MindIE."""
    job = {"kind": "inference", "model": "deepseek-v3", "precision": "int8",
           "engine": "mindie", "context_len": 8192, "concurrency": 16}  # fmt: skip
    answer = recommend(client, job, "zh", providers=["huawei"])
    assert answer["options"]
    assert {o["accelerator"]["name"].split("-")[0] for o in answer["options"]} == {"Ascend"}
    for lang, said in (("zh", "只在昇腾上运行"), ("en", "runs on Ascend only")):
        empty = recommend(client, {**job, "model": "qwen2.5-7b"}, lang, accelerators=["A10"])
        assert not empty["options"]
        # said first, in the summary (session 11 W5), or among the warnings
        told = " ".join([empty["summary"], *empty["warnings"]])
        assert said in told, told
