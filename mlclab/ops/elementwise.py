"""Element-wise entries: functions of one tensor, arithmetic and comparisons (with their
Python spellings), where, astype."""
from __future__ import annotations

import numpy as np

from ..lang.typed import TensorType
from .entry import Args, Example, Op
from .numpy_ref import errors_ignored
from .params import DType, Number, OpTypeError, Param, tensor
from .rules import (R, broadcast_shapes, is_float, is_unsigned, keep_nan, need_numeric, relax,
                    same_as_input, same_dtype, short)

X = [tensor("x")]
X_POSITIVE = [tensor("x", domain="positive")]
F23 = ((2, 3), "f32")
POSITIVE = {"low": 0.1, "high": 3.0}


# --------------------------------------------------------------------------- one tensor
def _negative_relax(a: Args):
    # Relax's negative multiplies by -1, which has no unsigned constant; 0 - x wraps modulo
    # 2**bits exactly as numpy's negative does.
    if is_unsigned(a.out.dtype):
        return R().subtract(relax().const(0, a.out.dtype), a.x)
    return R().negative(a.x)


UNARY = [
    Op(name="relu", params=X, rule=same_as_input(),
       relax=lambda a: R().nn.relu(a.x),         # NaN kept by its lowering (ops/lowering.py)
       numpy=lambda a: np.maximum(a.x, np.zeros((), a.x.dtype)),
       doc="max(x, 0), element by element; NaN stays NaN", category="elementwise",
       example=Example("relu(x)", x=F23)),
    Op(name="sigmoid", params=X, rule=same_as_input(float_only=True),
       relax=lambda a: R().sigmoid(a.x),
       numpy=lambda a: (1 / (1 + np.exp(-a.x))).astype(a.x.dtype),
       doc="1 / (1 + exp(-x))", category="elementwise", example=Example("sigmoid(x)", x=F23)),
    Op(name="tanh", params=X, rule=same_as_input(float_only=True), relax=lambda a: R().tanh(a.x),
       numpy=lambda a: np.tanh(a.x), doc="hyperbolic tangent", category="elementwise",
       example=Example("tanh(x)", x=F23)),
    Op(name="exp", params=X, rule=same_as_input(float_only=True), relax=lambda a: R().exp(a.x),
       numpy=lambda a: np.exp(a.x), doc="e to the power x", category="elementwise",
       example=Example("exp(x)", x=F23)),
    Op(name="log", params=X_POSITIVE, rule=same_as_input(float_only=True), relax=lambda a: R().log(a.x),
       numpy=lambda a: np.log(a.x), doc="natural logarithm", category="elementwise",
       example=Example("log(x)", x=F23, **POSITIVE)),
    Op(name="sqrt", params=X_POSITIVE, rule=same_as_input(float_only=True), relax=lambda a: R().sqrt(a.x),
       numpy=lambda a: np.sqrt(a.x), doc="square root", category="elementwise",
       example=Example("sqrt(x)", x=F23, **POSITIVE)),
    Op(name="abs", params=X, rule=same_as_input(), relax=lambda a: R().abs(a.x),
       numpy=lambda a: np.abs(a.x), doc="absolute value", category="elementwise",
       example=Example("abs(x)", x=((2, 3), "i32"))),
    Op(name="negative", params=X, rule=same_as_input(), relax=_negative_relax,
       numpy=lambda a: np.negative(a.x), doc="-x; unsigned ints wrap around, as in numpy",
       category="elementwise", symbol="-", folds=True,
       example=Example("-x", x=((2, 3), "u8"))),
]


# --------------------------------------------------------------------------- two tensors
def _spelled(a: Args, symbol) -> str:
    return f"'{symbol}'" if symbol else a.op


def arithmetic(symbol=None, float_only=None):
    """The rule of ``x1 <op> x2``: numbers, one dtype, numpy broadcasting. ``float_only``:
    the (message, hint) for integer operands, when the operator is defined on floats only."""

    def rule(a: Args) -> TensorType:
        need_numeric(a, "x1", a.op)
        need_numeric(a, "x2", a.op)
        dtype = same_dtype(a, ("x1", "x2"), _spelled(a, symbol))
        if float_only and not is_float(dtype):
            message, hint = float_only
            raise OpTypeError(message.format(short(dtype)), hint=hint)
        return TensorType(broadcast_shapes([a.x1.shape, a.x2.shape], _spelled(a, symbol)), dtype)

    return rule


def comparison(symbol):
    def rule(a: Args) -> TensorType:
        same_dtype(a, ("x1", "x2"), f"'{symbol}'")
        return TensorType(broadcast_shapes([a.x1.shape, a.x2.shape], f"'{symbol}'"), "bool")

    return rule


def _compare_relax(relax_name):
    """Comparisons of bool tensors go through int8: LLVM rejects TVM's float compare of i1."""

    def build(a: Args):
        x1, x2 = a.x1, a.x2
        if str(x1.ty.dtype) == "bool":
            x1, x2 = R().astype(x1, "int8"), R().astype(x2, "int8")
        return getattr(R(), relax_name)(x1, x2)

    return build


def _int_safe(relax_name):
    """``//`` and ``%``: numpy's answers (0 for a zero divisor) without the hardware trap.

    Integer division by zero, and INT_MIN // -1, raise SIGFPE on x86 and would kill the
    student's kernel. The divisor is made safe with arithmetic, not a select (a vectorizer may
    turn ``x // select(c, 1, y)`` back into a division by ``y``), and the result patched after.
    """

    def build(a: Args):
        op, rx = R(), relax()
        x, y = a.x1, a.x2
        dtype = a.out.dtype
        fn = getattr(op, relax_name)
        if is_float(dtype):
            return fn(x, y)
        zero = rx.const(0, dtype)
        y_zero = op.equal(y, zero)
        safe_y = op.add(y, op.astype(y_zero, dtype))                 # 0 -> 1
        if is_unsigned(dtype):
            return op.where(y_zero, zero, fn(x, safe_y))
        y_minus_one = op.equal(y, rx.const(-1, dtype))
        unsafe = op.logical_or(y_zero, y_minus_one)
        safe_y = op.add(safe_y, op.multiply(op.astype(y_minus_one, dtype),
                                            rx.const(2, dtype)))      # -1 -> 1
        safe = fn(x, safe_y)
        if relax_name == "floor_mod":
            return op.where(unsafe, zero, safe)
        # x // -1 is -x (wrapping like numpy for INT_MIN); x // 0 is 0.
        return op.where(y_zero, zero, op.where(y_minus_one, op.negative(x), safe))

    return build


def _both(fn):
    return lambda a: fn(a.x1, a.x2)


XX = [tensor("x1", scalar_ok=True), tensor("x2", scalar_ok=True)]
DIVISOR = [tensor("x1", scalar_ok=True), tensor("x2", scalar_ok=True, nonzero_literal=True)]
A_B = {"x1": ((2, 3), "f32"), "x2": ((3,), "f32")}

ARITHMETIC = [
    Op(name="add", params=XX, rule=arithmetic("+"), relax=lambda a: R().add(a.x1, a.x2),
       numpy=_both(np.add), doc="x1 + x2, with numpy broadcasting", category="elementwise",
       symbol="+", folds=True, example=Example("x1 + x2", **A_B)),
    Op(name="subtract", params=XX, rule=arithmetic("-"), relax=lambda a: R().subtract(a.x1, a.x2),
       numpy=_both(np.subtract), doc="x1 - x2", category="elementwise", symbol="-", folds=True,
       example=Example("x1 - x2", **A_B)),
    Op(name="multiply", params=XX, rule=arithmetic("*"), relax=lambda a: R().multiply(a.x1, a.x2),
       numpy=_both(np.multiply), doc="x1 * x2, element by element", category="elementwise",
       symbol="*", folds=True, example=Example("x1 * x2", **A_B)),
    Op(name="divide", params=DIVISOR,
       rule=arithmetic("/", float_only=("'/' divides floating-point tensors; these are {}",
                                        "use // for integer division, or astype(x, f32) first")),
       relax=lambda a: R().divide(a.x1, a.x2), numpy=_both(np.divide),
       doc="x1 / x2 (floating point)", category="elementwise", symbol="/", folds=True,
       example=Example("x1 / x2", x1=F23, x2=((3,), "f32"), low=0.5)),
    Op(name="power", params=XX,
       rule=arithmetic("**", float_only=("'**' is defined here on floating-point tensors; "
                                         "these are {}",
                                         "multiply (x * x), or astype(x, f32) first")),
       relax=lambda a: R().power(a.x1, a.x2), numpy=_both(np.power),
       doc="x1 ** x2 (floating point)", category="elementwise", symbol="**", folds=True,
       example=Example("x1 ** 2.0 + x1 ** x2", x1=F23, x2=F23, low=0.5)),
    Op(name="maximum", params=XX, rule=arithmetic(),
       relax=lambda a: R().maximum(a.x1, a.x2), numpy=_both(np.maximum),  # NaN: ops/lowering
       doc="element-wise larger of x1 and x2 (NaN if either is)", category="elementwise",
       example=Example("maximum(x1, x2)", **A_B)),
    Op(name="minimum", params=XX, rule=arithmetic(),
       relax=lambda a: R().minimum(a.x1, a.x2), numpy=_both(np.minimum),  # NaN: ops/lowering
       doc="element-wise smaller of x1 and x2 (NaN if either is)", category="elementwise",
       example=Example("minimum(x1, 0.0)", x1=F23)),
    Op(name="floor_divide", params=DIVISOR, rule=arithmetic("//"), relax=_int_safe("floor_divide"),
       numpy=errors_ignored(_both(np.floor_divide)),
       doc="x1 // x2, rounding down; 0 where x2 is 0 (as numpy)", category="elementwise",
       symbol="//", folds=True, example=Example("x1 // x2", x1=((2, 3), "i32"),
                                                x2=((2, 3), "i32"))),
    Op(name="mod", params=DIVISOR, rule=arithmetic("%"), relax=_int_safe("floor_mod"),
       numpy=errors_ignored(_both(np.mod)),
       doc="x1 % x2 with the sign of x2; 0 where x2 is 0 (as numpy)", category="elementwise",
       symbol="%", folds=True, example=Example("x1 % x2", x1=((2, 3), "i32"), x2=((2, 3), "i32"))),
]


def _where_rule(a: Args) -> TensorType:
    if a.condition.dtype != "bool":
        raise OpTypeError(f"where needs a bool condition, got {short(a.condition.dtype)}",
                          param="condition", hint="compare first, e.g. where(x > 0, x, 0.0)")
    dtype = same_dtype(a, ("x1", "x2"), "where")
    shape = broadcast_shapes([a.condition.shape, a.x1.shape, a.x2.shape], "where")
    return TensorType(shape, dtype)


CHOICE = [
    Op(name="where", params=[tensor("condition"), *XX], rule=_where_rule,
       relax=lambda a: R().where(a.condition, a.x1, a.x2),
       numpy=lambda a: np.where(a.condition, a.x1, a.x2),
       doc="x1 where condition is true, else x2", category="elementwise",
       example=Example("where(x1 > x2, x1, x2)", **A_B)),
    Op(name="astype", params=[tensor("x"), Param("dtype", DType())],
       rule=lambda a: TensorType(a.x.shape, a.dtype),
       relax=lambda a: R().astype(a.x, a.dtype), numpy=lambda a: np.asarray(a.x).astype(a.dtype),
       doc="x converted to dtype (e.g. astype(x, f32))", category="elementwise",
       example=Example("astype(x, i32)", x=F23)),
]


def _compare(name, symbol, np_fn):
    return Op(name=name, params=XX, rule=comparison(symbol), relax=_compare_relax(name),
              numpy=_both(np_fn), doc=f"x1 {symbol} x2, a bool tensor", category="comparison",
              symbol=symbol, example=Example(f"x1 {symbol} x2", **A_B))


COMPARISONS = [
    _compare("equal", "==", np.equal),
    _compare("not_equal", "!=", np.not_equal),
    _compare("less", "<", np.less),
    _compare("less_equal", "<=", np.less_equal),
    _compare("greater", ">", np.greater),
    _compare("greater_equal", ">=", np.greater_equal),
]



# --------------------------------------------------------------------------- more math
def _float_unary(name, relax_fn, np_fn, doc, params=X, **example):
    return Op(name=name, params=params, rule=same_as_input(float_only=True), relax=relax_fn,
              numpy=np_fn, doc=doc, category="elementwise",
              example=Example(f"{name}(x)", x=example.pop("x", F23), **example))


def _softplus_relax(a: Args):
    # float16 through float32: exp(x) overflows float16 from x = 11.1, below TVM's threshold
    # (20) for returning x itself, so softplus(12) was inf
    if a.out.dtype != "float16":
        return R().nn.softplus(a.x)
    return R().astype(R().nn.softplus(R().astype(a.x, "float32")), "float16")


def _log1p_relax(a: Args):
    # Relax has no log1p; log(1 + x) loses every digit for |x| < 1e-7. Goldberg's trick:
    # u = 1 + x is exact up to rounding, and log(u) * x / (u - 1) cancels that rounding.
    op, one = R(), relax().const(1.0, a.out.dtype)
    u = op.add(a.x, one)
    d = op.subtract(u, one)
    # log(u) * (x / d), not (log(u) * x) / d: that overflowed for x near the largest float;
    # an infinite u is log's (inf for +inf, NaN for -inf, as numpy's log1p(-inf))
    goldberg = op.where(op.isinf(u), op.log(u), op.multiply(op.log(u), op.divide(a.x, d)))
    return op.where(op.equal(d, relax().const(0.0, a.out.dtype)), a.x, goldberg)


def _expm1_relax(a: Args):
    # Kahan's trick: (u - 1) * x / log(u) with u = exp(x) is accurate near 0, where
    # exp(x) - 1 cancels; u == 1 means x is below rounding, and then expm1(x) is x.
    op, rx = R(), relax()
    one = rx.const(1.0, a.out.dtype)
    u = op.exp(a.x)
    d = op.subtract(u, one)
    # d * (x / log(u)), not (d * x) / log(u): that overflowed for x near exp's limit
    kahan = op.multiply(d, op.divide(a.x, op.log(u)))
    safe = op.where(op.isinf(u), u, kahan)                      # exp overflowed: inf, as numpy
    safe = op.where(op.equal(d, op.negative(one)), d, safe)     # exp underflowed: -1
    return op.where(op.equal(d, rx.const(0.0, a.out.dtype)), a.x, safe)


def _erf_numpy(x):
    from math import erf

    return np.vectorize(erf, otypes=[x.dtype])(x) if x.size else x.copy()


def _gelu_numpy(a: Args):
    x = a.x
    return (0.5 * x * (1.0 + _erf_numpy(x / np.sqrt(2.0).astype(x.dtype)))).astype(x.dtype)


def _sign_rule(a: Args) -> TensorType:
    need_numeric(a, "x", "sign")
    return a.x


MATH = [
    _float_unary("round", lambda a: R().round(a.x), lambda a: np.round(a.x),
                 "nearest integer, halves to even (numpy's round)", low=-4.0, high=4.0),
    _float_unary("floor", lambda a: R().floor(a.x), lambda a: np.floor(a.x),
                 "largest integer <= x"),
    _float_unary("ceil", lambda a: R().ceil(a.x), lambda a: np.ceil(a.x),
                 "smallest integer >= x"),
    Op(name="sign", params=X, rule=_sign_rule,
       relax=lambda a: keep_nan(R().sign(a.x), a.x), numpy=lambda a: np.sign(a.x),
       doc="-1, 0 or 1 by the sign of x (NaN stays NaN)", category="elementwise",
       example=Example("sign(x) * x", x=F23)),
    _float_unary("erf", lambda a: R().erf(a.x), lambda a: _erf_numpy(a.x),
                 "the error function (math.erf)"),
    _float_unary("gelu", lambda a: R().nn.gelu(a.x), _gelu_numpy,
                 "x * Phi(x) with the exact erf, PyTorch's default GELU"),
    _float_unary("sin", lambda a: R().sin(a.x), lambda a: np.sin(a.x), "sine (radians)"),
    _float_unary("cos", lambda a: R().cos(a.x), lambda a: np.cos(a.x), "cosine (radians)"),
    _float_unary("softplus", _softplus_relax,
                 lambda a: np.logaddexp(np.zeros((), a.x.dtype), a.x),
                 "log(1 + exp(x)), without overflow for large x", low=-30.0, high=30.0),
    _float_unary("silu", lambda a: R().nn.silu(a.x),
                 lambda a: (a.x / (1 + np.exp(-a.x))).astype(a.x.dtype),
                 "x * sigmoid(x) (also called swish)"),
    _float_unary("log1p", _log1p_relax, lambda a: np.log1p(a.x),
                 "log(1 + x), accurate for tiny x", params=[tensor("x", domain="> -1")],
                 low=-0.9, high=2.0),
    _float_unary("expm1", _expm1_relax, lambda a: np.expm1(a.x),
                 "exp(x) - 1, accurate for tiny x"),
]


def _clip_rule(a: Args) -> TensorType:
    need_numeric(a, "x", "clip")
    if a.a_min is None and a.a_max is None:
        raise OpTypeError("clip needs a_min or a_max (or both)", param="a_min")
    for n in ("a_min", "a_max"):
        v = a[n]
        if type(v) is bool:
            raise OpTypeError(f"clip's {n} must be a number, not {v}", param=n)
        if v is not None and type(v) is float and not is_float(a.x.dtype):
            raise OpTypeError(f"clip's {n} {v!r} is a float but {a.source('x')} is "
                              f"{short(a.x.dtype)}; mlclab does not promote dtypes silently",
                              param=n, hint="use an integer bound")
        if v is not None and not is_float(a.x.dtype):
            info = np.iinfo(a.x.dtype)
            if not info.min <= v <= info.max:
                raise OpTypeError(f"{v} does not fit in {short(a.x.dtype)}", param=n)
    return a.x


def _clip_relax(a: Args):
    # minimum(maximum(x, a_min), a_max): numpy's order, so a_min > a_max gives a_max.
    op, rx = R(), relax()
    out = a.x
    if a.a_min is not None:
        out = op.maximum(out, rx.const(a.a_min, a.out.dtype))
    if a.a_max is not None:
        out = op.minimum(out, rx.const(a.a_max, a.out.dtype))
    return keep_nan(out, a.x)


def _clip_numpy(a: Args):
    x = a.x
    bound = lambda v: None if v is None else np.asarray(v, x.dtype)  # noqa: E731
    out = x
    if a.a_min is not None:
        out = np.maximum(out, bound(a.a_min))
    if a.a_max is not None:
        out = np.minimum(out, bound(a.a_max))
    return out


CLIP = [
    Op(name="clip", params=[tensor("x"), Param("a_min", Number(), None),
                            Param("a_max", Number(), None)],
       rule=_clip_rule, relax=_clip_relax, numpy=_clip_numpy,
       doc="x limited to [a_min, a_max] (either may be None); relu6 is clip(x, 0.0, 6.0)",
       category="elementwise", example=Example("clip(x, -0.5, 1.0) + clip(x, None, 0.0)", x=F23)),
]


def _logical_rule(symbol):
    def rule(a: Args) -> TensorType:
        names = [p for p in ("x1", "x2", "x") if p in a.values]
        for n in names:
            if a[n].dtype != "bool":
                w = a.source(n)
                raise OpTypeError(
                    f"{_spelled(a, symbol)} combines bool masks, but {w} is {short(a[n].dtype)}",
                    param=n, hint=f"compare first, e.g. {w} > 0; bitwise ops on integers are "
                                  "not supported")
        return TensorType(broadcast_shapes([a[n].shape for n in names], _spelled(a, symbol)),
                          "bool")

    return rule


BB = {"x1": ((2, 3), "bool"), "x2": ((3,), "bool")}
LOGICAL = [
    Op(name="logical_and", params=XX, rule=_logical_rule("&"),
       relax=lambda a: R().logical_and(a.x1, a.x2), numpy=_both(np.logical_and),
       doc="true where both are true (bool masks)", category="logical", symbol="&",
       example=Example("x1 & x2", **BB)),
    Op(name="logical_or", params=XX, rule=_logical_rule("|"),
       relax=lambda a: R().logical_or(a.x1, a.x2), numpy=_both(np.logical_or),
       doc="true where either is true (bool masks)", category="logical", symbol="|",
       example=Example("x1 | x2", **BB)),
    Op(name="logical_xor", params=XX, rule=_logical_rule("^"),
       relax=lambda a: R().logical_xor(a.x1, a.x2), numpy=_both(np.logical_xor),
       doc="true where exactly one is true (bool masks)", category="logical", symbol="^",
       example=Example("x1 ^ x2", **BB)),
    Op(name="logical_not", params=X, rule=_logical_rule("~"),
       relax=lambda a: R().logical_not(a.x), numpy=lambda a: np.logical_not(a.x),
       doc="true where x is false (a bool mask)", category="logical", symbol="~",
       example=Example("~x", x=((2, 3), "bool"))),
]

ENTRIES = UNARY + ARITHMETIC + COMPARISONS + CHOICE + MATH + CLIP + LOGICAL
