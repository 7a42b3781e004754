"""A blocked convolution that reads a channel join's parts instead of a copy of the join.

SqueezeNet's Fire modules end in a join of two expansions along the channels, and the next
convolution (the next Fire's squeeze, or the classifier) reads that join.  Lowered one
operator at a time the join is a kernel of its own that copies both parts whole (28 us at
55 x 55 on one core, ~50 us over the six joins a call, and six kernel calls), and the copy
is read once.  ``read_join_parts`` rewrites ``conv2d(concat(parts))`` -- blocked, no
padding, one group, the join read by nothing else -- into one kernel whose input is the
parts: its reduction over input channel blocks reads block ``c`` from the part holding it.
Written plainly that is a choice per load; the CPU schedule (``schedules.blocked``) splits
the loop over input channel blocks at the parts' boundaries (``channel_blocks.JOIN_PARTS`` marks the
join's block with them), so each piece reads one part unconditionally.  The sum runs over
the same terms in the same order as the convolution of the copy, so the results are the
same bits.  Runs after ``conv_layout.block_conv_layout``, before legalization.
"""
from __future__ import annotations

import functools

# Whether ``read_join_parts`` rewrites (off: the join is copied, then convolved).
READ_PARTS = True
# The kernel's name (the fused kernel's begins with it).
NAME = "conv2d_NCHWc_parts"


def read_join_parts():
    """The module pass (module doc)."""
    import tvm

    from .fold_batchnorm import rewrite_matched_bindings

    @tvm.transform.module_pass(opt_level=0, name="mlclab.ReadJoinParts")
    def rewrite(mod, _ctx):
        if not READ_PARTS:
            return mod
        return rewrite_matched_bindings(mod, _matches, _parts_conv_call)

    return rewrite


def _matches(block) -> dict:
    """conv var -> (parts, weight, strides) for each blocked ``conv2d(concat(parts), w)``
    of the dataflow ``block`` that ``read_join_parts`` rewrites."""
    from tvm import relax

    from .channel_blocks import is_blocked
    from .fold_batchnorm import binding_uses
    from .relax_exprs import dtype_of, op_name, static_shape

    value_of = {b.var: b.value for b in block.bindings}
    uses = binding_uses(block)

    matches = {}
    for b in block.bindings:
        call = b.value
        if not isinstance(call, relax.Call) or op_name(call) != "relax.nn.conv2d":
            continue
        a = call.attrs
        data, weight = call.args
        cat = value_of.get(data)
        if not is_blocked(a.data_layout) or int(a.groups) != 1 \
                or any(int(p) for p in a.padding) or any(int(d) != 1 for d in a.dilation) \
                or not isinstance(data, relax.DataflowVar) or uses.get(data, 0) != 1 \
                or not isinstance(cat, relax.Call) or op_name(cat) != "relax.concat":
            continue
        parts = value_of.get(cat.args[0], cat.args[0])
        joined, out, kernel = static_shape(data), static_shape(b.var), static_shape(weight)
        if not isinstance(parts, relax.Tuple) or len(parts.fields) < 2 or joined is None \
                or out is None or kernel is None or len(joined) != 5 \
                or int(cat.attrs.axis) % 5 != 1:
            continue
        shapes = [static_shape(p) for p in parts.fields]
        if any(s is None or len(s) != 5 or s[:1] + s[2:] != joined[:1] + joined[2:]
               for s in shapes) \
                or any(dtype_of(v) != "float32" for v in (b.var, data, weight, *parts.fields)):
            continue
        matches[b.var] = (parts, weight, tuple(int(s) for s in a.strides))
    return matches


def _parts_conv_call(match):
    """``(prim_func, name, args)`` of the one kernel a matched ``conv2d(concat(parts))``
    becomes (``rewrite_matched_bindings``), its join left dead."""
    from .relax_exprs import static_shape

    parts, weight, strides = match
    shapes = tuple(tuple(static_shape(p)) for p in parts.fields)
    func = _parts_conv_primfunc(shapes, tuple(static_shape(weight)), strides)
    return func, NAME, [*parts.fields, weight]


@functools.lru_cache(maxsize=64)
def _parts_conv_primfunc(shapes: tuple, kernel: tuple, strides: tuple):
    """The PrimFunc of the blocked convolution (``conv_layout``'s lowering, unchanged) of
    the join of blocked float32 inputs of ``shapes`` by a weight of shape ``kernel``: the
    join a block of its own, marked ``JOIN_PARTS``, that the schedule inlines."""
    from tvm import te, tirx

    from .channel_blocks import JOIN_PARTS
    from .conv_layout import _conv2d_nchwc

    def i64(dims):   # Relax's shapes are int64: FuseTIR matches the buffers to them
        return [tirx.IntImm("int64", d) for d in dims]

    inputs = [te.placeholder(i64(s), "float32", name=f"x{i}") for i, s in enumerate(shapes)]
    weight = te.placeholder(i64(kernel), "float32", name="w")
    ends = []
    for s in shapes:
        ends.append((ends[-1] if ends else 0) + s[1])
    joined = i64((shapes[0][0], ends[-1], *shapes[0][2:]))

    def join(n, c, y, x, e):
        value = inputs[-1][n, c - ends[-2], y, x, e]
        for i in range(len(inputs) - 2, -1, -1):
            start = ends[i - 1] if i else 0
            value = tirx.if_then_else(c < ends[i], inputs[i][n, c - start, y, x, e], value)
        return value

    data = te.compute(joined, join, name="T_concat", attrs={JOIN_PARTS: ends[:-1]})
    out = _conv2d_nchwc(data, weight, list(strides), [0, 0, 0, 0])
    func = te.create_prim_func([*inputs, weight, out])
    # a convolution whose epilogue FuseOps may fuse (the pattern of the join's copy
    # followed by it is not one AnnotateTIROpPattern finds)
    return func.without_attr("global_symbol").with_attr("op_pattern", 4)  # kOutEWiseFusable
