"""Python ``ast`` -> typed program. Every rejected program stops here with a ``DSLError``.

The parser never runs the student's code: it reads the syntax tree, resolves names against
the parameters, earlier bindings, the operator table and the program's other functions, and
checks every shape and dtype through the table's rules before TVM sees anything.
"""
from __future__ import annotations

import ast
import re
from typing import Optional

from ..lang.diagnostics import DSLError
from ..lang.recursion import MAX_DEPTH, run_deep
from ..lang.source import Span, columns_to_characters, line_at, source_lines, without_bom
from ..lang.typed import Function, TypedProgram
from .calls import CallChecker
from .expressions import ExpressionChecker
from .signatures import SignatureReader
from .statements import StatementChecker
from .syntax import head_span, is_docstring

_UNSUPPORTED_STMT = {
    ast.AsyncFor: "loops are not part of tinynn",
    ast.While: "while loops are not part of tinynn: a program is a dataflow graph of tensor "
               "operators (a for loop over range(N) with a literal N is unrolled)",
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

_SUPPORTED = ("supported: name = expr, a, b = expr, return expr, if/else on a bool scalar, "
              "for t in range(N) with a literal N")

_NOT_TEXT = re.compile("[\ud800-\udfff\x00]")   # ast.parse raises bare exceptions on these


def parse_program(source: str, filename: str = "<string>") -> TypedProgram:
    """Check every function of ``source``; the first problem found is a ``DSLError``."""
    program = _Program(source, filename)
    try:
        return run_deep(program.check)
    except RecursionError:   # only where run_deep could not get its big stack
        raise program.error("this program is nested too deeply to check here",
                            Span(1, 0, 1, max(len(program.lines[0]), 1)),
                            hint="split long expressions into several assignments") from None


class _Program(SignatureReader):
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
            elif not (i == 0 and is_docstring(node)):
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

    # ------------------------------------------------------------------ functions
    def function(self, name: str) -> Function:
        """The checked function ``name`` (callees are checked when first called)."""
        if name in self.done:
            return self.done[name]
        node = self.defs[name]
        self.in_progress.append(name)
        params, ret, symbols = self.signatures[name]
        checker = FunctionChecker(self, symbols)
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


class FunctionChecker(StatementChecker, ExpressionChecker, CallChecker, ast.NodeVisitor):
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
        self.unrolled = 0             # loop iterations unrolled so far in this function

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
            raise self.p.error(message, head_span(node), hint=_SUPPORTED)
        raise self.p.error(f"{_describe(node)} is not part of tinynn", node)



def _name_span(node: ast.FunctionDef) -> Span:
    # "def name" on the def line, for errors about the function as a whole
    return Span(node.lineno, node.col_offset, node.lineno, node.col_offset + 4 + len(node.name))


def _describe(node) -> str:
    names = {ast.Lambda: "lambda", ast.ListComp: "a list comprehension", ast.List: "a list",
             ast.Dict: "a dict", ast.Set: "a set", ast.DictComp: "a dict comprehension",
             ast.GeneratorExp: "a generator", ast.JoinedStr: "an f-string", ast.Await: "await",
             ast.Starred: "*unpacking", ast.NamedExpr: "the walrus operator :=",
             ast.Slice: "a slice", ast.SetComp: "a set comprehension"}
    return names.get(type(node), type(node).__name__)
