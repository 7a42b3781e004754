"""The first look at a big graph: folded and cut to a size a student can read.

Past :data:`OVERVIEW_NODES` nodes a drawing stops being readable (and its SVG slows the page),
so the notebook first shows an overview and offers to draw everything (as Model Explorer opens
a big model with its layers collapsed). The overview is made in two steps, each only if the
graph is still too big: fold fused groups and called functions into one node each, then keep
the nodes nearest the results (``Graph.limit_depth``, which marks the cut with "… N more").
"""
from __future__ import annotations

from collections import defaultdict, deque
from typing import Optional

from .model import Graph

# Lesson graphs have under 100 nodes; an unrolled 64-step RNN has 325.
OVERVIEW_NODES = 300


def overview(graph: Graph, max_nodes: int = OVERVIEW_NODES) -> Graph:
    """``graph`` itself when it has at most ``max_nodes`` nodes, else a folded, cut copy."""
    if len(graph) <= max_nodes:
        return graph
    folded = graph.collapse(("fused", "function"), keep=[f"fn:{graph.name}"])
    if len(folded) <= max_nodes:
        return folded
    depth = _deepest_cut(folded, max_nodes)
    return folded if depth is None else folded.limit_depth(depth)


def _deepest_cut(graph: Graph, max_nodes: int) -> Optional[int]:
    """The largest depth (data edges back from a result) that keeps at most about
    ``max_nodes`` nodes, or None when the graph has no result to count from."""
    if not graph.outputs:
        return None
    preds = defaultdict(list)
    for e in graph.edges:
        preds[e.dst].append(e.src)
    dist = {o: 0 for o in graph.outputs}
    queue = deque(graph.outputs)
    while queue:
        nid = queue.popleft()
        for p in preds[nid]:
            if p not in dist:
                dist[p] = dist[nid] + 1
                queue.append(p)
    at_depth = defaultdict(int)
    for d in dist.values():
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
