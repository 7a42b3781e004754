"""Shape dimensions: an ``int``, or a ``str`` naming a symbolic size or an expression of them.

Symbolic sizes appear as names (``"n"``) in annotations; operators such as ``flatten`` or
``conv2d`` can turn them into small expressions (``"n*12"``, ``"(h - 3)//2 + 1"``). The
expressions stay plain strings so types print the way a student wrote them; they are parsed
(with ``ast``, never ``eval``) only to evaluate or to lower them to TIR.
"""
from __future__ import annotations

import ast
from typing import Callable, Mapping, Union

Dim = Union[int, str]


def format_dim(d: Dim) -> str:
    """An mlclab dimension (an int, or the text of a symbolic size) as types spell it; a TVM
    dimension is viz.relax_info.format_tvm_dim."""
    return str(d) if isinstance(d, int) else d


def format_shape(shape) -> str:
    """A shape as the DSL writes it, symbolic sizes unquoted: ``(n, 784)``, ``(3,)``, ``()``.

    The one shape spelling of mlclab's messages and types (``Tensor[(n, 784), f32]``).
    """
    inner = ", ".join(format_dim(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _wrap(d: Dim) -> str:
    s = format_dim(d)
    return s if (isinstance(d, int) or s.isidentifier()) else f"({s})"


def _combine(a: Dim, b: Dim, op: str, fold: Callable[[int, int], int]) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return fold(a, b)
    return f"{_wrap(a)}{op}{_wrap(b)}"


def mul(a: Dim, b: Dim) -> Dim:
    if a == 0 or b == 0:      # n*0 is 0 whatever n is (repeat(x, 0) on n rows is empty)
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    return _combine(a, b, "*", lambda x, y: x * y)


def add(a: Dim, b: Dim) -> Dim:
    if b == 0:
        return a
    if a == 0:
        return b
    return _combine(a, b, " + ", lambda x, y: x + y)


def sub(a: Dim, b: Dim) -> Dim:
    if b == 0:
        return a
    return _combine(a, b, " - ", lambda x, y: x - y)


def floordiv(a: Dim, b: Dim) -> Dim:
    if b == 1:
        return a
    return _combine(a, b, "//", lambda x, y: x // y)


def product(dims) -> Dim:
    out: Dim = 1
    for d in dims:
        out = mul(out, d)
    return out


def symbols(d: Dim) -> set[str]:
    if isinstance(d, int):
        return set()
    return {n.id for n in ast.walk(ast.parse(d, mode="eval")) if isinstance(n, ast.Name)}


_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
}
# The same operators building a dimension in this module's spelling (``n*12``, not ``n * 12``).
_COMBINE = {ast.Add: add, ast.Sub: sub, ast.Mult: mul, ast.FloorDiv: floordiv}


def _is_tvm_int(node: ast.AST) -> bool:
    """Whether ``node`` is TVM's spelling of an integer constant, ``T.int64(5)``: a shape
    like ``(batch * 5, 8)`` prints as ``batch * T.int64(5)``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "T"
            and node.func.attr in ("int32", "int64") and len(node.args) == 1
            and not node.keywords and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is int)


def _fold(node: ast.AST, leaf: Callable[[str], object], ops: Mapping = _BINOPS):
    """Evaluate a dimension's syntax tree bottom up: names through ``leaf``, operators
    through ``ops`` (Python's arithmetic, or this module's spelling-preserving combinators)."""
    if isinstance(node, ast.Expression):
        return _fold(node.body, leaf, ops)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if _is_tvm_int(node):
        return node.args[0].value
    if isinstance(node, ast.Name):
        return leaf(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return ops[type(node.op)](_fold(node.left, leaf, ops), _fold(node.right, leaf, ops))
    raise ValueError(f"not a dimension expression: {ast.unparse(node)}")


def evaluate(d: Dim, env: Mapping[str, int]) -> int:
    """The size of ``d`` once its symbols are bound (KeyError when one is not)."""
    if isinstance(d, int):
        return d
    return int(_fold(ast.parse(d, mode="eval"), lambda name: env[name]))


def substitute(d: Dim, env: Mapping[str, Dim]) -> Dim:
    """``d`` with some symbols replaced by other dimensions (used for calls between functions)."""
    if isinstance(d, int) or all(name not in env for name in symbols(d)):
        return d
    return _fold(ast.parse(d, mode="eval"), lambda name: env.get(name, name), _COMBINE)


def parse(text: str) -> Dim:
    """A dimension written in Python syntax (``n * 12``, ``(h - 3) // 2 + 1``, as TVM prints
    one) in this module's spelling, so a size reads the same in a type and in a view.
    ValueError when ``text`` is not made of names, integers, ``+``, ``-``, ``*`` and ``//``."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not a dimension expression: {text}") from e
    return _fold(tree, lambda name: name, _COMBINE)


def to_prim(d: Dim, symbol_vars: Mapping[str, object]):
    """``d`` as a TIR expression over ``symbol_vars`` (name -> ``tirx.Var``)."""
    if isinstance(d, int):
        return d
    return _fold(ast.parse(d, mode="eval"), lambda name: symbol_vars[name])
