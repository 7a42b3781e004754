"""The program as text, four ways.

- ``relax``: TVMScript, what TVM itself prints (each binding annotated with its DSL line).
- ``relay``: Relay's graph-binding text. Every computed value gets a number (``%0 = log(%x);``),
  each value is computed once and referred to by number, and the last value is the result.
- ``let``: Relay's A-normal form. Every value is a ``let`` with its name, in evaluation order,
  scoped inside ``if`` branches; the tail expression is the result.
- ``tir``: the TensorIR PrimFuncs the build pipeline lowers the function to.

``render_text`` also returns, for every line, the id of the value it defines (the ids of
``mlclab.viz.relax_info.value_ids``), so the notebook layer can link a line to graph nodes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..viz.relax_info import (Subject, call_attrs, call_tir_callee, const_text, format_type,
                              is_tensor_const, literal, op_name, relax_function_names, resolve,
                              value_ids)

STYLES = ("relax", "relay", "let", "tir")


@dataclass
class IRText:
    """A printed text and, for each 1-based line that defines a value, that value's id."""

    style: str
    text: str
    line_values: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text


def text(fn, style: str = "relax", *, function: Optional[str] = None, **options) -> str:
    """The text of ``fn`` (a compiled function, ``relax.Function`` or ``IRModule``) in ``style``."""
    return render_text(fn, style, function=function, **options).text


def render_text(fn, style: str = "relax", *, function: Optional[str] = None,
                **options) -> IRText:
    if style not in STYLES:
        raise ValueError(f"unknown text style {style!r}; choose one of {', '.join(STYLES)}")
    subject = resolve(fn, function)
    if style == "relax":
        return _relax_text(subject, **options)
    if style == "tir":
        return _tir_text(subject)
    return RelayPrinter(subject, let=(style == "let"), **options).render()


def reachable(mod, name: str, also=()) -> list[str]:
    """``name`` and the Relax functions it calls, directly or not, in call order; then
    the functions ``also`` names (a whole module), each followed by what it calls."""
    from tvm import relax

    order, pending, rest = [], [name], list(also)
    while pending or rest:
        fname = pending.pop(0) if pending else rest.pop(0)
        if fname in order:
            continue
        order.append(fname)
        func = mod[fname]
        if isinstance(func, relax.Function):
            for gv in relax.analysis.all_global_vars(func):
                if gv.name_hint in relax_function_names(mod):
                    pending.append(gv.name_hint)
    return order


# --------------------------------------------------------------------------- relax
def _relax_text(subject: Subject, annotate: bool = True) -> IRText:
    import tvm

    names = reachable(subject.mod, subject.name, subject.also)
    notes = {}
    if annotate:
        for fname in names:
            for binding in _all_bindings(subject.mod[fname]):
                src = subject.source_of(binding.var, binding.value)
                if src is not None:
                    line = src.source_line.strip()
                    notes[binding] = f"line {src.lineno}: {line}" if line else f"line {src.lineno}"
    if len(names) == 1:
        out = subject.mod[subject.name].script(obj_to_annotate=notes, show_meta=False)
    else:
        sub = tvm.IRModule({subject.mod.get_global_var(n): subject.mod[n] for n in names})
        out = sub.script(obj_to_annotate=notes, show_meta=False)
    # Map printed definition lines back to value ids by name (the printer renames repeats
    # ``x_1``; a DSL program's names are unique per function, so the name is enough).
    by_name: dict = {}
    for fname in names:
        table = by_name.setdefault(fname, {})
        for var, vid in value_ids(subject.mod[fname], fname).items():
            table.setdefault(var.name, vid)
    line_values = {}
    fn_name = subject.name
    for i, line in enumerate(out.splitlines(), 1):
        m = re.match(r"\s*def (\w+)\(", line)
        if m:
            fn_name = m.group(1)
            continue
        # ``name: R.Tensor((2, 4), dtype="float32") = ...``: the type ends at the first ``) =``.
        m = re.match(r"\s*(\w+)(?:: .*?\))? = ", line)
        vid = by_name.get(fn_name, {}).get(m.group(1)) if m else None
        if vid is not None:
            line_values[i] = vid
    return IRText("relax", out, line_values)


def _all_bindings(func):
    from tvm import relax

    out = []

    def walk(seq):
        if not isinstance(seq, relax.SeqExpr):
            return
        for block in seq.blocks:
            for b in block.bindings:
                out.append(b)
                if isinstance(b.value, relax.If):
                    walk(b.value.true_branch)
                    walk(b.value.false_branch)

    walk(func.body)
    return out


# --------------------------------------------------------------------------- tir
def _tir_text(subject: Subject) -> IRText:
    """PrimFuncs that the function runs after mlclab's whole Relax build pipeline."""
    import tvm
    from tvm import relax, tirx

    from .pipeline import run_passes

    lowered = run_passes(subject.mod, subject.target)
    wanted, pending = [], [subject.name]
    while pending:                         # follow calls through Relax functions to PrimFuncs
        name = pending.pop(0)
        if name in wanted or name not in [gv.name_hint for gv in lowered.get_global_vars()]:
            continue
        wanted.append(name)
        func = lowered[name]
        if isinstance(func, relax.Function):
            pending += [gv.name_hint for gv in relax.analysis.all_global_vars(func)]
    prims = {lowered.get_global_var(n): lowered[n] for n in wanted
             if isinstance(lowered[n], tirx.PrimFunc)}
    if not prims:
        return IRText("tir", "# no TensorIR: this function computes nothing itself\n")
    return IRText("tir", tvm.IRModule(prims).script(show_meta=False))


# --------------------------------------------------------------------------- relay / let
class RelayPrinter:
    """Prints Relax as Relay text: graph binding (``%0 = ...``) or A-normal form (``let``).

    ``names="ir"`` (default) keeps the IR's binding names in the let form, so the text and the
    graph views name values alike; ``names="fresh"`` numbers them ``%v1, %v2, ...`` as Relay's
    ToANormalForm did. ``types=True`` adds Relay's ``/* ty=... */`` after each binding.
    """

    def __init__(self, subject: Subject, let: bool = False, names: str = "ir",
                 types: bool = False):
        if names not in ("ir", "fresh"):
            raise ValueError("names must be 'ir' or 'fresh'")
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
