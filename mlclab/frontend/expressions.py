"""Expressions and indexing: literals, names, Python's operators (through the table's
symbols), tuples, subscripts as ``strided_slice`` + ``squeeze``, and the syntax tinynn refuses."""
from __future__ import annotations

import ast
import difflib
import math

from .. import ops as O
from ..lang.source import Span
from ..lang.typed import Call, Expr, GetItem, Ref, TupleExpr, TupleType
from .syntax import MODULE_CONSTANTS, Literal, named_constant


class ExpressionChecker:
    """The function checker's expressions (a mixin of ``parser.FunctionChecker``): visiting one
    returns a typed ``Expr``, or a ``Literal`` still waiting for a dtype."""

    def visit_Constant(self, node: ast.Constant):
        if type(node.value) is float and math.isinf(node.value):
            # Python reads 1e999 as inf; no float dtype holds the number that was written
            written = self.p.lines[node.lineno - 1][node.col_offset:node.end_col_offset]
            raise self.p.error(f"{written} is beyond every float dtype (Python reads it as "
                               "inf)", node,
                               hint="write inf (or -inf) if infinity is meant")
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
        if node.id in self.p.defs:
            raise self.p.error(f"{node.id!r} is a function: call it", node,
                               hint=f"{node.id}(...)")
        constant = named_constant(node)
        if constant is not None:
            return Literal(constant, Span.of(node))
        if node.id in O.OPS:
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

    def visit_Subscript(self, node: ast.Subscript) -> Expr:
        value = self.visit(node.value)
        idx = node.slice
        if isinstance(value, Literal):
            raise self.p.error("a number cannot be indexed", node.value)
        if isinstance(value.type, TupleType):
            return self.tuple_item(value, idx, node)
        return self.slice_tensor(value, node)

    def tuple_item(self, value: Expr, idx, node) -> GetItem:
        i = self.index_int(idx, "a tuple index")
        n = len(value.type.fields)
        if not -n <= i < n:
            raise self.p.error(f"index {i} is out of range for a tuple of {n}", idx)
        return GetItem(value.type.fields[i % n], Span.of(node), value, i % n)

    def index_int(self, node, what: str) -> int:
        """An int literal (or a literal expression such as ``t + 1`` in an unrolled loop)."""
        value = self.visit(node)
        if isinstance(value, Expr):
            raise self.p.error(f"{what} must be a static int, not a tensor", node,
                               hint="indexing with tensors is not supported; bounds are int "
                                    "literals (or a for-loop's variable)")
        if not (isinstance(value, Literal) and type(value.value) is int):
            raise self.p.error(f"{what} must be an int literal", node,
                               hint="bounds are int literals (or a for-loop's variable)")
        return value.value

    def slice_tensor(self, value: Expr, node: ast.Subscript) -> Expr:
        """``x[0]``, ``x[:, 1:-1]``, ``x[..., ::2]``: a ``strided_slice`` call, then a
        ``squeeze`` of the axes an int index removes (numpy's basic indexing)."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape = value.type.shape
        ellipses = [e for e in items if isinstance(e, ast.Constant) and e.value is Ellipsis]
        if len(ellipses) > 1:
            raise self.p.error("an index can have only one ellipsis (...)", ellipses[1])
        explicit = len(items) - len(ellipses)
        if explicit > len(shape):
            raise self.p.error(f"too many indices: {value.type} has {len(shape)} axes, "
                               f"{explicit} are indexed", node.slice)
        begin, end, steps, where, drop = [], [], [], [], []
        for item in items:
            if item in ellipses:
                for _ in range(len(shape) - explicit):
                    begin.append(None), end.append(None), steps.append(1), where.append(item)
                continue
            axis = len(begin)
            if isinstance(item, ast.Slice):
                b, e, s = (None if part is None else self.index_int(part, "a slice bound")
                           for part in (item.lower, item.upper, item.step))
                if s == 0:
                    raise self.p.error("a slice step cannot be zero", item.step)
                begin.append(b), end.append(e), steps.append(1 if s is None else s)
            else:
                self.refuse_index(item)
                i = self.index_int(item, "an index")
                size = shape[axis]
                if isinstance(size, int) and not -size <= i < size:
                    valid = f"valid: {-size} .. {size - 1}" if size else "it is empty"
                    raise self.p.error(f"index {i} is out of range for axis {axis} of size "
                                       f"{size} ({valid})", item)
                begin.append(i), end.append(None if i == -1 else i + 1), steps.append(1)
                drop.append(axis)
            where.append(item)
        while begin and (begin[-1], end[-1], steps[-1]) == (None, None, 1) \
                and len(begin) - 1 not in drop:
            begin.pop(), end.pop(), steps.pop(), where.pop()
        out: Expr = value
        if begin:
            located = ast.copy_location(ast.Tuple(elts=where, ctx=ast.Load()), node.slice)
            located.end_lineno, located.end_col_offset = (node.slice.end_lineno,
                                                          node.slice.end_col_offset)
            values = {"x": value, "begin": tuple(begin), "end": tuple(end),
                      "strides": tuple(steps)}
            op = O.OPS["strided_slice"]
            ty, attrs = self.check(op, values, {"x": node.value, "begin": located,
                                                "end": located, "strides": located}, node)
            out = Call(ty, Span.of(node), op, [value], attrs)
        if drop:
            op = O.OPS["squeeze"]
            ty, attrs = self.check(op, {"x": out, "axis": tuple(drop)}, {}, node)
            out = Call(ty, Span.of(node), op, [out], attrs)
        return out

    def refuse_index(self, item) -> None:
        if isinstance(item, ast.Constant) and item.value is None:
            raise self.p.error("None (numpy's newaxis) is not supported in an index", item,
                               hint="insert the axis with expand_dims(x, axis)")
        if isinstance(item, (ast.List, ast.Tuple)):
            raise self.p.error("indexing with a list or tuple of indices is not supported",
                               item, hint="index with one int or slice per axis, e.g. x[0, 1:3]")

    def visit_Attribute(self, node: ast.Attribute):
        if node.attr == "shape":
            raise self.p.error(
                "a tensor has no .shape here: its sizes are fixed when the program is checked",
                node, hint="the shape is in the parameter's annotation; for a size that varies, "
                           "name it there (Tensor[(\"n\", 784), f32]) and write \"n\" where a "
                           "shape is needed, e.g. reshape(x, (\"n\", -1))")
        if node.attr == "T":
            raise self.p.error(".T is not part of tinynn", node,
                               hint=f"use transpose({ast.unparse(node.value)})")
        constant = named_constant(node)
        if constant is not None:
            return Literal(constant, Span.of(node))
        if isinstance(node.value, ast.Name) and node.value.id in {m for m, _ in MODULE_CONSTANTS}:
            known = ", ".join(f"{node.value.id}.{n}" for m, n in MODULE_CONSTANTS
                              if m == node.value.id)
            raise self.p.error(f"{ast.unparse(node)} is not a constant tinynn knows", node,
                               hint=f"constants: {known}; call operators by name: exp(x), "
                                    "not np.exp(x)")
        raise self.p.error("attribute access is not part of tinynn", node,
                           hint="call operators by name: exp(x), not np.exp(x) or x.exp()")

    def visit_List(self, node: ast.List):
        raise self.p.error("a list is not part of tinynn", node,
                           hint="use a tuple: (" + ", ".join(ast.unparse(e) for e in node.elts)
                                + ("," if len(node.elts) == 1 else "") + ")")

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
