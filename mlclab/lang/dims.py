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


def _fold(node: ast.AST, leaf: Callable[[str], object]):
    if isinstance(node, ast.Expression):
        return _fold(node.body, leaf)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return leaf(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_fold(node.left, leaf), _fold(node.right, leaf))
    raise ValueError(f"not a dimension expression: {ast.unparse(node)}")


def evaluate(d: Dim, env: Mapping[str, int]) -> int:
    """The size of ``d`` once its symbols are bound (KeyError when one is not)."""
    if isinstance(d, int):
        return d
    return int(_fold(ast.parse(d, mode="eval"), lambda name: env[name]))


def substitute(d: Dim, env: Mapping[str, Dim]) -> Dim:
    """``d`` with some symbols replaced by other dimensions (used for calls between functions)."""
    if isinstance(d, int):
        return d
    tree = ast.parse(d, mode="eval")
    if all(name not in env for name in symbols(d)):
        return d

    def rebuild(node):
        if isinstance(node, ast.Expression):
            return rebuild(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env.get(node.id, node.id)
        ops = {ast.Add: add, ast.Sub: sub, ast.Mult: mul, ast.FloorDiv: floordiv}
        return ops[type(node.op)](rebuild(node.left), rebuild(node.right))

    return rebuild(tree)


def to_prim(d: Dim, symbol_vars: Mapping[str, object]):
    """``d`` as a TIR expression over ``symbol_vars`` (name -> ``tirx.Var``)."""
    if isinstance(d, int):
        return d
    return _fold(ast.parse(d, mode="eval"), lambda name: symbol_vars[name])
