"""The ``tir`` style: the TensorIR PrimFuncs the function ran, as the build left them.

Read from the build record (``mlclab.backend.record``): the module after the last Relax pass
of the build that ran, so after a fallback this is the fallback's code. A comment above each
PrimFunc says which schedule rule scheduled it and why earlier rules declined (the
``mlclab.schedule`` and ``mlclab.declined`` attributes the schedule pass sets).
"""
from __future__ import annotations

import re

from ...viz.relax_info import Subject
from .common import reachable
from .registry import IRText, register_style


def render(subject: Subject) -> IRText:
    """PrimFuncs that the function runs after the build's whole Relax pipeline."""
    import tvm
    from tvm import tirx

    from ...backend.passes import record_pipeline

    record = subject.record or record_pipeline(subject.mod, subject.target)
    lowered = record.final
    wanted = reachable(lowered, subject.name, prims=True)
    prims = {lowered.get_global_var(n): lowered[n] for n in wanted
             if isinstance(lowered[n], tirx.PrimFunc)}
    if not prims:
        return IRText("tir", "# no TensorIR: this function computes nothing itself\n")
    header = "".join(f"# {f}\n" for f in record.fallbacks)
    notes = {gv.name_hint: schedule_note(f) for gv, f in prims.items()}
    return IRText("tir", header + _annotate(tvm.IRModule(prims).script(show_meta=False), notes))


def schedule_note(prim) -> list:
    """The comment lines about one PrimFunc's schedule (none where nothing was recorded)."""
    from ...backend.record import schedule_decision

    decision = schedule_decision(prim)
    if decision is None:
        return []
    rule, declined = decision
    lines = [f"scheduled by rule {rule!r}" if rule else "no schedule rule took it"]
    lines += [f"  declined by {d}" for d in declined]
    return lines


# ``    @T.prim_func`` (possibly with arguments), then ``    def name(``
_PRIM = re.compile(r"^(\s*)@T\.prim_func\b")
_DEF = re.compile(r"^\s*def (\w+)\(")


def _annotate(script: str, notes: dict) -> str:
    """``script`` with each PrimFunc's note as comments above its decorator."""
    lines = script.splitlines(True)
    out = []
    for i, line in enumerate(lines):
        m = _PRIM.match(line)
        if m and i + 1 < len(lines):
            d = _DEF.match(lines[i + 1])
            for note in notes.get(d.group(1), []) if d else []:
                out.append(f"{m.group(1)}# {note}\n")
        out.append(line)
    return "".join(out)


register_style("tir", render, title="tir",
               description="the lowered TensorIR PrimFuncs the function runs")
