"""The first look at a big graph: folded and cut to a size a student can read.

Past :data:`OVERVIEW_NODES` nodes a drawing stops being readable (and its SVG slows the page),
so the notebook first shows an overview and offers to draw everything (as Model Explorer opens
a big model with its layers collapsed). The overview is made in steps, each only if the graph
is still too big: an imported model's modules folded by level (:func:`fold_modules`), fused
groups and called functions folded into one node each, then the nodes nearest the results
kept (``Graph.limit_depth``, which marks the cut with "… N more").
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Optional

from .model import COMPUTING, Graph
from .modules import MODULE, has_modules

# Lesson graphs have under 100 nodes; an unrolled 64-step RNN has 325.
OVERVIEW_NODES = 300

# An imported model past this many nodes is first shown with its modules folded (ResNet-18
# has 197 nodes; a small MLP's 20 stay drawn whole): its outermost modules, so ResNet-18 reads
# as stem, layer1..4 (one node each) and head (18 nodes; folding the blocks instead shows 29).
# A model whose outermost level shows fewer than MODULE_MIN_NODES nodes (one module wrapping
# the rest) opens a level more, while that shows at most MODULE_NODES.
MODULE_FOLD_NODES = 60
MODULE_NODES = 30
MODULE_MIN_NODES = 8


def overview(graph: Graph, max_nodes: int = OVERVIEW_NODES,
             open_modules: Optional[Iterable[str]] = None,
             folded: Iterable[str] = ()) -> Graph:
    """``graph`` itself when it has at most ``max_nodes`` nodes (and no modules to fold), else a
    folded, cut copy. An imported model's modules are folded past ``MODULE_FOLD_NODES`` nodes
    (the levels :func:`default_open` picks), or as ``open_modules`` says when given: the module
    paths drawn open, every other module folded. ``folded`` names further namespaces (cluster
    ids: a fused group, a called function) to fold, as the viewer's "collapse groups" asks."""
    chosen = set(folded) & set(graph.clusters)
    if has_modules(graph) and (open_modules is not None or len(graph) > MODULE_FOLD_NODES):
        chosen |= modules_to_fold(graph, open_modules)
    shown = graph.fold(chosen) if chosen else graph
    if len(shown) <= max_nodes:
        return shown
    more = {cid for cid, c in graph.clusters.items()
            if c.kind in ("fused", "function") and cid != f"fn:{graph.name}"}
    folded_more = graph.fold(chosen | more)
    if len(folded_more) <= max_nodes:
        return folded_more
    depth = _deepest_cut(folded_more, max_nodes)
    return folded_more if depth is None else folded_more.limit_depth(depth)


def foldable_modules(graph: Graph, min_ops: int = 2) -> dict:
    """Module cluster id -> its level (1: outermost) for the module clusters worth folding:
    those holding at least ``min_ops`` operators (by default a conv and its weight stay one
    open box; the last rung of the fold ladder folds those too)."""
    computing: dict = defaultdict(int)
    for node in graph.nodes.values():
        if node.kind in COMPUTING:
            for cid in graph.cluster_path(node.group):
                computing[cid] += 1
    out = {}
    for cid, c in graph.clusters.items():
        if c.kind == MODULE and computing[cid] >= min_ops:
            out[cid] = sum(1 for a in graph.cluster_path(cid) if graph.clusters[a].kind == MODULE)
    return out


def default_open(graph: Graph, max_nodes: int = MODULE_NODES,
                 min_nodes: int = MODULE_MIN_NODES) -> list[str]:
    """The module paths open at first look: the outermost level is folded, unless its drawing
    shows fewer than ``min_nodes`` nodes (a model wrapping one big module) and the next level
    down still fits in ``max_nodes``; then that level, and so on."""
    levels = foldable_modules(graph)
    if not levels:
        return []
    fold_at, deepest = 1, max(levels.values())
    while fold_at < deepest:
        if _folded_size(graph, {c for c, lv in levels.items() if lv >= fold_at}) >= min_nodes \
                or _folded_size(graph, {c for c, lv in levels.items() if lv > fold_at}) > max_nodes:
            break
        fold_at += 1
    return [graph.clusters[cid].path for cid, lv in levels.items() if lv < fold_at]


def modules_to_fold(graph: Graph, open_modules: Optional[Iterable[str]] = None,
                    max_nodes: int = MODULE_NODES, min_ops: int = 2) -> set:
    """The module cluster ids to fold: every foldable one (``min_ops``: see
    :func:`foldable_modules`) except those whose path is in ``open_modules`` (default:
    :func:`default_open`)."""
    opened = set(default_open(graph, max_nodes) if open_modules is None else open_modules)
    return {cid for cid in foldable_modules(graph, min_ops)
            if graph.clusters[cid].path not in opened}


def fold_modules(graph: Graph, open_modules: Optional[Iterable[str]] = None,
                 max_nodes: int = MODULE_NODES, min_ops: int = 2) -> Graph:
    """A copy with every foldable module cluster folded into one node, except those whose path
    is in ``open_modules`` (default: :func:`default_open`); a module inside a folded one is
    folded with it. ``min_ops=1`` folds one-operator modules too (a conv, a batch norm)."""
    return graph.fold(modules_to_fold(graph, open_modules, max_nodes, min_ops))


def _folded_size(graph: Graph, folded: set) -> int:
    """How many nodes ``graph`` has with the clusters ``folded`` folded (outermost wins)."""
    shown, boxes = 0, set()
    for node in graph.nodes.values():
        box = next((cid for cid in graph.cluster_path(node.group) if cid in folded), None)
        if box is None:
            shown += 1
        else:
            boxes.add(box)
    return shown + len(boxes)


def _deepest_cut(graph: Graph, max_nodes: int) -> Optional[int]:
    """The largest depth (data edges back from a result) that keeps at most about
    ``max_nodes`` nodes, or None when the graph has no result to count from."""
    if not graph.outputs:
        return None
    at_depth = defaultdict(int)
    for d in graph.depths().values():
        at_depth[d] += 1
    # Leave room for the "… N more" nodes that mark the cut (at most one per kept node, in
    # practice a few).
    budget, kept, depth = max_nodes * 0.9, 0, 0
    while depth in at_depth and kept + at_depth[depth] <= budget:
        kept += at_depth[depth]
        depth += 1
    return max(depth - 1, 0)


def describe(full: Graph, shown: Graph) -> Optional[dict]:
    """``{"shown", "total"}`` node counts when ``shown`` is an overview of ``full``, else None."""
    if shown is full:
        return None
    return {"shown": len(shown), "total": len(full)}
