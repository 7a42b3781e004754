"""The graph model every view produces and every plotter (and the notebook widget) consumes.

Small plain objects, no TVM inside: a ``Graph`` of ``Node``s, ``Edge``s and ``Cluster``s that
turns into JSON with ``to_dict()``. Node ids are stable (``"main:lv1"``): the same value has the
same ``value`` id in the dataflow, tree and let views and in the texts, which is how the notebook
layer links a click in one view to the others.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..lang.typed import BindingInfo

# Node kinds. "op" is an operator call, "call" a call of another function, "fused" a call of a
# fused kernel, "collapsed" a namespace (a cluster of any kind) folded into one node (its
# ``folded`` says which and how big), "elided" stands for nodes cut away.
# Layout intents. "dataflow": a DAG, a shared value is one node with fan-out; "tree": every
# occurrence is its own node; "sequence": each scope lists its bindings in order (``seq`` edges
# are the spine, data edges only annotate).
LAYOUTS = ("dataflow", "tree", "sequence")

NODE_KINDS = ("param", "const", "op", "call", "fused", "tuple", "getitem", "if", "closure",
              "alias", "match_cast", "return", "collapsed", "elided")


@dataclass
class Node:
    id: str                          # unique in its graph; also the DOT/SVG element id
    kind: str                        # one of NODE_KINDS
    op: str                          # the headline: operator, callee, parameter or constant text
    name: Optional[str] = None       # the binding (or parameter) name in the IR
    value: Optional[str] = None      # the value's identity across views (see relax_info.value_ids)
    type: str = ""                   # output type, e.g. "Tensor[(n, 10), float32]"
    attrs: dict = field(default_factory=dict)
    source: Optional[BindingInfo] = None   # where the DSL wrote it
    group: Optional[str] = None      # id of the innermost cluster that holds the node
    recomputed: bool = False         # tree view: a shared value evaluated again
    is_output: bool = False          # the value a function returns
    status: Optional[str] = None     # pipeline diffs: "added", "removed", "merged"
    text: str = ""                   # one-line IR text of the binding (``lv = log(x)``)
    tooltip: str = ""                # an overlay's details, shown on hover (colours: viz.paint)
    folded: Optional["Folded"] = None   # kind "collapsed": the namespace it stands for

    def __post_init__(self):
        # The plotters and the viewer style nodes by kind: a kind they do not know would be
        # drawn as nothing in particular, so a parser that invents one fails here instead.
        if self.kind not in NODE_KINDS:
            raise ValueError(f"node {self.id!r}: kind {self.kind!r} is not one of {NODE_KINDS}")

    @property
    def line(self) -> Optional[int]:
        return self.source.span.lineno if self.source else None

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "op": self.op, "name": self.name,
                "value": self.value, "type": self.type, "attrs": dict(self.attrs),
                "source": self.source.to_dict() if self.source else None, "line": self.line,
                "group": self.group, "recomputed": self.recomputed, "is_output": self.is_output,
                "status": self.status, "text": self.text, "tooltip": self.tooltip,
                "folded": self.folded.to_dict() if self.folded else None}


@dataclass(frozen=True)
class Folded:
    """What a folded node stands for: one namespace (a function, a fused group, a PyTorch
    module: the same thing to every fold) and how much it holds. Typed, so no reader decodes
    numbers from strings."""

    namespace: str                   # the cluster id folded
    kind: str                        # that cluster's kind ("fused", "function", "module", ...)
    label: str
    nodes: int                       # nodes inside
    ops: int                         # computing nodes inside (COMPUTING)
    path: Optional[str] = None       # a module's path ("layer1.0")
    cls: str = ""                    # a module's class ("BasicBlock")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Edge:
    src: str
    dst: str
    index: int = 0                   # argument position at the destination
    kind: str = "data"               # "data", "call" (to a callee), "seq" (let order), "branch"
    label: str = ""

    def to_dict(self) -> dict:
        return {"src": self.src, "dst": self.dst, "index": self.index, "kind": self.kind,
                "label": self.label}


@dataclass
class Cluster:
    id: str
    label: str
    kind: str                        # "function", "fused", "then", "else", "closure", "module"
    parent: Optional[str] = None
    # A "module" cluster (an imported PyTorch model, see mlclab.viz.modules): the module's
    # path ("layer1.0") and its line of the module tree ("BasicBlock()"); None otherwise.
    path: Optional[str] = None
    detail: str = ""

    def to_dict(self) -> dict:
        out = {"id": self.id, "label": self.label, "kind": self.kind, "parent": self.parent}
        if self.path is not None:
            out.update(path=self.path, detail=self.detail)
        return out


@dataclass
class Graph:
    name: str
    view: str = "dataflow"           # the registered view that made it (mlclab.viz.registry)
    nodes: dict = field(default_factory=dict)        # id -> Node, in insertion order
    edges: list = field(default_factory=list)
    clusters: dict = field(default_factory=dict)     # id -> Cluster, in insertion order
    outputs: list = field(default_factory=list)      # node ids of function results
    # How plotters lay it out, so they never ask which view made it: one of LAYOUTS.
    layout: str = "dataflow"
    # An imported PyTorch model's module tree: path -> its line (frontend.pytorch's
    # ModuleLine), read from the function's source by the parser; empty for the DSL.
    modules: dict = field(default_factory=dict)
    # A folded graph: folded node id -> the ids of the nodes (of the graph it was folded from)
    # it stands for, so overlays keyed by those ids can be summed up on it.
    members: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ building
    def add_node(self, node: Node) -> Node:
        if node.id in self.nodes:
            raise ValueError(f"duplicate node id {node.id!r}")
        self.nodes[node.id] = node
        return node

    def add_edge(self, src: str, dst: str, index: int = 0, kind: str = "data", label: str = ""):
        edge = Edge(src, dst, index, kind, label)
        self.edges.append(edge)
        return edge

    def add_cluster(self, cluster: Cluster) -> Cluster:
        self.clusters.setdefault(cluster.id, cluster)
        return self.clusters[cluster.id]

    # ------------------------------------------------------------------ reading
    def inputs(self, node_id: str, kind: str = "data") -> list[str]:
        """Ids of the nodes feeding ``node_id``, in argument order."""
        found = [e for e in self.edges if e.dst == node_id and e.kind == kind]
        return [e.src for e in sorted(found, key=lambda e: e.index)]

    def users(self, node_id: str, kind: str = "data") -> list[str]:
        return [e.dst for e in self.edges if e.src == node_id and e.kind == kind]

    def find(self, **match) -> list[Node]:
        """Nodes whose fields equal the given values, e.g. ``g.find(op="log")``."""
        return [n for n in self.nodes.values()
                if all(getattr(n, k) == v for k, v in match.items())]

    def cluster_path(self, cluster_id: Optional[str]) -> list[str]:
        """The cluster and its ancestors, outermost first."""
        path = []
        while cluster_id is not None:
            path.append(cluster_id)
            cluster_id = self.clusters[cluster_id].parent
        return path[::-1]

    def to_dict(self) -> dict:
        return {"name": self.name, "view": self.view, "layout": self.layout,
                "nodes": [n.to_dict() for n in self.nodes.values()],
                "edges": [e.to_dict() for e in self.edges],
                "clusters": [c.to_dict() for c in self.clusters.values()],
                "outputs": list(self.outputs)}

    def __len__(self) -> int:
        return len(self.nodes)

    def copy(self) -> "Graph":
        out = self._empty(outputs=list(self.outputs))
        out.nodes = {nid: _copy(n) for nid, n in self.nodes.items()}
        out.edges = [Edge(**e.__dict__) for e in self.edges]
        out.clusters = {cid: Cluster(**c.__dict__) for cid, c in self.clusters.items()}
        out.members = {k: list(v) for k, v in self.members.items()}
        return out

    def _empty(self, outputs: list) -> "Graph":
        """A graph like this one (name, view, layout, module tree) without nodes."""
        return Graph(self.name, self.view, outputs=outputs, layout=self.layout,
                     modules=self.modules)

    # ------------------------------------------------------------------ big graphs
    def collapse(self, kinds: Iterable[str] = ("fused",), keep: Iterable[str] = ()) -> "Graph":
        """A copy where every cluster of one of ``kinds`` (outermost first) is folded into one
        node, except the clusters ``keep`` names (the function being shown); see :meth:`fold`."""
        kinds, keep = set(kinds), set(keep)
        return self.fold(cid for cid, c in self.clusters.items()
                         if c.kind in kinds and cid not in keep)

    def fold(self, namespaces: Iterable[str]) -> "Graph":
        """A copy where each cluster id in ``namespaces`` is folded into one node (a folded
        cluster inside another folded one goes with the outer one). The one mechanism for
        folding namespaces: overviews, ``collapse=``, module levels and the viewer's clicks all
        come here.

        Edges into and out of a folded cluster are re-attached to its node; edges inside it
        disappear. The copy's ``members`` says which of this graph's nodes each folded node
        stands for (composed with this graph's own ``members``).
        """
        wanted = set(namespaces) & set(self.clusters)
        fold_of: dict[str, str] = {}           # cluster id -> id of the outermost folded cluster
        for cid in self.clusters:
            outer = next((a for a in self.cluster_path(cid) if a in wanted), None)
            if outer is not None:
                fold_of[cid] = outer
        out = self._empty(outputs=[])
        node_map: dict[str, str] = {}
        for cid, c in self.clusters.items():
            if cid not in fold_of:
                out.add_cluster(Cluster(**c.__dict__))
        inside: dict = defaultdict(list)
        for node in self.nodes.values():
            folded = fold_of.get(node.group) if node.group else None
            if folded is None:
                out.add_node(_copy(node))
                node_map[node.id] = node.id
                if node.id in self.members:
                    out.members[node.id] = list(self.members[node.id])
            else:
                node_map[node.id] = f"collapsed:{folded}"
                inside[folded].append(node)
        for folded, members in inside.items():
            c = self.clusters[folded]
            nid = f"collapsed:{folded}"
            out.add_node(_folded_node(nid, c, members, self.modules.get(c.path)))
            out.members[nid] = [m for n in members for m in self.members.get(n.id, [n.id])]
        seen = set()
        for e in self.edges:
            src, dst = node_map[e.src], node_map[e.dst]
            key = (src, dst, e.kind)
            if src == dst or key in seen:
                continue
            seen.add(key)
            out.add_edge(src, dst, e.index, e.kind, e.label)
        out.outputs = list(dict.fromkeys(node_map[o] for o in self.outputs))
        for o in out.outputs:
            out.nodes[o].is_output = True
        return out

    def fold_constants(self) -> "Graph":
        """A copy without its constant nodes (weights, a batch norm's statistics, a mask's
        fill value), each operator that read some saying how many ("folded=4 constants"), so
        the picture says what it left out. A constant is folded only when every reader
        computes something; its readers' ``members`` take it in, so overlays keyed by its id
        still sum up on them."""
        readers = defaultdict(list)
        for e in self.edges:
            readers[e.src].append(e.dst)
        gone = {nid for nid, n in self.nodes.items()
                if n.kind == "const" and nid not in self.outputs and readers[nid]
                and all(self.nodes[r].kind in COMPUTING for r in readers[nid])}
        if not gone:
            return self
        out = self.copy()
        folded = defaultdict(list)                   # reader -> the constants it read
        for e in self.edges:
            if e.src in gone and e.src not in folded[e.dst]:
                folded[e.dst].append(e.src)
        for nid in gone:
            del out.nodes[nid]
            out.members.pop(nid, None)
        out.edges = [e for e in out.edges if e.src not in gone]
        for reader, consts in folded.items():
            n = len(consts)
            out.nodes[reader].attrs["folded"] = f"{n} constant{'' if n == 1 else 's'}"
            out.members[reader] = (self.members.get(reader, [reader])
                                   + [m for c in consts for m in self.members.get(c, [c])])
        used = {c for n in out.nodes.values() for c in out.cluster_path(n.group)}
        out.clusters = {cid: c for cid, c in out.clusters.items() if cid in used}
        return out

    def _predecessors(self) -> dict:
        preds = defaultdict(list)
        for e in self.edges:
            preds[e.dst].append(e.src)
        return preds

    def depths(self) -> dict:
        """Node id -> the fewest edges from it forward to an output (outputs are 0); nodes
        that reach no output are left out."""
        preds = self._predecessors()
        dist = {o: 0 for o in self.outputs}
        queue = deque(self.outputs)
        while queue:
            nid = queue.popleft()
            for p in preds[nid]:
                if p not in dist:
                    dist[p] = dist[nid] + 1
                    queue.append(p)
        return dist

    def limit_depth(self, depth: int) -> "Graph":
        """A copy keeping the nodes at most ``depth`` data edges away from an output.

        The cut is marked: each kept node that lost inputs gets one ``elided`` node saying how
        many nodes are hidden behind it, so a student sees that the graph goes on.
        """
        if depth < 0:
            raise ValueError("depth must be >= 0")
        preds, dist = self._predecessors(), self.depths()
        keep = {nid for nid, d in dist.items() if d <= depth}
        if not self.outputs:             # nothing to measure from: keep everything
            keep = set(self.nodes)
        out = self._empty(outputs=[o for o in self.outputs if o in keep])
        for c in self.clusters.values():
            out.add_cluster(Cluster(**c.__dict__))
        for nid, node in self.nodes.items():
            if nid in keep:
                out.add_node(_copy(node))
                if nid in self.members:
                    out.members[nid] = list(self.members[nid])
        for e in self.edges:
            if e.src in keep and e.dst in keep:
                out.add_edge(e.src, e.dst, e.index, e.kind, e.label)
        for nid in list(out.nodes):
            cut = [p for p in preds[nid] if p not in keep]
            if cut:
                # Count what hides behind this node: the cut-away nodes it (transitively) reads.
                behind, todo = set(cut), list(cut)
                while todo:
                    for p in preds[todo.pop()]:
                        if p not in keep and p not in behind:
                            behind.add(p)
                            todo.append(p)
                eid = f"elided:{nid}"
                out.add_node(Node(eid, "elided", "…", value=None, group=out.nodes[nid].group,
                                  attrs={"hidden": str(len(behind))}))
                out.add_edge(eid, nid, 0, "data")
        # Clusters left empty by the cut would draw as empty boxes.
        used = {c for n in out.nodes.values() for c in out.cluster_path(n.group)}
        out.clusters = {cid: c for cid, c in out.clusters.items() if cid in used}
        return out


def _copy(node: Node) -> Node:
    return Node(**{**node.__dict__, "attrs": dict(node.attrs)})


# Nodes that compute something; the rest (parameters, weights, tuple plumbing) only feed them.
COMPUTING = ("op", "call", "fused", "if", "closure", "collapsed")


def _folded_node(nid: str, c: Cluster, members: list[Node], line=None) -> Node:
    """The node a folded cluster becomes: named by its label (a module by its path), pointing
    at its ``line`` of the module tree (a ``frontend.pytorch.ModuleLine``, if known)."""
    ops = sum(1 for n in members if n.kind in COMPUTING)
    folded = Folded(c.id, c.kind, c.label, len(members), ops, c.path,
                    c.detail.partition("(")[0].strip())
    headline = c.path if c.path is not None else c.label
    source = None if line is None else BindingInfo(c.path, None, line.span, line.text,
                                                   "binding", module=c.path)
    node = Node(nid, "collapsed", headline, name=None if c.path is not None else c.label,
                value=nid, type=_last_type(members), group=c.parent, source=source,
                folded=folded)
    if c.path is not None:
        node.text = f"{c.path}: {ops} operator{'' if ops == 1 else 's'}"
    return node


def _last_type(nodes: list[Node]) -> str:
    outs = [n for n in nodes if n.kind not in ("param", "const")]
    return outs[-1].type if outs else ""
