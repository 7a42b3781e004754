"""The ``relax`` style: TVMScript, what TVM itself prints, each binding annotated with its DSL line."""
from __future__ import annotations

import re

from ...viz.relax_info import Subject, value_ids
from .common import all_bindings, reachable
from .registry import IRText, register_style


def render(subject: Subject, annotate: bool = True) -> IRText:
    import tvm

    if not isinstance(annotate, bool):
        raise TypeError(f"annotate must be True or False, got {annotate!r}")
    names = reachable(subject.mod, subject.name, subject.also)
    notes = _line_notes(subject, names) if annotate else {}
    if len(names) == 1:
        out = subject.mod[subject.name].script(obj_to_annotate=notes, show_meta=False)
    else:
        sub = tvm.IRModule({subject.mod.get_global_var(n): subject.mod[n] for n in names})
        out = sub.script(obj_to_annotate=notes, show_meta=False)
    return IRText("relax", out, _line_values(subject, names, out))


def _line_notes(subject: Subject, names) -> dict:
    """Binding -> ``line N: <the DSL line>``, the comment TVMScript prints after it."""
    notes = {}
    for fname in names:
        for binding in all_bindings(subject.mod[fname]):
            src = subject.source_of(binding.var, binding.value)
            if src is not None:
                line = src.source_line.strip()
                notes[binding] = f"line {src.lineno}: {line}" if line else f"line {src.lineno}"
    return notes


def _line_values(subject: Subject, names, out: str) -> dict:
    """Printed definition lines -> value ids, matched by name (the printer renames repeats
    ``x_1``; a DSL program's names are unique per function, so the name is enough)."""
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
    return line_values


register_style("relax", render, title="relax",
               description="TVMScript, as TVM prints it, each binding annotated with its DSL line")
