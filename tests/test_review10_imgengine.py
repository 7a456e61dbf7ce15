"""Review 10, S7c (docs/answer-review.md, session 11): a served image model is not an LLM.

A diffusion pipeline (SDXL, SD 1.5) is served by diffusers on plain PyTorch, a CNN or ViT
classifier by a PyTorch (torchvision/timm) server; none of them runs under vLLM, which
serves language models only, and none keeps a KV cache. The engine logic treated them
as vLLM jobs:

* S7c1: a tight fit said "vLLM takes gpu_memory_utilization 0.9 of each card ... its
  KV-cache pool" (SDXL x4 on 2 x T4: 13.5 of 16 GiB); diffusers reserves no fraction of
  the card, so the sentence is about the pipeline's own peak (weights + the VAE decode);
* S7c2: a V100 carried "not supported by vLLM's V1 engine ... serve with an older vLLM,
  LMDeploy or TGI" and ranked after the others as "vLLM's current release" does not run
  there; PyTorch and diffusers run on Volta;
* S7c3: Pascal cards (P4, P40, P100) were dropped because "vLLM does not run them; only
  plain PyTorch serving does", which is how an image model is served;
* S7c4: an Ascend NPU said "serve with the vllm-ascend plugin or MindIE, not CUDA vLLM"
  and its monitoring advice "the engine's batch sizes"; a PyTorch pipeline runs there
  through torch_npu and batches in its own server;
* S7c6: a batch job of images (``output_tokens``) was advised to keep "the engine's batch
  full (vLLM's offline LLM.generate ...)";
* S7c5: the estimate's overhead note named CUDA graphs and engine buffers (an LLM
  engine's), where a PyTorch pipeline's extra memory is cuDNN's workspaces and the
  caching allocator's pool.

LLM answers are unchanged (tests/replay).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.answers import recommend

TEXT_ENGINE = re.compile(
    r"vLLM|vllm|KV|gpu_memory_utilization|SGLang|LMDeploy|TGI|MindIE|prefill|预填充|"
    r"CUDA graphs|engine buffers|V1 engine|V1 引擎|推理引擎|the engine's"
)
SDXL4 = {"kind": "inference", "model": "sdxl", "concurrency": 4}
SD15_8 = {"kind": "inference", "model": "sd-1.5", "concurrency": 8}
VIT = {"kind": "inference", "model": "vit-b-16", "concurrency": 32}
RESNET = {"kind": "inference", "model": "resnet-50", "concurrency": 64}
LLM = {"kind": "inference", "model": "qwen2.5-7b", "concurrency": 8}


def _sentences(answer: dict[str, Any]) -> list[str]:
    """Every sentence an answer says (options' reasons and warnings, the summary, the
    answer's warnings and advice, whatever the field)."""
    found: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            found.append(x)
        elif isinstance(x, dict):
            for key, value in x.items():
                if key not in ("provider", "instance_type", "family", "price_source_ref"):
                    walk(value)
        elif isinstance(x, list):
            for value in x:
                walk(value)

    walk(answer)
    return found


def _text_engine_words(answer: dict[str, Any]) -> list[str]:
    return [s for s in _sentences(answer) if TEXT_ENGINE.search(s)]


def _on(client: TestClient[Litestar], workload: dict[str, Any], acc: str, lang: str) -> Any:
    body = {"workload": workload, "top_k": 10, "constraints": {"accelerators": [acc]}}
    return recommend(client, body, lang)


CASES = [
    (SDXL4, "T4"), (SDXL4, "A10"), (SDXL4, "L20"), ({**SDXL4, "precision": "fp16"}, "A10"),
    ({**SDXL4, "precision": "fp16"}, "T4"), (SD15_8, "T4"), (SD15_8, "A10"), (SD15_8, "V100"),
    (SDXL4, "V100"), (VIT, "V100"), (RESNET, "V100"), (SD15_8, "Ascend-910B"),
    (VIT, "T4"), (RESNET, "T4"), ({**SDXL4, "output_tokens": 10_000}, "A10"),
    ({**RESNET, "output_tokens": 1_000_000}, "T4"),
]  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("workload", "acc"), CASES)
def test_a_served_image_model_gets_no_text_engine_words(
    client: TestClient[Litestar], workload: dict[str, Any], acc: str, lang: str
) -> None:
    """S7c1, S7c2, S7c4: no sentence of the answer names vLLM, a KV cache, the engine's
    memory fraction or another text engine."""
    answer = _on(client, workload, acc, lang)
    assert answer["options"], answer["summary"]
    said = _text_engine_words(answer)
    assert not said, said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tight_sdxl_fit_is_said_in_the_pipelines_own_peak(
    client: TestClient[Litestar], lang: str
) -> None:
    """S7c1: SDXL x4 on two T4s (fp16 there, the VAE decoding in fp32): 13.5 GiB per card
    of 16, 6.5 of weights and 6.1 of the VAE decode of two images. The sentence on the
    tight fit names those parts and the way out (decode one image at a time), not a
    vLLM pool."""
    answer = _on(client, SDXL4, "T4", lang)
    option = answer["options"][0]
    assert option["accelerator"]["count"] == 2
    assert option["per_device_gib"] == pytest.approx(13.54, abs=0.05)
    tight = [r for r in option["reasons"] if "enable_vae_slicing" in r]
    assert len(tight) == 1, option["reasons"]
    sentence = tight[0]
    for part in ("VAE", "6.5", "6.1", "13.5", "2.5"):
        assert part in sentence, sentence
    assert ("weights" in sentence) if lang == "en" else ("权重" in sentence), sentence
    assert not TEXT_ENGINE.search(sentence), sentence


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_roomy_image_fit_says_nothing_of_a_tight_peak(
    client: TestClient[Litestar], lang: str
) -> None:
    """SD 1.5 x8 needs 6.0 GiB: on an A10 or an L20 (bf16 SDXL x4, 13.5 of 48) no sentence
    warns of a tight peak."""
    for workload, acc in ((SD15_8, "A10"), (SDXL4, "L20")):
        answer = _on(client, workload, acc, lang)
        for option in answer["options"]:
            assert not any("enable_vae_slicing" in r for r in option["reasons"]), option


def test_a_v100_is_not_ranked_after_the_others_for_an_image_model(
    client: TestClient[Litestar],
) -> None:
    """S7c2: vLLM's V1 release does not decide where a diffusers pipeline runs: no option
    of an SD 1.5 answer says it ranks after the devices vLLM runs on."""
    answer = recommend(client, {"workload": SD15_8, "top_k": 50}, "en")
    v100 = [o for o in answer["options"] if o["accelerator"]["name"].startswith("V100")]
    assert v100, [o["accelerator"]["name"] for o in answer["options"]]
    for option in v100:
        assert not any("Ranked after" in r for r in option["reasons"]), option["reasons"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pascal_ranks_after_the_cards_with_tensor_cores(
    client: TestClient[Litestar], lang: str
) -> None:
    """S7c3: a P4 (8 GiB, ¥2.74/h) holds SD 1.5's 3.7 GiB at concurrency 2 and is the
    cheapest card (Tencent Cloud's GN6S), but runs the pipeline on CUDA cores: it ranks
    after every card with tensor cores, saying why, and the T4 (¥3.42/h) stays first."""
    workload = {"kind": "inference", "model": "sd-1.5", "concurrency": 2}
    limits = {"providers": ["tencent"], "max_price_per_hour": 4}
    body = {"workload": workload, "top_k": 50, "constraints": limits}
    answer = recommend(client, body, lang)
    names = [o["accelerator"]["name"] for o in answer["options"]]
    assert names[0] == "T4", names
    pascal = [i for i, n in enumerate(names) if n in ("P4", "P40", "P100")]
    assert pascal, names
    assert all(n in ("P4", "P40", "P100") for n in names[pascal[0] :]), names
    said = "Ranked after the accelerators with tensor cores" if lang == "en" else "Tensor Core"
    for i in pascal:
        reasons = answer["options"][i]["reasons"]
        assert any(said in r for r in reasons), reasons
        assert not any(TEXT_ENGINE.search(r) for r in reasons), reasons


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pascal_serves_an_image_model_with_its_caveat(
    client: TestClient[Litestar], lang: str
) -> None:
    """S7c3: a P40 is not dropped for "vLLM does not run it" when the model is served by
    plain PyTorch anyway; it is offered, with the caveat that Pascal has no tensor
    cores."""
    answer = _on(client, SD15_8, "P40", lang)
    assert answer["options"], answer["summary"]
    assert not _text_engine_words(answer), _text_engine_words(answer)
    warned = " ".join(answer["options"][0]["warnings"])
    assert ("tensor cores" in warned) if lang == "en" else ("Tensor Core" in warned), warned


def test_the_estimate_of_an_image_model_names_a_pytorch_pipelines_overhead(
    client: TestClient[Litestar],
) -> None:
    """S7c5: the 1 GiB context note of a served image model names cuDNN's workspaces and
    the caching allocator, not CUDA graphs and engine buffers."""
    response = client.post(
        "/v1/estimate", json={"workload": SDXL4, "placement": {"accelerator": "A10", "count": 1}}
    )
    assert response.status_code == 200, response.text
    said = [a for a in response.json()["assumptions"] if a.startswith("Overhead")]
    assert len(said) == 1, response.json()["assumptions"]
    assert "cuDNN" in said[0], said
    assert "CUDA graphs" not in said[0], said


@pytest.mark.parametrize("acc", ["V100", "T4"])
def test_llm_serving_keeps_its_engine_words(client: TestClient[Litestar], acc: str) -> None:
    """The text path is untouched: a served LLM on a V100 still carries vLLM's Volta
    caveat, and its estimate the engine overhead."""
    answer = _on(client, LLM, acc, "en")
    assert answer["options"]
    if acc == "V100":
        assert any("vLLM" in w for w in answer["options"][0]["warnings"])
