"""The build pipeline, one pass at a time: what each pass did to the program.

``pipeline(fn)`` reads the build record (``fn.build_record``, ``mlclab.backend.record``): the
passes that really built ``fn`` and the module after each, taken by a pass instrument on the
compile itself, so a pass that failed and was skipped, or a build that fell back to TVM's plain
pipeline, shows as it ran. (IR that mlclab did not build -- a ``relax.Function`` or
``IRModule`` -- gets a record of the same passes run on it.) A step can be drawn
(``step.graph()``: fused groups are clusters) and compared with the one before (``step.diff()``:
a text diff, and a graph whose nodes are marked added, removed, rewritten or merged).

Lowering passes drop spans and rename some values, so a value's identity is carried from step
to step (``mlclab.inspect.values``): every node of every step keeps the DSL line and the value id it
had in the high-level IR.
"""
from __future__ import annotations

import difflib
import html
from dataclasses import dataclass, field, replace
from typing import Optional

from ..viz.model import Node
from ..viz.registry import view_kind
from ..viz.relax_info import Subject, relax_function_names, resolve, value_ids
from ..viz.views import GraphView, check_shape_options, fitted_view
from ..tvm_setup import HoldsIR
from .text import IRText, render_text
from .values import carry, short_name, track, value_table


class HoldsPipelineIR(HoldsIR):
    """Pipelines, steps and diffs are immutable views of IR: a copy is the object itself."""

    pickle_instead = "save fn.text(...) (or step.text(...)) instead"

    def _held_name(self) -> str:
        return f"a pipeline {type(self).__name__}"


# Node statuses a diff can give.
ADDED, REMOVED, MERGED, REWRITTEN, GROUPED = "added", "removed", "merged", "rewritten", "grouped"


@dataclass
class Step(HoldsPipelineIR):
    index: int                       # 0-based position in the pipeline
    name: str                        # the pass's name, e.g. "FuseOps"
    mod: object                      # the IRModule after the pass
    changed: bool                    # whether the pass changed the module at all
    pipeline: "Pipeline" = field(repr=False)
    seconds: float = 0.0             # how long the pass took in the build
    fallback: Optional[object] = None  # the pass failed: what ran instead (record.Fallback)

    @property
    def before(self):
        return self.pipeline.input if self.index == 0 else self.pipeline.steps[self.index - 1].mod

    def subject(self) -> Subject:
        return self.pipeline._subject(self.mod)

    def graph(self, view: str = "dataflow", **opts):
        """This step's function as a graph view (fused groups drawn as clusters)."""
        return self.pipeline._graph(self.index, view, **opts)

    def text(self, style: str = "relax", **options) -> str:
        return self.render_text(style, **options).text

    def render_text(self, style: str = "relax", **options) -> IRText:
        """The text and, per line, the (raw) value id it defines, as ``render_text`` gives."""
        if style == "tir":
            raise ValueError("style: a step shows its own module, not its lowering; use "
                             "another style than 'tir'")
        return render_text(self.subject(), style, **options)

    def diff(self) -> "Diff":
        """What this pass changed, against the step before (or the input)."""
        return self.pipeline.diff(self.index)

    def form_change(self) -> str:
        """One line on what this pass changed besides the program's values, which a graph
        cannot show: its kernels (TensorIR functions), the Relax functions' weights (constants)
        or their form and attributes. Empty for a pass that changed nothing. Compares the
        functions structurally, never the graphs, so it is cheap enough for every pass."""
        if not self.changed:
            return ""
        return form_change(self.before, self.mod)

    def __repr__(self):
        failed = f" FAILED: {self.fallback.instead} ran instead" if self.fallback else ""
        return f"<Step {self.index} {self.name}{'' if self.changed else ' (no change)'}{failed}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.graph()._repr_mimebundle_(include, exclude)


class Pipeline(HoldsPipelineIR):
    """The steps of the build pipeline for one function; indexable by position or pass name."""

    def __init__(self, fn, function: Optional[str] = None):
        from ..backend.passes import record_pipeline

        self.subject = resolve(fn, function)
        self.name = self.subject.name
        self.input = self.subject.mod
        self.target = self.subject.target
        # The passes that really built it, fallbacks included (mlclab.backend.record).
        self.record = self.subject.record or record_pipeline(self.input, self.target)
        self.steps: list[Step] = [Step(r.index, r.name, r.mod, r.changed, self, r.seconds,
                                       r.fallback) for r in self.record]
        # Value tables and identities of the input and the steps so far, grown on demand.
        self._tables: list = []
        self._idents: list = []
        self._parsed: dict = {}         # (step, view, options) -> its graph before shaping
        # The DSL origin of every value of the high-level IR, by value id: carried to later
        # steps by identity, since lowering drops spans and rewrites the vars.
        self.sources = {}
        for fname in relax_function_names(self.input):
            for var, vid in value_ids(self.input[fname], fname).items():
                src = self.subject.source_of(var)
                if src is not None:
                    self.sources[vid] = src

    @property
    def fast_math(self) -> bool:
        """Whether the build let float arithmetic be rewritten (``fast_math=True``); False
        is strict: numpy's answers (docs/operators.md)."""
        return self.record.fast_math

    def math_note(self) -> str:
        return ("fast-math: TVM and LLVM may rewrite float arithmetic as if it were exact, so "
                "results may differ from numpy's" if self.fast_math else
                "strict math: numpy's answers (IEEE 754 floats, wrapping integers)")

    # ---------------------------------------------------------------- sequence protocol
    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    @property
    def final(self):
        return self.steps[-1].mod if self.steps else self.input

    @property
    def fallbacks(self) -> tuple:
        """What mlclab's pipeline could not do for this build (``record.Fallback``s)."""
        return self.record.fallbacks

    def build_fallbacks(self) -> list:
        """The fallbacks of the whole build (to TVM's plain pipeline), not of one step."""
        of_steps = [s.fallback for s in self.steps if s.fallback is not None]
        return [f for f in self.fallbacks if not any(f is g for g in of_steps)]

    def step(self, name: str) -> Step:
        """The first step of pass ``name``; a ValueError listing the passes if none."""
        return self.steps[self.record.find(name).index]

    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, key) -> Step:
        if isinstance(key, str):
            for s in self.steps:
                if s.name == key:
                    return s
            raise KeyError(f"no pass {key!r} in the pipeline; it has {', '.join(self.names)}")
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"a step is picked by position or pass name, got {key!r}")
        if not -len(self.steps) <= key < len(self.steps):
            raise IndexError(f"no step {key}: the pipeline has {len(self.steps)} steps "
                             f"(0 to {len(self.steps) - 1})")
        return self.steps[key]

    # ---------------------------------------------------------------- identities
    def _subject(self, mod) -> Subject:
        return Subject(mod, self.name, self.subject.bindings, self.subject.source, self.target)

    def identities(self) -> list[dict]:
        """For the input and each step: raw value id in that module -> high-level value id."""
        return [self._identity(i) for i in range(-1, len(self.steps))]

    def _identity(self, index: int) -> dict:
        """The identities of step ``index`` (-1: the input), carried step by step up to it
        only; a step that changed nothing holds the module before it, and its identities."""
        while len(self._idents) <= index + 1:
            k = len(self._idents)
            if k == 0:
                self._tables.append(value_table(self._subject(self.input)))
                self._idents.append(track(self._tables)[0])
            elif not self.steps[k - 1].changed:
                self._tables.append(self._tables[-1])
                self._idents.append(self._idents[-1])
            else:
                table = value_table(self._subject(self.steps[k - 1].mod))
                self._idents.append(carry(self._tables[-1], self._idents[-1], table))
                self._tables.append(table)
        return self._idents[index + 1]

    def _graph(self, index: int, view: str = "dataflow", **opts):
        collapse, depth = opts.pop("collapse", "auto"), opts.pop("depth", None)
        check_shape_options(collapse, depth)
        # A step that changed nothing holds the module before it: parsed once for both (a
        # diff, the scrubber and the fused view all ask again). Shaped from a copy each time.
        while index >= 0 and not self.steps[index].changed:
            index -= 1
        key = (index, view, tuple(sorted(opts.items())))
        if key not in self._parsed:
            mod = self.input if index < 0 else self.steps[index].mod
            g = view_kind(view).parser(**opts).parse(self._subject(mod))
            ident = self._identity(index)
            for node in g.nodes.values():
                orig = ident.get(node.value)
                if orig is not None:
                    node.value = orig
                    # The carried origin wins over the parser's: one fused function serves
                    # every call site (the builder keeps one of equal functions), and its
                    # vars are the first site's, so only the identity knows a member's layer.
                    node.source = self.sources.get(orig) or node.source
            self._parsed[key] = g
        return fitted_view(self._parsed[key].copy(), collapse=collapse, depth=depth)

    # ---------------------------------------------------------------- diffs
    def diff(self, after: int, before: Optional[int] = None) -> "Diff":
        """Compare step ``after`` with step ``before`` (default: the one just before it; -1 is
        the input). Either may be a position or a pass name."""
        after = self[after].index
        if isinstance(before, str):
            before = self[before].index
        elif before is None:
            before = after - 1
        elif isinstance(before, bool) or not isinstance(before, int) or not -1 <= before < after:
            raise ValueError(f"before must be a step before {after} (or -1, the input), "
                             f"got {before!r}")
        return Diff(self, before, after)

    # ---------------------------------------------------------------- display
    def __repr__(self):
        rows = [f"{s.index:>2} {s.name}{'' if s.changed else '  (no change)'}"
                + (f"  FAILED ({s.fallback.error}): {s.fallback.instead} ran instead"
                   if s.fallback else "")
                for s in self.steps]
        notes = [f"fallback: {f}" for f in self.build_fallbacks()]
        return "\n".join([f"<Pipeline of {self.name}: {len(self.steps)} passes, "
                          f"{'fast-math' if self.fast_math else 'strict math'}>", *rows, *notes])

    def _repr_html_(self):
        """A table of the passes; each that changed something opens onto its effect and diff."""
        rows = []
        for s in self.steps:
            effect = "—"
            detail = ""
            if s.changed:
                d = s.diff()
                effect = html.escape(d.effect()) or "changed"
                lines = d.text.splitlines()
                shown = "\n".join(lines[:DIFF_LINES])
                more = ""
                if len(lines) > DIFF_LINES:
                    more = f"\n… {len(lines) - DIFF_LINES} more lines"
                detail = (f"<details><summary>diff</summary><pre style='font-size:11px'>"
                          f"{html.escape(shown + more)}</pre></details>")
            if s.fallback is not None:   # said where the student looks, in the pass's row
                effect = (f"<span class='mlclab-fallback' style='color:#d1242f'>failed: "
                          f"{html.escape(s.fallback.error)}; {html.escape(s.fallback.instead)} "
                          f"ran instead</span><br>{effect}")
            rows.append(f"<tr><td>{s.index}</td><td><code>{html.escape(s.name)}</code></td>"
                        f"<td>{s.seconds * 1e3:.1f} ms</td>"
                        f"<td style='text-align:left'>{effect}{detail}</td></tr>")
        notes = "".join(f"<p class='mlclab-fallback' style='color:#d1242f'>"
                        f"{html.escape(str(f))}: these are the passes of that pipeline.</p>"
                        for f in self.build_fallbacks())
        color = "#9a6700" if self.fast_math else "inherit"
        math = (f"<p class='mlclab-math' style='color:{color}'>"
                f"{html.escape(self.math_note())}</p>")
        return (f"{notes}{math}<table><caption>Build pipeline of <code>{html.escape(self.name)}"
                f"</code>, one pass at a time</caption><tr><th>#</th><th>pass</th><th>time</th>"
                f"<th>effect</th></tr>{''.join(rows)}</table>")


# A notebook shows at most this many lines of each pass's text diff.
DIFF_LINES = 300


def _how(node) -> tuple:
    """What computes a value: a change here is a rewrite (``add`` -> ``call_tir(add)``)."""
    return node.op, node.kind, node.attrs.get("via")


def _fused_group(graph, node) -> Optional[str]:
    c = graph.clusters.get(node.group)
    return c.label if c is not None and c.kind == "fused" else None


def diff_layer(graph, step_name: str) -> dict:
    """The ``diff`` overlay of a graph :attr:`Diff.graph` marked: node id -> ``{"change",
    "text"}`` (its look is the overlay's registered style, ``viz.overlays``)."""
    return {nid: {"change": n.status, "text": f"{n.status} by {step_name}"}
            for nid, n in graph.nodes.items() if n.status}


class Diff(HoldsPipelineIR):
    """What one pass changed: ``text`` (a unified diff) and ``graph`` (nodes marked by status).

    ``added`` / ``removed`` list high-level value ids that appear / disappear; ``merged`` maps
    a node of the later step to the values it absorbed (a fused kernel and its group);
    ``rewritten`` lists values computed by a different operation now (LegalizeOps turning
    ``add`` into ``call_tir``); ``grouped`` those a pass put into a fused group.
    """

    def __init__(self, pipeline: Pipeline, before: int, after: int):
        self.pipeline = pipeline
        self.before, self.after = before, after
        self.before_name = "input" if before < 0 else pipeline.steps[before].name
        self.after_name = pipeline.steps[after].name
        a = pipeline._graph(before, collapse=None).graph
        b = pipeline._graph(after, collapse=None).graph
        self._a, self._b = a, b
        a_vals = {n.value: n for n in a.nodes.values() if n.value}
        b_vals = {n.value: n for n in b.nodes.values() if n.value}
        self.added = [v for v in b_vals if v not in a_vals]
        self.removed = [v for v in a_vals if v not in b_vals]
        self.rewritten = [v for v in b_vals if v in a_vals and b_vals[v].kind != "param"
                          and _how(a_vals[v]) != _how(b_vals[v])]
        # Values that FuseOps put into a fused group (drawn as its cluster).
        self.grouped = [v for v in b_vals if v in a_vals and _fused_group(b, b_vals[v])
                        and _fused_group(b, b_vals[v]) != _fused_group(a, a_vals[v])]
        # A fused kernel in ``b`` absorbs the values of the group in ``a`` that computed its
        # value (FuseTIR turns the group FuseOps made into one PrimFunc call). Found by value,
        # not by name: groups of the same shape share one function (ResNet's blocks).
        self.merged: dict = {}
        members: dict = {}
        group_of = {}
        for n in a.nodes.values():
            if n.group and n.group in a.clusters and a.clusters[n.group].kind == "fused":
                members.setdefault(n.group, []).append(n.value)
                group_of[n.value] = n.group
        for n in b.nodes.values():
            if n.kind == "fused" and n.value in group_of:
                absorbed = [v for v in members[group_of[n.value]] if v != n.value]
                if absorbed:
                    self.merged[n.value] = absorbed
        merged_away = {v for vs in self.merged.values() for v in vs}
        self.removed = [v for v in self.removed if v not in merged_away]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.merged or self.rewritten
                    or self.grouped or self.text.strip())

    @property
    def text(self) -> str:
        p = self.pipeline
        a = (p.input if self.before < 0 else p.steps[self.before].mod).script(show_meta=False)
        b = p.steps[self.after].mod.script(show_meta=False)
        return "".join(difflib.unified_diff(
            a.splitlines(True), b.splitlines(True),
            fromfile=f"before {self.after_name} ({self.before_name})",
            tofile=f"after {self.after_name}"))

    @property
    def graph(self):
        """The later step's graph, statuses marked, removed/merged-away values as ghosts."""
        a, b = self._a, self._b
        g = b.copy()
        by_value = {n.value: n for n in g.nodes.values()}
        for v in self.added:
            by_value[v].status = ADDED
        for v in self.rewritten:
            by_value[v].status = REWRITTEN
        for v in self.grouped:
            by_value[v].status = GROUPED
        for v in self.merged:
            by_value[v].status = MERGED
            by_value[v].attrs["merged"] = ", ".join(short_name(x) for x in self.merged[v])
        # Each once: a value two kernels absorbed (a group's input) is one ghost.
        ghosts = list(dict.fromkeys(self.removed + [v for vs in self.merged.values() for v in vs]))
        a_by_value = {n.value: n for n in a.nodes.values()}
        for v in ghosts:
            old = a_by_value[v]
            group = old.group if old.group in g.clusters else next(iter(g.clusters), None)
            if old.group in a.clusters and old.group not in g.clusters:
                c = a.clusters[old.group]
                parent = c.parent if c.parent in g.clusters else group
                g.add_cluster(replace(c, parent=parent))   # a module keeps its path
                group = c.id
            ghost = Node(f"removed:{old.id}", old.kind, old.op, name=old.name, value=v,
                         type=old.type, attrs=dict(old.attrs), source=old.source, group=group,
                         status=REMOVED if v in self.removed else MERGED)
            g.add_node(ghost)
            by_value.setdefault(v, ghost)
        ghost_ids = {f"removed:{a_by_value[v].id}" for v in ghosts}
        for e in a.edges:
            src, dst = a.nodes[e.src].value, a.nodes[e.dst].value
            if src in by_value and dst in by_value and \
                    (by_value[src].id in ghost_ids or by_value[dst].id in ghost_ids):
                g.add_edge(by_value[src].id, by_value[dst].id, e.index, e.kind, e.label)
        return GraphView(g, overlays={"diff": diff_layer(g, self.after_name)})

    def effect(self) -> str:
        """One line: what happened to the program's values (empty when only the text moved)."""
        parts = []
        for word, values in (("rewritten", self.rewritten), ("grouped", self.grouped),
                             ("added", self.added), ("removed", self.removed)):
            if values:
                parts.append(f"{len(values)} {word}")
        for v, absorbed in self.merged.items():
            sources = ", ".join(short_name(x) for x in absorbed)
            parts.append(f"{sources} merged into {short_name(v)}")
        return "; ".join(parts)

    def summary(self) -> str:
        def short(vs):
            return ", ".join(short_name(v) for v in vs) or "none"

        lines = [f"{self.after_name}: {self.before_name} -> {self.after_name}",
                 f"  added: {short(self.added)}", f"  removed: {short(self.removed)}",
                 f"  rewritten: {short(self.rewritten)}", f"  grouped: {short(self.grouped)}"]
        for v, absorbed in self.merged.items():
            lines.append(f"  merged into {short_name(v)}: {short(absorbed)}")
        return "\n".join(lines)

    def __repr__(self):
        return self.summary()

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In a notebook: the marked graph (or its text without Graphviz), and the summary."""
        bundle = self.graph._repr_mimebundle_(include, exclude)
        bundle["text/plain"] = self.summary() + "\n\n" + bundle.get("text/plain", "")
        return bundle


def form_change(before, after) -> str:
    """``Step.form_change`` for two modules."""
    import tvm_ffi

    from ..tvm_setup import tvm

    relax = tvm().relax
    old = {gv.name_hint: f for gv, f in before.functions.items()}
    kernels, functions, added = 0, [], 0
    for gv, f in after.functions.items():
        was = old.pop(gv.name_hint, None)
        if was is not None and (was.same_as(f) or tvm_ffi.structural_equal(was, f)):
            continue
        if not isinstance(f, relax.Function):
            kernels += 1
        elif was is None:
            added += 1                 # FuseOps' groups, as Relax functions of their own
        else:
            functions.append((gv.name_hint, was, f))
    kernels += sum(1 for f in old.values() if not isinstance(f, relax.Function))
    parts = []
    if functions:
        # The same text without the constants' values: only weights (constants) changed.
        weights = all(was is not None and was.script(show_meta=False) == f.script(show_meta=False)
                      for _, was, f in functions)
        names = ", ".join(name for name, _, _ in functions[:3])
        if len(functions) > 3:
            names += " …"
        parts.append(f"the weights (constants) of {names}" if weights
                     else f"the form or attributes of {names}")
    if kernels:
        parts.append(f"{kernels} kernel{'' if kernels == 1 else 's'} (TensorIR)")
    line = "changed " + " and ".join(parts) if parts else ""
    if added:
        line += f"{'; ' if line else ''}added {added} Relax function{'' if added == 1 else 's'}"
    return line or "changed the module's attributes"


def pipeline(fn, function: Optional[str] = None) -> Pipeline:
    """The build pipeline of ``fn`` (a compiled function, ``relax.Function`` or ``IRModule``)."""
    return Pipeline(fn, function)
