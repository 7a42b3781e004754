"""Max and average pooling in the blocked NCHW[x]c layout (``conv_layout`` keeps the pools
between its convolutions blocked): one reduction vectorized along the channel block.  Max
pooling with ``ceil_mode`` and padding -- SqueezeNet's three pools were 54-68 % of its time
at ~1 % of the roof in the operator table's NCHW lowering, which pools twice (values and the
NaN mask); average pooling whose windows tile the image (``blocks_avg_pool2d``)."""
from __future__ import annotations

from ..ops.strict import isnan
from .channel_blocks import AVG_POOL2D, BLOCKED_OP, MAX_POOL2D, is_blocked
from .relax_exprs import dtype_of, static_shape

# The blocks' names (what the TIR view shows; the schedule reads ``BLOCKED_OP``).
POOL_NAME = "max_pool2d_NCHWc"
POOL_PAD_NAME = "max_pool2d_NCHWc_pad"
AVG_POOL_NAME, AVG_SCALE_NAME = "avg_pool2d_NCHWc_sum", "avg_pool2d_NCHWc"


def blocked_pooling(call, data, block: int):
    """``call`` -- a max pooling (``ceil_mode`` too), or an average pooling whose windows
    tile the image (``blocks_avg_pool2d``), of an NCHW tensor -- over ``data``, that tensor
    in ``NCHW{block}c``; None for a pooling that stays in NCHW."""
    from tvm.relax import op as R

    a = call.attrs
    if (a.layout, a.out_layout) != ("NCHW", "NCHW") or any(int(d) != 1 for d in a.dilation):
        return None
    average = call.op.name == "relax.nn.avg_pool2d"
    if average and not blocks_avg_pool2d(static_shape(call.args[0]), a):
        return None
    layout = f"NCHW{block}c"
    return (R.nn.avg_pool2d if average else R.nn.max_pool2d)(
        data, pool_size=a.pool_size, strides=a.strides, padding=a.padding,
        dilation=a.dilation, ceil_mode=a.ceil_mode, count_include_pad=a.count_include_pad,
        layout=layout, out_layout=layout)


def legalize_max_pool2d(bb, call):
    """LegalizeOps' rule for ``relax.nn.max_pool2d``: in a blocked layout, one reduction
    whose combiner lets NaN win (numpy's ``max``) over the padded window, which the CPU
    schedule vectorizes along the channel block; any other pooling the operator table's
    way (``ops.lowering``)."""
    from ..ops.lowering import LEGALIZE

    a = call.attrs
    out = static_shape(call)
    if not (is_blocked(a.layout) and a.out_layout == a.layout and out is not None
            and all(int(d) == 1 for d in a.dilation) and dtype_of(call.args[0]) == "float32"):
        return LEGALIZE["relax.nn.max_pool2d"](bb, call)
    return bb.call_te(_max_pool2d_nchwc, call.args[0],
                      pool_size=[int(k) for k in a.pool_size],
                      strides=[int(s) for s in a.strides],
                      padding=[int(p) for p in a.padding], out_hw=out[2:4],
                      primfunc_name_hint="max_pool2d")


def _max_pool2d_nchwc(data, pool_size, strides, padding, out_hw):
    """``out_hw`` is Relax's output size: with ``ceil_mode`` the last window of a row may
    run past the padded input (PyTorch's rule: it starts inside the input or the left
    padding), so the bottom and right padding grow by what it overhangs.  -inf padding is
    the identity of ``max``, so the ragged window's maximum is that of its real part."""
    from tvm import te, tirx, topi

    n, cc, ih, iw, cb = data.shape
    top, left, bottom, right = padding
    (kh, kw), (sh, sw) = pool_size, strides
    oh, ow = out_hw
    bottom = max(bottom, (oh - 1) * sh + kh - int(ih) - top)
    right = max(right, (ow - 1) * sw + kw - int(iw) - left)
    if top or left or bottom or right:
        data = topi.nn.pad(data, [0, 0, top, left, 0], [0, 0, bottom, right, 0],
                           pad_value=float("-inf"), name=POOL_PAD_NAME)
    nan_max = te.comm_reducer(
        lambda acc, v: tirx.Select(tirx.Or(isnan(v), v > acc), v, acc),
        lambda dtype: tirx.const(float("-inf"), dtype), name="nan_max")
    ry = te.reduce_axis((0, kh), name="ky")
    rx = te.reduce_axis((0, kw), name="kx")
    return te.compute(
        (n, cc, oh, ow, cb),
        lambda b, c, y, x, i: nan_max(data[b, c, y * sh + ry, x * sw + rx, i], axis=[ry, rx]),
        name=POOL_NAME, attrs={BLOCKED_OP: MAX_POOL2D})


# Average pools stay in the blocked layout where ``blocks_avg_pool2d`` accepts them, rather
# than going to NCHW and back (two transforms of the activation around each).
BLOCKED_AVG_POOL = True


def blocks_avg_pool2d(shape, attrs) -> bool:
    """Whether an average pooling of an NCHW ``shape`` is kept in the blocked layout: no
    padding or dilation, and windows that tile the image (every window whole, none
    overhanging, with or without ``ceil_mode``).  Then every window's count is ``kh * kw``
    whatever ``count_include_pad`` says, and the blocked sum over the window, in the same
    order, divided by it, is the NCHW lowering's result bit for bit.  DenseNet's and
    ResNet-D's 2x2 stride-2 pools are such; others stay in NCHW."""
    if not BLOCKED_AVG_POOL or shape is None or len(shape) != 4:
        return False
    (kh, kw), (sh, sw) = ([int(k) for k in attrs.pool_size], [int(s) for s in attrs.strides])
    h, w = shape[2:4]
    return (all(int(p) == 0 for p in attrs.padding) and all(int(d) == 1 for d in attrs.dilation)
            and h >= kh and w >= kw and (h - kh) % sh == 0 and (w - kw) % sw == 0)


def legalize_avg_pool2d(bb, call):
    """LegalizeOps' rule for ``relax.nn.avg_pool2d``: in a blocked layout (which
    ``conv_layout`` gives only pools ``blocks_avg_pool2d`` accepts), a sum over the window
    and a scale by its count; any other pooling the operator table's way."""
    from ..ops.lowering import LEGALIZE

    a = call.attrs
    out = static_shape(call)
    if not (is_blocked(a.layout) and a.out_layout == a.layout and out is not None
            and dtype_of(call.args[0]) == "float32"):
        return LEGALIZE["relax.nn.avg_pool2d"](bb, call)
    return bb.call_te(_avg_pool2d_nchwc, call.args[0],
                      pool_size=[int(k) for k in a.pool_size],
                      strides=[int(s) for s in a.strides], out_hw=out[2:4],
                      primfunc_name_hint="avg_pool2d")


def _avg_pool2d_nchwc(data, pool_size, strides, out_hw):
    """The window's sum from 0 in ``ky, kx`` order, as TOPI's ``pool_sum``, then divided
    by the count -- or multiplied by its inverse where the count is a power of two: both
    are the exact quotient rounded once, so the bits are the same."""
    from tvm import te, tirx

    n, cc, _, _, cb = data.shape
    (kh, kw), (sh, sw) = pool_size, strides
    oh, ow = out_hw
    ry = te.reduce_axis((0, kh), name="ky")
    rx = te.reduce_axis((0, kw), name="kx")
    total = te.compute(
        (n, cc, oh, ow, cb),
        lambda b, c, y, x, i: te.sum(data[b, c, y * sh + ry, x * sw + rx, i], axis=[ry, rx]),
        name=AVG_POOL_NAME, attrs={BLOCKED_OP: AVG_POOL2D})
    count = kh * kw
    if count & (count - 1) == 0:
        inverse = tirx.const(1.0 / count, "float32")
        return te.compute(total.shape, lambda *i: total(*i) * inverse, name=AVG_SCALE_NAME)
    divisor = tirx.const(float(count), "float32")
    return te.compute(total.shape, lambda *i: total(*i) / divisor, name=AVG_SCALE_NAME)
