"""A compiled function's graphs, ready for the viewer widget.

``fn.graph(view)`` (``mlclab.viz.views``) gives, per view, a graph model (nodes with stable ids,
operators, types and DSL spans) and its Graphviz drawing, whose SVG node elements carry those ids. This module joins
the two with the texts (let binding, TVMScript) so the widget can link a node to its lines.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from .viewer import GraphViewer, find_binding_line, svg_of

# "fused" is the dataflow graph after the build pipeline's FuseOps pass: the groups TVM will
# compile into one kernel each, drawn as clusters that the viewer can fold.
VIEWS = ("dataflow", "let", "tree", "fused")
FUSE_PASS = "FuseOps"


def node_infos(model: Mapping, let_text: str = "", script_text: str = "") -> dict:
    """Node id -> the viewer's node info, from a graph model's ``to_dict()``."""
    infos = {}
    for node in model.get("nodes", []):
        source = node.get("source") or {}
        name = node.get("name")
        script_line = find_binding_line(script_text, [name]) if name and script_text else None
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
            "let_line": find_binding_line(let_text, [name]) if name and let_text else None,
            "script": script_text.splitlines()[script_line - 1].strip() if script_line else "",
            "group": node.get("group"),
        }
        infos[node["id"]] = {k: v for k, v in info.items() if v not in (None, "", {})}
    return infos


def graph_views(fn, views: Iterable[str] = VIEWS) -> dict:
    """``{view: {"svg", "nodes", "clusters", "let_text"}}`` for a compiled function."""
    let_text, script_text = fn.text("let"), fn.text("relax")
    out = {}
    for view in views:
        if view == "fused":
            step = fn.pipeline()[FUSE_PASS]
            # The fused module has its own bindings: link its nodes to its own texts.
            drawn, v_let, v_script = step.graph("dataflow"), step.text("let"), step.text("relax")
        else:
            drawn, v_let, v_script = fn.graph(view), let_text, script_text
        model = drawn.to_dict()
        out[view] = {"svg": svg_of(drawn), "nodes": node_infos(model, v_let, v_script),
                     "clusters": {c["id"]: {"label": c.get("label", ""), "kind": c.get("kind", "")}
                                  for c in model.get("clusters", [])},
                     "let_text": v_let}
    return out


def nodes_for_binding(nodes: Mapping[str, Mapping], binding: str) -> list[str]:
    """Ids of the nodes that hold the IR binding ``binding`` (one per view; more in a tree)."""
    return [nid for nid, info in nodes.items() if info.get("binding") == binding]


def function_viewer(fn, view: str = "dataflow", views: Iterable[str] = VIEWS,
                    annotations: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    highlight_bindings: Iterable[str] = (), payload: Optional[dict] = None,
                    **kwargs) -> GraphViewer:
    """A :class:`GraphViewer` of ``fn``.

    ``annotations`` maps IR binding names to ``{"status": "ok" | "diverged", "text": ...}``;
    ``highlight_bindings`` names bindings to mark. Both are applied to every view's nodes that
    hold those bindings, so the marks survive switching views. ``payload`` reuses the output
    of :func:`graph_views` (drawing is the slow part).
    """
    payload = payload if payload is not None else graph_views(fn, views)
    notes, marked = {}, []
    for data in payload.values():
        for binding, note in (annotations or {}).items():
            for nid in nodes_for_binding(data["nodes"], binding):
                notes[nid] = dict(note)
        for binding in highlight_bindings:
            marked.extend(nodes_for_binding(data["nodes"], binding))
    return GraphViewer(payload, view=view, source=fn.source, let_text=fn.text("let"),
                       annotations=notes, highlight=list(dict.fromkeys(marked)), **kwargs)
