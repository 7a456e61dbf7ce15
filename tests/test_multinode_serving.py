"""Serving a model no single server holds (review 4 R1): ``/v1/recommend`` spans servers.

DeepSeek-V3 in bf16 (671B parameters, about 1,250 GiB of weights) or Llama-3.1-405B in
bf16 (about 755 GiB) fits no 8-accelerator server of the catalog, and the planner
answered "not enough accelerator memory" while ``/v1/estimate`` sized the same job on two
servers (tensor parallel 8 within each, pipeline stages across them:
:mod:`service.sizing.replicas`). The planner now places such a model the way the
estimate and vLLM's distributed serving guide do — tensor parallel within a server,
pipeline parallel over the fewest servers whose memory holds it — prices every server,
and decodes at one server's rate per replica. A model one server holds is never split.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

V3 = {"kind": "inference", "model": "deepseek-v3"}
L405 = {"kind": "inference", "model": "llama-3.1-405b", "precision": "bf16"}
HEADROOM = 0.10
"""``min_headroom_pct``'s default: what each device must keep free."""


def recommend(
    client: TestClient[Litestar], workload: dict[str, Any], lang: str = "en", **c: Any
) -> Any:
    body = {"workload": workload, "constraints": c, "lang": lang, "top_k": 20}
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def node_prices(client: TestClient[Litestar], accelerator: str) -> dict[tuple[str, ...], float]:
    """One server's hourly price per (provider, type, region, billing), from /v1/offers."""
    page = client.get("/v1/offers", params={"accelerator": accelerator, "limit": 500}).json()
    return {
        (o["provider"], o["instance_type"], o["region"] or "", o["billing"]): o["price_per_hour"]
        for o in page["items"]
        if o["price_per_hour"] is not None
    }


@pytest.mark.parametrize("workload", [V3, L405], ids=["deepseek-v3", "llama-405b-bf16"])
def test_a_model_no_server_holds_spans_servers(
    client: TestClient[Litestar], workload: dict[str, Any]
) -> None:
    answer = recommend(client, workload)
    options = answer["options"]
    assert options, answer["summary"]
    for o in options:
        per_node = o["accelerator"]["count"]
        memory = o["accelerator"]["memory_gib"]
        assert o["nodes"] >= 2, o
        # every device holds its share with the headroom asked for
        assert o["per_device_gib"] <= memory * (1 - HEADROOM) + 1e-6, o
        assert o["headroom_gib"] == pytest.approx(memory - o["per_device_gib"], abs=0.01)
        # tensor parallel within one server, never across
        assert o["tensor_parallel"] == per_node, o
        assert f"pipeline parallel {o['nodes']}" in o["reasons"][0]
        spans = [r for r in o["reasons"] if "spans" in r]
        assert len(spans) == 1, o["reasons"]
        assert f"spans {o['nodes']} servers" in spans[0]
        assert f"({o['nodes'] * per_node} accelerators)" in spans[0]
        assert f"tensor parallel {per_node} within a server" in spans[0]


def test_deepseek_v3_layouts_are_the_fewest_servers_that_hold_it(
    client: TestClient[Litestar],
) -> None:
    """bf16 weights of 671B parameters are 1,250 GiB: 2 servers of 8 x 96 GiB (H20:
    about 79.5 GiB per device of 86.4 usable) but 3 of 8 x 80 GiB (A100: 2 servers would
    need 79.5 GiB of 72) and 3 of 8 x 64 GiB (Ascend 910B3)."""
    for accelerator, nodes in (("H20", 2), ("A100-80GB", 3), ("Ascend-910B3", 3)):
        answer = recommend(client, V3, accelerators=[accelerator])
        options = [o for o in answer["options"] if o["accelerator"]["count"] == 8]
        assert options, (accelerator, answer["summary"])
        for o in options:
            assert o["nodes"] == nodes, (accelerator, o)
            assert o["tensor_parallel"] == 8
            assert f"pipeline parallel {nodes}" in " ".join(o["reasons"])
    # at most 20 accelerators: 8-card servers are out (3 needed), and a replica over 5
    # servers of 4 or 9 of 2 is past what anyone deploys (see the next test)
    small = recommend(client, V3, accelerators=["A100-80GB"], max_accelerators=20)
    assert not small["options"]
    assert "exceed the limit of 20 accelerators" in small["warnings"][0], small["warnings"]


def test_a_replica_spans_a_few_large_servers_only(client: TestClient[Litestar]) -> None:
    """Multi-server serving as it is deployed (SGLang's DeepSeek-V3 guide: 2 nodes of 8
    H20/H800/H100, or 4 Atlas 800I A3; vLLM's guide: tensor parallel = the GPUs of a
    server, pipeline = the servers): servers of at least 4 accelerators, at most 4 per
    replica. Fifteen 1-GPU H20 VMs in a pipeline is not a serving plan, priced or not."""
    for workload in (V3, L405):
        options = recommend(client, workload)["options"]
        assert options
        for o in options:
            assert o["accelerator"]["count"] >= 4, o
            assert 2 <= o["nodes"] <= 4, o
    # a 16 x A10 server joins its cards over PCIe only: its tensor ring would cross the CPU
    # sockets (NCCL's 10 GB/s), so it is no stage, priced low or not
    assert not recommend(client, V3, accelerators=["A10"])["options"]
    h20 = recommend(client, V3, accelerators=["H20"])["options"]
    assert h20
    # 2 servers of 8 first; 4 of 4 (the same 16 cards, twice the hops) after them
    assert (h20[0]["accelerator"]["count"], h20[0]["nodes"]) == (8, 2)
    assert {(o["accelerator"]["count"], o["nodes"]) for o in h20} <= {(8, 2), (4, 4)}


def test_every_server_is_priced(client: TestClient[Litestar]) -> None:
    answer = recommend(client, V3, accelerators=["A100-80GB"])
    prices = node_prices(client, "A100-80GB")
    priced = [o for o in answer["options"] if o["price_per_hour"] is not None]
    assert priced
    for o in priced:
        one = prices[(o["provider"], o["instance_type"], o["region"] or "", o["billing"])]
        assert o["price_per_hour"] == pytest.approx(o["nodes"] * one, rel=1e-3), o
        per_token = o["price_per_hour"] / (o["throughput_tokens_per_s"] * 3600) * 1e6
        assert o["price_per_million_tokens"] == pytest.approx(per_token, rel=1e-2)


def test_throughput_and_memory_agree_with_the_estimate(client: TestClient[Litestar]) -> None:
    """The estimate of the option's own placement gives the same memory per device and
    rate: one replica over the servers decodes at one server's rate (the stages work one
    after another on every step)."""
    for accelerator in ("A100-80GB", "H20"):
        o = recommend(client, V3, accelerators=[accelerator])["options"][0]
        count = o["nodes"] * o["accelerator"]["count"]
        body = {"workload": V3, "placement": {"accelerator": accelerator, "count": count,
                                             "nodes": o["nodes"]}}  # fmt: skip
        sized = client.post("/v1/estimate", json=body).json()
        assert sized["placement"]["nodes"] == o["nodes"]
        assert sized["placement"]["pipeline_parallel"] == o["nodes"]
        assert sized["memory"]["per_device_gib"] == pytest.approx(o["per_device_gib"], abs=0.01)
        if o["throughput_tokens_per_s"] is not None:
            # the option shows its rate to 0.1 token/s
            assert sized["throughput_tokens_per_s"] == pytest.approx(
                o["throughput_tokens_per_s"], abs=0.05
            )


def test_zh_says_why_it_spans_servers(client: TestClient[Litestar]) -> None:
    o = recommend(client, V3, lang="zh", accelerators=["A100-80GB"])["options"][0]
    said = " ".join(o["reasons"])
    assert "单台服务器" in said
    assert "放不下该模型及其 KV 缓存" in said  # review 6 H7: the cache counts too
    assert f"跨 {o['nodes']} 台服务器" in said
    assert "流水线并行" in said


def test_no_rdma_is_warned(client: TestClient[Litestar]) -> None:
    """An option whose type lists no RDMA network says its pipeline stages talk over the
    ordinary network; an RDMA type's option does not (the Ascend 910B3 pool flavor has
    RoCE per Huawei's ModelArts Lite node table, other 910B rows state none)."""
    options = [
        o
        for accelerator in ("Ascend-910B3", "A100-80GB")
        for o in recommend(client, V3, accelerators=[accelerator])["options"]
    ]
    bare = [o for o in options if o["rdma"] in (None, "none")]
    fast = [o for o in options if o["rdma"] in ("rdma", "erdma")]
    assert bare
    assert fast
    for o in bare:
        assert any("RDMA" in w for w in o["warnings"]), o["warnings"]
    for o in fast:
        assert not any("no RDMA" in w for w in o["warnings"]), o["warnings"]


def test_a_throughput_target_adds_whole_replicas(client: TestClient[Litestar]) -> None:
    """A target beyond one replica's rate rents whole replicas of the same servers; each
    replica is batched to its share (the rate grows with the batch)."""
    alone = recommend(client, V3, accelerators=["A100-80GB"])["options"]
    span = {(o["provider"], o["instance_type"]): o["nodes"] for o in alone}
    job = {**V3, "target_tokens_per_s": 2000}
    options = recommend(client, job, accelerators=["A100-80GB"], max_nodes=16)["options"]
    assert options
    for o in options:
        pp = span[(o["provider"], o["instance_type"])]
        assert o["nodes"] % pp == 0, o
        assert o["throughput_tokens_per_s"] >= 2000
        if o["nodes"] > pp:
            assert f"{o['nodes'] // pp} such replicas" in " ".join(o["reasons"])


def test_constraints_still_hold(client: TestClient[Litestar]) -> None:
    assert not recommend(client, V3, max_nodes=1)["options"]
    assert not recommend(client, V3, max_accelerators=8)["options"]
    assert not recommend(client, V3, accelerators=["A100-80GB"], max_nodes=2)["options"]
    exact = recommend(client, V3, accelerator_count=24)["options"]
    assert exact
    assert all(o["nodes"] * o["accelerator"]["count"] == 24 for o in exact)
    capped = recommend(client, V3, max_accelerators=16)["options"]
    assert capped
    assert all(o["nodes"] * o["accelerator"]["count"] <= 16 for o in capped)
    only = recommend(client, V3, providers=["volcengine"])["options"]
    assert only
    assert all(o["provider"] == "volcengine" for o in only)
    cheap = recommend(client, V3, max_price_per_hour=800)["options"]
    assert cheap
    assert all(o["price_per_hour"] <= 800 for o in cheap)


@pytest.mark.parametrize(
    ("constraints", "said"),
    [
        ({"max_nodes": 1}, "would need more than 1 node."),
        ({"accelerators": ["A100-80GB"], "max_nodes": 2}, "would need more than 2 nodes."),
        ({"max_accelerators": 8}, "exceed the limit of 8 accelerators"),
    ],
)
def test_a_limit_that_leaves_no_layout_is_named(
    client: TestClient[Litestar], constraints: dict[str, Any], said: str
) -> None:
    """When a replica would fit over more servers than allowed, the answer names the
    node or accelerator limit, not the memory."""
    answer = recommend(client, V3, **constraints)
    assert not answer["options"]
    assert said in answer["warnings"][0], answer["warnings"]


@pytest.mark.parametrize("model", ["qwen2.5-72b", "llama-3.1-70b", "qwen2.5-7b"])
def test_a_model_one_server_holds_is_never_split(client: TestClient[Litestar], model: str) -> None:
    options = recommend(client, {"kind": "inference", "model": model})["options"]
    assert options
    for o in options:
        assert o["nodes"] == 1, o
        assert not any("spans" in r for r in o["reasons"])


FP8_PARTS = {"H20", "H800", "H100-80GB", "L20", "L40S", "L40", "L4", "RTX-4090", "RTX-4090D"}
"""Accelerators whose registry row has FP8 tensor cores (``supports_fp8``)."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_deepseek_v3_in_16_bits_says_the_release_is_fp8(
    client: TestClient[Litestar], lang: str
) -> None:
    """DeepSeek publishes FP8 weights only; a 16-bit plan sizes the BF16 copy (1,250 GiB:
    3 x 8 A100-80GB) and the answer says so, with what fp8 would change."""
    answer = recommend(client, V3, lang=lang, accelerators=["A100-80GB"])
    assert answer["estimate"]["memory"]["weights_gib"] * 24 == pytest.approx(1250, rel=0.01)
    advice = {a["topic"]: a["text"] for a in answer["advice"]}
    said = advice["precision"]
    assert "FP8" in said
    assert "fp8_cast_bf16.py" in said
    assert ("BF16 副本" if lang == "zh" else "BF16 copy") in said
    fp8 = recommend(client, {**V3, "precision": "fp8"}, lang=lang)
    assert "precision" not in {a["topic"] for a in fp8["advice"]}
    small = recommend(client, {"kind": "inference", "model": "qwen2.5-7b"}, lang=lang)
    assert "precision" not in {a["topic"] for a in small["advice"]}


def test_fp8_is_planned_only_on_parts_with_fp8(client: TestClient[Litestar]) -> None:
    """FP8 weights (about 625 GiB) run only where the device has FP8 (Hopper, Ada): one
    8 x H20 server holds them, so no option spans servers; A100, V100 and Ascend are out."""
    options = recommend(client, {**V3, "precision": "fp8"})["options"]
    assert options
    for o in options:
        assert o["accelerator"]["name"] in FP8_PARTS, o
        assert o["nodes"] == 1, o
    assert not recommend(client, {**V3, "precision": "fp8"}, accelerators=["A100-80GB"])["options"]
    # no L20 server holds them (8 x 48 GiB = 384 GiB): 16 L20s at about 40.5 GiB each of
    # 43.2 usable, as 2 x 8 or 4 x 4 (8 x 2 or 15 one-card servers: too many stages)
    l20 = recommend(client, {**V3, "precision": "fp8"}, accelerators=["L20"])["options"]
    assert {(o["accelerator"]["count"], o["nodes"]) for o in l20} == {(8, 2), (4, 4)}
    for o in l20:
        assert o["per_device_gib"] <= 48 * (1 - HEADROOM)
