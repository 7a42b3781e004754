"""The numpy reference: a typed program evaluated with numpy, operator by operator.

It reads the same operator table the compiler does, so ``fn.reference(...)`` and the compiled
``fn(...)`` are two independent implementations of one declared semantics: numpy's.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .lang import dims as D
from .lang.recursion import run_deep
from .lang.typed import (Assign, Call, Const, FuncCall, GetItem, If, Ref, Return, TupleExpr,
                        TupleType, TypedProgram, Visitor)
from .ops import EntryError, arguments

Recorder = Callable[[object, object], None]


class _Returned(Exception):
    def __init__(self, value):
        self.value = value


def evaluate(program: TypedProgram, name: str, args: list, record: Optional[Recorder] = None):
    """Run function ``name`` of ``program`` on numpy ``args`` (already checked and converted).

    ``record(expr, value)`` is called for every computed sub-expression, so callers can
    compare intermediate values (validation uses it).
    """
    with np.errstate(all="ignore"):
        return run_deep(_Evaluator(program, record).function, name, args)


class _Evaluator(Visitor):
    """Statements run against ``env`` (name -> array); expressions return their value."""

    def __init__(self, program: TypedProgram, record: Optional[Recorder]):
        self.program = program
        self.record = record

    def function(self, name: str, args: list):
        fn = self.program.functions[name]
        sizes: dict = {}
        for p, a in zip(fn.params, args):
            for d, n in zip(p.type.shape, np.shape(a)):
                if isinstance(d, str):
                    sizes[d] = n
        env = {p.name: a for p, a in zip(fn.params, args)}
        try:
            self.run(fn.body, env, sizes)
        except _Returned as ret:
            return ret.value
        raise AssertionError(f"{name} finished without returning")   # the parser forbids this

    def run(self, stmts, env, sizes):
        for stmt in stmts:
            self.visit(stmt, env, sizes)

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, stmt: Assign, env, sizes):
        value = self.visit(stmt.value, env, sizes)
        if len(stmt.targets) == 1:
            env[stmt.targets[0]] = value
        else:
            env.update(zip(stmt.targets, value))

    def visit_Return(self, stmt: Return, env, sizes):
        raise _Returned(self.visit(stmt.value, env, sizes))

    def visit_If(self, stmt: If, env, sizes):
        cond = bool(self.visit(stmt.cond, env, sizes))
        branch_env = dict(env)
        self.run(stmt.then_body if cond else stmt.else_body, branch_env, sizes)
        env.update({name: branch_env[name] for name in stmt.outputs})

    # ------------------------------------------------------------------ expressions
    def visit_Ref(self, e: Ref, env, sizes):
        return env[e.name]

    def visit_Const(self, e: Const, env, sizes):
        return np.asarray(e.value, dtype=e.type.dtype)

    def visit_TupleExpr(self, e: TupleExpr, env, sizes):
        return self.recorded(e, tuple(self.visit(i, env, sizes) for i in e.items))

    def visit_GetItem(self, e: GetItem, env, sizes):
        return self.recorded(e, self.visit(e.value, env, sizes)[e.index])

    def visit_FuncCall(self, e: FuncCall, env, sizes):
        args = [self.visit(a, env, sizes) for a in e.args]
        return self.recorded(e, self.function(e.func, args))

    def visit_Call(self, e: Call, env, sizes):
        def value(arg):
            return self.visit(arg, env, sizes)

        if isinstance(e.type, TupleType):                 # split: one array per field
            v = arguments(e, value)
            return self.recorded(e, tuple(np.asarray(r).astype(t.dtype)
                                          for r, t in zip(e.op.compute(v), e.type.fields)))
        shape = tuple(D.evaluate(d, sizes) for d in e.type.shape)
        result = np.asarray(e.op.compute(arguments(e, value, out_shape=shape)))
        if result.shape != shape and not e.op.built_in:
            raise EntryError(e.op, "numpy", f"returned shape {result.shape}, where its rule "
                                            f"says {shape}")
        return self.recorded(e, result.astype(e.type.dtype, copy=False))

    def recorded(self, e, value):
        if self.record is not None:
            self.record(e, value)
        return value
