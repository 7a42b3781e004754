"""Concatenation lowered as one copy per input, for the optimized CPU pipeline.

TVM lowers ``concat`` to one loop over the output whose every element picks its input with
a chain of ``if_then_else`` -- one level per input.  Fused with what follows and vectorized
across the whole output, every vector lane makes that choice on its own: LLVM emits a masked
gather from each input for each vector, and a DenseNet-121 concatenation of up to 32 inputs
took 0.3-0.5 s of LLVM code generation each (58 of them: about half of its compile time).

Here each input is copied by a block of its own into its slice of the output, as one
contiguous run per index of the axes before the concatenated one: no choice per element,
contiguous loads and stores, and a kernel whose code grows linearly with its inputs.
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
    ``axis``.  Each input, and the output, is viewed as ``(outer, inner)`` -- the axes before
    ``axis``, and ``axis`` with those after it -- so each copy is one contiguous run per
    outer index (for batch 1 and axis 1, a single run): a 4-d view made the vectorized copy
    compute every lane's indices with divisions, and LLVM took as long over those copies as
    over the choice they replace.  Made with TVMScript's IR builder, not parsed from text
    (parsing took ~170 ms a concatenation), and cached: a network repeats its
    concatenations."""
    import math

    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as T
    from tvm.tirx import IntImm

    def dims(shape):
        return [IntImm("int64", d) for d in shape]

    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    outer = math.prod(shapes[0][:axis])
    inners = [math.prod(s[axis:]) for s in shapes]
    with IRBuilder() as builder:
        with T.prim_func(private=True, s_tir=True):
            T.func_name("concatenate")
            inputs = [T.arg(f"x{i}", T.Buffer(dims(s), dtype)) for i, s in enumerate(shapes)]
            out = T.arg("T_concat", T.Buffer(dims(out_shape), dtype))
            T.func_attr({"tirx.noalias": True})
            flat_out = T.decl_buffer(dims([outer, sum(inners)]), dtype, data=out.data)
            offset = 0
            for i, (x, inner) in enumerate(zip(inputs, inners)):
                flat = T.decl_buffer(dims([outer, inner]), dtype, data=x.data)
                with T.grid(*dims([outer, inner])) as loops:
                    with T.sblock(f"T_concat_{i}"):
                        row, col = T.axis.remap("SS", loops)
                        at = [row, col + IntImm("int64", offset)] if offset else [row, col]
                        T.reads(flat[row, col])
                        T.writes(flat_out[tuple(at)])
                        T.buffer_store(flat_out, flat[row, col], at)
                offset += inner
    return builder.get()
