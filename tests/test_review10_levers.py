"""Review 8's K9 and K10 (docs/answer-review.md, session 11): levers of an empty answer.

* K9: DeepSeek-V3 full fine-tune on at most 8 accelerators had no option and no lever,
  only the memory per device. Now the answer says how many accelerators a full fine-tune
  needs at the fewest (the planner's own fit, priced by the planner at that exact count)
  and what the cheapest option without the limit costs, and offers LoRA, else QLoRA, on
  the accelerators allowed;
* K10: Llama-3.1-405B served on T4s at 8 × 8k context: the precision lever is tried and
  no T4 layout holds the model even at INT4, which the answer now says in one sentence
  with the figure per device.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

V3_FULL = {"kind": "finetune", "model": "deepseek-v3", "method": "full", "tokens": 100_000_000}
V3_ON_8 = {"workload": V3_FULL, "constraints": {"max_accelerators": 8}}


def _hint(answer: dict[str, Any], constraint: str) -> dict[str, Any]:
    found = [h for h in answer["relax"] if h["constraint"] == constraint]
    assert len(found) == 1, answer["relax"]
    return found[0]


def _sentence(answer: dict[str, Any], nearest: str) -> str:
    found = [w for w in answer["warnings"] if nearest in w]
    assert len(found) == 1, answer["warnings"]
    return found[0]


@pytest.mark.parametrize(
    ("lang", "fewest"),
    [("en", r"the fewest that hold it are (\d+) \((\d+) servers of (\d+)×([\w-]+)"),
     ("zh", r"最少需要 (\d+) 张卡（(\d+) 台 (\d+)×([\w-]+)")],
)  # fmt: skip
def test_a_full_fine_tune_beyond_the_accelerator_limit_says_how_many_it_needs(
    client: TestClient[Litestar], lang: str, fewest: str
) -> None:
    answer = recommend(client, V3_ON_8, lang)
    assert answer["options"] == []
    hint = _hint(answer, "max_accelerators")
    sentence = _sentence(answer, hint["nearest"])
    assert "max_accelerators" not in sentence, sentence
    assert "ZeRO-3" in sentence, sentence
    found = re.search(fewest, sentence)
    assert found, sentence
    count, servers, per_node, accelerator = found.groups()
    assert int(count) == int(servers) * int(per_node) > 8
    # the planner's own figures: that exact count of that accelerator holds the job, one
    # server fewer does not
    exact = {"max_nodes": 64, "accelerators": [accelerator]}
    at = {**exact, "accelerator_count": int(count)}
    held = recommend(client, {"workload": V3_FULL, "constraints": at}, "en")
    assert held["options"], held["summary"]
    assert held["options"][0]["accelerator"]["count"] * held["options"][0]["nodes"] == int(count)
    fewer = int(count) - int(per_node)
    below = {**exact, "accelerator_count": fewer}
    short = recommend(client, {"workload": V3_FULL, "constraints": below}, "en")
    assert short["options"] == [], short["summary"]
    # and the cheapest option without the limit, as the planner ranks it at 64 servers
    free = recommend(client, {"workload": V3_FULL, "constraints": {"max_nodes": 64}}, lang)
    top = free["options"][0]
    assert f"{top['total_cost']:,.2f}" in sentence, (sentence, top["total_cost"])
    assert top["instance_type"] in sentence


def test_beyond_the_limit_zero_offload_is_said_with_the_fewer_accelerators_it_needs(
    client: TestClient[Litestar],
) -> None:
    answer = recommend(client, V3_ON_8, "en")
    sentence = _sentence(answer, _hint(answer, "max_accelerators")["nearest"])
    found = re.search(r"With ZeRO-Offload .* as well .*, (\d+) would do \((\d+) servers", sentence)
    assert found, sentence
    fewest = re.search(r"the fewest that hold it are (\d+)", sentence)
    assert fewest
    assert int(found.group(1)) < int(fewest.group(1))
    # the planner's own cheapest option with offload and without the limit
    offload = {**V3_FULL, "offload": "optimizer"}
    own = recommend(
        client, {"workload": offload, "constraints": {"max_nodes": 64}, "top_k": 1}, "en"
    )["options"][0]
    assert own["accelerator"]["count"] * own["nodes"] == int(found.group(1))
    assert f"{own['total_cost']:,.2f}" in sentence.split("would do")[1]


@pytest.mark.parametrize(("lang", "word"), [("en", "QLoRA instead of a full fine-tune"),
                                            ("zh", "改用 QLoRA")])  # fmt: skip
def test_a_full_fine_tune_that_does_not_fit_is_offered_lora_or_qlora_on_the_devices_allowed(
    client: TestClient[Litestar], lang: str, word: str
) -> None:
    answer = recommend(client, V3_ON_8, lang)
    hint = _hint(answer, "method")
    sentence = _sentence(answer, hint["nearest"])
    assert word in sentence, sentence
    assert "method" not in sentence, sentence
    # LoRA does not fit on 8 accelerators, QLoRA does: its option is the planner's own
    lora = {**V3_FULL, "method": "lora"}
    assert recommend(client, {"workload": lora, "constraints": {"max_accelerators": 8}},
                     lang)["options"] == []  # fmt: skip
    qlora_on_8 = {**V3_ON_8, "workload": {**V3_FULL, "method": "qlora"}, "top_k": 1}
    qlora = recommend(client, qlora_on_8, lang)
    top = qlora["options"][0]
    assert top["instance_type"] in sentence
    assert f"{top['total_cost']:,.2f}" in sentence, (sentence, top["total_cost"])


def test_a_full_fine_tune_that_fits_as_lora_is_offered_lora_first(
    client: TestClient[Litestar],
) -> None:
    job = {"kind": "finetune", "model": "qwen2.5-72b", "method": "full", "tokens": 50_000_000}
    answer = recommend(client, {"workload": job, "constraints": {"max_accelerators": 8}}, "en")
    assert answer["options"] == []
    sentence = _sentence(answer, _hint(answer, "method")["nearest"])
    assert "With LoRA instead of a full fine-tune" in sentence, sentence
    on_8 = {"max_accelerators": 8}
    lora = recommend(
        client, {"workload": {**job, "method": "lora"}, "constraints": on_8, "top_k": 1}, "en"
    )
    assert lora["options"][0]["instance_type"] in sentence


L405_ON_T4 = {
    "workload": {"kind": "inference", "model": "llama-3.1-405b", "concurrency": 8,
                 "context_len": 8192},
    "constraints": {"accelerators": ["T4"]},
}  # fmt: skip


@pytest.mark.parametrize(("lang", "words"), [("en", ("With INT4 weights", "does not fit either")),
                                             ("zh", ("改用 INT4 权重", "也放不下"))])  # fmt: skip
def test_int4_that_does_not_fit_the_accelerators_asked_is_said_in_one_sentence(
    client: TestClient[Litestar], lang: str, words: tuple[str, str]
) -> None:
    answer = recommend(client, L405_ON_T4, lang)
    assert answer["options"] == []
    assert not [h for h in answer["relax"] if h["constraint"] == "precision"]
    said = [w for w in answer["warnings"] if all(word in w for word in words)]
    assert len(said) == 1, answer["warnings"]
    # the figure is the planner's INT4 sizing: the INT4 request's own empty answer
    int4 = {**L405_ON_T4, "workload": {**L405_ON_T4["workload"], "precision": "int4"}}
    own = recommend(client, int4, lang)
    assert own["options"] == []
    figure = re.search(r"(\d+\.\d) GiB", own["summary"])
    assert figure, own["summary"]
    assert f"{figure.group(1)} GiB" in said[0], said[0]
    assert float(figure.group(1)) > 16 * 0.9
    # and the advice does not tell this job that quantization cuts memory
    serving = [a["text"] for a in answer["advice"] if a["topic"] == "serving"]
    assert not [t for t in serving if "INT4" in t], serving
