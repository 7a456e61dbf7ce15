"""The same job at other lengths: what the planner keeps per class of answers never
changes an answer.

Requests that differ only in their length (``tokens``, ``output_tokens``) form one class
of answers; the planner keeps what they share — the resolved filter, the lanes, every
option but for the job's figures (:class:`service.planning.recommend.AnswerClass`). The
ranking itself is not kept: hours are linear in the length, but a subscription is billed
by whole months, a deadline or a budget removes candidates past a length, and a spot
option's interruptions grow with it, so the order can change with the length (the first
test shows that it does on the real catalog). Each request is ranked again; what is kept
must be exactly what a planner with no memo computes, byte for byte, for lengths from a
minute's job to a year's, under deadlines and budgets that bind at some lengths and not
at others, for every objective and kind of job.
"""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
import pytest

from service.catalog.aggregate import CatalogSnapshot
from service.planning.memo import PlanCache
from service.planning.recommend import PlanContext, recommend
from service.planning.schema import Lang, RecommendRequest
from tests.conftest import builtin_plan_context
from tests.test_planner_bounds import _ranked, _selected, dense, real  # noqa: F401

TRAINING: dict[str, dict[str, Any]] = {
    "qlora-7b": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024},
    "full-70b": {"kind": "finetune", "model": "llama-2-70b", "method": "full"},
    "pretrain-7b": {"kind": "pretrain", "model": "llama-2-7b"},
}  # fmt: skip
TOKENS = [10**5, 3 * 10**6, 2 * 10**7, 123_456_789, 10**9, 7 * 10**9, 6 * 10**10, 10**12]
"""From minutes to about a year on one node: below and above a month's subscription."""
SERVING: dict[str, dict[str, Any]] = {
    "batch-7b": {"kind": "inference", "model": "llama-2-7b"},
    "batch-13b-int4": {"kind": "inference", "model": "llama-2-13b", "precision": "int4"},
}
OUTPUT_TOKENS = [10**5, 10**7, 5 * 10**8, 3 * 10**10, 10**12]
CONSTRAINTS: dict[str, dict[str, Any]] = {
    "none": {},
    "deadline-2h": {"deadline_hours": 2},
    "deadline-200h": {"deadline_hours": 200},
    "budget-100": {"budget": 100},
    "budget-20k": {"budget": 20_000},
    "both": {"deadline_hours": 48, "budget": 2_000},
    "monthly-or-spot": {"billing": ["monthly", "spot"]},
    "two-providers": {"providers": ["tencent", "huawei"], "max_nodes": 4},
}
OBJECTIVES = ("cost", "time", "balanced")


def _request(
    workload: dict[str, Any], constraints: str, objective: str, lang: str, top_k: int
) -> RecommendRequest:
    return msgspec.convert(
        {"workload": workload, "constraints": CONSTRAINTS[constraints],
         "objective": objective, "top_k": top_k, "lang": lang},
        RecommendRequest,
    )  # fmt: skip


def _lengths(name: str) -> tuple[str, list[int | None]]:
    """The length field and its values, with ``None`` (not given: a training job of
    unknown length, open-ended serving) among them — another class of answers in the same
    memo, which must not leak into the classes with a length."""
    if name in SERVING:
        return "output_tokens", [*OUTPUT_TOKENS[:2], None, *OUTPUT_TOKENS[2:]]
    if TRAINING[name]["kind"] == "pretrain":  # a pretraining job states its tokens
        return "tokens", list(TOKENS)
    return "tokens", [*TOKENS[:3], None, *TOKENS[3:]]


def _workload(base: dict[str, Any], field: str, length: int | None) -> dict[str, Any]:
    return base if length is None else {**base, field: length}


def _answers_match(snapshot: CatalogSnapshot, workload: str, constraints: str, top_k: int) -> None:
    """For each objective and language, one shared memo answers the job at every length,
    in an order that is not monotone; each answer equals a memo-free planner's."""
    base = {**TRAINING, **SERVING}[workload]
    field, lengths = _lengths(workload)
    order = lengths[1::2] + lengths[::-2]  # up and down: a class built at any length
    langs: tuple[Lang, ...] = ("en", "zh")
    for objective, lang in itertools.product(OBJECTIVES, langs):
        warm = builtin_plan_context(snapshot, PlanCache())
        for length in order:
            req = _request(_workload(base, field, length), constraints, objective, lang, top_k)
            fresh = msgspec.json.encode(recommend(req, builtin_plan_context(snapshot), lang))
            kept = msgspec.json.encode(recommend(req, warm, lang))
            assert kept == fresh, (objective, lang, length)


@pytest.mark.parametrize("constraints", list(CONSTRAINTS))
@pytest.mark.parametrize("workload", [*TRAINING, *SERVING])
def test_answers_at_every_length_match_a_planner_without_memo(
    real: CatalogSnapshot,  # noqa: F811
    workload: str,
    constraints: str,
) -> None:
    _answers_match(real, workload, constraints, top_k=5)


@pytest.mark.parametrize("constraints", ["none", "deadline-200h", "budget-20k", "both"])
def test_answers_match_on_a_catalog_of_many_groups(
    dense: CatalogSnapshot,  # noqa: F811
    constraints: str,
) -> None:
    """Several regions and spot prices per type: groups filtered, spot bounds used."""
    _answers_match(dense, "qlora-7b", constraints, top_k=3)


def test_the_ranking_does_depend_on_the_length(real: CatalogSnapshot) -> None:  # noqa: F811
    """Why the order is not kept per class: on the real catalog, the top option of one
    job changes with its length (on demand for a short job, a subscription or another
    type for a long one), and a deadline removes options only past some length."""
    ctx = builtin_plan_context(real, PlanCache())
    tops = set()
    for tokens in TOKENS:
        req = _request({**TRAINING["qlora-7b"], "tokens": tokens}, "none", "cost", "en", 1)
        option = recommend(req, ctx, "en").options[0]
        tops.add((option.instance_type, option.billing, option.nodes))
    assert len(tops) > 1, tops
    counts = []
    for tokens in TOKENS[:5]:
        req = _request({**TRAINING["qlora-7b"], "tokens": tokens}, "deadline-2h", "cost", "en", 50)
        counts.append(len(recommend(req, ctx, "en").options))
    assert counts[0] > counts[-1], counts


@pytest.mark.parametrize(
    ("workload", "constraints", "objective"),
    list(itertools.product(["qlora-7b", "full-70b", "batch-7b"], CONSTRAINTS, OBJECTIVES)),
)
def test_selection_matches_the_exhaustive_walk_at_every_length(
    dense: CatalogSnapshot,  # noqa: F811
    workload: str,
    constraints: str,
    objective: str,
) -> None:
    """The rank stage's shortcuts (memoized lanes, branch and bound) select what a walk
    over every bucket and group selects, at every length of the job."""
    base = {**TRAINING, **SERVING}[workload]
    field, lengths = _lengths(workload)
    warm = builtin_plan_context(dense, PlanCache())
    for length in lengths:
        req = _request(_workload(base, field, length), constraints, objective, "en", 5)
        exhaustive = _selected(req, builtin_plan_context(dense), exhaustive=True)
        assert _ranked(_selected(req, warm, exhaustive=False)) == _ranked(exhaustive), length


def test_a_refused_request_keeps_nothing(real: CatalogSnapshot) -> None:  # noqa: F811
    """A request the resolve stage refuses builds no class: the same request at another
    length is refused the same way."""
    from service.runtime.errors import InputError

    ctx: PlanContext = builtin_plan_context(real, PlanCache())
    bad = {**TRAINING["qlora-7b"], "tokens": 10**7}
    for tokens in (10**7, 10**8):
        req = msgspec.convert(
            {"workload": {**bad, "tokens": tokens}, "constraints": {"regions": ["cn-bejing"]}},
            RecommendRequest,
        )
        with pytest.raises(InputError, match="cn-bejing"):
            recommend(req, ctx, "en")
