"""Every value's shape for one call's symbolic sizes, checked before anything runs.

Types in the typed program carry symbolic dimensions (``"h - 2"`` after a 3x3 ``conv2d``).
Bound to a call's sizes, a dimension can come out negative or zero (a kernel larger than its
input) -- TVM then returns uninitialised memory or fails allocating -- and a small input can
ask for a huge result (``(65536, 1) + (1, 65536)`` in f32 is 16 GiB). So before a call every
operator's result is sized: a size that does not fit is a ``ValueError`` naming the operator,
its line and the argument that gave the size; a max/min over nothing is numpy's ``ValueError``;
an int index outside its symbolic axis is numpy's ``IndexError`` (TVM would read outside the
array); a slice whose symbolic axis does not cover its bounds (``x[0:2]`` with n = 1, typed
with 2 rows) is a ``ValueError`` saying the size it needs; more memory than the machine has
available is a ``MemoryError`` with the figure.
"""
from __future__ import annotations

import math
import os
from typing import Optional

import numpy as np

from .. import ops as O
from ..lang import dims as D
from ..lang import typed as T
from ..lang.recursion import run_deep
from ..ops.indexing import axis_slices, static_range
from .errors import IndexOutOfBounds

# Operator categories that never reduce: an empty input of theirs is simply copied or ignored.
_NO_REDUCTION = {"shape", "creation", "elementwise", "comparison", "logical"}
# How far ``needs h >= N`` searches for the smallest size that fits.
_SEARCH_LIMIT = 1 << 40
# Below this, a call does not ask the system how much memory is free (reading /proc/meminfo
# costs ~20 us a call): any machine that runs TVM has it.
_ALWAYS_AVAILABLE = 64 * 2**20


def check_sizes(program: T.TypedProgram, name: str, sizes: dict, origins: dict) -> int:
    """Check every value of function ``name`` for ``sizes``; the bytes its largest operator
    needs (the result plus its tensor arguments), for the memory check."""
    walker = _ShapeWalker(program)
    # A long sum nests as deep as it has terms: walk where that much recursion fits.
    run_deep(walker.function, program.functions[name], sizes, _describe(origins, sizes))
    return walker.peak_bytes


def check_memory(need: int, caller: str) -> None:
    """A ``MemoryError`` when ``need`` bytes exceed what the machine has available now."""
    if need <= _ALWAYS_AVAILABLE:
        return
    have = available_memory()
    if have is not None and need > have:
        raise MemoryError(f"{caller}(): these sizes need about {_gib(need)} for one operator "
                          f"but the machine has {_gib(have)} available")


def available_memory() -> Optional[int]:
    """Bytes the kernel could give now without swapping (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"


def _describe(origins: dict, sizes: dict) -> dict:
    """symbolic size -> (the parameter that gave it, the size's name there)"""
    return {s: (origins[s], s) for s in origins}


class _ShapeWalker(T.Visitor):
    """Visits a typed function's statements and expressions; an expression's visit returns the
    byte sizes of its tensors, after checking everything inside it."""

    def __init__(self, program: T.TypedProgram):
        self.program = program
        self.env: dict = {}          # symbolic size -> value, in the function being walked
        self.origins: dict = {}      # symbolic size -> (parameter that gave it, its name there)
        self.peak_bytes = 0
        self.callees_seen: set = set()   # (function, its sizes): a callee is walked once per sizes
        self.int_indexed: set = set()    # ids of the strided_slice calls that are x[i]

    def function(self, fn: T.Function, env: dict, origins: dict) -> None:
        saved = self.env, self.origins
        self.env, self.origins = env, origins
        for p in fn.params:
            self.size(p.type)
        self.body(fn.body)
        self.env, self.origins = saved

    def body(self, stmts) -> None:
        for stmt in stmts:
            self.visit(stmt)

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, stmt: T.Assign) -> None:
        self.visit(stmt.value)

    def visit_Return(self, stmt: T.Return) -> None:
        self.visit(stmt.value)

    def visit_If(self, stmt: T.If) -> None:
        self.visit(stmt.cond)
        self.body(stmt.then_body)
        self.body(stmt.else_body)

    # ------------------------------------------------------------------ expressions
    def visit_Const(self, e: T.Const) -> list:
        return [0]

    def visit_Ref(self, e: T.Ref) -> list:
        return self.size(e.type)

    def visit_Call(self, e: T.Call) -> list:
        if _is_int_index(e):
            self.int_indexed.add(id(e.args[0]))
        inputs = 0
        for arg in e.args:
            for item in (arg if isinstance(arg, list) else [] if arg is None else [arg]):
                inputs += sum(self.visit(item))
        out = self.size(e.type, e)
        if id(e) in self.int_indexed:
            self._index_in_range(e)     # numpy's IndexError before the slice's own check
        if e.op.name == "strided_slice":
            self._slice_covered(e)
        self._empty_reduction(e)
        self._reads_nothing(e, out)
        self.peak_bytes = max(self.peak_bytes, sum(out) + inputs)
        return out

    def visit_FuncCall(self, e: T.FuncCall) -> list:
        for arg in e.args:
            self.visit(arg)
        self._callee(e)
        return self.size(e.type, e)

    def visit_TupleExpr(self, e: T.TupleExpr) -> list:
        out = []
        for item in e.items:
            out += self.visit(item)
        return out

    def visit_GetItem(self, e: T.GetItem) -> list:
        self.visit(e.value)
        return self.size(e.type, e)

    # ------------------------------------------------------------------ sizes
    def size(self, ty, where=None) -> list:
        """Bytes of each tensor of type ``ty``, after checking its dimensions fit."""
        if isinstance(ty, T.TupleType):
            return [b for f in ty.fields for b in self.size(f, where)]
        shape = [D.evaluate(d, self.env) for d in ty.shape]
        bad = [d for d, n in zip(ty.shape, shape) if not self._fits(d, n)]
        if bad:
            raise ValueError(self._too_small(bad, where))
        return [math.prod(shape) * np.dtype(ty.dtype).itemsize]

    def _fits(self, d, value: int) -> bool:
        if isinstance(d, int) or value > 0:
            return True
        # An empty input gives an empty result: that is fine; a negative size never is.
        return value == 0 and any(self.env[s] == 0 for s in D.symbols(d))

    def _too_small(self, bad: list, where) -> str:
        needs, given = [], {}
        for d in bad:
            for s in sorted(D.symbols(d)):
                n = self._smallest(d, s)
                if n is not None and f"{s} >= {n}" not in needs:
                    needs.append(f"{s} >= {n}")
                who, label = self.origins.get(s, (None, s))
                given.setdefault(who, []).append(f"{label}={self.env[s]}")
        told = "; ".join(f"{who} has {', '.join(dict.fromkeys(v))}" if who else
                         ", ".join(dict.fromkeys(v)) for who, v in given.items())
        if needs:
            return f"{self._where(where)} needs {' and '.join(needs)}; {told}"
        dims = ", ".join(f"{D.format_dim(d)} = {D.evaluate(d, self.env)}" for d in bad)
        return f"{self._where(where)} would have a negative size ({dims}); {told}"

    def _smallest(self, d, symbol: str) -> Optional[int]:
        """The smallest value of ``symbol`` (the others fixed) for which ``d`` is positive."""
        return self._smallest_where(symbol, lambda env: D.evaluate(d, env) > 0)

    def _smallest_where(self, symbol: str, holds) -> Optional[int]:
        """The smallest value of ``symbol`` from its own up (the others fixed) for which
        ``holds(sizes)`` is true, which stays true above it."""
        def fits(v):
            return holds({**self.env, symbol: v})

        low = self.env[symbol]
        high = max(low, 1)
        while not fits(high):
            if high > _SEARCH_LIMIT:
                return None
            low, high = high, high * 2
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if fits(mid) else (mid, high)
        return high

    def _where(self, e) -> str:
        if e is None:
            return "a parameter"
        name = e.op.name if isinstance(e, T.Call) else getattr(e, "func", "a value")
        return f"{name} at line {e.span.lineno}"

    def _empty_reduction(self, e: T.Call) -> None:
        if e.op.name not in ("max", "min") or not e.args:
            return
        shape = [D.evaluate(d, self.env) for d in e.args[0].type.shape]
        axis = e.attrs.get("axis")
        axes = range(len(shape)) if axis is None else (
            [axis] if isinstance(axis, int) else list(axis))
        if any(shape[a % len(shape)] == 0 for a in axes):
            numpy_name = {"max": "maximum", "min": "minimum"}[e.op.name]
            raise ValueError(f"{self._where(e)}: zero-size array to reduction operation "
                             f"{numpy_name} which has no identity (its input has shape "
                             f"{tuple(shape)})")

    def _reads_nothing(self, e: T.Call, out: list) -> None:
        """A result with elements computed from a tensor with none is an empty reduction
        (``sum`` over n=0, ``a @ b`` with an inner size of 0): TVM's kernels set a reduction's
        start value inside its loop, which then never runs, and return whatever the memory
        held. Refused, rather than returning garbage. (Reshaping and creating ops are exempt:
        ``concat``/``pad`` of an empty tensor read nothing on purpose.)"""
        if e.op.category in _NO_REDUCTION or not any(out):
            return
        for p, arg in zip(e.op.tensor_params, e.args):
            for item in (arg if isinstance(arg, list) else [] if arg is None else [arg]):
                shape = [D.evaluate(d, self.env) for d in item.type.shape]
                if shape and 0 in shape:
                    raise ValueError(
                        f"{self._where(e)} would reduce over nothing: its {p.name} has shape "
                        f"{tuple(shape)} but its result has elements (numpy gives the "
                        f"reduction's identity there; mlclab's kernels would leave them unset)"
                        f"; {self._sizes_told(item.type.shape)}")

    def _index_in_range(self, sliced: T.Call) -> None:
        """``x[i]`` on a symbolic axis: numpy's rule, -size <= i < size, and its message."""
        x = sliced.args[0].type
        for axis, (b, e, _) in enumerate(axis_slices(O.Args(sliced.attrs))):
            if isinstance(x.shape[axis], int) or not _is_index(b, e):
                continue
            size = D.evaluate(x.shape[axis], self.env)
            if not -size <= b < size:
                raise IndexOutOfBounds(
                    f"the index at line {sliced.span.lineno}: index {b} is out of bounds for "
                    f"axis {axis} with size {size}; {self._sizes_told([x.shape[axis]])}")

    def _slice_covered(self, e: T.Call) -> None:
        """A slice of a symbolic axis is typed from its bounds (``x[0:2]`` has 2 rows): the
        axis must hold them, or the kernel would read past its end."""
        x = e.args[0].type
        for axis, (b, end, s) in enumerate(axis_slices(O.Args(e.attrs))):
            dim, typed = x.shape[axis], e.type.shape[axis]
            if isinstance(dim, int):
                continue

            def covered(env, dim=dim, typed=typed, b=b, end=end, s=s):
                size = D.evaluate(dim, env)
                return size >= 0 and len(static_range(size, b, end, s)) == D.evaluate(typed, env)

            if covered(self.env):
                continue
            needs = []
            for symbol in sorted(D.symbols(dim)):
                n = self._smallest_where(symbol, covered)
                if n is not None:
                    needs.append(f"{symbol} >= {n}")
            size = D.evaluate(dim, self.env)
            raise ValueError(
                f"{self._where(e)} needs {' and '.join(needs) or 'a larger size'}: its axis "
                f"{axis} has {size}, fewer than the slice's bounds ask for (numpy would return "
                f"{len(static_range(size, b, end, s))} there, the program's types say "
                f"{D.evaluate(typed, self.env)}); {self._sizes_told([dim])}")

    def _sizes_told(self, dims) -> str:
        told = {}
        for d in dims:
            for s in sorted(D.symbols(d)) if not isinstance(d, int) else ():
                who, label = self.origins.get(s, (None, s))
                told.setdefault(who, []).append(f"{label}={self.env[s]}")
        return "; ".join(f"{who} has {', '.join(dict.fromkeys(v))}" if who else
                         ", ".join(dict.fromkeys(v)) for who, v in told.items()) or "sizes as declared"

    def _callee(self, e: T.FuncCall) -> None:
        """Check the called function's own values with its parameters' sizes."""
        callee = self.program.functions[e.func]
        env: dict = {}
        origins: dict = {}
        for p, arg in zip(callee.params, e.args):
            for d, actual in zip(p.type.shape, arg.type.shape):
                if isinstance(d, str) and d.isidentifier() and d not in env:
                    env[d] = D.evaluate(actual, self.env)
                    origins[d] = self.origins.get(actual, (f"{e.func}'s {p.name}", d))
        seen = (e.func, tuple(sorted(env.items())))
        if seen not in self.callees_seen:
            self.callees_seen.add(seen)
            self.function(callee, env, origins)


def _is_int_index(e: T.Call) -> bool:
    """``x[i]``: the front end writes it as squeeze(strided_slice(x, i, i + 1)), both calls
    with the subscript's span (a squeeze the student wrote has its own)."""
    return (e.op.name == "squeeze" and isinstance(e.args[0], T.Call)
            and e.args[0].op.name == "strided_slice" and e.args[0].span == e.span)


def _is_index(b, e) -> bool:
    return b is not None and (e == b + 1 or (b == -1 and e is None))
