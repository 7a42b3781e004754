"""Concatenation lowered as one copy per input, for the optimized CPU pipeline.

TVM lowers ``concat`` to one loop over the output whose every element picks its input with
a chain of ``if_then_else`` -- one level per input.  Fused with what follows and vectorized
across the whole output, every vector lane makes that choice on its own: LLVM emits a masked
gather from each input for each vector, and a DenseNet-121 concatenation of up to 32 inputs
took 0.3-0.5 s of LLVM code generation each (58 of them: about half of its compile time).

Here each input is copied by a block of its own into its slice of the output: no choice per
element, contiguous loads and stores, and a kernel whose code grows linearly with its inputs.
The values are the inputs' own, moved, so the results are exactly TVM's.  A concatenation
with a symbolic size, mixed dtypes or a single input keeps TVM's lowering.
"""
from __future__ import annotations

import functools


def legalize_concat(bb, call):
    """LegalizeOps' rule for ``relax.concat``: one copy block per input (module doc)."""
    import tvm
    from tvm import relax

    parts = call.args[0]
    shapes = _static_shapes(parts)
    out = call.ty
    if shapes is None or len(shapes) < 2 or not isinstance(out, relax.TensorType) \
            or any(str(f.ty.dtype) != str(out.dtype) for f in parts.fields):
        return tvm.ir.Op.get("relax.concat").get_attr("FLegalize")(bb, call)
    axis = int(call.attrs.axis) % len(shapes[0])
    func = _concat_primfunc(tuple(shapes), axis, str(out.dtype))
    gv = bb.add_func(func, "concatenate")
    return relax.call_tir(gv, list(parts.fields), out)


def _static_shapes(parts):
    """The inputs' shapes as tuples of ints, or None (not a tuple of static tensors)."""
    from tvm import relax

    if not isinstance(parts, relax.Tuple):
        return None
    shapes = []
    for field in parts.fields:
        ty = field.ty
        if not isinstance(ty, relax.TensorType) or ty.shape is None \
                or not hasattr(ty.shape, "values"):
            return None
        dims = [getattr(d, "value", None) for d in ty.shape.values]
        if any(d is None for d in dims):
            return None
        shapes.append(tuple(int(d) for d in dims))
    return shapes


@functools.lru_cache(maxsize=256)
def _concat_primfunc(shapes: tuple, axis: int, dtype: str):
    """The PrimFunc copying inputs of ``shapes`` into their slices of the output along
    ``axis``.  Made with TVMScript's IR builder, not parsed from text: parsing took ~170 ms a
    concatenation, as long as the code generation this module saves (cached too: a network
    repeats its concatenations)."""
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as T
    from tvm.tirx import IntImm

    def dims(shape):
        return [IntImm("int64", d) for d in shape]

    rank = len(shapes[0])
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    with IRBuilder() as builder:
        with T.prim_func(private=True, s_tir=True):
            T.func_name("concatenate")
            inputs = [T.arg(f"x{i}", T.Buffer(dims(s), dtype)) for i, s in enumerate(shapes)]
            out = T.arg("T_concat", T.Buffer(dims(out_shape), dtype))
            T.func_attr({"tirx.noalias": True})
            offset = 0
            for i, (x, shape) in enumerate(zip(inputs, shapes)):
                with T.grid(*dims(shape)) as loops:
                    with T.sblock(f"T_concat_{i}"):
                        v = T.axis.remap("S" * rank, loops)
                        at = [iv + IntImm("int64", offset) if k == axis and offset else iv
                              for k, iv in enumerate(v)]
                        T.reads(x[tuple(v)])
                        T.writes(out[tuple(at)])
                        T.buffer_store(out, x[tuple(v)], at)
                offset += shape[axis]
    return builder.get()
