"""POST /v1/recommend on the real catalogs: the seed scenarios, constraints, cache."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing.overheads import class_overhead
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Finetune
from tests.sizing.calibration import MODELS

MakeClient = Callable[..., TestClient[Litestar]]

QLORA_7B = {"kind": "finetune", "model": "llama-2-7b", "method": "qlora", "seq_len": 1024,
            "tokens": 20_000_000}  # fmt: skip


def post(client: TestClient[Litestar], body: dict[str, Any], **headers: str) -> Any:
    response = client.post("/v1/recommend", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response


def test_qlora_7b_cost_top_option_is_a_single_16_to_24gb_gpu(client: TestClient[Litestar]) -> None:
    body = post(client, {"workload": QLORA_7B, "objective": "cost", "lang": "en"}).json()
    options = body["options"]
    assert options, body["warnings"]
    top = options[0]
    assert top["rank"] == 1
    assert top["nodes"] == 1
    assert top["accelerator"]["count"] == 1
    assert 16 <= top["accelerator"]["memory_gib"] <= 24
    assert top["price_per_hour"] is not None  # an unknown price never ranks first on cost
    for option in options:
        assert option["per_device_gib"] + option["headroom_gib"] == pytest.approx(
            option["accelerator"]["memory_gib"], abs=0.01
        )
        assert option["per_device_gib"] <= 0.9 * option["accelerator"]["memory_gib"] + 1e-6
    confirmed = [
        o["total_cost"] for o in options if o["total_cost"] is not None and not o["price_estimated"]
    ]
    assert confirmed == sorted(confirmed)
    assert not top["price_estimated"], "an estimate not clearly cheaper ranks after"
    assert top["total_cost"] == pytest.approx(top["price_per_hour"] * top["hours"], rel=1e-3)
    assert body["estimate"]["memory"]["per_device_gib"] == pytest.approx(
        top["per_device_gib"], rel=0.02
    )
    assert "GN" in body["summary"] or top["instance_type"] in body["summary"]


def test_full_finetune_70b_needs_many_gpus_multi_node_only_with_rdma(
    client: TestClient[Litestar],
) -> None:
    workload = {"kind": "finetune", "model": "llama-2-70b", "method": "full", "tokens": 10**8}
    body = post(client, {"workload": workload, "objective": "time", "top_k": 20}).json()
    options = body["options"]
    assert options, body["warnings"]
    for option in options:
        devices = option["accelerator"]["count"] * option["nodes"]
        assert devices >= 2
        assert option["zero_stage"] in (1, 2, 3)
        if option["nodes"] > 1:
            assert option["rdma"] in ("rdma", "erdma")
            assert any("RDMA" in r for r in option["reasons"])


def test_int4_inference_of_13b_fits_a_t4(client: TestClient[Litestar]) -> None:
    workload = {"kind": "inference", "model": "llama-2-13b", "precision": "int4",
                "context_len": 2048, "concurrency": 1}  # fmt: skip
    body = post(
        client,
        {"workload": workload, "constraints": {"accelerators": ["T4"]}, "top_k": 50},
    ).json()
    t4 = [o for o in body["options"] if o["accelerator"]["name"] == "T4"]
    assert t4
    single = [o for o in t4 if o["accelerator"]["count"] == 1]
    assert single, "a single 16 GB T4 must hold int4 13B (the seed's claim)"
    assert single[0]["per_device_gib"] < 16
    assert single[0]["throughput_tokens_per_s"] > 0


def test_preprocess_gets_cpu_only_options(client: TestClient[Litestar]) -> None:
    workload = {"kind": "preprocess", "data_gb": 500, "target_hours": 4}
    body = post(client, {"workload": workload, "top_k": 10}).json()
    assert body["options"]
    assert all(o["accelerator"] is None for o in body["options"])
    assert all(o["vcpus"] > 0 for o in body["options"])


def test_cuda_required_excludes_ascend(client: TestClient[Litestar]) -> None:
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 10**7}
    body = post(
        client,
        {"workload": workload, "constraints": {"cuda_required": True}, "top_k": 50,
         "objective": "time"},
    ).json()  # fmt: skip
    assert body["options"]
    assert not any(o["accelerator"]["name"].startswith("Ascend") for o in body["options"])


def test_910b_gives_only_ascend_with_cann_warning(client: TestClient[Litestar]) -> None:
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 10**7}
    body = post(
        client,
        {"workload": workload, "constraints": {"accelerators": ["910B"]}, "top_k": 50,
         "lang": "en"},
    ).json()  # fmt: skip
    assert body["options"], body["warnings"]
    for option in body["options"]:
        assert option["accelerator"]["name"].startswith("Ascend-910B")
        assert any("CANN" in w for w in option["warnings"])
    assert any(a["topic"] == "ascend" for a in body["advice"])


def test_cuda_required_with_only_ascend_is_contradictory_422(
    client: TestClient[Litestar],
) -> None:
    workload = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora"}
    response = client.post(
        "/v1/recommend",
        json={"workload": workload,
              "constraints": {"accelerators": ["910B"], "cuda_required": True}},
    )  # fmt: skip
    assert response.status_code == 422
    assert response.json()["extra"][0]["key"] == "constraints.cuda_required"


def test_non_interruptible_gets_no_spot_and_spot_only_is_422(client: TestClient[Litestar]) -> None:
    workload = dict(QLORA_7B)
    body = post(
        client,
        {"workload": workload, "constraints": {"interruptible": False}, "top_k": 50},
    ).json()
    assert all(o["billing"] != "spot" for o in body["options"])
    assert any(a["topic"] == "no_spot" for a in body["advice"])
    response = client.post(
        "/v1/recommend",
        json={"workload": workload,
              "constraints": {"interruptible": False, "billing": ["spot"]}},
    )  # fmt: skip
    assert response.status_code == 422
    assert response.json()["extra"][0]["key"] == "constraints.billing"


def test_lang_zh_and_en_localize_summary_and_advice(client: TestClient[Litestar]) -> None:
    zh = post(client, {"workload": QLORA_7B, "lang": "zh"}).json()
    en = post(client, {"workload": QLORA_7B, "lang": "en"}).json()
    assert zh["summary"].startswith("推荐")
    assert en["summary"].startswith("Rent")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh["advice"][0]["text"])
    assert all(ch < "\u4e00" for ch in en["advice"][0]["text"])


def test_accept_language_picks_lang_when_body_has_none(client: TestClient[Litestar]) -> None:
    en = post(client, {"workload": QLORA_7B}, **{"Accept-Language": "en-US,en;q=0.9"}).json()
    assert en["lang"] == "en"
    default = post(client, {"workload": QLORA_7B}).json()
    assert default["lang"] == "zh"


def test_impossible_constraints_explain_and_suggest(client: TestClient[Litestar]) -> None:
    body = post(
        client,
        {"workload": QLORA_7B, "constraints": {"max_price_per_hour": 0.5}, "lang": "en"},
    ).json()
    assert body["options"] == []
    said = [body["summary"], *body["warnings"]]  # the summary's sentences once (review 6 H9)
    assert sum("more per hour of use than the limit" in w for w in said) == 1
    assert not any("max_price_per_hour" in w for w in body["warnings"])  # words, not fields
    hint = next(h for h in body["relax"] if h["constraint"] == "max_price_per_hour")
    assert hint["removed"] > 0
    assert hint["nearest"]
    assert "¥" in hint["nearest"]
    assert body["summary"].startswith("No option")


def test_unknown_names_are_400_with_suggestions(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/v1/recommend",
        json={"workload": QLORA_7B, "constraints": {"accelerators": ["A1000"]}},
    )
    assert response.status_code == 400
    item = response.json()["extra"][0]
    assert item["key"] == "constraints.accelerators[0]"
    assert item["suggestions"]
    response = client.post(
        "/v1/recommend", json={"workload": QLORA_7B, "constraints": {"providers": ["aws"]}}
    )
    assert response.status_code == 400
    assert "tencent" in response.json()["extra"][0]["suggestions"]


def test_bad_input_names_the_field(client: TestClient[Litestar]) -> None:
    response = client.post("/v1/recommend", json={"workload": QLORA_7B, "top_k": 0})
    assert response.status_code == 400
    assert response.json()["extra"][0]["key"] == "top_k"


def test_second_identical_request_is_a_cache_hit(client: TestClient[Litestar]) -> None:
    first = post(client, {"workload": QLORA_7B, "lang": "en"})
    second = post(client, {"workload": QLORA_7B, "lang": "en"})
    assert first.headers["x-suanli-cache"] == "miss"
    assert second.headers["x-suanli-cache"] == "hit"
    assert first.json() == second.json()
    # Defaults filled: spelling out a default is the same request.
    third = post(client, {"workload": QLORA_7B, "lang": "en", "top_k": 5, "objective": "cost"})
    assert third.headers["x-suanli-cache"] == "hit"


def test_catalog_change_is_a_miss(make_client: MakeClient, tmp_path: Any) -> None:
    overrides = tmp_path / "o.toml"
    overrides.write_text('[[override]]\nprovider = "tencent"\nfamily = "GN7"\ndiscount = 0.5\n')
    client = make_client(price_overrides=str(overrides), api_key="k" * 32)
    body = {"workload": QLORA_7B, "lang": "en"}
    assert post(client, body).headers["x-suanli-cache"] == "miss"
    assert post(client, body).headers["x-suanli-cache"] == "hit"
    overrides.write_text('[[override]]\nprovider = "tencent"\nfamily = "GN7"\ndiscount = 0.4\n')
    reload = client.post("/v1/admin/reload", headers={"Authorization": "Bearer " + "k" * 32})
    assert reload.json()["status"] == "reloaded"
    assert post(client, body).headers["x-suanli-cache"] == "miss"


@pytest.mark.redis
def test_answers_stay_correct_when_redis_is_down(make_client: MakeClient) -> None:
    client = make_client(redis_url="redis://127.0.0.1:1/0", redis_timeout_s=0.2)
    first = post(client, {"workload": QLORA_7B, "lang": "en"})
    second = post(client, {"workload": QLORA_7B, "lang": "en"})
    assert first.json()["options"] == second.json()["options"]
    assert second.headers["x-suanli-cache"] == "miss"
    assert client.get("/readyz").status_code == 503


@pytest.mark.redis
def test_redis_cache_shared_between_apps(make_client: MakeClient, redis_url: str) -> None:
    a = make_client(redis_url=redis_url)
    b = make_client(redis_url=redis_url)
    assert post(a, {"workload": QLORA_7B, "lang": "en"}).headers["x-suanli-cache"] == "miss"
    assert post(b, {"workload": QLORA_7B, "lang": "en"}).headers["x-suanli-cache"] == "hit"


def test_batch_inference_with_output_tokens_ranks_by_job_cost(
    client: TestClient[Litestar],
) -> None:
    workload = {"kind": "inference", "model": "qwen2.5-7b", "precision": "int8",
                "output_tokens": 50_000_000, "concurrency": 8}  # fmt: skip
    body = post(client, {"workload": workload, "top_k": 10, "lang": "en"}).json()
    priced = [o for o in body["options"] if o["total_cost"] is not None]
    assert priced
    for option in priced:
        tokens_per_hour = option["throughput_tokens_per_s"] * 3600
        assert option["hours"] == pytest.approx(50_000_000 / tokens_per_hour, rel=0.01)
        assert option["total_cost"] == pytest.approx(
            option["price_per_hour"] * option["hours"], rel=0.01
        )
    # confirmed prices rank by their totals; an estimate counts at the top of its range
    costs = [o["total_cost"] for o in priced if not o["price_estimated"]]
    assert costs == sorted(costs)
    assert "in total" in body["summary"]


def test_repeated_bytes_are_decoded_once_and_still_checked(client: TestClient[Litestar]) -> None:
    """A body seen before skips decoding (DecodedBodies), but never the checks that
    depend on more than the bytes: Content-Type and Accept-Language."""
    raw = b'{"workload": {"kind": "finetune", "model": "llama-2-7b", "method": "qlora"}}'
    json_type = {"Content-Type": "application/json"}
    first = client.post("/v1/recommend", content=raw, headers=json_type)
    assert first.status_code == 200
    assert first.json()["lang"] == "zh"
    again = client.post("/v1/recommend", content=raw, headers=json_type)
    assert again.headers["X-Suanli-Cache"] == "hit"
    assert again.content == first.content
    english = client.post(
        "/v1/recommend", content=raw, headers={**json_type, "Accept-Language": "en"}
    )
    assert english.json()["lang"] == "en"
    text = client.post("/v1/recommend", content=raw, headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    too_long = client.post(
        "/v1/recommend", content=raw, headers={**json_type, "Accept-Language": "en," * 200}
    )
    assert too_long.status_code == 400
    assert "accept_language" in too_long.text


def test_only_bodies_that_repeat_are_kept_decoded(client: TestClient[Litestar]) -> None:
    """A body is kept decoded once its answer came from the cache (it repeats); bodies
    asked once — a stream of the same job at other lengths — are not kept."""
    decoded = client.app.state["suanli"].decoded
    before = len(decoded)
    for tokens in (11_000_001, 11_000_002, 11_000_003):
        miss = post(client, {"workload": {**QLORA_7B, "tokens": tokens}, "lang": "en"})
        assert miss.headers["X-Suanli-Cache"] == "miss"
    assert len(decoded) == before
    again = post(client, {"workload": {**QLORA_7B, "tokens": 11_000_001}, "lang": "en"})
    assert again.headers["X-Suanli-Cache"] == "hit"
    assert len(decoded) == before + 1
    third = post(client, {"workload": {**QLORA_7B, "tokens": 11_000_001}, "lang": "en"})
    assert third.content == again.content
    assert len(decoded) == before + 1


def test_option_hours_agree_with_the_estimate_of_the_same_placement(
    client: TestClient[Litestar],
) -> None:
    """Options are timed as hours-per-token x tokens plus the job's fixed start-up and
    save time; the estimate block calls the sizing engine directly (the training loop)
    and states the fixed time: the two must agree."""
    work = resolve_workload(Finetune(model="llama-2-7b", method="qlora", seq_len=1024), MODELS)
    fixed = class_overhead(work)
    assert fixed is not None
    for tokens in (20_000_000, 3_000_000_000):
        body = post(client, {"workload": {**QLORA_7B, "tokens": tokens}, "lang": "en"}).json()
        top = body["options"][0]
        loop = body["estimate"]["time"]["hours"]
        assert top["hours"] == pytest.approx(loop + fixed.hours, rel=1e-3)
        stated = [a for a in body["estimate"]["assumptions"] if a.startswith("Fixed time")]
        assert len(stated) == 1
        assert f"about {fixed.seconds / 60:.0f} min" in stated[0]
