"""The typed program: what the parser produces and every later stage reads.

Plain dataclasses with no TVM in them, so the type checker, the numpy reference and the
views can use them without importing the compiler.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from .annotations import SHORT_NAMES
from .dims import Dim, format_dim


@dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 0-based columns (Python's ``ast`` convention)."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int

    @classmethod
    def of(cls, node) -> "Span":
        return cls(node.lineno, node.col_offset,
                   getattr(node, "end_lineno", None) or node.lineno,
                   getattr(node, "end_col_offset", None) or node.col_offset + 1)


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Dim, ...]
    dtype: str

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = ", ".join(format_dim(d) for d in self.shape)
        if len(self.shape) == 1:
            dims += ","
        return f"Tensor[({dims}), {SHORT_NAMES.get(self.dtype, self.dtype)}]"


@dataclass(frozen=True)
class TupleType:
    fields: tuple["Type", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fields) + ")"


Type = Union[TensorType, TupleType]


# --------------------------------------------------------------------------- expressions
@dataclass(eq=False)
class Expr:
    type: Type
    span: Span


@dataclass(eq=False)
class Ref(Expr):
    """A use of a parameter or of a name bound earlier."""

    name: str


@dataclass(eq=False)
class Const(Expr):
    """A scalar literal; its dtype is taken from the tensor it meets."""

    value: Union[int, float, bool]


@dataclass(eq=False)
class Call(Expr):
    """A call of an operator of the table; ``attrs`` are its non-tensor arguments, resolved."""

    op: "object"  # mlclab.ops.Op (kept untyped here to avoid an import cycle)
    args: list[Expr]
    attrs: dict


@dataclass(eq=False)
class FuncCall(Expr):
    """A call of another DSL function of the same program."""

    func: str
    args: list[Expr]


@dataclass(eq=False)
class TupleExpr(Expr):
    items: list[Expr]


@dataclass(eq=False)
class GetItem(Expr):
    value: Expr
    index: int


# --------------------------------------------------------------------------- statements
@dataclass(eq=False)
class Assign:
    targets: list[str]          # one name, or several for ``a, b = expr``
    target_spans: list[Span]
    value: Expr
    span: Span


@dataclass(eq=False)
class Return:
    value: Expr
    span: Span


@dataclass(eq=False)
class If:
    cond: Expr
    then_body: list
    else_body: list
    # Names assigned in both branches (or kept from before) that code after the ``if`` uses,
    # in a fixed order: the If's result carries them out.
    outputs: list[str]
    output_types: list[Type]
    returns: bool               # both branches end with ``return``
    span: Span


Stmt = Union[Assign, Return, If]


@dataclass(eq=False)
class Param:
    name: str
    type: TensorType
    span: Span


@dataclass(eq=False)
class Function:
    name: str
    params: list[Param]
    body: list
    ret_type: Type
    span: Span
    calls: list[str] = field(default_factory=list)   # other DSL functions it calls


@dataclass(eq=False)
class TypedProgram:
    functions: dict[str, Function]   # in source order
    source: str
    filename: str


@dataclass(frozen=True)
class BindingInfo:
    """What the views need to know about one Relax variable of a compiled function."""

    name: str                   # the name in the IR (``d``, ``lv1``)
    dsl_name: Optional[str]     # the DSL variable it holds, or None for a temporary
    span: Span
    source_line: str
    kind: str                   # "param" or "binding"
