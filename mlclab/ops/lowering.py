"""TVM legalizations replaced where TVM's answer differs from numpy's.

TVM lowers ``max``-like operators to ``select(a > b, a, b)``: NaN > b is false, so
``relu(nan)`` is 0, ``maximum(nan, 1.0)`` is 1.0 and ``max`` of a row holding NaN is a number,
where numpy says NaN, and ``validate`` would blame a correct program. Wrapping the Relax calls in
``where(isnan(x), ...)`` fixes the values but adds bindings to every relu
(``fused_matmul_add_relu`` would become ``fused_matmul_add_isnan_relu_where``, lesson 8's
traffic count would change, lesson 4's softmax would print five more lines). So these operators
keep their one Relax binding, as the student wrote them, and get a NaN-aware lowering here, with
TVM's PrimFunc names: relu is ``select(x <= 0, 0, x)``, maximum/minimum one broadcasting
select, max/min one reduction whose combiner lets NaN win, max_pool2d pools the NaN mask too.
Integer tensors take TVM's own lowering. ``mlclab.backend.passes`` hands ``LEGALIZE`` to
LegalizeOps.
"""
from __future__ import annotations

from .strict import broadcast, fence, isnan


def relu_of(value, dtype: str):
    """relu of one element as the operator table computes it: NaN stays NaN."""
    from tvm import tirx

    zero = tirx.const(0, dtype)
    # numpy's maximum(x, 0) on the tie -0.0 vs 0: float16 keeps x (-0.0), others 0.
    # The kept x is fenced for float16: where relu fed a float16 floor division, the
    # unfenced select came out of LLVM as a max, which answers the tie with +0.0 (not
    # TVM's no-NaNs option, which is not in force on x86: docs/performance.md section
    # 13). tests/test_numerics_differential.py's FOUND keeps `y // relu(x)`.
    if str(dtype) == "float16":
        return tirx.Select(value < zero, zero, fence(value))
    return tirx.Select(value <= zero, zero, value)


def _relu(bb, call):
    from tvm import te

    def compute(x):
        return te.compute(x.shape, lambda *i: relu_of(x(*i), x.dtype), name="compute",
                          tag="elemwise")

    return bb.call_te(compute, call.args[0], primfunc_name_hint="relu")


def _max_pool2d(bb, call):
    """TVM's max pool, and the same pool over the NaN mask: a window that holds a NaN gives
    NaN, as numpy's max does. One PrimFunc, so max_pool2d stays one Relax binding."""
    from tvm import te, tirx, topi

    a = call.attrs
    if a.out_layout != a.layout:
        return call                        # TVM's legalization refuses this case too

    def compute(x):
        def pool(v):
            return topi.nn.pool2d(v, kernel=a.pool_size, stride=a.strides, dilation=a.dilation,
                                  padding=a.padding, pool_type="max", ceil_mode=a.ceil_mode,
                                  layout=a.layout)

        out = pool(x)
        if not str(x.dtype).startswith("float"):
            return out
        nans = pool(topi.cast(topi.isnan(x), x.dtype))
        nan = tirx.const(float("nan"), x.dtype)
        return te.compute(out.shape, lambda *i: tirx.Select(nans(*i) > tirx.const(0, x.dtype),
                                                            nan, out(*i)), name="keep_nan")

    return bb.call_te(compute, call.args[0], primfunc_name_hint="max_pool2d")


def _nan_reduction(name: str):
    """max/min over axes as one reduction whose combiner lets NaN win, as numpy's does.
    TVM's reducer is ``max(acc, v)`` (NaN lost) and starts from the lowest finite float, so
    ``max`` of an all ``-inf`` slice was -3.4e38; this one starts from -inf (+inf for min)."""

    def legalize(bb, call):
        from tvm import te, tirx, topi

        axis = None if call.attrs.axis is None else [int(a) for a in call.attrs.axis]
        keepdims = bool(call.attrs.keepdims)

        def compute(x):
            if not str(x.dtype).startswith("float"):
                return getattr(topi, name)(x, axis=axis, keepdims=keepdims)
            ndim = len(x.shape)
            axes = set(range(ndim)) if axis is None else {a % ndim for a in axis}
            wins = (lambda v, acc: v > acc) if name == "max" else (lambda v, acc: v < acc)
            start = float("-inf") if name == "max" else float("inf")
            reducer = te.comm_reducer(
                lambda acc, v: tirx.Select(tirx.Or(isnan(v), wins(v, acc)), v, acc),
                lambda dtype: tirx.const(start, dtype), name=f"nan_{name}")
            k = {a: te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in sorted(axes)}
            kept = [i for i in range(ndim) if keepdims or i not in axes]

            def body(*out):
                at = dict(zip(kept, out))
                return reducer(x[tuple(k[i] if i in axes else at[i] for i in range(ndim))],
                               axis=list(k.values()))

            shape = [1 if i in axes else x.shape[i] for i in kept]
            return te.compute(shape, body, name=f"{x.name}_red")

        return bb.call_te(compute, call.args[0], primfunc_name_hint=name)

    return legalize


def _arg_reduction(name: str):
    """argmax/argmin as numpy computes them: the first index of the best value. TVM's reducer
    starts from (-1, the lowest finite value) and keeps it on a tie, so a slice of only -inf
    (a fully masked attention row) or only the dtype's minimum gave index -1; here the start
    index -1 loses to any element. NaN is handled around this call (ops/reductions.py)."""

    def legalize(bb, call):
        from tvm import te, tirx

        axis = call.attrs.axis
        keepdims = bool(call.attrs.keepdims)

        def compute(x):
            ndim = len(x.shape)
            axes = list(range(ndim)) if axis is None else [int(axis) % ndim]
            better = (lambda v, acc: v > acc) if name == "argmax" else (lambda v, acc: v < acc)

            def combine(acc, new):
                take = tirx.Or(acc[0] < tirx.const(0, "int64"), tirx.Or(
                    better(new[1], acc[1]), tirx.And(new[1] == acc[1], new[0] < acc[0])))
                return tirx.Select(take, new[0], acc[0]), tirx.Select(take, new[1], acc[1])

            def identity(index_dtype, value_dtype):
                return tirx.const(-1, index_dtype), te.min_value(value_dtype)

            reducer = te.comm_reducer(combine, identity, name=name)
            k = {a: te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in axes}
            kept = [i for i in range(ndim) if keepdims or i not in axes]

            def body(*out):
                at = dict(zip(kept, out))
                flat = tirx.const(0, "int64")
                for a in axes:          # row-major position among the reduced axes
                    flat = flat * x.shape[a].astype("int64") + k[a].astype("int64")
                value = x[tuple(k[i] if i in axes else at[i] for i in range(ndim))]
                return reducer((flat, value), axis=[k[a] for a in axes])

            shape = [1 if i in axes else x.shape[i] for i in kept]
            return te.compute(shape, body, name=f"{x.name}_{name}")[0]

        return bb.call_te(compute, call.args[0], primfunc_name_hint=name)

    return legalize


def _nan_binary(name: str):
    """maximum/minimum with numpy's broadcasting, NaN if either operand is: one element-wise
    loop, as TVM's own (which is ``select(a > b, a, b)`` and drops a NaN in ``a``)."""

    def legalize(bb, call):
        from tvm import tirx, topi

        def compute(a, b):
            if not str(a.dtype).startswith("float"):
                return getattr(topi, name)(a, b)
            # On a tie (+0 and -0) numpy's float32/64 loops keep x2, its float16 loop x1
            if str(a.dtype) == "float16":
                wins = (lambda u, v: u >= v) if name == "maximum" else (lambda u, v: u <= v)
            else:
                wins = (lambda u, v: u > v) if name == "maximum" else (lambda u, v: u < v)
            return broadcast(name, lambda u, v: tirx.Select(tirx.Or(isnan(u), wins(u, v)), u, v),
                             a, b)

        return bb.call_te(compute, *call.args, primfunc_name_hint=name)

    return legalize


def _full(bb, call):
    """``full``/``full_like`` with an inf or NaN fill (an attention mask's ``-inf``): TVM's
    legalization hands ``topi.full`` the dtype as a ``PrimType``, whose check for inf and NaN
    then fails with a TypeError; here it gets the dtype's name. Finite fills take TVM's own."""
    import math

    from tvm import ir, relax, topi
    from tvm.relax.transform.legalize_ops.common import _try_convert_to_scalar_const

    value = _try_convert_to_scalar_const(call.args[1], python_native=True)
    shape = call.args[0].ty.shape if call.op.name == "relax.full_like" else call.args[0]
    if not isinstance(value, float) or math.isfinite(value) \
            or not isinstance(shape, relax.ShapeExpr):
        return ir.Op.get(call.op.name).get_attr("FLegalize")(bb, call)
    return bb.call_te(topi.full, list(shape.values), str(call.ty.dtype), value,
                      primfunc_name_hint="full")


def _f32_accumulated(name: str):
    """sum/mean/variance/std and the average pools of float16 or bfloat16 accumulated in
    float32 and rounded once, as PyTorch does and numpy's mean does: a float16 accumulator
    stops at 2048 when adding ones (2048 + 1 rounds back to 2048), and TVM's averages divide
    by the count as a float16 literal, which it refuses above 65504. Other dtypes take TVM's
    own lowering."""

    def legalize(bb, call):
        import tvm
        from tvm.relax import op as R

        x = call.args[0]
        dtype = str(x.ty.dtype)
        if dtype not in ("float16", "bfloat16"):
            return tvm.ir.Op.get(call.op.name).get_attr("FLegalize")(bb, call)
        wide = bb.normalize(R.astype(x, "float32"))
        reduced = tvm.relax.Call(call.op, [wide], call.attrs)
        return R.astype(bb.normalize(reduced), dtype)

    return legalize


#: Relax operator name -> legalization, for ``LegalizeOps(customize_legalize_map=...)``.
LEGALIZE = {"relax.nn.relu": _relu, "relax.nn.max_pool2d": _max_pool2d,
            "relax.max": _nan_reduction("max"), "relax.min": _nan_reduction("min"),
            "relax.maximum": _nan_binary("maximum"), "relax.minimum": _nan_binary("minimum"),
            "relax.full": _full, "relax.full_like": _full,
            "relax.argmax": _arg_reduction("argmax"), "relax.argmin": _arg_reduction("argmin"),
            **{f"relax.{name}": _f32_accumulated(name)
               for name in ("sum", "mean", "variance", "std", "nn.avg_pool2d",
                            "nn.adaptive_avg_pool2d")}}
