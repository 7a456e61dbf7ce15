"""Session 11 (docs/answer-review.md, branch ``words11``): Ascend, MindIE, MindSpeed and
vllm-ascend answers read as an expert writes them, through the real app.

* K11: a caveat that is the same for every option is said once, in the advice: MindIE's
  "no user code is migrated to torch_npu" was in every option's warnings and again in
  the ``ascend`` advice. An answer that mixes NPUs and GPUs still marks its NPU options
  (there the warning tells the options apart);
* K17: Megatron-LM and MindSpeed shard the optimizer states with Megatron's distributed
  optimizer (``--use-distributed-optimizer``,
  https://github.com/NVIDIA/Megatron-LM/blob/50b073cc788271efb5d4fbc92d987aeed2384f4f/docs/source/api-guide/dist_optimizer.md),
  not DeepSpeed's ZeRO-1: the layout says "distributed optimizer" / "分布式优化器", with the
  same memory per device;
* W1: a framework label ending in a full-width bracket is not followed by a space in a zh
  sentence ("MindSpeed（昇腾上的 Megatron） 只切分");
* W2: an engine named in a zh sentence is named in Chinese ("MindIE (Ascend) 的默认值").
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

ASCEND = {"accelerators": ["910B"]}
MINDIE_MOE = {"kind": "inference", "model": "qwen3-30b-a3b", "engine": "mindie",
              "concurrency": 16, "context_len": 8192}  # fmt: skip
VLLM_32B = {"kind": "inference", "model": "qwen2.5-32b", "engine": "vllm",
            "concurrency": 32, "context_len": 8192}  # fmt: skip
MINDSPEED_14B = {"kind": "pretrain", "model": "qwen2.5-14b", "framework": "mindspeed",
                 "seq_len": 4096, "tokens": 20_000_000_000}  # fmt: skip


def _sentences(answer: dict[str, Any]) -> list[str]:
    """Every user-facing sentence of an answer: summary, warnings, options, advice."""
    said = [answer["summary"], *answer["warnings"]]
    for option in answer["options"]:
        said += option["reasons"] + option["warnings"]
    return said + [a["text"] for a in answer["advice"]]


MINDIE_SAID = {"zh": "用户代码无需迁移到 torch_npu", "en": "no user code is migrated to torch_npu"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mindies_caveat_is_said_once_in_the_advice(client: TestClient[Litestar], lang: str) -> None:
    """K11: every option of a MindIE answer is on an Ascend NPU; the caveat is the
    advice's, not three options' warnings as well."""
    answer = recommend(client, {"workload": MINDIE_MOE, "constraints": ASCEND, "top_k": 3}, lang)
    assert len(answer["options"]) == 3
    said = [s for s in _sentences(answer) if MINDIE_SAID[lang] in s]
    assert len(said) == 1, said
    advice = [a for a in answer["advice"] if MINDIE_SAID[lang] in a["text"]]
    assert [a["topic"] for a in advice] == ["ascend"], answer["advice"]
    assert "ATB Models" in advice[0]["text"]  # the longer one, with its exception
    for option in answer["options"]:
        assert not [w for w in option["warnings"] if "MindIE" in w], option["warnings"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_vllm_ascends_caveat_is_said_once_when_every_option_is_an_npu(
    client: TestClient[Litestar], lang: str
) -> None:
    answer = recommend(client, {"workload": VLLM_32B, "constraints": ASCEND, "top_k": 3}, lang)
    assert answer["options"]
    assert all(o["accelerator"]["name"].startswith("Ascend") for o in answer["options"])
    said = [s for s in _sentences(answer) if "vllm-ascend 插件" in s or "vllm-ascend plugin" in s]
    assert len(said) == 1, said
    assert [a["topic"] for a in answer["advice"] if a["text"] == said[0]] == ["ascend"]


def test_an_answer_mixing_npus_and_gpus_marks_its_npu_options(
    client: TestClient[Litestar],
) -> None:
    """Where NPUs and GPUs are both listed the warning tells the options apart: it stays
    on the NPU options only, and the advice explains it."""
    workload = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 16,
                "context_len": 4096}  # fmt: skip
    answer = recommend(
        client, {"workload": workload, "constraints": {"providers": ["huawei"]}, "top_k": 10}, "en"
    )
    npu = [o for o in answer["options"] if o["accelerator"]["name"].startswith("Ascend")]
    gpu = [o for o in answer["options"] if not o["accelerator"]["name"].startswith("Ascend")]
    assert npu, [o["accelerator"] for o in answer["options"]]
    assert gpu, [o["accelerator"] for o in answer["options"]]
    caveat = "Ascend NPU (CANN, not CUDA): serve with the vllm-ascend plugin or MindIE"
    assert all(any(w.startswith(caveat) for w in o["warnings"]) for o in npu)
    assert not any("CANN" in w for o in gpu for w in o["warnings"])
    assert any(a["topic"] == "ascend" for a in answer["advice"])


def _fits(answer: dict[str, Any]) -> list[str]:
    return [r for o in answer["options"] for r in o["reasons"] if "GiB" in r and "64 GiB" in r]


@pytest.mark.parametrize(
    ("lang", "layout", "network"),
    [("zh", "（分布式优化器，张量并行 4）", "数据并行/分布式优化器通信"),
     ("en", " (distributed optimizer, tensor parallel 4)",
      "data-parallel/distributed-optimizer traffic")],
)  # fmt: skip
def test_megatrons_optimizer_sharding_is_named_the_distributed_optimizer(
    client: TestClient[Litestar], lang: str, layout: str, network: str
) -> None:
    """K17: MindSpeed's layout said "ZeRO-1"; Megatron calls it the distributed
    optimizer. The figures stay: 56.2 and 34.9 GiB per device, stage 1 in the field."""
    answer = recommend(client, {"workload": MINDSPEED_14B, "constraints": ASCEND, "top_k": 3}, lang)
    options = answer["options"]
    assert [o["per_device_gib"] for o in options[:2]] == [
        pytest.approx(56.2, abs=0.05),
        pytest.approx(34.9, abs=0.05),
    ]
    assert [o["zero_stage"] for o in options] == [1] * len(options)
    fits = _fits(answer)
    assert fits, answer
    assert all(layout in r for r in fits), fits
    said = _sentences(answer)
    assert not [s for s in said if "ZeRO-1" in s or "ZeRO 通信" in s or "/ZeRO traffic" in s]
    assert any(network in s for s in said), said
    assumptions = answer["estimate"]["assumptions"]
    assert "Distributed optimizer over 2 data-parallel replicas, tensor parallel 4." in (
        assumptions
    ), assumptions
    assert not [a for a in assumptions if "ZeRO stage" in a]


def test_megatron_lm_on_gpus_is_named_the_distributed_optimizer_too(
    client: TestClient[Litestar],
) -> None:
    job = {**MINDSPEED_14B, "framework": "megatron"}
    answer = recommend(client, {"workload": job, "top_k": 3}, "en")
    fits = [r for o in answer["options"] for r in o["reasons"] if r.startswith("Fits:")]
    assert fits, answer
    assert all("(distributed optimizer, tensor parallel" in r for r in fits), fits
    assert not [s for s in _sentences(answer) if "ZeRO-1" in s]


def test_a_deepspeed_trainer_still_says_its_zero_stage(client: TestClient[Litestar]) -> None:
    job = {"kind": "finetune", "model": "qwen2.5-14b", "method": "full",
           "tokens": 100_000_000}  # fmt: skip
    answer = recommend(client, {"workload": job, "top_k": 3}, "en")
    fits = [r for o in answer["options"] for r in o["reasons"] if r.startswith("Fits:")]
    assert any("(ZeRO-" in r for r in fits), fits
    assert not [r for r in fits if "distributed optimizer" in r]


def test_a_framework_in_full_width_brackets_is_followed_by_no_space(
    client: TestClient[Litestar],
) -> None:
    """W1: "MindSpeed（昇腾上的 Megatron） 只切分优化器状态" had a space after "）"."""
    answer = recommend(client, {"workload": MINDSPEED_14B, "constraints": ASCEND}, "zh")
    limit = [s for s in _sentences(answer) if "只切分优化器状态" in s]
    assert limit, answer
    assert all("MindSpeed（昇腾上的 Megatron）只切分" in s for s in limit), limit


@pytest.mark.parametrize(
    ("lang", "words", "foreign"),
    [("zh", "MindIE 的默认值未核实，按 vLLM 的 256 计", "MindIE (Ascend)"),
     ("en", "MindIE (Ascend)'s own not checked, vLLM's 256 assumed", "的")],
)  # fmt: skip
def test_a_mindie_batch_jobs_limit_names_the_engine_in_the_answers_language(
    client: TestClient[Litestar], lang: str, words: str, foreign: str
) -> None:
    """W2: "不超过引擎默认的批上限，MindIE (Ascend) 的默认值未核实" in a zh reason."""
    job = {"kind": "inference", "model": "deepseek-r1-distill-qwen-32b", "engine": "mindie",
           "output_tokens": 500_000_000, "prompt_len": 1000, "context_len": 4096}  # fmt: skip
    answer = recommend(client, {"workload": job, "constraints": ASCEND, "top_k": 3}, lang)
    batch = [r for o in answer["options"] for r in o["reasons"] if "256" in r and "MindIE" in r]
    assert batch, answer
    assert all(words in r for r in batch), batch
    assert not [r for r in batch if foreign in r]


@pytest.mark.parametrize(
    ("lang", "npu", "gpu"),
    [("zh", "否则数据加载会让 NPU 空等", "GPU 空等"),
     ("en", "so data loading never starves the NPUs", "the GPUs")],
)  # fmt: skip
def test_an_npu_answers_cpu_advice_speaks_of_npus(
    client: TestClient[Litestar], lang: str, npu: str, gpu: str
) -> None:
    """W3: the CPU advice of a MindSpeed pre-train on 910B said "否则数据加载会让 GPU 空等"
    where every option is an NPU; a GPU answer keeps its GPUs."""
    answer = recommend(client, {"workload": MINDSPEED_14B, "constraints": ASCEND}, lang)
    cpu = [a["text"] for a in answer["advice"] if a["topic"] == "cpu_ratio"]
    assert len(cpu) == 1, answer["advice"]
    assert npu in cpu[0]
    assert gpu not in cpu[0]
    gpus = recommend(client, {"workload": {**MINDSPEED_14B, "framework": "megatron"}}, lang)
    assert [gpu in a["text"] for a in gpus["advice"] if a["topic"] == "cpu_ratio"] == [True]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_served_image_model_on_npus_is_told_of_torch_npu_and_torchair(
    client: TestClient[Litestar], lang: str
) -> None:
    """W4 (review 8 K16's leftover): the NPU options of a served ResNet-50 said "serve with
    the vllm-ascend plugin or MindIE" (text engines); an image model runs as PyTorch code
    on torch_npu. On NPUs alone the serving advice said "torch.compile or TensorRT"."""
    workload = {"kind": "inference", "model": "resnet-50", "concurrency": 32}
    mixed = recommend(
        client, {"workload": workload, "constraints": {"providers": ["huawei"]}, "top_k": 10}, lang
    )
    npu = [o for o in mixed["options"] if o["accelerator"]["name"].startswith("Ascend")]
    assert npu, [o["accelerator"] for o in mixed["options"]]
    for option in npu:
        assert [w for w in option["warnings"] if "torch_npu" in w], option["warnings"]
        assert not [w for w in option["warnings"] if "vllm-ascend" in w], option["warnings"]
    alone = recommend(client, {"workload": workload, "constraints": ASCEND, "top_k": 3}, lang)
    serving = [a["text"] for a in alone["advice"] if a["topic"] == "serving"]
    assert len(serving) == 1, alone["advice"]
    assert "TorchAir" in serving[0]
    assert "TensorRT" not in serving[0]
    caveat = [a["text"] for a in alone["advice"] if a["topic"] == "ascend"]
    assert len(caveat) == 1, alone["advice"]
    assert "torch_npu" in caveat[0]
    # the advice says it, not every option as well
    assert not [w for o in alone["options"] for w in o["warnings"] if "torch_npu" in w]


@pytest.mark.parametrize(
    ("lang", "first"),
    [("zh", "没有同时满足所有约束的方案。"
            "31 个报价的加速卡不是昇腾 NPU，而 MindIE 只在昇腾上运行。"),
     ("en", "31 offers have accelerators other than Ascend NPUs, and MindIE runs on Ascend only.")],
)  # fmt: skip
def test_mindie_asked_on_a_gpu_says_first_that_it_runs_only_on_ascend(
    client: TestClient[Litestar], lang: str, first: str
) -> None:
    """W5: MindIE with ``accelerators: ["A100"]`` was answered "252 offers have other
    accelerators than the ones asked for", the reason (MindIE runs only on Ascend) only in
    the warnings, as SGLang on a V100 was before review 9b S4."""
    job = {"kind": "inference", "model": "qwen2.5-14b", "engine": "mindie", "concurrency": 8}
    answer = recommend(client, {"workload": job, "constraints": {"accelerators": ["A100"]}}, lang)
    assert not answer["options"]
    assert first in answer["summary"], answer["summary"]
    assert "252" not in answer["summary"]


@pytest.mark.parametrize(
    ("count", "stage", "said"),
    [(8, 1, "Distributed optimizer over 4 data-parallel replicas, tensor parallel 2."),
     (8, 0, "No distributed optimizer (optimizer states replicated) over 2 data-parallel "
            "replicas, tensor parallel 4."),
     (8, 3, "ZeRO stage 3 over 8 data-parallel replicas."),
     (1, 1, "The distributed optimizer over one device shards nothing")],
)  # fmt: skip
def test_a_mindspeed_estimate_names_the_sharding_it_sized(
    client: TestClient[Litestar], count: int, stage: int, said: str
) -> None:
    """K17 in ``/v1/estimate``: stage 1 of MindSpeed is its distributed optimizer; a stage
    Megatron has no name for (ZeRO-3, asked in the placement) is said as it was sized."""
    job = {"kind": "finetune", "model": "qwen2.5-7b", "method": "full",
           "framework": "mindspeed", "tokens": 10_000_000}  # fmt: skip
    placement = {"accelerator": "910B3", "count": count, "zero_stage": stage}
    response = client.post("/v1/estimate", json={"workload": job, "placement": placement})
    assert response.status_code == 200, response.text
    assumptions = response.json()["assumptions"]
    assert [a for a in assumptions if a.startswith(said)], assumptions
