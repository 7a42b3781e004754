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
