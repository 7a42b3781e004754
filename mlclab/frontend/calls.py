"""Calls: of operators (arguments bound to the table's parameters, literals given the dtype
of the tensors they meet, the entry's rule run) and of the program's other DSL functions."""
from __future__ import annotations

import ast
import difflib
import math
from typing import Optional

import numpy as np

from .. import ops as O
from ..lang import dims as D
from ..lang.source import Span
from ..lang.typed import Call, Const, Expr, FuncCall, Param, Ref, TensorType, TupleType
from .syntax import Literal, Written, attribute_value, float_call_text, literal_number

# Each call between Relax functions nests in TVM's VM on the C stack: a chain of 4000 calls
# killed the process (SIGSEGV) on an 8 MiB main-thread stack, 2000 ran. Half that is allowed.
MAX_CALL_DEPTH = 1000


class CallChecker:
    """The function checker's calls (a mixin of ``parser.FunctionChecker``)."""

    def visit_Call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise self.p.error("call operators and functions by their name", node.func,
                               hint="exp(x), not np.exp(x) or x.exp()")
        name = node.func.id
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None
                                                                     for k in node.keywords):
            raise self.p.error("*args and **kwargs are not supported in calls", node)
        # Python's scoping: a name bound in the function (a tensor) hides a def of the
        # program, which hides an operator of the table (a student's own ``def gelu``).
        if name in self.env:
            raise self.p.error(f"{name!r} is a tensor here, not a function", node.func,
                               hint=f"rename the tensor to call the operator {name}"
                               if name in O.OPS else None)
        if name in self.p.defs:
            return self.func_call(name, node)
        if name == "float":
            return self.float_constant(node)
        if name not in O.OPS:
            close = difflib.get_close_matches(name, list(O.OPS) + list(self.p.defs), n=1)
            raise self.p.error(f"unknown operator {name!r}", node.func,
                               hint=f"did you mean {close[0]}?" if close else
                               "see docs/operators.md for the operators tinynn knows")
        return self.apply(O.OPS[name], node.args, node.keywords, node)

    def float_constant(self, node: ast.Call) -> Literal:
        """``float("-inf")``, ``float("nan")``: the way Python spells these constants."""
        text = float_call_text(node)
        if text is None:
            raise self.p.error("float(...) makes a constant from a string here, such as "
                               "float(\"-inf\")", node,
                               hint="to convert a tensor, use astype(x, f32)")
        try:
            return Literal(float(text), Span.of(node))
        except ValueError:
            raise self.p.error(f"float() cannot read {text!r} as a number", node.args[0],
                               hint='e.g. float("inf"), float("-inf"), float("nan")') from None

    def func_call(self, name: str, node: ast.Call) -> FuncCall:
        if name in self.p.in_progress:
            cycle = self.p.in_progress[self.p.in_progress.index(name):] + [name]
            hint = "tinynn functions form a call graph without cycles"
            if name in O.OPS:
                hint = (f"def {name} hides the operator {name} in this program, as a Python "
                        f"def hides a builtin; to call the operator, rename the def")
            raise self.p.error("recursion is not supported: " + " -> ".join(cycle), node,
                               hint=hint)
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
                               f"{len(pos_nodes)}", node, hint=self.torch_hint(op, pos_nodes)
                               or f"{op.signature()}")
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

    def torch_hint(self, op: O.Op, pos_nodes) -> Optional[str]:
        """torch's ``transpose(k, 1, 2)`` swaps two axes; say how tinynn writes it."""
        if op.name != "transpose" or len(pos_nodes) != 3:
            return None
        x = self.visit(pos_nodes[0])
        i, j = (literal_number(n) for n in pos_nodes[1:])
        swap = ", ".join(ast.unparse(n) for n in pos_nodes)
        if isinstance(x, Expr) and isinstance(x.type, TensorType) and type(i) is int \
                and type(j) is int and -x.type.ndim <= min(i, j) and max(i, j) < x.type.ndim:
            axes = list(range(x.type.ndim))
            a, b = i % x.type.ndim, j % x.type.ndim
            axes[a], axes[b] = axes[b], axes[a]
            written = ast.unparse(pos_nodes[0])
            alt = f" or swapaxes({swap})" if "swapaxes" in O.OPS else ""
            return f"transpose lists every axis: transpose({written}, axes={tuple(axes)}){alt}"
        return "transpose lists every axis: transpose(x, axes=(0, 2, 1)) swaps the last two"

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
                values[p.name] = attribute_value(arg)   # its parameter's kind reads it in op.check
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
            return op.check(types, Written(arg_nodes), frozenset(self.symbols))
        except O.EntryError as exc:       # a registered entry's own rule failed
            raise self.p.error(exc.message, node, hint=exc.hint) from None
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
            if isinstance(v, float) and not math.isfinite(v):
                return v      # inf, -inf, nan as written: every float dtype holds them
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


def _name_of(e) -> str:
    return e.name if isinstance(e, Ref) else "x"


def _subst_type(ty, env):
    if isinstance(ty, TupleType):
        return TupleType(tuple(_subst_type(f, env) for f in ty.fields))
    return TensorType(tuple(D.substitute(d, env) for d in ty.shape), ty.dtype)
