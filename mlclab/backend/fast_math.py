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


def legalize_gelu(bb, call):
    """``relax.nn.gelu`` as ``x * (0.5 + 0.5 * fast_erf(x / sqrt(2)))`` for float32."""
    import tvm
    from tvm import te, tirx, topi

    x = call.args[0]
    if str(getattr(x.ty, "dtype", "")) != "float32":
        return tvm.ir.Op.get("relax.nn.gelu").get_attr("FLegalize")(bb, call)

    def compute(t):
        scaled = te.compute(t.shape, lambda *i: t(*i) * tirx.const(1 / math.sqrt(2), "float32"),
                            name="scaled", tag="elemwise")
        erf = topi.fast_erf(scaled)
        half = tirx.const(0.5, "float32")
        return te.compute(t.shape, lambda *i: t(*i) * (half + half * erf(*i)),
                          name="T_gelu", tag="elemwise")

    return bb.call_te(compute, x, primfunc_name_hint="gelu")


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
                             name="T_softmax_maxelem")
        shifted = te.compute(t.shape, lambda *i: t(*i) - biggest(*row(i)), name="shifted")
        fast = topi.fast_exp(shifted)
        exp = te.compute(t.shape, lambda *i: tirx.Select(tirx.isnan(shifted(*i)), shifted(*i),
                                                         fast(*i)), name="T_softmax_exp")
        k2 = te.reduce_axis((0, t.shape[ax]), name="k")
        total = te.compute(reduced, lambda *r: te.sum(exp(*r[:ax], k2, *r[ax:]), axis=k2),
                           name="T_softmax_expsum")
        return te.compute(t.shape, lambda *i: exp(*i) / total(*row(i)), name="T_softmax_norm")

    return bb.call_te(compute, x, primfunc_name_hint="softmax")

