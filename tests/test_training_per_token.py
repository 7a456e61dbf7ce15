"""Training of unknown length ranks by cost per training token (review 3, R5).

Without ``tokens`` a LoRA of Qwen2.5-7B on Tencent Cloud ranked by the hourly price: a
V100 at ¥11.98/h first, although an A100 at ¥28.64/h trains each token for less — and as
soon as ``tokens`` is given, the A100 ranks first and the V100 is not in the top four.
The throughput per device is known without the token count, so the cheapest way to run
the job is known too: the option says about how much a million training tokens cost,
as open-ended serving does per generated token."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.overheads import class_overhead
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Finetune
from tests.sizing.calibration import MODELS

LORA = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "seq_len": 2048}


def _options(client: TestClient[Litestar], workload: dict[str, Any], lang: str = "en") -> Any:
    body = {"workload": workload, "constraints": {"providers": ["tencent"]},
            "objective": "cost", "top_k": 4, "lang": lang}  # fmt: skip
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()["options"]


def _per_million(option: dict[str, Any], pattern: str) -> float | None:
    for reason in option["reasons"]:
        found = re.search(pattern, reason)
        if found:
            return float(found.group(1).replace(",", ""))
    return None


def test_unknown_length_ranks_what_the_known_length_ranks(client: TestClient[Litestar]) -> None:
    open_ended = _options(client, LORA)
    finite = _options(client, {**LORA, "tokens": 50_000_000})
    assert open_ended[0]["instance_type"] == finite[0]["instance_type"], (
        open_ended[0]["instance_type"], finite[0]["instance_type"])  # fmt: skip
    assert open_ended[0]["hours"] is None


def test_each_option_says_its_cost_per_million_training_tokens(
    client: TestClient[Litestar],
) -> None:
    options = _options(client, LORA)
    figures = [_per_million(o, r"about ¥([\d,.]+) per million training tokens") for o in options]
    assert all(f is not None for f in figures), [o["reasons"] for o in options]
    assert figures == sorted(figures)
    # the finite job's training loop over its tokens is the same figure (same option, same
    # rate); its total also pays the fixed start-up and save time (review 3 R16), which
    # does not scale with the tokens
    finite = _options(client, {**LORA, "tokens": 50_000_000})[0]
    work = msgspec.convert({**LORA, "tokens": 50_000_000}, Finetune)
    overhead = class_overhead(resolve_workload(work, MODELS))
    assert overhead is not None
    loop = finite["total_cost"] - finite["price_per_hour"] * overhead.hours
    assert figures[0] == pytest.approx(loop / 50, rel=0.01)
    assert finite["total_cost"] / 50 > figures[0]


def test_the_figure_is_said_in_chinese(client: TestClient[Litestar]) -> None:
    top = _options(client, LORA, lang="zh")[0]
    assert _per_million(top, r"每百万训练 tokens 约 ¥([\d,.]+)") is not None, top["reasons"]
