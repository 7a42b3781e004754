"""Entries that move elements without computing (reshape, transpose...) and the reductions."""
from __future__ import annotations

import numpy as np

from ..lang import dims as D
from ..lang.typed import TensorType, TupleType
from .entry import Args, Example, Op
from .params import (Axes, Axis, Counts, Int, Number, OpTypeError, PadWidth, Param, Sections,
                     Shape, Tensors, axis_index, check_axis, tensor)
from .rules import R, broadcast_shapes, fmt_shape, relax, short

X234 = ((2, 3, 4), "f32")


def _reshape_target(x: TensorType, shape: tuple) -> tuple:
    if sum(1 for d in shape if d == -1) > 1:
        raise OpTypeError(f"reshape: at most one -1 in the new shape, got {fmt_shape(shape)}",
                          param="shape")
    if any(isinstance(d, int) and d < -1 for d in shape):
        raise OpTypeError(f"reshape: sizes must be non-negative (or one -1), got "
                          f"{fmt_shape(shape)}", param="shape")
    # Cancel the symbolic sizes both sides share; what is left must be static to compare.
    old = list(x.shape)
    for d in (d for d in shape if not isinstance(d, int)):
        if d not in old:
            raise OpTypeError(f"reshape: the new shape uses {d!r}, which x's shape "
                              f"{fmt_shape(x.shape)} does not contain", param="shape")
        old.remove(d)
    leftover = [d for d in old if not isinstance(d, int)]
    old_static = int(np.prod([d for d in old if isinstance(d, int)], dtype=np.int64))
    new_static = int(np.prod([d for d in shape if isinstance(d, int) and d != -1], dtype=np.int64))
    if -1 in shape:
        if leftover:
            fill = D.mul(D.product(leftover), old_static // new_static if new_static else 0)
            if new_static == 0 or old_static % new_static:
                raise OpTypeError(f"reshape: cannot fill -1 in {fmt_shape(shape)} from "
                                  f"{fmt_shape(x.shape)}", param="shape")
        else:
            if new_static == 0 or old_static % new_static:
                raise OpTypeError(
                    f"reshape: x has {old_static} elements, which is not a multiple of the "
                    f"{new_static} that {fmt_shape(shape)} fixes", param="shape")
            fill = old_static // new_static
        return tuple(fill if d == -1 else d for d in shape)
    if leftover or old_static != new_static:
        raise OpTypeError(
            f"reshape: x of shape {fmt_shape(x.shape)} has {D.format_dim(D.product(x.shape))} "
            f"elements, but {fmt_shape(shape)} holds {D.format_dim(D.product(shape))}",
            param="shape")
    return shape


def _reshape_relax(a: Args):
    """Relax's reshape reads a 0 in the new shape as "keep this dimension" (``(0, 3)`` to
    ``(5, -1)`` became ``(5, 3)``), and an empty constant does not survive TVM's build
    (measured on TVM 0.27; nor does a reduction of nothing, which TVM folds into one). So an
    empty result is built from x's own empty axis: x cut to that axis, turned into the new
    shape's first empty axis among size-1 ones, and broadcast, which reads nothing."""
    target = [getattr(d, "value", d) for d in a.out_shape]
    if 0 not in target:
        return R().reshape(a.x, a.out_shape)
    x_shape = [getattr(d, "value", d) for d in a.x.ty.shape.values]
    full_axes = [i for i, d in enumerate(x_shape) if d != 0]
    op = R()
    line = a.x
    if full_axes:                 # (0, 3) -> (0, 1) -> (0,)
        n = len(full_axes)
        line = op.squeeze(op.strided_slice(a.x, axes=full_axes, begin=[0] * n, end=[1] * n,
                                           assume_inbound=True), axis=full_axes)
    if len(x_shape) - len(full_axes) > 1:   # (0, 0) -> (0,): here a 0 that keeps a 0 is right
        line = op.reshape(relax().BlockBuilder.current().normalize(line), [0])
    at = target.index(0)
    column = op.expand_dims(line, [i for i in range(len(target)) if i != at]) \
        if len(target) > 1 else line
    return op.broadcast_to(column, a.out_shape)


def _flatten_rule(a: Args) -> TensorType:
    x = a.x
    if x.ndim < 2:
        raise OpTypeError(f"flatten keeps the batch axis and needs rank 2 or more, got "
                          f"{fmt_shape(x.shape)}", param="x", hint="use reshape(x, (-1,)) for 1-D")
    return TensorType((x.shape[0], D.product(x.shape[1:])), x.dtype)


def _transpose_rule(a: Args) -> TensorType:
    x, axes = a.x, a.axes
    if axes is None:
        return TensorType(tuple(reversed(x.shape)), x.dtype)
    order = [axis_index(i, x.ndim) for i in axes]
    if sorted(order) != list(range(x.ndim)):
        raise OpTypeError(f"transpose: axes {axes} must list each "
                          f"of the {x.ndim} axes once", param="axes")
    return TensorType(tuple(x.shape[i] for i in order), x.dtype)


def _expand_dims_rule(a: Args) -> TensorType:
    shape = list(a.x.shape)
    for i in sorted(axis_index(i, a.x.ndim + len(a.axis)) for i in a.axis):
        shape.insert(i, 1)
    return TensorType(tuple(shape), a.x.dtype)


def _squeeze_rule(a: Args) -> TensorType:
    x = a.x
    if a.axis is None:
        if any(not isinstance(d, int) for d in x.shape):
            raise OpTypeError("squeeze without axis needs a static shape; name the axis to drop",
                              param="x", hint="squeeze(x, axis=0)")
        return TensorType(tuple(d for d in x.shape if d != 1), x.dtype)
    drop = {axis_index(i, x.ndim) for i in a.axis}
    for i in sorted(drop):
        if x.shape[i] != 1:
            raise OpTypeError(f"squeeze: axis {i} has size {D.format_dim(x.shape[i])}, not 1",
                              param="axis")
    return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in drop), x.dtype)


def _concat_rule(a: Args) -> TensorType:
    ts = a.tensors
    if not ts:
        raise OpTypeError("concat needs at least one tensor", param="tensors")
    first = ts[0]
    axis = axis_index(a.axis, first.ndim)
    total = first.shape[axis]
    for i, t in enumerate(ts[1:], start=1):
        if t.dtype != first.dtype:
            raise OpTypeError(f"concat needs tensors of one dtype: tensor 0 is "
                              f"{short(first.dtype)}, tensor {i} is {short(t.dtype)}",
                              param="tensors", hint=f"astype(..., {short(first.dtype)})")
        if t.ndim != first.ndim or any(p != q for j, (p, q) in enumerate(zip(t.shape, first.shape))
                                       if j != axis):
            raise OpTypeError(
                f"concat along axis {axis}: every other dimension must match, but tensor 0 is "
                f"{fmt_shape(first.shape)} and tensor {i} is {fmt_shape(t.shape)}", param="tensors")
        total = D.add(total, t.shape[axis])
    shape = list(first.shape)
    shape[axis] = total
    return TensorType(tuple(shape), first.dtype)


def _list(axes):
    return None if axes is None else list(axes)


SHAPES = [
    Op(name="reshape", params=[tensor("x"), Param("shape", Shape())],
       rule=lambda a: TensorType(_reshape_target(a.x, a.shape), a.x.dtype),
       relax=_reshape_relax,
       numpy=lambda a: np.reshape(a.x, a.out_shape),
       doc="the same elements in a new shape; one size may be -1", category="shape",
       example=Example("reshape(x, (4, -1))", x=X234)),
    Op(name="flatten", params=[tensor("x")], rule=_flatten_rule,
       relax=lambda a: R().nn.batch_flatten(a.x), numpy=lambda a: np.reshape(a.x, a.out_shape),
       doc="(N, ...) to (N, everything else)", category="shape",
       example=Example("flatten(x)", x=X234)),
    Op(name="transpose", params=[tensor("x"), Param("axes", Axes(distinct=False), None)],
       rule=_transpose_rule, relax=lambda a: R().permute_dims(a.x, _list(a.axes)),
       numpy=lambda a: np.transpose(a.x, a.axes),
       doc="permute axes (reversed when axes is None)", category="shape",
       example=Example("transpose(x, (1, 0, 2))", x=X234)),
    Op(name="expand_dims", params=[tensor("x"), Param("axis", Axes(inserted=True))],
       rule=_expand_dims_rule, relax=lambda a: R().expand_dims(a.x, list(a.axis)),
       numpy=lambda a: np.expand_dims(a.x, a.axis), doc="insert size-1 axes", category="shape",
       example=Example("expand_dims(x, (0, -1))", x=X234)),
    Op(name="squeeze", params=[tensor("x"), Param("axis", Axes(), None)], rule=_squeeze_rule,
       relax=lambda a: R().squeeze(a.x, _list(a.axis)),
       numpy=lambda a: np.squeeze(a.x, a.axis), doc="drop size-1 axes", category="shape",
       example=Example("squeeze(x, axis=1)", x=((2, 1, 4), "f32"))),
    Op(name="concat", params=[Param("tensors", Tensors()), Param("axis", Axis(of="tensors"), 0)],
       rule=_concat_rule, relax=lambda a: R().concat(a.tensors, axis=a.axis),
       numpy=lambda a: np.concatenate(a.tensors, axis=a.axis),
       doc="join a tuple of tensors along axis", category="shape",
       example=Example("concat((x, y), axis=-1)", x=X234, y=((2, 3, 1), "f32"))),
]




# --------------------------------------------------------------------------- more moves
def _swapaxes_order(a: Args) -> list:
    order = list(range(a.x.ndim))
    i, j = axis_index(a.axis1, a.x.ndim), axis_index(a.axis2, a.x.ndim)
    order[i], order[j] = order[j], order[i]
    return order


def _swapaxes_rule(a: Args) -> TensorType:
    return TensorType(tuple(a.x.shape[i] for i in _swapaxes_order(a)), a.x.dtype)


def _broadcast_to_rule(a: Args) -> TensorType:
    x, shape = a.x, tuple(a.shape)
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise OpTypeError(f"broadcast_to: sizes must be non-negative, got {fmt_shape(shape)}",
                          param="shape")
    if len(shape) < x.ndim:
        raise OpTypeError(f"broadcast_to cannot drop axes: x is {fmt_shape(x.shape)}, the "
                          f"target {fmt_shape(shape)} has fewer", param="shape")
    for d, t in zip(x.shape, shape[len(shape) - x.ndim:]):
        if d != 1 and d != t:
            raise OpTypeError(
                f"broadcast_to: x of shape {fmt_shape(x.shape)} cannot broadcast to "
                f"{fmt_shape(shape)}: dimension {D.format_dim(d)} vs {D.format_dim(t)} (only "
                "size-1 axes stretch)", param="shape")
    return TensorType(shape, x.dtype)


def _counts(a: Args, name: str) -> tuple:
    value = a[name]
    counts = value if isinstance(value, tuple) else (value,)
    for i, c in enumerate(counts):
        if not isinstance(c, int) or c < 0:
            raise OpTypeError(f"{a.op}'s {name} must be non-negative int literals, got "
                              f"{value!r}", param=name,
                              item=i if isinstance(value, tuple) else None)
    return counts


def _tile_rule(a: Args) -> TensorType:
    reps = _counts(a, "reps")
    ndim = max(len(reps), a.x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - a.x.ndim) + tuple(a.x.shape)
    return TensorType(tuple(D.mul(d, r) for d, r in zip(shape, reps)), a.x.dtype)


def _repeat_rule(a: Args) -> TensorType:
    (n,) = _counts(a, "repeats")
    if a.axis is None:
        return TensorType((D.mul(D.product(a.x.shape), n),), a.x.dtype)
    shape = list(a.x.shape)
    i = axis_index(a.axis, a.x.ndim)
    shape[i] = D.mul(shape[i], n)
    return TensorType(tuple(shape), a.x.dtype)


def _repeat_relax(a: Args):
    """numpy's ``repeat(x, 0)`` is empty along the axis; TVM's repeat refuses 0, so that is x
    cut to nothing along it (of the flattened x when axis is None)."""
    if a.repeats[0]:
        return R().repeat(a.x, a.repeats[0], axis=a.axis)
    x, axis = (a.x, a.axis) if a.axis is not None else (R().reshape(a.x, [-1]), 0)
    return R().strided_slice(x, axes=[axis], begin=[0], end=[0], assume_inbound=True)


def _stack_rule(a: Args) -> TensorType:
    ts = a.tensors
    if not ts:
        raise OpTypeError("stack needs at least one tensor", param="tensors")
    first = ts[0]
    check_axis(a.axis, first.ndim + 1, "stack", "axis")
    for i, t in enumerate(ts[1:], start=1):
        if t.dtype != first.dtype:
            raise OpTypeError(f"stack needs tensors of one dtype: tensor 0 is "
                              f"{short(first.dtype)}, tensor {i} is {short(t.dtype)}",
                              param="tensors", hint=f"astype(..., {short(first.dtype)})")
        if t.shape != first.shape:
            raise OpTypeError(f"stack needs tensors of one shape: tensor 0 is "
                              f"{fmt_shape(first.shape)}, tensor {i} is {fmt_shape(t.shape)}",
                              param="tensors", hint="concat joins along an existing axis")
    shape = list(first.shape)
    shape.insert(axis_index(a.axis, first.ndim + 1), len(ts))
    return TensorType(tuple(shape), first.dtype)


def _pad_rule(a: Args) -> TensorType:
    from .creation import fill_value

    fill_value(a.constant_values, a.x.dtype, "constant_values")
    if not a.x.shape:
        raise OpTypeError(f"pad: {a.source('x')} is a 0-d tensor, which has no axis to pad",
                          param="x", hint="numpy returns it unchanged: use it as it is")
    return TensorType(tuple(D.add(d, lo + hi) for d, (lo, hi) in zip(a.x.shape, a.pad_width)),
                      a.x.dtype)


def _pad_relax(a: Args):
    flat = [p for pair in a.pad_width for p in pair]
    return R().nn.pad(a.x, flat, pad_mode="constant", pad_value=float(a.constant_values))


def _need_int_indices(a: Args) -> None:
    idx = a.indices
    if idx.dtype == "bool" or not idx.dtype.startswith(("int", "uint")):
        raise OpTypeError(f"{a.op} needs integer indices, but {a.source('indices')} is "
                          f"{short(idx.dtype)}", param="indices",
                          hint=f"astype({a.source('indices')}, i64)")


def _need_static_axis(*sizes) -> None:
    if not all(isinstance(d, int) for d in sizes):
        raise OpTypeError("the axis indices read from needs a static size (indices wrap "
                          "around it)", param="x", hint="give that axis a number in the annotation")
    if int(np.prod(sizes, dtype=np.int64)) == 0:
        raise OpTypeError("reading from an empty axis: there is nothing to read", param="x")


def _take_rule(a: Args) -> TensorType:
    x, idx = a.x, a.indices
    _need_int_indices(a)
    _need_static_axis(*(x.shape if a.axis is None else (x.shape[axis_index(a.axis, x.ndim)],)))
    if a.axis is None:
        return TensorType(idx.shape, x.dtype)
    i = axis_index(a.axis, x.ndim)
    return TensorType(x.shape[:i] + idx.shape + x.shape[i + 1:], x.dtype)


def _take_relax(a: Args):
    x = a.x if a.axis is not None else R().reshape(a.x, (-1,))
    return R().take(x, a.indices, axis=0 if a.axis is None else a.axis, mode="wrap")


def _take_numpy(a: Args):
    # numpy's mode="wrap" subtracts the axis size in a loop until the index fits: an index of
    # 2**62 would never return. A modulo first gives the same index at once.
    size = a.x.size if a.axis is None else a.x.shape[axis_index(a.axis, a.x.ndim)]
    return np.take(a.x, np.mod(_wide(a.indices), size), axis=a.axis)


def _wide(indices):
    """Integer indices in a dtype that holds any axis size (a uint8 index against an axis of
    300: numpy refuses the modulo in uint8)."""
    indices = np.asarray(indices)
    return indices if indices.dtype == np.uint64 else indices.astype(np.int64)


def _take_along_axis_rule(a: Args) -> TensorType:
    x, idx = a.x, a.indices
    _need_int_indices(a)
    if idx.ndim != x.ndim:
        raise OpTypeError(f"take_along_axis needs indices of x's rank {x.ndim}, but "
                          f"{a.source('indices')} is {fmt_shape(idx.shape)}", param="indices",
                          hint=f"add the missing axis: expand_dims({a.source('indices')}, "
                               f"{a.axis})")
    i = axis_index(a.axis, x.ndim)
    _need_static_axis(x.shape[i])
    others = [(p, q) for k, (p, q) in enumerate(zip(x.shape, idx.shape)) if k != i]
    shape = list(broadcast_shapes([tuple(p for p, _ in others), tuple(q for _, q in others)],
                                  "take_along_axis"))
    shape.insert(i, idx.shape[i])
    return TensorType(tuple(shape), x.dtype)


def _take_along_axis_relax(a: Args):
    # gather_elements reads out of bounds for a bad index; a floor_mod by the (static,
    # non-zero) axis size first makes every index valid: -1 is the last, as in numpy, and
    # an index out of range wraps like take's. Both sides are broadcast as numpy does.
    op, rx = R(), relax()
    i = axis_index(a.axis, len(a.out_shape))
    x_shape, idx_shape = list(a.out_shape), list(a.out_shape)
    x_shape[i] = a.x.ty.shape[i]
    size = rx.const(int(a.x.ty.shape[i]), "int64")      # in i64: u8 indices, 1000 rows
    indices = op.floor_mod(op.astype(a.indices, "int64"), size)
    return op.gather_elements(op.broadcast_to(a.x, x_shape), op.broadcast_to(indices, idx_shape),
                              axis=a.axis)


def _take_along_axis_numpy(a: Args):
    i = axis_index(a.axis, a.x.ndim)
    return np.take_along_axis(a.x, np.mod(_wide(a.indices), a.x.shape[i]),
                              axis=a.axis)


MOVES = [
    Op(name="swapaxes", params=[tensor("x"), Param("axis1", Axis()), Param("axis2", Axis())],
       rule=_swapaxes_rule, relax=lambda a: R().permute_dims(a.x, _swapaxes_order_relax(a)),
       numpy=lambda a: np.swapaxes(a.x, a.axis1, a.axis2),
       doc="exchange two axes (torch's transpose(x, 1, 2))", category="shape",
       example=Example("swapaxes(x, 0, -1)", x=X234)),
    Op(name="broadcast_to", params=[tensor("x"), Param("shape", Shape())],
       rule=_broadcast_to_rule, relax=lambda a: R().broadcast_to(a.x, a.out_shape),
       numpy=lambda a: np.array(np.broadcast_to(a.x, a.out_shape)),
       doc="x stretched along its size-1 (or missing leading) axes to shape", category="shape",
       example=Example("broadcast_to(x, (2, 3, 4))", x=((3, 1), "f32"))),
    Op(name="tile", params=[tensor("x"), Param("reps", Counts())], rule=_tile_rule,
       relax=lambda a: R().tile(a.x, list(_counts(a, "reps"))),
       numpy=lambda a: np.tile(a.x, a.reps),
       doc="x repeated reps times along each axis, numpy's tile", category="shape",
       example=Example("tile(x, (2, 1, 3))", x=((3, 2), "f32"))),
    Op(name="repeat", params=[tensor("x"), Param("repeats", Counts()), Param("axis", Axis(), None)],
       rule=_repeat_rule, relax=_repeat_relax,
       numpy=lambda a: np.repeat(a.x, a.repeats[0], axis=a.axis),
       doc="each element repeated (along axis; of the flattened x when None)",
       category="shape", example=Example("repeat(x, 2, axis=-1)", x=X234)),
    Op(name="stack", params=[Param("tensors", Tensors()), Param("axis", Int(), 0)],
       rule=_stack_rule, relax=lambda a: R().stack(a.tensors, axis=a.axis),
       numpy=lambda a: np.stack(a.tensors, axis=a.axis),
       doc="join tensors of one shape along a new axis", category="shape",
       example=Example("stack((x, y), axis=-1)", x=X234, y=X234)),
    Op(name="pad", params=[tensor("x"), Param("pad_width", PadWidth()),
                           Param("constant_values", Number(), 0)],
       rule=_pad_rule, relax=_pad_relax,
       numpy=lambda a: np.pad(a.x, a.pad_width, constant_values=a.constant_values),
       doc="x surrounded by constant_values, numpy's pad (constant mode)", category="shape",
       example=Example("pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0)", x=X234)),
    Op(name="take", params=[tensor("x"), tensor("indices"), Param("axis", Axis(), None)],
       rule=_take_rule, relax=_take_relax,
       numpy=_take_numpy,
       doc="elements of x at integer indices along axis (flattened x when None); -1 is the "
           "last; an index out of range wraps around (numpy's mode='wrap') where numpy's "
           "default raises", category="indexing",
       example=Example("take(x, i, axis=1)", x=X234, i=((2, 5), "i64"))),
    Op(name="take_along_axis",
       params=[tensor("x"), tensor("indices"), Param("axis", Axis())],
       rule=_take_along_axis_rule, relax=_take_along_axis_relax, numpy=_take_along_axis_numpy,
       doc="x at one index per position along axis (indices of x's rank, numpy's "
           "take_along_axis; picks each row's label: take_along_axis(p, expand_dims(y, 1), 1)); "
           "indices wrap like take's", category="indexing",
       example=Example("take_along_axis(x, i, axis=-1)", x=X234, i=((2, 1, 3), "i32"))),
]


def _split_rule(a: Args) -> TupleType:
    x, i = a.x, axis_index(a.axis, a.x.ndim)
    size, spec = x.shape[i], a.indices_or_sections
    if not isinstance(size, int):
        raise OpTypeError(f"split needs axis {a.axis} to have a static size, not "
                          f"{D.format_dim(size)}", param="x")
    if isinstance(spec, int):
        if spec < 1 or size % spec:
            raise OpTypeError(f"split: {size} does not divide into {spec} equal parts",
                              param="indices_or_sections",
                              hint="give the split points instead, e.g. (2, 5)")
        bounds = [size // spec * k for k in range(spec + 1)]
    else:
        bounds = [0] + list(spec) + [size]
        # numpy also allows empty parts (points repeated or past the end); TVM 0.27's split
        # miscompiles them (negative sizes, std::bad_alloc at run time), so they are refused.
        if any(lo >= hi for lo, hi in zip(bounds, bounds[1:])):
            raise OpTypeError(f"split: the split points {spec} must increase strictly "
                              f"between 0 and the axis size {size}, so no part is empty",
                              param="indices_or_sections")
    parts = []
    for lo, hi in zip(bounds, bounds[1:]):
        shape = list(x.shape)
        shape[i] = hi - lo
        parts.append(TensorType(tuple(shape), x.dtype))
    return TupleType(tuple(parts))


def _split_spec(a: Args):
    spec = a.indices_or_sections
    return spec if isinstance(spec, int) else list(spec)


def _swapaxes_order_relax(a: Args) -> list:
    order = list(range(len(a.out_shape)))
    i, j = axis_index(a.axis1, len(order)), axis_index(a.axis2, len(order))
    order[i], order[j] = order[j], order[i]
    return order


SPLIT = [
    Op(name="split", params=[tensor("x"), Param("indices_or_sections", Sections()),
                             Param("axis", Axis(), 0)],
       rule=_split_rule, relax=lambda a: R().split(a.x, _split_spec(a), axis=a.axis),
       numpy=lambda a: tuple(np.split(a.x, _split_spec(a), axis=a.axis)),
       doc="a tuple of parts of x along axis: n equal parts, or cut at the given points; "
           "unpack it, a, b = split(x, 2)", category="shape",
       example=Example("split(x, (1, 3), axis=-1)", x=X234)),
]

ENTRIES = SHAPES + MOVES + SPLIT
