"""What a display's view model is drawn from: a view's whole graph, the texts its nodes are
anchored in and its overlay layers, read once per display (``notebook.graphs.draw_view`` then
draws any folding of them). The viewer, the pass scrubber and a comparison's sides all read
these, none another display's helpers.
"""
from __future__ import annotations

from ..inspect.pipeline import diff_layer
from ..viz.views import step_of

# The texts a view model anchors its nodes in: the let pane and the details' TVMScript line.
TEXT_STYLES = ("let", "relax")


def view_source(fn, view: str):
    """The whole graph of ``view`` and the texts (``IRText``, with their line maps) of the IR it
    draws: the fused view has its own module, after FuseOps."""
    from ..inspect.text import render_text

    step = step_of(fn, view)
    if step is not None:         # a step of the build ("fused"), read from its record
        return step.graph(view, collapse=None), {s: step.render_text(s) for s in TEXT_STYLES}
    return fn.graph(view, collapse=None), {s: render_text(fn, s) for s in TEXT_STYLES}


def marked_graph(pipe, index: int):
    """The whole graph after step ``index`` (-1: the input), what that step did marked."""
    if index < 0:
        return pipe._graph(-1, collapse=None).graph
    return pipe.diff(index).graph.graph


def step_source(pipe, index: int) -> tuple:
    """What a view of the program after step ``index`` (-1: the input) is drawn from, made
    once for any number of foldings: ``(whole marked graph, texts, overlay layers)``. A pass
    scrubber's steps and a comparison's step sides both read it, as ``view_source`` is read
    for a function's view (:func:`view_source`)."""
    from ..inspect.text import render_text

    graph = marked_graph(pipe, index)
    if index < 0:
        return graph, {s: render_text(pipe._subject(pipe.input), s) for s in TEXT_STYLES}, {}
    texts = {s: pipe.steps[index].render_text(s) for s in TEXT_STYLES}
    return graph, texts, {"diff": diff_layer(graph, pipe.steps[index].name)}
