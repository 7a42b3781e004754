"""The ``relay`` style: Relay's graph-binding text, and the printer the ``let`` style shares.

Every computed value gets a number (``%0 = log(%x);``), each value is computed once and referred
to by number, and the last value is the result.
"""
from __future__ import annotations

from typing import Optional

from ...viz.relax_info import (Subject, call_attrs, call_tir_callee, const_text, format_type,
                               is_tensor_const, literal, op_name, value_ids)
from .common import reachable
from .registry import IRText, register_style


def render(subject: Subject, types: bool = False) -> IRText:
    return RelayPrinter(subject, types=types).render()


class RelayPrinter:
    """Prints Relax as Relay text: graph binding (``%0 = ...``) or A-normal form (``let``).

    ``names="ir"`` (default) keeps the IR's binding names in the let form, so the text and the
    graph views name values alike; ``names="fresh"`` numbers them ``%v1, %v2, ...`` as Relay's
    ToANormalForm did. ``types=True`` adds Relay's ``/* ty=... */`` after each binding.
    """

    def __init__(self, subject: Subject, let: bool = False, names: str = "ir",
                 types: bool = False):
        if names not in ("ir", "fresh"):
            raise ValueError(f"names must be 'ir' or 'fresh', got {names!r}")
        if not isinstance(types, bool):
            raise TypeError(f"types must be True or False, got {types!r}")
        self.subject = subject
        self.mod = subject.mod
        self.let = let
        self.names = names
        self.types = types

    def render(self) -> IRText:
        fnames = reachable(self.mod, self.subject.name, self.subject.also)
        self.lines: list[str] = []
        self.line_values: dict = {}
        self.consts: list = []
        for i, fname in enumerate(fnames):
            if i:
                self.lines.append("")
            self._function(fname, header="fn " if len(fnames) == 1 else f"def @{fname}")
        style = "let" if self.let else "relay"
        return IRText(style, "\n".join(self.lines) + "\n", self.line_values)

    def _emit(self, depth: int, line: str, vid: Optional[str] = None):
        self.lines.append("  " * depth + line)
        if vid is not None:
            self.line_values[len(self.lines)] = vid

    def _function(self, fname, header):
        func = self.mod[fname]
        self.fname = fname
        self.ids = value_ids(func, fname)
        self.atoms: dict = {}
        self.counter = 0
        self.fresh = 0
        self.taken: dict = {}
        params = []
        for p in func.params:
            self.atoms[p] = "%" + self._name(p)
            params.append(f"{self.atoms[p]}: {format_type(p.ty)}")
        self._emit(0, f"{header}({', '.join(params)}) {{")
        self._seq(func.body, 1)
        self._emit(0, "}")

    def _name(self, var) -> str:
        """A unique printed name for a var of this function (repeats get ``_2``, ``_3``)."""
        base = var.name
        self.taken[base] = self.taken.get(base, 0) + 1
        return base if self.taken[base] == 1 else f"{base}_{self.taken[base]}"

    def _seq(self, seq, depth):
        """Print a scope; its last line is the scope's result expression."""
        from tvm import relax

        if not isinstance(seq, relax.SeqExpr):
            self._emit(depth, self._expr(seq))
            return
        bindings = [b for block in seq.blocks for b in block.bindings]
        result = seq.body
        # ``gv = lv6; return gv`` (imported models end so) returns lv6 itself: drop the alias.
        while bindings and isinstance(result, relax.Var) and bindings[-1].var.same_as(result) \
                and isinstance(bindings[-1].value, relax.Var):
            result = bindings.pop().value
        # Relay's tail: when the last binding defines the result, its value is the last line.
        tail = bindings[-1] if bindings and isinstance(result, relax.Var) \
            and bindings[-1].var.same_as(result) else None
        for b in bindings:
            if b is tail:
                break
            self._binding(b, depth)
        if tail is not None:
            self._value(tail.var, tail.value, depth, bind=False)
        else:
            self._emit(depth, self._atom(result))

    def _binding(self, b, depth):
        from tvm import relax

        var, value = b.var, b.value
        if isinstance(value, relax.Var) and value in self.atoms:
            self.atoms[var] = self.atoms[value]     # an alias computes nothing
            return
        self._value(var, value, depth, bind=True)

    def _value(self, var, value, depth, bind):
        from tvm import relax

        vid = self.ids.get(var)
        if isinstance(value, relax.If):
            cond = self._atom(value.cond)
            name = self._bind_name(var) if bind else None
            head = f"if ({cond}) {{"
            self._emit(depth, (f"let {name} = " if self.let else f"{name} = ") + head
                       if bind else head, vid)
            self._seq(value.true_branch, depth + 1)
            self._emit(depth, "} else {")
            self._seq(value.false_branch, depth + 1)
            self._emit(depth, "};" if bind else "}")
            if bind:
                self.atoms[var] = name
            return
        expr = self._expr(value)
        if not bind:
            self._emit(depth, expr, vid)
            return
        name = self._bind_name(var)
        ty = f" /* ty={format_type(var.ty)} */" if self.types else ""
        self._emit(depth, f"let {name} = {expr};{ty}" if self.let else f"{name} = {expr};{ty}",
                   vid)
        self.atoms[var] = name

    def _bind_name(self, var) -> str:
        if not self.let:
            name = f"%{self.counter}"
            self.counter += 1
            return name
        if self.names == "fresh":
            self.fresh += 1
            return f"%v{self.fresh}"
        return "%" + self._name(var)

    def _atom(self, expr) -> str:
        from tvm import relax

        if isinstance(expr, relax.Var):
            return self.atoms.get(expr, "%" + expr.name)
        if isinstance(expr, relax.Tuple):
            inner = ", ".join(self._atom(f) for f in expr.fields)
            return f"({inner},)" if len(expr.fields) == 1 else f"({inner})"
        if is_tensor_const(expr):
            scalar = const_text(expr)
            if scalar is not None:
                return scalar
            if not any(c.same_as(expr) for c in self.consts):
                self.consts.append(expr)
            k = next(i for i, c in enumerate(self.consts) if c.same_as(expr))
            return f"meta[relay.Constant][{k}]"
        text = literal(expr)
        return text if text is not None else type(expr).__name__

    def _expr(self, value) -> str:
        from tvm import relax

        if isinstance(value, relax.Call):
            callee = call_tir_callee(value)
            if callee is not None:
                args = ", ".join(self._atom(a) for a in value.args[1:])
                return f"{op_name(value)}(@{callee}, {args})"
            head = op_name(value)
            if isinstance(value.op, relax.GlobalVar):
                head = "@" + head
            args = [self._atom(a) for a in value.args]
            args += [f"{k}={v}" for k, v in call_attrs(value).items()]
            return f"{head}({', '.join(args)})"
        if isinstance(value, relax.TupleGetItem):
            return f"{self._atom(value.tuple_value)}.{value.index}"
        if isinstance(value, relax.Function):
            params = ", ".join(f"%{p.name}: {format_type(p.ty)}" for p in value.params)
            return f"fn ({params}) {{ ... }}"
        return self._atom(value)


register_style("relay", render, title="relay",
               description="Relay's graph binding: %0 = op(...), each value computed once")
