"""1x1 convolutions left in NCHW, lowered as the matmul they are.

A convolution whose channels have no block of at least half a vector stays in NCHW
(``channel_blocks.min_block``: ShuffleNetV2's 58 = 2 x 29 and 116 = 4 x 29 channels).
TVM's lowering of a 1x1 one still copies its whole input into a ``pad_temp`` of the same
size (there is no padding to add) and sums over ``ic, ky, kx`` with two loops of one; the
general register tile then took tiles of two output channels by one row of pixels.  For a
1x1 convolution with unit stride and no padding, ``out[n, o, y, x] = sum_i data[n, i, y, x]
* weight[o, i, 0, 0]`` is a matmul of the weights by the pixels: lowered here as that one
reduction over ``i``, in the same order (so the same sums), with no copy, and annotated so
that ``schedules.pointwise`` tiles output channels by whole vectors of pixels.
"""
from __future__ import annotations

from .channel_blocks import BLOCKED_OP, POINTWISE_CONV2D
from .relax_exprs import dtype_of, static_shape

# The block's name (what the TIR view shows); the schedule reads the annotation instead.
BLOCK_NAME = "conv2d_1x1_nchw"


def is_pointwise_nchw(call) -> bool:
    """Whether ``call`` (a ``relax.nn.conv2d``) is a float32 NCHW/OIHW 1x1 convolution of
    static shape with unit stride, no padding or dilation and no groups."""
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout or a.data_layout)) != \
            ("NCHW", "OIHW", "NCHW") or int(a.groups) != 1:
        return False
    if any(int(v) != 1 for v in (*a.strides, *a.dilation)) or any(int(p) for p in a.padding):
        return False
    if a.out_dtype is not None and str(a.out_dtype) not in ("", "float32"):
        return False
    x, w = call.args
    xs, ws = static_shape(x), static_shape(w)
    return (xs is not None and ws is not None and len(xs) == 4 and len(ws) == 4
            and tuple(ws[2:]) == (1, 1) and ws[1] == xs[1] and 0 not in xs and 0 not in ws
            and dtype_of(x) == "float32" and dtype_of(w) == "float32")


def legalize_pointwise(bb, call):
    """The loop nest of a 1x1 NCHW ``call`` (``is_pointwise_nchw``)."""
    return bb.call_te(_pointwise_nchw, call.args[0], call.args[1],
                      primfunc_name_hint=BLOCK_NAME)


def _pointwise_nchw(data, kernel):
    """``out[n, o, y, x] = sum(data[n, i, y, x] * kernel[o, i, 0, 0])`` over ``i``: TVM's
    ``conv2d_nchw`` with its two reduction loops of one and its padding copy left out."""
    from tvm import te

    n, channels, h, w = data.shape
    out_channels = kernel.shape[0]
    ri = te.reduce_axis((0, channels), name="rc")
    return te.compute(
        (n, out_channels, h, w),
        lambda b, o, y, x: te.sum(data[b, ri, y, x] * kernel[o, ri, 0, 0], axis=[ri]),
        name=BLOCK_NAME, attrs={BLOCKED_OP: POINTWISE_CONV2D})
