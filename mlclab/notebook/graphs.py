"""A compiled function's graphs, ready for the viewer widget.

``fn.graph(view)`` (``mlclab.viz.views``) gives, per view, a graph model (nodes with stable ids,
operators, types and DSL spans) and its Graphviz drawing, whose SVG node elements carry those ids. This module joins
the two with the texts (let binding, TVMScript) so the widget can link a node to its lines.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

from ..ir.text import IRText, render_text
from ..viz.registry import view_names
from .viewer import PENDING, GraphViewer, svg_of

# "fused" is the dataflow graph after the build pipeline's FuseOps pass: the groups TVM will
# compile into one kernel each, drawn as clusters that the viewer can fold.
FUSE_PASS = "FuseOps"


def viewer_views() -> tuple:
    """The viewer's view switch: every registered view (mlclab.viz.registry), then "fused"."""
    return (*view_names(), "fused")


VIEWS = viewer_views()   # the built-in ones; functions below re-read the registry


def node_infos(model: Mapping, let_text: Optional[IRText] = None,
               script_text: Optional[IRText] = None) -> dict:
    """Node id -> the viewer's node info, from a graph model's ``to_dict()``; the texts'
    ``line_values`` give each node its let and TVMScript lines."""
    infos = {}
    for node in model.get("nodes", []):
        source = node.get("source") or {}
        name = node.get("name")
        script_line = script_text.line_of(node["id"]) if script_text else None
        info = {
            "label": node.get("op") or name or node["id"],
            "op": node.get("op") if node.get("kind") in ("op", "call", "fused", "collapsed") else None,
            "kind": node.get("kind"),
            "attrs": {str(k): str(v) for k, v in (node.get("attrs") or {}).items()},
            "type": node.get("type") or "",
            "binding": name,
            "dsl_name": source.get("dsl_name"),
            "line": source.get("lineno"),
            "source_line": source.get("source_line") or "",
            "let_line": let_text.line_of(node["id"]) if let_text else None,
            "script": script_text.text.splitlines()[script_line - 1].strip() if script_line else "",
            "group": node.get("group"),
        }
        infos[node["id"]] = {k: v for k, v in info.items() if v not in (None, "", {})}
    return infos


def view_payload(fn, view: str) -> dict:
    """``{"svg", "nodes", "clusters", "let_text"}`` of one view of a compiled function."""
    if view == "fused":
        step = fn.pipeline()[FUSE_PASS]
        # The fused module has its own bindings: link its nodes to its own texts.
        drawn = step.graph("dataflow")
        let_text, script_text = step.render_text("let"), step.render_text("relax")
    else:
        drawn, let_text, script_text = fn.graph(view), render_text(fn, "let"), render_text(fn, "relax")
    model = drawn.to_dict()
    return {"svg": svg_of(drawn), "nodes": node_infos(model, let_text, script_text),
            "clusters": {c["id"]: {"label": c.get("label", ""), "kind": c.get("kind", "")}
                         for c in model.get("clusters", [])},
            "let_text": let_text.text}


def graph_views(fn, views: Optional[Iterable[str]] = None) -> dict:
    """``{view: view_payload(fn, view)}`` for several views (default: all of the viewer's)."""
    return {view: view_payload(fn, view) for view in (views or viewer_views())}


def nodes_for_binding(nodes: Mapping[str, Mapping], binding: str) -> list[str]:
    """Ids of the nodes that hold the IR binding ``binding`` (one per view; more in a tree)."""
    return [nid for nid, info in nodes.items() if info.get("binding") == binding]


def function_viewer(fn, view: str = "dataflow", views: Optional[Iterable[str]] = None,
                    annotations: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    highlight_bindings: Iterable[str] = (),
                    draw: Optional[Callable[[str], dict]] = None, **kwargs) -> GraphViewer:
    """A :class:`GraphViewer` of ``fn``; only ``view`` is drawn now, the others when shown.

    ``annotations`` maps IR binding names to ``{"status": "ok" | "diverged", "text": ...}``;
    ``highlight_bindings`` names bindings to mark. Both are applied to the nodes of every view
    that hold those bindings, as each view is drawn, so the marks survive switching views.
    ``draw(view)`` replaces :func:`view_payload` (to share drawings between viewers).
    """
    views = viewer_views() if views is None else views
    draw = draw or (lambda name: view_payload(fn, name))
    annotations, highlight_bindings = dict(annotations or {}), list(highlight_bindings)

    def marks_of(data: dict) -> tuple[dict, list]:
        nodes = data.get("nodes", {})
        notes = {nid: dict(note) for binding, note in annotations.items()
                 for nid in nodes_for_binding(nodes, binding)}
        return notes, [nid for b in highlight_bindings for nid in nodes_for_binding(nodes, b)]

    def load(name: str) -> dict:
        # Called by the viewer (defined below, before any view switch can happen).
        data = draw(name)
        notes, marks = marks_of(data)
        viewer.annotations = {**viewer.annotations, **notes}
        viewer.highlight = list(dict.fromkeys([*viewer.highlight, *marks]))
        return data

    first = draw(view)
    notes, marks = marks_of(first)
    viewer = GraphViewer({name: first if name == view else PENDING for name in views},
                         loader=load, view=view, source=fn.source, let_text=fn.text("let"),
                         annotations=notes, highlight=marks, **kwargs)
    return viewer
