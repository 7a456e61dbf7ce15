"""Review 11s V8 (docs/answer-review.md, session 13, coordinator): an answer without
options for a job asked on Ascend NPUs only kept the GPU words of its advice — CUDA
images, GPU utilization under DCGM, "the weights are already FP8" (the 910B has no FP8
units: the registry's ``supports_fp8`` is false for it, ``reference/accelerator-facts.csv``;
its quantized route is msModelSlim's W8A8, ``service/catalog/capabilities.py``) and
serverless GPU — because the advice read the accelerators of the options shown, and
there were none. The advice of an empty answer now reads the accelerators the user asked
for."""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

FP8_ON_ASCEND: dict[str, Any] = {
    "workload": {
        "kind": "inference",
        "model": "qwen3-235b-a22b",
        "precision": "fp8",
        "context_len": 8192,
        "concurrency": 16,
    },
    "constraints": {"accelerators": ["Ascend-910B3"]},
}


def _advice(answer: dict[str, Any]) -> dict[str, str]:
    return {a["topic"]: a["text"] for a in answer["advice"]}


def test_v8_empty_ascend_answer_speaks_of_npus_not_gpus(client: TestClient[Litestar]) -> None:
    answer = recommend(client, FP8_ON_ASCEND, lang="en")
    assert answer["options"] == []
    advice = _advice(answer)
    text = " ".join(advice.values())
    for gpu_word in ("DCGM", "GPU utilization", "serverless GPU", "already FP8"):
        assert gpu_word not in text, (gpu_word, text)
    assert "CUDA" not in advice["containers"] + advice["monitoring"] + advice["serving"]
    assert "not CUDA" in advice["ascend"]  # the Ascend caveat contrasts the two stacks
    assert "npu-smi" in advice["monitoring"]
    assert "CANN" in advice["containers"]
    assert "W8A8" in advice["serving"]


def test_v8_empty_ascend_answer_in_chinese(client: TestClient[Litestar]) -> None:
    answer = recommend(client, FP8_ON_ASCEND, lang="zh")
    advice = _advice(answer)
    assert "CUDA" not in advice["containers"] + advice["monitoring"] + advice["serving"]
    assert "npu-smi" in advice["monitoring"]
    assert "W8A8" in advice["serving"]


def test_v8_empty_gpu_answer_keeps_gpu_words(client: TestClient[Litestar]) -> None:
    """The fallback reads the filter: a GPU-only empty answer still speaks of GPUs."""
    body = {
        "workload": {"kind": "inference", "model": "deepseek-v3", "context_len": 8192},
        "constraints": {"accelerators": ["T4"], "max_nodes": 1},
    }
    answer = recommend(client, body, lang="en")
    assert answer["options"] == []
    advice = _advice(answer)
    assert "npu-smi" not in " ".join(advice.values())
    assert "CUDA" in advice["containers"]


def _spot_only(client: TestClient[Litestar], workload: dict[str, Any], lang: str,
               **constraints: Any) -> dict[str, Any]:  # fmt: skip
    body = {"workload": workload, "constraints": {"billing": ["spot"], **constraints}}
    response = client.post("/v1/recommend", json={**body, "lang": lang})
    assert response.status_code == 422, response.text
    (item,) = response.json()["extra"]
    assert item["key"] == "constraints.billing"
    return dict(item)


SERVING = {"kind": "inference", "model": "qwen2.5-7b", "context_len": 8192, "concurrency": 16}


def test_v7_spot_only_serving_is_refused_in_words_not_field_names(
    client: TestClient[Litestar],
) -> None:
    """Review 11s V7: the refusal named ``constraints.interruptible=false`` and "an
    inference/preprocess workload"; it now says why (a reclaimed server drops the requests
    it is serving) and what to do, in the user's language."""
    en = _spot_only(client, SERVING, "en")["message"]
    assert "constraints." not in en
    assert "=" not in en
    assert "inference/preprocess" not in en
    assert "reclaim" in en
    assert "on-demand" in en
    zh = _spot_only(client, SERVING, "zh")["message"]
    assert "constraints." not in zh
    assert "回收" in zh
    assert "按量" in zh


def test_v7_spot_only_for_a_job_marked_not_interruptible(client: TestClient[Litestar]) -> None:
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 10**8}
    en = _spot_only(client, workload, "en", interruptible=False)["message"]
    assert "constraints." not in en
    assert "not interruptible" in en
    assert "checkpoint" in en


def test_v9_a_servers_batch_and_its_engines_limit_read_as_one_statement(
    client: TestClient[Litestar],
) -> None:
    """Review 11s V9: "about 1024 sequences generated at once per node, ... (at most the
    engine's default batch limit per engine instance, vLLM max_num_seqs 256)" before "4
    copies ... with 256 sequences each" read as a contradiction; the server's figure is now
    said as its copies' (each engine instance up to the limit), and the two agree."""
    body = {
        "workload": {
            "kind": "inference",
            "model": "qwen2.5-7b",
            "context_len": 2048,
            "output_tokens": 1e9,
        },
        "constraints": {"accelerators": ["A100-80GB"]},
    }
    answer = recommend(client, body, lang="en")
    checked = 0
    for option in answer["options"]:
        reasons = " ".join(option["reasons"])
        node = re.search(r"assumed about (\d+) sequences generated at once per node", reasons)
        copies = re.search(r"(\d+) copies of the model on each server.*? with (\d+) sequences each",
                           reasons)  # fmt: skip
        assert node is not None, reasons
        assert "at most the engine's default batch limit per engine instance" not in reasons
        assert "each engine instance on it runs as many as its KV cache holds" in reasons
        if copies is not None:
            assert int(node.group(1)) == int(copies.group(1)) * int(copies.group(2))
            checked += 1
    assert checked >= 1


def test_an_rlhf_algorithm_sent_as_the_method_is_pointed_at_its_field(
    client: TestClient[Litestar],
) -> None:
    """``"kind": "rlhf", "method": "ppo"`` (a chatbot's mistake) was refused with the four
    fine-tune methods and no hint: PPO is the job's ``algorithm``."""
    body = {"workload": {"kind": "rlhf", "model": "qwen2.5-7b", "method": "ppo", "tokens": 1e9}}
    for lang, words in (("en", "did you mean"), ("zh", "是否想写")):
        response = client.post("/v1/recommend", json={**body, "lang": lang})
        assert response.status_code == 400, response.text
        (item,) = response.json()["extra"]
        assert item["key"] == "workload.method"
        assert '"algorithm": "ppo"' in item["message"], item["message"]
        assert words in item["message"]
        assert item["suggestions"] == ["algorithm"]
