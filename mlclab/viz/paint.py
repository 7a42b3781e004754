"""Overlay paint for pictures shown without JavaScript, from the one style table.

Each overlay registers its look once (``viz.overlays.Style``). A display with JavaScript gets
the table in its view model (``styles``) and ``notebook/static/paint.js`` paints the drawing;
a picture without it (``fn.graph()``'s SVG, a saved ``.svg``, the static form of a viewer or a
comparison) is painted here by :func:`paint_svg`, which writes exactly what ``paint.js``
writes: the class ``mlclab-<value>`` on the node's group, ``stroke``, ``stroke-width``,
``stroke-dasharray`` and ``fill`` on its shapes. Both resolve a node's paint the same way
(:func:`node_paints`; ``paint.js`` ``nodePaints``): layers in the table's order, a later
layer's look winning field by field. Only a format Graphviz writes and nothing edits after
(``.png``, ``.pdf``) gets the same paints in its DOT instead (:func:`dot_attrs`).
``tests/test_paint.py`` and ``tests/browser/test_paint_browser.py`` draw every look each way
and compare the SVG attributes with the table.

What a layer changes in a node's *label* (a ``badge``: "layer3 · 41 % of time") is not paint:
it changes the node's size, so it is part of the layout (:func:`with_badges`).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Mapping, Optional

from .model import Graph
from .overlays import styles

# Graphviz's dash for ``style=dashed`` as it writes it into SVG: paint.js draws the same.
DASH = "5,2"


def node_paints(layers: Mapping[str, Mapping[str, dict]],
                table: Optional[Mapping[str, dict]] = None) -> dict:
    """Node id -> ``{"classes": [...], "stroke", "width", "dashed", "fill"}`` (only what some
    layer sets) for the overlay ``layers`` (name -> {node id: entry}) by the style ``table``
    (``overlays.styles()`` by default)."""
    table = styles() if table is None else table
    out: dict = {}
    for name, style in table.items():
        for nid, entry in (layers.get(name) or {}).items():
            paint = None
            key = style.get("key")
            if key and entry.get(key) is not None:
                value = str(entry[key])
                look = style["looks"].get(value)
                if look is not None:
                    paint = out.setdefault(nid, {"classes": []})
                    paint["classes"].append(f"mlclab-{value}")
                    paint.update({k: v for k, v in look.items() if k != "legend"})
            fill_key = style.get("fill_key")
            if fill_key and entry.get(fill_key):
                paint = paint or out.setdefault(nid, {"classes": []})
                paint["fill"] = entry[fill_key]
    return out


_SVG = "{http://www.w3.org/2000/svg}"
_SHAPES = ("polygon", "ellipse", "path", "rect")
ET.register_namespace("", _SVG[1:-1])
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")


def paint_svg(svg: str, layers: Mapping[str, Mapping[str, dict]],
              table: Optional[Mapping[str, dict]] = None) -> str:
    """``svg`` (a Graphviz drawing whose node groups carry the node ids) with the overlay
    ``layers`` painted in by the style ``table``, as ``static/paint.js`` paints it."""
    paints = node_paints(layers, table)
    if not svg or not paints:
        return svg
    root = ET.fromstring(svg)
    for g in root.iter(f"{_SVG}g"):
        paint = paints.get(g.get("id", ""))
        if paint is None:
            continue
        classes = (g.get("class") or "").split()
        g.set("class", " ".join(classes + [c for c in paint["classes"] if c not in classes]))
        for shape in g.iter():
            if shape.tag[len(_SVG):] not in _SHAPES:
                continue
            if paint.get("stroke"):
                shape.set("stroke", paint["stroke"])
            if paint.get("width"):
                shape.set("stroke-width", f"{paint['width']:g}")
            if paint.get("dashed"):
                shape.set("stroke-dasharray", DASH)
            # Graphviz fills only the inner periphery: an outer ring stays unfilled.
            if paint.get("fill") and shape.get("fill") not in (None, "none"):
                shape.set("fill", paint["fill"])
    return ET.tostring(root, encoding="unicode")


def dot_attrs(attrs: Mapping[str, str], paint: Optional[Mapping]) -> dict:
    """A node's Graphviz attributes ``attrs`` with ``paint`` (one :func:`node_paints` value)
    drawn into them (``color``, ``penwidth``, ``fillcolor`` (filled), dashed, ``class``): for
    the formats :func:`paint_svg` cannot edit (``GraphView.render`` to ``.png``/``.pdf``)."""
    out = dict(attrs)
    if not paint:
        return out
    style = [s for s in out.get("style", "").split(",") if s]
    if paint.get("stroke"):
        out["color"] = paint["stroke"]
    if paint.get("width"):
        out["penwidth"] = f"{paint['width']:g}"
    if paint.get("fill"):
        out["fillcolor"] = paint["fill"]
        style += [] if "filled" in style else ["filled"]
    if paint.get("dashed"):
        style = [s for s in style if s not in ("solid", "dotted")]
        style += [] if "dashed" in style else ["dashed"]
    if style:
        out["style"] = ",".join(style)
    if paint.get("classes"):
        out["class"] = " ".join(paint["classes"])
    return out


def with_badges(graph: Graph, layers: Mapping[str, Mapping[str, dict]]) -> Graph:
    """``graph`` with what its layers *say* written into its nodes, a copy when there is any:
    each entry's ``badge`` after its node's name ("layer3 · 41 % of time": label text, so the
    layout makes room for it), and the ``text`` of a painted entry (a profile's time, GFLOP/s
    and roof share) as the node's hover text, which Graphviz writes into the SVG, so a picture
    without JavaScript still answers "how long did this take" on hover."""
    painted = {name for name, style in styles().items() if style.get("fill_key")}
    notes = [(nid, e) for name, layer in layers.items() for nid, e in layer.items()
             if nid in graph.nodes and ("badge" in e or (name in painted and e.get("text")))]
    if not notes:
        return graph
    out = graph.copy()
    for nid, e in notes:
        node = out.nodes[nid]
        if "badge" in e:
            node.op = f"{node.op} · {e['badge']}"
        if e.get("text") and not node.tooltip:
            node.tooltip = e["text"]
    return out
