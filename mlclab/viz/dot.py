"""Graphviz plotter: the graph model as a ``graphviz.Digraph`` (SVG in notebooks).

Every label is an HTML-like Graphviz label built from escaped text, so operator attributes,
names and source lines can hold ``<``, ``&``, quotes or backslashes without breaking the DOT or
the SVG. DOT node names are ``n0, n1, ...`` (a name like ``main:lv`` would read as a port); the
model's node id goes into the ``id`` attribute, which Graphviz copies to the SVG element, so a
viewer can map a click back to the node.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional

from .model import Graph, Node

INSTALL_HINT = (
    "Graphviz's `dot` program was not found, so the graph is shown as text instead. "
    "Install Graphviz to draw it: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS), `conda install -c conda-forge graphviz`, "
    "or https://graphviz.org/download/ (on Binder, add `graphviz` to binder/apt.txt)."
)


class MissingDotWarning(UserWarning):
    """Graphviz's ``dot`` binary is missing; mlclab fell back to the terminal text."""


def html_escape(text) -> str:
    """Escape for a Graphviz HTML-like label (decimal entities: Graphviz knows them all)."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;").replace("\n", " "))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Fill colours are light so black text stays readable in print and on dark notebook themes.
NODE_STYLE = {
    "param": dict(shape="ellipse", style="filled", fillcolor="#dbeafe"),
    "const": dict(shape="note", style="filled", fillcolor="#e5e7eb"),
    "op": dict(shape="box", style="rounded,filled", fillcolor="#ffffff"),
    "call": dict(shape="box", style="rounded,filled,bold", fillcolor="#ede9fe"),
    "fused": dict(shape="box", style="rounded,filled", fillcolor="#fde68a"),
    "tuple": dict(shape="box", style="filled", fillcolor="#f3f4f6"),
    "getitem": dict(shape="box", style="filled", fillcolor="#f3f4f6"),
    "if": dict(shape="diamond", style="filled", fillcolor="#fef3c7"),
    "closure": dict(shape="box", style="filled,dashed", fillcolor="#f3f4f6"),
    "alias": dict(shape="box", style="rounded,dashed"),
    "match_cast": dict(shape="box", style="rounded,filled", fillcolor="#f3f4f6"),
    "return": dict(shape="box", style="rounded,filled", fillcolor="#d1fae5"),
    "collapsed": dict(shape="box3d", style="filled", fillcolor="#fde68a"),
    "elided": dict(shape="plaintext"),
}
STATUS_STYLE = {
    "added": dict(color="#15803d", penwidth="2.5", fillcolor="#dcfce7"),
    "removed": dict(color="#b91c1c", style="dashed,filled", fillcolor="#fee2e2"),
    "merged": dict(color="#c2410c", penwidth="2.5", fillcolor="#ffedd5"),
    "rewritten": dict(color="#1d4ed8", penwidth="2"),
    "grouped": dict(color="#d97706", penwidth="2"),
}
CLUSTER_STYLE = {
    "function": dict(style="rounded", color="#6b7280"),
    "fused": dict(style="rounded,filled", color="#d97706", fillcolor="#fffbeb"),
    "then": dict(style="dashed", color="#9ca3af"),
    "else": dict(style="dashed", color="#9ca3af"),
    "closure": dict(style="dotted", color="#6b7280"),
}
EDGE_STYLE = {
    "data": dict(),
    "call": dict(style="dashed", color="#7c3aed"),
    "seq": dict(penwidth="2", color="#374151"),
    "branch": dict(style="dotted"),
}


class DotPlotter:
    """Draws a ``Graph`` with Graphviz.

    ``render(graph)`` returns the ``graphviz.Digraph``; ``render(graph, filename)`` writes the
    file (format from ``format`` or the file's suffix). When ``dot`` is missing, writing falls
    back to the terminal text next to ``filename`` (``.txt``) and warns how to install Graphviz.
    """

    # From this many nodes on, Graphviz's network-simplex passes (ranking and x placement) are
    # capped: on a 1,000-node residual net that halves dot's time (0.66 -> 0.37 s CPU) for a
    # layout that is a little less straight, and keeps a big graph interactive.
    BIG_GRAPH = 400

    def __init__(self, rankdir: str = "TB", show_attrs: bool = True, show_source: bool = True,
                 max_label: int = 48):
        self.rankdir = rankdir
        self.show_attrs = show_attrs
        self.show_source = show_source
        self.max_label = max_label

    def render(self, graph: Graph, filename: Optional[str] = None, format: Optional[str] = None):
        dot = self.digraph(graph)
        if filename is None:
            return dot
        return write(dot, graph, filename, format)

    # ------------------------------------------------------------------ building
    def digraph(self, graph: Graph):
        import graphviz

        dot = graphviz.Digraph(name=graph.name,
                               graph_attr={"rankdir": self.rankdir, "compound": "true",
                                           "fontname": "Helvetica", "fontsize": "11",
                                           "nodesep": "0.25", "ranksep": "0.35"},
                               node_attr={"fontname": "Helvetica", "fontsize": "11",
                                          "margin": "0.08,0.04", "height": "0.3"},
                               edge_attr={"fontname": "Helvetica", "fontsize": "9",
                                          "arrowsize": "0.7"})
        if len(graph.nodes) >= self.BIG_GRAPH:
            dot.graph_attr.update(nslimit="0.2", nslimit1="0.2")
        names = {nid: f"n{i}" for i, nid in enumerate(graph.nodes)}
        cluster_names = {cid: f"cluster_{i}" for i, cid in enumerate(graph.clusters)}
        members: dict = {cid: [] for cid in graph.clusters}
        top = []
        for node in graph.nodes.values():
            (members[node.group] if node.group in members else top).append(node)
        children: dict = {cid: [] for cid in graph.clusters}
        roots = []
        for cid, c in graph.clusters.items():
            (children[c.parent] if c.parent in children else roots).append(cid)

        # The statements are written straight into the Digraph's body: going through
        # ``Digraph.node``/``edge`` re-quotes every attribute and costs more than Graphviz's own
        # layout on a 1,000-node graph. ``_stmt`` quotes exactly as ``graphviz`` does.
        body = dot.body

        def fill(cid, indent):
            pad = "\t" * indent
            for node in members.get(cid, ()) if cid else top:
                body.append(f"{pad}{names[node.id]} {_attr_list(self.node_attrs(node))}\n")
            for child in (children[cid] if cid else roots):
                c = graph.clusters[child]
                attrs = {"label": f"<{html_escape(_shorten(c.label, 2 * self.max_label))}>",
                         "id": graphviz.escape(f"cluster:{c.id}"), "fontsize": "10",
                         "labeljust": "l", **CLUSTER_STYLE.get(c.kind, {})}
                body.append(f"{pad}subgraph {cluster_names[child]} {{\n")
                body.append(f"{pad}\tgraph {_attr_list(attrs)}\n")
                fill(child, indent + 1)
                body.append(f"{pad}}}\n")

        fill(None, 1)
        let_view = graph.layout == "sequence"
        for e in graph.edges:
            attrs = dict(EDGE_STYLE.get(e.kind, {}))
            if e.label:
                attrs["label"] = f"<{html_escape(e.label)}>"
            if let_view and e.kind == "data":
                # In ANF the order is the seq chain; def-use links are drawn light and do not
                # pull the layout, so the chain stays a straight column.
                attrs.update(style="dashed", color="#9ca3af", constraint="false")
            if e.kind == "call":
                callee = graph.nodes[e.dst].group
                if callee in cluster_names:
                    attrs["lhead"] = cluster_names[callee]
            stmt = f"\t{names[e.src]} -> {names[e.dst]}"
            body.append(f"{stmt} {_attr_list(attrs)}\n" if attrs else stmt + "\n")
        return dot

    def node_attrs(self, node: Node) -> dict:
        import graphviz

        attrs = dict(NODE_STYLE.get(node.kind, NODE_STYLE["op"]))
        attrs["id"] = graphviz.escape(node.id)
        attrs["label"] = "<" + self.label(node) + ">"
        if node.recomputed:
            attrs.update(style="rounded,filled,dashed", fillcolor="#fce7f3", color="#be185d")
        if node.status in STATUS_STYLE:
            attrs.update(STATUS_STYLE[node.status])
        if node.is_output:
            attrs["peripheries"] = "2"
        if node.source is not None and node.source.source_line:
            attrs["tooltip"] = graphviz.escape(
                f"line {node.source.lineno}: {node.source.source_line.strip()}")
        return attrs

    def label(self, node: Node) -> str:
        """The node card: operator, attributes, ``%name: type``, the DSL line, flags."""
        small = '<font point-size="9">{}</font>'
        rows = [f"<b>{html_escape(_shorten(node.op, self.max_label))}</b>"]
        if self.show_attrs and node.attrs and node.kind not in ("collapsed", "elided"):
            for key, value in node.attrs.items():
                rows.append(small.format(html_escape(_shorten(f"{key}={value}", self.max_label))))
        if node.kind == "collapsed":
            rows.append(small.format(html_escape(f"{node.attrs.get('nodes', '?')} nodes")))
        if node.kind == "elided":
            hidden = node.attrs.get("hidden") or node.attrs.get("reason", "")
            rows = [small.format(html_escape(f"… {hidden} more" if hidden.isdigit() else f"… {hidden}"))]
        name = f"%{node.name}" if node.name and node.kind not in ("param",) else ""
        typ = node.type
        if name or typ:
            rows.append(small.format(html_escape(_shorten(
                f"{name}: {typ}" if name and typ else name or typ, 2 * self.max_label))))
        # A parameter's line is the ``def`` line: long, and the same for all of them.
        if self.show_source and node.source is not None and node.kind != "param":
            line = node.source.source_line.strip()
            rows.append('<font point-size="9" color="#4b5563">{}</font>'.format(html_escape(
                _shorten(f"line {node.source.lineno}: {line}" if line
                         else f"line {node.source.lineno}", self.max_label))))
        if node.recomputed:
            rows.append('<font point-size="9" color="#be185d">recomputed</font>')
        if node.status:
            rows.append(small.format(html_escape(node.status)))
        cells = "".join(f"<tr><td>{r}</td></tr>" for r in rows)
        return f'<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{cells}</table>'


def _quote(value: str) -> str:
    """A DOT attribute value: HTML-like labels (``<...>``) as they are, the rest quoted.

    Values that hold user text went through ``graphviz.escape`` (every backslash doubled), so
    every quote here is a real quote and gets its backslash.
    """
    if value.startswith("<") and value.endswith(">"):
        return value
    return '"' + value.replace('"', '\\"') + '"'


def _attr_list(attrs: dict) -> str:
    return "[" + " ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items()) + "]"


def write(dot, graph: Graph, filename, format: Optional[str] = None) -> str:
    """Write ``dot`` to ``filename``; without the ``dot`` binary, write the text form instead."""
    import graphviz

    path = Path(filename)
    fmt = format or (path.suffix[1:] if path.suffix else "svg")
    if fmt in ("txt", "text"):
        from .term import TermPlotter

        path.write_text(TermPlotter().render(graph), encoding="utf-8")
        return str(path)
    if fmt in ("dot", "gv"):
        path.write_text(dot.source, encoding="utf-8")
        return str(path)
    try:
        data = dot.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        from .term import TermPlotter

        warnings.warn(INSTALL_HINT, MissingDotWarning, stacklevel=3)
        txt = path.with_suffix(".txt")
        txt.write_text(TermPlotter().render(graph), encoding="utf-8")
        return str(txt)
    path.write_bytes(data)
    return str(path)
