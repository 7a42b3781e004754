"""Arguments of a call: counted, converted to numpy arrays of the declared dtypes, their shapes
checked, and every symbolic size bound to one value (remembering which argument gave it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..lang import dims as D
from ..lang.annotations import SHORT_NAMES


@dataclass
class Bound:
    arrays: list            # one numpy array per parameter
    sizes: dict             # symbolic size -> its value in this call
    origins: dict           # symbolic size -> the parameter that gave it


def bind(params, args, caller: str) -> Bound:
    """``args`` checked against ``params`` (typed ``Param``s): a clear error or a ``Bound``."""
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise TypeError(f"{caller}() takes {len(params)} argument{'s' * (len(params) != 1)} "
                        f"({names}) but {len(args)} {'was' if len(args) == 1 else 'were'} given")
    sizes: dict = {}
    origins: dict = {}
    arrays = []
    for p, a in zip(params, args):
        arr = as_array(a, p.type.dtype, p.name, caller)
        _bind_shape(p, arr, sizes, origins, caller)
        arrays.append(arr)
    return Bound(arrays, sizes, origins)


def _bind_shape(p, arr: np.ndarray, sizes: dict, origins: dict, caller: str) -> None:
    want = p.type
    if arr.ndim != want.ndim:
        raise ValueError(f"{caller}(): argument {p.name} must have shape "
                         f"{D.format_shape(want.shape)} (rank {want.ndim}), got shape "
                         f"{tuple(arr.shape)} (rank {arr.ndim})")
    for axis, (d, n) in enumerate(zip(want.shape, arr.shape)):
        if isinstance(d, int):
            if d != n:
                raise ValueError(f"{caller}(): argument {p.name} must have shape "
                                 f"{D.format_shape(want.shape)}, got {tuple(arr.shape)} "
                                 f"(dimension {axis} is {n}, expected {d})")
        elif d in sizes and sizes[d] != n:
            raise ValueError(
                f"{caller}(): symbolic size {d!r} is {sizes[d]} from argument {origins[d]} "
                f"but {n} in argument {p.name} (shape {tuple(arr.shape)})")
        else:
            sizes[d], origins[d] = n, p.name


def as_array(a, dtype: str, name: str, caller: str) -> np.ndarray:
    """``a`` as a numpy array of ``dtype``: numpy arrays must already have it (the error says
    how to convert); lists and numbers are converted, refusing floats for an integer dtype
    and values outside its range."""
    short = SHORT_NAMES.get(dtype, dtype)
    if isinstance(a, np.ndarray) or isinstance(a, np.generic):
        arr = np.asarray(a)
        if arr.dtype != np.dtype(dtype):
            raise TypeError(f"{caller}(): argument {name} must be a {dtype} array ({short}), got "
                            f"{arr.dtype}; convert it with {name}.astype(\"{dtype}\")")
        return arr
    if isinstance(a, (bool, int, float, list, tuple)) or hasattr(a, "__array__"):
        return _convert(a, dtype, name, caller)
    raise TypeError(f"{caller}(): argument {name} must be a numpy array (or a list or number), "
                    f"got {type(a).__name__}")


def _convert(a, dtype: str, name: str, caller: str) -> np.ndarray:
    short = SHORT_NAMES.get(dtype, dtype)
    a = detached(a)
    try:
        raw = np.asarray(a)
    except Exception as exc:
        raise TypeError(f"{caller}(): argument {name} could not be made into a tensor "
                        f"({exc})") from None
    if raw.dtype == object or raw.dtype.kind not in "biuf":
        raise TypeError(f"{caller}(): argument {name} must hold numbers, got {raw.dtype} "
                        f"from {type(a).__name__}")
    want = np.dtype(dtype)
    if hasattr(a, "__array__") and not isinstance(a, (list, tuple)) and raw.dtype != want:
        raise TypeError(f"{caller}(): argument {name} must be {dtype} ({short}), got "
                        f"{raw.dtype}; convert it first")
    if raw.dtype.kind == "f" and want.kind in "iub":
        raise TypeError(f"{caller}(): argument {name} holds floats but the parameter is "
                        f"{dtype}; pass integers or convert with np.asarray(..., "
                        f"dtype=\"{dtype}\")")
    if want.kind in "iu" and raw.size and raw.dtype.kind in "iu":
        info = np.iinfo(want)
        if raw.min() < info.min or raw.max() > info.max:
            raise ValueError(f"{caller}(): argument {name} has values outside {dtype}'s range")
    return raw.astype(want)


def detached(value):
    """A PyTorch tensor without its autograd history (mlclab computes values, never
    gradients; numpy refuses a tensor that requires grad); anything else unchanged."""
    detach = getattr(value, "detach", None)
    if callable(detach) and hasattr(value, "requires_grad"):
        return detach()
    return value
