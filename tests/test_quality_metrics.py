"""The metrics the dashboard and alerts need: answer quality and live-price age."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from service.api.answer_quality import AnswerQuality, top_pick
from tests.test_live_serving import publish

MakeClient = Callable[..., TestClient[Litestar]]
QLORA = {"workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "qlora"}}


def samples(client: TestClient[Litestar], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    text = client.get("/metrics").text
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    }


def answers(client: TestClient[Litestar]) -> dict[str, float]:
    found = samples(client, "suanli_recommend_answers_total")
    return {dict(labels)["top_pick"]: value for labels, value in found.items()}


def test_answers_are_counted_by_top_pick_including_cache_hits(make_client: MakeClient) -> None:
    client = make_client()
    before = answers(client)
    first = client.post("/v1/recommend", json=QLORA)
    second = client.post("/v1/recommend", json=QLORA)
    assert (first.headers["x-suanli-cache"], second.headers["x-suanli-cache"]) == ("miss", "hit")
    assert first.json()["options"][0]["price_per_hour"] is not None
    assert not first.json()["options"][0]["price_estimated"]
    nothing = client.post(
        "/v1/recommend", json={**QLORA, "constraints": {"max_price_per_hour": 0.01}}
    )
    assert nothing.json()["options"] == []
    after = answers(client)
    delta = {k: after[k] - before.get(k, 0.0) for k in after}
    assert delta == {"priced": 2.0, "estimated": 0.0, "unpriced": 0.0, "none": 1.0}


def test_a_body_computed_elsewhere_is_labelled_from_its_top_option() -> None:
    quality = AnswerQuality(max_entries=4)
    assert quality.served("k1", b'{"options":[{"price_per_hour":null}],"summary":"x"}') == (
        "unpriced"
    )
    assert quality.served("k2", b'{"options":[{"price_per_hour":3.5,"price_estimated":true}]}') == (
        "estimated"
    )
    assert quality.served("k3", b'{"options":[]}') == "none"
    assert quality.served(
        "k4", b'{"options":[{"price_per_hour":3.5,"price_estimated":false}]}'
    ) == ("priced")
    assert top_pick(None, None) == "none"


@pytest.mark.redis
def test_live_price_age_is_exposed_per_provider(make_client: MakeClient, redis_url: str) -> None:
    publish(redis_url, datetime.now(UTC) - timedelta(seconds=600))
    client = make_client(redis_url=redis_url)
    ages = {dict(k)["provider"]: v for k, v in
            samples(client, "suanli_live_price_age_seconds").items()}  # fmt: skip
    assert 590 <= ages["tencent"] <= 700
    assert math.isnan(ages["alibaba"]), "no live snapshot: NaN, not a made-up age"
    failures = samples(client, "suanli_live_price_consecutive_failures")
    assert {dict(k)["provider"]: v for k, v in failures.items()}["tencent"] == 0.0
