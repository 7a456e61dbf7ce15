"""Words of the planner's answers after expert review 3 (R18l, R18h, R18b, R7, R2):
one parenthesis for a layout, images per second for image models, the region a buyer
must pick named in the summary, a spot estimate said as a market price with its
ceiling, and inference-only pools kept out of training. Through the HTTP app and the
shipped plugins."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

FULL_72B_MEGATRON = {
    # Megatron-LM: the framework that lays a 72B model out in tensor and pipeline stages
    # (under Hugging Face/PEFT a layout has no tensor parallelism: review 3 R3)
    "workload": {"kind": "finetune", "model": "qwen2.5-72b", "method": "full", "seq_len": 2048,
                 "tokens": 20_000_000, "framework": "megatron"},
    "top_k": 5,
}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "joined", "split"),
    [
        # Megatron's own word for its stage-1 sharding (session 11, K17)
        ("en", "(distributed optimizer, tensor parallel 8, pipeline parallel 2)", ") ("),
        ("zh", "（分布式优化器，张量并行 8，流水线并行 2）", "）（"),
    ],
)
def test_a_layout_reads_as_one_parenthesis(
    client: TestClient[Litestar], lang: str, joined: str, split: str
) -> None:
    """R18l: "(ZeRO-1) (tensor parallel 8)" read as two afterthoughts."""
    answer = recommend(client, FULL_72B_MEGATRON, lang)
    reasons = [r for o in answer["options"] for r in o["reasons"]]
    assert any(joined in r for r in reasons), reasons
    assert not any(split in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("lang", "said", "unsaid"),
    [
        ("en", "images/s (one every", "decode"),
        ("zh", "张图像（约每", "解码"),
    ],
)
def test_diffusion_serving_has_no_decode(
    client: TestClient[Litestar], lang: str, said: str, unsaid: str
) -> None:
    """R18h: Stable Diffusion has no decode step; its rate is images/s (estimated since
    session 13, branch diff13: under one a second, with how long one image takes)."""
    answer = recommend(client, {"workload": {"kind": "inference", "model": "sd-1.5"}}, lang)
    assert said in answer["summary"]
    assert unsaid not in answer["summary"]


def test_an_image_classifier_is_rated_in_images_per_second(client: TestClient[Litestar]) -> None:
    answer = recommend(client, {"workload": {"kind": "inference", "model": "resnet-50"}}, "en")
    assert answer["summary"].endswith(" images/s."), answer["summary"]
    zh = recommend(client, {"workload": {"kind": "inference", "model": "resnet-50"}}, "zh")
    assert "张图像" in zh["summary"], zh["summary"]
    assert "tokens" not in zh["summary"], zh["summary"]


# --- where to buy (R18b) and inference-only pools (R2) ------------------------------

LORA_7B = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "seq_len": 2048,
           "tokens": 50_000_000}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "said"), [("zh", "推荐腾讯云（广州）"), ("en", " in Guangzhou (")]
)
def test_the_region_asked_is_named_in_the_summary(
    client: TestClient[Litestar], lang: str, said: str
) -> None:
    body = {"workload": LORA_7B, "constraints": {"regions": ["ap-guangzhou"]}, "top_k": 2}
    answer = recommend(client, body, lang)
    assert answer["options"][0]["regions"] == ["ap-guangzhou"]
    assert said in answer["summary"], answer["summary"]
    assert "ap-guangzhou" not in answer["summary"]


ASCEND_FULL = {
    "workload": {"kind": "finetune", "model": "qwen2.5-7b", "method": "full", "seq_len": 4096,
                 "tokens": 100_000_000},
    "constraints": {"accelerators": ["昇腾910B"]},
    "top_k": 10,
}  # fmt: skip
INFERENCE_POOLS = {
    "modelarts.bm.arm.24u.npu.1snt9b",
    "modelarts.bm.arm.24u.192g.npu.1d910b",
    "modelarts.bm.arm.48u.384g.npu.2d910b",
    "modelarts.bm.npu.arm.8snt9b2.d",
}


def test_inference_pool_flavors_are_not_offered_for_training(
    client: TestClient[Litestar],
) -> None:
    """R2: the catalog's own source calls these ModelArts public inference pool flavors;
    a training job was sent to one in Johannesburg."""
    trained = recommend(client, ASCEND_FULL, "zh")
    assert trained["options"]
    assert not {o["instance_type"] for o in trained["options"]} & INFERENCE_POOLS
    assert all(o["region"] != "af-south-1" for o in trained["options"])
    served = recommend(
        client,
        {"workload": {"kind": "inference", "model": "qwen2.5-7b"},
         "constraints": {"accelerators": ["昇腾910B"]}, "top_k": 10},
        "en",
    )  # fmt: skip
    assert {o["instance_type"] for o in served["options"]} & INFERENCE_POOLS


def test_the_catalog_says_which_rows_are_inference_only_and_why(
    client: TestClient[Litestar],
) -> None:
    rows = client.get("/v1/providers/huawei/instance-types", params={"limit": 500}).json()
    marked = {r["instance_type"]: r for r in rows["items"] if r.get("usage")}
    assert set(marked) == INFERENCE_POOLS
    for row in marked.values():
        assert row["usage"] == ["inference"]
        assert "inference" in row["usage_note"]
        assert "inference pool" in row["notes"] or "online-inference" in row["notes"]


def test_training_only_on_inference_pools_is_an_empty_answer_that_says_why(
    client: TestClient[Litestar],
) -> None:
    body = {**ASCEND_FULL, "constraints": {"accelerators": ["昇腾910B"], "regions": ["af-south-1"]}}
    en = recommend(client, body, "en")
    zh = recommend(client, body, "zh")
    assert not en["options"]
    assert "serve inference only (such as ModelArts public inference pools)" in en["warnings"][0]
    assert "只用于推理" in zh["warnings"][0]


@pytest.mark.parametrize(
    ("lang", "words"),
    [("zh", ("约翰内斯堡", "中国大陆以外", "国际站")),
     ("en", ("in Johannesburg", "outside mainland China", "international site"))],
)  # fmt: skip
def test_an_option_outside_mainland_china_says_so(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b"},
            "constraints": {"regions": ["af-south-1"]}, "top_k": 2}  # fmt: skip
    summary = recommend(client, body, lang)["summary"]
    for word in words:
        assert word in summary, summary


# --- a spot estimate (R7) -------------------------------------------------------------

SPOT_LORA = {"workload": LORA_7B, "constraints": {"interruptible": True, "billing": ["spot"]},
             "top_k": 3}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "words"),
    # review 4 F10: the range first, then the on-demand cap, itself an estimate whose top
    # is the range's (never "up to ¥34.36" beside a range reaching ¥39.52)
    [("en", ("spot: the market sets the price, estimated ¥", "at most the on-demand price",
             "in total at the on-demand price")),
     ("zh", ("竞价：价格由市场决定，估算 ¥", "最高为按量价格", "以按量价格估算，总费用约 ¥"))],
)  # fmt: skip
def test_a_spot_estimate_is_said_as_a_market_price_with_its_ceiling(
    client: TestClient[Litestar], lang: str, words: tuple[str, ...]
) -> None:
    answer = recommend(client, SPOT_LORA, lang)
    top = answer["options"][0]
    assert top["billing"] == "spot"
    assert top["price_source"] == "estimated"
    ceiling = f"{top['price_per_hour']:,.2f}"
    for word in words:
        assert word in answer["summary"], answer["summary"]
    assert ceiling in answer["summary"]
    assert "spot at about" not in answer["summary"]


def test_a_spot_estimate_is_as_old_as_the_prices_it_scales(client: TestClient[Litestar]) -> None:
    """R7: the spot rules are dated 2026-01, the on-demand rates they scale 2023-06."""
    answer = recommend(client, SPOT_LORA, "en")
    for option in answer["options"]:
        assert option["billing"] == "spot"
        assert option["price_as_of"] == "2023-06", option
