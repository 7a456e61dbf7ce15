"""Spot rows that can never win are not listed (review P11).

Without a published spot price the catalog estimates spot at "10–100 % of on-demand" and
ranks it at the top, the on-demand price; with the reclaim overhead on top such a row is
always worse than the on-demand row of the same type, while the spot advice of the same
answer says spot usually costs 10–30 %. When on-demand is allowed too, those rows are
left out and the answer says once, in its language, why and how many."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

QLORA_7B = {
    "workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 2048,
                 "tokens": 20_000_000},
    "top_k": 8,
}  # fmt: skip
HIDDEN = {"en": "Spot offers not listed: ", "zh": "个竞价实例报价未列出"}


def answer(client: TestClient[Litestar], body: dict[str, Any], lang: str) -> Any:
    response = client.post("/v1/recommend", json={**body, "lang": lang})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_spot_estimates_at_the_on_demand_price_are_left_out_and_counted(
    client: TestClient[Litestar], lang: str
) -> None:
    body = answer(client, QLORA_7B, lang)
    options = body["options"]
    assert len(options) == 8
    on_demand = {
        (o["provider"], o["instance_type"]): o["price_per_hour"]
        for o in options
        if o["billing"] == "on_demand"
    }
    for o in options:  # no spot row at or above the on-demand price of its type
        if o["billing"] == "spot":
            od = on_demand.get((o["provider"], o["instance_type"]))
            assert od is None or o["price_per_hour"] < od
    assert not any(o["billing"] == "spot" for o in options)  # every spot row is an estimate
    notes = [w for w in body["warnings"] if HIDDEN[lang] in w]
    assert len(notes) == 1
    count = int(notes[0].split()[4].rstrip(".") if lang == "en" else notes[0].split()[1])
    assert count > 0


def test_spot_only_still_lists_spot_estimates(client: TestClient[Litestar]) -> None:
    body = answer(client, {**QLORA_7B, "constraints": {"billing": ["spot"]}}, "en")
    assert body["options"]
    assert all(o["billing"] == "spot" for o in body["options"])
    assert not any(HIDDEN["en"] in w for w in body["warnings"])
