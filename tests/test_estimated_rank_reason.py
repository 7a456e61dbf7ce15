"""An estimated price is ranked at the top of its range (``Price.ranking_price``), and the
option's ranking reason says so with the figure the ranking used (issue 12 item 3):
"about ¥401.42" alone read as if the point estimate had been compared."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

LORA = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e8}
HEAD = ("Ranked by total cost", "按总费用排序")
RANKED = {
    "en": r"top of its range \(about ¥([\d,.]+) in total\)",
    "zh": r"区间上限计（总费用约 ¥([\d,.]+)）",
}


def options(client: TestClient[Litestar], lang: str, **extra: Any) -> list[dict[str, Any]]:
    body = {"workload": LORA, "constraints": {"providers": ["alibaba"]}, "lang": lang,
            "top_k": 5, **extra}  # fmt: skip
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["options"]
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_estimate_says_it_was_ranked_at_the_top_of_its_range(
    client: TestClient[Litestar], lang: str
) -> None:
    ranked = options(client, lang)
    estimated = [o for o in ranked if o["price_estimated"]]
    quoted = [o for o in ranked if not o["price_estimated"] and o["price_per_hour"] is not None]
    assert estimated
    assert quoted
    for option in estimated:
        reason = next(r for r in option["reasons"] if HEAD[lang == "zh"] in r)
        match = re.search(RANKED[lang], reason)
        assert match is not None, reason
        scale = option["price_high_per_hour"] / option["price_per_hour"]
        # shown prices are rounded to cents: 0.1 % covers their rounding
        assert float(match[1].replace(",", "")) == pytest.approx(
            option["total_cost"] * scale, rel=1e-3
        )
    for option in quoted:
        assert not any("区间上限" in r or "top of its range" in r for r in option["reasons"])
    # the order is the one the reason describes: an estimate counts at its range's top
    # against a quote's figure, whichever of the two ranks first
    for e in estimated:
        ranked = e["total_cost"] * e["price_high_per_hour"] / e["price_per_hour"]
        for q in quoted:
            if e["rank"] < q["rank"]:
                assert ranked <= q["total_cost"] * (1 + 1e-3), (e, q)
            else:
                assert q["total_cost"] <= ranked * (1 + 1e-3), (e, q)


def test_balanced_says_which_total_it_weighed(client: TestClient[Litestar]) -> None:
    """``balanced`` weighs a job's total against the cheapest one: an estimate's reason
    says the total it was counted at (the top of its range)."""
    estimated = [o for o in options(client, "en", objective="balanced") if o["price_estimated"]]
    assert estimated
    option = estimated[0]
    reason = next(r for r in option["reasons"] if "the cheapest total" in r)
    match = re.search(RANKED["en"], reason)
    assert match is not None, reason
    scale = option["price_high_per_hour"] / option["price_per_hour"]
    assert float(match[1].replace(",", "")) == pytest.approx(option["total_cost"] * scale, rel=1e-3)
