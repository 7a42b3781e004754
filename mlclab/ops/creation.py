"""Entries that make new tensors: zeros/ones/full of a shape, and the ``*_like`` forms."""
from __future__ import annotations

import math

import numpy as np

from ..lang.typed import TensorType
from .entry import Args, Example, Op
from .params import DType, Number, OpTypeError, Param, Shape, tensor
from .rules import R, fmt_shape, is_float, relax, short


def fill_value(value, dtype: str, param: str = "fill_value"):
    """``value`` as a number of ``dtype``, or an error saying why it does not fit."""
    if dtype == "bool":
        if type(value) is not bool:
            raise OpTypeError(f"a bool tensor is filled with True or False, not {value!r}",
                              param=param)
        return value
    if type(value) is bool:
        raise OpTypeError(f"{value} cannot fill a {short(dtype)} tensor", param=param,
                          hint="use a number, or dtype=bool")
    if is_float(dtype):
        largest = float(np.finfo(dtype).max)
        if (type(value) is int or math.isfinite(value)) and abs(value) > largest:   # not inf, nan
            raise OpTypeError(f"{value!r} is out of range for {short(dtype)} (largest "
                              f"{largest:.4g})", param=param, hint="write -inf or inf for an "
                              "infinite fill")
        return float(value)
    if type(value) is float:
        raise OpTypeError(f"the float {value!r} cannot fill an {short(dtype)} tensor; mlclab "
                          "does not truncate silently", param=param,
                          hint="write an integer, or use dtype=f32")
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OpTypeError(f"{value} does not fit in {short(dtype)}", param=param)
    return value


def _shape_rule(a: Args) -> TensorType:
    if any(isinstance(d, int) and d < 0 for d in a.shape):
        raise OpTypeError(f"{a.op}: sizes must be non-negative, got {fmt_shape(a.shape)}",
                          param="shape")
    if "fill_value" in a.values:
        fill_value(a.fill_value, a.dtype)
    return TensorType(tuple(a.shape), a.dtype)


def _like_rule(a: Args) -> TensorType:
    dtype = a.dtype or a.x.dtype
    if "fill_value" in a.values:
        fill_value(a.fill_value, dtype)
    return TensorType(a.x.shape, dtype)


def _const(a: Args, value):
    return relax().const(fill_value(value, a.out.dtype), a.out.dtype)


SHAPE = Param("shape", Shape())
DTYPE = Param("dtype", DType(), "float32")
LIKE_DTYPE = Param("dtype", DType(), None)
FILL = Param("fill_value", Number())
X = tensor("x")

ENTRIES = [
    Op(name="zeros", params=[SHAPE, DTYPE], rule=_shape_rule,
       relax=lambda a: R().zeros(a.out_shape, a.out.dtype),
       numpy=lambda a: np.zeros(a.out_shape, a.out.dtype),
       doc="a tensor of zeros (dtype f32 unless given; numpy's default is f64)",
       category="creation", example=Example("zeros((2, 3)) + x", x=((3,), "f32"))),
    Op(name="ones", params=[SHAPE, DTYPE], rule=_shape_rule,
       relax=lambda a: R().ones(a.out_shape, a.out.dtype),
       numpy=lambda a: np.ones(a.out_shape, a.out.dtype),
       doc="a tensor of ones (dtype f32 unless given)", category="creation",
       example=Example("ones((2, 3), i32) * x", x=((3,), "i32"))),
    Op(name="full", params=[SHAPE, FILL, DTYPE], rule=_shape_rule,
       relax=lambda a: R().full(a.out_shape, _const(a, a.fill_value), a.out.dtype),
       numpy=lambda a: np.full(a.out_shape, a.fill_value, a.out.dtype),
       doc="a tensor of fill_value (dtype f32 unless given)", category="creation",
       example=Example("full((2, 3), -1.5) + x", x=((3,), "f32"))),
    Op(name="zeros_like", params=[X, LIKE_DTYPE], rule=_like_rule,
       relax=lambda a: R().zeros_like(a.x, a.out.dtype),
       numpy=lambda a: np.zeros_like(a.x, a.out.dtype),
       doc="zeros of x's shape (and dtype, unless given)", category="creation",
       example=Example("zeros_like(x) + x", x=((2, 3), "f32"))),
    Op(name="ones_like", params=[X, LIKE_DTYPE], rule=_like_rule,
       relax=lambda a: R().ones_like(a.x, a.out.dtype),
       numpy=lambda a: np.ones_like(a.x, a.out.dtype),
       doc="ones of x's shape (and dtype, unless given)", category="creation",
       example=Example("ones_like(x, i32)", x=((2, 3), "f32"))),
    Op(name="full_like", params=[X, FILL, LIKE_DTYPE], rule=_like_rule,
       relax=lambda a: R().full_like(a.x, _const(a, a.fill_value), a.out.dtype),
       numpy=lambda a: np.full_like(a.x, a.fill_value, a.out.dtype),
       doc="fill_value in x's shape (and dtype, unless given)", category="creation",
       example=Example("full_like(x, 7)", x=((2, 3), "i32"))),
]
