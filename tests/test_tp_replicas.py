"""Review 7 J4/J19/J9/J20: several copies of a model inside one server.

Serving Qwen3-32B at 64 concurrent x 8k on a 4 x A100-80GB server, tensor parallel 2 was
the smallest degree that fits, so the server held 2 copies of the model, each tensor
parallel 2 over 2 GPUs with 32 sequences (vLLM ``--data-parallel-size 2``, or two engines
behind a load balancer). The memory was sized so, but the throughput was one 4-GPU group
at all 64 sequences and the words said only "(tensor parallel 2)". Both routes now time
the copies as sized (each copy's decode at its own batch and degree, summed) and say it,
in English and Chinese.

Since session 9 the degree is the fastest that fits (tests/test_tp_choice.py), and that
server serves fastest as one copy of tensor parallel 4; the copies are checked where they
are still the fastest layout: Qwen2.5-14B at 64 x 4k on 8 x L20, whose PCIe ring over all 8
GPUs crosses the CPU sockets, serves as 2 copies of tensor parallel 4 with 32 sequences each.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.batch import at_concurrency
from service.sizing.compute import inference_throughput
from service.sizing.replicas import server_rate
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Inference
from tests.answers import builtin_spec, recommend
from tests.sizing.calibration import MODELS

QWEN3_32B = {"kind": "inference", "model": "qwen3-32b", "concurrency": 64, "context_len": 8192}
QWEN25_14B = {
    "kind": "inference",
    "model": "qwen2.5-14b-instruct",
    "concurrency": 64,
    "context_len": 4096,
}


def _two_copies_rate() -> float:
    """2 copies x one copy of tensor parallel 4 at 32 sequences on L20."""
    rw = resolve_workload(
        Inference(model="qwen2.5-14b-instruct", concurrency=64, context_len=4096), MODELS
    )
    return 2 * inference_throughput(at_concurrency(rw, 32), builtin_spec("L20"), 4)


def _estimate(client: TestClient[Litestar], workload: dict[str, Any], **placement: Any) -> Any:
    body = {"workload": workload, "placement": placement}
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_estimate_times_two_copies_of_tensor_parallel_4(client: TestClient[Litestar]) -> None:
    body = _estimate(client, QWEN25_14B, accelerator="L20", count=8)
    assert body["placement"]["tensor_parallel"] == 4
    assert body["placement"]["replicas"] == 2  # copies of the model, all of them
    assert body["throughput_tokens_per_s"] == pytest.approx(_two_copies_rate(), rel=1e-9)
    said = " ".join(body["assumptions"])
    assert "2 copies of the model on each server" in said, said
    assert "tensor parallel 4 over 4 accelerators" in said, said
    assert "32 sequences each" in said, said
    assert "--data-parallel-size 2" in said, said


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ("2 copies of the model", "tensor parallel 4 over 4 accelerators", "32 sequences")),
        ("zh", ("2 份模型副本", "每份张量并行 4（4 卡）", "32 个序列")),
    ],
)
def test_recommend_says_and_times_the_copies(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    body = recommend(
        client,
        {"workload": QWEN25_14B, "constraints": {"accelerators": ["L20"]}, "top_k": 10},
        lang,
    )
    eight = [o for o in body["options"] if o["accelerator"]["count"] == 8 and o["nodes"] == 1]
    assert eight, body["options"]
    option = eight[0]
    assert option["tensor_parallel"] == 4
    assert option["throughput_tokens_per_s"] == pytest.approx(_two_copies_rate(), rel=1e-3)
    said = " ".join(option["reasons"])
    assert all(word in said for word in words), said
    estimate = _estimate(client, QWEN25_14B, accelerator="L20", count=8)
    assert option["throughput_tokens_per_s"] == pytest.approx(
        estimate["throughput_tokens_per_s"], rel=1e-3
    )


def test_one_copy_per_server_says_no_copies(client: TestClient[Litestar]) -> None:
    """Tensor parallel over the whole server: one copy, no data-parallel words."""
    job = {**QWEN3_32B, "model": "qwen2.5-72b", "concurrency": 32}
    body = _estimate(client, job, accelerator="A100-80GB", count=4)
    assert body["placement"]["tensor_parallel"] == 4
    assert body["placement"]["replicas"] == 1
    assert "copies of the model" not in " ".join(body["assumptions"])


def test_server_rate_sums_the_copies_at_their_share() -> None:
    """Uneven shares: 5 sequences over 2 copies are 3 and 2; copies without a sequence
    add nothing (1 sequence on 4 copies is one busy copy)."""
    spec = builtin_spec("A100-80GB")
    rw = resolve_workload(Inference(model="qwen2.5-7b", concurrency=5, context_len=4096), MODELS)
    expected = inference_throughput(at_concurrency(rw, 3), spec, 2) + inference_throughput(
        at_concurrency(rw, 2), spec, 2
    )
    assert server_rate(rw, spec, 4, 2) == pytest.approx(expected, rel=1e-12)
    lone = resolve_workload(Inference(model="qwen2.5-7b", concurrency=1), MODELS)
    assert server_rate(lone, spec, 4, 1) == pytest.approx(
        inference_throughput(lone, spec, 1), rel=1e-12
    )
    assert server_rate(rw, spec, 4, 4) == pytest.approx(inference_throughput(rw, spec, 4))
