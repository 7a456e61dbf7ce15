"""Image-model training after expert review 4: LoRA on Stable Diffusion (F7), an image
side sent with a model that is not an image model (F6), and the sentences of CNN/ViT
answers and framework limits (F15). Through the HTTP app and the shipped plugins."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

GIB = 2**30


def post(client: TestClient[Litestar], path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body)


def estimate(client: TestClient[Litestar], workload: dict[str, Any], acc: str) -> Any:
    response = client.post(
        "/v1/estimate",
        json={"workload": workload, "placement": {"accelerator": acc, "count": 1}},
    )
    assert response.status_code == 200, response.text
    return response.json()


# --- F7: LoRA on Stable Diffusion ----------------------------------------------------

SD_LORA = {"kind": "finetune", "model": "sd-1.5", "method": "lora", "image_size": 512,
           "tokens": 20_000}  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lora_on_stable_diffusion_is_planned(client: TestClient[Litestar], lang: str) -> None:
    """F7 (r48): the commonest SD fine-tune was refused with a 400."""
    body = {"workload": SD_LORA, "constraints": {"billing": ["on_demand"]}, "lang": lang}
    response = post(client, "/v1/recommend", body)
    assert response.status_code == 200, response.text
    assert response.json()["options"]


def test_sd_lora_memory_is_frozen_weights_adapters_and_activations(
    client: TestClient[Litestar],
) -> None:
    """The Hugging Face LoRA blog runs train_text_to_image_lora.py (fp16, 512 px, batch 1)
    "in as low as 11 GB of GPU RAM" (a 2080 Ti): the estimate must fit there, and it must
    hold at least the frozen UNet, text encoder and VAE in 16-bit (1.066B x 2 B) plus the
    per-sample activations."""
    job = {**SD_LORA, "gradient_checkpointing": False, "optimizer": "adamw"}
    answer = estimate(client, job, "A100-80GB")
    memory = answer["memory"]
    per_device = memory["per_device_gib"]
    assert 1.066e9 * 2 / GIB + 2.50e9 / GIB < per_device < 11.0, memory
    lines = " ".join(answer["assumptions"])
    # rank 16 on the attention projections of SD 1.5's 16 transformer blocks: 16 x 199,296
    assert "3.2M trainable parameters" in lines, lines
    assert "the frozen UNet, text encoder and VAE stay in 16-bit" in lines, lines


def test_sd_lora_is_below_its_full_fine_tune(client: TestClient[Litestar]) -> None:
    lora = estimate(client, SD_LORA, "A100-80GB")["memory"]["per_device_gib"]
    full = estimate(client, {**SD_LORA, "method": "full"}, "A100-80GB")["memory"]
    assert lora < full["per_device_gib"] - 8.0, (lora, full)


def test_qlora_on_diffusion_names_the_method(client: TestClient[Litestar]) -> None:
    response = post(
        client, "/v1/estimate",
        {"workload": {**SD_LORA, "method": "qlora"}, "placement": {"accelerator": "A10"}},
    )  # fmt: skip
    assert response.status_code == 400, response.text
    assert response.json()["extra"][0]["key"] == "workload.method"


# --- F6: image_size with a model that is not an image model --------------------------


@pytest.mark.parametrize(("lang", "words"), [("en", "image_size"), ("zh", "image_size")])
def test_image_size_with_a_size_only_model_is_refused(
    client: TestClient[Litestar], lang: str, words: str
) -> None:
    """F6 (r22): {"params_b": 2.6} with image_size 1024 was sized as a Qwen text model
    and 50,000 images as text tokens ("6 minutes")."""
    body = {"workload": {"kind": "finetune", "model": {"params_b": 2.6}, "method": "lora",
                         "image_size": 1024, "tokens": 50_000}, "lang": lang}  # fmt: skip
    response = post(client, "/v1/recommend", body)
    assert response.status_code == 400, response.text
    extra = response.json()["extra"][0]
    assert extra["key"] == "workload.image_size"
    assert words in extra["message"]
    assert "sdxl" in extra["message"], extra["message"]


def test_image_size_with_a_text_preset_is_refused(client: TestClient[Litestar]) -> None:
    body = {"workload": {"kind": "inference", "model": "qwen2.5-7b", "image_size": 512}}
    response = post(client, "/v1/recommend", body)
    assert response.status_code == 400, response.text
    assert response.json()["extra"][0]["key"] == "workload.image_size"


def test_sdxl_is_a_preset(client: TestClient[Litestar]) -> None:
    """SDXL base 1.0: UNet 2,567,463,684 + CLIP-L 123,060,480 + OpenCLIP-bigG 694,659,840
    + VAE 83,653,863 parameters; LoRA rank 16 on the attention of its 70 transformer
    blocks (10 at 640 channels, 60 at 1280; cross-attention from 2048) = 16 x 1,451,520."""
    job = {"kind": "finetune", "model": "stabilityai/stable-diffusion-xl-base-1.0",
           "method": "lora", "image_size": 1024, "tokens": 50_000}  # fmt: skip
    answer = estimate(client, job, "A100-80GB")
    lines = " ".join(answer["assumptions"])
    assert "3.469B parameters" in lines, lines
    assert "23.2M trainable parameters" in lines, lines
    assert answer["memory"]["per_device_gib"] > 3.469e9 * 2 / GIB


# --- F15: sentences that do not apply -------------------------------------------------


@pytest.mark.parametrize("model", ["resnet-50", "yolov8-m", "vit-b-16"])
def test_vision_training_has_no_hugging_face_trainer_accounting(
    client: TestClient[Litestar], model: str
) -> None:
    job = {"kind": "finetune", "model": model, "method": "full", "tokens": 1_000_000,
           "micro_batch_size": 32}  # fmt: skip
    lines = " ".join(estimate(client, job, "A10")["assumptions"])
    assert "Hugging Face" not in lines, lines
    assert "logits" not in lines, lines


def test_resnet_trains_with_sgd_by_default(client: TestClient[Litestar]) -> None:
    """torchvision's classification reference trains with SGD (momentum 0.9) unless told:
    4 B of momentum per parameter, not AdamW's 8."""
    job = {"kind": "finetune", "model": "resnet-50", "method": "full", "tokens": 1_000_000}
    sgd = estimate(client, job, "A10")
    adamw = estimate(client, {**job, "optimizer": "adamw"}, "A10")
    lines = " ".join(sgd["assumptions"])
    assert "sgd" in lines, lines
    gap = adamw["memory"]["optimizer_gib"] - sgd["memory"]["optimizer_gib"]
    assert gap * GIB == pytest.approx(25_557_032 * 4, rel=0.01)


def test_deepspeed_limit_only_where_layers_are_split(client: TestClient[Litestar]) -> None:
    """F15 (r05): 'DeepSpeed combines tensor or pipeline parallelism only with ZeRO-0/1'
    was said of ZeRO-3 layouts that split no layers."""
    body = {"workload": {"kind": "finetune", "model": "llama-3.1-8b", "method": "full",
                         "seq_len": 4096, "tokens": 100_000_000, "framework": "deepspeed"},
            "top_k": 10, "lang": "en"}  # fmt: skip
    response = post(client, "/v1/recommend", body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    said = [o for o in options if any("only with ZeRO-0/1" in r for r in o["reasons"])]
    assert all(o["tensor_parallel"] > 1 for o in said), said
    assert any(o["zero_stage"] == 3 and o["tensor_parallel"] == 1 for o in options)


def test_sd_lora_time_counts_the_frozen_unet_and_the_encoders(
    client: TestClient[Litestar],
) -> None:
    """Per image: the UNet forward and its input gradients (2 passes, no weight gradients
    for frozen weights), plus the VAE encoder and text encoder forward the script runs
    on every batch, at the image-model utilization of an A100's 312 TFLOPS (0.195, NVIDIA's
    ResNet-50 recipe; a batch of one SD image outlasts its passes' kernel launches)."""
    from service.sizing.presets import ModelRegistry, builtin_presets
    from service.sizing.unet import frozen_forward_flops, unet_forward_flops

    preset = ModelRegistry(builtin_presets()).resolve("sd-1.5")
    assert preset is not None
    assert preset.unet is not None
    per_image = 2 * unet_forward_flops(preset.unet, 512) + frozen_forward_flops(preset.unet, 512)
    hours = estimate(client, SD_LORA, "A100-80GB")["time"]["hours"]
    assert hours == pytest.approx(20_000 * per_image / (312e12 * 0.195) / 3600, rel=1e-6)
    full = estimate(client, {**SD_LORA, "method": "full"}, "A100-80GB")["time"]["hours"]
    assert full > hours * 1.2  # the UNet's weight gradients


def test_sdxl_lora_on_50k_images_takes_hours(client: TestClient[Litestar]) -> None:
    """F6's job named as the model it describes: hours on an A100, not r22's 6 minutes."""
    job = {"kind": "finetune", "model": "sdxl", "method": "lora", "image_size": 1024,
           "tokens": 50_000}  # fmt: skip
    assert estimate(client, job, "A100-80GB")["time"]["hours"] > 2.0


def test_vision_models_checkpoint_only_when_asked(client: TestClient[Litestar]) -> None:
    """torchvision's recipes and diffusers' scripts do not checkpoint unless told (the
    Hugging Face Trainer default of `framework` is not theirs): SD keeps its 2.50 GB per
    image, a ViT every layer's activations."""
    vit = {"kind": "finetune", "model": "vit-b-16", "method": "full", "tokens": 1_000_000}
    lines = " ".join(estimate(client, vit, "A10")["assumptions"])
    assert "no recomputation" in lines, lines
    sd = estimate(client, SD_LORA, "A10")["memory"]["activations_gib"]
    assert sd * GIB == pytest.approx(2.50e9)
    sd_ckpt = estimate(client, {**SD_LORA, "gradient_checkpointing": True}, "A10")["memory"]
    assert sd_ckpt["activations_gib"] * GIB == pytest.approx(0.48e9)


# --- review 5 G8: image training is timed at the batch it is sized at ---------------

RESNET = {"kind": "finetune", "model": "resnet-50", "method": "full", "image_size": 224}
DLE_RN50 = (
    "NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5 README "
    "@291f0d0, 'Training performance results', 1 GPU, mixed precision, batch 256"
)


@pytest.mark.parametrize(("acc", "published"), [("A100-80GB", 2470.0), ("V100-16GB", 1200.0)])
def test_resnet50_at_the_tuned_batch_trains_at_the_published_rate(
    client: TestClient[Litestar], acc: str, published: float
) -> None:
    """At NVIDIA's tuned batch (256 per GPU, AMP) one A100-80GB trains 2,470 images/s and
    one V100-16GB 1,200 (``DLE_RN50``): an hour of those images takes an hour (+-15 %)."""
    job = {**RESNET, "micro_batch_size": 256, "tokens": published * 3600}
    hours = estimate(client, job, acc)["time"]["hours"]
    assert hours == pytest.approx(1.0, rel=0.15)


def test_a_batch_of_one_does_not_fill_the_device(client: TestClient[Litestar]) -> None:
    """Review 5 G8: memory was sized at one image and time at a large batch's rate. One
    image per step is bound by the kernel launches of its passes (about 13 ms per
    ResNet-50 forward at batch 1 on V100 and T4 alike in the same README's inference
    tables), not by FLOPs: 3 passes x 13 ms, about 26 images/s, at least 20x slower per
    image than at batch 256."""
    one = estimate(client, {**RESNET, "micro_batch_size": 1, "tokens": 1e6}, "A100-80GB")
    big = estimate(client, {**RESNET, "micro_batch_size": 256, "tokens": 1e6}, "A100-80GB")
    rate = 1e6 / (one["time"]["hours"] * 3600)
    assert rate == pytest.approx(1 / (3 * 0.013), rel=0.2)
    assert one["time"]["hours"] > 20 * big["time"]["hours"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_resnet50_on_eight_npus_is_not_an_mlperf_record(
    client: TestClient[Litestar], lang: str
) -> None:
    """n28: 12.8M images of ResNet-50 on 8 x 910B3 took 13 min (about 25k images/s).
    Without a batch it is now sized and timed at torchvision's recipe batch (32 per
    device): memory holds 32 images' activations and the rate is under the 8 x 2,470 of
    NVIDIA's tuned A100 recipe."""
    job = {**RESNET, "tokens": 12_800_000}
    body = {"workload": job, "constraints": {"providers": ["huawei"], "accelerators": ["910B"]},
            "lang": lang}  # fmt: skip
    response = post(client, "/v1/recommend", body)
    assert response.status_code == 200, response.text
    answer = response.json()
    option = next(o for o in answer["options"] if o["accelerator"]["count"] == 8)
    rate = 12_800_000 / (option["hours"] * 3600)
    # 32 images per step compute in 12.8 ms on a 910B3 (313 TFLOPS x 0.195), a third of
    # the 39 ms its three passes take to launch: about 6.5k images/s on 8 (+-25 %)
    assert rate == pytest.approx(8 * 32 / (3 * 0.013), rel=0.25)
    assert rate < 8 * 2470, rate
    one = estimate(client, {**RESNET, "micro_batch_size": 1, "tokens": 1e6}, "A100-80GB")
    default = estimate(client, {**RESNET, "tokens": 1e6}, "A100-80GB")
    ratio = default["memory"]["activations_gib"] / one["memory"]["activations_gib"]
    assert ratio == pytest.approx(32, rel=0.05)
    assert any("32 images per device" in a for a in default["assumptions"])
