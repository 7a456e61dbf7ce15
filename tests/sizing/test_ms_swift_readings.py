"""What the ms-swift benchmark's memory readings allow a tensor count to be (dev rows only).

ms-swift's benchmark (``docs/source_en/LLM/Benchmark.md`` at modelscope/ms-swift@46922151)
prints ``torch.cuda.max_memory_reserved`` after ``trainer.train()`` (ms-swift's trainers:
``f'{torch.cuda.max_memory_reserved(i)/1024/1024/1024:.2f}GiB'``): the caching allocator's
whole pool, cached free blocks included. The tensors a job needs are its *allocated* peak,
which never exceeds the reserved one (``max_memory_allocated <= max_memory_reserved``).
Under FlashAttention and full recompute every tensor of a fine-tune step is linear in the
step's tokens (``test_ms_swift_memory_depends_on_batch_times_sequence_only``), so the need
is ``F + u x tokens`` and two readings bound it everywhere between them. Those bounds show
that the dev rows the engine misses (Qwen at 2,048 tokens, Qwen-7B at batch 2) read several
GiB of cache above anything a tensor count can reach, which is why no term was added for
them (docs/sizing.md, "ms-swift rows"); and they show where the engine's own ms-swift loss
figure (24 B per logit, a reserved-pool figure) already counts more than the need.

Only dev cases are read (each is asserted ``split == "dev"``); nothing here scores them.
"""

from __future__ import annotations

import pytest

from tests.sizing import calibration as cal

BY_ID = {c["id"]: c for c in cal.CASES}


def reading(case_id: str) -> float:
    """The GiB a dev case measured."""
    case = BY_ID[case_id]
    assert case["split"] == "dev", case_id
    assert case["measured"]["unit"] == "GiB", case_id
    return float(case["measured"]["value"])


def tensors(case_id: str) -> float:
    """The engine's tensors for a dev case: its per-device figure less the context and
    allocator slack it adds on top (the overhead term)."""
    case = BY_ID[case_id]
    assert case["split"] == "dev", case_id
    memory = cal._run(case).memory
    return memory.per_device_gib - memory.overhead_gib


def chord(x: float, x0: float, y0: float, x1: float, y1: float) -> float:
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


LENGTH_ROWS = {
    # model: (512-token row, 2,048-token row, 8,192-token row), LoRA, batch 1
    "qwen-1.8b": (
        "swift-bench-q1.8b-lora-s512-mem",
        "swift-bench-q1.8b-lora-s2048-mem",
        "swift-bench-q1.8b-lora-s8192-mem",
    ),
    "qwen-7b": (
        "swift-bench-q7b-lora-s512-mem",
        "swift-bench-q7b-lora-s2048-mem",
        "swift-bench-q7b-lora-s8192-mem",
    ),
    "qwen-14b": (
        "swift-bench-q14b-lora-s512-mem",
        "swift-bench-q14b-lora-bf16-mem",
        "swift-bench-q14b-lora-s8192-mem",
    ),
}


@pytest.mark.parametrize("model", sorted(LENGTH_ROWS))
def test_the_2048_token_readings_hold_cache_no_tensor_count_reaches(model: str) -> None:
    """The need at 2,048 tokens is at most the chord of the 512- and 8,192-token readings
    (need linear in tokens, each reading at least its need), and every Qwen model's
    2,048-token reading is 3.3-3.9 GiB above that chord: cache of the allocator, not tensors.
    (The bound assumes each run's longest sample is near its max_length; were the 8,192
    run's longest only 6,000 tokens, the bound at 2,048 would rise by 2.4 GiB for Qwen-7B,
    still under its reading.) The engine's tensors lie under the bound, as a need must."""
    short, mid, long = LENGTH_ROWS[model]
    bound = chord(2048, 512, reading(short), 8192, reading(long))
    assert reading(mid) - bound > 3.3
    assert tensors(mid) <= bound


def test_the_batch_2_reading_holds_cache_its_batch_1_and_8_rows_rule_out() -> None:
    """Qwen-7B LoRA at 2,048 tokens: batch 1 reads 27.74 GiB and batch 8 76.14. With the
    need F + u x batch at most each reading, the largest need at batch 2 is where both
    bounds meet (7u = 76.14 - 27.74): 34.66 GiB, against a reading of 43.11. At least 8.4 GiB
    of that reading is cache a run at batch 2 does not need, so the row's 0.78 is not a
    missing term; the engine's tensors (29.5 GiB) lie under the bound."""
    one, eight = reading("swift-bench-q7b-lora-s2048-mem"), reading("swift-bench-q7b-lora-bs8-mem")
    u = (eight - one) / 7
    bound = one + u  # F + 2u with F = one - u
    assert bound == pytest.approx(34.66, abs=0.01)
    assert reading("swift-bench-q7b-lora-bs2-mem") - bound > 8.4
    assert tensors("swift-bench-q7b-lora-bs2-mem") <= bound


@pytest.mark.xfail(
    strict=True,
    reason="ms-swift's 24 B per logit is a reserved-pool figure fitted to the 8,192-token "
    "readings; the full fine-tune of the same data bounds the need at about 21 B",
)
def test_the_lora_8192_reading_is_bounded_by_the_full_run_of_the_same_data() -> None:
    """Qwen-1.8B at 8,192 tokens, the same 1,000 samples (seed 42, same tokenizer): full
    fine-tuning reads 38.93 GiB and holds everything the LoRA run holds plus the gradients
    and AdamW moments of 1.84 B parameters in bf16 (2 + 4 B each, 10.3 GiB, alive at the loss
    peak from the second accumulated micro-batch and the first optimizer step on: the
    bound assumes one of the run's longest samples comes later, as all but the first 16 of
    1,000 do, less one in 16 at the head of a cycle). So the LoRA run needs at most 28.7 GiB
    where it reads 37.03: at least 8.4 GiB of that reading is cache. The engine's LoRA
    tensors (32.2 GiB at ms-swift's 24 B per logit) exceed that need; at the tensor count
    of Hugging Face's loss (16 B) they would not. Kept as an expected failure: lowering the
    figure to the need moves the ms-swift rows under their reserved readings, which is a
    question of how those readings are scored, not of a term (docs/sizing.md)."""
    full = BY_ID["swift-bench-q1.8b-full-s8192-mem"]
    memory = cal._run(full).memory
    states = memory.gradients_gib + memory.optimizer_gib
    assert states == pytest.approx(10.26, abs=0.05)
    bound = reading("swift-bench-q1.8b-full-s8192-mem") - states
    assert reading("swift-bench-q1.8b-lora-s8192-mem") - bound > 8.3
    assert tensors("swift-bench-q1.8b-lora-s8192-mem") <= bound


@pytest.mark.xfail(
    strict=True,
    reason="the allocator slack (10 %) is charged on ms-swift's loss figure, which is already "
    "a reserved-pool figure: 83.1 GiB estimated for a run measured at 76.14 GiB on 80 GiB",
)
def test_a_run_the_benchmark_ran_needs_no_more_than_the_device_it_ran_on() -> None:
    """Qwen-7B LoRA at batch 8 x 2,048 tokens ran on one A100-80GB and read 76.14 GiB
    reserved (dev row): the estimate should not exceed that device's 80 GiB. ms-swift's
    loss figure (24 B per logit) is already what the caching allocator reserves for the
    loss's transient buffers, and the allocator's slack (10 % on the tensors) is added on
    it again: the estimate reads 83.1 GiB, 3.1 GiB more than the device holds; without the
    second count, 77.5. (The run filled about 96 % of the device, reserved pool plus CUDA
    context, so the estimate's own 5 % headroom would still call it too tight: a policy,
    not a size.) Not fixed in session 13: the change scores the same dev cases (46 of 53)
    but widens the training-memory spread's high end from 1.266 to 1.323 (the 2,048-token
    rows' cache sets it), so every training range and 37 of the replay's answers move for
    one verdict; the patch is described in docs/answer-review.md (session 13, calib13)."""
    case = BY_ID["swift-bench-q7b-lora-bs8-mem"]
    assert case["split"] == "dev"
    r = cal._run(case)
    assert r.placement.headroom_gib > 0
    assert r.memory.per_device_gib == pytest.approx(77.5, abs=0.1)
    assert r.memory.per_device_gib >= reading("swift-bench-q7b-lora-bs8-mem")
