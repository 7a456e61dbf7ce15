"""Serving chooses the tensor-parallel degree that serves the load fastest (session 9).

The planner and ``/v1/estimate`` took the smallest degree that holds the model and ran as
many copies per server as fit. Decode is bound by memory bandwidth: a copy's step reads
its weight shard once per step, so ``C`` sequences on a server of ``g`` GPUs, split over
``g / t`` copies at tensor parallel ``t``, decode at about ``C x t x BW / W`` together —
wider is up to ``g / t`` times faster at a few sequences per copy, and copies win only
once each is saturated (compute-bound) or when the tensor-parallel all-reduces are slow
(PCIe). The rate compared is the sizing's own (:func:`server_rate` over
:func:`inference_throughput`); the tolerance is float noise (1e-9) for ``/v1/estimate``,
which computes exactly that figure, and 1e-3 for the recommendation, whose answer rounds it.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.replicas import server_rate
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Inference
from tests.answers import builtin_spec, recommend
from tests.sizing.calibration import MODELS

ESTIMATE_REL = 1e-9
"""``/v1/estimate`` returns the rate model's figure itself: only float noise."""
ANSWER_REL = 1e-3
"""A recommendation's throughput is rounded for the answer."""


def _rate(job: dict[str, Any], accelerator: str, devices: int, tp: int) -> float:
    """The sizing's rate of one server of ``devices`` at tensor parallel ``tp``."""
    fields = {k: v for k, v in job.items() if k != "kind"}
    rw = resolve_workload(Inference(**fields), MODELS)
    return server_rate(rw, builtin_spec(accelerator), devices, tp)


def _estimate(client: TestClient[Litestar], workload: dict[str, Any], **placement: Any) -> Any:
    response = client.post("/v1/estimate", json={"workload": workload, "placement": placement})
    assert response.status_code == 200, response.text
    return response.json()


def _one_server(
    client: TestClient[Litestar], job: dict[str, Any], accelerator: str, count: int
) -> Any:
    body = recommend(
        client,
        {"workload": job, "constraints": {"accelerators": [accelerator]}, "top_k": 10},
        "en",
    )
    found = [o for o in body["options"] if o["accelerator"]["count"] == count and o["nodes"] == 1]
    assert found, [(o["accelerator"], o["nodes"]) for o in body["options"]]
    return found[0]


QWEN25_14B_16 = {
    "kind": "inference",
    "model": "qwen2.5-14b-instruct",
    "concurrency": 16,
    "context_len": 4096,
}
"""16 sequences on 4 x A100-80GB: TP 1 fits (4 copies of 4 sequences), so did TP 4."""
QWEN3_32B_16 = {"kind": "inference", "model": "qwen3-32b", "concurrency": 16, "context_len": 8192}
"""16 sequences on 8 x A100-80GB: TP 1 fits (8 copies of 2 sequences), so does TP 8."""


@pytest.mark.parametrize(
    ("job", "accelerator", "count", "smallest"),
    [(QWEN25_14B_16, "A100-80GB", 4, 1), (QWEN3_32B_16, "A100-80GB", 8, 1)],
)
def test_a_few_sequences_per_copy_serve_faster_on_one_wide_copy(
    client: TestClient[Litestar], job: dict[str, Any], accelerator: str, count: int, smallest: int
) -> None:
    """Failing before: the smallest degree that fits (TP 1) and ``count`` copies."""
    wide, narrow = _rate(job, accelerator, count, count), _rate(job, accelerator, count, smallest)
    assert wide > 1.5 * narrow  # the rate model's own verdict (figures in the module)
    body = _estimate(client, job, accelerator=accelerator, count=count)
    assert body["placement"]["tensor_parallel"] == count
    assert body["placement"]["replicas"] == 1
    assert body["throughput_tokens_per_s"] == pytest.approx(wide, rel=ESTIMATE_REL)
    said = " ".join(body["assumptions"])
    assert "copies of the model" not in said, said
    assert "the smallest that fits" not in said, said
    assert f"the one that serves {job['concurrency']} sequences per server fastest" in said, said
    option = _one_server(client, job, accelerator, count)
    assert option["tensor_parallel"] == count
    assert option["throughput_tokens_per_s"] == pytest.approx(wide, rel=ANSWER_REL)
    assert "copies of the model" not in " ".join(option["reasons"])


QWEN3_8B_2048 = {"kind": "inference", "model": "qwen3-8b", "concurrency": 2048, "context_len": 1024}
"""2048 short sequences on 8 x A100-80GB: 1024 per copy at TP 4, near the compute bound,
where TP 8's all-reduces (of 2048 tokens' activations) cost more than its bandwidth gains."""
QWEN25_14B_L20 = {
    "kind": "inference",
    "model": "qwen2.5-14b-instruct",
    "concurrency": 64,
    "context_len": 4096,
}
"""64 sequences on 8 x L20 (PCIe): a ring over all 8 crosses the CPU sockets."""


@pytest.mark.parametrize(
    ("job", "accelerator", "count", "best", "copies"),
    [(QWEN3_8B_2048, "A100-80GB", 8, 4, 2), (QWEN25_14B_L20, "L20", 8, 4, 2)],
)
def test_copies_still_win_where_each_is_saturated_or_the_ring_is_slow(
    client: TestClient[Litestar],
    job: dict[str, Any],
    accelerator: str,
    count: int,
    best: int,
    copies: int,
) -> None:
    rates = {t: _rate(job, accelerator, count, t) for t in (1, 2, 4, 8)}
    assert max(rates, key=lambda t: rates[t]) == best, rates
    body = _estimate(client, job, accelerator=accelerator, count=count)
    assert body["placement"]["tensor_parallel"] == best
    assert body["placement"]["replicas"] == copies
    assert body["throughput_tokens_per_s"] == pytest.approx(rates[best], rel=ESTIMATE_REL)
    said = " ".join(body["assumptions"])
    assert f"{copies} copies of the model on each server" in said, said
    option = _one_server(client, job, accelerator, count)
    assert option["tensor_parallel"] == best
    assert option["throughput_tokens_per_s"] == pytest.approx(rates[best], rel=ANSWER_REL)
    assert f"{copies} copies of the model" in " ".join(option["reasons"])


def test_a_throughput_target_is_met_with_the_fewest_servers(
    client: TestClient[Litestar],
) -> None:
    """3000 tokens/s at 16 sequences per server of 8 x A100-80GB: TP 1 x 8 copies needed
    ceil(3000 / 358) = 9 servers, one copy of TP 8 needs ceil(3000 / 1016) = 3."""
    job = {**QWEN3_32B_16, "target_tokens_per_s": 3000}
    wide, narrow = _rate(job, "A100-80GB", 8, 8), _rate(job, "A100-80GB", 8, 1)
    assert math.ceil(3000 / wide) < math.ceil(3000 / narrow)
    body = recommend(
        client,
        {"workload": job, "constraints": {"accelerators": ["A100-80GB"]}, "top_k": 10},
        "en",
    )
    eights = [o for o in body["options"] if o["accelerator"]["count"] == 8]
    assert eights, body["options"]
    option = eights[0]
    assert option["tensor_parallel"] == 8
    assert option["nodes"] == math.ceil(3000 / wide)
    assert option["throughput_tokens_per_s"] == pytest.approx(
        option["nodes"] * wide, rel=ANSWER_REL
    )


def test_equal_rates_keep_the_smaller_degree(client: TestClient[Litestar]) -> None:
    """2048 short sequences on 8 x H20 are compute-bound at every degree (148 TFLOPS for
    4 TB/s): the rate is the server's compute whatever the split, and equal rates keep
    the most copies (one per accelerator: more redundancy). An image model's rate is the
    devices' together whatever the split: one copy per accelerator as well."""
    rates = {t: _rate(QWEN3_8B_2048, "H20", 8, t) for t in (1, 2, 4, 8)}
    assert max(rates.values()) == pytest.approx(min(rates.values()), rel=ESTIMATE_REL), rates
    body = _estimate(client, QWEN3_8B_2048, accelerator="H20", count=8)
    assert body["placement"]["tensor_parallel"] == 1
    assert body["placement"]["replicas"] == 8
    option = _one_server(client, QWEN3_8B_2048, "H20", 8)
    assert option["tensor_parallel"] == 1
    image = {"kind": "inference", "model": "sdxl", "concurrency": 8}
    body = _estimate(client, image, accelerator="A100-80GB", count=4)
    assert body["placement"]["tensor_parallel"] == 1
