"""Small questions the Relax rewrites before legalization (``conv_layout``, ``blocked_pool``,
``fold_batchnorm``, ``pack_weights``) ask of an expression: which operator a binding calls,
whether it is a constant, its dtype and static shape."""
from __future__ import annotations


def op_name(value) -> str:
    """The operator ``value`` calls (``"relax.matmul"``), or "" for anything else."""
    return getattr(getattr(value, "op", None), "name", "") or ""


def is_constant(expr) -> bool:
    from tvm.ir.expr import Constant

    return isinstance(expr, Constant)


def dtype_of(expr) -> str:
    return str(getattr(expr.ty, "dtype", ""))


def static_shape(expr):
    """The int shape of a tensor-typed ``expr``, or None (unknown or symbolic)."""
    from tvm import relax, tirx

    ty = getattr(expr, "ty", None)
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        return None
    values = getattr(ty.shape, "values", None)
    if values is None or not all(isinstance(v, tirx.IntImm) for v in values):
        return None
    return tuple(int(v) for v in values)
