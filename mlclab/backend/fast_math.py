"""Lowerings of transcendental functions that vectorize, for the optimized CPU pipeline.

TVM lowers ``erf`` to a call of libm's ``erff`` per element: LLVM has no vector erf, so a
GELU (``x * Phi(x)``, the exact-erf GELU of BERT, ViT and DeiT) ran one scalar libm call per
element, 0.1-0.2 GFLOP/s -- the largest kernel of DeiT-tiny after its matmuls were tiled.
Here GELU's erf is TVM's own ``topi.fast_erf``: the rational approximation Eigen uses, exact
to float32 rounding on [-4, 4] and clamped to +-1 outside (where erf is +-1 in float32),
made of multiply-adds that vectorize.  Infinities and NaN give what the exact GELU gives
(NaN stays NaN: ``x * anything``).  Only float32; other dtypes keep TVM's lowering.
"""
from __future__ import annotations

import math

from ..ops.strict import fence, isnan


def legalize_gelu(bb, call):
    """``relax.nn.gelu`` as ``x * (0.5 + 0.5 * fast_erf(x / sqrt(2)))`` for float32, one
    expression whose intermediates are ``Let``s: ``x`` is read once, so the inliner folds
    the GELU (and a bias add before it) into a matmul's epilogue.  As two blocks (the
    scaled input stored, then the GELU reading it once per polynomial term) the register
    tiles declined a ``Linear`` + GELU kernel -- two epilogue blocks -- and it ran as plain
    loops: 197x192 -> 768 took 18 ms on one core, 0.23 ms tiled."""
    import tvm
    from tvm import te, tirx

    x = call.args[0]
    if str(getattr(x.ty, "dtype", "")) != "float32":
        return tvm.ir.Op.get("relax.nn.gelu").get_attr("FLegalize")(bb, call)

    def gelu(t):
        def at(*i):
            v = tirx.Var("gelu_x", "float32")
            half = tirx.const(0.5, "float32")
            erf = fast_erf_expr(v * tirx.const(1 / math.sqrt(2), "float32"))
            return tirx.Let(v, t(*i), v * (half + half * erf))
        return te.compute(t.shape, at, name="T_gelu", tag="elemwise")

    return bb.call_te(gelu, x, primfunc_name_hint="gelu")


# TVM's ``topi.fast_erf`` (Eigen's rational approximation, ``tirx/op/math.cc``), written
# out here so that it applies to an expression: ``p(x) / q(x)`` on ``x`` clamped to [-4, 4].
_ERF_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
              -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
              -1.60960333262415e-02)
_ERF_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
             -7.37332916720468e-03, -1.42647390514189e-02)


def fast_erf_expr(arg):
    """``topi.fast_erf`` of a float32 TIR expression, the same operations in the same
    order (so the same results), with ``x`` and ``x * x`` as ``Let``s: ``arg`` is read
    once."""
    from tvm import tirx

    def f32(value):
        return tirx.const(value, "float32")

    x, x2 = tirx.Var("erf_x", "float32"), tirx.Var("erf_x2", "float32")
    p = x2 * f32(_ERF_ALPHA[0]) + f32(_ERF_ALPHA[1])
    for alpha in _ERF_ALPHA[2:]:
        p = x2 * p + f32(alpha)
    q = x2 * f32(_ERF_BETA[0]) + f32(_ERF_BETA[1])
    for beta in _ERF_BETA[2:]:
        q = x2 * q + f32(beta)
    clamped = tirx.Max(tirx.Min(arg, f32(4.0)), f32(-4.0))
    return tirx.Let(x, clamped, tirx.Let(x2, x * x, x * p / q))


# The annotation on softmax's row maximum: it is only ever subtracted from its own row, so
# the order its terms are compared in cannot change the softmax (``schedules.row_reductions``
# vectorizes it within the row).  Any order finds the same maximum, except which of +0 and
# -0 (the shifted values are then equal up to the sign of zero, and exp of either is 1) and
# which number when the row holds a NaN (the NaN then makes every shifted value of the row,
# the sum and so every output NaN, whatever the maximum).
ORDER_FREE_MAX = "mlclab.order_free_max"


def legalize_softmax(bb, call):
    """``relax.nn.softmax`` with a vectorizable exp for float32: TVM's ``exp`` is a libm call
    per element (LLVM has no vector exp either), which made attention's softmax the largest
    kernel of DeiT-tiny once its matmuls were tiled.  ``topi.fast_exp`` (a degree-7
    polynomial after range reduction, ~1e-7 relative) of ``x - max(x)``, which is never
    positive; NaN stays NaN, ``-inf`` gives 0, and below ~-88 (where exp is a float32
    denormal) a number smaller than 1e-38 instead."""
    import tvm
    from tvm import te, tirx, topi

    x = call.args[0]
    if str(getattr(x.ty, "dtype", "")) != "float32":
        return tvm.ir.Op.get("relax.nn.softmax").get_attr("FLegalize")(bb, call)
    axis = int(call.attrs.axis)

    def compute(t):
        ndim = len(t.shape)
        ax = axis % ndim

        def row(i):  # the index of the reduced row an element belongs to
            return [*i[:ax], *i[ax + 1:]]

        reduced = [*t.shape[:ax], *t.shape[ax + 1:]]
        k = te.reduce_axis((0, t.shape[ax]), name="k")
        biggest = te.compute(reduced, lambda *r: te.max(t(*r[:ax], k, *r[ax:]), axis=k),
                             name="T_softmax_maxelem", attrs={ORDER_FREE_MAX: 1})
        shifted = te.compute(t.shape, lambda *i: t(*i) - biggest(*row(i)), name="shifted")
        fast = topi.fast_exp(shifted)
        exp = te.compute(t.shape, lambda *i: tirx.Select(isnan(shifted(*i)), shifted(*i),
                                                         fast(*i)), name="T_softmax_exp")
        k2 = te.reduce_axis((0, t.shape[ax]), name="k")
        total = te.compute(reduced, lambda *r: te.sum(exp(*r[:ax], k2, *r[ax:]), axis=k2),
                           name="T_softmax_expsum")
        return te.compute(t.shape, lambda *i: exp(*i) / total(*row(i)), name="T_softmax_norm")

    return bb.call_te(compute, x, primfunc_name_hint="softmax")



# ----------------------------------------------------------------------------- sigmoid
# exp(t) for t <= 0 as Cephes' expf does it (the polynomial TVM's ``topi.fast_exp`` uses):
# t = n*ln2 + f with n = round(t / ln2) and |f| <= ln2/2, exp(f) by a degree-7 polynomial,
# 2**n built in the exponent bits.  Within ~2 ulp of libm's expf wherever exp(t) is a normal
# float32; t is clamped at -88, where n reaches -127 and 2**n's exponent bits are 0: exp of
# t below ~-87.7 is exactly 0 (the true value is a denormal, under 1.2e-38).
_LOG2E = 1.44269504088896341
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4   # ln 2 in two parts (Cody-Waite)
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
             1.6666665459e-1, 5.0000001201e-1)
_EXP_FLOOR = -88.0


def exp_nonpositive(t):
    """``exp(t)`` of a float32 TIR expression ``t <= 0`` (or -inf) in multiply-adds, a floor
    and integer bit operations, all of which vectorize (see the constants above).  Every
    intermediate is a ``Let``, so ``t`` is read once and the expression stays small."""
    from tvm import tirx

    def f32(value):
        return tirx.const(value, "float32")

    def let(name, value, body):
        var = tirx.Var(name, "float32")
        return tirx.Let(var, value, body(var))

    def with_n(c):
        def with_f(n):
            def poly(f):
                y = f32(_EXP_POLY[0])
                for p in _EXP_POLY[1:]:
                    y = y * f + f32(p)
                y = y * f * f + f + f32(1.0)
                exponent = tirx.Cast("int32", n) + tirx.const(127, "int32")
                two_n = tirx.reinterpret("float32", exponent << tirx.const(23, "int32"))
                return y * two_n
            return let("exp_f", c - n * f32(_LN2_HI) - n * f32(_LN2_LO), poly)
        return let("exp_n", tirx.floor(c * f32(_LOG2E) + f32(0.5)), with_f)

    return let("exp_t", tirx.Max(t, f32(_EXP_FLOOR)), with_n)


def sigmoid_expr(x):
    """``sigmoid(x)`` of a float32 TIR expression, read once: with ``e = exp(-|x|)`` (which
    never overflows), ``1 / (1 + e)`` for ``x >= 0`` and ``e / (1 + e)`` below, so small
    results keep their relative accuracy.  NaN stays NaN, +-inf give 1 and 0.  One division
    of the numerator the sign picks: ``e * (1 / (1 + e))`` rounded twice and cost a multiply
    and a select more (a SiLU of 1 x 96 x 56 x 56 on one Zen 4 core 132 -> 97 us; within
    2.36 ulp of float64 against 2.66 before)."""
    from tvm import tirx

    v = tirx.Var("sigmoid_x", "float32")
    one = tirx.const(1.0, "float32")
    e = tirx.Var("sigmoid_e", "float32")
    s = tirx.Var("sigmoid_s", "float32")
    numerator = tirx.Select(v >= tirx.const(0.0, "float32"), one, e)
    body = tirx.Let(e, exp_nonpositive(-tirx.abs(v)),
                    tirx.Let(s, numerator / (one + e), tirx.Select(isnan(v), v, s)))
    return tirx.Let(v, x, body)


def _float32(call) -> bool:
    return str(getattr(call.args[0].ty, "dtype", "")) == "float32"


def _tvm_legalize(op_name: str):
    import tvm

    return tvm.ir.Op.get(op_name).get_attr("FLegalize")


def legalize_sigmoid(bb, call):
    """``relax.sigmoid`` without a libm ``expf`` call per element (``sigmoid_expr``): the
    sigmoid of EfficientNet's SiLU and of squeeze-excite's gate.  TVM's own sigmoid keeps
    the scalar call, which LLVM cannot vectorize."""
    from tvm import te

    if not _float32(call):
        return _tvm_legalize("relax.sigmoid")(bb, call)
    return bb.call_te(lambda t: te.compute(t.shape, lambda *i: sigmoid_expr(t(*i)),
                                           name="T_sigmoid", tag="elemwise"),
                      call.args[0], primfunc_name_hint="tir_sigmoid")


def legalize_silu(bb, call):
    """``relax.nn.silu`` as ``x * sigmoid(x)`` with ``sigmoid_expr``: one element-wise
    block, ``x`` read once."""
    from tvm import te, tirx

    if not _float32(call):
        return _tvm_legalize("relax.nn.silu")(bb, call)

    def silu(t):
        def at(*i):
            v = tirx.Var("silu_x", "float32")
            return tirx.Let(v, t(*i), v * sigmoid_expr(v))
        return te.compute(t.shape, at, name="T_silu", tag="elemwise")

    return bb.call_te(silu, call.args[0], primfunc_name_hint="silu")


# ----------------------------------------------------------------------------- tanh
# tanh as Cephes' tanhf computes it: below 0.625 in magnitude an odd polynomial, x + x*s*P(s)
# with s = x*x (no cancellation near 0, so denormal and tiny inputs come back as themselves);
# above, 1 - 2e/(1 + e) with e = exp(-2|x|) from ``exp_nonpositive``, which never overflows
# (TVM's own lowering takes exp(2x) and exp(-2x) through libm for every element, and LLVM
# scalarizes both calls).  Both are computed on |x| and the sign copied back from x, so
# tanh is exactly odd and tanh(-0.0) is -0.0.
_TANH_SMALL = 0.625
_TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
              -3.33332819422e-1)


# FuseOps' pattern for a tanh kernel: "out-element-wise fusable", as a convolution, so the
# element-wise operators after it join its kernel but a second tanh does not.  Compile time
# was exponential in the number of ``exp_nonpositive`` chained in one expression: 2 links of
# ``h = tanh(h * 0.9 + 0.1)`` compiled in 0.07 s, 3 in 5.6 s, 5 in over 300 s.  The cause is
# TVM's code generator re-expanding the Lets (schedules/inline.py, ``MAX_LET_NESTING``, which
# now bounds the sigmoid family); this per-kernel rule predates it.  60 links in 3 s.
_ONE_PER_KERNEL = 4


def tanh_expr(x):
    """``tanh(x)`` of a float32 TIR expression, read once, in multiply-adds, one division
    and ``exp_nonpositive``: vector code.  NaN stays NaN, +-inf give +-1."""
    from tvm import tirx

    def f32(value):
        return tirx.const(value, "float32")

    v, a, s, e = (tirx.Var(f"tanh_{n}", "float32") for n in ("x", "a", "s", "e"))
    poly = f32(_TANH_POLY[0])
    for p in _TANH_POLY[1:]:
        poly = poly * s + f32(p)
    small = poly * s * a + a
    large = f32(1.0) - f32(2.0) * e / (f32(1.0) + e)
    magnitude = tirx.Select(a < f32(_TANH_SMALL), small, large)
    # x's sign bit on the magnitude (TVM's vectorizer refuses ``copysign``, and inside a
    # strict kernel's fences LLVM's does not vectorize the loop either)
    sign = tirx.bitwise_and(tirx.reinterpret("int32", v), tirx.const(-2 ** 31, "int32"))
    signed = tirx.reinterpret("float32", tirx.bitwise_or(
        tirx.reinterpret("int32", magnitude), sign))
    body = tirx.Select(isnan(v), v, signed)
    return tirx.Let(v, fence(x), tirx.Let(a, tirx.abs(v), tirx.Let(s, v * v, tirx.Let(
        e, exp_nonpositive(f32(-2.0) * a), body))))


def legalize_tanh(bb, call):
    """``relax.tanh`` without a libm call per element (``tanh_expr``) for float32: the tanh
    of GPT-2's GELU as Hugging Face writes it out, and of Mish."""
    from tvm import te

    if not _float32(call):
        return _tvm_legalize("relax.tanh")(bb, call)
    return bb.call_te(lambda t: te.compute(t.shape, lambda *i: tanh_expr(t(*i)),
                                           name="T_tanh", tag="elemwise"),
                      call.args[0], primfunc_name_hint="tir_tanh",
                      primfunc_attrs={"op_pattern": _ONE_PER_KERNEL})


def legalize_gelu_tanh(bb, call):
    """``relax.nn.gelu_tanh`` (PyTorch's ``F.gelu(x, approximate="tanh")``, GPT-2's MLP) as
    TVM writes it, ``0.5 * x * (1 + tanh(sqrt(2/pi) * x * (1 + 0.044715 * x * x)))``, with
    ``tanh_expr`` for float32: TVM's tanh took libm's ``expf`` twice per element."""
    from tvm import te, tirx

    if not _float32(call):
        return _tvm_legalize("relax.nn.gelu_tanh")(bb, call)

    def f32(value):
        return tirx.const(value, "float32")

    def gelu(t):
        def at(*i):
            v = tirx.Var("gelu_x", "float32")
            inner = f32(math.sqrt(2.0 / math.pi)) * v * (f32(1.0) + f32(0.044715) * v * v)
            return tirx.Let(v, t(*i), f32(0.5) * v * (f32(1.0) + tanh_expr(inner)))
        return te.compute(t.shape, at, name="T_gelu_tanh", tag="elemwise")

    return bb.call_te(gelu, call.args[0], primfunc_name_hint="gelu_tanh",
                      primfunc_attrs={"op_pattern": _ONE_PER_KERNEL})
