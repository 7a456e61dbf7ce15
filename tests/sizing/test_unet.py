"""A diffusion UNet's transformer blocks and FLOPs from its config (service/sizing/unet.py)."""

from __future__ import annotations

import pytest

from service.sizing.presets import ModelRegistry, builtin_presets
from service.sizing.unet import (
    TEXT_TOKENS,
    UNetConfig,
    attention_blocks,
    frozen_forward_flops,
    unet_forward_flops,
    vae_encoder_flops,
)

REGISTRY = ModelRegistry(builtin_presets())

TINY = UNetConfig(
    block_out_channels=(8, 16),
    cross_attention=(False, True),
    transformer_layers=(1, 1),
    cross_attention_dim=4,
    layers_per_block=1,
    in_channels=2,
    latent_factor=1,
    text_encoder_params=1000.0,
    vae_block_out_channels=(4,),
    vae_layers_per_block=1,
)


def conv(cin: int, cout: int, n: float, k: int = 3) -> float:
    return 2.0 * k * k * cin * cout * n


def resnet(cin: int, cout: int, n: float) -> float:
    return conv(cin, cout, n) + conv(cout, cout, n) + (conv(cin, cout, n, 1) if cin != cout else 0)


def transformer(d: int, n: float, c: int) -> float:
    t = TEXT_TOKENS
    layer = 8 * n * d * d + 4 * n * n * d + 4 * n * d * d + 4 * t * c * d + 4 * n * t * d
    return 4 * n * d * d + layer + 24 * n * d * d


def test_a_two_level_unet_counts_every_layer_by_hand() -> None:
    """8x8 latent: level 0 (8 ch, no attention) then level 1 (16 ch, cross-attention) at
    4x4; the mid block at 4x4; up level 1 (two ResNets over the skips 16 and 8, each
    with a transformer), upsampling to 8x8, up level 0 (two ResNets over the skips 8, 8)."""
    n0, n1 = 64.0, 16.0
    expected = (
        conv(2, 8, n0)
        + resnet(8, 8, n0) + conv(8, 8, n1)  # down 0 and its downsampler
        + resnet(8, 16, n1) + transformer(16, n1, 4)  # down 1
        + 2 * resnet(16, 16, n1) + transformer(16, n1, 4)  # mid
        + resnet(16 + 16, 16, n1) + transformer(16, n1, 4)  # up 1, skip of down 1
        + resnet(16 + 8, 16, n1) + transformer(16, n1, 4)  # up 1, skip of the downsampler
        + conv(16, 16, n0)  # upsampler
        + resnet(16 + 8, 8, n0) + resnet(8 + 8, 8, n0)  # up 0
        + conv(8, 2, n0)
    )  # fmt: skip
    assert unet_forward_flops(TINY, 8) == pytest.approx(expected)
    assert attention_blocks(TINY) == ((16, 4),)  # 1 down + 2 up + the mid block


def test_the_vae_encoder_and_text_encoder_by_hand() -> None:
    n = 64.0
    vae = conv(3, 4, n) + resnet(4, 4, n) + 2 * resnet(4, 4, n) + 8 * n * 16 + 4 * n * n * 4
    vae += conv(4, 4, n)
    assert vae_encoder_flops(TINY, 8) == pytest.approx(vae)
    assert frozen_forward_flops(TINY, 8) == pytest.approx(vae + 2 * 1000 * TEXT_TOKENS)


@pytest.mark.parametrize(
    ("model", "blocks"),
    [("sd-1.5", ((320, 5), (640, 5), (1280, 6))), ("sdxl", ((640, 10), (1280, 60)))],
)
def test_the_presets_transformer_blocks(model: str, blocks: tuple[tuple[int, int], ...]) -> None:
    """SD 1.5: 16 blocks; SDXL: 70 blocks, the 140 attention layers of its UNet."""
    preset = REGISTRY.resolve(model)
    assert preset is not None
    assert preset.unet is not None
    assert attention_blocks(preset.unet) == blocks


def test_work_grows_with_the_image_area() -> None:
    """Convolutions and projections scale with the pixels, self-attention with their
    square: going from 512 to 1024 px is between 4x and 16x the work."""
    preset = REGISTRY.resolve("sd-1.5")
    assert preset is not None
    assert preset.unet is not None
    ratio = unet_forward_flops(preset.unet, 1024) / unet_forward_flops(preset.unet, 512)
    assert 4.0 < ratio < 16.0
