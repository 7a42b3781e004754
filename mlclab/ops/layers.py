"""Linear algebra and neural-network layer entries (NCHW layouts, PyTorch's conventions)."""
from __future__ import annotations

import numpy as np

from ..lang import dims as D
from ..lang.typed import TensorType
from . import numpy_ref
from .entry import Args, Example, Op
from .params import (Axis, Float, Int, OpTypeError, Padding, Pair, Param, Text, optional_tensor,
                     tensor)
from .rules import (R, broadcast_shapes, fmt_shape, need_float, need_numeric,
                    need_rank, relax, same_dtype, spatial_out)


# --------------------------------------------------------------------------- linear algebra
def _matmul_rule(a: Args) -> TensorType:
    x1, x2 = a.x1, a.x2
    for n in ("x1", "x2"):
        if a[n].ndim == 0:
            raise OpTypeError(f"'@' needs tensors of rank 1 or more; {n} is a scalar", param=n,
                              hint="use * to scale by a scalar")
        need_numeric(a, n, "'@'")
    dtype = same_dtype(a, ("x1", "x2"), "'@'")
    k1 = x1.shape[-1]
    k2 = x2.shape[0] if x2.ndim == 1 else x2.shape[-2]
    if k1 != k2:
        raise OpTypeError(
            f"'@' needs the inner dimensions to match: {D.format_dim(k1)} vs {D.format_dim(k2)} "
            f"({a.source('x1')} is {fmt_shape(x1.shape)}, {a.source('x2')} is "
            f"{fmt_shape(x2.shape)})",
            hint="the last dimension of the left operand must equal the "
                 + ("only" if x2.ndim == 1 else "second-to-last") + " dimension of the right one"
                 + (f" (transpose({a.source('x2')})?)" if x2.ndim == 2 and x2.shape[-1] == k1
                   else ""))
    batch = broadcast_shapes([x1.shape[:-2], x2.shape[:-2]], "'@' (batch dimensions)")
    shape = batch + ((x1.shape[-2],) if x1.ndim >= 2 else ()) \
        + ((x2.shape[-1],) if x2.ndim >= 2 else ())
    return TensorType(shape, dtype)


def _linear_rule(a: Args) -> TensorType:
    x, w, bias = a.x, a.weight, a.bias
    if x.ndim < 1 or w.ndim != 2:
        raise OpTypeError(f"linear needs weight of rank 2 (out_features, in_features), got "
                          f"{fmt_shape(w.shape)}", param="weight")
    dtype = same_dtype(a, ("x", "weight", "bias"), "linear")
    need_numeric(a, "x", "linear")
    if x.shape[-1] != w.shape[1]:
        raise OpTypeError(
            f"linear computes x @ weight.T: x's last dimension {D.format_dim(x.shape[-1])} must "
            f"equal weight's second dimension {D.format_dim(w.shape[1])} (weight is "
            f"{fmt_shape(w.shape)} = (out_features, in_features))", param="weight")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != w.shape[0]):
        raise OpTypeError(f"linear's bias must have shape ({D.format_dim(w.shape[0])},), got "
                          f"{fmt_shape(bias.shape)}", param="bias")
    return TensorType(x.shape[:-1] + (w.shape[0],), dtype)


def _linear_numpy(a: Args):
    out = np.matmul(a.x, np.swapaxes(a.weight, 0, 1))
    return out if a.bias is None else out + a.bias


def _einsum_terms(a: Args):
    """The subscripts split into (input terms, output term), checked against the operands."""
    spec = a.subscripts.replace(" ", "")
    if "." in spec:
        raise OpTypeError("einsum: '...' (ellipsis) is not supported; name every axis",
                          param="subscripts", hint="e.g. \"bij,bjk->bik\"")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    operands = [n for n in ("x1", "x2") if a[n] is not None]
    if len(terms) != len(operands):
        raise OpTypeError(f"einsum: {a.subscripts!r} names {len(terms)} operand(s) but "
                          f"{len(operands)} are given", param="subscripts")
    for term in terms + [out]:
        if not all("a" <= c <= "z" or "A" <= c <= "Z" for c in term):
            raise OpTypeError(f"einsum: subscripts are letters, ',' and '->'; got "
                              f"{a.subscripts!r}", param="subscripts")
    for term, n in zip(terms, operands):
        if len(set(term)) != len(term):
            raise OpTypeError(f"einsum: {term!r} repeats a letter (a diagonal); not supported",
                              param="subscripts")
        if len(term) != a[n].ndim:
            raise OpTypeError(f"einsum: {term!r} names {len(term)} axes but {a.source(n)} has "
                              f"rank {a[n].ndim}", param=n)
    if not arrow:         # numpy's implicit output: the letters used once, in order
        letters = "".join(terms)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    elif len(set(out)) != len(out) or set(out) - set("".join(terms)):
        raise OpTypeError(f"einsum: the output {out!r} must use each input letter at most once",
                          param="subscripts")
    return list(zip(terms, operands)), out


def _einsum_rule(a: Args) -> TensorType:
    dtype = same_dtype(a, ("x1", "x2"), "einsum")
    need_numeric(a, "x1", "einsum")
    terms, out = _einsum_terms(a)
    sizes: dict = {}
    for term, n in terms:
        for c, d in zip(term, a[n].shape):
            if c in sizes and sizes[c] != d:
                raise OpTypeError(f"einsum: axis {c!r} is {D.format_dim(sizes[c])} in one place "
                                  f"and {D.format_dim(d)} in {a.source(n)}", param=n)
            sizes[c] = d
    return TensorType(tuple(sizes[c] for c in out), dtype)


def _einsum_operands(a: Args) -> list:
    return [v for v in (a.x1, a.x2) if v is not None]


LINEAR_ALGEBRA = [
    Op(name="matmul", params=[tensor("x1"), tensor("x2")], rule=_matmul_rule,
       relax=lambda a: R().matmul(a.x1, a.x2), numpy=lambda a: np.matmul(a.x1, a.x2),
       doc="matrix product, numpy's rules (also written x1 @ x2)", category="linear algebra",
       symbol="@", example=Example("x1 @ x2", x1=((2, 2, 3), "f32"), x2=((3, 4), "f32"))),
    Op(name="linear", params=[tensor("x"), tensor("weight"), optional_tensor("bias")],
       rule=_linear_rule, relax=lambda a: R().linear(a.x, a.weight, a.bias),
       numpy=_linear_numpy, doc="x @ weight.T + bias, PyTorch's nn.Linear",
       category="linear algebra",
       example=Example("linear(x, w, b)", x=((5, 8), "f32"), w=((3, 8), "f32"),
                       b=((3,), "f32"))),
    Op(name="einsum", params=[Param("subscripts", Text()), tensor("x1"), optional_tensor("x2")],
       rule=_einsum_rule, relax=lambda a: R().einsum(_einsum_operands(a), a.subscripts),
       numpy=lambda a: np.einsum(a.subscripts, *_einsum_operands(a)),
       doc="numpy's einsum for one or two operands, letters only (\"bij,bjk->bik\")",
       category="linear algebra",
       example=Example("einsum(\"bhqd,bhkd->bhqk\", q, k)", q=((2, 3, 4, 5), "f32"),
                       k=((2, 3, 6, 5), "f32"))),
]


# --------------------------------------------------------------------------- layers
def _conv2d_rule(a: Args) -> TensorType:
    x, w, bias = a.x, a.weight, a.bias
    need_rank(a, "x", 4, "conv2d", "NCHW")
    need_rank(a, "weight", 4, "conv2d", "OIHW")
    dtype = same_dtype(a, ("x", "weight", "bias"), "conv2d")
    need_numeric(a, "x", "conv2d")
    groups = a.groups
    if groups < 1:
        raise OpTypeError(f"conv2d: groups must be a positive int, got {groups!r}", param="groups")
    (sh, sw), (dh, dw) = a.strides, a.dilation
    top, left, bottom, right = a.padding
    c = x.shape[1]
    o, cg, kh, kw = w.shape
    if not all(isinstance(d, int) for d in w.shape):
        raise OpTypeError("conv2d needs a weight of static shape", param="weight")
    if isinstance(c, int) and c != cg * groups:
        raise OpTypeError(
            f"conv2d: x has {c} channels but weight expects {cg} x groups={groups} = {cg * groups} "
            f"(weight is {fmt_shape(w.shape)} = (out, in/groups, kh, kw))", param="weight")
    if o % groups:
        raise OpTypeError(f"conv2d: out channels {o} must be divisible by groups={groups}",
                          param="groups")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise OpTypeError(f"conv2d's bias must have shape ({o},), got {fmt_shape(bias.shape)}",
                          param="bias")
    oh = spatial_out(x.shape[2], kh, sh, top, bottom, dh, "conv2d", "height")
    ow = spatial_out(x.shape[3], kw, sw, left, right, dw, "conv2d", "width")
    return TensorType((x.shape[0], o, oh, ow), dtype)


def _conv2d_relax(a: Args):
    op = R()
    out = op.nn.conv2d(a.x, a.weight, strides=a.strides, padding=a.padding,
                       dilation=a.dilation, groups=a.groups)
    return out if a.bias is None else op.add(out, op.reshape(a.bias, (1, -1, 1, 1)))


def _pool_rule(a: Args) -> TensorType:
    x = a.x
    need_rank(a, "x", 4, a.op, "NCHW")
    need_numeric(a, "x", a.op)
    if a.op == "avg_pool2d":
        need_float(a, "x", a.op)
    (kh, kw), (sh, sw), (top, left, bottom, right) = a.pool_size, a.strides, a.padding
    oh = spatial_out(x.shape[2], kh, sh, top, bottom, 1, a.op, "height")
    ow = spatial_out(x.shape[3], kw, sw, left, right, 1, a.op, "width")
    return TensorType(x.shape[:2] + (oh, ow), x.dtype)


def _max_pool_numpy(a: Args):
    x = a.x
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    windows = numpy_ref.pool_windows(x, a.pool_size, a.strides, a.padding, fill)
    return np.max(windows, axis=(-2, -1)).astype(x.dtype)


def _avg_pool_numpy(a: Args):
    windows = numpy_ref.pool_windows(a.x, a.pool_size, a.strides, a.padding, 0)
    return np.mean(windows, axis=(-2, -1)).astype(a.x.dtype)


POOL_PARAMS = [tensor("x"), Param("pool_size", Pair()),
               Param("strides", Pair(default_to="pool_size"), None),
               Param("padding", Padding(), (0, 0))]
NCHW = ((2, 3, 8, 7), "f32")


def _gap_rule(a: Args) -> TensorType:
    need_rank(a, "x", 4, "global_avg_pool2d", "NCHW")
    need_float(a, "x", "global_avg_pool2d")
    return TensorType(a.x.shape[:2] + (1, 1), a.x.dtype)


def _softmax_rule(a: Args) -> TensorType:
    need_float(a, "x", a.op)
    return a.x


def _bn_rule(a: Args) -> TensorType:
    x = a.x
    if x.ndim < 2:
        raise OpTypeError(f"batch_norm needs x of rank 2 or more (N, C, ...), got "
                          f"{fmt_shape(x.shape)}", param="x")
    need_float(a, "x", "batch_norm")
    same_dtype(a, ("x", "gamma", "beta", "mean", "var"), "batch_norm")
    for n in ("gamma", "beta", "mean", "var"):
        if a[n].shape != (x.shape[1],):
            raise OpTypeError(f"batch_norm's {n} must have shape ({D.format_dim(x.shape[1])},) "
                              f"(one value per channel), got {fmt_shape(a[n].shape)}", param=n)
    return x


def _bn_relax(a: Args):
    bn = R().nn.batch_norm(a.x, a.gamma, a.beta, a.mean, a.var, axis=1, epsilon=a.epsilon,
                           training=False)
    return relax().TupleGetItem(bn, 0)


def _bn_numpy(a: Args):
    c = lambda v: numpy_ref.per_channel(v, np.ndim(a.x), 1)  # noqa: E731
    out = (a.x - c(a.mean)) / np.sqrt(c(a.var) + np.asarray(a.epsilon, a.x.dtype))
    return out * c(a.gamma) + c(a.beta)


def _ln_rule(a: Args) -> TensorType:
    x = a.x
    need_float(a, "x", "layer_norm")
    same_dtype(a, ("x", "gamma", "beta"), "layer_norm")
    size = x.shape[a.axis]
    for n in ("gamma", "beta"):
        if a[n].shape != (size,):
            raise OpTypeError(f"layer_norm's {n} must have shape ({D.format_dim(size)},), "
                              f"got {fmt_shape(a[n].shape)}", param=n)
    return x


def _ln_numpy(a: Args):
    x, axis = a.x, a.axis
    mean = np.mean(x, axis=axis, keepdims=True)
    var = np.var(x, axis=axis, keepdims=True)
    out = (x - mean) / np.sqrt(var + np.asarray(a.epsilon, x.dtype))
    return out * numpy_ref.per_channel(a.gamma, x.ndim, axis) \
        + numpy_ref.per_channel(a.beta, x.ndim, axis)


F35 = ((3, 5), "f32")
CHANNELS = {n: ((3,), "f32") for n in ("g", "b", "m")}

LAYERS = [
    Op(name="conv2d", params=[tensor("x"), tensor("weight"), optional_tensor("bias"),
                              Param("strides", Pair(), (1, 1)),
                              Param("padding", Padding(), (0, 0)),
                              Param("dilation", Pair(), (1, 1)), Param("groups", Int(), 1)],
       rule=_conv2d_rule, relax=_conv2d_relax,
       numpy=lambda a: numpy_ref.conv2d(a.x, a.weight, a.bias, a.strides, a.padding,
                                        a.dilation, a.groups),
       doc="2-D convolution, NCHW data and OIHW weight", category="neural network",
       example=Example("conv2d(x, w, b, padding=(0, 1), strides=(2, 1), groups=2)",
                       x=((2, 4, 9, 8), "f32"), w=((6, 2, 3, 3), "f32"), b=((6,), "f32"))),
    Op(name="max_pool2d", params=POOL_PARAMS, rule=_pool_rule,
       relax=lambda a: R().nn.max_pool2d(a.x, pool_size=a.pool_size, strides=a.strides,
                                         padding=a.padding),      # NaN: see ops/lowering.py
       numpy=_max_pool_numpy,
       doc="largest value of each pool_size window (NCHW); NaN if the window holds one",
       category="neural network",
       example=Example("max_pool2d(x, 3, strides=2, padding=1)", x=NCHW)),
    Op(name="avg_pool2d", params=POOL_PARAMS, rule=_pool_rule,
       relax=lambda a: R().nn.avg_pool2d(a.x, pool_size=a.pool_size, strides=a.strides,
                                         padding=a.padding, count_include_pad=True),
       numpy=_avg_pool_numpy,
       doc="mean of each pool_size window, padding counted (NCHW, PyTorch's default)",
       category="neural network", example=Example("avg_pool2d(x, (3, 2), padding=1)", x=NCHW)),
    Op(name="global_avg_pool2d", params=[tensor("x")], rule=_gap_rule,
       relax=lambda a: R().mean(a.x, axis=[2, 3], keepdims=True),
       numpy=lambda a: np.mean(a.x, axis=(2, 3), keepdims=True),
       doc="mean over height and width, to (N, C, 1, 1)", category="neural network",
       example=Example("global_avg_pool2d(x)", x=NCHW)),
    Op(name="softmax", params=[tensor("x"), Param("axis", Axis(), -1)], rule=_softmax_rule,
       relax=lambda a: R().nn.softmax(a.x, axis=a.axis),
       numpy=lambda a: numpy_ref.softmax(a.x, a.axis), doc="exp(x) / sum(exp(x)) along axis",
       category="neural network", example=Example("softmax(x, axis=0)", x=F35)),
    Op(name="log_softmax", params=[tensor("x"), Param("axis", Axis(), -1)], rule=_softmax_rule,
       relax=lambda a: R().nn.log_softmax(a.x, axis=a.axis),
       numpy=lambda a: numpy_ref.log_softmax(a.x, a.axis), doc="log(softmax(x)), computed stably",
       category="neural network", example=Example("log_softmax(x)", x=F35)),
    Op(name="batch_norm", params=[tensor("x"), tensor("gamma"), tensor("beta"), tensor("mean"),
                                  tensor("var", domain="positive"),
                                  Param("epsilon", Float(), 1e-5)],
       rule=_bn_rule, relax=_bn_relax, numpy=_bn_numpy,
       doc="inference batch normalization over channel axis 1", category="neural network",
       example=Example("batch_norm(x, g, b, m, v)", x=((2, 3, 4, 4), "f32"), **CHANNELS,
                       v=((3,), "f32"), low=0.5)),
    Op(name="layer_norm", params=[tensor("x"), tensor("gamma"), tensor("beta"),
                                  Param("axis", Axis(), -1), Param("epsilon", Float(), 1e-5)],
       rule=_ln_rule,
       relax=lambda a: R().nn.layer_norm(a.x, a.gamma, a.beta, axes=[a.axis], epsilon=a.epsilon),
       numpy=_ln_numpy, doc="normalize along axis, then scale by gamma and shift by beta",
       category="neural network",
       example=Example("layer_norm(x, g, b, epsilon=0.001)", x=((4, 6), "f32"),
                       g=((6,), "f32"), b=((6,), "f32"))),
]

ENTRIES = LINEAR_ALGEBRA + LAYERS
