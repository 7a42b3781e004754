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


# --------------------------------------------------------------------- with a batch norm
# The name of the kernel that concatenates blocked tensors and applies a folded batch norm
# and a ReLU on the way (``fuse_concat_norm_relu``).
NORM_RELU_NAME = "concatenate_multiply_add_relu"
# Its schedule, as the build record names it (the kernel is written scheduled).
NORM_RELU_RULE = "concat_norm_relu"
# Whether ``fuse_concat_norm_relu`` rewrites (the old path -- a copy, then the batch norm
# and ReLU over the copy -- is kept for measuring against).
FUSE_NORM_RELU = True


def fuse_concat_norm_relu(fast_math: bool = False):
    """A module pass: ``relu(concat(parts) * scale + shift)`` of blocked (``NCHW[x]c``)
    tensors joined along the channels, with per-channel constant ``scale`` and ``shift``
    (a folded inference batch norm) and nothing else reading the intermediates, becomes one
    kernel that reads each part once and writes the normalised result into its slice.

    DenseNet's pre-activation layers are exactly this: each layer joins every earlier
    feature map, then a batch norm and a ReLU over the join.  Lowered one operator at a
    time that is a copy of the whole map and a second pass over it (two kernels, the map
    written twice and read twice); the copy is pure movement.  Each element is computed
    by the same expressions in the same order as the operators' own lowerings
    (``ops.strict.float_arithmetic``, ``ops.lowering.relu_of``), so the results are the
    same bits.  Runs after ``conv_layout.block_conv_layout``, before legalization."""
    import tvm

    from .fold_batchnorm import rewrite_matched_bindings

    @tvm.transform.module_pass(opt_level=0, name="mlclab.FuseConcatNormRelu")
    def fuse(mod, _ctx):
        if not FUSE_NORM_RELU:
            return mod
        return rewrite_matched_bindings(
            mod, _norm_relu_matches, lambda match: _norm_relu_call(match, fast_math))

    return fuse


def _norm_relu_matches(block) -> dict:
    """relu var -> (parts, scale, shift) for each ``relu(concat(parts) * scale + shift)``
    of the dataflow ``block`` that ``fuse_concat_norm_relu`` rewrites."""
    from tvm import relax

    from .fold_batchnorm import binding_uses
    from .relax_exprs import dtype_of, is_constant, op_name, static_shape

    value_of = {b.var: b.value for b in block.bindings}
    uses = binding_uses(block)

    def single(var, name):
        """The call ``var`` is bound to, if it is ``name``'s and read only by one binding
        of this block (a ``DataflowVar``: nothing outside the block sees it)."""
        value = value_of.get(var)
        if not isinstance(var, relax.DataflowVar) or not isinstance(value, relax.Call) \
                or op_name(value) != name or uses.get(var, 0) != 1:
            return None
        return value

    matches = {}
    for b in block.bindings:
        if not isinstance(b.value, relax.Call) or op_name(b.value) != "relax.nn.relu":
            continue
        add = single(b.value.args[0], "relax.add")
        mul = single(add.args[0], "relax.multiply") if add is not None else None
        cat = single(mul.args[0], "relax.concat") if mul is not None else None
        if cat is None:
            continue
        parts = value_of.get(cat.args[0], cat.args[0])
        out = static_shape(b.var)
        if not isinstance(parts, relax.Tuple) or len(parts.fields) < 2 or out is None \
                or len(out) != 5 or int(cat.attrs.axis) % 5 != 1:
            continue
        shapes = [static_shape(p) for p in parts.fields]
        channel = (1, out[1], 1, 1, out[4])
        scale, shift = mul.args[1], add.args[1]
        if any(s is None or len(s) != 5 or s[:1] + s[2:] != out[:1] + out[2:]
               for s in shapes) or dtype_of(b.var) != "float32" \
                or any(dtype_of(p) != "float32" for p in parts.fields) \
                or not all(is_constant(c) and static_shape(c) == channel
                           and dtype_of(c) == "float32" for c in (scale, shift)):
            continue
        matches[b.var] = (parts, scale, shift)
    return matches


def _norm_relu_call(match, fast_math: bool):
    """``(prim_func, name, args)`` of the one kernel a matched ``relu(concat * scale + shift)``
    becomes (``rewrite_matched_bindings``)."""
    from .relax_exprs import static_shape

    parts, scale, shift = match
    shapes = tuple(tuple(static_shape(p)) for p in parts.fields)
    return (_norm_relu_primfunc(shapes, fast_math), NORM_RELU_NAME,
            [*parts.fields, scale, shift])


@functools.lru_cache(maxsize=256)
def _norm_relu_primfunc(shapes: tuple, fast_math: bool):
    """The PrimFunc of ``relu(concat(x...) * scale + shift)`` for blocked float32 inputs of
    ``shapes`` (``(n, c_i, h, w, block)``, joined along ``c``), written already scheduled:

        parallel n * channel blocks of the output    (serial when small)
          for each input i: if the block is one of input i's:
            for pixel (h * w)
              vector block:  out[.., offset_i + c, ..] = relu(x_i * scale + shift)

    A channel block's plane is one contiguous run in and out, and the choice of input is
    made once per channel block, not per element.  One parallel loop for all the inputs
    (DenseNet joins up to 48: a loop of threads per input would wake the workers that many
    times), no pass of the rule engine over its blocks, and loops long enough that LLVM
    does not unroll them whole: written plain, one block per input and scheduled by
    ``parallel_loops`` (per input: channel blocks x rows x vectors), DenseNet-121's 58 of
    them doubled its scheduling time, and LLVM unrolled each input's short loops whole
    (~7 s more JIT at the first call)."""
    import operator

    from tvm import tirx
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as T
    from tvm.tirx import IntImm

    from ..ops.lowering import relu_of
    from ..ops.strict import float_arithmetic
    from .schedules.apply import DECLINED_ATTR, SCHEDULE_ATTR
    from .schedules.tir_util import PARALLEL_MIN_ELEMENTS, worth_parallel

    if fast_math:    # TVM's own lowering of the two: the plain operators
        multiply, add = operator.mul, operator.add
    else:
        multiply, add = float_arithmetic(operator.mul), float_arithmetic(operator.add)

    def i64(d):
        return IntImm("int64", d)

    n, _, h, w, lanes = shapes[0]
    channels = sum(s[1] for s in shapes)
    blocks = (T.parallel if worth_parallel([n * channels * h * w * lanes],
                                           PARALLEL_MIN_ELEMENTS) else T.serial)
    zero = i64(0)
    with IRBuilder() as builder:
        with T.prim_func(private=True, s_tir=True):
            T.func_name(NORM_RELU_NAME)
            inputs = [T.arg(f"x{i}", T.Buffer([i64(d) for d in s], "float32"))
                      for i, s in enumerate(shapes)]
            per_channel = [i64(d) for d in (1, channels, 1, 1, lanes)]
            scale = T.arg("scale", T.Buffer(per_channel, "float32"))
            shift = T.arg("shift", T.Buffer(per_channel, "float32"))
            out = T.arg("T_relu", T.Buffer([i64(d) for d in (n, channels, h, w, lanes)],
                                           "float32"))
            T.func_attr({"tirx.noalias": True, "tirx.is_scheduled": True,
                         SCHEDULE_ATTR: NORM_RELU_RULE, DECLINED_ATTR: []})
            with blocks(i64(0), i64(n * channels)) as block:
                offset = 0
                for i, (x, shape) in enumerate(zip(inputs, shapes)):
                    in_part = block % i64(channels)
                    if offset:
                        in_part = in_part - i64(offset)
                    with T.If(tirx.all(in_part >= zero, in_part < i64(shape[1])) if offset
                              else in_part < i64(shape[1])):
                        with T.Then():
                            _norm_relu_plane(T, x, scale, shift, out, block, in_part,
                                             (n, channels, h, w, lanes), offset, f"T_concat_{i}",
                                             multiply, add, relu_of)
                    offset += shape[1]
    return builder.get()


def _norm_relu_plane(T, x, scale, shift, out, block, in_part, dims, offset, name,
                     multiply, add, relu_of):
    """One channel block's plane of one input, normalised into its place (the statement
    under ``_norm_relu_primfunc``'s choice of input)."""
    from tvm import tirx
    from tvm.tirx import IntImm

    def i64(d):
        return IntImm("int64", d)

    n, channels, h, w, lanes = dims
    zero = i64(0)
    with T.serial(i64(0), i64(h * w)) as pixel:
        with T.vectorized(i64(0), i64(lanes)) as lane:
            with T.sblock(name):
                b = T.axis.spatial(i64(n), block // i64(channels))
                c = T.axis.spatial(x.shape[1], in_part)
                y = T.axis.spatial(i64(h), pixel // i64(w))
                x_ = T.axis.spatial(i64(w), pixel % i64(w))
                e = T.axis.spatial(i64(lanes), lane)
                at = c + i64(offset) if offset else c
                channel = (zero, at, zero, zero, e)
                T.reads(x[b, c, y, x_, e], scale[channel], shift[channel])
                T.writes(out[b, at, y, x_, e])
                normed = tirx.Var("normed", "float32")
                value = add(multiply(x[b, c, y, x_, e], scale[channel]), shift[channel])
                T.buffer_store(out, tirx.Let(normed, value, relu_of(normed, "float32")),
                               [b, at, y, x_, e])
