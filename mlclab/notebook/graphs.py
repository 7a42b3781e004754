"""A compiled function's graphs, ready for the viewer widget.

``fn.graph(view)`` (``mlclab.viz.views``) gives, per view, a graph model (nodes with stable ids,
operators, types and DSL spans) and its Graphviz drawing, whose SVG node elements carry those
ids. This module joins the two with the texts (let binding, TVMScript) so the widget can link a
node to its lines.

A node's info is one JSON shape everywhere: the model's ``Node.to_dict()`` (what
``Graph.to_dict()`` lists) plus the two text links ``let_line`` and ``script`` (see
:func:`node_info`). The viewer, its static twin and the cell display all read that shape.

Big graphs are shown as an overview first (``mlclab.viz.overview``); the viewer's "draw all"
asks for ``view_payload(fn, view, full=True)``. An imported model's overview has its modules
folded; the viewer opens and folds them by asking for ``view_payload(fn, view,
open_modules=[...])``.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

from ..viz.dot import LayoutTimeout, xml_text
from ..viz.overview import describe, module_folds, overview
from ..viz.registry import view_names
from ..viz.views import GraphView
from .viewer import PENDING, GraphViewer, binding_lines, svg_of

# "fused" is the dataflow graph after the build pipeline's FuseOps pass: the groups TVM will
# compile into one kernel each, drawn as clusters that the viewer can fold.
FUSE_PASS = "FuseOps"


def viewer_views() -> tuple:
    """The viewer's view switch: every registered view (mlclab.viz.registry), then "fused"."""
    return (*view_names(), "fused")


def clean_json(value):
    """``value`` (JSON-like) with every string XML-safe: a pasted control character or a lone
    surrogate in a DSL line would otherwise break the SVG, the HTML or the comm's UTF-8."""
    if isinstance(value, str):
        return xml_text(value)
    if isinstance(value, dict):
        return {clean_json(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def node_info(node, let_lines: Mapping[str, int], script_lines: Mapping[str, int],
              script_text: list) -> dict:
    """The one JSON shape of a node: ``node.to_dict()`` plus ``let_line`` (1-based, in the let
    text) and ``script`` (the node's TVMScript line), both found by its IR name."""
    info = node.to_dict()
    name = node.name
    info["let_line"] = let_lines.get(name) if name else None
    line = script_lines.get(name) if name else None
    info["script"] = script_text[line - 1].strip() if line else ""
    return clean_json(info)


def node_infos(graph, let_text: str = "", script_text: str = "") -> dict:
    """Node id -> :func:`node_info` for every node of a graph model."""
    let_lines, script_lines = binding_lines(let_text), binding_lines(script_text)
    script = script_text.splitlines()
    return {nid: node_info(node, let_lines, script_lines, script)
            for nid, node in graph.nodes.items()}


def _drawing(fn, view: str, profile=None):
    """The graph of ``view`` and the let and TVMScript texts its node names refer to;
    ``profile`` (``fn.profile()``) colours the fused view by time."""
    if view == "fused":
        step = fn.pipeline()[FUSE_PASS]
        # The fused module has its own bindings: link its nodes to its own texts.
        drawn = (fn.graph("fused", profile=profile, collapse=None) if profile is not None
                 else step.graph("dataflow", collapse=None))
        return drawn, step.text("let"), step.text("relax")
    # The whole graph: the overview below folds it (fn.graph() alone folds big models).
    return fn.graph(view, collapse=None), fn.text("let"), fn.text("relax")


def cluster_info(c) -> dict:
    """A cluster as the viewer gets it; a module cluster also has its ``path`` and ``detail``
    (its line of the module tree)."""
    info = {"label": c.label, "kind": c.kind, "parent": c.parent}
    if c.path is not None:
        info.update(path=c.path, detail=c.detail)
    return info


def view_payload(fn, view: str, full: bool = False, profile=None,
                 open_modules: Optional[Iterable[str]] = None) -> dict:
    """``{"svg", "nodes", "clusters", "let_text"}`` of one view of a compiled function.

    A big graph is drawn as an overview unless ``full``; the payload then says so in
    ``"overview": {"shown", "total"}``. An imported model's overview has its modules folded
    (``open_modules``: the module paths to draw open, default the first look's), and its
    payload has ``"modules": {"open", "folded"}`` (``mlclab.viz.overview.module_folds``). If
    Graphviz runs out of time, the payload carries the graph as ``"text"`` with a ``"note"``
    instead of an SVG.
    """
    drawn, let_text, script_text = _drawing(fn, view, profile)
    graph = drawn.graph if full else overview(drawn.graph, open_modules=open_modules)
    payload = {"nodes": node_infos(graph, let_text, script_text),
               "clusters": {cid: cluster_info(c) for cid, c in graph.clusters.items()},
               "let_text": let_text}
    shown = describe(drawn.graph, graph)
    if shown:
        payload["overview"] = shown
    modules = module_folds(drawn.graph, graph)
    if modules:
        payload["modules"] = modules
    view_obj = drawn if graph is drawn.graph else GraphView(graph)
    try:
        payload["svg"] = svg_of(view_obj)
    except LayoutTimeout as err:
        payload.update(svg="", text=view_obj.text,
                       note=f"{err}; the graph is shown as text instead.")
    return clean_json(payload)


def nodes_for_binding(nodes: Mapping[str, Mapping], binding: str,
                      modules: Optional[Mapping] = None) -> list[str]:
    """Ids of the nodes that hold the IR binding ``binding`` (one per view; more in a tree);
    with a payload's ``modules``, the folded module holding it when no node shows it."""
    found = [nid for nid, info in nodes.items() if info.get("name") == binding]
    if found or not modules:
        return found
    return [nid for nid, names in (modules.get("names") or {}).items() if binding in names]


def _folded_note(notes: list) -> dict:
    """One mark for a folded module from the marks of the bindings inside it."""
    bad = sum(1 for n in notes if n.get("status") == "diverged")
    if bad:
        return {"status": "diverged", "text": f"{bad} of {len(notes)} checked values inside "
                                              f"diverge; open it to see which"}
    return {"status": "ok", "text": f"{len(notes)} checked values inside, all ok"}


def function_viewer(fn, view: str = "dataflow", views: Optional[Iterable[str]] = None,
                    annotations: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    highlight_bindings: Iterable[str] = (),
                    draw: Optional[Callable[[str], dict]] = None, profile=None,
                    **kwargs) -> GraphViewer:
    """A :class:`GraphViewer` of ``fn``; only ``view`` is drawn now, the others when shown.

    ``annotations`` maps IR binding names to ``{"status": "ok" | "diverged", "text": ...}``;
    ``highlight_bindings`` names bindings to mark. Both are applied to the nodes of every view
    that hold those bindings, as each view is drawn, so the marks survive switching views.
    ``draw(view)`` replaces :func:`view_payload` (to share drawings between viewers); the full
    drawing of a big view ("draw all") is always made here. ``profile`` (``fn.profile()``)
    colours the "fused" view by each kernel's share of the time, numbers in each node's details.
    """
    views = viewer_views() if views is None else views
    draw = draw or (lambda name: view_payload(fn, name, profile=profile))
    annotations, highlight_bindings = dict(annotations or {}), list(highlight_bindings)

    def marks_of(data: dict) -> tuple[dict, list]:
        nodes, modules = data.get("nodes", {}), data.get("modules")
        notes, inside = {}, {}
        for binding, note in annotations.items():
            for nid in nodes_for_binding(nodes, binding, modules):
                if nodes[nid].get("name") == binding:
                    notes[nid] = dict(note)
                else:                   # a folded module: summed up below
                    inside.setdefault(nid, []).append(note)
        notes.update({nid: _folded_note(marks) for nid, marks in inside.items()})
        return notes, list(dict.fromkeys(nid for b in highlight_bindings
                                         for nid in nodes_for_binding(nodes, b, modules)))

    def load(name: str, full: bool = False) -> dict:
        # Called by the viewer (defined below, before any view switch can happen). Modules the
        # student opened apply to every view; ``draw`` makes the first look.
        opened = viewer.open_modules
        if full:
            data = view_payload(fn, name, full=True, profile=profile)
        elif opened != first_open:
            data = view_payload(fn, name, profile=profile, open_modules=opened)
        else:
            data = draw(name)
        notes, marks = marks_of(data)
        viewer.annotations = {**viewer.annotations, **notes}
        viewer.highlight = list(dict.fromkeys([*viewer.highlight, *marks]))
        return data

    first = draw(view)
    first_open = list((first.get("modules") or {}).get("open", []))
    notes, marks = marks_of(first)
    # The first view's let text is the function's, unless it shows a later IR (fused); printing
    # it again costs 0.1-0.3 s on a 1,000-binding program.
    let_text = first.get("let_text") if view != "fused" and "let_text" in first else fn.text("let")
    viewer = GraphViewer({name: first if name == view else PENDING for name in views},
                         loader=load, view=view, source=xml_text(fn.source),
                         let_text=xml_text(let_text), annotations=notes, highlight=marks,
                         open_modules=first_open,
                         **kwargs)
    return viewer
