"""Serving estimates sized as the planner sizes them (issue 12 items 4 and 5).

* A throughput target without a concurrency: ``/v1/recommend`` batches each server to it
  (:mod:`service.sizing.batch`); ``/v1/estimate`` answered at one sequence (53 tokens/s
  for a 2,000 tokens/s target on 2 x A10). Both now batch the same job on the same
  hardware to the same batch, rate and words.
* More than one server: the estimate counted all accelerators as one tensor-parallel
  group. Engines run one replica per server (vLLM distributed serving guide), so the rate
  is replicas x one server's; a model no server holds spans servers by pipeline stages
  and decodes at one server's rate.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.batch import BATCHED_TARGET


def estimate(client: TestClient[Litestar], workload: dict[str, Any], **placement: Any) -> Any:
    response = client.post("/v1/estimate", json={"workload": workload, "placement": placement})
    assert response.status_code == 200, response.text
    return response.json()


def top_option(client: TestClient[Litestar], workload: dict[str, Any], **c: Any) -> Any:
    body = {"workload": workload, "constraints": c, "lang": "en", "top_k": 1}
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()["options"][0]


def batch_in(texts: list[str]) -> int:
    found = [int(m[1]) for t in texts if (m := re.search(r"assumed about (\d+) requests", t))]
    assert len(found) == 1, texts
    return found[0]


@pytest.mark.parametrize(("target", "accelerator"), [(2000, "A10"), (1500, "L20")])
def test_estimate_batches_to_the_target_as_recommend_does(
    client: TestClient[Litestar], target: float, accelerator: str
) -> None:
    job = {"kind": "inference", "model": "qwen2.5-7b", "target_tokens_per_s": target}
    option = top_option(client, job, accelerators=[accelerator])
    assert option["nodes"] == 1
    sized = estimate(client, job, accelerator=accelerator, count=option["accelerator"]["count"])
    assert sized["throughput_tokens_per_s"] == pytest.approx(
        option["throughput_tokens_per_s"], rel=1e-3
    )
    assert sized["throughput_tokens_per_s"] >= target
    batch = batch_in(option["reasons"])
    assert batch_in(sized["assumptions"]) == batch
    assert BATCHED_TARGET["en"].format(b=batch) in sized["assumptions"]  # the same words
    assert f"x {batch} sequences" in " ".join(sized["assumptions"])  # the KV cache it holds
    assert sized["placement"]["tensor_parallel"] == option["tensor_parallel"]


def test_a_target_beyond_the_placement_says_how_many_servers_it_needs(
    client: TestClient[Litestar],
) -> None:
    job = {"kind": "inference", "model": "qwen2.5-7b", "target_tokens_per_s": 20000}
    sized = estimate(client, job, accelerator="A10", count=1)
    rate = sized["throughput_tokens_per_s"]
    assert 0 < rate < 20000
    needed = -(-20000 // rate)  # ceil
    said = f"This server reaches about {rate:,.0f} of the 20,000 tokens/s target: about "
    assert any(a.startswith(said + f"{needed:.0f} such servers") for a in sized["assumptions"])


def test_servers_serve_one_replica_each(client: TestClient[Litestar]) -> None:
    job = {"kind": "inference", "model": "qwen2.5-72b", "concurrency": 16}
    one = estimate(client, {**job, "concurrency": 8}, accelerator="A100-80GB", count=8)
    two = estimate(client, job, accelerator="A100-80GB", count=16)
    assert two["placement"]["nodes"] == 2
    # replicas count every copy of the model: one server's copies on each of the two
    assert two["placement"]["replicas"] == 2 * one["placement"]["replicas"]
    assert two["placement"]["pipeline_parallel"] == 1
    assert two["memory"]["per_device_gib"] == pytest.approx(one["memory"]["per_device_gib"])
    assert two["throughput_tokens_per_s"] == pytest.approx(2 * one["throughput_tokens_per_s"])
    four = estimate(client, job, accelerator="A100-80GB", count=16, nodes=4)
    assert four["placement"]["nodes"] == 4
    assert four["placement"]["replicas"] % 4 == 0


def test_a_model_no_server_holds_is_pipelined_across_servers(
    client: TestClient[Litestar],
) -> None:
    job = {"kind": "inference", "model": "llama-3.1-405b", "concurrency": 8}
    alone = estimate(client, job, accelerator="A100-80GB", count=8)
    assert alone["placement"]["fits"] is False
    spread = estimate(client, job, accelerator="A100-80GB", count=16)
    placed = spread["placement"]
    assert placed["fits"] is True
    assert (placed["tensor_parallel"], placed["pipeline_parallel"]) == (8, 2)
    assert (placed["nodes"], placed["replicas"]) == (2, 1)
    # the stated cost: the second server adds memory, not speed
    assert spread["throughput_tokens_per_s"] == pytest.approx(alone["throughput_tokens_per_s"])
    assert any("2 pipeline stages across them" in a for a in spread["assumptions"])


@pytest.mark.parametrize(
    ("job", "accelerator"),
    [
        ({"kind": "inference", "model": "qwen2.5-7b", "target_tokens_per_s": 20000}, "A10"),
        ({"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32,
          "target_tokens_per_s": 2000}, "V100-32GB"),
    ],
)  # fmt: skip
def test_a_multi_node_option_and_its_estimate_agree(
    client: TestClient[Litestar], job: dict[str, Any], accelerator: str
) -> None:
    """The recommend answer's ``estimate`` is its top option's placement: over several
    servers, one replica each, the same rate and headroom as the option (the planner
    serves a given concurrency on every server)."""
    body = {"workload": job, "constraints": {"accelerators": [accelerator]}, "lang": "en",
            "top_k": 1}  # fmt: skip
    answer = client.post("/v1/recommend", json=body).json()
    option = answer["options"][0]
    assert option["nodes"] > 1
    assert answer["estimate"]["placement"]["nodes"] == option["nodes"]
    assert answer["estimate"]["placement"]["replicas"] == option["nodes"]
    assert answer["estimate"]["throughput_tokens_per_s"] == pytest.approx(
        option["throughput_tokens_per_s"], rel=1e-3
    )
    assert answer["estimate"]["placement"]["headroom_gib"] == pytest.approx(
        option["headroom_gib"], abs=0.01
    )


@pytest.mark.parametrize(
    ("placement", "key", "zh"),
    [
        ({"accelerator": "A10", "count": 12, "nodes": 5}, "placement.nodes", "无法平均分到 5 台"),
        ({"accelerator": "A10", "count": 16, "tensor_parallel": 16}, "placement.tensor_parallel",
         "推理引擎只在单台服务器内做张量并行"),
    ],
)  # fmt: skip
def test_an_impossible_server_split_is_a_400_in_both_languages(
    client: TestClient[Litestar], placement: dict[str, Any], key: str, zh: str
) -> None:
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b"}, "placement": placement}
    said = client.post("/v1/estimate", json=body, headers={"accept-language": "zh-CN"})
    assert said.status_code == 400, said.text
    item = said.json()["extra"][0]
    assert item["key"] == key
    assert zh in item["message"]


def test_an_image_model_over_servers_keeps_its_own_budget(client: TestClient[Litestar]) -> None:
    """Sharing the concurrency out re-sizes a language model's KV cache; an image model
    has none, and re-sizing it as one would drop its image budget."""
    job = {"kind": "inference", "model": "sd-1.5", "concurrency": 8}
    one = estimate(client, job, accelerator="A10", count=8)
    two = estimate(client, job, accelerator="A10", count=16)
    assert (two["placement"]["nodes"], two["placement"]["replicas"]) == (2, 2)
    assert two["memory"] == one["memory"]
    assert not any(a.startswith("KV cache") for a in two["assumptions"])
