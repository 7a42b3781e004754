"""The operator table: one declarative entry per operator.

Each ``Op`` says, once: the operator's name and parameters (each with a kind that parses and
normalises its argument), its shape/dtype rule, how to build it in Relax, how numpy computes
it, its Python spelling if it has one, a one-line doc and an example. The front end's symbol
table, the type checker, literal folding, the numpy reference (``fn.reference``), the error
messages, the tests of every operator and ``docs/operators.md`` are all read off this table,
so adding an operator is adding one entry::

    ops.register(ops.Op(
        name="mish", params=[ops.tensor("x")], rule=ops.same_as_input(float_only=True),
        relax=lambda a: R.multiply(a.x, R.tanh(R.nn.softplus(a.x))),
        numpy=lambda a: a.x * np.tanh(np.logaddexp(0, a.x)), doc="x * tanh(softplus(x))",
        category="elementwise", example=ops.Example("mish(x)", x=((8,), "f32"))))

``rule``, ``relax`` and ``numpy`` each receive an ``Args``: ``a.x`` is the argument of
parameter ``x`` (a ``TensorType``, a Relax expression or a numpy array) or its normalised
attribute value; ``a.out`` the result type (after the rule); ``a.source("x")`` how the student
wrote it.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Optional

from . import creation, elementwise, indexing, layers, reductions, shapes
from .entry import Args, EntryError, Example, Op, arguments, mark_built_in
from .params import (NOT_A_LITERAL, REQUIRED, Axes, Axis, Bool, Counts, DType, Float, Int,
                     Kind, Number, OpTypeError, Padding, PadWidth, Pair, Param, Sections, Shape,
                     Tensor, Tensors, Text, Word, axis_index, optional_tensor, tensor)
from .rules import (broadcast_shapes, fmt_shape, is_float, need_float, need_numeric,
                    same_as_input, same_dtype, short)

OPS: dict = {}
_generation = 0      # how many times an entry was registered after import (see generation)

#: Python's spelling of each operator symbol the syntax has, binary and unary.
BINARY_SYNTAX = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
                 ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
                 ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=",
                 ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
UNARY_SYNTAX = {ast.USub: "-", ast.Invert: "~", ast.Not: "not"}


def register(entry: Op) -> Op:
    """Add ``entry`` to the table (replacing an entry of the same name: a notebook may re-run
    the cell that declares it)."""
    if not isinstance(entry, Op):
        raise TypeError(f"register takes an Op, got {type(entry).__name__}")
    if entry.symbol:
        for other in OPS.values():
            if other.name != entry.name and other.symbol == entry.symbol \
                    and (other.arity == 1) == (entry.arity == 1):
                raise ValueError(f"{entry.name}: the symbol {entry.symbol!r} already means "
                                 f"{other.name}")
    OPS[entry.name] = entry
    global _generation
    _generation += 1
    return entry


def generation() -> int:
    """Changes whenever the table does: part of the compile cache's key, so a program is
    compiled again with an entry registered (or fixed and registered again) since."""
    return _generation


for _entry in (elementwise.ENTRIES + layers.ENTRIES + shapes.ENTRIES + reductions.ENTRIES
               + creation.ENTRIES + indexing.ENTRIES):
    register(_entry)
    # mlclab's own: a failure inside it is a bug of mlclab's, unlike a registered entry's.
    mark_built_in(_entry)


# --------------------------------------------------------------------------- Python syntax
def _by_symbol(symbol: Optional[str], unary: bool) -> Optional[Op]:
    return next((o for o in OPS.values()
                 if symbol and o.symbol == symbol and (o.arity == 1) == unary), None)


def for_binary_symbol(node_type: type) -> Optional[Op]:
    """The entry Python's binary or comparison operator means (``ast.Add`` -> add), or None."""
    return _by_symbol(BINARY_SYNTAX.get(node_type), unary=False)


def for_unary_symbol(node_type: type) -> Optional[Op]:
    """The entry a unary operator means (``ast.USub`` -> negative), or None."""
    return _by_symbol(UNARY_SYNTAX.get(node_type), unary=True)


#: How Python computes each folding symbol on two numbers (one for the unary minus).
_PYTHON_ARITHMETIC = {("+", 2): operator.add, ("-", 2): operator.sub, ("*", 2): operator.mul,
                      ("/", 2): operator.truediv, ("//", 2): operator.floordiv,
                      ("%", 2): operator.mod, ("**", 2): operator.pow, ("-", 1): operator.neg}
# A literal no dtype can hold (float64 ends at 2**1024) is refused before Python computes
# it: ``10 ** 10 ** 9`` would take minutes and gigabytes.
_MAX_LITERAL_BITS = 1100


def fold(op: Op, *values):
    """``2 * 3``, ``2 ** -1`` or ``-inf``: numbers meeting numbers, computed at parse time as
    Python computes them (ints exact, ``/`` and negative powers give floats). Returns a Python
    number; raises ``OpTypeError`` when Python would raise, when the result is complex, or when
    finite numbers overflow to inf (Python's ``**`` raises there; its ``*`` would give inf)."""
    symbol = op.symbol or op.name
    if any(isinstance(v, bool) for v in values):
        if len(values) == 1:
            raise OpTypeError(f"cannot apply {symbol} to a bool")
        raise OpTypeError(f"{symbol} needs a tensor operand; these are plain values")
    if op.category == "comparison":
        raise OpTypeError(f"{symbol} between two numbers gives a bool, not a tensor",
                          hint="compare tensors instead")
    compute = _PYTHON_ARITHMETIC.get((op.symbol, len(values)))
    if not op.folds or compute is None:
        raise OpTypeError(f"{symbol} needs a tensor operand; these are plain values")
    out_of_range = OpTypeError("this literal expression is out of range: no dtype holds it")
    if symbol == "**" and all(type(v) is int for v in values):
        base, exponent = values
        if abs(base) > 1 and exponent * math.log2(abs(base)) > _MAX_LITERAL_BITS:
            raise out_of_range
    try:
        result = compute(*values)
    except ZeroDivisionError:
        raise OpTypeError("division by zero") from None
    except OverflowError:
        raise out_of_range from None
    if isinstance(result, complex):
        written = " ** ".join(f"({v!r})" if v < 0 else repr(v) for v in values)
        raise OpTypeError(f"{written} is not a real number (Python gives a complex one)",
                          hint="tinynn's numbers are real")
    if isinstance(result, int) and result.bit_length() > _MAX_LITERAL_BITS:
        raise out_of_range
    if isinstance(result, float) and not math.isfinite(result) \
            and all(math.isfinite(v) for v in values):
        raise out_of_range
    return result


# --------------------------------------------------------------------------- docs
def _cells(*cells) -> str:
    """One markdown table row; a ``|`` inside a cell (``x1 | x2``) is escaped."""
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def reference_markdown() -> str:
    """The operator reference for the docs, generated from the table (and what strict and
    fast-math numerics promise, from ``ops.strict``)."""
    from .strict import guarantees_markdown

    lines = ["# Operator reference", "",
             "Generated from `mlclab/ops/` by `python -m mlclab.ops`; do not edit by hand.", "",
             guarantees_markdown()]
    categories: dict = {}
    for o in OPS.values():
        categories.setdefault(o.category, []).append(o)
    for cat, entries in categories.items():
        lines += [f"## {cat.capitalize()}", "",
                  "| operator | also written | what it computes | example |",
                  "| --- | --- | --- | --- |"]
        for o in entries:
            written = "" if not o.symbol else f"`{o.symbol}x`" if o.arity == 1 else f"`{o.symbol}`"
            lines.append(_cells(f"`{o.signature()}`", written, o.doc, f"`{o.example.call}`"))
        lines.append("")
    lines += ["## Parameter kinds", "",
              "What each kind of argument accepts. Each is checked and normalised once, before "
              "the operator's rule runs.", "", "| kind | accepts | parameters |",
              "| --- | --- | --- |"]
    kinds: dict = {}
    for o in OPS.values():
        for p in o.params:
            kinds.setdefault((p.kind.name, p.kind.accepts), []).append(f"{o.name}'s {p.name}")
    for (name, accepts), users in kinds.items():
        shown = ", ".join(users[:4]) + (f" and {len(users) - 4} more" if len(users) > 4 else "")
        lines.append(f"| `{name}` | {accepts} | {shown} |")
    lines.append("")
    return "\n".join(lines)


__all__ = [
    "OPS", "Op", "Args", "Example", "Param", "OpTypeError", "EntryError", "REQUIRED", "register",
    "generation", "arguments",
    "for_binary_symbol", "for_unary_symbol", "fold", "reference_markdown", "tensor",
    "optional_tensor", "Kind", "Tensor", "Tensors", "Int", "Float", "Bool", "DType", "Axis",
    "Axes", "Pair", "Padding", "Shape", "Word", "Number", "Text", "Counts", "PadWidth",
    "Sections", "NOT_A_LITERAL", "axis_index", "same_as_input",
    "need_float", "need_numeric", "same_dtype", "broadcast_shapes", "fmt_shape", "short",
    "is_float", "BINARY_SYNTAX", "UNARY_SYNTAX",
]
