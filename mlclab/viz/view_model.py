"""The view model: the one contract between the IR and every display (schema in
docs/view-model.md, version :data:`VERSION`).

A view model is plain JSON made from a graph model (``mlclab.viz.model.Graph``), the texts its
nodes link to and the overlay layers laid over it:

- ``nodes``: node id -> the node (stable value id, kind, label, type, DSL source, ``namespace``
  it sits in, ``anchors``: text style -> the 1-based line that defines it, taken from each
  printer's own line map (``IRText.line_values``), ``folded``: what a folded node stands for);
- ``edges``: the edges as data (``edge:<index>`` is each one's SVG id);
- ``namespaces``: one hierarchy of every grouping (a DSL function, a fused group, a PyTorch
  module are all namespaces with a ``kind``), of the *whole* graph, each saying whether this
  drawing shows it ``folded``;
- ``overlays``: layer name -> node id -> entry (``mlclab.viz.overlays``);
- ``styles``: layer name -> its registered look (``overlays.styles()``), from which every
  display paints the drawing (``static/paint.js``);
- ``geometry``: the layout only, unpainted: the Graphviz SVG (every element found by the id
  the model gives it) and the copies of widely shared values drawn at their readers.

Every display reads this and nothing else: the widget (notebook/static), its static twin, the
saved HTML file. A pass scrubber is a list of view models over the same value ids.
"""
from __future__ import annotations

import json
from typing import Mapping, Optional

from .model import COMPUTING, Graph
from .namespaces import namespace_kind
from .overlays import layer_for, overlay_names, styles

SCHEMA = "mlclab.view-model"
VERSION = 1

NODE_KEYS = {"id": str, "kind": str, "label": str, "name": (str, type(None)),
             "value": (str, type(None)), "type": str, "attrs": dict, "namespace": (str, type(None)),
             "source": (dict, type(None)), "line": (int, type(None)), "anchors": dict,
             "is_output": bool, "recomputed": bool, "status": (str, type(None)), "text": str,
             "folded": (dict, type(None))}
NAMESPACE_KEYS = {"id": str, "kind": str, "label": str, "parent": (str, type(None)),
                  "path": (str, type(None)), "detail": str, "folded": bool, "collapse": bool,
                  "nodes": int, "ops": int}
EDGE_KEYS = {"src": str, "dst": str, "index": int, "kind": str, "label": str}


def node_record(node, anchors: Mapping[str, int]) -> dict:
    """One node as the view model holds it."""
    d = node.to_dict()
    return {"id": node.id, "kind": node.kind, "label": node.op or node.name or node.id,
            "name": node.name, "value": node.value, "type": node.type,
            "attrs": {str(k): str(v) for k, v in node.attrs.items()},
            "namespace": node.group, "source": d["source"], "line": node.line,
            "anchors": dict(anchors), "is_output": node.is_output,
            "recomputed": node.recomputed, "status": node.status, "text": node.text,
            "folded": d["folded"]}


def namespaces(full: Graph, shown: Graph) -> dict:
    """Every cluster of ``full`` as a namespace, with its size and whether ``shown`` folds it
    (a namespace inside a folded one is folded with it)."""
    size: dict = {cid: [0, 0] for cid in full.clusters}
    for node in full.nodes.values():
        for cid in full.cluster_path(node.group):
            size[cid][0] += 1
            size[cid][1] += node.kind in COMPUTING
    folded_ids = {n.folded.namespace for n in shown.nodes.values() if n.folded is not None}
    out = {}
    for cid, c in full.clusters.items():
        hidden = any(a in folded_ids for a in full.cluster_path(cid))
        out[cid] = {"id": cid, "kind": c.kind, "label": c.label, "parent": c.parent,
                    "path": c.path, "detail": c.detail, "folded": hidden,
                    "collapse": namespace_kind(c.kind).collapse,
                    "nodes": size[cid][0], "ops": size[cid][1]}
    return out


def search_entries(full: Graph) -> dict:
    """The ``search`` layer: what search matches in each node (operator, binding name, module
    path); a folded node matches what it holds (the layer's aggregate)."""
    out = {}
    for nid, n in full.nodes.items():
        module = n.source.module if n.source is not None else None
        words = [w for w in (n.op, n.name, module) if w]
        out[nid] = {"text": " ".join(words)}
    return out


def anchors_of(node, texts: Mapping) -> dict:
    """Text style -> the line of that text defining the node's value (``IRText.line_of``)."""
    out = {}
    for style, t in texts.items():
        line = t.line_of(node.id) if hasattr(t, "line_of") else None
        if line is not None:
            out[style] = line
    return out


def build(shown: Graph, full: Optional[Graph] = None, texts: Optional[Mapping] = None,
          overlays: Optional[Mapping[str, Mapping[str, dict]]] = None,
          svg: str = "", copies: Optional[Mapping[str, dict]] = None) -> dict:
    """The view model of ``shown`` (a drawing of ``full``, maybe folded or cut; ``full`` itself
    by default). ``texts``: style -> ``IRText`` the anchors point into. ``overlays``: layer
    name -> entries keyed by ``full``'s node ids (summed up on folded nodes). ``svg`` and
    ``copies`` are the drawing (``geometry``)."""
    full = shown if full is None else full
    texts = dict(texts or {})
    layers = {"search": search_entries(full), **(overlays or {})}
    unknown = [name for name in layers if name not in overlay_names()]
    if unknown:
        raise ValueError(f"overlay: unknown overlay {unknown[0]!r}; registered: "
                         f"{', '.join(overlay_names())}")
    vm = {"schema": SCHEMA, "version": VERSION, "name": shown.name, "view": shown.view,
          "layout": shown.layout,
          "nodes": {nid: node_record(n, anchors_of(n, texts)) for nid, n in shown.nodes.items()},
          "edges": [e.to_dict() for e in shown.edges],
          "namespaces": namespaces(full, shown),
          "outputs": list(shown.outputs),
          "texts": {style: str(t) for style, t in texts.items()},
          "overlays": {name: _with_reveal(full, layer_for(shown, name, entries))
                       for name, entries in layers.items()},
          "styles": styles(),
          "geometry": {"svg": svg, "copies": dict(copies or {})}}
    if shown is not full:
        vm["overview"] = {"shown": len(shown), "total": len(full)}
    return vm


def _with_reveal(full: Graph, layer: dict) -> dict:
    """A summed-up entry names its ``hottest`` member; add ``reveal``, the namespaces (outermost
    first) to open so that member shows (the viewer's "jump to hottest kernel")."""
    for entry in layer.values():
        hot = entry.get("hottest")
        if hot in full.nodes:
            entry["reveal"] = full.cluster_path(full.nodes[hot].group)
    return layer


# ---------------------------------------------------------------------- checking and JSON
def check(vm) -> dict:
    """``vm`` if it is a view model of this schema version, else a ValueError saying where."""
    if not isinstance(vm, Mapping) or vm.get("schema") != SCHEMA:
        raise ValueError(f"not a view model (schema {SCHEMA!r} expected)")
    if vm.get("version") != VERSION:
        raise ValueError(f"view model version {vm.get('version')!r}; this mlclab reads {VERSION}")
    for nid, n in vm["nodes"].items():
        _check_keys(f"node {nid!r}", n, NODE_KEYS)
        if n["id"] != nid:
            raise ValueError(f"node {nid!r}: its id says {n['id']!r}")
        if n["namespace"] is not None and n["namespace"] not in vm["namespaces"]:
            raise ValueError(f"node {nid!r}: unknown namespace {n['namespace']!r}")
    for i, e in enumerate(vm["edges"]):
        _check_keys(f"edge {i}", e, EDGE_KEYS)
        if e["src"] not in vm["nodes"] or e["dst"] not in vm["nodes"]:
            raise ValueError(f"edge {i}: {e['src']!r} -> {e['dst']!r} "
                             "names a node not in the model")
    for cid, c in vm["namespaces"].items():
        _check_keys(f"namespace {cid!r}", c, NAMESPACE_KEYS)
        if c["parent"] is not None and c["parent"] not in vm["namespaces"]:
            raise ValueError(f"namespace {cid!r}: unknown parent {c['parent']!r}")
    for name, layer in vm["overlays"].items():
        stray = [nid for nid in layer if nid not in vm["nodes"]]
        if stray:
            raise ValueError(f"overlay {name!r}: entry for {stray[0]!r}, not a node of the model")
    return vm


def _check_keys(where: str, record, keys: Mapping) -> None:
    if not isinstance(record, Mapping):
        raise ValueError(f"{where}: expected an object")
    for key, kind in keys.items():
        if key not in record:
            raise ValueError(f"{where}: missing {key!r}")
        if not isinstance(record[key], kind) or (kind is int and isinstance(record[key], bool)):
            raise ValueError(f"{where}: {key!r} has type {type(record[key]).__name__}")


def to_json(vm) -> str:
    return json.dumps(check(vm), ensure_ascii=False, sort_keys=True)


def from_json(text: str) -> dict:
    return check(json.loads(text))
