"""Leftovers of the sixth expert review, against the real app.

1. An RLHF rollout that does not fit under DeepSpeed-Chat's hybrid engine (a whole 16-bit
   copy of the actor on every device) names the lever that does: a trainer whose rollouts
   run on colocated vLLM, tensor parallel over the devices (ms-swift), computed.
2. H9: an empty answer says its first sentences once (summary), not again as a warning.
3. Encoders: a context_len left out is the model's own positions, not the decoders' 4096;
   one sent above them is still a 400 naming the field.
4. Image training: the host disk does not count the image dataset (no field gives its
   size), and the assumptions say so instead of claiming "the tokenized data".
5. H8: the sequences-per-second advice echoes the user's rate; RL stack names (verl,
   OpenRLHF, TRL) are refused with the closest framework values.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

Client = TestClient[Litestar]

GRPO_32B: dict[str, Any] = {
    "kind": "rlhf", "algorithm": "grpo", "model": "qwen2.5-32b", "tokens": 1e8,
}  # fmt: skip
"""Qwen2.5-32B full GRPO at the defaults (2,048 tokens, DeepSpeed): the hybrid engine's
whole 16-bit actor (61 GiB) sits next to the ZeRO-3 shards on every device."""


def recommend(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def estimate(client: Client, workload: dict[str, Any], placement: dict[str, Any]) -> Any:
    return client.post("/v1/estimate", json={"workload": workload, "placement": placement})


# --- 1. the vLLM-rollout lever -----------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_grpo_32b_on_two_servers_names_the_vllm_rollout_lever(client: Client, lang: str) -> None:
    """Two servers at most: under DeepSpeed nothing holds it (164 GiB per device); with
    ms-swift's colocated vLLM rollouts it fits 2 x 8 x A100-80GB, and the empty answer says
    so, with the nearest option that lever lets through."""
    body = {"workload": GRPO_32B, "constraints": {"max_nodes": 2}, "lang": lang}
    answer = recommend(client, body)
    assert answer["options"] == []
    hints = [h for h in answer["relax"] if h["constraint"] == "framework"]
    assert len(hints) == 1, answer["relax"]
    assert hints[0]["nearest"]
    said = [w for w in answer["warnings"] if "ms-swift" in w]
    assert len(said) == 1, answer["warnings"]
    assert "vLLM" in said[0]
    assert hints[0]["nearest"] in said[0]
    # 65.5 GB of 16-bit weights: more than 4 ranks of 16 GB, so the sizing's degree is 8
    assert "--vllm_tensor_parallel_size 8" in said[0]
    assert ("张量并行" if lang == "zh" else "tensor parallel") in said[0]
    # computed: the option it names is what the same request with ms-swift ranks first
    lever = recommend(client, {**body, "workload": {**GRPO_32B, "framework": "ms-swift"}})
    first = lever["options"][0]
    assert first["instance_type"] in hints[0]["nearest"]
    assert first["nodes"] == 2


def test_vllm_rollout_lever_is_not_named_when_it_does_not_fit(client: Client) -> None:
    """One server: ms-swift needs about 94 GiB a device, more than any server allowed
    holds with its headroom, so the lever is not offered."""
    body = {"workload": GRPO_32B, "constraints": {"max_nodes": 1}, "lang": "en"}
    alone = recommend(client, {**body, "workload": {**GRPO_32B, "framework": "ms-swift"}})
    assert alone["options"] == []
    answer = recommend(client, body)
    assert answer["options"] == []
    assert not [h for h in answer["relax"] if h["constraint"] == "framework"]
    assert not [w for w in answer["warnings"] if "ms-swift" in w]


def test_vllm_rollout_lever_only_for_a_generate_loop_rollout(client: Client) -> None:
    """A trainer that already rolls out on vLLM (Megatron) is not told to switch to one."""
    body = {"workload": {**GRPO_32B, "framework": "megatron"},
            "constraints": {"max_nodes": 1}, "lang": "en"}  # fmt: skip
    answer = recommend(client, body)
    assert answer["options"] == []
    assert not [h for h in answer["relax"] if h["constraint"] == "framework"]


# --- 2. H9: the empty answer's sentences once ---------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_empty_answer_says_its_summary_once(client: Client, lang: str) -> None:
    body = {"workload": GRPO_32B, "constraints": {"max_nodes": 2}, "lang": lang}
    answer = recommend(client, body)
    summary = answer["summary"]
    assert summary
    for warning in answer["warnings"]:
        assert summary not in warning, warning
        assert warning not in summary, warning
    # what the summary leaves out (the other constraints' counts) is still said
    rest = " ".join(answer["warnings"])
    assert "BF16" in rest
    assert "ModelArts" in rest


def test_empty_answer_with_one_reason_has_no_warning_repeating_it(client: Client) -> None:
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b"},
            "constraints": {"max_price_per_hour": 0.01}, "lang": "en"}  # fmt: skip
    answer = recommend(client, body)
    assert answer["options"] == []
    first = answer["summary"].split(". ")[0]
    assert not [w for w in answer["warnings"] if w.startswith(first)], answer["warnings"]


# --- 3. encoders: context_len left out ----------------------------------------------------


@pytest.mark.parametrize(("model", "positions"), [
    ("bert-large", 512), ("bge-large-zh-v1.5", 512), ("bge-m3", 8192),
])  # fmt: skip
def test_encoder_context_len_left_out_is_its_positions(
    client: Client, model: str, positions: int
) -> None:
    workload = {"kind": "inference", "model": model, "concurrency": 16}
    placement = {"accelerator": "A10", "count": 1}
    left_out = estimate(client, workload, placement)
    assert left_out.status_code == 200, left_out.text
    sent = estimate(client, {**workload, "context_len": positions}, placement)
    assert left_out.json()["memory"] == sent.json()["memory"]
    said = " ".join(left_out.json()["assumptions"])
    assert f"16 sequences x {positions} tokens" in said
    assert f"context_len left out: {positions} tokens per sequence" in said
    assert "context_len left out" not in " ".join(sent.json()["assumptions"])


def test_custom_encoder_context_len_left_out_is_berts_positions(client: Client) -> None:
    model = {"params_b": 0.33, "encoder_only": True}
    workload = {"kind": "inference", "model": model, "concurrency": 4}
    response = estimate(client, workload, {"accelerator": "A10", "count": 1})
    assert response.status_code == 200, response.text
    said = " ".join(response.json()["assumptions"])
    assert "4 sequences x 512 tokens" in said
    assert "the 512 positions of BERT and RoBERTa encoders" in said


def test_encoder_context_len_sent_above_its_positions_is_refused(client: Client) -> None:
    response = estimate(client, {"kind": "inference", "model": "bert-large", "context_len": 4096},
                        {"accelerator": "A10", "count": 1})  # fmt: skip
    assert response.status_code == 400
    [item] = response.json()["extra"]
    assert item["key"] == "workload.context_len"
    assert "512" in item["message"]
    assert "default" not in item["message"]


def test_encoder_recommend_without_context_len_answers(client: Client) -> None:
    workload = {"kind": "inference", "model": "bert-large", "target_tokens_per_s": 512 * 400}
    answer = recommend(client, {"workload": workload, "lang": "en"})
    assert answer["options"]
    assert "400 sequences per second" in answer["summary"] + " ".join(answer["warnings"])


def test_decoder_context_len_left_out_is_still_4096(client: Client) -> None:
    workload = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8}
    placement = {"accelerator": "A10", "count": 1}
    left_out = estimate(client, workload, placement).json()
    sent = estimate(client, {**workload, "context_len": 4096}, placement).json()
    assert left_out["memory"] == sent["memory"]


# --- 4. image training: the dataset on disk -------------------------------------------


def test_image_training_says_the_dataset_is_not_on_the_disk_figure(client: Client) -> None:
    workload = {"kind": "finetune", "model": "resnet-50", "method": "full", "tokens": 1.28e6}
    response = estimate(client, workload, {"accelerator": "A100-80GB", "count": 8})
    assert response.status_code == 200, response.text
    said = " ".join(response.json()["assumptions"])
    assert "tokenized data" not in said
    assert "the image dataset is not counted" in said
    assert "ImageNet-1k" in said
    assert "8-16 vCPUs per accelerator" in said  # what the host is sized with (JPEG loaders)


def test_language_training_still_counts_the_tokenized_data(client: Client) -> None:
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8}
    response = estimate(client, workload, {"accelerator": "A100-80GB", "count": 1})
    said = " ".join(response.json()["assumptions"])
    assert "two checkpoints and the tokenized data" in said
    assert "image dataset" not in said


# --- 5. H8: the user's numbers and RL stack names --------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sequences_per_second_advice_echoes_the_users_rate(client: Client, lang: str) -> None:
    body = {"workload": {"kind": "inference", "model": "bge-m3", "target_sequences_per_s": 400,
                         "context_len": 1024}, "lang": lang}  # fmt: skip
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 400
    [item] = response.json()["extra"]
    assert item["key"] == "workload.target_sequences_per_s"
    assert "409600" in item["message"]  # 400 sequences/s x 1,024 tokens
    assert "1024000" not in item["message"]
    assert "400" in item["message"]
    assert "1024" in item["message"]
    if lang == "zh":
        assert "每秒序列数" in item["message"]
        assert "sequences/s" not in item["message"]


def test_sequences_per_second_advice_without_context_len(client: Client) -> None:
    body = {
        "workload": {"kind": "inference", "model": "bert-large", "sequences_per_s": 250},
        "lang": "en",
    }
    response = client.post("/v1/recommend", json=body)
    [item] = response.json()["extra"]
    assert "250 sequences/s" in item["message"]
    assert "128000" in item["message"]


def test_sequences_per_second_advice_with_a_value_that_is_no_number(client: Client) -> None:
    body = {
        "workload": {"kind": "inference", "model": "bert-large", "sequences_per_s": "many"},
        "lang": "en",
    }
    [item] = client.post("/v1/recommend", json=body).json()["extra"]
    assert "2,000 sequences/s of 512 tokens = 1024000" in item["message"]


@pytest.mark.parametrize(("typed", "closest"), [
    ("verl", "megatron"), ("openrlhf", "deepspeed"), ("OpenRLHF", "deepspeed"),
    ("trl", "hf"), ("deepspeed-chat", "deepspeed"), ("megatron-lm", "megatron"),
])  # fmt: skip
@pytest.mark.parametrize("kind", ["rlhf", "finetune"])
def test_rl_stack_names_are_refused_with_the_closest_framework(
    client: Client, typed: str, closest: str, kind: str
) -> None:
    body = {"workload": {"kind": kind, "model": "qwen2.5-7b", "framework": typed}, "lang": "en"}
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 400
    [item] = response.json()["extra"]
    assert item["key"] == "workload.framework"
    assert item["suggestions"][0] == closest
    assert f"did you mean {closest}" in item["message"]
