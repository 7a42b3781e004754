"""Graphviz plotter: the graph model as a ``graphviz.Digraph`` (SVG in notebooks).

Every label is an HTML-like Graphviz label built from escaped text, so operator attributes,
names and source lines can hold ``<``, ``&``, quotes or backslashes without breaking the DOT or
the SVG; characters XML 1.0 forbids (a pasted ANSI colour escape, a lone surrogate) are
replaced by visible stand-ins. DOT node names are ``n0, n1, ...`` (a name like ``main:lv``
would read as a port); the model's node id goes into the ``id`` attribute, which Graphviz copies
to the SVG element, so a viewer can map a click back to the node.

Layout cost is bounded (issue 10): a value read by many nodes is drawn next to each of its
readers (:data:`SHARED_USES`), big graphs get capped layout passes, and ``dot`` runs with a
time limit (:func:`run_dot`), so no drawing can hang the kernel.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
import warnings
from collections import Counter
from pathlib import Path
from typing import Optional

from ..lang.source import stand_in
from .dot_layout import order_params, short_signature, stack_functions
from .dot_quote import attr_list as _attr_list
from .model import Graph, Node
from .namespaces import namespace_kind
from .paint import dot_attrs

INSTALL_HINT = (
    "Graphviz's `dot` program was not found, so the graph is shown as text instead. "
    "Install Graphviz to draw it: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS), `conda install -c conda-forge graphviz`, "
    "or https://graphviz.org/download/ (on Binder, add `graphviz` to binder/apt.txt)."
)

# The Graphviz program that lays graphs out (a module attribute so tests can point it at a
# missing or slow program).
DOT = "dot"

# How long one layout may take before it is abandoned. With the bounds below, every shape
# measured (benchmarks/graph_render.py) lays out in well under this; it is the guard for the
# ones nobody measured.
LAYOUT_TIMEOUT = 20.0


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program (:data:`DOT`) is on PATH: the fast path, where the
    kernel lays graphs out. Without it, notebook displays lay them out in the browser."""
    return shutil.which(DOT) is not None


class MissingDotWarning(UserWarning):
    """Graphviz's ``dot`` binary is missing; mlclab fell back to the terminal text."""


class LayoutTimeout(TimeoutError):
    """Graphviz took longer than its time limit; its process was stopped."""


# Characters XML 1.0 forbids: C0 controls other than tab/newline/CR, lone surrogates, and
# U+FFFE/U+FFFF. One of them in a label makes Graphviz write an SVG no parser reads, and a lone
# surrogate cannot even be encoded to send it to ``dot``.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text) -> str:
    """``text`` with every character XML 1.0 forbids replaced by a visible stand-in."""
    return _NOT_XML.sub(lambda m: stand_in(m.group()), str(text))


def html_escape(text) -> str:
    """Escape for a Graphviz HTML-like label (decimal entities: Graphviz knows them all)."""
    return (xml_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;").replace("\n", " ")
            .replace("\r", " ").replace("\t", " "))


def dot_string(text) -> str:
    """Escape for a quoted DOT string (``id``, ``tooltip``): backslashes made literal."""
    import graphviz

    return graphviz.escape(xml_text(text).replace("\n", " ").replace("\r", " "))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Fill colours are light so black text stays readable in print and on dark notebook themes.
NODE_STYLE = {
    # An ellipse already leaves room around its text: a small margin keeps a row of
    # parameters (a CNN's weights and biases) from setting the picture's width (issue 30).
    "param": dict(shape="ellipse", style="filled", fillcolor="#dbeafe", margin="0.02,0.02"),
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
# A folded module: blue where a folded fused group is amber.
FOLDED_MODULE_STYLE = dict(shape="box3d", style="filled", fillcolor="#dbeafe", margin="0.14,0.08")
EDGE_STYLE = {
    "data": dict(),
    "call": dict(style="dashed", color="#7c3aed"),
    "seq": dict(penwidth="2", color="#374151"),
    "branch": dict(style="dotted"),
}

# A value read by more than this many nodes is drawn once where it is defined and again, as a
# small dashed copy, next to each further reader (as Netron and TensorBoard draw high fan-out
# nodes). Its long edges are what made Graphviz explode: ``x + x + ... + x`` with 130 terms
# is 130 edges spanning up to 130 ranks, 8,400 virtual nodes, and dot's x-placement (network
# simplex on 16,900 nodes) ran 126 s; with copies every edge spans one rank (0.16 s). Up to 6
# readers keep their edges: a lesson's shared value (a GELU reads h five times) stays one
# node with fan-out, and a few long edges cost Graphviz little.
SHARED_USES = 6

# The SVG id of a copy: ``use<k>:<node id>`` (the viewer maps it back to the node).
COPY_PREFIX = "use"


def copy_id(node_id: str, k: int) -> str:
    return f"{COPY_PREFIX}{k}:{node_id}"


def edge_id(index: int) -> str:
    """The SVG id of edge ``index`` of ``Graph.edges``."""
    return f"edge:{index}"


class DotPlotter:
    """Draws a ``Graph`` with Graphviz.

    ``render(graph)`` returns the ``graphviz.Digraph``; ``render(graph, filename)`` writes the
    file (format from ``format`` or the file's suffix). When ``dot`` is missing, writing falls
    back to the terminal text next to ``filename`` (``.txt``) and warns how to install Graphviz.
    """

    # From this many nodes on, Graphviz's network-simplex passes (ranking and x placement) and
    # its crossing minimisation are capped: on a 1,000-node residual net that halves dot's time
    # (0.66 -> 0.37 s CPU) for a layout that is a little less straight.
    BIG_GRAPH = 400
    BIG_GRAPH_ATTRS = {"nslimit": "0.2", "nslimit1": "0.2", "mclimit": "0.3",
                       "remincross": "false"}

    def __init__(self, rankdir: str = "TB", show_attrs: bool = True, show_source: bool = True,
                 max_label: int = 48, shared_uses: int = SHARED_USES):
        self.rankdir = rankdir
        self.show_attrs = show_attrs
        self.show_source = show_source
        self.max_label = max_label
        self.shared_uses = shared_uses

    def render(self, graph: Graph, filename: Optional[str] = None, format: Optional[str] = None,
               paint: Optional[dict] = None):
        dot = self.digraph(graph, paint)
        if filename is None:
            return dot
        return write(dot, graph, filename, format)

    # ------------------------------------------------------------------ building
    def digraph(self, graph: Graph, paint: Optional[dict] = None):
        """The ``graphviz.Digraph`` of ``graph``; ``paint`` (node id -> ``viz.paint``'s
        ``node_paints`` value) draws overlay marks into it, for a picture without JavaScript.
        A view model's drawing has none: its displays paint it (``static/paint.js``)."""
        import graphviz

        # Escaped as text: a name such as "<b>x</b>" was written as an HTML-like string (a DOT
        # syntax error), and a trailing backslash escaped the closing quote. (Only the SVG's
        # title: shortened, as Graphviz reads no string over 16,384 bytes.)
        dot = graphviz.Digraph(name=dot_string(_shorten(graph.name, 200)),
                               graph_attr={"rankdir": self.rankdir, "compound": "true",
                                           "fontname": "Helvetica", "fontsize": "11",
                                           # 0.15 in between nodes of a rank: lesson 3's
                                           # CNN fits 940 px with labels at 9 px.
                                           "nodesep": "0.15", "ranksep": "0.35",
                                           # Its last crossing pass undoes the parameter
                                           # order (dot_layout.order_params) across clusters.
                                           "remincross": "false"},
                               node_attr={"fontname": "Helvetica", "fontsize": "11",
                                          "margin": "0.08,0.04", "height": "0.3"},
                               edge_attr={"fontname": "Helvetica", "fontsize": "9",
                                          "arrowsize": "0.7"})
        names = {nid: f"n{i}" for i, nid in enumerate(graph.nodes)}
        # Positional cluster names keep DOT free of user text; the model id travels in ``id``.
        clusters = {cid: f"cluster_{i}" for i, cid in enumerate(graph.clusters)}
        nodes, edges = self._statements(graph, names, clusters, paint or {})
        if sum(map(len, nodes.values())) >= self.BIG_GRAPH:
            dot.graph_attr.update(self.BIG_GRAPH_ATTRS)
        # The statements are written straight into the Digraph's body: going through
        # ``Digraph.node``/``edge`` re-quotes every attribute and costs more than Graphviz's own
        # layout on a 1,000-node graph. ``_attr_list`` quotes exactly as ``graphviz`` does.
        self._write_clusters(dot.body, graph, nodes, clusters)
        dot.body.extend(edges)
        return dot

    def _statements(self, graph: Graph, names: dict, clusters: dict,
                    paint: dict) -> tuple[dict, list]:
        """``({cluster id or None: [node statement]}, [edge statement])``, with the copies of
        widely shared values placed in their readers' clusters."""
        nodes: dict = {}
        for node in graph.nodes.values():
            nodes.setdefault(node.group, []).append(
                f"{names[node.id]} {_attr_list(self.node_attrs(node, paint.get(node.id)))}\n")
        copies = self.copies(graph)
        let_view = graph.layout == "sequence"
        edges = []
        for k, e in enumerate(graph.edges):
            # Every edge's SVG element is "edge:<its index in graph.edges>": the viewer finds
            # it by id, never by reading Graphviz's titles.
            attrs = {"id": edge_id(k), **EDGE_STYLE.get(e.kind, {})}
            if e.label:
                attrs["label"] = f"<{html_escape(e.label)}>"
            src = names[e.src]
            if k in copies:
                # A copy next to the reader; the edge spans one rank and pulls the layout.
                src = f"{src}u{k}"
                reader = graph.nodes[e.dst]
                nodes.setdefault(reader.group, []).append(
                    f"{src} {_attr_list(self.copy_attrs(graph.nodes[e.src], copies[k]))}\n")
                attrs.update(style="dashed", color="#6b7280")
                edges.append(f"\t{src} -> {names[e.dst]} {_attr_list(attrs)}\n")
                continue
            if let_view and e.kind == "data":
                # In ANF the order is the seq chain; def-use links are drawn light and do not
                # pull the layout, so the chain stays a straight column.
                attrs.update(style="dashed", color="#9ca3af", constraint="false")
            if e.kind == "call":
                callee = graph.nodes[e.dst].group
                if callee in clusters:
                    attrs["lhead"] = clusters[callee]
            if e.kind == "call" and not let_view and graph.nodes[e.dst].group in clusters:
                # The callee's frame is stacked under its caller's (dot_layout's
                # stack_functions), so this edge would only stretch it. (A folded callee keeps
                # its place beside the call.)
                attrs["constraint"] = "false"
            edges.append(f"\t{src} -> {names[e.dst]} {_attr_list(attrs)}\n")
        if not let_view:
            order_params(graph, names, nodes)
            edges.extend(stack_functions(graph, names))
        return nodes, edges

    def copies(self, graph: Graph) -> dict:
        """Edge index -> the SVG id of the copy of its source drawn at its reader, for the
        data edges of widely shared values past their first reader."""
        shared = self.shared_values(graph)
        uses: Counter = Counter()
        out = {}
        for k, e in enumerate(graph.edges):
            if e.kind == "data" and e.src in shared:
                uses[e.src] += 1
                if uses[e.src] > 1:
                    out[k] = copy_id(e.src, uses[e.src])
        return out

    def shared_values(self, graph: Graph) -> set:
        """Ids of the nodes whose value more than ``shared_uses`` nodes read."""
        readers = Counter(e.src for e in graph.edges if e.kind == "data")
        return {nid for nid, n in readers.items() if n > self.shared_uses}

    def _write_clusters(self, body: list, graph: Graph, nodes: dict, names: dict) -> None:
        children: dict = {cid: [] for cid in graph.clusters}
        roots = []
        for cid, c in graph.clusters.items():
            (children[c.parent] if c.parent in children else roots).append(cid)
        # Nodes whose group is not a known cluster are drawn at the top level.
        top = [s for cid, stmts in nodes.items() if cid not in graph.clusters for s in stmts]

        def fill(cid, indent):
            pad = "\t" * indent
            body.extend(pad + s for s in (nodes.get(cid, ()) if cid else top))
            for child in (children[cid] if cid else roots):
                body.append(f"{pad}subgraph {names[child]} {{\n")
                attrs = _attr_list(self.cluster_attrs(graph.clusters[child]))
                body.append(f"{pad}\tgraph {attrs}\n")
                fill(child, indent + 1)
                body.append(f"{pad}}}\n")

        fill(None, 1)

    def cluster_attrs(self, c) -> dict:
        label = c.label
        if c.kind in ("function", "fused") and label.startswith("fn "):
            # "fn head(h, v)": the types are on the parameter nodes, and a full signature
            # made the frame (and the picture) as wide as its text.
            label = short_signature(label)
        attrs = {"label": f"<{html_escape(_shorten(label, self.max_label))}>",
                 "id": dot_string(f"cluster:{c.id}"), "fontsize": "10",
                 "labeljust": "l", **namespace_kind(c.kind).style}
        if c.path is not None:
            attrs["tooltip"] = dot_string(_shorten(f"{c.path}: {c.detail}", 4 * self.max_label))
        elif label != c.label:
            attrs["tooltip"] = dot_string(_shorten(c.label, 4 * self.max_label))
        return attrs

    def node_attrs(self, node: Node, paint: Optional[dict] = None) -> dict:
        folded_module = node.folded is not None and node.folded.kind == "module"
        attrs = dict(FOLDED_MODULE_STYLE if folded_module
                     else NODE_STYLE.get(node.kind, NODE_STYLE["op"]))
        attrs["id"] = dot_string(node.id)
        attrs["label"] = "<" + self.label(node) + ">"
        if node.recomputed:
            attrs.update(style="rounded,filled,dashed", fillcolor="#fce7f3", color="#be185d")
        if node.is_output:
            attrs["peripheries"] = "2"
        if folded_module:
            f = node.folded
            attrs["tooltip"] = dot_string(_shorten(
                f"{node.op}: {f.cls} ({f.ops} operators, {f.nodes} nodes); click to unfold",
                4 * self.max_label))
        elif node.folded is not None and "(" in node.op:
            # A folded function: its headline is its name, its whole signature is here.
            attrs["tooltip"] = dot_string(_shorten(
                f"{node.op}: {node.folded.nodes} nodes", 4 * self.max_label))
        elif node.source is not None and node.source.module is not None:
            # An imported model: the module that computed it, its ATen operator, its class.
            where = " · ".join(filter(None, (node.source.module or "(the model's forward)",
                                             node.source.origin,
                                             node.source.source_line.strip())))
            attrs["tooltip"] = dot_string(_shorten(where, 4 * self.max_label))
        elif node.source is not None and node.source.source_line:
            # Capped: a 1,000-term line would otherwise be copied into every node's tooltip.
            attrs["tooltip"] = dot_string(_shorten(
                f"line {node.line}: {node.source.source_line.strip()}", 4 * self.max_label))
        if node.tooltip:
            attrs["tooltip"] = dot_string(node.tooltip)
        return dot_attrs(attrs, paint)

    def copy_attrs(self, node: Node, svg_id: str) -> dict:
        """A small dashed stand-in for a widely shared ``node`` at one of its readers."""
        style = NODE_STYLE.get(node.kind, NODE_STYLE["op"])
        name = node.op if node.kind in ("param", "const") or not node.name else f"%{node.name}"
        return {"shape": style["shape"], "style": "dashed,filled" if "filled" in style["style"]
                else "dashed", "fillcolor": style.get("fillcolor", "#ffffff"),
                "fontsize": "9", "height": "0.2", "margin": "0.04,0.02",
                "id": dot_string(svg_id), "class": "mlclab-copy",
                "label": f"<{html_escape(_shorten(name, self.max_label))}>",
                "tooltip": dot_string(f"{_shorten(name, self.max_label)}: drawn again at each "
                                      f"use, since many nodes read it")}

    def label(self, node: Node) -> str:
        """The node card: operator, attributes, ``%name: type``, the DSL line, flags."""
        small = '<font point-size="9">{}</font>'
        folded = node.folded is not None
        folded_module = folded and node.folded.kind == "module"
        head = node.op
        if folded and not folded_module:
            # A folded function or fused group is named by its frame's label ("fn
            # block1(x: ..., w: ...)"): its name is enough, the signature is in the tooltip.
            head = head.partition("(")[0]
        if folded and node.attrs.get("share"):
            head = f"{head} · {node.attrs['share']} of time"
        rows = [f"<b>{html_escape(_shorten(head, self.max_label))}</b>"]
        if self.show_attrs and node.attrs and node.kind not in ("collapsed", "elided"):
            for key, value in node.attrs.items():
                rows.append(small.format(html_escape(_shorten(f"{key}={value}", self.max_label))))
        f = node.folded
        if f is not None and f.kind == "module":
            rows.append(small.format(html_escape(_shorten(
                f"{f.cls or 'module'} · {f.ops} op{'' if f.ops == 1 else 's'}", self.max_label))))
        elif f is not None:
            rows.append(small.format(html_escape(f"{f.nodes} nodes")))
        if node.kind == "elided":
            hidden = node.attrs.get("hidden") or node.attrs.get("reason", "")
            more = f"… {hidden} more" if hidden.isdigit() else f"… {hidden}"
            rows = [small.format(html_escape(more))]
        name = f"%{node.name}" if node.name and node.kind not in ("param", "collapsed") else ""
        typ = node.type
        if name or typ:
            rows.append(small.format(html_escape(_shorten(
                f"{name}: {typ}" if name and typ else name or typ, 2 * self.max_label))))
        if self.show_source and node.source is not None and node.source.module is not None:
            # An imported model: its line is the module's, so show the module path instead
            # (the model's own forward has none; a folded module has it as its headline).
            if node.source.module and node.kind != "collapsed":
                module = html_escape(_shorten(node.source.module, self.max_label))
                rows.append(f'<font point-size="9" color="#1e40af">{module}</font>')
        # A parameter's line is the ``def`` line: long, and the same for all of them.
        elif self.show_source and node.source is not None and node.kind != "param":
            line = node.source.source_line.strip()
            rows.append('<font point-size="9" color="#4b5563">{}</font>'.format(html_escape(
                _shorten(f"line {node.line}: {line}" if line
                         else f"line {node.line}", self.max_label))))
        if node.recomputed:
            rows.append('<font point-size="9" color="#be185d">recomputed</font>')
        if node.status:
            rows.append(small.format(html_escape(node.status)))
        cells = "".join(f"<tr><td>{r}</td></tr>" for r in rows)
        return f'<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{cells}</table>'



def run_dot(source: str, format: str = "svg", timeout: Optional[float] = None,
            args: tuple = ()) -> bytes:
    """Lay ``source`` out with Graphviz and return the output; ``dot`` is stopped after
    ``timeout`` seconds (``LayoutTimeout``; None: no limit). Raises
    ``graphviz.ExecutableNotFound`` without Graphviz and ``graphviz.CalledProcessError`` when
    ``dot`` fails. ``args``: more options
    (``-Kneato -n2``: draw at given positions, ``viz.stable_layout``)."""
    import graphviz

    cmd = [DOT, *args, f"-T{format}"]
    try:
        with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            if getattr(_PRIORITY, "low", False) and hasattr(os, "setpriority"):
                with contextlib.suppress(OSError):       # dot may have exited already
                    os.setpriority(os.PRIO_PROCESS, proc.pid, 19)
            try:
                out, err = proc.communicate(xml_text(source).encode("utf-8"), timeout=timeout)
            except subprocess.TimeoutExpired as expired:
                proc.kill()                  # nothing keeps running behind the student
                proc.communicate()
                raise LayoutTimeout(f"Graphviz's layout took over {timeout:g} s "
                                    "and was stopped") from expired
    except FileNotFoundError as missing:
        raise graphviz.ExecutableNotFound(cmd) from missing
    if proc.returncode:
        raise graphviz.CalledProcessError(proc.returncode, cmd, output=out, stderr=err)
    return out


# Whether this thread's Graphviz runs are work done ahead of time (low_priority()).
_PRIORITY = threading.local()


@contextlib.contextmanager
def low_priority():
    """Graphviz runs started by this thread inside the block run at the lowest CPU priority
    (where the system has one): layouts made ahead of a click give way to the one a student
    waits for (notebook/fold_layouts.py)."""
    before = getattr(_PRIORITY, "low", False)
    _PRIORITY.low = True
    try:
        yield
    finally:
        _PRIORITY.low = before


def svg_text(dot, timeout: Optional[float] = None) -> str:
    """The SVG of a ``graphviz`` graph, laid out within ``timeout`` seconds (default
    :data:`LAYOUT_TIMEOUT`)."""
    return run_dot(dot.source, "svg",
                   LAYOUT_TIMEOUT if timeout is None else timeout).decode("utf-8")


def write(dot, graph: Graph, filename, format: Optional[str] = None) -> str:
    """Write ``dot`` to ``filename``; without the ``dot`` binary, write the text form instead.

    A file was asked for explicitly, so its layout has no time limit.
    """
    import graphviz

    path = Path(filename)
    fmt = format or (path.suffix[1:] if path.suffix else "svg")
    if fmt in ("txt", "text"):
        from .term import TermPlotter

        path.write_text(TermPlotter().render(graph), encoding="utf-8")
        return str(path)
    if fmt in ("dot", "gv"):
        path.write_text(xml_text(dot.source), encoding="utf-8")
        return str(path)
    try:
        data = run_dot(dot.source, fmt, timeout=None)
    except graphviz.ExecutableNotFound:
        from .term import TermPlotter

        warnings.warn(INSTALL_HINT, MissingDotWarning, stacklevel=3)
        txt = path.with_suffix(".txt")
        txt.write_text(TermPlotter().render(graph), encoding="utf-8")
        return str(txt)
    path.write_bytes(data)
    return str(path)
