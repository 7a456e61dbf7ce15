"""A price cap is what the user pays per hour of use, and a subscription is a commitment
(review 3, R8): a 17-hour LoRA capped at ¥10/h was sent to a ¥5,190 monthly contract
because the month's price spread over 730 h (¥7.11/h) passed the cap — ¥305 per hour the
job actually uses. A finite job shorter than the monthly break-even is billed on demand
unless the user asks for ``billing: ["monthly"]``, and then the answer says how much of
the month the job uses."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

LORA_17H: dict[str, Any] = {
    "workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "seq_len": 2048,
                 "tokens": 5e7},
    "lang": "en",
}  # fmt: skip


def _recommend(client: TestClient[Litestar], **extra: Any) -> dict[str, Any]:
    body = {**LORA_17H, **extra}
    if "lang" in extra:
        body["lang"] = extra["lang"]
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_price_cap_is_the_price_per_hour_of_use(client: TestClient[Litestar]) -> None:
    answer = _recommend(client, constraints={"max_price_per_hour": 10}, top_k=10)
    for option in answer["options"]:
        assert option["billing"] != "monthly", option
        if option["total_cost"] is not None:
            # what the job pays per hour it runs, all nodes together
            assert option["total_cost"] / option["hours"] <= 10 * 1.001, option
    assert "monthly" not in answer["summary"]


def test_a_short_job_is_not_put_on_a_subscription_by_default(
    client: TestClient[Litestar],
) -> None:
    answer = _recommend(client, top_k=20)
    assert answer["options"]
    for option in answer["options"]:
        assert option["billing"] != "monthly", option  # 17 h, break-even 288-480 h


def test_a_long_job_may_still_be_billed_monthly(client: TestClient[Litestar]) -> None:
    body = {**LORA_17H, "workload": {**LORA_17H["workload"], "tokens": 2e9}, "top_k": 10}
    response = client.post("/v1/recommend", json=body)
    assert response.status_code == 200, response.text
    monthly = [o for o in response.json()["options"] if o["billing"] == "monthly"]
    assert monthly  # ~680 h per node: beyond the break-even, the month is cheaper
    for option in monthly:
        assert option["break_even_hours"] is not None
        assert option["hours"] >= option["break_even_hours"]


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", ("commits ¥5,190 for a whole month", "of which the job uses 17 h")),
     ("zh", ("承诺整月 ¥5,190", "只用其中 17 小时"))],
)  # fmt: skip
def test_monthly_asked_for_says_what_the_month_commits(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    answer = _recommend(
        client,
        constraints={"billing": ["monthly"], "providers": ["tencent"]},
        top_k=3,
        lang=lang,
    )
    top = answer["options"][0]
    assert top["billing"] == "monthly"
    assert top["instance_type"] == "GN10X.2XLARGE40"
    assert top["total_cost"] == pytest.approx(5190.0)
    for w in words:
        assert any(w in r for r in top["reasons"]), (w, top["reasons"])
