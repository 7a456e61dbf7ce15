"""Encoder-only models served (review 4 F9): BERT and bge/gte-style embedding, rerank and
classification models run one compute-bound forward pass over every token of a batch: no
decode steps, no KV cache, a rate in sequences per second encoded. Through the HTTP app and
the shipped plugins.

The expected rates come from first principles, not from the engine: BERT-large (335M
parameters, 24 layers, hidden 1024) at 512 tokens is 2 x 303M block parameters x 512 plus
the bidirectional attention 4 x 24 x 512^2 x 1024, about 0.336 TFLOP per sequence; a T4
(65 TFLOPS FP16 dense) sustains about a third of that peak on BERT (NVIDIA TensorRT
demo/BERT: BERT-large, 384 tokens, batch 128 in 1518 ms = 84 sequences/s, 32 %), so about
62 sequences/s, 32k tokens/s. The reviewer's 30-40 % band is 58-77 sequences/s.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

BERT_LARGE = {"kind": "inference", "model": "bert-large", "context_len": 512, "concurrency": 64}
BGE_STYLE = {"params_b": 0.33, "layers": 24, "hidden": 1024, "heads": 16}
T4 = {"accelerator": "T4", "count": 1}


def post(client: TestClient[Litestar], path: str, body: dict[str, Any]) -> Any:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def refused(client: TestClient[Litestar], body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/estimate", json=body)
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()
    return error


def words(answer: dict[str, Any]) -> list[str]:
    said = [answer["summary"], *answer["warnings"]]
    for option in answer["options"]:
        said += option["reasons"] + option["warnings"]
    if answer["estimate"] is not None:
        said += answer["estimate"]["assumptions"]
    return said + [advice["text"] for advice in answer["advice"]]


@pytest.mark.parametrize(
    ("lang", "rate", "unsaid"),
    [("en", "sequences per second encoded", "decode"), ("zh", "每秒编码", "解码")],
)
def test_bert_large_is_served_as_one_forward_pass(
    client: TestClient[Litestar], lang: str, rate: str, unsaid: str
) -> None:
    answer = post(client, "/v1/recommend", {"workload": BERT_LARGE, "lang": lang})
    assert rate in answer["summary"], answer["summary"]
    said = words(answer)
    assert not any(unsaid in s.lower() for s in said), [s for s in said if unsaid in s.lower()]
    assert not any("KV" in s for s in said), [s for s in said if "KV" in s]
    estimate = answer["estimate"]
    assert estimate["memory"]["kv_cache_gib"] == 0.0
    assert estimate["kv_cache_bytes_per_token"] is None


@pytest.mark.parametrize(
    ("lang", "batch", "unsaid"),
    [("en", "sequences per forward pass", "decode"), ("zh", "每次前向编码", "解码")],
)
def test_a_throughput_target_batches_sequences_per_forward_pass(
    client: TestClient[Litestar], lang: str, batch: str, unsaid: str
) -> None:
    """No concurrency with a target: the batch assumed is sequences per forward pass, not
    the continuous batching of a KV cache; the advice watches batches, not KV usage."""
    workload = {"kind": "inference", "model": "bert-base", "context_len": 256,
                "target_tokens_per_s": 2_000_000}  # fmt: skip
    answer = post(client, "/v1/recommend", {"workload": workload, "lang": lang})
    reasons = answer["options"][0]["reasons"]
    assert any(batch in r for r in reasons), reasons
    said = words(answer)
    assert not any(unsaid in s.lower() for s in said), [s for s in said if unsaid in s.lower()]
    assert not any("KV" in s for s in said), [s for s in said if "KV" in s]
    assert sum(o["throughput_tokens_per_s"] for o in answer["options"][:1]) >= 2_000_000


def test_the_default_length_is_refused_for_bert_with_the_reason(
    client: TestClient[Litestar],
) -> None:
    """context_len defaults to 4096, beyond BERT's 512 learned positions: the 400 says the
    figure was the default and what to send; a length given is not called a default."""
    left_out = refused(client, {"workload": {"kind": "inference", "model": "bert-base"},
                                "placement": T4})  # fmt: skip
    assert "its default when left out" in str(left_out), left_out
    assert "context_len 512 or less" in str(left_out), left_out
    given = refused(client, {"workload": {**BERT_LARGE, "context_len": 1024}, "placement": T4})
    assert "default" not in str(given), given


def test_bert_large_rate_on_a_t4_is_compute_bound(client: TestClient[Litestar]) -> None:
    """About 0.336 TFLOP a sequence at a third of 65 TFLOPS: 55-77 sequences/s (the
    reviewer's 30-40 %, and TensorRT's measured 32 % within 15 %); the old decode path
    said 11,842 tokens/s, a third of it."""
    answer = post(client, "/v1/estimate", {"workload": BERT_LARGE, "placement": T4})
    per_s = answer["throughput_tokens_per_s"]
    assert 55 * 512 <= per_s <= 77 * 512, per_s
    low, high = answer["throughput_range"]
    assert low < per_s < high
    said = " ".join(answer["assumptions"])
    assert "sequences per second" in said, said
    assert "FLOP" in said, said
    assert "github.com/NVIDIA/TensorRT" in said, said  # the prior says where it comes from
    assert answer["memory"]["kv_cache_gib"] == 0.0


def test_encoder_memory_is_weights_and_one_batch(client: TestClient[Litestar]) -> None:
    """No KV cache: weights plus one batch's workspace, which grows with the batch."""
    small = post(client, "/v1/estimate", {"workload": {**BERT_LARGE, "concurrency": 8},
                                          "placement": T4})  # fmt: skip
    large = post(client, "/v1/estimate", {"workload": {**BERT_LARGE, "concurrency": 128},
                                          "placement": T4})  # fmt: skip
    for answer in (small, large):
        assert answer["memory"]["kv_cache_gib"] == 0.0
        assert 0.6 < answer["memory"]["weights_gib"] < 0.65  # 335M x 2 B
    # 16x the sequences: the batch's hidden states and attention scores grow ~16x
    ratio = large["memory"]["activations_gib"] / small["memory"]["activations_gib"]
    assert 12 < ratio < 17, ratio
    # BERT-large, 128 x 512 tokens, fp16: the hidden states alone are 128 MiB per copy
    assert large["memory"]["activations_gib"] > 0.5


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_custom_encoder_fills_from_an_encoder_preset(
    client: TestClient[Litestar], lang: str
) -> None:
    workload = {**BERT_LARGE, "model": {**BGE_STYLE, "encoder_only": True}}
    answer = post(client, "/v1/recommend", {"workload": workload, "lang": lang})
    said = " ".join(answer["estimate"]["assumptions"])
    for shape in ("bert-large", "vocab 30522", "heads 16/16 KV"):
        assert shape in said, said
    assert "qwen" not in said.lower()
    assert "151936" not in said
    assert answer["estimate"]["memory"]["kv_cache_gib"] == 0.0
    rate = "每秒编码" if lang == "zh" else "sequences per second encoded"
    assert rate in answer["summary"]


def test_custom_model_that_may_be_an_encoder_is_told_how_to_say_so(
    client: TestClient[Litestar],
) -> None:
    """Without the flag the shape is a decoder's, and the answer says how to say otherwise
    when an encoder preset is at least as near in size (a 0.33B model: BERT-large)."""
    workload = {**BERT_LARGE, "model": BGE_STYLE}
    answer = post(client, "/v1/estimate", {"workload": workload, "placement": T4})
    said = " ".join(answer["assumptions"])
    assert "encoder_only" in said, said
    big = post(client, "/v1/estimate", {"workload": {**workload, "model": {"params_b": 7}},
                                        "placement": {"accelerator": "A100-80GB"}})  # fmt: skip
    assert "encoder_only" not in " ".join(big["assumptions"])


def test_custom_encoder_finetune_takes_the_encoder_shape(client: TestClient[Litestar]) -> None:
    workload = {"kind": "finetune", "model": {**BGE_STYLE, "encoder_only": True},
                "method": "full", "seq_len": 512, "tokens": 1e8}  # fmt: skip
    answer = post(client, "/v1/estimate", {"workload": workload, "placement": T4})
    said = " ".join(answer["assumptions"])
    assert "bert-large" in said, said
    assert "qwen" not in said.lower(), said


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"context_len": 4096}, "workload.context_len"),
        ({"output_tokens": 1e9}, "workload.output_tokens"),
        ({"prompt_len": 100}, "workload.prompt_len"),
        ({"kv_cache_precision": "fp8"}, "workload.kv_cache_precision"),
        ({"model": {**BGE_STYLE, "encoder_only": True, "encoder_layers": 12,
                    "decoder_layers": 12}}, "workload.model.encoder_only"),
        ({"model": {**BGE_STYLE, "encoder_only": True, "experts": 8}},
         "workload.model.encoder_only"),
    ],
)  # fmt: skip
def test_what_an_encoder_cannot_do_is_refused(
    client: TestClient[Litestar], change: dict[str, Any], field: str
) -> None:
    error = refused(client, {"workload": {**BERT_LARGE, **change}, "placement": T4})
    assert field in str(error), error


def test_an_encoder_cannot_be_an_rlhf_policy(client: TestClient[Litestar]) -> None:
    workload = {"kind": "rlhf", "model": {**BGE_STYLE, "encoder_only": True}, "tokens": 1e7}
    error = refused(client, {"workload": workload, "placement": {"accelerator": "A100-80GB"}})
    assert "workload.model.encoder_only" in str(error), error


def test_a_bge_model_by_name_is_an_encoder(client: TestClient[Litestar]) -> None:
    """BAAI/bge-large-en-v1.5 has BERT-large's config.json: sized and named as asked."""
    workload = {**BERT_LARGE, "model": "BAAI/bge-large-en-v1.5"}
    answer = post(client, "/v1/estimate", {"workload": workload, "placement": T4})
    assert answer["model"] == "bge-large-en-v1.5"
    assert answer["memory"]["kv_cache_gib"] == 0.0
    bert = post(client, "/v1/estimate", {"workload": BERT_LARGE, "placement": T4})
    assert answer["throughput_tokens_per_s"] == pytest.approx(bert["throughput_tokens_per_s"])
