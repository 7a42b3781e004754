"""Grouped and depthwise convolutions in the blocked channel layout (NCHW[x]c).

A depthwise convolution (``groups`` = input = output channels: MobileNet, EfficientNet,
ConvNeXt) sums only over its kernel's taps, one channel at a time; in NCHW no loop of it is
both contiguous and free of a reduction, so it ran one float at a time (0.1-4 GFLOP/s).  In
``NCHW[x]c`` the channel block is the innermost axis of its input, its output and its weight
(``OIHW1i[x]o``): each kernel tap is one vector multiply-add over the block, and a row of
output pixels stays in registers (``schedules.depthwise``).  The taps are summed in the
order of the NCHW loop nest, ``ky`` then ``kx``, so results change only by FMA contraction.

A grouped convolution (RegNet, ResNeXt) is a dense blocked convolution within each group:
with input and output blocks that divide the group's channels, output block ``oc`` reads
the input blocks of its own group only, ``(oc // out_blocks) * in_blocks + ic_chunk``: the
dense loop nest with that offset (``conv_layout._conv2d_nchwc`` with ``groups``), so the
dense convolution's register tile (``schedules.blocked``) takes it unchanged.  When the channel
block its neighbours use does not divide the group (RegNetY's groups of 8 in 48 channels,
blocked by 16), the convolution uses the widest block that does; the layout pass re-blocks
its input (one copy) and the convolution after it reads the narrower block directly.

``blocks_of_grouped`` decides; ``legalize_depthwise`` makes the depthwise loop nest.
"""
from __future__ import annotations

from dataclasses import dataclass

from .channel_blocks import (BLOCKED_OP, DEPTHWISE_CONV2D, MIN_BLOCK, READ_THROUGH,
                             channel_block, min_block)

# The block's name (what the TIR view shows); the schedules read the annotation instead.
DEPTHWISE_NAME = "depthwise_conv2d_NCHWc"


@dataclass(frozen=True)
class ConvBlocks:
    """The blocks of one convolution in the blocked layout: its input's channel block, the
    input-channel block of its weight (1 for a depthwise weight ``(C, 1, kh, kw)``) and its
    output's channel block."""

    data: int
    weight_in: int
    out: int

    def layouts(self):
        """``(data_layout, kernel_layout, out_layout)`` for ``R.nn.conv2d``."""
        return (f"NCHW{self.data}c", f"OIHW{self.weight_in}i{self.out}o",
                f"NCHW{self.out}c")


# The narrowest channel block a strided depthwise convolution takes.  In NCHW no general
# schedule handles one (the register tile needs its columns one apart: stride 2 moves the
# input by two), so it ran one float at a time: ShuffleNetV2's 58-channel 3x3/2 (block 2,
# 58 = 2 x 29) took 629 us, 14 % of the model on one core; in 2-channel blocks 44 us plus
# two layout transforms of ~10 us.  A stride-1 one stays in NCHW below ``min_block``: the
# register tile runs it along the width (ShuffleNetV2's 58-channel 3x3/1: 14 us in NCHW,
# 31 us in 2-channel blocks).
STRIDED_DEPTHWISE_MIN_BLOCK = 2


def blocks_of_grouped(in_channels: int, weight_shape, groups: int, lanes: int,
                      incoming: int | None = None, strided: bool = False):
    """The ``ConvBlocks`` of a grouped convolution (``groups > 1``) of ``in_channels`` with
    an OIHW weight of ``weight_shape``, or None when it stays in NCHW.  ``incoming`` is the
    block its input already has, if it is blocked; ``strided``: whether a stride is above 1.

    Depthwise (one input and one output channel per group) keeps the neighbours' block, so
    nothing is re-blocked; a block narrower than ``min_block`` only when strided
    (``STRIDED_DEPTHWISE_MIN_BLOCK``).  A channel multiplier (one input, several outputs
    per group) stays in NCHW.  Otherwise each block must divide the group's channels."""
    out_channels, per_group_in = int(weight_shape[0]), int(weight_shape[1])
    per_group_out = out_channels // groups
    if per_group_in * groups != in_channels or per_group_out * groups != out_channels:
        return None
    if per_group_in == 1 and per_group_out == 1:
        block = channel_block(out_channels, lanes)
        least = STRIDED_DEPTHWISE_MIN_BLOCK if strided else min_block(lanes)
        return ConvBlocks(block, 1, block) if block >= least else None
    if per_group_in == 1:
        return None
    data = _dividing_block(in_channels, per_group_in, lanes, incoming)
    out = _dividing_block(out_channels, per_group_out, lanes)
    if out < MIN_BLOCK:
        return None
    return ConvBlocks(data, data, out)


def _dividing_block(channels: int, per_group: int, lanes: int, incoming=None) -> int:
    """The block for ``channels`` that also divides a group of ``per_group`` channels: the
    block the value already has, else the neighbours' (``channel_block``), else the widest
    that divides the group."""
    for block in (incoming, channel_block(channels, lanes)):
        if block and per_group % block == 0:
            return block
    return channel_block(per_group, lanes)


def blocked_weight_value(value, blocks: ConvBlocks):
    """A constant OIHW weight (numpy) re-laid out as ``OIHW{weight_in}i{out}o``."""
    import numpy as np

    o, i, kh, kw = value.shape
    ib, ob = blocks.weight_in, blocks.out
    packed = value.reshape(o // ob, ob, i // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1)
    return np.ascontiguousarray(packed)


# --------------------------------------------------------------------------- lowering
def is_depthwise(call) -> bool:
    """Whether a blocked ``R.nn.conv2d`` is depthwise: one input and one output channel per
    group, its weight ``(C / x, 1, kh, kw, 1, x)``."""
    data = [int(d) for d in call.args[0].ty.shape]
    kernel = [int(d) for d in call.args[1].ty.shape]
    channels = data[1] * data[4]
    return (int(call.attrs.groups) == channels and kernel[1] == 1 and kernel[4] == 1
            and kernel[0] * kernel[5] == channels)


def legalize_depthwise(bb, call, strides, padding):
    """The loop nest of a blocked depthwise ``call`` (``is_depthwise``)."""
    return bb.call_te(_depthwise_nchwc, call.args[0], call.args[1], strides=strides,
                      padding=padding, primfunc_name_hint=DEPTHWISE_NAME)


def _padded(data, padding, name):
    from tvm import topi

    top, left, bottom, right = padding
    if not any(padding):
        return data
    return topi.nn.pad(data, [0, 0, top, left, 0], [0, 0, bottom, right, 0], name=name)


def padded_at_border(data, padding, name):
    """``data`` zero-padded as ``topi.nn.pad`` pads it (the input, or +0.0 outside it).  With
    ``schedules.blocked.BORDER_IN_KERNEL``, and a column padding of at most 1 a side (a 3x3
    convolution's), its column tests marked ``likely`` and the block ``READ_THROUGH``: read
    through by the convolution, TVM's ``LoopPartition`` splits the column loops at the
    image's edges, so the interior tiles read their input with no test.  (A wider padding
    splits the unrolled pixel loop at a bound that depends on the kernel column, which
    ``UnrollLoop`` refuses: ResNet-50's 7x7 stem.)  The row tests stay plain: partitioned
    too, they tripled the code LLVM compiles for a gain within the noise."""
    from tvm import te, tirx

    from .schedules.blocked import BORDER_IN_KERNEL

    top, left, bottom, right = padding
    if not any(padding) or not BORDER_IN_KERNEL or max(left, right) > 1:
        return _padded(data, padding, name)
    n, c, h, w, b = data.shape

    def value(i, j, y, x, k):
        inside = tirx.all(y >= top, y < h + top, tirx.likely(x >= left),
                          tirx.likely(x < w + left))
        return tirx.if_then_else(inside, data[i, j, y - top, x - left, k],
                                 tirx.const(0.0, data.dtype))

    return te.compute((n, c, h + top + bottom, w + left + right, b), value, name=name,
                      attrs={READ_THROUGH: 1})


def _out_size(size, before, after, kernel, stride):
    return (size + before + after - kernel) // stride + 1


def _depthwise_nchwc(data, kernel, strides, padding):
    """``out[n, c, y, x, b] = sum(pad(data)[n, c, y*sh+ky, x*sw+kx, b] *
    kernel[c, 0, ky, kx, 0, b])`` over ``ky, kx``, the NCHW convolution's order."""
    from tvm import te

    n, cc, ih, iw, cb = data.shape
    _, _, kh, kw, _, _ = kernel.shape
    top, left, bottom, right = padding
    sh, sw = strides
    data = _padded(data, padding, f"{DEPTHWISE_NAME}_pad")
    oh, ow = _out_size(ih, top, bottom, kh, sh), _out_size(iw, left, right, kw, sw)
    ry = te.reduce_axis((0, kh), name="ky")
    rx = te.reduce_axis((0, kw), name="kx")
    return te.compute(
        (n, cc, oh, ow, cb),
        lambda b, c, y, x, i: te.sum(
            data[b, c, y * sh + ry, x * sw + rx, i] * kernel[c, 0, ry, rx, 0, i],
            axis=[ry, rx]),
        name=DEPTHWISE_NAME, attrs={BLOCKED_OP: DEPTHWISE_CONV2D})
