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
  the 77-token prompt;
- :func:`unet_working_set` and :func:`vae_decode_working_set`: the largest set of
  tensors alive at once in one inference forward (serving keeps nothing for a backward),
  by the order diffusers' modules allocate and free them (:func:`serving_working_set`).

Norms, activations, the time embedding and softmax are left out (well under 1 % of the
matmul and convolution work).
"""

from __future__ import annotations

from dataclasses import dataclass

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
    attention_heads: tuple[int, ...] = ()
    """Attention heads per level: the config's ``attention_head_dim``, which diffusers'
    ``UNet2DConditionModel`` takes as the head count (``num_attention_heads =
    num_attention_heads or attention_head_dim``): 8 on every SD 1.5 level, [5, 10, 20]
    for SDXL (64-wide heads)."""
    vae_params: int = 0
    """Parameters of the AutoencoderKL (encoder and decoder)."""
    vae_force_upcast: bool = False
    """The VAE's ``vae/config.json`` ``force_upcast``: an SDXL pipeline in fp16 casts the
    VAE to fp32 before decoding (it overflows in fp16), keeping only ``post_quant_conv``,
    ``decoder.conv_in`` and ``decoder.mid_block`` in fp16 when SDPA is in use
    (``StableDiffusionXLPipeline.__call__`` and ``upcast_vae``, diffusers
    src/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py
    @0049e443). Stable Diffusion 1.5's pipeline decodes in the pipeline's own dtype."""


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


def vae_decoder_flops(u: UNetConfig, image_size: int) -> float:
    """FLOPs of the AutoencoderKL decoder (diffusers ``Decoder``) on one latent:
    ``post_quant_conv`` (1x1) and conv_in to the widest channels, the mid block's two
    ResNets around one single-head attention over the latent pixels, then per level,
    widest first, ``vae_layers_per_block + 1`` ResNets and an ``Upsample2D`` (nearest,
    then a 3x3 convolution at the doubled size) but on the last, and conv_out to RGB. 2.5
    TFLOPs at 512 px (NVIDIA's count for SD 1.5's decoder, 2.54, in its "Stable Diffusion
    推理加速技巧解析" slides,
    https://www.sgpjbg.com/bgdown/155314.html), 10.5 at 1024."""
    side = image_size / u.latent_factor
    pixels = side * side
    boc = tuple(reversed(u.vae_block_out_channels))
    d = boc[0]
    flops = _conv(u.in_channels, u.in_channels, pixels, 1) + _conv(u.in_channels, d, pixels)
    flops += 2 * _resnet(d, d, pixels) + 8 * pixels * d * d + 4 * pixels * pixels * d
    cin = d
    for i, cout in enumerate(boc):
        for _ in range(u.vae_layers_per_block + 1):
            flops += _resnet(cin, cout, pixels)
            cin = cout
        if i < len(boc) - 1:
            pixels *= 4
            flops += _conv(cout, cout, pixels)
    return flops + _conv(cin, 3, pixels)


def frozen_forward_flops(u: UNetConfig, image_size: int) -> float:
    """What a training step runs forward only on each image: the VAE encoder and the
    text encoder(s) over the prompt (2 FLOPs per parameter per token)."""
    return vae_encoder_flops(u, image_size) + 2.0 * u.text_encoder_params * TEXT_TOKENS


# --- serving memory: the largest live working set of one forward ----------------------
#
# Sizes below are in "planes": one channel over the level's pixels, per sample. The live
# tensors of each module follow diffusers' code (src/diffusers/models/resnet.py,
# attention.py, attention_processor.py, unets/unet_2d_blocks.py, autoencoders/vae.py,
# https://github.com/huggingface/diffusers @00194089): eager PyTorch frees a tensor when
# its last Python reference goes, so a ``hidden_states = f(hidden_states)`` chain holds
# the input and the output of the running op, and a block's input stays referenced by
# its caller until the block returns.


def resnet_live_planes(cin: int, cout: int) -> int:
    """Most channel planes alive at once in diffusers' ``ResnetBlock2D.forward`` (no
    in-place ops): GroupNorm then SiLU over the input (input, normed, activated: 3 cin);
    conv1 (input, activated, output: 2 cin + cout); at the end the input, the 1x1
    shortcut's output when the width changes, the second conv's output, their sum and
    the sum divided by ``output_scale_factor`` (cin + 4 cout, or 4 cout without a
    shortcut)."""
    end = cin + 4 * cout if cin != cout else 4 * cout
    return max(3 * cin, 2 * cin + cout, end)


def upsample_live_planes(channels: int) -> float:
    """``Upsample2D`` with its convolution, in planes at the doubled size: the input (a
    quarter of the pixels), the nearest-neighbour interpolation and the 3x3 conv's
    output."""
    return channels * (0.25 + 1 + 1)


def transformer_live_planes(d: int, heads: int, tokens: float, sdpa: bool) -> float:
    """Planes alive in one ``BasicTransformerBlock`` inside ``Transformer2DModel``: the
    module's residual input, the block's hidden states and its normed copy are held
    throughout (3 d). The GEGLU feed-forward then holds its projection (8 d, chunked into
    two views), GELU of the gate (4 d) and the product (4 d); self-attention holds q, k,
    v and the heads' copies (6 d) and, without SDPA (diffusers' ``AttnProcessor``:
    ``baddbmm`` into an empty tensor, then softmax), two ``heads x tokens x tokens``
    score tensors. With SDPA (``AttnProcessor2_0``, PyTorch >= 2.0: flash or
    memory-efficient kernels) no score matrix is stored."""
    ff = 3 * d + 16 * d
    attention = 3 * d + 6 * d + (0.0 if sdpa else 2.0 * heads * tokens)
    return max(ff, attention)


def unet_working_set(u: UNetConfig, image_size: int, *, sdpa: bool = True) -> float:
    """Elements alive at once per sample of the UNet's batch in one denoising forward:
    the down path's skip connections (every block's output; ``UNet2DConditionModel``
    holds each up block's share until that block returns, counted here as all held
    throughout, an upper bound) plus the largest module's live tensors, over the same
    walk as :func:`unet_forward_flops` (an up path ResNet's input is the concatenation of
    the previous output and its skip, which replaces the previous output)."""
    side = image_size / u.latent_factor
    pixels = side * side
    boc, levels = u.block_out_channels, len(u.block_out_channels)
    heads = u.attention_heads or tuple(max(c // 64, 1) for c in boc)
    peak = 0.0
    skips: list[tuple[int, float]] = [(boc[0], pixels)]
    cin = boc[0]
    for i, (cout, cross) in enumerate(zip(boc, u.cross_attention, strict=True)):
        for _ in range(u.layers_per_block):
            peak = max(peak, resnet_live_planes(cin, cout) * pixels)
            if cross:
                peak = max(peak, transformer_live_planes(cout, heads[i], pixels, sdpa) * pixels)
            cin = cout
            skips.append((cout, pixels))
        if i < levels - 1:
            skips.append((cout, pixels / 4))
            pixels /= 4
    held = sum(c * p for c, p in skips)
    mid = boc[-1]
    peak = max(peak, resnet_live_planes(mid, mid) * pixels)
    peak = max(peak, transformer_live_planes(mid, heads[-1], pixels, sdpa) * pixels)
    cin = mid
    for i, (cout, cross) in enumerate(zip(reversed(boc), reversed(u.cross_attention), strict=True)):
        level = levels - 1 - i
        for _ in range(u.layers_per_block + 1):
            skip, _ = skips.pop()  # torch.cat([hidden_states, skip]) is the ResNet's input
            peak = max(peak, resnet_live_planes(cin + skip, cout) * pixels)
            if cross:
                peak = max(peak, transformer_live_planes(cout, heads[level], pixels, sdpa) * pixels)
            cin = cout
        if i < levels - 1:
            pixels *= 4
            peak = max(peak, upsample_live_planes(cout) * pixels)
    return held + peak


def vae_decode_working_set(u: UNetConfig, image_size: int) -> float:
    """Elements alive at once per image in the AutoencoderKL decoder (diffusers
    ``Decoder``): conv_in and the mid block (two ResNets around one single-head
    attention, its ``tokens x tokens`` scores and softmax counted as if materialized —
    PyTorch's fused kernels may not take a 512-wide head), then per level, widest
    first, ``vae_layers_per_block + 1`` ResNets and an ``Upsample2D`` but on the last,
    then GroupNorm and SiLU before conv_out. The last level, at full resolution, sets the
    peak: for SD 1.5 and SDXL its first ResNet (256 -> 128 channels), 768 planes."""
    side = image_size / u.latent_factor
    pixels = side * side
    boc = tuple(reversed(u.vae_block_out_channels))
    cin = boc[0]
    peak = max(resnet_live_planes(cin, cin) * pixels, 2.0 * pixels * pixels + 4 * cin * pixels)
    for i, cout in enumerate(boc):
        for _ in range(u.vae_layers_per_block + 1):
            peak = max(peak, resnet_live_planes(cin, cout) * pixels)
            cin = cout
        if i < len(boc) - 1:
            pixels *= 4
            peak = max(peak, upsample_live_planes(cout) * pixels)
    return max(peak, 3 * cin * pixels)


@dataclass(frozen=True, slots=True)
class ServingWorkingSet:
    """Bytes of one pipeline call's largest live working set over the weights."""

    unet: float
    """The UNet forward at a batch of 2 x images (classifier-free guidance)."""
    vae: float
    """The VAE decode of every image at once (plus the VAE's weights upcast to fp32)."""
    decode_bytes: int
    """Bytes per value in the decoder's up-blocks: 4 when the VAE is upcast."""

    @property
    def peak(self) -> float:
        return max(self.unet, self.vae)


def serving_working_set(
    u: UNetConfig, image_size: int, images: int, precision: str, *, sdpa: bool = True
) -> ServingWorkingSet:
    """The text-to-image call of ``images`` images: the UNet runs once per denoising step
    on the latents twice over (diffusers' pipelines concatenate the unconditional and the
    prompted batch when ``guidance_scale > 1``: ``torch.cat([latents] * 2)``; the
    defaults are 7.5 for SD 1.5 and 5.0 for SDXL), and the VAE decodes the whole batch at
    once (``enable_vae_slicing`` decodes one image at a time). The phases run one after
    the other, so the peak is the larger. Activations are in the serving dtype (4 bytes
    in fp32, else 2: quantized weights still compute in 16-bit); an fp16 pipeline of a
    ``force_upcast`` VAE decodes in fp32 and holds the VAE's weights in fp32 meanwhile."""
    act = 4 if precision == "fp32" else 2
    upcast = u.vae_force_upcast and precision not in ("bf16", "fp32")
    decode = 4 if upcast else act
    vae_weights = 2.0 * u.vae_params if upcast else 0.0
    return ServingWorkingSet(
        unet=unet_working_set(u, image_size, sdpa=sdpa) * 2 * images * act,
        vae=vae_decode_working_set(u, image_size) * images * decode + vae_weights,
        decode_bytes=decode,
    )
