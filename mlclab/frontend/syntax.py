"""What the checker's parts share about Python syntax: number literals waiting for a dtype,
spans of statements, and reading literal arguments (never by running them)."""
from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional, Union

from .. import ops as O
from ..lang.source import Span


@dataclass
class Literal:
    """A number literal before it meets a tensor and takes its dtype."""

    value: Union[int, float, bool]
    span: Span



def attr_name(node) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def head_span(stmt) -> Span:
    """The statement's first line (``for k in a:``), for statements tinynn does not have."""
    if stmt.end_lineno == stmt.lineno:
        return Span(stmt.lineno, stmt.col_offset, stmt.lineno, stmt.end_col_offset)
    return Span(stmt.lineno, stmt.col_offset, stmt.lineno, 10 ** 6)   # to the line's end


#: Names that stand for a float constant, as numpy's (``inf``, ``nan``) and the math module's.
CONSTANTS = {"inf": math.inf, "nan": math.nan}
#: ``math.inf``, ``np.pi``...: (module as commonly imported, name) -> value.
MODULE_CONSTANTS = {(module, name): value for module in ("math", "np", "numpy")
                    for name, value in (("inf", math.inf), ("nan", math.nan), ("pi", math.pi),
                                        ("e", math.e))}


def named_constant(node) -> Optional[float]:
    """The float ``inf``, ``math.inf``, ``np.nan`` or ``float("-inf")`` stands for, or None.

    A bare name counts only where nothing the program binds has that name (the caller checks).
    ``float`` reads a string literal as Python does (``"inf"``, ``"-Infinity"``, ``"nan"``,
    ``"1.5"``), which runs nothing the student wrote."""
    if isinstance(node, ast.Name):
        return CONSTANTS.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return MODULE_CONSTANTS.get((node.value.id, node.attr))
    if isinstance(node, ast.Call) and float_call_text(node) is not None:
        try:
            return float(float_call_text(node))
        except ValueError:
            return None
    return None


def float_call_text(node: ast.Call) -> Optional[str]:
    """The string of ``float("...")``, or None for any other call."""
    if isinstance(node.func, ast.Name) and node.func.id == "float" and len(node.args) == 1 \
            and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def literal_number(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return node.value
    constant = named_constant(node)
    if constant is not None:
        return constant
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = literal_number(node.operand)
        if v is not None and not isinstance(v, bool):
            return -v
    return None


def attribute_value(node):
    """The Python value of an attribute argument written as a literal: a number (maybe
    negative), True/False/None, a string, a bare name (``f32``) or a tuple of those."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(attribute_value(e) for e in node.elts)
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) is str):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute)) and named_constant(node) is None:
        return O.Word(attr_name(node))
    number = literal_number(node)
    return O.NOT_A_LITERAL if number is None else number


class Written(Mapping):
    """How the student wrote each argument (for the type rules' messages), unparsed only when
    a message asks: unparsing every argument eagerly made checking ``x + x + ... + x``
    quadratic in its length."""

    def __init__(self, nodes: dict):
        self.nodes = nodes

    def __getitem__(self, name: str) -> str:
        return ast.unparse(self.nodes[name])

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)
