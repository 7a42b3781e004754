"""Every walker of the typed program handles every node kind, and refuses one it does not know.

A walker that skipped an unknown statement would silently compute without it: adding a node
kind to mlclab/lang/typed.py must make these tests fail until each walker has its visit_ method.
"""
from dataclasses import dataclass

import numpy as np
import pytest

from mlclab import reference
from mlclab.lang import typed
from mlclab.frontend.parser import parse_program
from mlclab.api import drawn_inputs, shapes
from mlclab.backend import builder

# Every visitor over the typed program; a new one is added here.
WALKERS = [builder._FunctionBuilder, reference._Evaluator, shapes._ShapeWalker,
           drawn_inputs.DomainWalker]

SOURCE = """\
def g(x: Tensor[(4,), f32]):
    return x + 1.0, x

def f(x: Tensor[(4,), f32]):
    a, b = g(x)
    t = (a, b)
    c = t[0] * 2.0
    if sum(c) > 0.0:
        y = relu(c)
    else:
        y = -c
    return y
"""


@dataclass(eq=False)
class Repeat(typed.Stmt):
    """A statement kind no walker knows (a loop, say)."""

    body: list
    span: typed.Span


@dataclass(eq=False)
class Mystery(typed.Expr):
    """An expression kind no walker knows."""


def handled(walker) -> set:
    return {name[len("visit_"):] for name in dir(walker) if name.startswith("visit_")}


@pytest.mark.parametrize("walker", WALKERS, ids=lambda w: w.__name__)
def test_each_walker_handles_exactly_the_typed_node_classes(walker):
    assert handled(walker) == {cls.__name__ for cls in typed.node_classes()}


def test_the_node_classes_are_the_statements_and_expressions():
    names = {cls.__name__ for cls in typed.node_classes()}
    assert names == {"Ref", "Const", "Call", "FuncCall", "TupleExpr", "GetItem",
                     "Assign", "Return", "If"}


def test_the_example_uses_every_node_class():
    seen = set()

    def walk(obj):
        if isinstance(obj, typed.Node):
            seen.add(type(obj))
            for value in vars(obj).values():
                walk(value)
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                walk(item)

    for fn in parse_program(SOURCE).functions.values():
        walk(fn.body)
    assert seen == typed.node_classes()


def program_with(make_node):
    """SOURCE's f with a node of an unknown kind as its first statement."""
    program = parse_program(SOURCE)
    f = program.functions["f"]
    f.body.insert(0, make_node(f))
    return program


UNKNOWN = {
    "statement": lambda f: Repeat([], f.span),
    "expression": lambda f: typed.Assign(["z"], [f.span], Mystery(f.params[0].type, f.span),
                                         f.span),
}


@pytest.mark.parametrize("kind", UNKNOWN)
def test_the_builder_refuses_an_unknown_node(kind):
    program = program_with(UNKNOWN[kind])
    name = "Repeat" if kind == "statement" else "Mystery"
    with pytest.raises(NotImplementedError, match=f"visit_{name}"):
        builder.build_module(program)


@pytest.mark.parametrize("kind", UNKNOWN)
def test_the_reference_refuses_an_unknown_node(kind):
    program = program_with(UNKNOWN[kind])
    name = "Repeat" if kind == "statement" else "Mystery"
    with pytest.raises(NotImplementedError, match=f"visit_{name}"):
        reference.evaluate(program, "f", [np.ones(4, np.float32)])


@pytest.mark.parametrize("kind", UNKNOWN)
def test_the_size_check_refuses_an_unknown_node(kind):
    program = program_with(UNKNOWN[kind])
    name = "Repeat" if kind == "statement" else "Mystery"
    with pytest.raises(NotImplementedError, match=f"visit_{name}"):
        shapes.check_sizes(program, "f", {}, {})


def test_the_builder_is_left_usable_after_refusing(capfd):
    """The failed function is closed through TVM's public API: no warning on stderr."""
    with pytest.raises(NotImplementedError):
        builder.build_module(program_with(UNKNOWN["statement"]))
    import gc

    gc.collect()
    assert "remaining blocks" not in capfd.readouterr().err
    builder.build_module(parse_program(SOURCE))


def test_visitor_passes_extra_arguments_and_names_itself_when_it_cannot_visit():
    class Counter(typed.Visitor):
        def visit_Ref(self, node, scale):
            return scale

    ref = typed.Ref(typed.TensorType((), "float32"), typed.Span(1, 0, 1, 1), "x")
    assert Counter().visit(ref, 3) == 3
    const = typed.Const(ref.type, ref.span, 1.0)
    with pytest.raises(NotImplementedError, match="Counter has no visit_Const"):
        Counter().visit(const, 3)
