"""Shape and dtype helpers the entries' rules share. Each raises ``OpTypeError`` naming the
parameter to point at, in words a student can act on."""
from __future__ import annotations

from ..lang import dims as D
from ..lang.annotations import SHORT_NAMES
from ..lang.typed import TensorType
from .entry import Args
from .params import OpTypeError


def short(dtype: str) -> str:
    return SHORT_NAMES.get(dtype, dtype)


# The one shape spelling (``(n, 784)``), under the name the entries' rules use.
fmt_shape = D.format_shape


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint")


def need_float(a: Args, name: str, what: str) -> None:
    t = a[name]
    if not is_float(t.dtype):
        w = a.source(name)
        raise OpTypeError(f"{what} needs a floating-point tensor, but {w} is {short(t.dtype)}",
                          param=name, hint=f"convert it first: astype({w}, f32)")


def need_numeric(a: Args, name: str, what: str) -> None:
    if a[name].dtype == "bool":
        raise OpTypeError(f"{what} is not defined on bool tensors", param=name,
                          hint=f"convert it first: astype({a.source(name)}, i32)")


def need_rank(a: Args, name: str, rank: int, what: str, layout: str) -> None:
    t = a[name]
    if t.ndim != rank:
        raise OpTypeError(f"{what} needs {name} in {layout} layout (rank {rank}), got "
                          f"{fmt_shape(t.shape)}", param=name)


def same_dtype(a: Args, names, what: str) -> str:
    dtypes = [(n, a[n].dtype) for n in names if a[n] is not None]
    first_name, first = dtypes[0]
    for n, dt in dtypes[1:]:
        if dt != first:
            w = a.source(n)
            raise OpTypeError(
                f"{what} needs operands of one dtype, got {short(first)} ({a.source(first_name)}) "
                f"and {short(dt)} ({w}); mlclab does not promote dtypes silently",
                param=n, hint=f"convert one of them, e.g. astype({w}, {short(first)})")
    return first


def broadcast_shapes(shapes, what: str) -> tuple:
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for i in range(ndim):
        dim = 1
        for s in padded:
            d = s[i]
            if d == 1 or d == dim:
                continue
            if dim == 1:
                dim = d
                continue
            raise OpTypeError(
                f"{what} cannot broadcast shapes " + " and ".join(fmt_shape(s) for s in shapes)
                + f": dimension {D.format_dim(dim)} vs {D.format_dim(d)}"
                + ("" if isinstance(d, int) and isinstance(dim, int)
                   else " (symbolic sizes must be the same name to match)"))
        out.append(dim)
    return tuple(out)


def spatial_out(size, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int,
                what: str, axis_name: str):
    span = dilation * (kernel - 1) + 1
    if isinstance(size, int):
        if size + pad_lo + pad_hi < span:
            raise OpTypeError(f"{what}: the window ({span}) is larger than the padded {axis_name} "
                              f"({size + pad_lo + pad_hi})", param="x")
        return (size + pad_lo + pad_hi - span) // stride + 1
    return D.add(D.floordiv(D.sub(D.add(size, pad_lo + pad_hi), span), stride), 1)


def same_as_input(name: str = "x", float_only: bool = False):
    """The rule of an element-wise function of one tensor: the result has its type.
    ``float_only``: integer and bool tensors are refused (exp, log...)."""

    def rule(a: Args) -> TensorType:
        (need_float if float_only else need_numeric)(a, name, a.op)
        return a[name]

    return rule


# --------------------------------------------------------------------------- Relax, lazily
def R():
    """``tvm.relax.op``, imported on first build: ``import mlclab`` does not load TVM."""
    from tvm.relax import op

    return op


def relax():
    from tvm import relax as module

    return module


def keep_nan(result, *inputs):
    """``result`` with NaN wherever an input is NaN, as numpy's maximum/minimum/relu give.

    TVM lowers max/min to ``select(a > b, a, b)``, so ``maximum(nan, 1.0)`` is 1.0 there but
    NaN in numpy, and ``validate`` would blame a correct program. A select on ``isnan`` is
    element-wise, so it fuses into the same vectorised loop. Constants (``0.0`` in
    ``minimum(x, 0.0)``) cannot be NaN and add nothing.
    """
    from tvm.ir.expr import Constant

    op = R()
    for x in reversed(inputs):
        if not isinstance(x, Constant) and is_float(str(x.ty.dtype)):
            result = op.where(op.isnan(x), x, result)
    return result
