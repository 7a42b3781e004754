"""One layout for many drawings of the same values: nodes keep their place from pass to pass.

The pass scrubber (``mlclab.notebook.scrubber``) shows the program after each pass of a build.
Laid out one by one, every pass would move every node; a student could not follow a value. So
the drawings are laid out *together*, as iongraph keeps its blocks in place:

1. ``union``: one graph of every node of every drawing, matched by value id (a node holding
   no value by its id), every edge and every namespace of any of them. A node sits in the
   fused group any pass put it in, so each group is one compact box in every pass.
2. ``lay_out``: Graphviz's ``dot`` lays that union out once (``-Tjson0``: positions, sizes,
   edge splines, namespace boxes).
3. ``StableLayout.svg(drawing)``: each drawing is written to DOT as usual (``DotPlotter``) with
   every node pinned at its union position and size, every edge on its union spline and every
   namespace box where the union put it, and drawn by ``neato -n2`` (no layout: it only draws).
   Each drawing is cropped to what it holds, so the distances between its nodes are the
   union's: the front end lines two drawings up on one node they share (``static/scrubber.js``)
   and every other shared node lands on its pixels too.

What is only in some passes keeps its place in all of them: a value a pass adds appears in its
own spot, and what a pass removes leaves its spot empty (the scrubber draws it as a ghost in the
pass that removed it). Stability over compactness, as iongraph chooses.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Iterable, Optional

from .dot import DotPlotter, _attr_list, dot_string, edge_id, run_dot
from .model import Cluster, Graph

# Graphviz reads these after ``-K``/``-n``: neato in no-layout mode, positions in points.
PINNED = ("-Kneato", "-n2")


def node_keys(graph: Graph) -> dict:
    """Node id -> the key that matches it across drawings: its value id, else its id (a value
    drawn twice in one drawing keys its second node by id)."""
    out, seen = {}, set()
    for nid, n in graph.nodes.items():
        key = f"v:{n.value}" if n.value and f"v:{n.value}" not in seen else f"n:{nid}"
        seen.add(key)
        out[nid] = key
    return out


def _edge_key(keys: dict, e) -> tuple:
    return keys[e.src], keys[e.dst], e.index, e.kind


def union(graphs: Iterable[Graph], plotter: Optional[DotPlotter] = None) -> Graph:
    """One graph holding every node (by key), edge and namespace of ``graphs``. A node is drawn
    as its widest card (so its box fits it in every drawing) inside the fused group any drawing
    puts it in, else the namespace its last drawing gives it."""
    plotter = plotter or DotPlotter()
    graphs = list(graphs)
    out = Graph(graphs[0].name if graphs else "union")
    widest: dict = {}
    group: dict = {}
    for g in graphs:
        for cid, c in g.clusters.items():
            if cid not in out.clusters:
                out.clusters[cid] = Cluster(c.id, c.label, c.kind, c.parent, c.path, c.detail)
        for nid, key in node_keys(g).items():
            n = g.nodes[nid]
            size = len(re.sub(r"<[^>]*>", "", plotter.label(n)))
            if key not in widest or size > widest[key][0]:
                widest[key] = (size, n)
            fused = n.group in g.clusters and g.clusters[n.group].kind == "fused"
            if fused or group.get(key, (False, None))[0] is False:
                group[key] = (fused, n.group)
    for c in out.clusters.values():          # a parent only some drawings have: none
        if c.parent not in out.clusters:
            c.parent = None
    for key, (_, n) in widest.items():
        g_id = group[key][1]
        out.add_node(replace(n, id=key, group=g_id if g_id in out.clusters else None,
                             attrs=dict(n.attrs)))
    seen = set()
    for g in graphs:
        keys = node_keys(g)
        for e in g.edges:
            k = _edge_key(keys, e)
            if k not in seen:
                seen.add(k)
                out.add_edge(k[0], k[1], e.index, e.kind, e.label)
    return out


@dataclass
class StableLayout:
    """Where the union put everything, in points: ``nodes`` (key -> pos, width, height),
    ``edges`` (edge key -> pos, whether it starts at a copy), ``copies`` (edge key -> the copy
    node drawn at that reader), ``clusters`` (namespace id -> bb), the frame ``bb``."""

    nodes: dict
    edges: dict
    copies: dict
    clusters: dict
    bb: tuple
    frame: str                      # names this layout: drawings with the same frame align

    def svg(self, drawing: Graph, plotter: Optional[DotPlotter] = None,
            timeout: Optional[float] = None) -> str:
        """``drawing`` (one of the laid-out graphs, or a subset) drawn at the union's places."""
        plotter = plotter or DotPlotter()
        dot = plotter.digraph(drawing)
        keys = node_keys(drawing)
        copies = plotter.copies(drawing)
        pins: dict = {}
        for nid, key in keys.items():
            at = self.nodes.get(key)
            if at is None:
                raise ValueError(f"node {nid!r} was not laid out with the passes it is drawn with")
            pins[nid] = {**at, "fixedsize": "shape"}
        for k, e in enumerate(drawing.edges):
            ek = _edge_key(keys, e)
            spline = self.edges.get(ek)
            if spline is not None and spline["copy"] == (k in copies):
                pins[edge_id(k)] = {"pos": spline["pos"]}
            if k in copies:
                pins[copies[k]] = self.copies.get(ek) or _beside(self.nodes[keys[e.dst]])
        for cid, bb in self._boxes(drawing, keys).items():
            pins[f"cluster:{cid}"] = {"bb": bb}
        quoted = {_attr_list({"id": dot_string(x)})[1:-1]: attrs for x, attrs in pins.items()}
        dot.body[:] = [_pinned(line, quoted) for line in dot.body]
        from .dot import LAYOUT_TIMEOUT

        out = run_dot(dot.source, "svg", LAYOUT_TIMEOUT if timeout is None else timeout, PINNED)
        return out.decode("utf-8")


    def _boxes(self, drawing: Graph, keys: dict) -> dict:
        """Namespace id -> its box around what this drawing puts in it (the union's box would
        hold every pass's nodes): its nodes' pinned boxes, a margin, room for its label."""
        boxes: dict = {}
        for nid, n in drawing.nodes.items():
            x, y = (float(v) for v in self.nodes[keys[nid]]["pos"].rstrip("!").split(","))
            w = float(self.nodes[keys[nid]]["width"]) * 36
            h = float(self.nodes[keys[nid]]["height"]) * 36
            path = drawing.cluster_path(n.group) if n.group in drawing.clusters else []
            for depth, cid in enumerate(reversed(path)):
                pad = _PAD * (depth + 1)
                b = boxes.setdefault(cid, [x, y, x, y])
                b[0], b[1] = min(b[0], x - w - pad), min(b[1], y - h - pad)
                b[2], b[3] = max(b[2], x + w + pad), max(b[3], y + h + pad + _LABEL * (depth + 1))
        return {cid: ",".join(f"{v:g}" for v in b) for cid, b in boxes.items()}


# Points around a namespace's nodes, per level of nesting, and above them for its label.
_PAD, _LABEL = 8, 14

_ID = re.compile(r'\bid="(?:[^"\\]|\\.)*"')


def _pinned(line: str, pins: dict) -> str:
    """A DOT statement with the pinned attributes of the element its ``id`` names."""
    m = _ID.search(line)
    attrs = pins.get(m.group()) if m else None
    if not attrs:
        return line
    at = line.index("[")
    return line[:at] + _attr_list(attrs)[:-1] + " " + line[at + 1:]


def _beside(reader: dict) -> dict:
    """A copy the union did not make (another reader came first there): just above its reader."""
    x, y = (float(v) for v in reader["pos"].rstrip("!").split(","))
    up = y + float(reader["height"]) * 36 + 14
    return {"pos": f"{x:g},{up:g}!", "width": "0.6", "height": "0.2"}


def new_run(keys: set, seen: set, keep: float = 0.5) -> bool:
    """Whether a drawing with node ``keys`` starts a new run after the run so far, holding
    ``seen``: less than ``keep`` of its nodes were in the run (a pass that replaces most of the
    program, as lowering to the VM's builtins does; one layout for both would be twice as wide,
    each half mostly empty). Anything else stays in the run, where every node it shares keeps
    its place: a pass that removes nodes (even most of them) leaves their spots empty, its
    ghosts drawn there, rather than move what is left (stability over compactness, as iongraph
    chooses)."""
    return not seen or len(keys & seen) < keep * len(keys)


def phases(graphs: list, keep: float = 0.5) -> list:
    """The drawings split into runs that share one layout (:func:`new_run`): lists of indices."""
    runs: list = []
    seen: set = set()
    for i, g in enumerate(graphs):
        keys = set(node_keys(g).values())
        if new_run(keys, seen, keep):
            runs.append([])
            seen = set()
        runs[-1].append(i)
        seen |= keys
    return runs


def lay_out(graphs: Iterable[Graph], timeout: Optional[float] = None) -> StableLayout:
    """Lay the union of ``graphs`` out once with ``dot`` (see the module docstring)."""
    from .dot import LAYOUT_TIMEOUT

    plotter = DotPlotter()
    whole = union(graphs, plotter)
    dot = plotter.digraph(whole)
    data = json.loads(run_dot(dot.source, "json0",
                              LAYOUT_TIMEOUT if timeout is None else timeout))
    copy_of = {svg_id: k for k, svg_id in plotter.copies(whole).items()}
    keys = {nid: nid for nid in whole.nodes}
    edge_keys = [_edge_key(keys, e) for e in whole.edges]
    nodes, copies, clusters = {}, {}, {}
    for obj in data.get("objects", []):
        oid = obj.get("id", "")
        if "bb" in obj and oid.startswith("cluster:"):
            clusters[oid[len("cluster:"):]] = obj["bb"]
        elif "pos" in obj:
            at = {"pos": obj["pos"] + "!", "width": obj["width"], "height": obj["height"]}
            if oid in whole.nodes:
                nodes[oid] = at
            elif oid in copy_of:
                copies[edge_keys[copy_of[oid]]] = at
    edges = {}
    copied = set(copy_of.values())
    for e in data.get("edges", []):
        eid = e.get("id", "")
        if eid.startswith("edge:") and "pos" in e:
            k = int(eid[len("edge:"):])
            edges[edge_keys[k]] = {"pos": e["pos"], "copy": k in copied}
    bb = tuple(float(v) for v in data["bb"].split(","))
    frame = hashlib.sha1(dot.source.encode("utf-8")).hexdigest()[:12]
    return StableLayout(nodes, edges, copies, clusters, bb, frame)
