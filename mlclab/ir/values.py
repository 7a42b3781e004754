"""Value identity across the build pipeline: which value of a later module is which of the input.

Lowering passes drop spans and rename some values (FuseOps names a group's result ``gv``), so
a value's identity is carried from module to module: by name first, and for a renamed value by
what it is computed from (same inputs, and it replaces a value that disappeared). The pipeline
view uses it to keep every node's DSL line and value id through all the steps.

It reads the IR itself (``value_table``), never a view: the values and ids it lists are the
dataflow view's (``mlclab.viz.parser.DataflowParser``: same ids, fused groups inlined, aliases
folded), which a test checks, so a view of any step can be mapped back to the input's ids.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..viz.relax_info import (Described, Subject, arg, const_text, describe, is_tensor_const, lookup,
                              value_ids)


@dataclass
class Value:
    id: str                          # unique in its table: the dataflow view's node id
    value: str                       # the value id (``relax_info.value_ids``; see Table.walk)
    kind: str                        # as the views' Node.kind: "param", "op", "fused", ...
    op: str                          # operator, callee or parameter name
    via: Optional[str] = None        # "call_tir" when a PrimFunc computes it
    group: Optional[int] = None      # the inlined fused group it sits in directly
    inputs: list = field(default_factory=list)   # ids of the values it reads, in order


@dataclass
class ValueTable:
    """The values of a function (and what it calls) in definition order, and their data flow."""

    values: dict = field(default_factory=dict)   # id -> Value
    outputs: list = field(default_factory=list)  # ids of the functions' results
    groups: dict = field(default_factory=dict)   # fused group number -> the fused function's name

    def users(self) -> dict:
        out: dict = {vid: [] for vid in self.values}
        for v in self.values.values():
            for src in v.inputs:
                out[src].append(v.id)
        return out


def value_table(subject: Subject) -> ValueTable:
    """The values of ``subject``'s function, then of the Relax functions it calls."""
    return _Walk(subject).table


class _Walk:
    """Walks Relax as the dataflow view does: a value id per binding; a fused group's body is
    inlined under the caller (ids ``caller:fused_name/var``, since group names repeat)."""

    def __init__(self, subject: Subject):
        self.subject, self.mod = subject, subject.mod
        self.table = ValueTable()
        self._ids: dict = {}
        self._consts: dict = {}
        self._calls: list = []              # names of Relax functions called, in order
        drawn, pending, rest = set(), [subject.name], list(subject.also)
        while pending or rest:              # the function first, then what it calls
            fname = pending.pop(0) if pending else rest.pop(0)
            if fname in drawn:
                continue
            drawn.add(fname)
            func = self.mod[fname]
            env = {p: self._add(self._ids_of(fname)[p], "param", p.name, None, unique=False)
                   for p in func.params}
            out = self._seq(fname, fname, func.body, env, None)
            if out is not None:
                self.table.outputs.append(out)
            pending += [c for c in self._calls if c not in drawn]

    def _ids_of(self, fname):
        if fname not in self._ids:
            self._ids[fname] = value_ids(self.mod[fname], fname)
        return self._ids[fname]

    def _add(self, vid, kind, op, group, via=None, unique=True, value=None) -> str:
        nid = vid
        if unique and nid in self.table.values:
            k = 2
            while f"{vid}~{k}" in self.table.values:
                k += 1
            nid = f"{vid}~{k}"
        self.table.values[nid] = Value(nid, value or nid, kind, op, via, group)
        return nid

    def _seq(self, fname, owner, seq, env, group) -> Optional[str]:
        from tvm import relax

        if isinstance(seq, relax.SeqExpr):
            for block in seq.blocks:
                for binding in block.bindings:
                    self._binding(fname, owner, binding, env, group)
            seq = seq.body
        return self._leaf(fname, owner, seq, env, group, out=True)

    def _leaf(self, fname, owner, expr, env, group, out=False) -> str:
        """The value of an argument or of a returned expression."""
        from tvm import relax

        if isinstance(expr, relax.Var):
            if expr not in env:             # a free variable (closure capture)
                env[expr] = self._add(f"{fname}:{expr.name}", "param", expr.name, group)
            return env[expr]
        if is_tensor_const(expr):
            if expr not in self._consts:
                nid = f"{self.subject.name}:const{len(self._consts) + 1}"
                self._consts[expr] = self._add(nid, "const", const_text(expr) or "const", group,
                                               unique=False)
            return self._consts[expr]
        d = describe(expr, self.mod)        # a returned tuple or literal: a return value
        nid = self._add(f"{owner}:return", "return" if out else d.kind, d.op, group,
                        d.attrs.get("via"))
        self._connect(fname, owner, nid, d.args, env, group)
        return nid

    def _connect(self, fname, owner, nid, args, env, group):
        from tvm import relax

        for kind, x in args:
            if kind == "lit":
                continue
            for f in (list(x.fields) if isinstance(x, relax.Tuple) else [x]):
                self.table.values[nid].inputs.append(self._leaf(fname, owner, f, env, group))

    def _binding(self, fname, owner, binding, env, group):
        from tvm import relax

        var, value = binding.var, binding.value
        ids = self._ids_of(fname)
        # Inside an inlined fused group the value belongs to the caller, under the group's name.
        vid = f"{owner}:{fname}/{var.name}" if owner != fname else \
            ids.get(var, f"{fname}:{var.name}")
        if isinstance(value, relax.Var) and value in env:
            env[var] = env[value]           # an alias computes nothing: the same value
            return
        d = describe(value, self.mod)
        if d.kind == "fused" and isinstance(value, relax.Call) \
                and isinstance(lookup(self.mod, value.op), relax.Function):
            env[var] = self._inline(fname, owner, value, env, group)
            return
        kind, op, via = d.kind, d.op, d.attrs.get("via")
        if isinstance(binding, relax.MatchCast):
            kind = op = "match_cast"
            d = Described("match_cast", "match_cast", {}, [arg(value)])
        nid = env[var] = self._add(vid, kind, op, group, via, value=vid)
        if d.kind == "closure":
            inner = dict(env)
            for p in value.params:
                inner[p] = self._add(f"{fname}:{p.name}", "param", p.name, None)
            self._seq(fname, owner, value.body, inner, None)
            return
        self._connect(fname, owner, nid, d.args, env, group)
        if d.kind == "if":                  # branches are scopes of their own, not the group's
            for branch in (value.true_branch, value.false_branch):
                self._seq(fname, owner, branch, dict(env), None)
        elif d.kind == "call" and isinstance(lookup(self.mod, value.op), relax.Function):
            self._calls.append(value.op.name_hint)

    def _inline(self, fname, owner, call, env, group) -> str:
        """A fused group's body, its params bound to the call's arguments."""
        callee = call.op.name_hint
        func = self.mod[callee]
        number = len(self.table.groups)
        self.table.groups[number] = callee
        inner = {p: self._leaf(fname, owner, a, env, group) for p, a in zip(func.params, call.args)}
        return self._seq(callee, owner, func.body, inner, number)


# --------------------------------------------------------------------------- carrying identity
def track(tables: list) -> list:
    """For each table (the input's first): its value ids -> the input's value ids."""
    if not tables:
        return []
    idents = [{v.value: v.value for v in tables[0].values.values()}]
    for prev, cur in zip(tables, tables[1:]):
        idents.append(carry(prev, idents[-1], cur))
    return idents


def carry(prev: ValueTable, prev_ident: dict, cur: ValueTable) -> dict:
    """Identities for ``cur`` (one step) from ``prev`` (the step before it).

    Values are matched in definition order, so a value's inputs are identified before it:
    1. same name and same inputs: the same value;
    2. else a previous value computed from the same inputs (FuseOps names a group's result
       ``gv``, which may be a name another value had: inputs decide, not the name);
    3. else the same name (a pass changed how it is computed, e.g. its allocation);
    4. destination-passing style (CallTIRRewrite): ``_ = matmul(x, w, alloc)`` computes what
       ``lv = call_tir(matmul, (x, w))`` did, into ``alloc``: the buffer takes ``lv``'s identity.
    """
    m = _Matcher(prev, prev_ident, cur)
    for v in cur.values.values():
        m.match(v)
    m.match_destinations()
    return m.ident


class _Matcher:
    def __init__(self, prev: ValueTable, prev_ident: dict, cur: ValueTable):
        self.prev, self.prev_ident, self.cur = prev, prev_ident, cur
        self.ident: dict = {}
        self.taken: set = set()
        self.prev_by_value = {v.value: v.id for v in prev.values.values()}
        self.prev_inputs = {v.id: self._inputs(prev, v, prev_ident) for v in prev.values.values()}
        self.by_inputs: dict = {}
        for v in prev.values.values():
            if v.kind not in ("param", "const"):
                self.by_inputs.setdefault(self.prev_inputs[v.id], []).append(v.id)
        self.group_result = _group_results(prev)

    @staticmethod
    def _inputs(table, v, ident) -> tuple:
        return tuple(ident.get(table.values[s].value, table.values[s].value) for s in v.inputs)

    def _take(self, raw, prev_id):
        value = self.prev.values[prev_id].value
        self.ident[raw] = self.prev_ident.get(value, value)
        self.taken.add(prev_id)

    def match(self, v: Value):
        """Rules 1-3 (and a fused kernel call takes the result of its group)."""
        raw = v.value
        result = self.group_result.get(v.op) if v.kind == "fused" else None
        if result is not None and result not in self.taken:
            return self._take(raw, result)
        same_name = self.prev_by_value.get(raw)
        key = self._inputs(self.cur, v, self.ident)
        if same_name is not None and same_name not in self.taken \
                and self.prev_inputs[same_name] == key:
            return self._take(raw, same_name)
        free = [p for p in self.by_inputs.get(key, ()) if p not in self.taken] if key else []
        if free:
            named = [p for p in free if short_name(self.prev.values[p].value) == short_name(raw)]
            return self._take(raw, (named or free)[0])
        if same_name is not None and same_name not in self.taken:
            self._take(raw, same_name)

    def match_destinations(self):
        """Rule 4, once every value had its chance by rules 1-3."""
        for pv in self.prev.values.values():
            if pv.id in self.taken or pv.via is None:
                continue
            want = self.prev_inputs[pv.id]
            for v in self.cur.values.values():
                if v.op == pv.op and v.value not in self.ident and len(v.inputs) > len(want) \
                        and self._inputs(self.cur, v, self.ident)[:len(want)] == want:
                    out_buf = self.cur.values[v.inputs[-1]].value
                    if out_buf not in self.ident:
                        self._take(out_buf, pv.id)
                    break


def _group_results(table: ValueTable) -> dict:
    """Fused function name -> the value its group computes (what a fused kernel call replaces)."""
    users = table.users()
    out = {}
    for number, name in table.groups.items():
        inside = {vid for vid, v in table.values.items() if v.group == number}
        # In definition order, as the dataflow view lists its nodes.
        results = [vid for vid in table.values if vid in inside and
                   (vid in table.outputs or any(u not in inside for u in users[vid]))]
        if results:
            out[name] = results[-1]
    return out


def short_name(value_id: str) -> str:
    """The binding name in a value id: ``main:lv1`` and ``main:fused_add/lv1`` -> ``lv1``."""
    return value_id.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
