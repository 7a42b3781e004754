"""How much work a kernel does, read from its TIR loop nest: FLOPs and compulsory bytes.

The counting rules (what the tests check against hand counts):

- **FLOPs**: every store in the loop nest runs (product of its enclosing loop extents) times,
  and each run costs the arithmetic operations in the stored value: ``+ - * /``, ``//``,
  ``%``, ``max``, ``min`` count 1 each, so a multiply-add counts 2 and ``relu``'s ``max(x, 0)``
  counts 1; a math call (``exp``, ``sqrt``, ...) counts 1. A ``select``/``if_then_else`` on
  the data counts 1 (relu keeps NaN as ``x <= 0 ? 0 : x``, the same work as ``max``); one on
  indices only (padding, bounds) counts 0. Loads, constants, casts, index expressions and
  strict math's fences (``ops.strict.fence``, no instruction) count 0. A 512x512x512 matmul
  is 2*512^3; ``relu(a*b+c)`` over N is 3N.
- **Bytes**: each buffer the kernel receives (its inputs and outputs, in global memory) is
  counted once, at its full size: the traffic a perfect cache would still need. Intermediates
  the kernel allocates itself are not counted. A fused ``relu(a*b+c)`` over N float32 moves
  (3 inputs + 1 output) * 4N bytes.

Read the TIR *before* scheduling (right after FuseTIR): splitting, tiling and vectorizing
change the shape of the loops but not the work, and an unevenly split loop would add guarded
iterations that do nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ops.strict import is_fence

# One FLOP each (class names of tvm.tirx expressions).
_ARITH = {"Add", "Sub", "Mul", "Div", "FloorDiv", "FloorMod", "Mod", "Max", "Min"}
# Calls that choose or reinterpret rather than compute.
_FREE_CALLS = {"tirx.if_then_else", "tirx.likely", "tirx.reinterpret", "tirx.bitwise_and",
               "tirx.bitwise_or", "tirx.shift_left", "tirx.shift_right"}


@dataclass(frozen=True)
class Work:
    flops: int
    bytes: int


def expr_flops(expr) -> int:
    """Arithmetic operations in one evaluation of ``expr`` (the rules of the module doc)."""
    kind = type(expr).__name__
    if kind in _ARITH:
        return 1 + expr_flops(expr.a) + expr_flops(expr.b)
    if kind == "Cast":
        return expr_flops(expr.value)
    if kind == "Select":
        return (_reads_buffer(expr.condition) + expr_flops(expr.true_value)
                + expr_flops(expr.false_value))
    if kind == "Call":
        if is_fence(expr):     # strict math's fence: no instruction, only its operand works
            return expr_flops(expr.args[1])
        name = getattr(expr.op, "name", "")
        if name == "tirx.if_then_else":
            return (_reads_buffer(expr.args[0]) + expr_flops(expr.args[1])
                    + expr_flops(expr.args[2]))
        inner = sum(expr_flops(a) for a in expr.args)
        return inner + (0 if name in _FREE_CALLS else 1)
    if kind == "Let":
        return expr_flops(expr.value) + expr_flops(expr.body)
    return 0   # loads (indices are addressing, not work), constants, variables


def _reads_buffer(expr) -> bool:
    """Whether ``expr`` reads the data: a choice on it is work, a choice on indices is not."""
    if type(expr).__name__ in ("BufferLoad", "TensorLoad"):   # TensorLoad in TVM 0.27
        return True
    children = [getattr(expr, f, None) for f in ("a", "b", "value", "condition",
                                                  "true_value", "false_value")]
    children += list(getattr(expr, "args", None) or ())
    return any(_reads_buffer(c) for c in children
               if c is not None and not isinstance(c, (int, float, str)))


def stmt_flops(stmt, extent_of) -> int:
    """FLOPs of ``stmt``; ``extent_of(expr) -> int`` evaluates a loop extent."""
    kind = type(stmt).__name__
    if kind == "For":
        return extent_of(stmt.extent) * stmt_flops(stmt.body, extent_of)
    if kind == "SeqStmt":
        return sum(stmt_flops(s, extent_of) for s in stmt.seq)
    if kind == "SBlockRealize":
        return stmt_flops(stmt.block, extent_of)
    if kind == "SBlock":
        init = stmt_flops(stmt.init, extent_of) if stmt.init is not None else 0
        return init + stmt_flops(stmt.body, extent_of)
    if kind == "BufferStore":
        return expr_flops(stmt.value)
    if kind == "IfThenElse":
        then = stmt_flops(stmt.then_case, extent_of)
        other = stmt_flops(stmt.else_case, extent_of) if stmt.else_case is not None else 0
        return max(then, other)
    if kind == "Evaluate":
        return expr_flops(stmt.value)
    body = getattr(stmt, "body", None)   # AttrStmt, LetStmt/Bind, AllocBuffer, DeclBuffer...
    return stmt_flops(body, extent_of) if body is not None else 0


def kernel_work(prim_func, arg_shapes: list) -> Work:
    """FLOPs and bytes of one call of ``prim_func`` with tensor arguments of ``arg_shapes``
    (``(shape, dtype)`` in parameter order; symbolic sizes are taken from these shapes)."""
    from tvm.sym.analyzer import Analyzer

    analyzer = Analyzer()
    # A tensor parameter is a Var whose type is a BufferType (shape, dtype); others are sizes.
    buffers = [p.ty for p in prim_func.params if hasattr(p.ty, "shape")]
    for buf, (shape, _) in zip(buffers, arg_shapes):
        for dim, size in zip(buf.shape, shape):
            if type(dim).__name__ == "Var":
                analyzer.bind(dim, int(size))

    def extent_of(expr) -> int:
        value = analyzer.simplify(expr)
        if not hasattr(value, "value"):
            raise ValueError(f"loop extent {expr} is not known from the argument shapes")
        return int(value.value)

    return Work(stmt_flops(prim_func.body, extent_of), buffer_bytes(arg_shapes))


def buffer_bytes(arg_shapes: list) -> int:
    """Bytes of the argument buffers, each counted once: ``(shape, dtype)`` pairs."""
    total = 0
    for shape, dtype in arg_shapes:
        count = 1
        for size in shape:
            count *= int(size)
        total += count * _itemsize(str(dtype))
    return total


def _itemsize(dtype: str) -> int:
    import numpy as np

    if dtype == "bool":
        return 1
    return np.dtype(dtype).itemsize
