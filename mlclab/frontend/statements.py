"""Statements and loops: assignments, ``return``, ``if``/``else`` with its merged names, and
``for t in range(N)`` unrolled at check time."""
from __future__ import annotations

import ast
import copy

from ..lang.source import Span
from ..lang.typed import Assign, Expr, If, Return, TensorType, TupleType
from .syntax import Literal, head_span, is_docstring

# ``for t in range(N)`` is unrolled when the program is checked: each iteration is another copy
# of the body in the graph, so the total (nested loops multiply) is capped per function.
MAX_UNROLLED = 10_000


class StatementChecker:
    """The function checker's statements (a mixin of ``parser.FunctionChecker``): visiting one
    returns its typed statement; ``block`` checks a list and says what it returns."""

    def block(self, stmts):
        """Check a statement list; return (typed statements, return type or None)."""
        out = []
        for i, stmt in enumerate(stmts):
            if (i == 0 and is_docstring(stmt)) or isinstance(stmt, ast.Pass):
                continue
            rest = stmts[i + 1:]
            if isinstance(stmt, ast.For):
                out += self.unroll(stmt)
                continue
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

    def unroll(self, stmt: ast.For) -> list:
        """``for t in range(a, b, s):`` with literal bounds: the body once per value, ``t``
        replaced by that int literal (spans still point at the body's lines)."""
        head = head_span(stmt)
        if not (isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name)
                and stmt.iter.func.id == "range"):
            raise self.p.error("a for loop runs over range(N) with an int literal N; looping "
                               "over a tensor or anything else is not supported", stmt.iter,
                               hint="loops are unrolled when the program is checked; use the "
                                    "tensor operators (sum, matmul, ...) or x[t] in the body")
        if not isinstance(stmt.target, ast.Name):
            raise self.p.error("the loop variable must be one name", stmt.target)
        if stmt.orelse:
            raise self.p.error("for ... else is not supported", head)
        if stmt.target.id in self.env:
            raise self.p.error(f"the loop variable {stmt.target.id!r} would hide the tensor "
                               f"{stmt.target.id}", stmt.target, hint="name it t, i or step")
        bounds = []
        for arg in stmt.iter.args:
            value = None if isinstance(arg, ast.Starred) else self.visit(arg)
            if not (isinstance(value, Literal) and type(value.value) is int):
                raise self.p.error("range needs int literals: the loop is unrolled when the "
                                   "program is checked, so its count must be known then", arg,
                                   hint="write the count, e.g. range(4); sizes that vary "
                                        "(symbolic sizes) cannot set a loop count")
            bounds.append(value.value)
        if stmt.iter.keywords or not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and not bounds[2]):
            raise self.p.error("range takes 1 to 3 int literals, with a non-zero step",
                               stmt.iter)
        steps = range(*bounds)
        for node in (n for s in stmt.body for n in ast.walk(s)):
            if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
                what = "return" if isinstance(node, ast.Return) else \
                    "break" if isinstance(node, ast.Break) else "continue"
                raise self.p.error(f"{what} is not supported in a loop: the loop is unrolled "
                                   "a fixed number of times", node,
                                   hint="return after the loop" if what == "return" else None)
            if isinstance(node, ast.Name) and node.id == stmt.target.id \
                    and not isinstance(node.ctx, ast.Load):
                raise self.p.error(f"the loop variable {node.id!r} cannot be assigned in the "
                                   "loop", node)
        try:
            self.unrolled += len(steps)
        except OverflowError:          # more than sys.maxsize iterations: far past the cap
            self.unrolled = MAX_UNROLLED + 1
        if self.unrolled > MAX_UNROLLED:
            raise self.p.error(f"loops here unroll to more than {MAX_UNROLLED} iterations "
                               "(nested loops multiply); each is a copy of the body in the "
                               "graph", head, hint="use tensor operators over an axis instead")
        out = []
        for value in steps:
            body = [_Substitute(stmt.target.id, value).visit(copy.deepcopy(s))
                    for s in stmt.body]
            typed, _ = self.block(body)
            out += typed
        return out

    def unreachable(self, rest):
        rest = [s for s in rest if not isinstance(s, ast.Pass)]
        if rest:
            raise self.p.error("this code can never run: it follows a return", rest[0])

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, stmt: ast.Assign) -> Assign:
        if len(stmt.targets) != 1:
            raise self.p.error("chained assignment (a = b = ...) is not supported", stmt)
        self.refuse_item_assignment(stmt.targets[0])
        return self.assign(stmt.targets[0], self.visit(stmt.value), stmt)

    def refuse_item_assignment(self, target) -> None:
        if isinstance(target, ast.Subscript):
            raise self.p.error("tinynn values cannot be changed in place (item assignment)",
                               target, hint="build a new tensor instead: where(mask, new, old) "
                                            "for chosen elements, or concat((...), axis) of "
                                            "slices")

    def visit_AugAssign(self, stmt: ast.AugAssign) -> Assign:
        self.refuse_item_assignment(stmt.target)
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
                    stmt.test.end_col_offset + 1 if stmt.test.end_col_offset
                    else stmt.col_offset + 2)
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


def _loc(node) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


class _Substitute(ast.NodeTransformer):
    """Replaces reads of a loop variable by the int literal of one iteration."""

    def __init__(self, name: str, value: int):
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(self.value), node)
        return node


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
