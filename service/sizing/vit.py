"""Activations of a served torchvision Vision Transformer, counted from its forward
(https://github.com/pytorch/vision/blob/07a929e8b851242b1c75c9016ee06a8e502961d8/
torchvision/models/vision_transformer.py).

A forward without gradients keeps a layer's intermediates only while the next ones are
computed. Its peak is inside an ``EncoderBlock``'s MLP, while GELU runs: the first linear's
output and GELU's (``mlp_dim`` wide each), the block's input, the attention sum ``x`` and
``ln_2``'s output (the block's locals hold all three), and two ``hidden_dim`` tensors the
callers hold through the whole encoder (``VisionTransformer.forward``'s token sequence and
``Encoder.forward``'s sum with the position embedding), with the input image. The
attention half peaks lower: ``nn.MultiheadAttention`` without weights calls
``scaled_dot_product_attention``, which keeps no scores matrix, and its packed input
projection and the copy that splits it are 6 ``hidden_dim`` wide."""

from __future__ import annotations


def forward_peak(tokens: int, hidden: int, mlp: int, image: int) -> int:
    """Values alive at once per image (16-bit each in a 16-bit model)."""
    held = 2 * hidden  # the token sequence and its sum with the position embedding
    block = 3 * hidden + 2 * mlp  # block input, x, ln_2's output; linear-1 and GELU outputs
    return tokens * (held + block) + 3 * image * image
