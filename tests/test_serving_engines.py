"""Serving engines and the cards they run on: vLLM, SGLang, LMDeploy and TensorRT-LLM need
CUDA compute capability 7.0+, so Pascal cards (P4, P40, P100) are never recommended with
them; plain PyTorch (``engine: "hf"``) still runs them, at its own (slow) rate."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from service.planning.recommend import PlanContext, recommend
from service.planning.schema import RecommendRequest, RecommendResponse
from tests.conftest import builtin_plan_context

PASCAL = {"P4", "P40", "P100"}


@pytest.fixture(scope="module")
def context() -> PlanContext:
    return builtin_plan_context()


def serve(context: PlanContext, lang: str = "en", **workload: Any) -> RecommendResponse:
    constraints = workload.pop("constraints", {})
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b-instruct",
                         "concurrency": 32, "context_len": 8192, **workload},
            "constraints": constraints, "top_k": 20, "lang": lang}  # fmt: skip
    req = msgspec.convert(body, RecommendRequest)
    return recommend(req, context, lang)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", [None, "vllm", "sglang", "lmdeploy", "tensorrt-llm"])
def test_the_reviews_request_has_no_pascal_option(context: PlanContext, engine: str | None) -> None:
    extra = {} if engine is None else {"engine": engine}
    answer = serve(context, **extra)
    assert answer.options, "other cards serve it"
    assert not {o.accelerator.name for o in answer.options if o.accelerator} & PASCAL


def test_plain_pytorch_may_serve_on_pascal_at_its_own_rate(context: PlanContext) -> None:
    only = {"accelerators": sorted(PASCAL)}
    hf = serve(context, engine="hf", constraints=only)
    assert hf.options
    assert {o.accelerator.name for o in hf.options if o.accelerator} <= PASCAL
    assert all(o.throughput_tokens_per_s for o in hf.options)
    assert any("plain PyTorch" in w for w in hf.options[0].warnings)
    vllm_on_t4 = serve(context, engine="vllm", constraints={"accelerators": ["T4"]})
    hf_on_t4 = serve(context, engine="hf", constraints={"accelerators": ["T4"]})
    assert vllm_on_t4.options
    assert hf_on_t4.options
    # the same card decodes slower under plain PyTorch than under vLLM (eager decode)
    assert (hf_on_t4.options[0].throughput_tokens_per_s or 0) < (
        vllm_on_t4.options[0].throughput_tokens_per_s or 0
    )


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [("en", r"(\d[\d,]*) offers have accelerators \(Pascal: P4, P40, P100, compute capability "
            r"below 7\.0\) that vLLM does not run; only plain PyTorch serving does\."),
     ("zh", r"(\d[\d,]*) 个报价的加速卡（Pascal 架构，如 P4、P40、P100，计算能力低于 7\.0）"
            r"不被 vLLM 支持，只能用通用 PyTorch 推理。")],
)  # fmt: skip
def test_pascal_only_request_says_why_it_is_empty(
    context: PlanContext, lang: str, sentence: str
) -> None:
    answer = serve(context, lang, engine="vllm", constraints={"accelerators": sorted(PASCAL)})
    assert not answer.options
    # the summary says it first (review 9b S4: the accelerators asked for are the ones the
    # engine does not run), not again in the warnings
    found = [m for w in (answer.summary, *answer.warnings) for m in re.finditer(sentence, w)]
    assert len(found) == 1, (answer.summary, answer.warnings)
    assert re.search(sentence, answer.summary), answer.summary
    assert int(found[0].group(1).replace(",", "")) > 0  # the Pascal offers, counted


@pytest.mark.parametrize(("lang", "words"), [("en", "Ranked by price per million tokens"),
                                             ("zh", "按每百万 tokens 价格排序")])  # fmt: skip
def test_open_ended_serving_ranks_by_price_per_million_tokens(
    context: PlanContext, lang: str, words: str
) -> None:
    options = serve(context, lang).options
    per_million = [o.price_per_million_tokens for o in options]
    assert len(per_million) >= 5
    assert all(p is not None for p in per_million)
    # estimates rank at the top of their range (their shown figure is mid-range), so
    # the confirmed prices are the ones whose shown figures follow the ranking
    confirmed = [o.price_per_million_tokens for o in options if o.price_low_per_hour is None]
    assert len(confirmed) >= 3
    assert confirmed == sorted(confirmed)  # type: ignore[type-var]
    assert all(any(words in r for r in o.reasons) for o in options)
