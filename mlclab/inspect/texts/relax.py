"""The ``relax`` style: TVMScript, what TVM itself prints, each binding annotated with its DSL line.

Which line defines which value comes from the printer itself, as JAX's ``source_map`` does:
every binding is handed to TVM's printer with a comment (``obj_to_annotate``) that ends in a
marker naming the binding; the printer puts each comment on its binding's line, and the markers
are read back and removed. No regex guesses at names, so two functions that both bind ``y``
still link each ``y`` to its own line.
"""
from __future__ import annotations

import re

from ...viz.relax_info import Subject, all_bindings, value_ids
from .common import reachable
from .registry import IRText, register_style

# Private-use characters: a DSL line cannot hold them (the frontend reads Python source, and
# the printer escapes nothing in comments), so a marker is never confused with user text.
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(f"\\s*(?:# )?{_OPEN}(\\d+){_CLOSE}")


def render(subject: Subject, annotate: bool = True) -> IRText:
    import tvm

    if not isinstance(annotate, bool):
        raise TypeError(f"annotate must be True or False, got {annotate!r}")
    names = reachable(subject.mod, subject.name, subject.also)
    notes, vids = _notes(subject, names, annotate)
    if len(names) == 1:
        out = subject.mod[subject.name].script(obj_to_annotate=notes, show_meta=False)
    else:
        sub = tvm.IRModule({subject.mod.get_global_var(n): subject.mod[n] for n in names})
        out = sub.script(obj_to_annotate=notes, show_meta=False)
    text, line_values = _read_markers(out, vids)
    return IRText("relax", text, line_values)


def _notes(subject: Subject, names, annotate: bool) -> tuple[dict, list]:
    """Binding -> its comment (``line N: <the DSL line>`` when ``annotate``) ending in a
    marker ``k``; and the value id of each ``k``."""
    notes, vids = {}, []
    for fname in names:
        ids = value_ids(subject.mod[fname], fname)
        for binding in all_bindings(subject.mod[fname]):
            note = ""
            if annotate:
                src = subject.source_of(binding.var, binding.value)
                if src is not None:
                    line, text = src.span.lineno, src.source_line.strip()
                    note = f"line {line}: {text}" if text else f"line {line}"
            vid = ids.get(binding.var)
            if vid is None and not note:
                continue
            marker = f"{_OPEN}{len(vids)}{_CLOSE}" if vid is not None else ""
            vids.append(vid)
            notes[binding] = f"{note} {marker}" if note else marker
    return notes, vids


def _read_markers(out: str, vids: list) -> tuple[str, dict]:
    """The printed text without markers, and 1-based line -> value id for each marked line."""
    lines, line_values = [], {}
    for i, line in enumerate(out.splitlines(), 1):
        m = _MARKER.search(line)
        if m:
            vid = vids[int(m.group(1))]
            if vid is not None:
                line_values.setdefault(i, vid)
            line = line[:m.start()] + line[m.end():]
        lines.append(line.rstrip() if m else line)
    return "\n".join(lines) + ("\n" if out.endswith("\n") else ""), line_values


register_style("relax", render, title="relax",
               description="TVMScript, as TVM prints it, each binding annotated with its DSL line")
