"""Python ``ast`` -> typed program. Every rejected program stops here with a ``DSLError``.

The parser never runs the student's code: it reads the syntax tree, resolves names against
the parameters, earlier bindings, the operator table and the program's other functions, and
checks every shape and dtype through the table's rules before TVM sees anything.
"""
from __future__ import annotations

import ast
import difflib
import keyword
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from .. import ops as O
from ..lang import dims as D
from ..lang.annotations import DTYPE_NAMES, DTYPES
from ..lang.diagnostics import DSLError
from ..lang.recursion import MAX_DEPTH, run_deep
from ..lang.source import Span, columns_to_characters, line_at, source_lines, without_bom
from ..lang.typed import (Assign, Call, Const, Expr, FuncCall, Function, GetItem, If, Param, Ref,
                    Return, TensorType, TupleExpr, TupleType, TypedProgram)

_DECORATORS = {"function"}   # @mlclab.function / @function, with or without arguments

_UNSUPPORTED_STMT = {
    ast.For: "loops are not part of tinynn: a program is a dataflow graph of tensor operators "
             "(use sum, matmul, ... instead of looping over elements)",
    ast.AsyncFor: "loops are not part of tinynn",
    ast.While: "while loops are not part of tinynn: a program is a dataflow graph of tensor "
               "operators",
    ast.Import: "import is not allowed inside a tinynn function",
    ast.ImportFrom: "import is not allowed inside a tinynn function",
    ast.With: "with blocks are not part of tinynn",
    ast.Try: "try/except is not part of tinynn",
    ast.Raise: "raise is not part of tinynn",
    ast.Assert: "assert is not part of tinynn; mlclab checks shapes for you",
    ast.Delete: "del is not part of tinynn",
    ast.Global: "global is not part of tinynn",
    ast.Nonlocal: "nonlocal is not part of tinynn",
    ast.FunctionDef: "functions cannot be nested: define them side by side at the top level",
    ast.ClassDef: "classes are not part of tinynn",
}

_SUPPORTED = ("supported: name = expr, a, b = expr, return expr, if/else on a bool scalar")

_MAX_SIZE = 2 ** 63 - 1                   # TVM's shapes are int64
# Each call between Relax functions nests in TVM's VM on the C stack: a chain of 4000 calls
# killed the process (SIGSEGV) on an 8 MiB main-thread stack, 2000 ran. Half that is allowed.
MAX_CALL_DEPTH = 1000
_NOT_TEXT = re.compile("[\ud800-\udfff\x00]")   # ast.parse raises bare exceptions on these


@dataclass
class Literal:
    """A number literal before it meets a tensor and takes its dtype."""

    value: Union[int, float, bool]
    span: Span


def parse_program(source: str, filename: str = "<string>") -> TypedProgram:
    """Check every function of ``source``; the first problem found is a ``DSLError``."""
    program = _Program(source, filename)
    try:
        return run_deep(program.check)
    except RecursionError:   # only where run_deep could not get its big stack
        raise program.error("this program is nested too deeply to check here",
                            Span(1, 0, 1, max(len(program.lines[0]), 1)),
                            hint="split long expressions into several assignments") from None


class _Program:
    """The program as a whole: the text, its top-level defs, their signatures, the call graph."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename
        self.lines = source_lines(source)
        self.depth = 0   # nesting of the node being checked, across calls (see MAX_DEPTH)

    def error(self, message: str, where, hint: Optional[str] = None) -> DSLError:
        span = where if isinstance(where, Span) else Span.of(where)
        return DSLError.at(message, span, self.lines, self.filename, hint=hint)

    # ------------------------------------------------------------------ the text
    def check(self) -> TypedProgram:
        self.defs = self.top_level_defs(self.parse())
        self.signatures = {name: self.signature(node) for name, node in self.defs.items()}
        self.done: dict[str, Function] = {}
        self.call_depth: dict[str, int] = {}   # 1 + the deepest chain of calls it starts
        self.in_progress: list[str] = []
        for name in self.defs:
            self.function(name)
        return TypedProgram({name: self.done[name] for name in self.defs}, self.source,
                            self.filename)

    def parse(self) -> ast.Module:
        text = without_bom(self.source)
        self.refuse_non_text(text)
        try:
            tree = ast.parse(text, filename=self.filename)
        except SyntaxError as exc:
            raise self.syntax_error(exc) from None
        except (RecursionError, MemoryError):
            # ast.parse builds its tree recursively; past RECURSION_LIMIT it gives up.
            raise self.error("this program is nested too deeply for Python's parser",
                             Span(1, 0, 1, max(len(self.lines[0]), 1)),
                             hint="split long expressions into several assignments") from None
        columns_to_characters(tree, self.lines)
        return tree

    def refuse_non_text(self, text: str) -> None:
        """What ``ast.parse`` raises a bare exception for, as a located error instead."""
        if not _NOT_TEXT.search(text):
            return
        for lineno, line in enumerate(self.lines, 1):
            found = _NOT_TEXT.search(line)
            if found:
                ch = found.group()
                what = (f"U+{ord(ch):04X}, half of a UTF-16 surrogate pair, which is not a "
                        "character on its own" if ch != "\0" else "a NUL character (U+0000)")
                raise self.error(f"the text holds {what}; Python source cannot contain it",
                                 Span(lineno, found.start(), lineno, found.end()),
                                 hint="delete it (bad copy-pastes leave such characters)")

    def syntax_error(self, exc: SyntaxError) -> DSLError:
        lineno = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        end = (exc.end_offset - 1) if exc.end_offset and exc.end_lineno == exc.lineno else col + 1
        return DSLError(f"Python syntax error: {exc.msg}", lineno=lineno, col_offset=col,
                        end_col_offset=max(end, col + 1), source_line=line_at(self.lines, lineno),
                        filename=self.filename)

    def top_level_defs(self, tree: ast.Module) -> dict:
        defs: dict[str, ast.FunctionDef] = {}
        for i, node in enumerate(tree.body):
            if isinstance(node, ast.FunctionDef):
                self.check_def_name(node, defs)
                defs[node.name] = node
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                continue   # how a .py file makes the annotations importable; nothing to compile
            elif not (i == 0 and _is_docstring(node)):
                raise self.error("only def statements (and imports) may stand at the top level "
                                 "of a tinynn program", node)
        if not defs:
            raise self.error("no function found: a tinynn program is one or more def statements",
                             Span(1, 0, 1, max(len(self.lines[0]), 1)))
        return defs

    def check_def_name(self, node: ast.FunctionDef, defs: dict) -> None:
        if node.name in defs:
            raise self.error(f"function {node.name!r} is defined twice (first at line "
                             f"{defs[node.name].lineno})", _name_span(node))
        if node.name in O.OPS:
            raise self.error(f"function name {node.name!r} would hide the operator "
                             f"{O.OPS[node.name].signature()}", _name_span(node),
                             hint="choose another name")

    # ------------------------------------------------------------------ signatures
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
            if _attr_name(target) not in _DECORATORS:
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
        if not (isinstance(node, ast.Subscript) and _attr_name(node.value) == "Tensor"):
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
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
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
        if isinstance(node, ast.Subscript) and _attr_name(node.value) in ("tuple", "Tuple"):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return TupleType(tuple(self.return_annotation(e, symbols) for e in elts))
        return self.tensor_annotation(node, symbols, allow_new_symbols=False)

    def dtype_value(self, node) -> str:
        name = _attr_name(node)
        if name in DTYPE_NAMES:
            return DTYPE_NAMES[name]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in DTYPES:
            return node.value
        raise self.error("unknown dtype", node,
                         hint="use one of " + ", ".join(DTYPE_NAMES) + " or a name such as \"float32\"")

    # ------------------------------------------------------------------ functions
    def function(self, name: str) -> Function:
        """The checked function ``name`` (callees are checked when first called)."""
        if name in self.done:
            return self.done[name]
        node = self.defs[name]
        self.in_progress.append(name)
        params, ret, symbols = self.signatures[name]
        checker = _FunctionChecker(self, symbols)
        for p in params:
            checker.env[p.name] = p.type
        body, returned = checker.block(node.body)
        if returned is None:
            raise self.error(f"function {name!r} does not return a value on every path",
                             _name_span(node), hint="end it with: return <expr>")
        if ret is not None and ret != returned:
            raise self.error(f"function {name!r} is annotated to return {ret} but returns "
                             f"{returned}", node.returns)
        fn = Function(name, params, body, returned, Span.of(node), calls=sorted(checker.calls))
        self.call_depth[name] = 1 + max((self.call_depth[c] for c in checker.calls), default=0)
        self.in_progress.pop()
        self.done[name] = fn
        return fn


class _FunctionChecker(ast.NodeVisitor):
    """Type-checks one function body, node by node, as an ``ast.NodeVisitor``.

    Visiting a statement returns its typed statement; visiting an expression returns a typed
    ``Expr`` (or a ``Literal`` still waiting for a dtype). Python syntax without a
    ``visit_`` method here is not part of tinynn: ``generic_visit`` says so at its line.
    ``env`` maps the names bound so far to their types.
    """

    def __init__(self, program: _Program, symbols: set):
        self.p = program
        self.symbols = symbols
        self.env: dict = {}
        self.one_branch: dict = {}    # name -> the if that bound it in one branch only
        self.calls: set = set()

    def visit(self, node):
        p = self.p
        p.depth += 1
        try:
            if p.depth > MAX_DEPTH:
                raise p.error(f"this is nested more than {MAX_DEPTH} levels deep (expressions "
                              "inside expressions, or functions calling functions)", node,
                              hint="split it into several assignments")
            return super().visit(node)
        finally:
            p.depth -= 1

    def generic_visit(self, node):
        if isinstance(node, ast.stmt):
            message = _UNSUPPORTED_STMT.get(
                type(node), f"{type(node).__name__} statements are not part of tinynn")
            raise self.p.error(message, _head_span(node), hint=_SUPPORTED)
        raise self.p.error(f"{_describe(node)} is not part of tinynn", node)

    # ------------------------------------------------------------------ statement lists
    def block(self, stmts):
        """Check a statement list; return (typed statements, return type or None)."""
        out = []
        for i, stmt in enumerate(stmts):
            if (i == 0 and _is_docstring(stmt)) or isinstance(stmt, ast.Pass):
                continue
            rest = stmts[i + 1:]
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and _ends_in_return(stmt.body) and rest:
                # ``if c: return x`` followed by more code: that code is the else branch.
                out.append(self.visit(_with_else(stmt, rest)))
                return out, _returned_type(out[-1])
            out.append(self.visit(stmt))
            returned = _returned_type(out[-1])
            if returned is not None:
                self.unreachable(rest)
                return out, returned
        return out, None

    def unreachable(self, rest):
        rest = [s for s in rest if not isinstance(s, ast.Pass)]
        if rest:
            raise self.p.error("this code can never run: it follows a return", rest[0])

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, stmt: ast.Assign) -> Assign:
        if len(stmt.targets) != 1:
            raise self.p.error("chained assignment (a = b = ...) is not supported", stmt)
        return self.assign(stmt.targets[0], self.visit(stmt.value), stmt)

    def visit_AugAssign(self, stmt: ast.AugAssign) -> Assign:
        if not isinstance(stmt.target, ast.Name):
            raise self.p.error("only a plain name can be updated in place", stmt.target)
        current = ast.Name(stmt.target.id, ast.Load(), **_loc(stmt.target))
        return self.assign(stmt.target, self.binop(stmt.op, current, stmt.value, stmt), stmt)

    def visit_AnnAssign(self, stmt: ast.AnnAssign) -> Assign:
        if stmt.value is None or not isinstance(stmt.target, ast.Name):
            raise self.p.error("an annotated assignment needs a name and a value", stmt)
        value = self.tensor(self.visit(stmt.value), stmt.value)
        declared = self.p.tensor_annotation(stmt.annotation, self.symbols,
                                            allow_new_symbols=False)
        if declared != value.type:
            raise self.p.error(f"{stmt.target.id} is annotated {declared} but the value is "
                               f"{value.type}", stmt.value)
        return self.assign(stmt.target, value, stmt)

    def visit_Expr(self, stmt: ast.Expr):
        raise self.p.error("an expression on its own does nothing: assign it to a name or "
                           "return it", stmt)

    def assign(self, target, value, stmt) -> Assign:
        if isinstance(value, Literal):
            raise self.p.error("a tinynn value is a tensor; a bare number has no shape or dtype",
                               stmt.value if hasattr(stmt, "value") else stmt,
                               hint="use the number directly where a tensor meets it, e.g. x * 2.0")
        if isinstance(target, ast.Name):
            self.bind(target.id, value.type)
            return Assign([target.id], [Span.of(target)], value, Span.of(stmt))
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name)
                                                             for e in target.elts):
            return self.unpack(target, value, stmt)
        raise self.p.error("only names can be assigned to (x = ..., or a, b = ...)", target)

    def unpack(self, target, value, stmt) -> Assign:
        if not isinstance(value.type, TupleType):
            raise self.p.error(f"cannot unpack {value.type} into {len(target.elts)} names",
                               target)
        if len(value.type.fields) != len(target.elts):
            raise self.p.error(f"the value holds {len(value.type.fields)} results, but "
                               f"{len(target.elts)} names receive them", target)
        for name, ty in zip(target.elts, value.type.fields):
            self.bind(name.id, ty)
        return Assign([e.id for e in target.elts], [Span.of(e) for e in target.elts], value,
                      Span.of(stmt))

    def bind(self, name: str, ty):
        self.env[name] = ty
        self.one_branch.pop(name, None)

    def visit_Return(self, stmt: ast.Return) -> Return:
        if stmt.value is None:
            raise self.p.error("a tinynn function must return a tensor (or a tuple of them)", stmt)
        value = self.visit(stmt.value)
        if isinstance(value, Literal):
            value = self.tensor(value, stmt.value)
        return Return(value, Span.of(stmt))

    def visit_If(self, stmt: ast.If) -> If:
        cond = self.condition(stmt.test)
        before = dict(self.env)
        then_body, then_ret = self.block(stmt.body)
        then_env, self.env = self.env, dict(before)
        else_body, else_ret = self.block(stmt.orelse)
        else_env, self.env = self.env, dict(before)
        span = Span(stmt.lineno, stmt.col_offset, stmt.lineno,
                    stmt.test.end_col_offset + 1 if stmt.test.end_col_offset else stmt.col_offset + 2)
        if (then_ret is None) != (else_ret is None):
            raise self.p.error("either both branches of this if return, or neither does",
                               span, hint="add the missing return, or move it after the if")
        if then_ret is not None:
            if then_ret != else_ret:
                raise self.p.error(f"the branches return different types: {then_ret} and "
                                   f"{else_ret}", span)
            return If(cond, then_body, else_body, [], [then_ret], True, span)
        outputs, types = self.merge_branches(stmt, then_env, else_env, span)
        return If(cond, then_body, else_body, outputs, types, False, span)

    def condition(self, test) -> Expr:
        cond = self.tensor(self.visit(test), test)
        if not (isinstance(cond.type, TensorType) and cond.type.ndim == 0
                and cond.type.dtype == "bool"):
            raise self.p.error(f"an if condition must be a bool scalar (rank 0); this is "
                               f"{cond.type}", test,
                               hint="reduce it to one value, e.g. if sum(x) > 0.0:")
        return cond

    def merge_branches(self, stmt: ast.If, then_env, else_env, span):
        """The names both branches bind (the if's outputs, in source order) and their types."""
        outputs, types = [], []
        assigned = _assigned_names(stmt.body) | _assigned_names(stmt.orelse)
        for name in _ordered(assigned, stmt):
            if name in then_env and name in else_env:
                if then_env[name] != else_env[name]:
                    raise self.p.error(f"{name} has type {then_env[name]} in one branch and "
                                       f"{else_env[name]} in the other", span)
                outputs.append(name)
                types.append(then_env[name])
                self.bind(name, then_env[name])
            else:
                self.env.pop(name, None)
                self.one_branch[name] = stmt.lineno
        if not outputs:
            raise self.p.error("this if binds no name that both branches define: code after it "
                               "could not use its result", span,
                               hint="assign the same names in both branches (or add an else)")
        return outputs, types

    # ------------------------------------------------------------------ expressions
    def visit_Constant(self, node: ast.Constant):
        if type(node.value) in (int, float, bool):
            return Literal(node.value, Span.of(node))
        raise self.p.error(f"{type(node.value).__name__} literals are not part of tinynn", node)

    def visit_Name(self, node: ast.Name) -> Ref:
        if node.id in self.env:
            return Ref(self.env[node.id], Span.of(node), node.id)
        if node.id in self.one_branch:
            raise self.p.error(f"{node.id!r} is assigned in only one branch of the if on line "
                               f"{self.one_branch[node.id]}, so it may be undefined here", node,
                               hint="assign it in both branches")
        if node.id in O.OPS or node.id in self.p.defs:
            raise self.p.error(f"{node.id!r} is a function: call it", node,
                               hint=f"{node.id}(...)")
        close = difflib.get_close_matches(node.id, list(self.env) + list(O.OPS), n=1)
        raise self.p.error(f"name {node.id!r} is not defined", node,
                           hint=f"did you mean {close[0]!r}?" if close else
                           "names are parameters or values assigned above")

    def visit_BinOp(self, node: ast.BinOp):
        return self.binop(node.op, node.left, node.right, node)

    def binop(self, op, left_node, right_node, node):
        entry = O.for_binary_symbol(type(op))
        if entry is None:
            spelled = O.BINARY_SYNTAX.get(type(op), type(op).__name__)
            raise self.p.error(f"the operator {spelled} is not supported on tensors", node)
        left, right = self.visit(left_node), self.visit(right_node)
        if isinstance(left, Literal) and isinstance(right, Literal):
            return self.fold(entry, [left, right], node)
        return self.apply(entry, [left_node, right_node], [], node, evaluated=[left, right])

    def fold(self, entry: O.Op, literals: list, node) -> Literal:
        """``2 * 3``, ``-2``: numbers meeting numbers are computed here, as the table says."""
        try:
            return Literal(O.fold(entry, *(lit.value for lit in literals)), Span.of(node))
        except O.OpTypeError as exc:
            raise self.p.error(exc.message, node, hint=exc.hint) from None

    def visit_UnaryOp(self, node: ast.UnaryOp):
        if isinstance(node.op, ast.UAdd):
            return self.visit(node.operand)
        entry = O.for_unary_symbol(type(node.op))
        if entry is not None:
            operand = self.visit(node.operand)
            if isinstance(operand, Literal):
                return self.fold(entry, [operand], node)
            return self.apply(entry, [node.operand], [], node, evaluated=[operand])
        raise self.p.error("'not' and '~' are not supported on tensors", node,
                           hint="compare instead, e.g. x == 0")

    def visit_Compare(self, node: ast.Compare) -> Call:
        if len(node.ops) != 1:
            raise self.p.error("chained comparisons are not supported", node,
                               hint="compare two values at a time")
        entry = O.for_binary_symbol(type(node.ops[0]))
        if entry is None:
            raise self.p.error("only < <= > >= == != compare tensors", node)
        return self.apply(entry, [node.left, node.comparators[0]], [], node)

    def visit_Tuple(self, node: ast.Tuple) -> TupleExpr:
        items = [self.tensor(self.visit(e), e) for e in node.elts]
        if not items:
            raise self.p.error("an empty tuple holds no tensor", node)
        return TupleExpr(TupleType(tuple(i.type for i in items)), Span.of(node), items)

    def visit_Subscript(self, node: ast.Subscript) -> GetItem:
        value = self.visit(node.value)
        idx = node.slice
        if isinstance(value, Expr) and isinstance(value.type, TupleType) \
                and isinstance(idx, ast.Constant) and type(idx.value) is int:
            n = len(value.type.fields)
            if not -n <= idx.value < n:
                raise self.p.error(f"index {idx.value} is out of range for a tuple of {n}", idx)
            i = idx.value % n
            return GetItem(value.type.fields[i], Span.of(node), value, i)
        raise self.p.error("indexing and slicing are not part of tinynn", node,
                           hint="reshape, transpose, squeeze and the reductions cover most uses")

    def visit_Attribute(self, node: ast.Attribute):
        raise self.p.error("attribute access is not part of tinynn", node,
                           hint="call operators by name: exp(x), not np.exp(x) or x.exp()")

    def visit_BoolOp(self, node: ast.BoolOp):
        raise self.p.error("and/or are not supported on tensors", node)

    def visit_IfExp(self, node: ast.IfExp):
        raise self.p.error("a conditional expression is not supported", node,
                           hint="use where(cond, a, b) for an element-wise choice")

    def tensor(self, value, node) -> Expr:
        if isinstance(value, Literal):
            raise self.p.error("a number alone has no shape or dtype; a tensor is needed here",
                               node)
        if isinstance(value.type, TupleType):
            raise self.p.error(f"a tuple ({value.type}) is used where a tensor is needed", node,
                               hint="unpack it first: a, b = ...")
        return value

    # ------------------------------------------------------------------ calls
    def visit_Call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise self.p.error("call operators and functions by their name", node.func,
                               hint="exp(x), not np.exp(x) or x.exp()")
        name = node.func.id
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None
                                                                     for k in node.keywords):
            raise self.p.error("*args and **kwargs are not supported in calls", node)
        if name in self.p.defs:
            return self.func_call(name, node)
        if name not in O.OPS:
            close = difflib.get_close_matches(name, list(O.OPS) + list(self.p.defs), n=1)
            raise self.p.error(f"unknown operator {name!r}", node.func,
                               hint=f"did you mean {close[0]}?" if close else
                               "see docs/operators.md for the operators tinynn knows")
        return self.apply(O.OPS[name], node.args, node.keywords, node)

    def func_call(self, name: str, node: ast.Call) -> FuncCall:
        if name in self.p.in_progress:
            cycle = self.p.in_progress[self.p.in_progress.index(name):] + [name]
            raise self.p.error("recursion is not supported: " + " -> ".join(cycle), node,
                               hint="tinynn functions form a call graph without cycles")
        callee = self.p.function(name)
        if self.p.call_depth[name] >= MAX_CALL_DEPTH:
            raise self.p.error(f"calls nest more than {MAX_CALL_DEPTH} functions deep here; "
                               "TVM's virtual machine would overflow its stack running them",
                               node, hint="let a function do more before it calls the next")
        self.calls.add(name)
        if node.keywords:
            raise self.p.error(f"pass {name}'s arguments by position", node.keywords[0])
        if len(node.args) != len(callee.params):
            raise self.p.error(f"{name} takes {len(callee.params)} arguments "
                               f"({', '.join(p.name for p in callee.params)}), got "
                               f"{len(node.args)}", node)
        env: dict = {}   # the callee's symbolic sizes -> this call's dimensions
        args = [self.func_argument(name, param, arg_node, env)
                for arg_node, param in zip(node.args, callee.params)]
        return FuncCall(_subst_type(callee.ret_type, env), Span.of(node), name, args)

    def func_argument(self, name: str, param: Param, arg_node, env: dict) -> Expr:
        """One argument of a call of DSL function ``name``, matched against ``param``."""
        arg = self.tensor(self.visit(arg_node), arg_node)
        want, got = param.type, arg.type
        if got.dtype != want.dtype or got.ndim != want.ndim:
            raise self.p.error(f"{name}'s parameter {param.name} is {want}, got {got}", arg_node)
        for dw, dg in zip(want.shape, got.shape):
            if isinstance(dw, int):
                if dw != dg:
                    raise self.p.error(f"{name}'s parameter {param.name} is {want}, got {got}",
                                       arg_node)
            elif dw in env and env[dw] != dg:
                raise self.p.error(
                    f"{name}'s size {dw!r} is {D.format_dim(env[dw])} from an earlier "
                    f"argument but {D.format_dim(dg)} for {param.name}", arg_node)
            else:
                env[dw] = dg
        return arg

    def apply(self, op: O.Op, pos_nodes, kw_nodes, node, evaluated=None) -> Call:
        """Bind arguments to ``op``'s parameters, resolve them, and run its type rule.

        ``evaluated`` holds the already visited tensor operands (of ``+``, unary ``-``).
        """
        bound = self.bind_arguments(op, pos_nodes, kw_nodes, node)
        values, arg_nodes = self.resolve_arguments(op, bound, list(evaluated or []))
        tensor_names = [p.name for p in op.params if p.is_tensor and not p.is_tensor_tuple]
        self.fold_literals(op, values, tensor_names, arg_nodes, node)
        out, attrs = self.check(op, values, arg_nodes, node)
        args = [values[p.name] for p in op.params if p.is_tensor]
        return Call(out, Span.of(node), op, args, attrs)

    def bind_arguments(self, op: O.Op, pos_nodes, kw_nodes, node) -> dict:
        """Parameter name -> the ``ast`` node passed for it."""
        params = op.params
        if len(pos_nodes) > len(params):
            raise self.p.error(f"{op.name} takes at most {len(params)} arguments, got "
                               f"{len(pos_nodes)}", node, hint=f"{op.signature()}")
        bound = {param.name: arg for param, arg in zip(params, pos_nodes)}
        names = [p.name for p in params]
        for kw in kw_nodes:
            if kw.arg not in names:
                close = difflib.get_close_matches(kw.arg, names, n=1)
                raise self.p.error(f"{op.name} has no parameter {kw.arg!r}", kw,
                                   hint=(f"did you mean {close[0]}? " if close else "")
                                   + f"{op.signature()}")
            if kw.arg in bound:
                raise self.p.error(f"{op.name} got {kw.arg!r} twice", kw)
            bound[kw.arg] = kw.value
        missing = [p.name for p in params if p.default is O.REQUIRED and p.name not in bound]
        if missing:
            raise self.p.error(f"{op.name} is missing its argument {missing[0]!r}", node,
                               hint=op.signature())
        return bound

    def resolve_arguments(self, op: O.Op, bound: dict, evaluated: list):
        """(values, nodes): tensor parameters as Expr or Literal, the others as Python values."""
        values: dict = {}
        arg_nodes: dict = {}
        for p in op.params:
            if p.name not in bound:
                values[p.name] = p.default
                continue
            arg = arg_nodes[p.name] = bound[p.name]
            if p.is_tensor_tuple:
                if not isinstance(arg, (ast.Tuple, ast.List)):
                    raise self.p.error(f"{op.name}'s {p.name} is a tuple of tensors", arg,
                                       hint=f"{op.name}((a, b), ...)")
                values[p.name] = [self.tensor(self.visit(e), e) for e in arg.elts]
            elif p.is_tensor:
                values[p.name] = self.tensor_argument(op, p, arg, evaluated)
            else:
                values[p.name] = _literal(arg)     # its parameter's kind reads it in op.check
        return values, arg_nodes

    def tensor_argument(self, op: O.Op, p: O.Param, arg, evaluated: list):
        if p.optional and isinstance(arg, ast.Constant) and arg.value is None:
            return None
        value = evaluated.pop(0) if evaluated else self.visit(arg)
        if isinstance(value, Literal):
            if not p.scalar_ok:
                raise self.p.error(f"{op.name}'s {p.name} must be a tensor, not a number", arg)
            return value
        return self.tensor(value, arg)

    def check(self, op: O.Op, values: dict, arg_nodes: dict, node):
        """(type, attributes) of the call, by the operator's rule; its objections located at
        the argument (or the tuple item) they are about."""
        types = {}
        for p in op.params:
            val = values[p.name]
            if p.is_tensor_tuple:
                types[p.name] = [v.type for v in val]
            elif p.is_tensor:
                types[p.name] = None if val is None else val.type
            else:
                types[p.name] = val
        try:
            return op.check(types, _Written(arg_nodes), frozenset(self.symbols))
        except O.OpTypeError as exc:
            where = arg_nodes.get(exc.param, node) if exc.param else node
            if exc.item is not None and isinstance(where, (ast.Tuple, ast.List)):
                where = where.elts[exc.item]
            raise self.p.error(exc.message, where, hint=exc.hint) from None

    def fold_literals(self, op, values, tensor_names, arg_nodes, node):
        """Give number literals the dtype of the tensors they meet."""
        literals = [n for n in tensor_names if isinstance(values[n], Literal)]
        if not literals:
            return
        tensors = [values[n] for n in tensor_names
                   if values[n] is not None and not isinstance(values[n], Literal)]
        if not tensors:
            raise self.p.error(f"{op.symbol or op.name} needs at least one tensor operand; "
                               "these are all numbers", node)
        # A literal takes the dtype of the operands it stands for (where's branches, never
        # its bool condition): the tensors among the parameters that accept a number.
        peers = [values[n] for n in tensor_names if op.param(n).scalar_ok
                 and values[n] is not None and not isinstance(values[n], Literal)]
        if not peers and any(op.param(n).scalar_ok for n in tensor_names):
            raise self.p.error(f"{op.name}'s {' and '.join(literals)} are both numbers: one must "
                               "be a tensor to give the result its shape and dtype", node,
                               hint="e.g. full_like(x, 1.0) for a tensor of ones like x")
        tensors = peers or tensors
        dtype = tensors[0].type.dtype
        for n in literals:
            lit = values[n]
            v = self.literal_value(lit.value, tensors[0], arg_nodes[n])
            if op.param(n).nonzero_literal and O.is_float(dtype) and v == 0:
                as_zero = "" if lit.value == 0 else f", which is 0 in {O.short(dtype)}"
                raise self.p.error(f"division by the literal {lit.value!r}{as_zero}: every "
                                   "element would be inf or nan", arg_nodes[n],
                                   hint="divide by a non-zero number")
            values[n] = Const(TensorType((), dtype), lit.span, v)

    def literal_value(self, v, tensor: Expr, node):
        """Literal ``v`` as the dtype of ``tensor`` it meets, or a located refusal."""
        dtype = tensor.type.dtype
        if dtype == "bool":
            if type(v) is not bool:
                raise self.p.error(f"the number {v!r} meets a bool tensor", node,
                                   hint="compare with True or False")
            return v
        if isinstance(v, bool):
            raise self.p.error(f"{v} meets a {O.short(dtype)} tensor", node)
        if O.is_float(dtype):
            rounded = _rounded(v, dtype)   # checked as the dtype holds it: 1e-50 is 0 in f32
            if not math.isfinite(rounded):
                raise self.p.error(f"{v!r} is out of range for {O.short(dtype)} (largest "
                                   f"{float(np.finfo(dtype).max):.4g})", node)
            return float(v) if rounded != 0 else 0.0
        if isinstance(v, float):
            raise self.p.error(
                f"the float {v!r} meets the {O.short(dtype)} tensor {_name_of(tensor)}; "
                "mlclab does not promote dtypes silently", node,
                hint=f"use an integer, or convert: astype({_name_of(tensor)}, f32)")
        if not _int_fits(v, dtype):
            raise self.p.error(f"{v} does not fit in {O.short(dtype)}", node)
        return v


# ---------------------------------------------------------------------- helpers

def _ends_in_return(stmts) -> bool:
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and bool(last.orelse) and _ends_in_return(last.body) \
        and _ends_in_return(last.orelse)


def _with_else(stmt: ast.If, rest: list) -> ast.If:
    """``if c: return x`` with the statements after it as its else branch."""
    new = ast.copy_location(ast.If(stmt.test, stmt.body, list(rest)), stmt)
    new.end_lineno, new.end_col_offset = rest[-1].end_lineno, rest[-1].end_col_offset
    return new


def _returned_type(typed):
    """The type a checked statement returns, or None when control goes on after it."""
    if isinstance(typed, Return):
        return typed.value.type
    if isinstance(typed, If) and typed.returns:
        return typed.output_types[0]
    return None


def _attr_name(node) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _name_span(node: ast.FunctionDef) -> Span:
    # "def name" on the def line, for errors about the function as a whole
    return Span(node.lineno, node.col_offset, node.lineno, node.col_offset + 4 + len(node.name))


def _head_span(stmt) -> Span:
    """The statement's first line (``for k in a:``), for statements tinynn does not have."""
    if stmt.end_lineno == stmt.lineno:
        return Span(stmt.lineno, stmt.col_offset, stmt.lineno, stmt.end_col_offset)
    return Span(stmt.lineno, stmt.col_offset, stmt.lineno, 10 ** 6)   # to the line's end


def _loc(node) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


def _number(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand)
        if v is not None and not isinstance(v, bool):
            return -v
    return None


def _literal(node):
    """The Python value of an attribute argument written as a literal: a number (maybe
    negative), True/False/None, a string, a bare name (``f32``) or a tuple of those."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) is str):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        return O.Word(_attr_name(node))
    number = _number(node)
    return O.NOT_A_LITERAL if number is None else number


def _int_fits(v: int, dtype: str) -> bool:
    info = np.iinfo(dtype)
    return info.min <= v <= info.max


def _rounded(v, dtype: str) -> float:
    """Number ``v`` as a float ``dtype`` holds it (inf when out of its range)."""
    try:
        v = float(v)
    except OverflowError:   # an int literal beyond any float
        return math.inf
    if abs(v) > float(np.finfo(dtype).max):   # (np.errstate here cost 0.1 ms a literal)
        return math.inf
    return float(np.asarray(v, dtype=dtype))


class _Written(Mapping):
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


def _name_of(e) -> str:
    return e.name if isinstance(e, Ref) else "x"


def _describe(node) -> str:
    names = {ast.Lambda: "lambda", ast.ListComp: "a list comprehension", ast.List: "a list",
             ast.Dict: "a dict", ast.Set: "a set", ast.DictComp: "a dict comprehension",
             ast.GeneratorExp: "a generator", ast.JoinedStr: "an f-string", ast.Await: "await",
             ast.Starred: "*unpacking", ast.NamedExpr: "the walrus operator :=",
             ast.Slice: "a slice", ast.SetComp: "a set comprehension"}
    return names.get(type(node), type(node).__name__)


def _assigned_names(stmts) -> set:
    out = set()
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def _ordered(names: set, stmt) -> list:
    """``names`` in the order the source first assigns them."""
    first = {}
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names:
            pos = (node.lineno, node.col_offset)
            first[node.id] = min(first.get(node.id, pos), pos)
    return sorted(first, key=first.get)


def _subst_type(ty, env):
    if isinstance(ty, TupleType):
        return TupleType(tuple(_subst_type(f, env) for f in ty.fields))
    return TensorType(tuple(D.substitute(d, env) for d in ty.shape), ty.dtype)
