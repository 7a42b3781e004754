"""The operator table: one declarative entry per operator.

Each ``Op`` says, once: the operator's name and parameters (with defaults), its shape/dtype
rule, how to build it in Relax, how numpy computes it, and a one-line doc. The front end's
symbol table, the type checker, the numpy reference (``fn.reference``), the error messages and
the operator reference in ``docs/operators.md`` are all read off this table, so adding an
operator is adding one entry (the idea of TVM's astgen RFC, applied to operators).

Rules and builders receive one dict ``v`` keyed by parameter name: ``TensorType``s (type rule),
Relax expressions (builder) or numpy arrays (reference) for tensor parameters, plain Python
values for the others, defaults filled in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .dsl import dims as D
from .dsl.annotations import SHORT_NAMES
from .dsl.typed import TensorType

REQUIRED = object()


class OpTypeError(Exception):
    """A type rule's objection; ``param`` names the argument to put the caret under."""

    def __init__(self, message: str, param: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.hint = hint


@dataclass(frozen=True)
class Param:
    name: str
    # tensor | tensor? (optional) | tensors (a tuple of tensors) | int | ints (int or tuple)
    # | pair (int or 2-tuple) | padding (int, 2- or 4-tuple) | axis (int or None)
    # | axes (int, tuple or None) | float | bool | dtype | shape
    kind: str
    default: object = REQUIRED
    scalar_ok: bool = False     # a tensor parameter that also takes a number literal
    # a literal 0.0 here is refused: TVM's constant folder aborts on float division by zero
    nonzero_literal: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.kind in ("tensor", "tensor?", "tensors")


@dataclass(frozen=True)
class Op:
    name: str
    params: tuple
    infer: Callable[[dict], TensorType]
    build: Callable[[dict], object]
    numpy: Callable[[dict], np.ndarray]
    doc: str
    category: str
    symbol: Optional[str] = None      # Python spelling (``+``) when an operator has one

    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(p.name if p.default is REQUIRED else f"{p.name}={p.default!r}")
        return f"{self.name}({', '.join(parts)})"

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


def arguments(call, value, group=list) -> dict:
    """The dict an ``Op``'s builder or reference receives for a typed ``Call``.

    ``value`` turns one typed argument into what that stage computes with (a Relax var, a
    numpy array); ``group`` packs a tuple-of-tensors argument (``concat``'s).
    """
    v = dict(call.attrs)
    tensor_params = [p for p in call.op.params if p.is_tensor]
    for p, arg in zip(tensor_params, call.args):
        if arg is None:
            v[p.name] = None
        elif isinstance(arg, list):
            v[p.name] = group([value(a) for a in arg])
        else:
            v[p.name] = value(arg)
    v["_dtype"] = call.type.dtype
    return v


def _R():
    from tvm import relax

    return relax.op


def _relax():
    from tvm import relax

    return relax


# --------------------------------------------------------------------------- rule helpers
def short(dtype: str) -> str:
    return SHORT_NAMES.get(dtype, dtype)


def fmt_shape(shape) -> str:
    inner = ", ".join(D.format_dim(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def written(v: dict, name: str) -> str:
    """How the student wrote the argument of parameter ``name`` (the parser supplies it)."""
    return v.get("_written", {}).get(name, name)


def need_float(v: dict, name: str, what: str) -> None:
    t = v[name]
    if not is_float(t.dtype):
        w = written(v, name)
        raise OpTypeError(f"{what} needs a floating-point tensor, but {w} is {short(t.dtype)}",
                          param=name, hint=f"convert it first: astype({w}, f32)")


def need_numeric(v: dict, name: str, what: str) -> None:
    t = v[name]
    if t.dtype == "bool":
        w = written(v, name)
        raise OpTypeError(f"{what} is not defined on bool tensors", param=name,
                          hint=f"convert it first: astype({w}, i32)")


def same_dtype(v: dict, names, what: str) -> str:
    dtypes = [(n, v[n].dtype) for n in names if v.get(n) is not None]
    first_name, first = dtypes[0]
    for n, dt in dtypes[1:]:
        if dt != first:
            w = written(v, n)
            raise OpTypeError(
                f"{what} needs operands of one dtype, got {short(first)} ({written(v, first_name)}) "
                f"and {short(dt)} ({w}); mlclab does not promote dtypes silently",
                param=n, hint=f"convert one of them, e.g. astype({w}, {short(first)})")
    return first


def broadcast_shapes(shapes, what: str, names) -> tuple:
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for i in range(ndim):
        dim = 1
        for s, n in zip(padded, names):
            d = s[i]
            if d == 1 or d == dim:
                continue
            if dim == 1:
                dim = d
                continue
            raise OpTypeError(
                f"{what} cannot broadcast shapes " + " and ".join(fmt_shape(s) for s in shapes)
                + f": dimension {D.format_dim(dim)} vs {D.format_dim(d)}"
                + ("" if isinstance(d, int) and isinstance(dim, int)
                   else " (symbolic sizes must be the same name to match)"))
        out.append(dim)
    return tuple(out)


def norm_axis(axis: int, ndim: int, what: str, param: str = "axis") -> int:
    if not -ndim <= axis < ndim:
        raise OpTypeError(f"{what}: axis {axis} is out of range for a tensor of rank {ndim} "
                          f"(valid: {-ndim} .. {ndim - 1})", param=param)
    return axis % ndim if ndim else 0


def norm_axes(axis, ndim: int, what: str) -> Optional[tuple]:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = tuple(norm_axis(a, ndim, what) for a in axes)
    if len(set(out)) != len(out):
        raise OpTypeError(f"{what}: axis {axis} names the same axis twice", param="axis")
    return out


def as_pair(value, name: str, what: str) -> tuple:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or any(p < 1 for p in pair):
        raise OpTypeError(f"{what}: {name} must be a positive int or a pair of them, got {value!r}",
                          param=name)
    return pair


def as_padding(value, what: str) -> tuple:
    """(top, left, bottom, right) from an int, (h, w) or a 4-tuple."""
    pad = (value,) * 4 if isinstance(value, int) else tuple(value)
    if len(pad) == 2:
        pad = (pad[0], pad[1], pad[0], pad[1])
    if len(pad) != 4 or any(p < 0 for p in pad):
        raise OpTypeError(f"{what}: padding must be an int, (h, w) or (top, left, bottom, right) "
                          f"of non-negative ints, got {value!r}", param="padding")
    return pad


def spatial_out(size, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int,
                what: str, axis_name: str):
    span = dilation * (kernel - 1) + 1
    if isinstance(size, int):
        if size + pad_lo + pad_hi < span:
            raise OpTypeError(f"{what}: the window ({span}) is larger than the padded {axis_name} "
                              f"({size + pad_lo + pad_hi})", param="x")
        return (size + pad_lo + pad_hi - span) // stride + 1
    return D.add(D.floordiv(D.sub(D.add(size, pad_lo + pad_hi), span), stride), 1)


# --------------------------------------------------------------------------- numpy helpers
def _int_safe_divide(fn_np):
    def ref(v):
        a, b = np.asarray(v["x1"]), np.asarray(v["x2"])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn_np(a, b)
    return ref


def _pool_windows(x: np.ndarray, size, strides, pad, fill):
    ph0, pw0, ph1, pw1 = pad
    x = np.pad(x, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)), constant_values=fill)
    kh, kw = size
    sh, sw = strides
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return win[:, :, : sh * (oh - 1) + 1: sh, : sw * (ow - 1) + 1: sw]


def _conv2d_np(v):
    x, w, b = v["x"], v["weight"], v["bias"]
    sh, sw = v["strides"]
    dh, dw = v["dilation"]
    top, left, bottom, right = v["padding"]
    groups = v["groups"]
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    acc = np.float64 if is_float(str(x.dtype)) else np.int64
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


def _softmax_np(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax_np(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return (x - m) - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


# --------------------------------------------------------------------------- the table
OPS: dict = {}


def op(name, params, infer, build, numpy, doc, category, symbol=None) -> Op:
    entry = Op(name, tuple(params), infer, build, numpy, doc, category, symbol)
    OPS[name] = entry
    return entry


T = lambda name, **kw: Param(name, "tensor", **kw)  # noqa: E731


# ---- elementwise, unary
def _unary(name, np_fn, relax_fn, doc, float_only):
    def infer(v):
        (need_float if float_only else need_numeric)(v, "x", name)
        return v["x"]

    op(name, [T("x")], infer, lambda v: relax_fn()(v["x"]), lambda v: np_fn(v["x"]), doc,
       "elementwise")


_unary("relu", lambda x: np.maximum(x, np.zeros((), x.dtype)), lambda: _R().nn.relu,
       "max(x, 0), element by element", False)
_unary("sigmoid", lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), lambda: _R().sigmoid,
       "1 / (1 + exp(-x))", True)
_unary("tanh", np.tanh, lambda: _R().tanh, "hyperbolic tangent", True)
_unary("exp", np.exp, lambda: _R().exp, "e to the power x", True)
_unary("log", np.log, lambda: _R().log, "natural logarithm", True)
_unary("sqrt", np.sqrt, lambda: _R().sqrt, "square root", True)
_unary("abs", np.abs, lambda: _R().abs, "absolute value", False)
_unary("negative", np.negative, lambda: _R().negative, "-x", False)


# ---- elementwise, binary
def _binary(name, symbol, np_fn, relax_fn, doc, kind="arith", build=None):
    def infer(v):
        if kind != "compare":
            need_numeric(v, "x1", name)
            need_numeric(v, "x2", name)
        dtype = same_dtype(v, ("x1", "x2"), f"'{symbol}'" if symbol else name)
        if kind == "divide" and not is_float(dtype):
            raise OpTypeError(f"'/' divides floating-point tensors; these are {short(dtype)}",
                              hint="use // for integer division, or astype(x, f32) first")
        if kind == "power" and not is_float(dtype):
            raise OpTypeError(f"'**' is defined here on floating-point tensors; these are {short(dtype)}",
                              hint="multiply (x * x), or astype(x, f32) first")
        shape = broadcast_shapes([v["x1"].shape, v["x2"].shape], f"'{symbol}'" if symbol else name,
                                 ("x1", "x2"))
        return TensorType(shape, "bool" if kind == "compare" else dtype)

    if kind == "compare" and build is None:
        build = _bool_safe_compare(relax_fn)
    divisor = name in ("divide", "floor_divide", "mod")
    op(name, [T("x1", scalar_ok=True), T("x2", scalar_ok=True, nonzero_literal=divisor)], infer,
       build or (lambda v: relax_fn()(v["x1"], v["x2"])), np_fn, doc,
       "comparison" if kind == "compare" else "elementwise", symbol)


def _bool_safe_compare(relax_fn):
    """Comparisons of bool tensors go through int8: LLVM rejects TVM's float compare of i1."""

    def build(v):
        R = _R()
        x1, x2 = v["x1"], v["x2"]
        if str(x1.ty.dtype) == "bool":
            x1, x2 = R.astype(x1, "int8"), R.astype(x2, "int8")
        return relax_fn()(x1, x2)

    return build


def _np2(fn):
    return lambda v: fn(v["x1"], v["x2"])


def _int_safe(relax_name, np_fn):
    """``//`` and ``%``: numpy's answers (0 for a zero divisor) without the hardware trap.

    Integer division by zero, and INT_MIN // -1, raise SIGFPE on x86 and would kill the
    student's kernel. The divisor is made safe with arithmetic, not a select (a vectorizer may
    turn ``x // select(c, 1, y)`` back into a division by ``y``), and the result patched after.
    """

    def build(v):
        R, relax = _R(), _relax()
        x, y = v["x1"], v["x2"]
        dtype = v["_dtype"]
        fn = getattr(R, relax_name)
        if is_float(dtype):
            return fn(x, y)
        zero = relax.const(0, dtype)
        y_zero = R.equal(y, zero)
        safe_y = R.add(y, R.astype(y_zero, dtype))                 # 0 -> 1
        if dtype.startswith("uint"):
            unsafe = y_zero
        else:
            y_minus_one = R.equal(y, relax.const(-1, dtype))
            unsafe = R.logical_or(y_zero, y_minus_one)
            safe_y = R.add(safe_y, R.multiply(R.astype(y_minus_one, dtype),
                                              relax.const(2, dtype)))   # -1 -> 1
        safe = fn(x, safe_y)
        if relax_name == "floor_mod":
            return R.where(unsafe, zero, safe)
        if dtype.startswith("uint"):
            return R.where(unsafe, zero, safe)
        # x // -1 is -x (wrapping like numpy for INT_MIN); x // 0 is 0.
        return R.where(y_zero, zero, R.where(y_minus_one, R.negative(x), safe))

    return build, _int_safe_divide(np_fn)


_binary("add", "+", _np2(np.add), lambda: _R().add, "x1 + x2, with numpy broadcasting")
_binary("subtract", "-", _np2(np.subtract), lambda: _R().subtract, "x1 - x2")
_binary("multiply", "*", _np2(np.multiply), lambda: _R().multiply, "x1 * x2, element by element")
_binary("divide", "/", _np2(np.divide), lambda: _R().divide, "x1 / x2 (floating point)", "divide")
_binary("power", "**", _np2(np.power), lambda: _R().power, "x1 ** x2 (floating point)", "power")
_binary("maximum", None, _np2(np.maximum), lambda: _R().maximum, "element-wise larger of x1 and x2")
_binary("minimum", None, _np2(np.minimum), lambda: _R().minimum, "element-wise smaller of x1 and x2")
for _name, _sym, _np_fn, _doc in [
    ("floor_divide", "//", np.floor_divide, "x1 // x2, rounding down; 0 where x2 is 0 (as numpy)"),
    ("mod", "%", np.mod, "x1 % x2 with the sign of x2; 0 where x2 is 0 (as numpy)"),
]:
    _build, _ref = _int_safe("floor_divide" if _name == "floor_divide" else "floor_mod", _np_fn)
    _binary(_name, _sym, _ref, None, _doc, build=_build)
for _name, _sym, _np_fn in [("equal", "==", np.equal), ("not_equal", "!=", np.not_equal),
                            ("less", "<", np.less), ("less_equal", "<=", np.less_equal),
                            ("greater", ">", np.greater), ("greater_equal", ">=", np.greater_equal)]:
    _binary(_name, _sym, _np2(_np_fn), (lambda n: lambda: getattr(_R(), n))(_name),
            f"x1 {_sym} x2, a bool tensor", "compare")


def _where_infer(v):
    if v["condition"].dtype != "bool":
        raise OpTypeError(f"where needs a bool condition, got {short(v['condition'].dtype)}",
                          param="condition", hint="compare first, e.g. where(x > 0, x, 0.0)")
    dtype = same_dtype(v, ("x1", "x2"), "where")
    shape = broadcast_shapes([v["condition"].shape, v["x1"].shape, v["x2"].shape], "where",
                             ("condition", "x1", "x2"))
    return TensorType(shape, dtype)


op("where", [T("condition"), T("x1", scalar_ok=True), T("x2", scalar_ok=True)], _where_infer,
   lambda v: _R().where(v["condition"], v["x1"], v["x2"]),
   lambda v: np.where(v["condition"], v["x1"], v["x2"]),
   "x1 where condition is true, else x2", "elementwise")


def _astype_infer(v):
    return TensorType(v["x"].shape, v["dtype"])


op("astype", [T("x"), Param("dtype", "dtype")], _astype_infer,
   lambda v: _R().astype(v["x"], v["dtype"]), lambda v: np.asarray(v["x"]).astype(v["dtype"]),
   "x converted to dtype (e.g. astype(x, f32))", "elementwise")


# ---- linear algebra
def _matmul_infer(v):
    a, b = v["x1"], v["x2"]
    for n in ("x1", "x2"):
        if v[n].ndim == 0:
            raise OpTypeError(f"'@' needs tensors of rank 1 or more; {n} is a scalar", param=n,
                              hint="use * to scale by a scalar")
        need_numeric(v, n, "'@'")
    dtype = same_dtype(v, ("x1", "x2"), "'@'")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise OpTypeError(
            f"'@' needs the inner dimensions to match: {D.format_dim(ka)} vs {D.format_dim(kb)} "
            f"({written(v, 'x1')} is {fmt_shape(a.shape)}, {written(v, 'x2')} is "
            f"{fmt_shape(b.shape)})",
            hint="the last dimension of the left operand must equal the "
                 + ("only" if b.ndim == 1 else "second-to-last") + " dimension of the right one"
                 + (f" (transpose({written(v, 'x2')})?)" if b.ndim == 2 and b.shape[-1] == ka
                   else ""))
    batch = broadcast_shapes([a.shape[:-2], b.shape[:-2]], "'@' (batch dimensions)", ("x1", "x2"))
    shape = batch + ((a.shape[-2],) if a.ndim >= 2 else ()) + ((b.shape[-1],) if b.ndim >= 2 else ())
    return TensorType(shape, dtype)


op("matmul", [T("x1"), T("x2")], _matmul_infer, lambda v: _R().matmul(v["x1"], v["x2"]),
   lambda v: np.matmul(v["x1"], v["x2"]), "matrix product, numpy's rules (also written x1 @ x2)",
   "linear algebra", "@")


def _linear_infer(v):
    x, w, bias = v["x"], v["weight"], v["bias"]
    if x.ndim < 1 or w.ndim != 2:
        raise OpTypeError(f"linear needs weight of rank 2 (out_features, in_features), got "
                          f"{fmt_shape(w.shape)}", param="weight")
    dtype = same_dtype(v, ("x", "weight", "bias"), "linear")
    need_numeric(v, "x", "linear")
    if x.shape[-1] != w.shape[1]:
        raise OpTypeError(
            f"linear computes x @ weight.T: x's last dimension {D.format_dim(x.shape[-1])} must "
            f"equal weight's second dimension {D.format_dim(w.shape[1])} (weight is "
            f"{fmt_shape(w.shape)} = (out_features, in_features))", param="weight")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != w.shape[0]):
        raise OpTypeError(f"linear's bias must have shape ({D.format_dim(w.shape[0])},), got "
                          f"{fmt_shape(bias.shape)}", param="bias")
    return TensorType(x.shape[:-1] + (w.shape[0],), dtype)


def _linear_np(v):
    out = np.matmul(v["x"], np.swapaxes(v["weight"], 0, 1))
    return out + v["bias"] if v["bias"] is not None else out


op("linear", [T("x"), T("weight"), Param("bias", "tensor?", None)], _linear_infer,
   lambda v: _R().linear(v["x"], v["weight"], v["bias"]), _linear_np,
   "x @ weight.T + bias, PyTorch's nn.Linear", "linear algebra")


# ---- neural-network layers
def _conv2d_infer(v):
    x, w, bias = v["x"], v["weight"], v["bias"]
    if x.ndim != 4:
        raise OpTypeError(f"conv2d needs x in NCHW layout (rank 4), got {fmt_shape(x.shape)}", param="x")
    if w.ndim != 4:
        raise OpTypeError(f"conv2d needs weight in OIHW layout (rank 4), got {fmt_shape(w.shape)}",
                          param="weight")
    dtype = same_dtype(v, ("x", "weight", "bias"), "conv2d")
    need_numeric(v, "x", "conv2d")
    groups = v["groups"]
    if not isinstance(groups, int) or groups < 1:
        raise OpTypeError(f"conv2d: groups must be a positive int, got {groups!r}", param="groups")
    sh, sw = as_pair(v["strides"], "strides", "conv2d")
    dh, dw = as_pair(v["dilation"], "dilation", "conv2d")
    top, left, bottom, right = as_padding(v["padding"], "conv2d")
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


def _conv2d_build(v):
    R = _R()
    out = R.nn.conv2d(v["x"], v["weight"], strides=v["strides"], padding=v["padding"],
                      dilation=v["dilation"], groups=v["groups"])
    if v["bias"] is None:
        return out
    return R.add(out, R.reshape(v["bias"], (1, -1, 1, 1)))


def _conv2d_ref(v):
    return _conv2d_np({**v, "strides": as_pair(v["strides"], "strides", "conv2d"),
                       "dilation": as_pair(v["dilation"], "dilation", "conv2d"),
                       "padding": as_padding(v["padding"], "conv2d")})


op("conv2d", [T("x"), T("weight"), Param("bias", "tensor?", None),
              Param("strides", "pair", (1, 1)), Param("padding", "padding", (0, 0)),
              Param("dilation", "pair", (1, 1)), Param("groups", "int", 1)],
   _conv2d_infer, _conv2d_build, _conv2d_ref,
   "2-D convolution, NCHW data and OIHW weight", "neural network")


def _pool(name, reduce_np, relax_name, doc):
    def norm(v):
        size = as_pair(v["pool_size"], "pool_size", name)
        strides = size if v["strides"] is None else as_pair(v["strides"], "strides", name)
        return size, strides, as_padding(v["padding"], name)

    def infer(v):
        x = v["x"]
        if x.ndim != 4:
            raise OpTypeError(f"{name} needs x in NCHW layout (rank 4), got {fmt_shape(x.shape)}",
                              param="x")
        need_numeric(v, "x", name)
        if name == "avg_pool2d":
            need_float(v, "x", name)
        (kh, kw), (sh, sw), (top, left, bottom, right) = norm(v)
        oh = spatial_out(x.shape[2], kh, sh, top, bottom, 1, name, "height")
        ow = spatial_out(x.shape[3], kw, sw, left, right, 1, name, "width")
        return TensorType(x.shape[:2] + (oh, ow), x.dtype)

    def build(v):
        size, strides, pad = norm(v)
        extra = {"count_include_pad": True} if name == "avg_pool2d" else {}
        return getattr(_R().nn, relax_name)(v["x"], pool_size=size, strides=strides, padding=pad,
                                            **extra)

    def ref(v):
        size, strides, pad = norm(v)
        x = v["x"]
        if name == "max_pool2d":
            fill = -np.inf if is_float(str(x.dtype)) else np.iinfo(x.dtype).min
        else:
            fill = 0
        return reduce_np(_pool_windows(x, size, strides, pad, fill), axis=(-2, -1)).astype(x.dtype)

    op(name, [T("x"), Param("pool_size", "pair"), Param("strides", "pair", None),
              Param("padding", "padding", (0, 0))], infer, build, ref, doc, "neural network")


_pool("max_pool2d", np.max, "max_pool2d", "largest value of each pool_size window (NCHW)")
_pool("avg_pool2d", np.mean, "avg_pool2d",
      "mean of each pool_size window, padding counted (NCHW, PyTorch's default)")


def _gap_infer(v):
    x = v["x"]
    if x.ndim != 4:
        raise OpTypeError(f"global_avg_pool2d needs x in NCHW layout (rank 4), got "
                          f"{fmt_shape(x.shape)}", param="x")
    need_float(v, "x", "global_avg_pool2d")
    return TensorType(x.shape[:2] + (1, 1), x.dtype)


op("global_avg_pool2d", [T("x")], _gap_infer,
   lambda v: _R().mean(v["x"], axis=[2, 3], keepdims=True),
   lambda v: np.mean(v["x"], axis=(2, 3), keepdims=True),
   "mean over height and width, to (N, C, 1, 1)", "neural network")


def _softmax_family(name, np_fn, relax_name, doc):
    def infer(v):
        need_float(v, "x", name)
        if v["x"].ndim == 0:
            raise OpTypeError(f"{name} needs a tensor of rank 1 or more", param="x")
        norm_axis(v["axis"], v["x"].ndim, name)
        return v["x"]

    op(name, [T("x"), Param("axis", "axis", -1)], infer,
       lambda v: getattr(_R().nn, relax_name)(v["x"], axis=v["axis"]),
       lambda v: np_fn(v["x"], v["axis"]), doc, "neural network")


_softmax_family("softmax", _softmax_np, "softmax", "exp(x) / sum(exp(x)) along axis")
_softmax_family("log_softmax", _log_softmax_np, "log_softmax", "log(softmax(x)), computed stably")


def _bn_infer(v):
    x = v["x"]
    if x.ndim < 2:
        raise OpTypeError(f"batch_norm needs x of rank 2 or more (N, C, ...), got "
                          f"{fmt_shape(x.shape)}", param="x")
    need_float(v, "x", "batch_norm")
    same_dtype(v, ("x", "gamma", "beta", "mean", "var"), "batch_norm")
    for n in ("gamma", "beta", "mean", "var"):
        if v[n].shape != (x.shape[1],):
            raise OpTypeError(f"batch_norm's {n} must have shape ({D.format_dim(x.shape[1])},) "
                              f"(one value per channel), got {fmt_shape(v[n].shape)}", param=n)
    return x


def _bn_build(v):
    relax = _relax()
    bn = _R().nn.batch_norm(v["x"], v["gamma"], v["beta"], v["mean"], v["var"], axis=1,
                            epsilon=v["epsilon"], training=False)
    return relax.TupleGetItem(bn, 0)


def _bn_np(v):
    shape = (1, -1) + (1,) * (np.ndim(v["x"]) - 2)
    r = lambda n: np.reshape(v[n], shape)  # noqa: E731
    out = (v["x"] - r("mean")) / np.sqrt(r("var") + np.asarray(v["epsilon"], v["x"].dtype))
    return out * r("gamma") + r("beta")


op("batch_norm", [T("x"), T("gamma"), T("beta"), T("mean"), T("var"),
                  Param("epsilon", "float", 1e-5)], _bn_infer, _bn_build, _bn_np,
   "inference batch normalization over channel axis 1", "neural network")


def _ln_infer(v):
    x = v["x"]
    need_float(v, "x", "layer_norm")
    same_dtype(v, ("x", "gamma", "beta"), "layer_norm")
    if x.ndim == 0:
        raise OpTypeError("layer_norm needs a tensor of rank 1 or more", param="x")
    axis = norm_axis(v["axis"], x.ndim, "layer_norm")
    for n in ("gamma", "beta"):
        if v[n].shape != (x.shape[axis],):
            raise OpTypeError(f"layer_norm's {n} must have shape ({D.format_dim(x.shape[axis])},), "
                              f"got {fmt_shape(v[n].shape)}", param=n)
    return x


def _ln_np(v):
    x, axis = v["x"], v["axis"]
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = np.mean(x, axis=axis, keepdims=True)
    var = np.var(x, axis=axis, keepdims=True)
    out = (x - mean) / np.sqrt(var + np.asarray(v["epsilon"], x.dtype))
    return out * np.reshape(v["gamma"], shape) + np.reshape(v["beta"], shape)


op("layer_norm", [T("x"), T("gamma"), T("beta"), Param("axis", "axis", -1),
                  Param("epsilon", "float", 1e-5)], _ln_infer,
   lambda v: _R().nn.layer_norm(v["x"], v["gamma"], v["beta"], axes=[v["axis"]],
                                epsilon=v["epsilon"]),
   _ln_np, "normalize along axis, then scale by gamma and shift by beta", "neural network")


# ---- shapes
def _reshape_target(x: TensorType, shape) -> tuple:
    shape = tuple(shape)
    if sum(1 for d in shape if d == -1) > 1:
        raise OpTypeError(f"reshape: at most one -1 in the new shape, got {fmt_shape(shape)}",
                          param="shape")
    if any(isinstance(d, int) and d < -1 for d in shape):
        raise OpTypeError(f"reshape: sizes must be non-negative (or one -1), got {fmt_shape(shape)}",
                          param="shape")
    # Cancel the symbolic sizes both sides share; what is left must be static to compare.
    old = list(x.shape)
    new_sym = [d for d in shape if not isinstance(d, int)]
    for d in new_sym:
        if d not in old:
            raise OpTypeError(f"reshape: the new shape uses {d!r}, which x's shape "
                              f"{fmt_shape(x.shape)} does not contain", param="shape")
        old.remove(d)
    leftover = [d for d in old if not isinstance(d, int)]
    old_static = int(np.prod([d for d in old if isinstance(d, int)], dtype=np.int64))
    new_static = int(np.prod([d for d in shape if isinstance(d, int) and d != -1], dtype=np.int64))
    if -1 in shape:
        if leftover:
            fill = D.mul(D.product(leftover), old_static // new_static if new_static else 0)
            if new_static == 0 or old_static % new_static:
                raise OpTypeError(f"reshape: cannot fill -1 in {fmt_shape(shape)} from "
                                  f"{fmt_shape(x.shape)}", param="shape")
        else:
            if new_static == 0 or old_static % new_static:
                raise OpTypeError(
                    f"reshape: x has {old_static} elements, which is not a multiple of the "
                    f"{new_static} that {fmt_shape(shape)} fixes", param="shape")
            fill = old_static // new_static
        return tuple(fill if d == -1 else d for d in shape)
    if leftover or old_static != new_static:
        raise OpTypeError(
            f"reshape: x of shape {fmt_shape(x.shape)} has {D.format_dim(D.product(x.shape))} "
            f"elements, but {fmt_shape(shape)} holds {D.format_dim(D.product(shape))}",
            param="shape")
    return shape


def _reshape_infer(v):
    return TensorType(_reshape_target(v["x"], v["shape"]), v["x"].dtype)


op("reshape", [T("x"), Param("shape", "shape")], _reshape_infer,
   lambda v: _R().reshape(v["x"], v["_prim_shape"]),
   lambda v: np.reshape(v["x"], v["_out_shape"]),
   "the same elements in a new shape; one size may be -1", "shape")


def _flatten_infer(v):
    x = v["x"]
    if x.ndim < 2:
        raise OpTypeError(f"flatten keeps the batch axis and needs rank 2 or more, got "
                          f"{fmt_shape(x.shape)}", param="x", hint="use reshape(x, (-1,)) for 1-D")
    return TensorType((x.shape[0], D.product(x.shape[1:])), x.dtype)


op("flatten", [T("x")], _flatten_infer, lambda v: _R().nn.batch_flatten(v["x"]),
   lambda v: np.reshape(v["x"], (np.shape(v["x"])[0], -1)),
   "(N, ...) to (N, everything else)", "shape")


def _transpose_infer(v):
    x, axes = v["x"], v["axes"]
    if axes is None:
        return TensorType(tuple(reversed(x.shape)), x.dtype)
    axes = tuple(axes) if not isinstance(axes, int) else (axes,)
    norm = tuple(norm_axis(a, x.ndim, "transpose", "axes") for a in axes)
    if sorted(norm) != list(range(x.ndim)):
        raise OpTypeError(f"transpose: axes {axes} must list each of the {x.ndim} axes once",
                          param="axes")
    return TensorType(tuple(x.shape[a] for a in norm), x.dtype)


op("transpose", [T("x"), Param("axes", "axes", None)], _transpose_infer,
   lambda v: _R().permute_dims(v["x"], None if v["axes"] is None else list(v["axes"])),
   lambda v: np.transpose(v["x"], v["axes"]), "permute axes (reversed when axes is None)", "shape")


def _expand_infer(v):
    x = v["x"]
    axes = (v["axis"],) if isinstance(v["axis"], int) else tuple(v["axis"])
    ndim = x.ndim + len(axes)
    norm = sorted(norm_axis(a, ndim, "expand_dims") for a in axes)
    if len(set(norm)) != len(norm):
        raise OpTypeError(f"expand_dims: axis {v['axis']} repeats an axis", param="axis")
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return TensorType(tuple(shape), x.dtype)


op("expand_dims", [T("x"), Param("axis", "ints")], _expand_infer,
   lambda v: _R().expand_dims(v["x"], v["axis"] if isinstance(v["axis"], int) else list(v["axis"])),
   lambda v: np.expand_dims(v["x"], v["axis"]), "insert size-1 axes", "shape")


def _squeeze_infer(v):
    x = v["x"]
    if v["axis"] is None:
        if any(not isinstance(d, int) for d in x.shape):
            raise OpTypeError("squeeze without axis needs a static shape; name the axis to drop",
                              param="x", hint="squeeze(x, axis=0)")
        return TensorType(tuple(d for d in x.shape if d != 1), x.dtype)
    axes = norm_axes(v["axis"], x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise OpTypeError(f"squeeze: axis {a} has size {D.format_dim(x.shape[a])}, not 1",
                              param="axis")
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


op("squeeze", [T("x"), Param("axis", "axes", None)], _squeeze_infer,
   lambda v: _R().squeeze(v["x"], None if v["axis"] is None else
                          ([v["axis"]] if isinstance(v["axis"], int) else list(v["axis"]))),
   lambda v: np.squeeze(v["x"], None if v["axis"] is None else v["axis"]),
   "drop size-1 axes", "shape")


def _concat_infer(v):
    ts = v["tensors"]
    if not ts:
        raise OpTypeError("concat needs at least one tensor", param="tensors")
    first = ts[0]
    if first.ndim == 0:
        raise OpTypeError("concat cannot join scalars (rank 0)", param="tensors",
                          hint="expand_dims(x, 0) first")
    axis = norm_axis(v["axis"], first.ndim, "concat")
    total = first.shape[axis]
    for i, t in enumerate(ts[1:], start=1):
        if t.dtype != first.dtype:
            raise OpTypeError(f"concat needs tensors of one dtype: tensor 0 is {short(first.dtype)}, "
                              f"tensor {i} is {short(t.dtype)}", param="tensors",
                              hint=f"astype(..., {short(first.dtype)})")
        if t.ndim != first.ndim or any(a != b for j, (a, b) in enumerate(zip(t.shape, first.shape))
                                       if j != axis):
            raise OpTypeError(
                f"concat along axis {axis}: every other dimension must match, but tensor 0 is "
                f"{fmt_shape(first.shape)} and tensor {i} is {fmt_shape(t.shape)}", param="tensors")
        total = D.add(total, t.shape[axis])
    shape = list(first.shape)
    shape[axis] = total
    return TensorType(tuple(shape), first.dtype)


op("concat", [Param("tensors", "tensors"), Param("axis", "axis", 0)], _concat_infer,
   lambda v: _R().concat(v["tensors"], axis=v["axis"]),
   lambda v: np.concatenate(v["tensors"], axis=v["axis"]),
   "join a tuple of tensors along axis", "shape")


# ---- reductions
def _reduction(name, np_fn, doc, float_only=False):
    def infer(v):
        x = v["x"]
        (need_float if float_only else need_numeric)(v, "x", name)
        axes = norm_axes(v["axis"], x.ndim, name)
        if axes is None:
            axes = tuple(range(x.ndim))
        if v["keepdims"]:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return TensorType(shape, x.dtype)

    def build(v):
        axis = v["axis"]
        axis = None if axis is None else ([axis] if isinstance(axis, int) else list(axis))
        return getattr(_R(), name)(v["x"], axis=axis, keepdims=bool(v["keepdims"]))

    op(name, [T("x"), Param("axis", "axes", None), Param("keepdims", "bool", False)], infer, build,
       lambda v: np_fn(v["x"], axis=v["axis"], keepdims=v["keepdims"]), doc, "reduction")


_reduction("sum", np.sum, "sum over axis (all axes when None)")
_reduction("mean", np.mean, "mean over axis (all axes when None)", float_only=True)
_reduction("max", np.max, "largest value over axis")
_reduction("min", np.min, "smallest value over axis")

#: Python operator spelling -> table entry, for the front end.
BINARY_SYMBOLS = {o.symbol: o for o in OPS.values() if o.symbol}


def reference_markdown() -> str:
    """The operator reference for the docs, generated from the table."""
    lines = ["# Operator reference", "",
             "Generated from `mlclab/ops.py` by `python -m mlclab.ops`; do not edit by hand.", ""]
    categories: dict = {}
    for o in OPS.values():
        categories.setdefault(o.category, []).append(o)
    for cat, ops in categories.items():
        lines += [f"## {cat.capitalize()}", "", "| operator | also written | what it computes |",
                  "| --- | --- | --- |"]
        for o in ops:
            lines.append(f"| `{o.signature()}` | {f'`{o.symbol}`' if o.symbol else ''} | {o.doc} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference_markdown(), end="")
