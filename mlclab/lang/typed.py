"""The typed program: what the parser produces and every later stage reads.

Plain dataclasses with no TVM in them, so the type checker, the numpy reference and the
views can use them without importing the compiler.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from .annotations import SHORT_NAMES
from .dims import Dim, format_shape
from .source import Span

__all__ = ["Span", "TensorType", "TupleType", "Type", "Node", "Expr", "Ref", "Const", "Call",
           "FuncCall", "TupleExpr", "GetItem", "Stmt", "Assign", "Return", "If", "Param",
           "Function", "TypedProgram", "BindingInfo", "Visitor", "node_classes"]


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Dim, ...]
    dtype: str

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"Tensor[{format_shape(self.shape)}, {SHORT_NAMES.get(self.dtype, self.dtype)}]"


@dataclass(frozen=True)
class TupleType:
    fields: tuple["Type", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fields) + ")"


Type = Union[TensorType, TupleType]


# --------------------------------------------------------------------------- nodes
class Node:
    """A node of the typed program: an expression or a statement (see :class:`Visitor`)."""

    __slots__ = ()


# --------------------------------------------------------------------------- expressions
@dataclass(eq=False)
class Expr(Node):
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
class Stmt(Node):
    """A statement of a function body."""

    __slots__ = ()


@dataclass(eq=False)
class Assign(Stmt):
    targets: list[str]          # one name, or several for ``a, b = expr``
    target_spans: list[Span]
    value: Expr
    span: Span


@dataclass(eq=False)
class Return(Stmt):
    value: Expr
    span: Span


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then_body: list
    else_body: list
    # Names assigned in both branches (or kept from before) that code after the ``if`` uses,
    # in a fixed order: the If's result carries them out.
    outputs: list[str]
    output_types: list[Type]
    returns: bool               # both branches end with ``return``
    span: Span


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
    # For an imported PyTorch model: the module path that computed it ("layer1.0.conv1"; ""
    # for the model's own forward) and the ATen operator ("aten.conv2d"). None for the DSL.
    module: Optional[str] = None
    origin: Optional[str] = None

    def to_dict(self) -> dict:
        """Where the value comes from, as plain data (what the graph views send to the page)."""
        out = {**self.span.to_dict(), "source_line": self.source_line, "dsl_name": self.dsl_name}
        if self.module is not None:
            out.update(module=self.module, origin=self.origin)
        return out


# --------------------------------------------------------------------------- visitor
class Visitor:
    """Walks the typed program the way ``ast.NodeVisitor`` walks Python's syntax tree.

    ``visit(node, ...)`` calls ``visit_<ClassName>(node, ...)``, passing on any further
    arguments. A node class without a method is an error, not a skip: a walker that silently
    dropped a new statement kind would compute wrong results (a test checks that every walker
    handles exactly :func:`node_classes`).
    """

    def visit(self, node, *args, **kwargs):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            return self.generic_visit(node, *args, **kwargs)
        return method(node, *args, **kwargs)

    def generic_visit(self, node, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no visit_{type(node).__name__}: "
                                  f"it does not know the typed node {type(node).__name__}")


def node_classes() -> set:
    """Every concrete typed node class: the ones each :class:`Visitor` must handle."""
    out, todo = set(), [Node]
    while todo:
        cls = todo.pop()
        subclasses = cls.__subclasses__()
        todo += subclasses
        if cls not in (Node, Expr, Stmt) and cls.__module__ == __name__:
            out.add(cls)
    return out
