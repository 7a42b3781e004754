"""Signatures: a def's annotations (``Tensor[(d0, ...), dtype]``, a return annotation) read as
types, with symbolic sizes collected; never evaluated."""
from __future__ import annotations

import ast
import keyword
import unicodedata

from ..lang.annotations import DTYPE_NAMES, DTYPES
from ..lang.source import Span
from ..lang.typed import Param, TensorType, TupleType
from .syntax import attr_name

_DECORATORS = {"function"}   # @mlclab.function / @function, with or without arguments
_MAX_SIZE = 2 ** 63 - 1                   # TVM's shapes are int64


class SignatureReader:
    """The part of the program checker that reads signatures; ``error`` locates a problem."""

    def signature(self, node: ast.FunctionDef):
        """(params, declared return type or None, symbolic size names) of a def."""
        self.check_decorators(node)
        self.check_parameter_list(node.args)
        symbols: set[str] = set()
        params, seen = [], set()
        for arg in node.args.args:
            if arg.annotation is None:
                raise self.error(f"parameter {arg.arg!r} needs a type annotation",
                                 arg, hint=f"{arg.arg}: Tensor[(2, 3), f32]")
            if arg.arg in seen:
                raise self.error(f"parameter {arg.arg!r} is listed twice", arg)
            seen.add(arg.arg)
            ty = self.tensor_annotation(arg.annotation, symbols, allow_new_symbols=True)
            params.append(Param(arg.arg, ty, Span.of(arg)))
        ret = None
        if node.returns is not None:
            ret = self.return_annotation(node.returns, symbols)
        return params, ret, symbols

    def check_decorators(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if attr_name(target) not in _DECORATORS:
                raise self.error("only @mlclab.function may decorate a tinynn function", dec)

    def check_parameter_list(self, a: ast.arguments) -> None:
        for extra, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
            if extra is not None:
                raise self.error(f"{what} is not supported: list every tensor parameter", extra)
        if a.kwonlyargs or a.posonlyargs:
            raise self.error("keyword-only and positional-only markers are not supported",
                             (a.kwonlyargs or a.posonlyargs)[0])
        if a.defaults:
            raise self.error("parameters cannot have default values: every parameter is a tensor "
                             "the caller passes", a.defaults[0])

    def tensor_annotation(self, node, symbols: set, allow_new_symbols: bool) -> TensorType:
        example = "Tensor[(2, 3), f32]"
        if not (isinstance(node, ast.Subscript) and attr_name(node.value) == "Tensor"):
            raise self.error("expected a Tensor annotation", node, hint=f"for example {example}")
        sl = node.slice
        if not (isinstance(sl, ast.Tuple) and len(sl.elts) == 2):
            raise self.error("a Tensor annotation takes a shape and a dtype", node,
                             hint=f"for example {example}")
        shape_node, dtype_node = sl.elts
        if isinstance(shape_node, ast.Tuple):
            dim_nodes = shape_node.elts
        elif isinstance(shape_node, (ast.Constant, ast.Name)):
            dim_nodes = [shape_node]
        else:
            raise self.error("the shape must be a tuple of sizes", shape_node,
                             hint="sizes are int literals or strings naming a symbolic size, "
                                  "e.g. (\"n\", 784)")
        shape = tuple(self.size(d, symbols, allow_new_symbols) for d in dim_nodes)
        return TensorType(shape, self.dtype_value(dtype_node))

    def size(self, node, symbols: set, allow_new_symbols: bool):
        """One dimension of an annotation: an int literal or a symbolic size's name."""
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
            if node.value > _MAX_SIZE:
                raise self.error(f"the size {node.value} does not fit in int64, the type of "
                                 "TVM's shapes", node, hint="sizes go up to 2**63 - 1")
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.isidentifier():
            name = self.size_name(node)
            if name not in symbols and not allow_new_symbols:
                raise self.error(f"symbolic size {name!r} does not appear among the "
                                 f"parameters' shapes", node)
            symbols.add(name)
            return name
        raise self.error("a size is a non-negative int literal or a string naming a "
                         "symbolic size", node, hint="e.g. Tensor[(\"n\", 784), f32]")

    def size_name(self, node: ast.Constant) -> str:
        """A symbolic size's name, which later stages read back as a Python expression."""
        name = node.value
        if keyword.iskeyword(name):
            raise self.error(f"{name!r} is a Python keyword, so it cannot name a symbolic size",
                             node, hint="choose a name such as \"n\"")
        normal = unicodedata.normalize("NFKC", name)
        if normal != name:
            raise self.error(f"Python reads the name {name!r} as {normal!r}, so it cannot name a "
                             "symbolic size as written", node, hint=f"write \"{normal}\"")
        return name

    def return_annotation(self, node, symbols: set):
        if isinstance(node, ast.Tuple):
            return TupleType(tuple(self.return_annotation(e, symbols) for e in node.elts))
        if isinstance(node, ast.Subscript) and attr_name(node.value) in ("tuple", "Tuple"):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return TupleType(tuple(self.return_annotation(e, symbols) for e in elts))
        return self.tensor_annotation(node, symbols, allow_new_symbols=False)

    def dtype_value(self, node) -> str:
        name = attr_name(node)
        if name in DTYPE_NAMES:
            return DTYPE_NAMES[name]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in DTYPES:
            return node.value
        raise self.error("unknown dtype", node,
                         hint="use one of " + ", ".join(DTYPE_NAMES)
                         + " or a name such as \"float32\"")
