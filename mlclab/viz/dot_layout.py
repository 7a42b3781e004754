"""Where Graphviz puts things: hints added to the DOT so that a graph reads in order and fits a
column. Functions are stacked one under the other (not side by side), and parameters that
share a rank keep their signature order. Both are invisible edges, so nothing is drawn twice.
"""
from __future__ import annotations

from .model import Graph


def stack_functions(graph: Graph, names: dict) -> list:
    """Invisible edges that draw the functions of a module one under the other, in order
    (main first), instead of side by side: lesson 3's three-function module was 1,577 px
    wide with its functions in a row."""
    frames = [cid for cid, c in graph.clusters.items()
              if c.parent is None and c.kind == "function"]
    if len(frames) < 2:
        return []
    ins, outs = set(), set()
    for e in graph.edges:
        if e.kind == "data":
            outs.add(e.src)
            ins.add(e.dst)
    members: dict = {cid: [] for cid in frames}
    for node in graph.nodes.values():
        top = graph.cluster_path(node.group)[:1]
        if top and top[0] in members:
            members[top[0]].append(node.id)
    stmts = []
    for upper, lower in zip(frames, frames[1:]):
        ends = [n for n in members[upper] if n not in outs]
        starts = [n for n in members[lower] if n not in ins]
        # Bounded: a few of the upper frame's ends pull every input of the lower frame (up
        # to 64: a frame of hundreds of weights needs no more to sit below).
        stmts.extend(f"\t{names[a]} -> {names[b]} [style=invis]\n"
                     for a in ends[:4] for b in starts[:64])
    return stmts

def order_params(graph: Graph, names: dict, nodes: dict) -> None:
    """Parameters that land on one rank are drawn left to right in signature order.

    Graphviz's crossing minimisation is free to swap inputs (it drew ``dense(x, w)`` as w,
    x, and block2's ``b`` left of ``x``); an invisible edge between neighbours on one rank,
    inside their frame, fixes the order without moving anything else. A parameter's rank
    is estimated as dot places it: one above its first reader, whose rank is its longest
    path from the inputs."""
    preds: dict = {}
    for e in graph.edges:
        if e.kind == "data":
            preds.setdefault(e.dst, []).append(e.src)
    rank = _longest_paths(graph, preds)

    readers: dict = {}
    for e in graph.edges:
        if e.kind == "data" and graph.nodes[e.src].kind == "param":
            readers.setdefault(e.src, []).append(e.dst)
    rows: dict = {}
    for node in graph.nodes.values():
        if node.kind == "param" and node.id in readers:
            row = min(rank.get(r, 1) for r in readers[node.id]) - 1
            rows.setdefault((node.group, row), []).append(node.id)
    for (group, _), row in rows.items():
        if len(row) > 1:
            chain = " -> ".join(names[p] for p in row)
            nodes.setdefault(group, []).append(f"{{rank=same; {chain} [style=invis]}}\n")


def _longest_paths(graph: Graph, preds: dict) -> dict:
    """Node id -> the most data edges on a path to it from a node with no inputs (a DAG's
    ranks as dot draws them); iterative, so a 10,000-node chain needs no deep recursion."""
    users: dict = {}
    waiting = {nid: len(preds.get(nid, ())) for nid in graph.nodes}
    for dst, srcs in preds.items():
        for src in srcs:
            users.setdefault(src, []).append(dst)
    rank = {nid: 0 for nid, n in waiting.items() if n == 0}
    todo = list(rank)
    while todo:
        nid = todo.pop()
        for dst in users.get(nid, ()):
            rank[dst] = max(rank.get(dst, 0), rank[nid] + 1)
            waiting[dst] -= 1
            if waiting[dst] == 0:
                todo.append(dst)
    return rank


def short_signature(label: str) -> str:
    """``"fn f(x: Tensor[(2, 3), float32], w: ...)"`` -> ``"fn f(x, w)"``: the parameter
    names of a function's label, its types left out (commas inside brackets are the types')."""
    head, paren, rest = label.partition("(")
    if not paren or not rest.endswith(")"):
        return label
    names, depth, start = [], 0, 0
    body = rest[:-1]
    for i, ch in enumerate(body + ","):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            names.append(body[start:i].partition(":")[0].strip())
            start = i + 1
    return f"{head}({', '.join(n for n in names if n)})"
