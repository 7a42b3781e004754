"""numpy implementations the reference needs beyond one numpy call (windows, convolution)."""
from __future__ import annotations

import numpy as np


def errors_ignored(fn):
    """``fn`` with numpy's floating-point warnings off: x // 0 is 0, as in the compiled code."""

    def quiet(*args):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*args)

    return quiet


def pool_windows(x: np.ndarray, size, strides, pad, fill):
    ph0, pw0, ph1, pw1 = pad
    x = np.pad(x, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)), constant_values=fill)
    kh, kw = size
    sh, sw = strides
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return win[:, :, : sh * (oh - 1) + 1: sh, : sw * (ow - 1) + 1: sw]


def conv2d(x, w, b, strides, padding, dilation, groups):
    sh, sw = strides
    dh, dw = dilation
    top, left, bottom, right = padding
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    acc = np.float64 if x.dtype.kind == "f" else np.int64
    out = np.zeros((n, o, oh, ow), dtype=acc)
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg].astype(acc)
        ws = w[g * og:(g + 1) * og].astype(acc)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                           j * dw: j * dw + sw * (ow - 1) + 1: sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        out += np.asarray(b, dtype=acc).reshape(1, -1, 1, 1)
    return out.astype(x.dtype)


def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return (x - m) - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def per_channel(v, ndim: int, axis: int):
    """A vector of one value per channel, shaped to broadcast along ``axis`` of rank ``ndim``."""
    shape = [1] * ndim
    shape[axis] = -1
    return np.reshape(v, shape)
