"""A latent-diffusion UNet's shape and the work of one training image, from its config.

Stable Diffusion's UNet (diffusers ``UNet2DConditionModel``) is described by a handful of
``unet/config.json`` fields; :class:`UNetConfig` holds them (and the text encoders' and
VAE's, which a training step runs forward only). From them, by the layer structure the
diffusers code builds:

- :func:`attention_blocks`: the transformer blocks per channel width, where LoRA
  adapters go (diffusers' LoRA scripts target each block's attention projections);
- :func:`unet_forward_flops`: one UNet forward at an image size (convolutions of every
  ResNet block, down- and upsampler, and every transformer block's projections,
  attention and GEGLU feed-forward), 2 FLOPs per multiply-accumulate;
- :func:`frozen_forward_flops`: what a training step runs without gradients on each
  image: the VAE encoder at full resolution (diffusers' ``train_text_to_image*.py``
  encode every batch: ``vae.encode(batch["pixel_values"])``) and the text encoders over
  the 77-token prompt.

Norms, activations, the time embedding and softmax are left out (well under 1 % of the
matmul and convolution work).
"""

from __future__ import annotations

import msgspec

TEXT_TOKENS = 77
"""CLIP's prompt length (``tokenizer.model_max_length``), the cross-attention's keys."""


class UNetConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The ``unet/config.json`` fields that set a diffusion UNet's shape, plus the
    frozen text encoders' parameters and the VAE encoder's shape."""

    block_out_channels: tuple[int, ...]
    """Channels per resolution level (``block_out_channels``)."""
    cross_attention: tuple[bool, ...]
    """Per down level: a ``CrossAttnDownBlock2D`` (true) or a plain ``DownBlock2D``; the
    up levels mirror them reversed (the configs' ``up_block_types``)."""
    transformer_layers: tuple[int, ...]
    """Transformer layers per attention module per level (``transformer_layers_per_block``;
    the mid block uses the last)."""
    cross_attention_dim: int
    """Width of the text embeddings the cross-attention keys and values project from."""
    layers_per_block: int = 2
    in_channels: int = 4
    latent_factor: int = 8
    """Pixels per latent pixel along a side (the VAE's 3 downsamplings)."""
    text_encoder_params: float = 0.0
    """Parameters of the text encoder(s), run forward over the prompt each step."""
    vae_block_out_channels: tuple[int, ...] = (128, 256, 512, 512)
    vae_layers_per_block: int = 2


def attention_blocks(u: UNetConfig) -> tuple[tuple[int, int], ...]:
    """(channels, transformer blocks of that width) over the down, mid and up blocks: a
    cross-attention level has ``layers_per_block`` attention modules going down and one
    more going up, each of ``transformer_layers`` blocks; the mid block has one."""
    counts: dict[int, int] = {}
    for width, cross, layers in zip(
        u.block_out_channels, u.cross_attention, u.transformer_layers, strict=True
    ):
        if cross:
            counts[width] = counts.get(width, 0) + (2 * u.layers_per_block + 1) * layers
    mid = u.block_out_channels[-1]
    counts[mid] = counts.get(mid, 0) + u.transformer_layers[-1]
    return tuple(sorted(counts.items()))


def _conv(cin: int, cout: int, pixels: float, kernel: int = 3) -> float:
    return 2.0 * kernel * kernel * cin * cout * pixels


def _resnet(cin: int, cout: int, pixels: float) -> float:
    """ResnetBlock2D: two 3x3 convolutions and a 1x1 shortcut when the width changes."""
    shortcut = _conv(cin, cout, pixels, 1) if cin != cout else 0.0
    return _conv(cin, cout, pixels) + _conv(cout, cout, pixels) + shortcut


def _transformer(d: int, tokens: float, layers: int, context: int) -> float:
    """Transformer2DModel: proj_in and proj_out, then per layer a self-attention (four d x
    d projections, scores and weighted sum over ``tokens``), a cross-attention (q and out
    d x d, k and v from ``context`` over the prompt) and the GEGLU feed-forward (d -> 8d,
    4d -> d)."""
    n, t = tokens, TEXT_TOKENS
    per_layer = (
        8 * n * d * d + 4 * n * n * d  # self-attention
        + 4 * n * d * d + 4 * t * context * d + 4 * n * t * d  # cross-attention
        + 24 * n * d * d  # GEGLU feed-forward
    )  # fmt: skip
    return 4 * n * d * d + layers * per_layer


def unet_forward_flops(u: UNetConfig, image_size: int) -> float:
    """FLOPs of one UNet forward on one ``image_size`` x ``image_size`` image (its latent
    is ``image_size / latent_factor`` on a side), following diffusers'
    ``UNet2DConditionModel``: conv_in; per down level ``layers_per_block`` ResNet blocks
    (each followed by a transformer on a cross-attention level) and a stride-2
    downsampler but on the last; the mid block's two ResNets around a transformer; per up
    level one more ResNet whose input concatenates the skip connection, and an upsampler
    (nearest, then a 3x3 convolution at the doubled size) but on the last; conv_out."""
    side = image_size / u.latent_factor
    pixels = side * side
    boc, levels = u.block_out_channels, len(u.block_out_channels)
    flops = _conv(u.in_channels, boc[0], pixels)
    skips = [boc[0]]
    cin = boc[0]
    for i, (cout, cross, layers) in enumerate(
        zip(boc, u.cross_attention, u.transformer_layers, strict=True)
    ):
        for _ in range(u.layers_per_block):
            flops += _resnet(cin, cout, pixels)
            if cross:
                flops += _transformer(cout, pixels, layers, u.cross_attention_dim)
            cin = cout
            skips.append(cout)
        if i < levels - 1:
            pixels /= 4
            flops += _conv(cout, cout, pixels)
            skips.append(cout)
    mid = boc[-1]
    flops += 2 * _resnet(mid, mid, pixels)
    flops += _transformer(mid, pixels, u.transformer_layers[-1], u.cross_attention_dim)
    cin = mid
    for i, (cout, cross, layers) in enumerate(
        zip(reversed(boc), reversed(u.cross_attention), reversed(u.transformer_layers), strict=True)
    ):
        for _ in range(u.layers_per_block + 1):
            flops += _resnet(cin + skips.pop(), cout, pixels)
            if cross:
                flops += _transformer(cout, pixels, layers, u.cross_attention_dim)
            cin = cout
        if i < levels - 1:
            pixels *= 4
            flops += _conv(cout, cout, pixels)
    return flops + _conv(boc[0], u.in_channels, pixels)


def vae_encoder_flops(u: UNetConfig, image_size: int) -> float:
    """FLOPs of the AutoencoderKL encoder on one RGB image: conv_in, per level
    ``vae_layers_per_block`` ResNet blocks and a stride-2 downsampler but on the last,
    the mid block's two ResNets around one single-head attention over the latent
    pixels, conv_out to the mean and log-variance (2 x latent channels)."""
    pixels = float(image_size * image_size)
    boc = u.vae_block_out_channels
    flops = _conv(3, boc[0], pixels)
    cin = boc[0]
    for i, cout in enumerate(boc):
        for _ in range(u.vae_layers_per_block):
            flops += _resnet(cin, cout, pixels)
            cin = cout
        if i < len(boc) - 1:
            pixels /= 4
            flops += _conv(cout, cout, pixels)
    d = boc[-1]
    flops += 2 * _resnet(d, d, pixels) + 8 * pixels * d * d + 4 * pixels * pixels * d
    return flops + _conv(d, 2 * u.in_channels, pixels)


def frozen_forward_flops(u: UNetConfig, image_size: int) -> float:
    """What a training step runs forward only on each image: the VAE encoder and the
    text encoder(s) over the prompt (2 FLOPs per parameter per token)."""
    return vae_encoder_flops(u, image_size) + 2.0 * u.text_encoder_params * TEXT_TOKENS
