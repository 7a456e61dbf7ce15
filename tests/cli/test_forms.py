"""Flags and tool arguments -> API bodies: only what a shell cannot say is translated."""

from __future__ import annotations

import pytest

from service.clients import forms


@pytest.mark.parametrize(
    ("text", "value"),
    [("20M", 20_000_000), ("1.5B", 1_500_000_000), ("2e7", 20_000_000), ("300k", 300_000),
     ("2T", 2_000_000_000_000), ("12345", 12345), ("0.5", 0.5), (7e6, 7e6)],
)  # fmt: skip
def test_amounts(text: str | float, value: float) -> None:
    assert forms.amount("--tokens", text) == value


@pytest.mark.parametrize("text", ["lots", "20MM", "-5", "1e", ""])
def test_bad_amounts_name_the_flag(text: str) -> None:
    with pytest.raises(forms.FlagError, match="--tokens"):
        forms.amount("--tokens", text)


@pytest.mark.parametrize(
    ("text", "bounds"),
    [("8", (8, 8)), ("2..8", (2, 8)), ("4..", (4, None)), ("..2", (None, 2))],
)
def test_count_ranges(text: str, bounds: tuple[int | None, int | None]) -> None:
    assert forms.count_range(text) == bounds


@pytest.mark.parametrize("text", ["two", "..", "2-8", "8..4x"])
def test_bad_count_ranges(text: str) -> None:
    with pytest.raises(forms.FlagError, match="--count"):
        forms.count_range(text)


def test_workload_passes_through_only_what_was_given() -> None:
    assert forms.workload(model="llama-2-7b", method="qlora", tokens="20M") == {
        "kind": "finetune", "model": "llama-2-7b", "method": "qlora", "tokens": 20_000_000,
    }  # fmt: skip
    assert forms.workload(model="13b", tokens="1B", kind="pretrain") == {
        "kind": "pretrain", "model": {"params_b": 13.0}, "tokens": 1_000_000_000,
    }  # fmt: skip
    assert forms.workload(model="qwen2.5-7b", concurrency=8)["kind"] == "inference"
    assert forms.workload(data_gb=500) == {"kind": "preprocess", "data_gb": 500}
    # --set reaches any other field, JSON-typed; a method on a serving job is not dropped
    # (the API decides whether it is valid).
    extra = ["lora_rank=64", "framework=deepspeed", "flash_attention=false"]
    body = forms.workload(model="m", method="lora", concurrency=4, extra=extra)
    assert body == {
        "kind": "finetune",
        "model": "m",
        "method": "lora",
        "concurrency": 4,
        "lora_rank": 64,
        "framework": "deepspeed",
        "flash_attention": False,
    }
    with pytest.raises(forms.FlagError, match="KEY=VALUE"):
        forms.assignments(["lora_rank"])


def test_placement_needs_an_accelerator() -> None:
    work = {"kind": "finetune", "model": "m"}
    assert forms.estimate_body(work) == {"workload": work}
    assert forms.estimate_body(work, gpu="T4", count=2) == {
        "workload": work, "placement": {"accelerator": "T4", "count": 2},
    }  # fmt: skip
    with pytest.raises(forms.FlagError, match="--gpu"):
        forms.estimate_body(work, count=8)


def test_offer_params() -> None:
    params = forms.offer_params(
        gpus=["A100", "H800"],
        count="2..8",
        max_price=50.0,
        group_by=["accelerator,provider", "region"],
        include_cpu=True,
    )
    assert params == [
        ("accelerator", "A100"), ("accelerator", "H800"), ("min_accelerators", "2"),
        ("max_accelerators", "8"), ("max_price", "50"), ("include_cpu", "true"),
        ("group_by", "accelerator"), ("group_by", "provider"), ("group_by", "region"),
    ]  # fmt: skip
