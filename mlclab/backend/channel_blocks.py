"""The blocked channel layout's vocabulary, shared by the layout pass (``conv_layout``), the
grouped and depthwise convolutions (``grouped_conv``) and the CPU schedules: how wide a
channel block is, and the block annotation that names a blocked operator's reduction."""
from __future__ import annotations

# The block annotation naming the blocked-layout operator a reduction block computes.  The
# schedules recognise the reductions by it rather than by block name, which FuseTIR keeps
# with the block but which any other operator could take.
BLOCKED_OP = "mlclab.blocked_op"
CONV2D, MAX_POOL2D = "conv2d_NCHWc", "max_pool2d_NCHWc"
AVG_POOL2D = "avg_pool2d_NCHWc"
# The annotation of a channel join's block inlined into the blocked convolution reading it
# (``join_conv``): the input channel blocks at which one part ends and the next begins,
# where the schedule splits the convolution's loop over them.
JOIN_PARTS = "mlclab.join_parts"
DEPTHWISE_CONV2D = "depthwise_conv2d_NCHWc"
# Not a blocked layout: a 1x1 convolution left in NCHW, lowered as a matmul of the weights
# by the pixels (``pointwise_conv``), which its own schedule recognises by the same mark.
POINTWISE_CONV2D = "conv2d_1x1_NCHW"
# The annotation of a convolution's padding made to be read through
# (``grouped_conv.padded_at_border``): its schedule inlines it instead of making the copy.
READ_THROUGH = "mlclab.read_through"
# The smallest channel block worth a vector: fewer output channels per block than this
# (fewer than 4 channels, or a prime count wider than a vector such as 17) leaves the
# convolution to the general schedule; wider vectors ask more (``min_block``).  Input
# channels may use any block (an RGB image is ``NCHW3c``).
MIN_BLOCK = 4


def min_block(lanes: int) -> int:
    """The narrowest output channel block a dense or stride-1 depthwise convolution is
    blocked with on ``lanes``-wide vectors: ``MIN_BLOCK``, or half a vector where that is
    wider.  A block of 4 fills a quarter of AVX-512's vector, so no tile passes 25 % of
    its peak: ShuffleNetV2's 116 channels (4 x 29) ran its 1x1 convolutions blocked at 22 %
    (86 us each at 14 x 14) and run in NCHW, where the register tile vectorizes the pixels,
    at 34-40 % (50 us).  On AVX2 (8 lanes) a block of 4 is half a vector and stays."""
    return max(MIN_BLOCK, lanes // 2)


def channel_block(channels: int, lanes: int) -> int:
    """The channel block for ``channels``: the largest divisor no wider than one vector
    (64 -> 16 on AVX-512, 24 -> 12, 3 -> 3).  The same for a value's producer and its
    consumers, so a blocked value never needs re-blocking between two convolutions."""
    return next(b for b in range(min(lanes, channels), 0, -1) if channels % b == 0)


# The most output channels padding may add, as a share of the channels: SqueezeNet's 1000
# classes in blocks of 10 (a 16-lane vector and a 2-lane one per FMA on AVX-512) padded to
# 1008 in blocks of 16 ran 0.60x (one core, the 512 -> 1000 1x1 at 13 x 13).
PAD_SHARE = 1 / 16
# The narrowest channel block, as a share of a vector, whose convolution is padded to whole
# vectors: half.  ShuffleNetV2's 232 channels (8 x 29, blocks of 8 on AVX-512) padded to
# 240 in blocks of 16: its 1x1 convolutions at 7 x 7 49 -> 25 us each, the model 0.91x
# (one core, in one process, bit-identical).  On AVX2 a block of 4 is half a vector too
# (not measured there).
PAD_FROM = 1 / 2


def padded_channels(channels: int, block: int, lanes: int):
    """The output channels a convolution whose channels come in blocks of ``block`` is
    computed with when that block is a vector cut in pieces (at least ``PAD_FROM`` of one,
    narrower than one: 8, 10 or 12 of 16) and padding to whole vectors adds at most
    ``PAD_SHARE`` of them; else None (``conv_layout`` pads the weight with zeros)."""
    if not lanes * PAD_FROM <= block < lanes:
        return None
    padded = -(-channels // lanes) * lanes
    return padded if padded - channels <= channels * PAD_SHARE else None


# Whether a concatenation with a blocked part blocks its NCHW parts too (``conv_layout``).
BLOCK_NCHW_PARTS = True


def nchw_part_joins(part, block: int) -> bool:
    """Whether an NCHW ``part`` (a Relax value) joins a concatenation blocked by ``block``
    (``BLOCK_NCHW_PARTS``): a static float32 variable whose channels ``block`` divides.
    DenseNet's dense blocks after the first start from an average pool's NCHW output: each
    layer's join (and its batch norm and ReLU) stayed in NCHW, its new channels and the
    whole map transformed each layer.  Blocked, the pool's output is transformed once."""
    from tvm import relax

    from .relax_exprs import dtype_of, static_shape

    shape = static_shape(part)
    return BLOCK_NCHW_PARTS and isinstance(part, relax.Var) and shape is not None \
        and len(shape) == 4 and shape[1] % block == 0 and dtype_of(part) == "float32"


def is_blocked(layout) -> bool:
    """Whether ``layout`` is a channel-blocked one such as ``NCHW16c``."""
    layout = str(layout)
    return layout.startswith("NCHW") and layout.endswith("c") and len(layout) > 4


def index_maps(block: int):
    """NCHW -> NCHW{block}c and back (``layout_transform``'s index maps)."""
    def forward(n, c, h, w):
        return n, c // block, h, w, c % block

    def back(n, cc, h, w, c):
        return n, cc * block + c, h, w

    return forward, back
