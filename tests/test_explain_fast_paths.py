"""The explain stage's shortcuts write exactly what its general code writes.

Session 14 made an uncached answer cheaper to explain: the ranking sentence is written
by a writer fixed to the class's terms (:func:`service.planning.texts.rank_writer`), and
what the summary, the estimate and the warnings read of an option's offer and placement
alone is kept per class of answers (:class:`service.planning.explain.AnswerParts`). A
shortcut that took a branch the general code does not, or a memo whose key missed what
its value reads, would change a sentence; these tests compare each with the code it
stands in for, and whole answers at several token counts and in both languages with a
planner that keeps nothing.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

import msgspec
import pytest

from service.catalog.aggregate import CatalogSnapshot
from service.catalog.models import Offer
from service.planning import texts
from service.planning.candidates import Candidate, Cheapest
from service.planning.memo import PlanCache
from service.planning.recommend import recommend
from service.planning.schema import Lang, RecommendRequest
from service.planning.width import global_batch, replica_ceiling
from service.sizing.workload import Workload
from tests.conftest import builtin_plan_context
from tests.test_planner_bounds import real  # noqa: F401


def _offers(snapshot: CatalogSnapshot) -> list[Offer]:
    """One quoted, one estimated and one unpriced offer of the catalog."""
    quoted = next(o for o in snapshot.offers if o.price is not None and not o.price.estimated)
    estimated = next(o for o in snapshot.offers if o.price is not None and o.price.estimated)
    found = [quoted, estimated]
    unpriced = next((o for o in snapshot.offers if o.price is None), None)
    if unpriced is not None:
        found.append(unpriced)
    return found


def _candidates(offers: list[Offer]) -> list[Candidate]:
    """Candidates over every field the ranking sentence reads: hours or not, a total or
    not, a price or not, a balanced verdict, rates and prices per million."""
    out = []
    cheapest = Cheapest(figure=12.5, unit="total", premium=0.1)
    for offer, hours, price, total, balanced, tps, pmt, pmtt in itertools.product(
        offers,
        (None, 0.4, 2.4655576152024787, 1234.5),
        (None, 9.53),
        (None, 23.49676407287962),
        (None, (True, cheapest), (False, cheapest)),
        (None, 812.4),
        (None, 0.731),
        (None, 3.2),
    ):
        out.append(
            Candidate(
                offer, 1, 1, None, hours, price, total,
                throughput_tokens_per_s=tps, price_per_million_tokens=pmt,
                price_per_million_training_tokens=pmtt, balanced=balanced,
            )
        )  # fmt: skip
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("objective", ["cost", "time", "balanced"])
def test_the_rank_writer_writes_what_rank_reason_writes(
    real: CatalogSnapshot,  # noqa: F811
    objective: Any,
    lang: Lang,
) -> None:
    """Every branch of :func:`texts.rank_reason` the writer takes, or hands back to it."""
    candidates = _candidates(_offers(real))
    checked = fast = 0
    for serving, to_target, images, batch, scale in itertools.product(
        (False, True), (False, True), (False, True), (False, True), (1.0, 1.1764)
    ):
        write = texts.rank_writer(objective, serving, lang, to_target, None, images, False, batch)
        for c in candidates:
            expected = texts.rank_reason(
                c, objective, serving, lang, to_target, None, scale, images, False, batch
            )
            assert write(c, scale) == expected, (c, serving, to_target, images, batch, scale)
            checked += 1
            fast += bool(
                not serving
                and c.hours is not None
                and (objective == "time" or c.total_cost is not None)
            )
    assert fast > checked // 10  # the shortcut itself was compared, not only the fallback


BENCH = {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024}
"""The bench's ``recommend_tokens`` job (bench/bench.py ``RECOMMEND``), at other lengths."""


def _request(tokens: int, lang: str, **constraints: Any) -> RecommendRequest:
    return msgspec.convert(
        {"workload": {**BENCH, "tokens": tokens}, "constraints": constraints,
         "objective": "cost", "top_k": 5, "lang": lang},
        RecommendRequest,
    )  # fmt: skip


@pytest.mark.parametrize(
    "constraints",
    [{}, {"providers": ["alibaba"]}, {"billing": ["monthly", "spot"]}, {"deadline_hours": 3}],
)
def test_one_shape_at_two_lengths_and_two_languages_matches_a_planner_without_memo(
    real: CatalogSnapshot,  # noqa: F811
    constraints: dict[str, Any],
) -> None:
    """One shared memo answers the bench's shape at two token counts in English, then in
    Chinese, then English again: each answer is byte for byte a memo-free planner's, and
    the two lengths' answers differ (the kept parts are not a stale answer)."""
    warm = builtin_plan_context(real, PlanCache())
    seen: dict[tuple[str, int], bytes] = {}
    for lang, tokens in [("en", 20_000_000), ("en", 31_000_000), ("zh", 20_000_000),
                         ("zh", 31_000_000), ("en", 20_000_000)]:  # fmt: skip
        req = _request(tokens, lang, **constraints)
        fresh = msgspec.json.encode(recommend(req, builtin_plan_context(real), lang))
        kept = msgspec.json.encode(recommend(req, warm, lang))
        assert kept == fresh, (lang, tokens)
        seen[(lang, tokens)] = kept
    for lang in ("en", "zh"):
        assert seen[(lang, 20_000_000)] != seen[(lang, 31_000_000)]
    assert seen[("en", 20_000_000)] != seen[("zh", 20_000_000)]


def _varied_offers(snapshot: CatalogSnapshot) -> list[Offer]:
    """Offers of every billing, price kind (quoted, estimated, borrowed, none) and row
    confidence the catalog has, one of each."""
    picked: dict[tuple[object, ...], Offer] = {}
    for o in snapshot.offers:
        price = o.price
        kind = (
            o.billing,
            None if price is None else (price.estimated, price.price_source, price.basis),
            o.instance.confidence,
        )
        picked.setdefault(kind, o)
    return list(picked.values())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_framed_summary_is_the_summary(real: CatalogSnapshot, lang: Lang) -> None:  # noqa: F811
    """:func:`texts.framed_summary` of :func:`texts.summary_frame` is :func:`texts.summary`
    wherever a frame is given: over billings, price kinds, confidence, node counts, places
    to buy in and outside mainland China, totals known or not."""
    offers = _varied_offers(real)
    framed = 0
    for offer, nodes, hours, total, (cities, abroad) in itertools.product(
        offers, (1, 3), (0.3, 2.4655576152024787, 800.0), (None, 23.49676407287962),
        [((), False), (("Shanghai",), False), (("Hong Kong", "Singapore"), True)],
    ):  # fmt: skip
        price = offer.price
        per_hour = None if price is None or price.price_per_hour is None else price.price_per_hour
        c = Candidate(offer, nodes, nodes, None, hours, per_hour and per_hour * nodes, total)
        accel = f"{offer.instance.accelerator_count}×{offer.instance.accelerator}"
        for serving in (False, True):
            frame = texts.summary_frame(lang, "Cloud", c, accel, serving, cities, abroad)
            if frame is None:
                continue
            framed += 1
            expected = texts.summary(lang, "Cloud", c, accel, serving, cities=cities, abroad=abroad)
            assert texts.framed_summary(frame, c, lang) == expected, (offer, nodes, hours, total)
    assert framed > len(offers)  # frames were given, over most offers and both sides


WIDTHS: list[tuple[dict[str, Any], list[tuple[int | None, tuple[int, int] | None]]]] = [
    ({"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024},
     [(128, (128, 128)), (1, (1, 1)), (32, (32, 32)), (128, (128, 128)), (128, (128, 128))]),
    ({"kind": "finetune", "model": "llama-2-7b", "method": "lora", "seq_len": 2048,
      "micro_batch_size": 4},
     [(128, (32, 128)), (4, (1, 4)), (16, (4, 16)), (128, (32, 128)), (128, (32, 128))]),
    ({"kind": "finetune", "model": "llama-2-7b", "method": "lora", "global_batch_size": 64,
      "micro_batch_size": 4, "gradient_accumulation_steps": 2}, [(64, (8, 64))] * 5),
    ({"kind": "finetune", "model": "llama-2-7b", "method": "lora",
      "gradient_accumulation_steps": 4},
     [(128, (128, 128)), (1, (1, 1)), (16, (16, 16)), (128, (128, 128)), (128, (128, 128))]),
    ({"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e9}, [(None, None)] * 5),
    ({"kind": "pretrain", "model": "llama-2-7b", "tokens": 1e9, "global_batch_size": 64,
      "seq_len": 4096}, [(64, (64, 64))] * 5),
    ({"kind": "rlhf", "model": "llama-2-7b", "algorithm": "dpo"},
     [(128, (128, 128)), (1, (1, 1)), (16, (16, 16)), (128, (128, 128)), (128, (128, 128))]),
    ({"kind": "rlhf", "model": "llama-2-7b", "algorithm": "ppo"}, [(256, (256, 256))] * 5),
    ({"kind": "rlhf", "model": "llama-2-7b", "algorithm": "grpo"}, [(1280, (1280, 1280))] * 5),
    ({"kind": "rlhf", "model": "llama-2-7b", "algorithm": "grpo", "global_batch_size": 16},
     [(16, (16, 16))] * 5),
    ({"kind": "inference", "model": "llama-2-7b"}, [(None, None)] * 5),
]  # fmt: skip
"""Workloads with their global batch and (replicas, batch) ceiling at the tokens below, as
service/planning/width.py gave them before session 14 read each field once (the figures
follow its rules: 128 for a fine-tune or DPO, shortened to a power of two under 500
optimizer steps; verl's 256 prompts, x5 for GRPO; a batch sent wins; micro batch x
accumulation per replica)."""


@pytest.mark.parametrize(("body", "expected"), WIDTHS)
def test_width_rules_give_the_batches_they_gave(
    body: dict[str, Any], expected: list[tuple[int | None, tuple[int, int] | None]]
) -> None:
    workload = msgspec.convert(body, Workload)  # type: ignore[arg-type]
    for tokens, (batch, ceiling) in zip((None, 1e5, 2e7, 5e8, 1e12), expected, strict=True):
        assert global_batch(workload, tokens) == batch, tokens
        assert replica_ceiling(workload, tokens) == ceiling, tokens


_SAMPLES: tuple[object, ...] = (1234.5678, 7, -0.004, "a word", None, 10**12)


def _values_for(template: str, sample: object) -> dict[str, object]:
    return {
        field: sample for _, field, _, _ in string.Formatter().parse(template) if field is not None
    }


def test_every_template_fills_as_format_map_does() -> None:
    """:func:`texts.template_fill` of every sentence in both languages against
    ``str.format_map``: the same text for values of every kind its specs take, the same
    exception where a value does not take the spec, the same ``KeyError`` for a missing
    value, and a mapping's extra keys ignored."""
    compiled = 0
    for key, by_lang in texts._T.items():
        for lang, template in by_lang.items():
            fill = texts.template_fill(template)
            compiled += fill != template.format_map
            for sample in _SAMPLES:
                values = {**_values_for(template, sample), "not_a_field": 1}
                try:
                    expected: object = template.format_map(values)
                except Exception as error:  # the kind is what is compared
                    expected = type(error)
                try:
                    got: object = fill(values)
                except Exception as error:
                    got = type(error)
                assert got == expected, (key, lang, sample)
            if _values_for(template, 0):
                with pytest.raises(KeyError):
                    fill({})
    assert compiled > len(texts._T)  # templates were compiled, not left to format_map


@pytest.mark.parametrize(
    "template",
    ["plain", "{a}{b!r:>8}", "it's {a:,.2f} \\ {{literal}} {b}", "{0}", "{a.real}",
     "{a[0]}", "{a:{b}}", "line\nbreak {a}", "¥{a:,.0f}（{b}）"],
)  # fmt: skip
def test_a_template_str_format_reads_otherwise_keeps_its_meaning(template: str) -> None:
    """Quotes, backslashes, escaped braces, conversions and Chinese punctuation are
    compiled as written; positional, attribute, index and nested fields and unprintable
    text keep ``format_map`` (the same result either way)."""
    fill = texts.template_fill(template)
    for values in ({"a": 3.14159, "b": "x", 0: "zero"}, {"a": [5], "b": "2"}):
        try:
            expected: object = template.format_map(values)
        except Exception as error:
            expected = type(error)
        try:
            got: object = fill(values)
        except Exception as error:
            got = type(error)
        assert got == expected, (template, values)


def test_a_new_class_of_answers_compiles_no_template_again() -> None:
    """Every class of answers asks for its ranking writer anew, and compiling a template
    is an ``eval`` (about 80 us): a new job shape paid it twice per answer (session 14's
    shapes bench lost 11 %). Writers of another class reuse the compiled fills: after one
    writer per objective and language, further writers compile nothing."""
    combos = [
        (objective, lang) for objective in ("cost", "time", "balanced") for lang in ("en", "zh")
    ]
    for objective, lang in combos:
        texts.rank_writer(objective, False, lang)  # type: ignore[arg-type]
    compiled = dict(texts._COMPILED)
    for objective, lang in combos * 3:
        texts.rank_writer(objective, False, lang, batch=True)  # type: ignore[arg-type]
    assert compiled == texts._COMPILED
    template = texts._T["rank_cost"]["en"]
    assert texts.template_fill(template) is texts.template_fill(template)
    assert texts.template_fill(template) is not texts.compile_fill(template)
