"""An imported model's module hierarchy in its graphs: nodes grouped by PyTorch module path.

A PyTorch model imported with ``mlclab.from_torch`` knows, for every binding, the module that
computed it (``BindingInfo.module``: ``"layer1.0.conv1"``; ``""`` for the model's own
``forward``). ``group_modules`` puts the nodes of a parsed graph into nested clusters of kind
``"module"``, one per path prefix that holds something (``layer1`` ⊃ ``layer1.0`` ⊃
``layer1.0.conv1``), so a ResNet-18 reads as stem / layer1..4 / head (as Model Explorer and
torchview draw a model's layers) and ``mlclab.viz.overview.fold_modules`` can fold it by level.
(The module tree's lines are written and read back by the importer, ``frontend.pytorch``, which
owns their format.)
DSL graphs have no module paths and are left exactly as they are.

Which prefixes become clusters:

- a prefix needs at least two nodes (a ``relu`` module is one node, labelled with its path:
  a box around it would only add a frame);
- its nodes must be connected by data edges among themselves: a module called twice (ResNet's
  ``relu`` in each block) would otherwise be one box stretched across the block;
- a prefix holding exactly what its parent prefix holds adds nothing and is skipped.

Nodes that no module computed get one: a constant (a weight) goes with the module of its
readers (their common path), so folding ``layer1`` folds its weights too. A cluster the parser
made inside a function (a fused group of the fused view) moves as a whole into the module of
its members. The tree view is left alone: every occurrence there is its own node, so a module
has no one place.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Optional

from .model import Cluster, Graph

# The cluster kind this module adds (the plotter draws it, overview folds it).
MODULE = "module"


def class_of(line: str) -> str:
    """``"Conv2d"`` from a module tree line ``"Conv2d(3, 64, ...)"``."""
    return line.partition("(")[0].strip()


def module_of(node) -> Optional[str]:
    """The module path a node's binding came from, or None (DSL code, a constant)."""
    source = node.source
    return source.module if source is not None else None


def has_modules(graph: Graph) -> bool:
    """Whether ``graph`` has module clusters (an imported model's graph)."""
    return any(c.kind == MODULE for c in graph.clusters.values())


def _segments(path: str) -> tuple:
    return tuple(path.split(".")) if path else ()


def _common(paths) -> tuple:
    """The longest common prefix (in path segments) of ``paths``."""
    paths = list(paths)
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        for i in range(n):
            if p[i] != first[i]:
                n = i
                break
    return first[:n]


def group_modules(graph: Graph) -> Graph:
    """Put ``graph``'s nodes into nested module clusters, in place (see the module docstring);
    returns ``graph``. A graph without module paths, or a tree, is returned unchanged."""
    if graph.layout == "tree" or has_modules(graph):
        return graph
    own = {nid: _segments(m) for nid, n in graph.nodes.items()
           if (m := module_of(n)) is not None}
    if not any(own.values()):
        return graph
    units, scopes = _units(graph)
    path_of = _unit_paths(graph, units, own)
    for scope, members in _by_scope(units, scopes, path_of).items():
        _cluster_scope(graph, scope, members, path_of)
    return graph


def _units(graph: Graph) -> tuple[dict, dict]:
    """Node id -> what moves into a module cluster: the node itself (``("node", id)``), or
    the outermost cluster it sits in below its function (``("cluster", id)``); and node id ->
    its scope (the outermost cluster, its function)."""
    units, scopes = {}, {}
    for nid, node in graph.nodes.items():
        path = graph.cluster_path(node.group)
        units[nid] = ("cluster", path[1]) if len(path) > 1 else ("node", nid)
        scopes[nid] = path[0] if path else None
    return units, scopes


def _unit_paths(graph: Graph, units: dict, own: dict) -> dict:
    """Unit -> its module path (segments); units with no module are left out."""
    of_cluster = defaultdict(list)
    for nid, unit in units.items():
        if unit[0] == "cluster" and nid in own:
            of_cluster[unit].append(own[nid])
    path_of = {unit: _common(paths) for unit, paths in of_cluster.items()}
    for nid, unit in units.items():
        if unit[0] == "node" and nid in own:
            path_of[unit] = own[nid]
    # A constant (a weight) belongs where its readers are; so does a value a pass made
    # (FuseTransposeMatmul's NT_matmul has no module of its own), or modules it sat in break up.
    readers = defaultdict(list)
    for e in graph.edges:
        if e.kind == "data":
            readers[e.src].append(units[e.dst])
    for nid, node in graph.nodes.items():
        unit = units[nid]
        if unit not in path_of and unit[0] == "node" and (node.kind == "const" or nid not in own):
            paths = [path_of[r] for r in readers[nid] if r in path_of]
            if paths and len(paths) == len(readers[nid]):
                path_of[unit] = _common(paths)
    # Destination-passing style (after CallTIRRewrite): ``_ = kernel(x, w, out)`` computes into
    # ``out``, its last argument, and nothing reads ``_``: the buffer carries the value's
    # identity (and module), so the call goes with it, or every module would fall apart.
    last_input = {}
    for e in graph.edges:
        if e.kind == "data" and e.index >= last_input.get(e.dst, (-1, None))[0]:
            last_input[e.dst] = (e.index, e.src)
    for nid in graph.nodes:
        unit = units[nid]
        if unit not in path_of and unit[0] == "node" and nid not in own and not readers[nid] \
                and nid in last_input and units[last_input[nid][1]] in path_of:
            path_of[unit] = path_of[units[last_input[nid][1]]]
    return path_of


def _by_scope(units: dict, scopes: dict, path_of: dict) -> dict:
    """Scope -> {unit: [node ids]} of the units with a module path, in node order."""
    out: dict = defaultdict(dict)
    for nid, unit in units.items():
        if path_of.get(unit):
            out[scopes[nid]].setdefault(unit, []).append(nid)
    return out


def _cluster_scope(graph: Graph, scope, members: dict, path_of: dict) -> None:
    # Prefix -> the node ids under it, in node order (so clusters come in reading order).
    under: dict = {}
    for unit, nids in members.items():
        path = path_of[unit]
        for k in range(1, len(path) + 1):
            under.setdefault(path[:k], []).extend(nids)
    adjacent = defaultdict(list)
    for e in graph.edges:
        if e.kind == "data":
            adjacent[e.src].append(e.dst)
            adjacent[e.dst].append(e.src)
    made: dict = {}                    # prefix -> cluster id
    for prefix in sorted(under, key=len):
        nids = under[prefix]
        parent = under.get(prefix[:-1])
        if len(nids) < 2 or (parent is not None and len(parent) == len(nids)) \
                or not _connected(nids, adjacent):
            continue
        outer = next((made[prefix[:k]] for k in range(len(prefix) - 1, 0, -1)
                      if prefix[:k] in made), None)
        made[prefix] = _add_cluster(graph, scope, prefix, outer)
    for unit in members:
        path = path_of[unit]
        inner = next((made[path[:k]] for k in range(len(path), 0, -1) if path[:k] in made), None)
        if inner is None:
            continue
        if unit[0] == "cluster":
            graph.clusters[unit[1]].parent = inner
        else:
            graph.nodes[unit[1]].group = inner


def _connected(nids: list, adjacent: dict) -> bool:
    """Whether data edges among ``nids`` connect them all."""
    inside = set(nids)
    seen, todo = {nids[0]}, [nids[0]]
    while todo:
        for other in adjacent[todo.pop()]:
            if other in inside and other not in seen:
                seen.add(other)
                todo.append(other)
    return len(seen) == len(inside)


def _add_cluster(graph: Graph, scope, prefix: tuple, outer: Optional[str]) -> str:
    path = ".".join(prefix)
    parent_path = graph.clusters[outer].path if outer else ""
    # Named relative to the enclosing module cluster: "0" inside "layer1", "layer1.0" when
    # "layer1" has no box of its own.
    name = path[len(parent_path) + 1:] if parent_path else path
    line = graph.modules.get(path)
    head = line.head if line is not None else ""
    cls = class_of(head)
    cid = f"{scope}/{MODULE}:{path}" if scope else f"{MODULE}:{path}"
    graph.add_cluster(Cluster(cid, f"{name} · {cls}" if cls else name, MODULE,
                              outer or scope, path=path, detail=head))
    return cid
