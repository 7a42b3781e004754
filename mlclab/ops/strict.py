"""Strict lowerings: element-wise arithmetic and comparisons that compute what numpy computes.

Below mlclab, two layers change answers (issue 31):

- TVM's TIR simplifier treats floats as real numbers and integers as unbounded. It runs when
  a kernel is built (``x * 0.0`` is folded to ``0`` as the expression is made), when a
  schedule inlines one operator into the next, and in the TIR pipeline: ``(x + c) - c`` becomes
  ``x``, ``x + 0.0`` becomes ``x`` (wrong for -0.0), ``x != x`` becomes False and
  ``not (x < y)`` becomes ``y <= x`` (wrong for NaN), ``(i + 1) > i`` becomes True.
- LLVM, as TVM configures it, contracts ``a * b + c`` into one fused multiply-add (one
  rounding instead of numpy's two) and treats signed overflow as impossible (TVM emits ``nsw``).

So in strict mode (the default) these operators are lowered here instead of by TVM:

- every floating result, its second operand and a constant first operand go through LLVM's
  ``llvm.arithmetic.fence``: an identity that the simplifier cannot see through (an opaque
  call) and that LLVM neither contracts nor reassociates across. It emits no instruction.
  (The second operand too, so ``x - x`` has two different sides and is not folded to 0.)
- float comparisons say what happens to NaN (``x != x`` is ``isnan(x) or x != x``), so a
  rewrite that is only right for numbers is right for NaN too;
- int32 ``+ - *`` and negation are computed in int64 and wrapped back, int64 ``+ -`` in
  32-bit halves: numpy's two's-complement wrap-around, with no overflow for LLVM to assume away;
- float ``//`` and ``%`` are numpy's ``divmod`` (``fmod`` with the sign fix; ``inf // 2`` is
  NaN), float16 computed in float32 and rounded, as numpy does.

Reductions inside matmul, convolution and sums keep LLVM's fused multiply-adds: numpy's own
(OpenBLAS) use them, and their order of summation is not numpy's either, so their results are
numpy's within the bound docs/operators.md states. ``fast_math=True`` skips this table.
"""
from __future__ import annotations

import functools

FLOATS = ("float16", "float32", "float64")


def _dtype_of(value) -> str:
    """A TIR expression's dtype (a te element ``x[i]`` has ``dtype``, a scalar ``Var`` only
    ``ty``)."""
    try:
        return str(value.ty.dtype)
    except AttributeError:
        return str(value.dtype)


def fence(value):
    """``value`` unchanged, hidden from TVM's simplifier and LLVM's contraction (floats)."""
    from tvm import tirx

    dtype = _dtype_of(value)
    if dtype not in FLOATS:
        return value
    return tirx.call_llvm_pure_intrin(dtype, "llvm.arithmetic.fence", value)


# float dtype -> (the integer of its width, the mask of all but the sign, +inf's bits)
_NAN_BITS = {"float16": ("int16", 0x7FFF, 0x7C00),
             "float32": ("int32", 0x7FFFFFFF, 0x7F800000),
             "float64": ("int64", 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}


def isnan(value):
    """``value`` is NaN, tested on its bits (the magnitude above +inf's). TVM's own
    ``tirx.isnan`` is not vectorized by TVM (LLVM's loop vectorizer does it afterwards), so
    inside a ``fence`` -- which LLVM's vectorizer does not know -- a whole loop ran scalar."""
    from tvm import tirx

    dtype = _dtype_of(value)
    if dtype not in _NAN_BITS:
        return tirx.isnan(value)
    itype, mask, inf = _NAN_BITS[dtype]
    bits = tirx.reinterpret(itype, value)
    return tirx.bitwise_and(bits, tirx.const(mask, itype)) > tirx.const(inf, itype)


@functools.cache
def _fence_id() -> int:
    """LLVM's number for ``llvm.arithmetic.fence`` (the first argument of its TIR call)."""
    from tvm import tirx

    return int(fence(tirx.Var("x", "float32")).args[0].value)


def is_fence(node) -> bool:
    """Whether the TIR expression ``node`` is a ``fence``: it costs nothing, so the schedules
    count only its operand (inlining a fenced ``a + b`` is as cheap as inlining ``a + b``)."""
    from tvm.ir import Call

    op = getattr(node, "op", None)
    return (isinstance(node, Call) and getattr(op, "name", "") ==
            "tirx.call_llvm_pure_intrin" and len(node.args) == 2
            and int(getattr(node.args[0], "value", -1)) == _fence_id())


def _is_float(dtype) -> bool:
    return str(dtype) in FLOATS


def broadcast(name: str, fn, a, b):
    """``fn(u, v)`` over the numpy broadcast of ``a`` and ``b`` (te tensors, or scalar
    ``IntImm``/``FloatImm`` constants), as one element-wise loop."""
    from tvm import te, tirx

    def shape(t):
        return list(t.shape) if isinstance(t, te.Tensor) else []

    def one(d):
        return isinstance(d, tirx.IntImm) and d.value == 1

    ndim = max(len(shape(a)), len(shape(b)))
    pa = [None] * (ndim - len(shape(a))) + shape(a)
    pb = [None] * (ndim - len(shape(b))) + shape(b)
    out = [q if p is None or (one(p) and q is not None) else p for p, q in zip(pa, pb)]

    def at(t, idx):
        if not isinstance(t, te.Tensor):
            return t
        off = ndim - len(t.shape)
        # 0 only where this operand is broadcast: an axis of 1 in the output too is read at
        # its index, so an operand of the output's shape reads element-wise (FuseOps then
        # treats the kernel as element-wise, not broadcast, and fuses it into a convolution)
        return t[tuple(tirx.const(0, "int64") if one(d) and not one(out[k + off])
                       else idx[k + off] for k, d in enumerate(t.shape))]

    return te.compute(out, lambda *idx: fn(at(a, idx), at(b, idx)), name=f"T_{name}",
                      tag="broadcast")


def _operands(call):
    """The call's two arguments, a scalar constant one as a TIR constant (as TVM's own
    binary legalization does: no buffer load per element)."""
    from tvm.relax.transform.legalize_ops.common import (_is_relax_expr,
                                                         _try_convert_to_scalar_const)

    a, b = call.args
    b = _try_convert_to_scalar_const(b)
    if _is_relax_expr(b):
        a = _try_convert_to_scalar_const(a)
    return a, b


def _dtype(call) -> str:
    return str(call.args[0].ty.dtype)


def _tvm(bb, call):
    import tvm

    return tvm.ir.Op.get(call.op.name).get_attr("FLegalize")(bb, call)


# ------------------------------------------------------------------------------ arithmetic
def _wrapping(op, dtype):
    """``op`` on two values of an integer ``dtype``, wrapping as numpy's does."""
    from tvm import tirx

    if dtype == "int32":
        def wide(u, v):
            return tirx.Cast("int32", op(tirx.Cast("int64", u), tirx.Cast("int64", v)))
        return wide
    return op


def _add64(u, v, sign=1):
    """int64 ``u + v`` (``u - v`` for sign=-1) modulo 2**64 without a signed overflow: the low
    and high 32-bit halves are added separately, each far from int64's limits."""
    from tvm import tirx

    low_mask = tirx.const(0xFFFFFFFF, "int64")
    thirty_two = tirx.const(32, "int64")
    lo = (u & low_mask) + (v & low_mask) if sign > 0 else (u & low_mask) - (v & low_mask)
    hi_u, hi_v = tirx.shift_right(u, thirty_two), tirx.shift_right(v, thirty_two)
    hi = (hi_u + hi_v if sign > 0 else hi_u - hi_v) + tirx.shift_right(lo, thirty_two)
    # (hi << 32) wraps: a shift carries no overflow assumption
    return tirx.bitwise_or(tirx.shift_left(hi, thirty_two), lo & low_mask)


def float_arithmetic(op):
    """The strict element function of a float ``+ - * /`` (``op`` from ``operator``): what
    the legalization below computes per element, for a kernel written by hand that must
    give the same bits (``backend.concat``'s concatenation with a batch norm)."""
    def fn(u, v):
        # The second operand fenced too: ``x - x`` would be folded to 0 (NaN for inf)
        # inside the result's fence, since both sides are the same expression; and a
        # constant first operand, as ``0.0 * x`` is folded as it is built.
        return fence(op(fence(u) if _const(u) else u, fence(v)))
    return fn


def _arithmetic(name: str, op):
    def legalize(bb, call):
        dtype = _dtype(call)
        if _is_float(dtype):
            fn = float_arithmetic(op)
        elif dtype == "int32" and name in ("add", "subtract", "multiply"):
            fn = _wrapping(op, dtype)
        elif dtype == "int64" and name in ("add", "subtract"):
            fn = lambda u, v: _add64(u, v, 1 if name == "add" else -1)  # noqa: E731
        else:
            return _tvm(bb, call)
        a, b = _operands(call)
        return bb.call_te(lambda x, y: broadcast(name, fn, x, y), a, b,
                          primfunc_name_hint=name)

    return legalize


def _const(value) -> bool:
    from tvm import tirx

    return isinstance(value, (tirx.FloatImm, tirx.IntImm))


def _negative(bb, call):
    """numpy's negative: TVM's is ``0 - x``, which is +0.0 for x = +0.0 (numpy: -0.0) and
    overflows for the smallest integer. Floats multiply by -1 (a sign flip, LLVM's ``fneg``);
    int32 wraps through int64."""
    from tvm import te, tirx

    dtype = _dtype(call)
    if _is_float(dtype):
        minus_one = tirx.const(-1.0, dtype)
        fn = lambda v: fence(v * fence(minus_one))  # noqa: E731
    elif dtype == "int32":
        fn = lambda v: tirx.Cast("int32", tirx.const(0, "int64") - tirx.Cast("int64", v))  # noqa
    elif dtype == "int64":
        fn = lambda v: _add64(tirx.const(0, "int64"), v, -1)  # noqa: E731
    else:
        return _tvm(bb, call)
    return bb.call_te(lambda x: te.compute(x.shape, lambda *i: fn(x(*i)), name="T_negative",
                                           tag="elemwise"), call.args[0],
                      primfunc_name_hint="negative")


# ------------------------------------------------------------------------------ // and %
def _divmod(u, v, dtype, part: str):
    """numpy's ``divmod`` of two floats (npy_divmod): the floor quotient (``part="div"``) or
    the remainder (``"mod"``).

    ``mod = fmod(u, v)``; the quotient ``(u - mod) / v`` is then an exact integer up to
    rounding; a remainder whose sign differs from the divisor's moves one divisor over; a
    zero remainder takes the divisor's sign. ``v == 0`` gives ``u / v`` and ``fmod``'s NaN.
    Each intermediate is bound once (``Let``): a TIR expression is a tree, and a value used
    five times would be computed five times (libm's ``fmod`` included)."""
    from tvm import tirx

    f = fence
    zero, one, half = (tirx.const(c, dtype) for c in (0.0, 1.0, 0.5))
    names = ("a", "b", "mod", "ratio", "div", "div_fixed", "floor")
    a, b, mod, ratio, div, div_fixed, floor = (tirx.Var(f"divmod_{n}", dtype) for n in names)

    def truthy(t):       # C's ``if (t)``: NaN counts (TVM's ``!=`` is ordered, False for NaN)
        return tirx.Or(t != zero, isnan(t))

    b_neg, mod_neg = b < zero, mod < zero      # (bools: no ``!=`` on them, LLVM refuses it)
    fix = tirx.And(truthy(mod), tirx.Or(tirx.And(b_neg, tirx.Not(mod_neg)),
                                        tirx.And(tirx.Not(b_neg), mod_neg)))
    by_zero = b == zero
    if part == "mod":
        result = tirx.Select(by_zero, mod, tirx.Select(
            fix, f(mod + b), tirx.Select(truthy(mod), mod, tirx.copysign(zero, b))))
    else:
        rounded = tirx.Select(f(div_fixed - floor) > half, f(floor + one), floor)
        quotient = tirx.Select(truthy(div_fixed), rounded, tirx.copysign(zero, ratio))
        # a / b bound outside the select on b == 0: inside its branch the simplifier would
        # put +0.0 for b, and a / -0.0 is -inf
        result = tirx.Let(ratio, f(a / b), tirx.Let(div, f(f(a - mod) / b), tirx.Let(
            div_fixed, tirx.Select(fix, f(div - one), div), tirx.Let(
                floor, f(tirx.floor(div_fixed)), tirx.Select(by_zero, ratio, quotient)))))
    # libm's fmod, exact (TVM's tirx.fmod has no LLVM lowering)
    fmod = tirx.call_pure_extern(dtype, "fmodf" if dtype == "float32" else "fmod", a, b)
    # the operands fenced too: an inlined producer's definition (relu's select) let the
    # simplifier reason about b, and -0.0 became +0.0
    return tirx.Let(a, f(u), tirx.Let(b, f(v), tirx.Let(mod, f(fmod), result)))


def _floor_div_mod(name: str):
    def legalize(bb, call):
        from tvm import tirx

        dtype = _dtype(call)
        if not _is_float(dtype):
            return _tvm(bb, call)
        # float16 as numpy computes it: in float32, rounded once at the end
        work = "float32" if dtype == "float16" else dtype
        part = "div" if name == "floor_divide" else "mod"

        def fn(u, v):
            u, v = (tirx.Cast(work, t) if dtype != work else t for t in (u, v))
            return tirx.Cast(dtype, _divmod(u, v, work, part))

        a, b = _operands(call)
        return bb.call_te(lambda x, y: broadcast(name, fn, x, y), a, b,
                          primfunc_name_hint=name)

    return legalize


# ------------------------------------------------------------------------------ comparisons
def _comparison(name: str, op):
    """A float comparison with NaN spelled out: ordered comparisons are False for NaN,
    ``!=`` True, so ``not (x < y)`` stays True for NaN after any rewrite of the simplifier's
    (LLVM folds the extra tests back into one compare)."""

    def legalize(bb, call):
        from tvm import tirx

        if not _is_float(_dtype(call)):
            return _tvm(bb, call)

        def fn(u, v):
            if name == "not_equal":
                return tirx.Or(op(u, v), tirx.Or(isnan(u), isnan(v)))
            return tirx.And(op(u, v), tirx.Not(tirx.Or(isnan(u), isnan(v))))

        a, b = _operands(call)
        return bb.call_te(lambda x, y: broadcast(name, fn, x, y), a, b,
                          primfunc_name_hint=name)

    return legalize


def _ops():
    import operator

    return {
        "relax.add": _arithmetic("add", operator.add),
        "relax.subtract": _arithmetic("subtract", operator.sub),
        "relax.multiply": _arithmetic("multiply", operator.mul),
        "relax.divide": _arithmetic("divide", operator.truediv),
        "relax.negative": _negative,
        "relax.floor_divide": _floor_div_mod("floor_divide"),
        "relax.floor_mod": _floor_div_mod("floor_mod"),
        "relax.equal": _comparison("equal", operator.eq),
        "relax.not_equal": _comparison("not_equal", operator.ne),
        "relax.less": _comparison("less", operator.lt),
        "relax.less_equal": _comparison("less_equal", operator.le),
        "relax.greater": _comparison("greater", operator.gt),
        "relax.greater_equal": _comparison("greater_equal", operator.ge),
    }


#: Relax operator name -> strict legalization (``LegalizeOps(customize_legalize_map=...)``),
#: used unless the program asked for ``fast_math``.
STRICT = _ops()


# ------------------------------------------------------------------------------ the promise
#: Operators whose numpy result is exactly rounded (or exact), so strict mode matches numpy
#: bit for bit, NaN, infinities and the sign of zero included (tests/test_numerics_differential).
EXACT = ("`+ - * / // %`, negative, abs, comparisons, `where`, maximum, minimum, relu, max, "
         "min, sqrt, floor, round, sign, astype, and the integer operators (wrapping on "
         "overflow)")

#: float dtype -> (ulps, absolute): an operator computed with libm or an approximation of
#: TVM's or mlclab's (exp, log, tanh, sigmoid, softmax, gelu, erf, ...) is within ``ulps``
#: units in the last place of numpy's result, or within ``absolute`` of it (near zero, where
#: a result numpy gives as a tiny or denormal number may be 0). NaN and infinities are where
#: numpy's are.
ULP_BOUND = {"float16": (2, 1e-3), "float32": (4, 1e-6), "float64": (4, 1e-15)}

#: Reductions (sum, mean, var, std, matmul, convolutions) add in another order than numpy's
#: pairwise summation (and use fused multiply-adds, as numpy's BLAS does): within
#: ``REDUCTION_BOUND`` x (the number of terms) x eps x (the sum of the magnitudes).
REDUCTION_BOUND = 1.0


def guarantees_markdown() -> str:
    """The section of docs/operators.md that says what strict and fast-math promise."""
    bound = ", ".join(f"{d}: {u} ulp or {a:g} absolute" for d, (u, a) in ULP_BOUND.items())
    return "\n".join([
        "## Numerics: strict by default, fast-math on request",
        "",
        "**Strict** (the default): compiled code computes what numpy computes, per IEEE 754 "
        "and numpy's integer rules. No rewrite may change a value: TVM's simplifier does not "
        "see through float arithmetic (`(x + 1e30) - 1e30` is 0, `x * 0.0` is NaN for inf "
        "and NaN, `x + 0.0` keeps -0.0), comparisons keep NaN's answers (`x != x` is True "
        "for NaN, `~(x < y)` too), `a * b - c` is two roundings, not one fused multiply-add, "
        "integers wrap as numpy's do (`(x + 1) > x` is False for the largest int32), `%` and "
        "`//` on floats are numpy's `divmod` (`fmod` with the sign fix; `inf // 2` is NaN), "
        "float16 sums and means accumulate in float32.",
        "",
        f"- Bit for bit (NaN, inf and the sign of zero included): {EXACT}.",
        f"- Transcendental functions: {bound} of numpy's value; NaN and infinities where "
        f"numpy has them. GELU (both forms), softmax, sigmoid, SiLU and float32 tanh use "
        f"vectorized approximations of erf, exp and tanh (backend/fast_math.py) in both "
        f"modes: they are within this bound (tanh within 1 ulp of the correctly rounded value "
        f"for every float32), so strict keeps their speed.",
        f"- Reductions, matmul and convolutions: within {REDUCTION_BOUND:g} x n x eps x "
        f"sum(|terms|) of numpy (another summation order; fused multiply-adds inside "
        f"dot products, as numpy's BLAS uses).",
        "",
        "int64 `*` keeps TVM's lowering (LLVM assumes it does not overflow).",
        "",
        "**Fast-math** (`mlclab.compile(src, fast_math=True)`, "
        "`@mlclab.function(fast_math=True)`, `%%tinynn --fast-math`): TVM's own lowering of "
        "arithmetic and comparisons, its simplifier treating floats as real numbers and "
        "integers as unbounded, and LLVM contracting `a * b + c` into one fused "
        "multiply-add. Faster where those rewrites remove work; answers may differ from "
        "numpy's in the cases above. The pipeline view (`fn.pipeline()`) and the cell header "
        "say when it is on; the compile cache keys it.",
        "",
    ])
