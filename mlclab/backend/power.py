"""``power`` by a constant 2 or 3 as multiplications: GPT-2's GELU, written out as Hugging
Face writes it (``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3))))``), cubes
every activation, and TVM's ``power`` is a libm ``powf`` call per element that LLVM cannot
vectorise: the fused GELU kernel of a 128-token GPT-2 prefill ran at 0.05 GB/s, under 1 % of
the memory roof, and took a third of the model's time.

For float32 the product is taken in float64 and rounded once, which is the correctly
rounded power, as glibc's ``powf`` (what TVM's lowering calls) gives it: the values do not
change, only the speed. (PyTorch computes ``x * x * x`` in float32, two roundings; numpy's
SIMD ``power`` is within a few ulp.) Any other exponent or dtype keeps TVM's lowering.
"""
from __future__ import annotations

# exponent -> how many factors of x
_SMALL = {2.0: 2, 3.0: 3}


def constant_exponent(expr):
    """The exponent of ``power(x, expr)`` as a float when ``expr`` is a 0-d (or one-element)
    constant, else None."""
    from tvm.ir.expr import Constant

    if not isinstance(expr, Constant) or expr.value.numpy().size != 1:
        return None
    return float(expr.value.numpy().reshape(()))


def legalize_power(bb, call):
    """``relax.power`` with a constant exponent 2 or 3 on float32 as float64 products."""
    import tvm
    from tvm import te

    x, exponent = call.args
    factors = _SMALL.get(constant_exponent(exponent))
    dtype = str(getattr(x.ty, "dtype", ""))
    if factors is None or dtype != "float32" or list(call.ty.shape.values) != \
            list(x.ty.shape.values):
        return tvm.ir.Op.get("relax.power").get_attr("FLegalize")(bb, call)

    def compute(t):
        def cube(*i):
            wide = t(*i).astype("float64")
            product = wide
            for _ in range(factors - 1):
                product = product * wide
            return product.astype("float32")
        return te.compute(t.shape, cube, name="T_power", tag="elemwise")

    return bb.call_te(compute, x, primfunc_name_hint="power")
