"""The numpy reference: a typed program evaluated with numpy, operator by operator.

It reads the same operator table the compiler does, so ``fn.reference(...)`` and the compiled
``fn(...)`` are two independent implementations of one declared semantics: numpy's.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .dsl import dims as D
from .ops import arguments
from .dsl.typed import (Assign, Call, Const, FuncCall, GetItem, If, Ref, Return, TensorType,
                        TupleExpr, TupleType, TypedProgram)

Recorder = Callable[[object, object], None]


class _Returned(Exception):
    def __init__(self, value):
        self.value = value


def evaluate(program: TypedProgram, name: str, args: list, record: Optional[Recorder] = None):
    """Run function ``name`` of ``program`` on numpy ``args`` (already checked and converted).

    ``record(expr, value)`` is called for every computed sub-expression, so callers can
    compare intermediate values (validation uses it).
    """
    fn = program.functions[name]
    sizes: dict = {}
    for p, a in zip(fn.params, args):
        for d, n in zip(p.type.shape, np.shape(a)):
            if isinstance(d, str):
                sizes[d] = n
    env = {p.name: a for p, a in zip(fn.params, args)}
    with np.errstate(all="ignore"):
        try:
            _run(program, fn.body, env, sizes, record)
        except _Returned as ret:
            return ret.value
    raise AssertionError(f"{name} finished without returning")   # the parser forbids this


def _run(program, stmts, env, sizes, record):
    for stmt in stmts:
        if isinstance(stmt, Assign):
            value = _eval(program, stmt.value, env, sizes, record)
            if len(stmt.targets) == 1:
                env[stmt.targets[0]] = value
            else:
                env.update(zip(stmt.targets, value))
        elif isinstance(stmt, Return):
            raise _Returned(_eval(program, stmt.value, env, sizes, record))
        elif isinstance(stmt, If):
            cond = bool(_eval(program, stmt.cond, env, sizes, record))
            branch_env = dict(env)
            _run(program, stmt.then_body if cond else stmt.else_body, branch_env, sizes, record)
            env.update({name: branch_env[name] for name in stmt.outputs})


def _eval(program, e, env, sizes, record):
    if isinstance(e, Ref):
        return env[e.name]
    if isinstance(e, Const):
        return np.asarray(e.value, dtype=e.type.dtype)
    if isinstance(e, TupleExpr):
        value = tuple(_eval(program, i, env, sizes, record) for i in e.items)
    elif isinstance(e, GetItem):
        value = _eval(program, e.value, env, sizes, record)[e.index]
    elif isinstance(e, FuncCall):
        args = [_eval(program, a, env, sizes, record) for a in e.args]
        value = evaluate(program, e.func, args, record)
    elif isinstance(e, Call):
        value = _call(program, e, env, sizes, record)
    else:
        raise TypeError(f"unknown expression {type(e).__name__}")
    if record is not None:
        record(e, value)
    return value


def _call(program, e: Call, env, sizes, record):
    out_type: TensorType = e.type
    if isinstance(out_type, TupleType):                 # split: one array per field
        v = arguments(e, lambda arg: _eval(program, arg, env, sizes, record))
        return tuple(np.asarray(r).astype(t.dtype)
                     for r, t in zip(e.op.numpy(v), out_type.fields))
    v = arguments(e, lambda arg: _eval(program, arg, env, sizes, record),
                  out_shape=tuple(D.evaluate(d, sizes) for d in out_type.shape))
    return np.asarray(e.op.numpy(v)).astype(out_type.dtype, copy=False)
