"""Review 9's K12 (docs/answer-review.md, session 11): a request restricted to
``billing: ["monthly"]`` is answered with the month it commits (InternLM2.5-20B LoRA,
75.3 h on one A100-80GB: "包月 ¥22.84/小时 … 总费用约 ¥16,676") and said nothing of
the same server on demand (¥34.74/h × 75.3 h ≈ ¥2,616), nor its break-even: the
on-demand prices were those of the rows that pass the request's filters, and
``billing: ["monthly"]`` filters every on-demand row out.

Now each monthly option shown reads the type's on-demand price from the whole catalog
(in the option's regions): its break-even is filled, and beside a month the job uses
only partly, the option and the summary say what the job's hours cost on demand.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

HOURS_PER_MONTH = 730.0
"""``service.catalog.models.HOURS_PER_MONTH``: a month of a subscription."""

INTERNLM_LORA = {
    "kind": "finetune",
    "method": "lora",
    "model": "internlm2.5-20b",
    "tokens": 325_000_000,
}
"""About 75 h on one A100-80GB: review 9's K12 request."""

MONEY = re.compile(r"¥([\d,]+(?:\.\d+)?)")


def _on_demand(client: TestClient[Litestar], provider: str) -> dict[str, list[dict[str, Any]]]:
    """The catalog's on-demand offers of ``provider``, by instance type."""
    response = client.get(
        "/v1/offers", params={"billing": "on_demand", "provider": provider, "limit": 500}
    )
    assert response.status_code == 200, response.text
    found: dict[str, list[dict[str, Any]]] = {}
    for item in response.json()["items"]:
        if item["price_per_hour"]:
            found.setdefault(item["instance_type"], []).append(item)
    return found


def _hourly(offers: list[dict[str, Any]], regions: list[str]) -> float:
    """The cheapest on-demand price among ``offers`` sold in one of ``regions``."""
    prices = [
        o["price_per_hour"]
        for o in offers
        if not regions or not o["regions"] or set(o["regions"]) & set(regions)
    ]
    assert prices, (offers, regions)
    return min(prices)


def _figures_after(text: str, marker: str) -> list[float]:
    """The money figures of ``text`` from ``marker`` on."""
    assert marker in text, (marker, text)
    tail = text[text.index(marker) :]
    return [float(m.replace(",", "")) for m in MONEY.findall(tail)]


ON_DEMAND_WORDS = {"en": "on demand", "zh": "按量计费"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_monthly_only_answer_says_what_the_job_costs_on_demand(
    client: TestClient[Litestar], lang: str
) -> None:
    answer = recommend(
        client,
        {
            "workload": INTERNLM_LORA,
            "constraints": {"billing": ["monthly"], "accelerators": ["A100-80GB"]},
            "top_k": 3,
        },
        lang,
    )
    top = answer["options"][0]
    assert top["billing"] == "monthly"
    assert top["instance_type"] == "ecs.gn7e-c16g1.4xlarge"
    assert top["total_cost"] == pytest.approx(16676.0)
    assert 70 < top["hours"] < 80, top["hours"]
    hourly = _hourly(_on_demand(client, "alibaba")[top["instance_type"]], top["regions"])
    assert hourly == pytest.approx(34.74)
    job_on_demand = hourly * top["nodes"] * top["hours"]  # ≈ ¥2,616
    # the break-even: the month over the on-demand hour (16,676 / 34.74 ≈ 480 h)
    assert top["break_even_hours"] == pytest.approx(16676.0 / hourly, rel=0.01)
    # the option's commitment sentence gives the on-demand total for the job's hours
    words = ON_DEMAND_WORDS[lang]
    said = [r for r in top["reasons"] if "16,676" in r and words in r]
    assert len(said) == 1, top["reasons"]
    assert job_on_demand == pytest.approx(_figures_after(said[0], words)[-1], rel=0.01)
    # and the summary, in one sentence after the recommendation
    summary = answer["summary"]
    assert "16,676" in summary, summary
    assert words in summary, summary
    assert job_on_demand == pytest.approx(_figures_after(summary, words)[-1], rel=0.01)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_monthly_option_shown_has_its_break_even_and_on_demand_total(
    client: TestClient[Litestar], lang: str
) -> None:
    answer = recommend(
        client,
        {"workload": INTERNLM_LORA, "constraints": {"billing": ["monthly"]}, "top_k": 5},
        lang,
    )
    options = answer["options"]
    assert len(options) == 5
    catalogs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    words = ON_DEMAND_WORDS[lang]
    for option in options:
        assert option["billing"] == "monthly"
        provider = option["provider"]
        if provider not in catalogs:
            catalogs[provider] = _on_demand(client, provider)
        offers = catalogs[provider].get(option["instance_type"])
        assert offers, option["instance_type"]  # every type shown here is sold on demand
        hourly = _hourly(offers, option["regions"])
        months = max(1, math.ceil(option["hours"] / HOURS_PER_MONTH - 1e-9))
        month = option["total_cost"] / option["nodes"] / months
        assert option["break_even_hours"] == pytest.approx(month / hourly, rel=0.01), option
        job_on_demand = hourly * option["nodes"] * option["hours"]
        said = [r for r in option["reasons"] if words in r and f"{option['total_cost']:,.0f}" in r]
        if job_on_demand < option["total_cost"]:
            assert len(said) == 1, option["reasons"]
            assert job_on_demand == pytest.approx(_figures_after(said[0], words)[-1], rel=0.01)
        else:  # the month pays off: nothing to add beside it
            assert not said, option["reasons"]


def test_a_long_job_on_a_month_it_fills_says_no_on_demand_total(
    client: TestClient[Litestar],
) -> None:
    """A job beyond the break-even (~680 h on a month's 5,190 yuan) gains by the month:
    the commitment sentence stays as it was."""
    answer = recommend(
        client,
        {
            "workload": {
                "kind": "finetune",
                "model": "qwen2.5-7b",
                "method": "lora",
                "tokens": 2_000_000_000,
            },
            "constraints": {"billing": ["monthly"], "providers": ["tencent"]},
            "top_k": 3,
        },
        "en",
    )
    options = answer["options"]
    assert options[0]["instance_type"] == "GN10X.2XLARGE40"  # 680 h of a ¥5,190 month
    assert options[0]["hours"] >= options[0]["break_even_hours"]
    assert "on demand" not in answer["summary"], answer["summary"]
    for option in options:
        assert option["break_even_hours"] is not None, option
        if option["hours"] >= option["break_even_hours"]:
            assert not any("on demand" in r for r in option["reasons"]), option["reasons"]
