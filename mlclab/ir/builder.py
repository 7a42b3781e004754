"""Typed program -> Relax ``IRModule``.

One binding per DSL value, emitted in post-order with leaf arguments, so every binding keeps
its DSL span and its name (``d = a @ b`` binds ``d``; a nested sub-expression binds ``lv``,
``lv1``...). Functions without ``if`` put their bindings in a ``DataflowBlock`` (what fusion
works on); functions with ``if`` use plain blocks, since Relax allows ``If`` only there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..dsl import dims as D
from ..ops import arguments
from ..dsl.diagnostics import DSLError
from ..dsl.typed import (Assign, BindingInfo, Call, Const, FuncCall, Function, GetItem, If, Ref,
                         Return, Span, TupleExpr, TupleType, TypedProgram)


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
    from tvm import relax

    bb = relax.BlockBuilder()
    bindings, expr_vars = {}, {}
    for name in _callees_first(program, trace):
        fb = _FunctionBuilder(bb, program, program.functions[name], trace == name)
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


class _FunctionBuilder:
    def __init__(self, bb, program: TypedProgram, fn: Function, trace: bool):
        from tvm import ir, relax, tirx

        self.relax, self.ir = relax, ir
        self.bb = bb
        self.program = program
        self.fn = fn
        self.trace = trace
        self.lines = program.source.splitlines()
        self.source_name = ir.SourceName(program.filename)
        symbols = []
        for p in fn.params:
            symbols += [d for d in p.type.shape if isinstance(d, str) and d not in symbols]
        self.symbol_vars = {s: tirx.Var(s, "int64") for s in symbols}
        self.names: set = set()
        self.infos: dict = {}
        self.expr_vars: dict = {}
        self.env: dict = {}
        self.dataflow = not _has_if(fn.body) and not trace
        self.outputs = _returned_assignments(fn.body) if self.dataflow else set()
        self.current_span = fn.span
        self.top_level: list = []     # (name, var) of top-level bindings, for tracing

    # ------------------------------------------------------------------ helpers
    def tspan(self, span: Span):
        return self.ir.Span(self.source_name, span.lineno, span.end_lineno, span.col_offset,
                            span.end_col_offset)

    def unique(self, name: str) -> str:
        base, i = name, 0
        while name in self.names:
            i += 1
            name = f"{base}{i}" if base == "lv" else f"{base}_{i}"
        self.names.add(name)
        return name

    def info(self, var, dsl_name, span: Span, kind="binding"):
        line = self.lines[span.lineno - 1] if 0 < span.lineno <= len(self.lines) else ""
        self.infos[var] = BindingInfo(var.name, dsl_name, span, line, kind)

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
        self.bb.emit_normalized(relax.VarBinding(var, expr, tspan))
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
                if self.dataflow:
                    with self.bb.dataflow():
                        result = self.block(fn.body)
                else:
                    result = self.block(fn.body)
                if self.trace:
                    inter = [v for _, v in self.top_level]
                    result = relax.Tuple([result, relax.Tuple(inter)])
                self.bb.emit_func_output(result)
        except DSLError:
            self.abandon()
            raise
        except Exception as exc:   # TVM refused what the checker accepted: a bug of ours
            self.abandon()
            span = self.current_span
            line = self.lines[span.lineno - 1] if 0 < span.lineno <= len(self.lines) else ""
            raise DSLError(f"TVM rejected this expression: {clean_tvm_message(exc)}",
                           lineno=span.lineno, col_offset=span.col_offset,
                           end_col_offset=span.end_col_offset, source_line=line,
                           filename=self.program.filename, internal=True,
                           hint="this program passed mlclab's checks, so this is an mlclab bug: "
                                "please report it") from None
        self.trace_names = [v.name for _, v in self.top_level]

    def abandon(self):
        """Close the builder's open blocks, so TVM does not warn about them on stderr."""
        for close in (self.bb._end_block, self.bb.end_scope):
            try:
                close()
            except Exception:
                pass

    def block(self, stmts, top=True):
        """Emit ``stmts``; return the returned relax expr, or None when they fall through."""
        for stmt in stmts:
            self.current_span = stmt.span
            if isinstance(stmt, Assign):
                self.assign(stmt, top)
            elif isinstance(stmt, Return):
                result = self.value(stmt.value, output=True, name="gv")
                if isinstance(result, self.relax.DataflowVar):
                    result = self.bb.emit_output(result)   # defensive: never leak a dataflow var
                return result
            elif isinstance(stmt, If):
                result = self.if_(stmt, top)
                if stmt.returns:
                    return result
        return None

    def assign(self, stmt: Assign, top: bool):
        if len(stmt.targets) == 1:
            name = stmt.targets[0]
            var = self.value(stmt.value, name=name, dsl_name=name,
                             output=(id(stmt), name) in self.outputs)
            if isinstance(stmt.value, Ref):
                # ``y = x`` binds nothing new: the name now means the same value.
                self.env[name] = var
                return
            self.env[name] = var
            if top:
                self.top_level.append((name, var))
            return
        tup = self.value(stmt.value, name="lv")
        for i, (name, span) in enumerate(zip(stmt.targets, stmt.target_spans)):
            var = self.emit(self.relax.TupleGetItem(tup, i), name, span, dsl_name=name,
                            output=(id(stmt), name) in self.outputs)
            self.env[name] = var
            if top:
                self.top_level.append((name, var))

    def value(self, e, name="lv", dsl_name=None, output=False):
        """The relax var (or leaf) holding typed expression ``e``."""
        relax = self.relax
        if isinstance(e, Ref):
            return self.env[e.name]
        if isinstance(e, Const):
            return relax.const(e.value, e.type.dtype)
        self.current_span = e.span
        if isinstance(e, TupleExpr):
            fields = [self.value(i, output=output) for i in e.items]
            if output:
                return relax.Tuple(fields)
            var = self.emit(relax.Tuple(fields), name, e.span, dsl_name, output)
        elif isinstance(e, GetItem):
            var = self.emit(relax.TupleGetItem(self.value(e.value), e.index), name, e.span,
                            dsl_name, output)
        elif isinstance(e, FuncCall):
            gv = self.bb.get().get_global_var(e.func)
            args = [self.value(a) for a in e.args]
            var = self.emit(relax.Call(gv, args), name, e.span, dsl_name, output)
        elif isinstance(e, Call):
            var = self.emit(self.call(e), name, e.span, dsl_name, output)
        else:
            raise TypeError(f"unknown expression {type(e).__name__}")
        self.expr_vars[e] = var
        return var

    def call(self, e: Call):
        shape = getattr(e.type, "shape", None)          # None: a tuple result (split)
        v = arguments(e, self.value, group=self.relax.Tuple,
                      out_shape=None if shape is None else
                      [D.to_prim(d, self.symbol_vars) for d in shape])
        self.current_span = e.span
        return e.op.build(v)

    def if_(self, stmt: If, top: bool):
        relax = self.relax
        cond = self.value(stmt.cond)
        self.current_span = stmt.span
        before = dict(self.env)
        branches = []
        for body in (stmt.then_body, stmt.else_body):
            self.env = dict(before)
            self.bb.begin_scope()
            self.bb._begin_binding_block()
            try:
                result = self.block(body, top=False)
                if not stmt.returns:
                    outs = [self.env[n] for n in stmt.outputs]
                    result = outs[0] if len(outs) == 1 else relax.Tuple(outs)
            finally:
                blk = self.bb._end_block()
                self.bb.end_scope()
            branches.append(relax.SeqExpr([blk], result))
        self.env = before
        if_expr = relax.If(cond, branches[0], branches[1], self.tspan(stmt.span))
        name = stmt.outputs[0] if len(stmt.outputs) == 1 else ("gv" if stmt.returns else "lv")
        var = self.emit(if_expr, name, stmt.span,
                        dsl_name=stmt.outputs[0] if len(stmt.outputs) == 1 else None)
        if stmt.returns:
            return var
        if len(stmt.outputs) == 1:
            self.env[name] = var
            if top:
                self.top_level.append((name, var))
        else:
            for i, out_name in enumerate(stmt.outputs):
                item = self.emit(relax.TupleGetItem(var, i), out_name, stmt.span, dsl_name=out_name)
                self.env[out_name] = item
                if top:
                    self.top_level.append((out_name, item))
        return None


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
