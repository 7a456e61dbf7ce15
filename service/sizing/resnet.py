"""Activations of torchvision's ResNet-50 (the v1.5 Bottleneck, stride in the 3x3
convolution) per image, counted from its layer shapes rather than read off a summary.

Training keeps what autograd saves for the backward pass: each convolution's input, each
batch norm's input, the ReLUs' outputs (in place, so the batch norm's output storage),
and the stem's max-pool indices (int64, four 16-bit values each); the head's few thousand
values are left out. torchsummary's "Forward/backward pass size" (286.56 MB for this
model) counts every module's output instead, the in-place ReLUs and each Bottleneck's
output again, about 1.7x as much.

Serving keeps none of it: a forward without gradients frees each output once the layers
reading it ran, and its peak is a few feature maps at once (:func:`forward_peak`).

Source: https://github.com/pytorch/vision/blob/054e54c573ba46e5b9c63f1eea3ad4d103afbea2/
torchvision/models/resnet.py (``Bottleneck.forward``, ``ResNet._make_layer``, ``resnet50``:
``[3, 4, 6, 3]`` blocks, ``nn.ReLU(inplace=True)``, the downsample run after ``bn3``).
"""

from __future__ import annotations

STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
"""(bottleneck width, blocks, stride of the first block) of layer1..layer4."""
EXPANSION = 4
"""A Bottleneck's output has 4x its width in channels."""
STEM_WIDTH = 64
INDEX_VALUES = 4
"""An int64 max-pool index takes the room of four 16-bit values."""


def saved_for_backward(image: int = 224) -> int:
    """16-bit values autograd keeps per ``image`` px image through the backward pass."""
    half, side = image // 2, image // 4  # after the stride-2 convolution, after the max pool
    # the input, conv1's output and bn1's (ReLU in place), the max pool's output and indices
    total = 3 * image**2 + 2 * STEM_WIDTH * half**2 + (1 + INDEX_VALUES) * STEM_WIDTH * side**2
    for width, blocks, stride in STAGES:
        for block in range(blocks):
            out = side // (stride if block == 0 else 1)
            # conv1 and bn1 outputs at the input's side, conv2/bn2 and conv3/bn3 at the
            # output's (the block's output is bn3's, added to and ReLU'd in place)
            total += 2 * width * side**2 + 2 * width * out**2 + 2 * EXPANSION * width * out**2
            if block == 0:  # the downsample convolution's output (its batch norm's input)
                total += EXPANSION * width * out**2
            side = out
    return total


def forward_peak(image: int = 224) -> int:
    """16-bit values alive at once at the peak of a forward without gradients, per image:
    layer1's first Bottleneck running its downsample (after ``bn3``), when the input, the
    block's input, the main branch's output and the downsample convolution's and batch
    norm's outputs are alive."""
    side = image // 4
    width = STAGES[0][0]
    return 3 * image**2 + STEM_WIDTH * side**2 + 3 * EXPANSION * width * side**2
