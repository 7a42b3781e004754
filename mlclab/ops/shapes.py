"""Entries that move elements without computing (reshape, transpose...) and the reductions."""
from __future__ import annotations

import numpy as np

from ..lang import dims as D
from ..lang.typed import TensorType
from .entry import Args, Example, Op
from .params import Axes, Axis, Bool, OpTypeError, Param, Shape, Tensors, axis_index, tensor
from .rules import R, fmt_shape, need_float, need_numeric, short

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
       relax=lambda a: R().reshape(a.x, a.out_shape),
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


def _reduction_rule(float_only: bool):
    def rule(a: Args) -> TensorType:
        x = a.x
        (need_float if float_only else need_numeric)(a, "x", a.op)
        axes = range(x.ndim) if a.axis is None else {axis_index(i, x.ndim) for i in a.axis}
        if a.keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return TensorType(shape, x.dtype)

    return rule


def _reduction(name, np_fn, doc, float_only=False):
    return Op(name=name, params=[tensor("x"), Param("axis", Axes(), None),
                                 Param("keepdims", Bool(), False)],
              rule=_reduction_rule(float_only),
              relax=lambda a: getattr(R(), name)(a.x, axis=_list(a.axis), keepdims=a.keepdims),
              numpy=lambda a: np_fn(a.x, axis=a.axis, keepdims=a.keepdims), doc=doc,
              category="reduction",
              example=Example(f"{name}(x, axis=(0, -1), keepdims=True) + {name}(x)", x=X234))


REDUCTIONS = [
    _reduction("sum", np.sum, "sum over axis (all axes when None)"),
    _reduction("mean", np.mean, "mean over axis (all axes when None)", float_only=True),
    _reduction("max", np.max, "largest value over axis"),
    _reduction("min", np.min, "smallest value over axis"),
]

ENTRIES = SHAPES + REDUCTIONS
