"""The storage advice names the storage products of the clouds the options are on (a
Huawei-only answer said "a parallel file system (e.g. CPFS)", Alibaba's, and Alibaba's
ESSD disk classes): OSS + CPFS + ESSD PL2/PL3 on Alibaba Cloud, COS + CFS Turbo on
Tencent Cloud, OBS + SFS Turbo on Huawei Cloud, TOS + vePFS on Volcano Engine (sources in
``service.planning.advice.STORAGE_NAMES``); every cloud's where the options span them."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.planning.advice import STORAGE_NAMES, storage_names
from tests.answers import recommend

PRETRAIN = {"kind": "pretrain", "model": "qwen2.5-7b", "seq_len": 4096,
            "tokens": 50_000_000_000}  # fmt: skip
"""Enough data that the advice says how to store it (the storage piece from 200 GiB)."""


def _storage(answer: dict[str, Any]) -> str:
    texts = [a["text"] for a in answer["advice"] if a["topic"] == "storage"]
    assert len(texts) == 1, answer["advice"]
    return texts[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("provider", sorted(STORAGE_NAMES))
def test_one_clouds_answer_names_that_clouds_storage_only(
    client: TestClient[Litestar], provider: str, lang: str
) -> None:
    answer = recommend(
        client, {"workload": PRETRAIN, "constraints": {"providers": [provider]}, "top_k": 3}, lang
    )
    assert {o["provider"] for o in answer["options"]} == {provider}
    text = _storage(answer)
    objects, pfs, disks = STORAGE_NAMES[provider]
    assert objects in text
    assert pfs in text
    for other, (other_objects, other_pfs, _) in STORAGE_NAMES.items():
        if other != provider:
            assert other_objects not in text, text
            assert other_pfs not in text, text
    assert ("ESSD" in text) == (disks is not None)


def test_an_answer_over_several_clouds_names_each_of_theirs() -> None:
    names = storage_names(("huawei", "alibaba", "huawei"))
    assert names["objects"] == "OBS/OSS"
    assert names["pfs"] == "SFS Turbo/CPFS"
    assert names["disks_en"] == " (ESSD PL2/PL3)"
    everyone = storage_names(())
    assert everyone["objects"] == "OSS/COS/OBS/TOS"  # no options: every cloud's
