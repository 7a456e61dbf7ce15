"""The encoder-serving mechanism (service/sizing/encoder.py): FLOPs per sequence, the
utilization prior against the published rows it cites, and the batch time's bounds."""

from __future__ import annotations

import pytest

from service.catalog.accelerators import AcceleratorRegistry, builtin_accelerators
from service.sizing import encoder
from service.sizing.presets import ModelRegistry, builtin_presets

MODELS = ModelRegistry(builtin_presets())
ACCELERATORS = AcceleratorRegistry(builtin_accelerators())
BERT_LARGE_BLOCKS = 335_141_888 - 30522 * 1024  # the embedding table is looked up


def bert_large_flops(tokens: int) -> float:
    return encoder.flops_per_sequence(335_141_888, 30522 * 1024, 24, 1024, tokens)


def test_flops_per_sequence_is_matmuls_plus_bidirectional_attention() -> None:
    # 2 x 303.9M x 384 = 233.4 GFLOP, + 4 x 24 x 384^2 x 1024 = 14.5 GFLOP
    assert bert_large_flops(384) == pytest.approx(2 * BERT_LARGE_BLOCKS * 384 + 14.496e9, rel=1e-3)
    assert bert_large_flops(384) / 1e9 == pytest.approx(247.9, abs=0.1)
    # attention grows with s^2: at 512 tokens it is 7.7 % of the work, at 128 2.0 %
    assert 4 * 24 * 512**2 * 1024 / bert_large_flops(512) == pytest.approx(0.0766, abs=1e-3)


@pytest.mark.parametrize(
    ("accelerator", "latency_ms"),
    [("A100-40GB", 163.70), ("A30", 342.30), ("T4", 1518.35)],
)
def test_the_prior_reproduces_the_rows_it_cites(accelerator: str, latency_ms: float) -> None:
    """BERT-large, 384 tokens, batch 128, FP16 (NVIDIA TensorRT demo/BERT README): the
    utilization the row implies is within 0.04 of its generation's prior."""
    spec = ACCELERATORS.resolve(accelerator)
    assert spec is not None
    peak = spec.dense_tflops_16bit
    assert peak is not None
    implied = 128 * bert_large_flops(384) / (latency_ms / 1e3) / (peak * 1e12)
    prior, basis = encoder.encoder_utilization(spec)
    assert prior == pytest.approx(implied, abs=0.04), (implied, basis)
    assert encoder.TENSORRT_BERT in basis


def test_generations_without_a_row_scale_their_training_prior() -> None:
    h20 = ACCELERATORS.resolve("H20")
    assert h20 is not None
    prior, basis = encoder.encoder_utilization(h20)
    # Hopper's steady training prior 0.45 x (0.59 / 0.62)
    assert prior == pytest.approx(0.45 * 0.59 / 0.62, abs=1e-3)
    assert "Ampere's ratio" in basis


def test_a_small_batch_is_bound_by_the_weight_read_and_launches() -> None:
    common = {"devices": 1, "peak_tflops": 312.0, "utilization": 0.59,
              "bandwidth_gbps": 1555.0, "bandwidth_efficiency": 0.85, "layers": 24,
              "layer_overhead_s": 30e-6}  # fmt: skip
    weights = 335_141_888 * 2.0
    one = encoder.forward_seconds(flops=bert_large_flops(16), weight_bytes=weights, **common)
    read = weights / (1555e9 * 0.85)
    assert one == pytest.approx(read + 24 * 30e-6, rel=1e-9)
    big = encoder.forward_seconds(flops=128 * bert_large_flops(384), weight_bytes=weights, **common)
    assert big == pytest.approx(128 * bert_large_flops(384) / (312e12 * 0.59) + 24 * 30e-6)


def test_workspace_is_one_layer_of_the_whole_batch() -> None:
    unsharded, sharded = encoder.workspace_bytes(
        tokens=64 * 512, hidden=1024, heads=16, head_dim=64,
        intermediate=4096, bytes_per_value=2.0,
    )  # fmt: skip
    assert unsharded == 4 * 32768 * 1024 * 2
    # Q/K/V + output (4 x 1024), MLP in/out (2 x 4096); no s x s scores (flash/fused
    # attention keeps them on chip)
    assert sharded == 32768 * 2 * (4 * 1024 + 2 * 4096)
