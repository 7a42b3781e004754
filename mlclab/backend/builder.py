"""Typed program -> Relax ``IRModule``.

One binding per DSL value, emitted in post-order with leaf arguments, so every binding keeps
its DSL span and its name (``d = a @ b`` binds ``d``; a nested sub-expression binds ``lv``,
``lv1``...). Functions without ``if`` put their bindings in a ``DataflowBlock`` (what fusion
works on); functions with ``if`` use plain blocks, since Relax allows ``If`` only there. The
traced build (``validate()``'s per-binding values) keeps the same blocks and bindings; only its
top-level bindings become outputs of the block, and the function also returns them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..lang import dims as D
from ..lang.diagnostics import DSLError
from ..lang.recursion import run_deep
from ..lang.source import displayable, line_at, source_lines
from ..lang.typed import (Assign, BindingInfo, Call, Const, FuncCall, Function, GetItem, If, Ref,
                         Return, Span, TensorType, TupleExpr, TupleType, TypedProgram, Visitor)
from ..ops import EntryError, arguments


@dataclass
class BuiltModule:
    mod: object                       # tvm.IRModule
    bindings: dict                    # function name -> {relax.Var: BindingInfo}
    expr_vars: dict                   # function name -> {typed Expr: relax.Var}


def build_module(program: TypedProgram, trace: Optional[str] = None) -> BuiltModule:
    """Build every function of ``program``.

    With ``trace="f"``, the module holds ``f`` and what it calls, and ``f`` also returns the
    values of all its top-level bindings (for comparing intermediates with numpy).
    """
    return run_deep(_build_module, program, trace)


def _build_module(program: TypedProgram, trace: Optional[str]) -> BuiltModule:
    from tvm import relax

    bb = relax.BlockBuilder()
    bindings, expr_vars = {}, {}
    # Split once, and made displayable once: per function or per binding, long programs
    # became quadratic (4000 bindings on one line: 1.1 s of the build).
    lines = [displayable(line) for line in source_lines(program.source)]
    for name in _callees_first(program, trace):
        fb = _FunctionBuilder(bb, program, lines, program.functions[name], trace == name)
        fb.build()
        bindings[name] = fb.infos
        expr_vars[name] = fb.expr_vars
    return BuiltModule(bb.get(), bindings, expr_vars)


def _callees_first(program: TypedProgram, root: Optional[str] = None) -> list:
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for callee in program.functions[name].calls:
            visit(callee)
        order.append(name)

    for name in ([root] if root else program.functions):
        visit(name)
    return order


def _has_if(stmts) -> bool:
    return any(isinstance(s, If) for s in stmts)


_OP_DUMP = re.compile(r"ir\.Op\(.*?support_level=\d+\)", re.S)


def clean_tvm_message(exc: BaseException) -> str:
    """TVM's message without its long operator dumps and C++ frames, for a student."""
    text = _OP_DUMP.sub("the operator", str(exc))
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(
        ("File ", "at ", "Stack trace", "["))]
    return " ".join(lines)[:600] or type(exc).__name__


class _FunctionBuilder(Visitor):
    """Emits one typed function: statements return the returned expr or None, expressions
    return the Relax var (or leaf) holding their value."""

    def __init__(self, bb, program: TypedProgram, lines: list, fn: Function, trace: bool):
        """``lines``: the program's source lines, made displayable (views quote them)."""
        from tvm import ir, relax, tirx

        self.relax = relax
        self.bb = bb
        self.program = program
        self.fn = fn
        self.trace = trace
        self.lines = lines
        self.source_name = ir.SourceName(program.filename)
        symbols = []
        for p in fn.params:
            symbols += [d for d in p.type.shape if isinstance(d, str) and d not in symbols]
        self.symbol_vars = {s: tirx.Var(s, "int64") for s in symbols}
        self.names: set = set()
        self.next_suffix: dict = {}   # base name -> the suffix to try next (keeps unique() linear)
        self.infos: dict = {}
        self.expr_vars: dict = {}
        self.env: dict = {}
        # A traced build keeps the dataflow block: its top-level bindings become outputs of
        # the block instead, so validate() compares values of the same block structure fn() runs.
        self.dataflow = not _has_if(fn.body)
        self.outputs = _returned_assignments(fn.body) if self.dataflow else set()
        # The bindings of the ``if`` branch being built (None: emit into the builder's block).
        # Branches are collected here and wrapped in a SeqExpr, through TVM's public API only.
        self.branch: Optional[list] = None
        self.current_span = fn.span
        self.top_level: list = []     # (name, var) of top-level bindings, for tracing

    # ------------------------------------------------------------------ helpers
    def tspan(self, span: Span):
        return span.to_tvm(self.source_name)

    def unique(self, name: str) -> str:
        base = name
        i = self.next_suffix.get(base, 0)
        if i:
            name = f"{base}{i}" if base == "lv" else f"{base}_{i}"
        while name in self.names:
            i += 1
            name = f"{base}{i}" if base == "lv" else f"{base}_{i}"
        self.next_suffix[base] = i
        self.names.add(name)
        return name

    def info(self, var, dsl_name, span: Span, kind="binding"):
        self.infos[var] = BindingInfo(var.name, dsl_name, span, line_at(self.lines, span.lineno),
                                      kind)

    def ty(self, t):
        relax = self.relax
        if isinstance(t, TupleType):
            return relax.TupleType([self.ty(f) for f in t.fields])
        return relax.TensorType([D.to_prim(d, self.symbol_vars) for d in t.shape], t.dtype)

    # ------------------------------------------------------------------ emission
    def emit(self, expr, name: str, span: Span, dsl_name=None, output=False):
        """Bind ``expr`` (nested sub-expressions first, each to a temporary) to a new var."""
        relax = self.relax
        expr = self.flatten(expr, span)
        tspan = self.tspan(span)
        if isinstance(expr, relax.Call):
            expr = relax.Call(expr.op, expr.args, expr.attrs, expr.ty_args, tspan)
        expr = self.bb.normalize(expr)
        dataflow_var = self.dataflow and not output
        var = (relax.DataflowVar if dataflow_var else relax.Var)(self.unique(name), expr.ty, tspan)
        binding = relax.VarBinding(var, expr, tspan)
        if self.branch is None:
            self.bb.emit_normalized(binding)
        else:
            self.branch.append(binding)
        self.info(var, dsl_name, span)
        return var

    def flatten(self, expr, span: Span):
        relax = self.relax
        if isinstance(expr, relax.Call):
            return relax.Call(expr.op, [self.leaf(a, span) for a in expr.args], expr.attrs,
                              expr.ty_args)
        if isinstance(expr, relax.TupleGetItem):
            return relax.TupleGetItem(self.leaf(expr.tuple_value, span), expr.index)
        if isinstance(expr, relax.Tuple):
            return relax.Tuple([self.leaf(f, span) for f in expr.fields])
        return expr

    def leaf(self, expr, span: Span):
        relax = self.relax
        if isinstance(expr, (relax.Call, relax.TupleGetItem)):
            return self.emit(expr, "lv", span)
        if isinstance(expr, relax.Tuple):
            return relax.Tuple([self.leaf(f, span) for f in expr.fields])
        return expr

    # ------------------------------------------------------------------ functions
    def build(self):
        relax = self.relax
        fn = self.fn
        params = []
        for p in fn.params:
            var = relax.Var(self.unique(p.name), self.ty(p.type), self.tspan(p.span))
            self.info(var, p.name, p.span, kind="param")
            self.env[p.name] = var
            params.append(var)
        try:
            with self.bb.function(fn.name, params):
                try:
                    result = self.body()
                except BaseException:
                    self.abandon(params)
                    raise
                self.bb.emit_func_output(result)
        except (DSLError, NotImplementedError, RecursionError, MemoryError):
            raise
        except Exception as exc:
            raise self.internal_error(exc) from None

    def body(self):
        """The function's statements, in a dataflow block where Relax allows one."""
        if self.dataflow:
            with self.bb.dataflow():
                result = self.block(self.fn.body)
        else:
            result = self.block(self.fn.body)
        if self.trace:
            inter = [v for _, v in self.top_level]
            result = self.relax.Tuple([result, self.relax.Tuple(inter)])
        return result

    def abandon(self, params):
        """Close the function through TVM's public API after a failure, so TVM does not warn
        on stderr about a builder destroyed with open blocks (the module is dropped anyway)."""
        try:
            self.bb.emit_func_output(params[0] if params else self.relax.Tuple([]))
        except Exception:   # only the stderr warning is at stake; the first error is the news
            pass

    def internal_error(self, exc: Exception) -> DSLError:
        """TVM refused what the checker accepted: a bug of mlclab's, located where it arose."""
        return DSLError.at(f"TVM rejected this expression: {clean_tvm_message(exc)}",
                           self.current_span, self.lines, self.program.filename, internal=True,
                           hint="this program passed mlclab's checks, so this is an mlclab bug: "
                                "please report it")

    def block(self, stmts, top=True):
        """Emit ``stmts``; return the returned relax expr, or None when they fall through."""
        for stmt in stmts:
            self.current_span = stmt.span
            result = self.visit(stmt, top)
            if result is not None:
                return result
        return None

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, stmt: Assign, top: bool):
        # In a traced build every top-level binding leaves the dataflow block as an output.
        def output(name):
            return (id(stmt), name) in self.outputs or (self.trace and top)

        if len(stmt.targets) == 1:
            name = stmt.targets[0]
            var = self.value(stmt.value, name=name, dsl_name=name, output=output(name))
            self.env[name] = var
            if top and not isinstance(stmt.value, Ref):   # ``y = x`` binds nothing new
                self.top_level.append((name, var))
            return None
        tup = self.value(stmt.value, name="lv")
        for i, (name, span) in enumerate(zip(stmt.targets, stmt.target_spans)):
            var = self.emit(self.relax.TupleGetItem(tup, i), name, span, dsl_name=name,
                            output=output(name))
            self.env[name] = var
            if top:
                self.top_level.append((name, var))
        return None

    def visit_Return(self, stmt: Return, top: bool):
        result = self.value(stmt.value, output=True, name="gv")
        if isinstance(result, self.relax.DataflowVar):
            result = self.bb.emit_output(result)   # defensive: never leak a dataflow var
        return result

    def visit_If(self, stmt: If, top: bool):
        relax = self.relax
        cond = self.value(stmt.cond)
        self.current_span = stmt.span
        before = dict(self.env)
        then_branch = self.branch_body(stmt, stmt.then_body, before)
        else_branch = self.branch_body(stmt, stmt.else_body, before)
        self.env = before
        if_expr = relax.If(cond, then_branch, else_branch, self.tspan(stmt.span))
        one = len(stmt.outputs) == 1
        name = stmt.outputs[0] if one else ("gv" if stmt.returns else "lv")
        var = self.emit(if_expr, name, stmt.span, dsl_name=name if one else None)
        if stmt.returns:
            return var
        items = [var] if one else [
            self.emit(relax.TupleGetItem(var, i), out_name, stmt.span, dsl_name=out_name)
            for i, out_name in enumerate(stmt.outputs)]
        for out_name, item in zip(stmt.outputs, items):
            self.env[out_name] = item
            if top:
                self.top_level.append((out_name, item))
        return None

    def branch_body(self, stmt: If, body: list, before: dict):
        """One branch as a SeqExpr of its own bindings (collected here, not emitted)."""
        relax = self.relax
        outer = self.branch
        self.env, self.branch = dict(before), []
        try:
            result = self.block(body, top=False)
            if not stmt.returns:
                outs = [self.env[n] for n in stmt.outputs]
                result = outs[0] if len(outs) == 1 else relax.Tuple(outs)
            return relax.SeqExpr([relax.BindingBlock(self.branch)], result)
        finally:
            self.branch = outer

    # ------------------------------------------------------------------ expressions
    def value(self, e, name="lv", dsl_name=None, output=False):
        """The relax var (or leaf) holding typed expression ``e``."""
        return self.visit(e, name, dsl_name, output)

    def bound(self, e, expr, name, dsl_name, output):
        var = self.emit(expr, name, e.span, dsl_name, output)
        self.expr_vars[e] = var
        return var

    def visit_Ref(self, e: Ref, name, dsl_name, output):
        return self.env[e.name]

    def visit_Const(self, e: Const, name, dsl_name, output):
        return self.relax.const(e.value, e.type.dtype)

    def visit_TupleExpr(self, e: TupleExpr, name, dsl_name, output):
        self.current_span = e.span
        fields = [self.value(i, output=output) for i in e.items]
        if output:
            return self.relax.Tuple(fields)
        return self.bound(e, self.relax.Tuple(fields), name, dsl_name, output)

    def visit_GetItem(self, e: GetItem, name, dsl_name, output):
        self.current_span = e.span
        tup = self.value(e.value)
        return self.bound(e, self.relax.TupleGetItem(tup, e.index), name, dsl_name, output)

    def visit_FuncCall(self, e: FuncCall, name, dsl_name, output):
        self.current_span = e.span
        gv = self.bb.get().get_global_var(e.func)
        args = [self.value(a) for a in e.args]
        return self.bound(e, self.relax.Call(gv, args), name, dsl_name, output)

    def visit_Call(self, e: Call, name, dsl_name, output):
        shape = getattr(e.type, "shape", None)          # None: a tuple result (split)
        v = arguments(e, self.value, group=self.relax.Tuple,
                      out_shape=None if shape is None else
                      [D.to_prim(d, self.symbol_vars) for d in shape])
        self.current_span = e.span
        if e.op.built_in:
            return self.bound(e, e.op.build(v), name, dsl_name, output)
        # An entry registered after import: what goes wrong in it is its author's to fix.
        import tvm_ffi

        try:
            var = self.bound(e, e.op.build(v), name, dsl_name, output)
            problem = None
        except EntryError as exc:
            problem = exc
        except Exception as exc:    # TVM refused the expression the entry built
            problem = EntryError(e.op, "relax", f"builds an expression TVM refuses: "
                                                f"{clean_tvm_message(exc)}")
        if problem is None and not tvm_ffi.structural_equal(var.ty, self.ty(e.type)):
            problem = EntryError(e.op, "relax", f"builds {_described(var.ty)}, where its rule "
                                                f"says {e.type}")
        if problem is not None:
            raise DSLError.at(problem.message, e.span, self.lines, self.program.filename,
                              hint=problem.hint) from None
        return var


def _described(ty) -> str:
    """A Relax type in the DSL's words (``Tensor[(3,), float32]``)."""
    shape = getattr(ty, "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return str(ty)
    dims = tuple(int(v) if hasattr(v, "value") else str(v) for v in values)
    return str(TensorType(dims, str(ty.dtype)))


def _returned_assignments(stmts) -> set:
    """(id(assign), name) of the straight-line assignments whose values the function returns.

    Their vars are made ordinary (non-dataflow) vars, so they can leave the dataflow block
    without an extra copy binding.
    """
    last: dict = {}
    for stmt in stmts:
        if isinstance(stmt, Assign):
            for name in stmt.targets:
                last[name] = (id(stmt), name)
            if len(stmt.targets) == 1 and isinstance(stmt.value, Ref):
                last[stmt.targets[0]] = last.get(stmt.value.name)
        elif isinstance(stmt, Return):
            items = stmt.value.items if isinstance(stmt.value, TupleExpr) else [stmt.value]
            return {last[i.name] for i in items if isinstance(i, Ref) and last.get(i.name)}
    return set()
