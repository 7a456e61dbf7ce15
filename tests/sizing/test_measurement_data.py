"""The published-measurement set (``tests/sizing/data/published-measurements.json``) is valid.

The file is the calibration and hold-out set of issue 13: numbers that public sources
measured for stated configurations. The sizing engine is scored against it elsewhere; this
module only guards the data itself, because a calibration set that quietly rots (a case
without a source, a value that is not the one quoted, a split picked by hand) would make
every accuracy figure built on it meaningless. It checks:

- every case names a public source (an https URL; a GitHub blob URL carries repo, path and
  a 40-hex commit), a locator and the verbatim quote, and the measured value is one of the
  numbers printed in that quote;
- every case has a category, a quantity and unit that fit the category, a tolerance with
  its reason, and a workload and placement in the API's request shape (a known preset id or
  an explicit architecture; an accelerator the registry knows or one the file lists, with
  its source, as not yet in the registry);
- ids are unique (also against the 95 reference cases) and the split is the file's own
  deterministic rule (a hash of the id), so nobody chose the hold-out;
- the set is big enough: at least 200 cases, enough per category, about a third held out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.sizing.presets import ModelRegistry, builtin_presets

DATA = Path(__file__).resolve().parent / "data"
MEASUREMENTS = DATA / "published-measurements.json"
REFERENCE = DATA / "estimation-cases.json"

DOC: dict[str, Any] = json.loads(MEASUREMENTS.read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DOC["cases"]
MODELS = ModelRegistry(builtin_presets())
ACCELERATORS = AcceleratorRegistry(builtin_accelerators())

MIN_CASES = 200
MIN_PER_CATEGORY = {
    "train_memory": 60,
    "inference_memory": 25,
    "train_time": 50,
    "inference_throughput": 40,
}
HOLDOUT_SHARE = (0.25, 0.42)
"""'About a third': a hash split of n ids lands within this band with overwhelming odds."""
MIN_HOLDOUT_PER_CATEGORY = 0.2

MEMORY_UNITS = {"GiB", "GB", "MiB", "MB"}
QUANTITY_UNITS: dict[str, set[str]] = {
    "peak_memory_per_device": MEMORY_UNITS,
    "memory_total": MEMORY_UNITS,
    "tokens_per_s_per_device": {"tokens/s", "thousand tokens/s"},
    "tokens_per_s_total": {"tokens/s"},
    "samples_per_s_total": {"samples/s"},
    "step_time_s": {"s"},
    "mfu_pct": {"%"},
    "device_hours": {"GPU-hours", "NPU-hours", "million GPU-hours", "thousand GPU-hours"},
    "wall_clock_hours": {"minutes", "hours", "days"},
    "output_tokens_per_s": {"tokens/s"},
    "total_tokens_per_s": {"tokens/s"},
    "requests_per_s": {"requests/s"},
    "batch_latency_ms": {"ms"},
}
CATEGORY_QUANTITIES: dict[str, set[str]] = {
    "train_memory": {"peak_memory_per_device", "memory_total"},
    "inference_memory": {"peak_memory_per_device", "memory_total"},
    "train_time": {
        "tokens_per_s_per_device",
        "tokens_per_s_total",
        "samples_per_s_total",
        "step_time_s",
        "mfu_pct",
        "device_hours",
        "wall_clock_hours",
    },
    "inference_throughput": {
        "output_tokens_per_s",
        "total_tokens_per_s",
        "requests_per_s",
        "batch_latency_ms",
    },
}
TRAINING_KINDS = {"pretrain", "finetune", "rlhf"}
FRAMEWORKS = {
    "hf",
    "torchtune",
    "torchtitan",
    "llama-factory",
    "deepspeed",
    "megatron",
    "unsloth",
    "ms-swift",
    "mindspeed",
    "nanotron",
    "colossalai",
    "llm-foundry",
    "axolotl",
}
ENGINES = {"vllm", "sglang", "lmdeploy", "tensorrt-llm", "hf", "mindie", "deepspeed-fastgen"}
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.+_-]*$")
GITHUB_BLOB = re.compile(r"^https://github\.com/([^/]+/[^/]+)/blob/([0-9a-f]{40})/(.+?)(#.*)?$")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def split_of(case_id: str) -> str:
    """The file's split rule, restated here so a hand-edited split fails."""
    return (
        "holdout" if int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % 3 == 0 else "dev"
    )


def numbers_in(text: str) -> list[float]:
    """Every number printed in ``text``, with thousands separators (``5,762``) joined."""
    joined = re.sub(r"(?<=\d)[,\u2009\u202f](?=\d{3}\b)", "", text)
    return [float(m) for m in NUMBER.findall(joined)]


def _ids() -> list[str]:
    return [str(c.get("id")) for c in CASES]


def test_header_states_the_split_rule_and_categories() -> None:
    assert "sha256" in DOC["split_rule"]
    assert set(DOC["categories"]) == set(CATEGORY_QUANTITIES)
    assert set(DOC["quantities"]) == set(QUANTITY_UNITS)


def test_ids_unique_and_distinct_from_reference_cases() -> None:
    ids = _ids()
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    assert dupes == []
    reference = {c["id"] for c in json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]}
    assert set(ids) & reference == set()


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_case_has_a_public_source_with_the_quoted_value(case: dict[str, Any]) -> None:
    assert ID_PATTERN.match(case["id"])
    source = case["source"]
    url = source["url"]
    assert url.startswith("https://"), url
    blob = GITHUB_BLOB.match(url)
    if blob or "repo" in source:
        assert blob, f"repository source without a blob URL at a commit: {url}"
        assert source["repo"] == blob.group(1)
        assert source["commit"] == blob.group(2)
        assert source["path"] == blob.group(3)
    assert source["locator"].strip()
    assert source["quote"].strip()
    value = case["measured"]["value"]
    assert isinstance(value, int | float)
    assert value > 0
    assert any(abs(n - value) <= 1e-9 * max(1.0, value) for n in numbers_in(source["quote"])), (
        f"{value} is not a number printed in the quote {source['quote']!r}"
    )


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_case_is_categorized_split_and_toleranced(case: dict[str, Any]) -> None:
    category = case["category"]
    assert category in CATEGORY_QUANTITIES
    assert case["split"] == split_of(case["id"])
    measured = case["measured"]
    assert measured["quantity"] in CATEGORY_QUANTITIES[category]
    assert measured["unit"] in QUANTITY_UNITS[measured["quantity"]]
    assert measured["per"] in {"device", "total", "request"}
    assert measured["basis"].strip()
    tolerance = case["tolerance_pct"]
    assert isinstance(tolerance, int | float)
    assert 5 <= tolerance <= 60
    assert case["tolerance_basis"].strip()
    if category.startswith("train"):
        assert tolerance >= (15 if category == "train_memory" else 25)
    if category == "inference_throughput":
        assert tolerance >= 20


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_case_workload_and_placement_in_request_shape(case: dict[str, Any]) -> None:
    workload = case["workload"]
    kind = workload["kind"]
    if case["category"].startswith("train"):
        assert kind in TRAINING_KINDS
        assert workload.get("framework") in FRAMEWORKS
        assert isinstance(workload["seq_len"], int)
        assert workload["seq_len"] >= 1
    else:
        assert kind == "inference"
        assert workload.get("engine") in ENGINES
    if case["category"] == "train_time":
        assert workload.get("time_basis") in {"steady", "run"}
    model = workload["model"]
    if isinstance(model, str):
        assert MODELS.resolve(model) is not None, f"unknown preset {model!r}"
    else:
        assert isinstance(model["params_b"], int | float)
        assert model["params_b"] > 0
        assert str(model.get("architecture_source", "")).startswith("https://")
    placement = case["placement"]
    accelerator = placement["accelerator"]
    pending = DOC["accelerators_not_in_registry"]
    assert ACCELERATORS.resolve(accelerator) is not None or accelerator in pending, accelerator
    count = placement["count"]
    if count is None:
        # a whole run's accelerator-hours do not need the count; the source did not state it
        assert case["measured"]["quantity"] == "device_hours"
        assert placement["count_note"].strip()
    else:
        assert isinstance(count, int)
        assert count >= 1
    for degree in ("tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel"):
        if degree in placement:
            assert 1 <= placement[degree] <= (count or 1_000_000)


def test_pending_accelerators_are_sourced_and_used() -> None:
    used = {c["placement"]["accelerator"] for c in CASES}
    for name, source in DOC["accelerators_not_in_registry"].items():
        assert "https://" in source, name
        assert name in used, f"{name} is listed but no case uses it"


def test_set_is_large_enough_and_about_a_third_held_out() -> None:
    assert len(CASES) >= MIN_CASES
    per_category = Counter(c["category"] for c in CASES)
    for category, minimum in MIN_PER_CATEGORY.items():
        assert per_category[category] >= minimum, (category, per_category[category])
    holdout = sum(c["split"] == "holdout" for c in CASES)
    assert HOLDOUT_SHARE[0] <= holdout / len(CASES) <= HOLDOUT_SHARE[1]
    for category in MIN_PER_CATEGORY:
        held = sum(c["split"] == "holdout" for c in CASES if c["category"] == category)
        if per_category[category]:
            assert held / per_category[category] >= MIN_HOLDOUT_PER_CATEGORY, category


def test_numbers_in_reads_thousands_separators() -> None:
    assert numbers_in("| FSDP | 5,762 | 82.4 |") == [5762.0, 82.4]
    assert numbers_in("1,022,362 GPU-hours at 2.0x, 0.5B") == [1022362.0, 2.0, 0.5]
