"""An empty list in a constraint allows nothing: ``"providers": []`` answered 200 with
"292 offers are from providers other than the ones asked for" — a request that asked for
no provider at all, almost surely a client that meant "any". Refused with a 400 naming
the field (leave the field out for every provider, region, accelerator or billing mode)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

LORA = {"kind": "finetune", "model": "qwen2.5-7b", "method": "lora", "tokens": 1e7}


@pytest.mark.parametrize("field", ["providers", "regions", "accelerators", "billing"])
def test_an_empty_constraint_list_is_a_400_naming_it(
    client: TestClient[Litestar], field: str
) -> None:
    response = client.post(
        "/v1/recommend", json={"workload": LORA, "constraints": {field: []}, "lang": "zh"}
    )
    assert response.status_code == 400, response.text
    (item,) = response.json()["extra"]
    assert item["key"] == f"constraints.{field}"
    assert item["message"] == "应为长度 ≥ 1 的数组"
