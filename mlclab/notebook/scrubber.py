"""The pass scrubber: a slider over the build pipeline's passes, one view model per pass.

A scrubber is a list of view models over the same value ids (``mlclab.viz.view_model``): the
input, then each pass that changed the program, each drawn with what that pass did marked
(``added``, ``removed``, ``merged``, ``rewritten``, ``grouped``: ``inspect.pipeline.Diff``) and
the same marks as its ``diff`` overlay layer, so a folded namespace says what changed inside.
Nodes are matched across passes by value id: the node a student selected stays selected, and
stays where it was on the screen, as the slider moves (as SpiderMonkey's iongraph keeps a
selected block in place). Each pass is drawn the first time the slider reaches it.

    from mlclab.notebook.scrubber import pass_scrubber
    pass_scrubber(fn)           # fn: a compiled function
"""
from __future__ import annotations

from .graphs import TEXT_STYLES, draw_view
from .viewer import PENDING, GraphViewer


def step_names(pipe, changed_only: bool = True) -> list:
    """``[(view name, step index)]``: the input (-1), then each pass (that changed something)."""
    out = [("0 · input", -1)]
    for step in pipe.steps:
        if step.changed or not changed_only:
            out.append((f"{step.index + 1} · {step.name}", step.index))
    return out


def step_view(pipe, index: int, **fold) -> dict:
    """The view model of the program after step ``index`` (-1: the input), its changes marked;
    ``fold``: ``draw_view``'s ``full``, ``folded``, ``open_modules``."""
    from ..inspect.text import render_text

    if index < 0:
        texts = {s: render_text(pipe._subject(pipe.input), s) for s in TEXT_STYLES}
        return draw_view(pipe._graph(-1, collapse=None).graph, texts, **fold)
    graph = pipe.diff(index).graph.graph
    texts = {s: pipe.steps[index].render_text(s) for s in TEXT_STYLES}
    layer = {nid: {"change": n.status, "text": f"{n.status} by {pipe.steps[index].name}"}
             for nid, n in graph.nodes.items() if n.status}
    return draw_view(graph, texts, {"diff": layer}, **fold)


def pass_scrubber(fn, changed_only: bool = True) -> GraphViewer:
    """A viewer of ``fn``'s build pipeline with a pass slider (``changed_only``: skip the passes
    that changed nothing)."""
    pipe = fn.pipeline()
    steps = step_names(pipe, changed_only)
    index = dict(steps)

    def load(name: str, full: bool = False) -> dict:
        return step_view(pipe, index[name], full=full, folded=viewer.folded,
                         open_modules=viewer.open_modules or None)

    first = steps[0][0]
    viewer = GraphViewer({name: step_view(pipe, -1) if name == first else PENDING
                          for name, _ in steps}, loader=load, scrub=True,
                         source=getattr(fn, "source", "") or "")
    return viewer
