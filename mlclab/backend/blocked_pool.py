"""Max pooling in the blocked NCHW[x]c layout (``conv_layout`` keeps the pools between its
convolutions blocked): one reduction vectorized along the channel block, ``ceil_mode``
included -- SqueezeNet's three pools were 54-68 % of its time at ~1 % of the roof in the
operator table's NCHW lowering, which pools twice (values and the NaN mask)."""
from __future__ import annotations

from ..ops.strict import isnan
from .channel_blocks import BLOCKED_OP, MAX_POOL2D, is_blocked
from .relax_exprs import dtype_of, static_shape

# The blocks' names (what the TIR view shows; the schedule reads ``BLOCKED_OP``).
POOL_NAME = "max_pool2d_NCHWc"
POOL_PAD_NAME = "max_pool2d_NCHWc_pad"


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
