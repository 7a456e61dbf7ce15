"""Training scale-out past 8 servers (review 4 F3): the node counts tried follow
``max_nodes`` (and, when it is not given, what a deadline needs, up to the implied cap),
each timed with the network between the servers; an empty answer under a deadline leads
with the deadline, not with memory, when options that hold the job were too slow."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.planning.place import node_counts
from service.planning.resolve import DEADLINE_MAX_NODES, DEFAULT_MAX_NODES

PRETRAIN_8B = {"kind": "pretrain", "model": "llama-3.1-8b", "seq_len": 8192,
               "tokens": 1_000_000_000_000, "framework": "megatron"}  # fmt: skip
"""4.8e22 FLOPs: about 1,900 h on 64 A100s, so 720 h needs more than 16 servers of 8."""


def recommend(client: TestClient[Litestar], body: dict[str, Any]) -> Any:
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_node_counts_double_up_to_the_limit_and_reach_it() -> None:
    assert node_counts(1, 32, True, True) == [1, 2, 4, 8, 16, 32]
    assert node_counts(1, 64, True, True)[-1] == 64
    assert node_counts(3, 32, True, True) == [3, 6, 12, 24, 32]  # the limit itself too
    assert node_counts(2, 16, True, False) == [2]  # cost, no deadline: the fewest
    assert node_counts(1, 64, False, True) == [1]  # no RDMA: one server


def test_objective_time_uses_the_nodes_allowed(client: TestClient[Litestar]) -> None:
    eight = recommend(client, {"workload": PRETRAIN_8B, "objective": "time",
                               "constraints": {"max_nodes": 8}, "lang": "en"})  # fmt: skip
    body = recommend(client, {"workload": PRETRAIN_8B, "objective": "time",
                              "constraints": {"max_nodes": 32}, "lang": "en"})  # fmt: skip
    top, base = body["options"][0], eight["options"][0]
    assert top["nodes"] == 32
    assert base["nodes"] == 8
    # four times the servers: faster, but not more than 4x (the data-parallel traffic over
    # the network between servers is in the time)
    assert base["hours"] / 4 <= top["hours"] < base["hours"] / 3
    assert any("network between nodes" in r for r in top["reasons"])


def test_sixty_four_nodes_are_reachable(client: TestClient[Litestar]) -> None:
    body = recommend(client, {"workload": PRETRAIN_8B, "objective": "time",
                              "constraints": {"max_nodes": 64}, "lang": "en"})  # fmt: skip
    assert body["options"][0]["nodes"] == 64


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_deadline_reaches_past_the_default_node_limit(
    client: TestClient[Litestar], lang: str
) -> None:
    body = recommend(client, {"workload": PRETRAIN_8B,
                              "constraints": {"deadline_hours": 720}, "lang": lang})  # fmt: skip
    assert body["options"], body["summary"]
    top = body["options"][0]
    assert top["hours"] <= 720
    assert DEFAULT_MAX_NODES < top["nodes"] <= DEADLINE_MAX_NODES


@pytest.mark.parametrize(
    ("lang", "deadline_words", "memory_words"),
    [("zh", "截止时间", "显存"), ("en", "deadline", "memory")],
)
def test_an_empty_answer_under_a_deadline_blames_time(
    client: TestClient[Litestar], lang: str, deadline_words: str, memory_words: str
) -> None:
    body = recommend(client, {"workload": PRETRAIN_8B,
                              "constraints": {"deadline_hours": 100}, "lang": lang})  # fmt: skip
    assert not body["options"]
    summary = body["summary"]
    assert deadline_words in summary
    assert memory_words not in summary
    hint = next(h for h in body["relax"] if h["constraint"] == "deadline_hours")
    assert f"{DEADLINE_MAX_NODES}×" in hint["nearest"]  # the fastest: every server allowed


ON_ASCEND_910 = {"kind": "pretrain", "model": "qwen2.5-1.5b", "seq_len": 4096,
                 "tokens": 20_000_000_000, "framework": "mindspeed"}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "words"), [("zh", "仅限单台服务器"), ("en", "Single server only")]
)
def test_a_type_without_confirmed_rdma_says_single_server_only(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """The Ascend 910 Notebook flavor's row confirms no RoCE: one server, and it says so."""
    asked = {"accelerators": ["Ascend-910"]}
    body = recommend(client, {"workload": ON_ASCEND_910, "objective": "time",
                              "constraints": asked, "lang": lang})  # fmt: skip
    top = body["options"][0]
    assert top["nodes"] == 1
    assert top["rdma"] is None
    assert any(w.startswith(words) and top["instance_type"] in w for w in body["warnings"])


PRETRAIN_14B_ASCEND = {"kind": "pretrain", "model": "qwen2.5-14b", "seq_len": 4096,
                       "tokens": 50_000_000_000, "framework": "mindspeed"}  # fmt: skip


def test_huawei_910b_pools_scale_out_over_roce(client: TestClient[Litestar]) -> None:
    """Review 4 F13: the 8x910B3 resource-pool flavor runs on RoCE (Huawei Cloud's Lite
    Cluster node table), so a deadline reaches several servers."""
    asked = {"accelerators": ["910B"], "deadline_hours": 400}
    body = recommend(client, {"workload": PRETRAIN_14B_ASCEND, "lang": "en",
                              "constraints": asked})  # fmt: skip
    top = body["options"][0]
    assert top["instance_type"] == "modelarts.bm.npu.arm.8snt9b3.i6l.d.c004"
    assert top["rdma"] == "rdma"
    assert top["nodes"] > 1
    assert top["hours"] <= 400
    assert any("No network figure is published" in r for r in top["reasons"])


@pytest.mark.parametrize(("lang", "words"), [("zh", "包月或包年"), ("en", "monthly or yearly")])
def test_a_plan_over_a_month_on_demand_raises_a_subscription(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    body = recommend(client, {"workload": PRETRAIN_14B_ASCEND, "lang": lang,
                              "constraints": {"accelerators": ["910B"]}})  # fmt: skip
    top = body["options"][0]
    assert top["hours"] > 720
    assert top["billing"] == "on_demand"
    assert any(words in w for w in body["warnings"])
