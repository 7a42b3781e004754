"""Value identity across the build pipeline: which value of a later module is which of the input.

Lowering passes drop spans and rename some values (FuseOps names a group's result ``gv``), so
a value's identity is carried from module to module: by name first, and for a renamed value by
what it is computed from (same inputs, and it replaces a value that disappeared). The pipeline
view uses it to keep every node's DSL line and value id through all the steps.

It reads the IR itself, never a view: ``mlclab.viz.dataflow_walk.DataflowWalk`` is how Relax
reads as graph binding, and both ``value_table`` (here) and the dataflow view
(``mlclab.viz.parser.DataflowParser``) walk with it, so a drawn step's ids map back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..viz.dataflow_walk import DataflowWalk
from ..viz.relax_info import Described, Subject, arg, const_text, const_value_id


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
    return _TableWalk().walk(subject)


class _TableWalk(DataflowWalk):
    """The walk that lists values only: what the pipeline's identity tracking reads."""

    def walk(self, subject: Subject) -> ValueTable:
        self.table = ValueTable()
        return super().walk(subject)

    def finish(self) -> ValueTable:
        return self.table

    def _add(self, vid, kind, op, group, via=None, unique=True, value=None) -> str:
        nid = vid
        if unique and nid in self.table.values:
            k = 2
            while f"{vid}~{k}" in self.table.values:
                k += 1
            nid = f"{vid}~{k}"
        self.table.values[nid] = Value(nid, value or nid, kind, op, via, group)
        return nid

    def fused_group(self, callee, group) -> int:
        self.table.groups[len(self.table.groups)] = callee
        return len(self.table.groups) - 1

    def param(self, fname, var, vid, group) -> str:
        return self._add(vid, "param", var.name, group, unique=False)

    def free_var(self, fname, var, group) -> str:
        return self._add(f"{fname}:{var.name}", "param", var.name, group)

    def closure_param(self, fname, var, group) -> str:
        return self._add(f"{fname}:{var.name}", "param", var.name, group)

    def const(self, expr, group) -> str:
        nid = f"{self.subject.name}:const{len(self._walk_consts) + 1}"
        return self._add(nid, "const", const_text(expr) or "const", group, unique=False,
                         value=const_value_id(expr))

    def result(self, owner, expr, d, out, group) -> str:
        return self._add(f"{owner}:return", "return" if out else d.kind, d.op, group,
                         d.attrs.get("via"))

    def binding(self, binding, vid, d, group) -> tuple:
        from tvm import relax

        kind, op, via = d.kind, d.op, d.attrs.get("via")
        if isinstance(binding, relax.MatchCast):
            kind = op = "match_cast"
            d = Described("match_cast", "match_cast", {}, [arg(binding.value)])
        return self._add(vid, kind, op, group, via, value=vid), d

    def edge(self, src, dst, index):
        self.table.values[dst].inputs.append(src)

    def output(self, fname, nid):
        self.table.outputs.append(nid)


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
       ``gv``, which may be a name another value had: inputs decide, not the name), of the
       same name or else the same operator if there is one;
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
        if v.kind == "fused":
            # A fused function called at several places (each ResNet block's conv+add+relu):
            # its k-th call computes what its k-th group did.
            result = next((r for r in self.group_result.get(v.op, ()) if r not in self.taken),
                          None)
            if result is not None:
                return self._take(raw, result)
        same_name = self.prev_by_value.get(raw)
        key = self._inputs(self.cur, v, self.ident)
        if same_name is not None and same_name not in self.taken \
                and self.prev_inputs[same_name] == key:
            return self._take(raw, same_name)
        free = [p for p in self.by_inputs.get(key, ()) if p not in self.taken] if key else []
        if free:
            # Same name first, then same operator: after LegalizeOps a softmax and an equal
            # of one tensor both read just it, and inside a fused function shared by many call
            # sites the names are the first site's (layer 1's equal is not layer 1's softmax).
            named = [p for p in free if short_name(self.prev.values[p].value) == short_name(raw)]
            return self._take(raw, (named or [p for p in free if self.prev.values[p].op == v.op]
                                    or free)[0])
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
    """Fused function name -> the values its groups compute, in order (what each call of the
    fused kernel replaces)."""
    users = table.users()
    out: dict = {}
    for number, name in table.groups.items():
        inside = {vid for vid, v in table.values.items() if v.group == number}
        # In definition order, as the dataflow view lists its nodes.
        results = [vid for vid in table.values if vid in inside and
                   (vid in table.outputs or any(u not in inside for u in users[vid]))]
        if results:
            out.setdefault(name, []).append(results[-1])
    return out


def short_name(value_id: str) -> str:
    """The binding name in a value id: ``main:lv1`` and ``main:fused_add/lv1`` -> ``lv1``."""
    return value_id.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
