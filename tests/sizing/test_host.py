"""Host sizing of quantized serving (review-3 R18g): RAM and disk for the checkpoint in
its own format (FP8/int4), not a 16-bit copy the engines never make."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.sizing import Placement, estimate
from service.sizing.formulas import GIB
from service.sizing.resolve import resolve_workload
from service.sizing.workload import Inference
from tests.sizing.calibration import MODELS, REGISTRY


def _host(precision: str) -> tuple[float, float, float]:
    work = Inference(model="deepseek-v3", precision=precision)  # type: ignore[arg-type]
    est = estimate(work, Placement(accelerator="H20", count=8), MODELS, REGISTRY)
    budget = resolve_workload(work, MODELS).inference
    assert budget is not None
    return est.host.ram_gib, est.host.disk_gib, budget.weights / GIB


@pytest.mark.parametrize("precision", ["fp8", "int4", "bf16"])
def test_ram_is_one_copy_of_the_loaded_checkpoint(precision: str) -> None:
    ram, disk, weights = _host(precision)
    # 1.2 x the checkpoint's bytes + 8 GiB per device (within 2 %)
    assert ram == pytest.approx(1.2 * weights + 64, rel=0.02)
    assert disk == pytest.approx(100 + weights, rel=0.02)


def test_fp8_deepseek_v3_needs_about_half_the_ram_of_bf16() -> None:
    fp8, _, _ = _host("fp8")
    bf16, _, _ = _host("bf16")
    assert 750 < fp8 < 850  # 671 B x 1 B = 625 GiB x 1.2 + 64
    assert fp8 / bf16 == pytest.approx(0.52, abs=0.03)


def test_estimate_api_says_the_checkpoint_format(client: TestClient[Litestar]) -> None:
    body = {"workload": {"kind": "inference", "model": "deepseek-v3", "precision": "fp8"},
            "placement": {"accelerator": "H20", "count": 8}}  # fmt: skip
    answer = client.post("/v1/estimate", json=body).json()
    assert answer["host"]["ram_gib"] < 900
    host = [a for a in answer["assumptions"] if a.startswith("Host:")]
    assert len(host) == 1
    assert "FP8 checkpoint" in host[0]
    assert "16-bit copy" not in host[0]
