"""Reductions (sum, mean, max, min, argmax, argmin, var, std) and cumsum, with numpy's
dtypes: a sum of bools counts (int64), a mean of bools is a fraction (float64)."""
from __future__ import annotations

import numpy as np

from ..lang import dims as D
from ..lang.typed import TensorType
from .entry import Args, Example, Op
from .params import NOT_A_LITERAL, Axes, Axis, Bool, OpTypeError, Param, Word, axis_index, tensor
from .rules import R, is_float, need_float, need_numeric, relax

X234 = ((2, 3, 4), "f32")


class ReductionAxes(Axes):
    """The axes of a reduction. ``max(x, 0.0)`` reduces over axis 0 in numpy too, but the
    student meant ``maximum``: a float or a tensor here is left for the rule to explain."""

    def parse(self, value, op, param, symbols=frozenset()):
        if type(value) is float or isinstance(value, Word) or value is NOT_A_LITERAL:
            return value
        return super().parse(value, op, param, symbols)

    def check(self, value, args, op, param):
        if not isinstance(value, tuple) and value is not None:
            return value
        return super().check(value, args, op, param)


ELEMENTWISE = {"max": "maximum", "min": "minimum"}


def _reduced_shape(x: TensorType, axis, keepdims: bool) -> tuple:
    axes = range(x.ndim) if axis is None else {axis_index(i, x.ndim) for i in axis}
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _check_axis_is_axes(a: Args) -> None:
    if isinstance(a.axis, tuple) or a.axis is None:
        return
    pair = ELEMENTWISE.get(a.op)
    written = a.source("axis")
    if pair:
        raise OpTypeError(f"{a.op} reduces over an axis, and {written} is not one", param="axis",
                          hint=f"did you mean {pair}({a.source('x')}, {written})? "
                               f"({pair} compares element by element)")
    raise OpTypeError(f"{a.op}'s axis must be an int literal or a tuple of them", param="axis")


def _sum_dtype(dtype: str, op: str) -> str:
    if dtype == "bool":                   # numpy: counting Trues
        return "int64" if op == "sum" else "float64"
    return dtype


def _need_values(a: Args, axis) -> None:
    """max, min, argmax, argmin of nothing: numpy raises; compiled code would return
    whatever the empty reduction left, so a static empty axis is refused here."""
    axes = range(a.x.ndim) if axis is None else [axis_index(i, a.x.ndim) for i in axis]
    if any(a.x.shape[i] == 0 for i in axes):
        raise OpTypeError(f"{a.op} over an empty axis has no value (numpy raises too)",
                          param="x")


#: Reductions that divide by the count: over nothing, numpy gives nan ("Mean of empty slice").
_AVERAGES = {"mean", "var", "std"}


def _need_count(a: Args, out_shape: tuple) -> None:
    """mean/var/std over a static empty axis: numpy's nan is 0/0, and TVM refuses to build a
    division by a constant 0; said here, at the call, instead of as TVM's error."""
    axes = range(a.x.ndim) if a.axis is None else [axis_index(i, a.x.ndim) for i in a.axis]
    empty = [i for i in axes if a.x.shape[i] == 0]
    if empty and 0 not in out_shape:
        raise OpTypeError(f"{a.op} over axis {empty[0]} of size 0 divides by a count of 0: "
                          "numpy gives nan there (with a RuntimeWarning)", param="x",
                          hint="reduce over axes that hold elements, or write the nan: "
                               f"full({out_shape}, nan)")


def _reduction_rule(float_only: bool, bools: bool = False):
    def rule(a: Args) -> TensorType:
        _check_axis_is_axes(a)
        if not (bools and a.x.dtype == "bool"):
            (need_float if float_only else need_numeric)(a, "x", a.op)
        if a.op in ELEMENTWISE:
            _need_values(a, a.axis)
        shape = _reduced_shape(a.x, a.axis, a.keepdims)
        if a.op in _AVERAGES:
            _need_count(a, shape)
        return TensorType(shape, _sum_dtype(a.x.dtype, a.op))

    return rule


def _list(axes):
    return None if axes is None else list(axes)


def _reduction_relax(name):
    def build(a: Args):
        x = a.x
        if str(x.ty.dtype) != a.out.dtype:        # bools, summed as numpy does
            x = R().astype(x, a.out.dtype)
        # max/min keep NaN in their lowering (ops/lowering.py): one binding, as written
        return getattr(R(), name)(x, axis=_list(a.axis), keepdims=a.keepdims)

    return build


def _reduction(name, np_fn, doc, float_only=False, bools=False, relax_name=None, example=None):
    return Op(name=name, params=[tensor("x"), Param("axis", ReductionAxes(), None),
                                 Param("keepdims", Bool(), False)],
              rule=_reduction_rule(float_only, bools),
              relax=_reduction_relax(relax_name or name),
              numpy=lambda a: np_fn(a.x, axis=a.axis, keepdims=a.keepdims), doc=doc,
              category="reduction",
              example=example or Example(f"{name}(x, axis=(0, -1), keepdims=True) + {name}(x)",
                                         x=X234))


def _arg_rule(a: Args) -> TensorType:
    need_numeric(a, "x", a.op)
    axis = None if a.axis is None else (a.axis,)
    _need_values(a, axis)
    return TensorType(_reduced_shape(a.x, axis, a.keepdims), "int64")


def _arg_relax(name):
    def build(a: Args):
        op, rx = R(), relax()
        result = getattr(op, name)(a.x, axis=a.axis, keepdims=a.keepdims)
        if not is_float(str(a.x.ty.dtype)):
            return result
        # numpy: a NaN is both the largest and the smallest; its first index wins. TVM's
        # argmax compares with '>', which NaN never wins, so look for the NaNs apart.
        nans = op.astype(op.isnan(a.x), "int8")
        first_nan = op.argmax(nans, axis=a.axis, keepdims=a.keepdims)
        any_nan = op.greater(op.max(nans, axis=a.axis, keepdims=a.keepdims), rx.const(0, "int8"))
        return op.where(any_nan, first_nan, result)

    return build


def _arg(name, fn, doc):
    return Op(name=name, params=[tensor("x"), Param("axis", Axis(), None),
                                 Param("keepdims", Bool(), False)],
              rule=_arg_rule, relax=_arg_relax(name),
              numpy=lambda a: fn(a.x, axis=a.axis, keepdims=a.keepdims), doc=doc,
              category="reduction",
              example=Example(f"{name}(x, axis=-1) + {name}(x)", x=X234))


def _cumsum_rule(a: Args) -> TensorType:
    dtype = "int64" if a.x.dtype == "bool" else a.x.dtype      # numpy counts the Trues
    shape = (D.product(a.x.shape),) if a.axis is None else a.x.shape
    return TensorType(shape, dtype)


REDUCTIONS = [
    _reduction("sum", np.sum, "sum over axis (all axes when None); a sum of bools counts "
               "them (i64)", bools=True),
    _reduction("mean", np.mean, "mean over axis (all axes when None); of bools, the "
               "fraction true (f64)", float_only=True, bools=True),
    _reduction("max", np.max, "largest value over axis; NaN if the slice holds one"),
    _reduction("min", np.min, "smallest value over axis; NaN if the slice holds one"),
    _reduction("var", np.var, "variance over axis (ddof=0, numpy's default)", float_only=True,
               relax_name="variance"),
    _reduction("std", np.std, "standard deviation over axis (ddof=0)", float_only=True),
    _arg("argmax", np.argmax, "index of the largest value over axis (i64; flat index when "
         "axis is None)"),
    _arg("argmin", np.argmin, "index of the smallest value over axis (i64)"),
    Op(name="cumsum", params=[tensor("x"), Param("axis", Axis(), None)], rule=_cumsum_rule,
       relax=lambda a: R().cumsum(a.x, axis=a.axis, dtype=a.out.dtype),
       numpy=lambda a: np.cumsum(a.x, axis=a.axis, dtype=a.out.dtype),
       doc="running sum along axis (of the flattened x when None), in x's dtype (i64 for "
           "bools)",
       category="reduction",
       example=Example("cumsum(x, axis=1) + 1.0", x=X234)),
]

ENTRIES = REDUCTIONS
