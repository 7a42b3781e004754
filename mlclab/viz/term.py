"""Terminal plotter: the graph model as an indented tree in the style of clang's ``-ast-dump``.

The graph's ``layout`` (not the view that made it) decides the form:

- ``dataflow``: one tree per function, from its result down through the inputs; a shared value
  is printed once and later uses point back to it (``^ %y``), which is exactly graph binding.
- ``tree``: the tree as is; repeated values say ``recomputed``.
- ``sequence``: each scope lists its bindings in order, ``if`` branches and closures nested
  under them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .model import Graph, Node
from .modules import MODULE

KIND_WORD = {"param": "Param", "const": "Const", "op": "Call", "call": "CallFunc",
             "fused": "CallFused", "tuple": "Tuple", "getitem": "TupleGetItem", "if": "If",
             "closure": "Function", "alias": "Alias", "match_cast": "MatchCast",
             "return": "Return", "collapsed": "Collapsed", "elided": "..."}


class TermPlotter:
    """Renders a ``Graph`` as text; ``render(graph, filename)`` also writes it to a file."""

    def __init__(self, show_source: bool = True, show_attrs: bool = True):
        self.show_source = show_source
        self.show_attrs = show_attrs

    def render(self, graph: Graph, filename: Optional[str] = None) -> str:
        text = "\n".join(self.lines(graph)) + "\n"
        if filename is not None:
            Path(filename).write_text(text, encoding="utf-8")
        return text

    def lines(self, graph: Graph) -> list[str]:
        if graph.layout == "sequence":
            return self._scopes(graph)
        return self._trees(graph)

    # ------------------------------------------------------------------ one line per node
    def describe(self, node: Node) -> str:
        parts = [KIND_WORD.get(node.kind, node.kind)]
        if node.kind == "param":
            parts.append(f"%{node.name}")
        elif node.kind == "elided":
            hidden = node.attrs.get("hidden") or node.attrs.get("reason", "")
            parts.append(f"{hidden} more" if hidden.isdigit() else hidden)
        else:
            if node.op.lower() != parts[0].lower():
                parts.append(node.op)
            if node.name:
                parts.append(f"%{node.name}")
        if node.type:
            parts.append(f": {node.type}")
        if self.show_attrs and node.attrs and node.kind not in ("elided",):
            parts.append("{" + ", ".join(f"{k}={v}" for k, v in node.attrs.items()) + "}")
        # The innermost group (a fused one); an imported model's module shows as its path.
        if node.group and node.group.count("/") and node.kind not in ("param",) \
                and f"/{MODULE}:" not in node.group:
            parts.append(f"[{node.group.rsplit('/', 1)[-1]}]")
        if self.show_source and node.source is not None and node.source.module is not None:
            if node.source.module and node.kind != "collapsed":
                parts.append(f"<{node.source.module}>")
        elif self.show_source and node.source is not None:
            parts.append(f"<line {node.line}>")
        if node.recomputed:
            parts.append("recomputed")
        if node.status:
            parts.append(f"({node.status})")
        return " ".join(_oneline(p) for p in parts)

    # ------------------------------------------------------------------ expression trees
    def _trees(self, graph: Graph) -> list[str]:
        inputs: dict = {nid: [] for nid in graph.nodes}
        for e in sorted(graph.edges, key=lambda e: e.index):
            if e.kind in ("data", "branch"):     # a callee is printed under its own header
                inputs[e.dst].append((e.src, e.label))
        out: list[str] = []
        printed: set = set()
        used = {e.src for e in graph.edges if e.kind in ("data", "branch")}
        tops = [cid for cid, c in graph.clusters.items() if c.parent is None]
        # Nodes outside every cluster (a hand-made graph) form one unnamed scope of their own.
        for cid in ([None] if any(n.group is None for n in graph.nodes.values()) else []) + tops:
            if cid is not None:
                out.append(_oneline(graph.clusters[cid].label))
            roots = [o for o in graph.outputs if _top(graph, graph.nodes[o].group) == cid]
            # Values nothing reads (side effects after lowering, dead code) are roots too.
            roots += [nid for nid, n in graph.nodes.items()
                      if nid not in used and nid not in roots and _top(graph, n.group) == cid
                      and n.kind not in ("param", "const")]
            for i, root in enumerate(roots):
                self._tree(graph, root, inputs, printed, out, i == len(roots) - 1)
        return out

    def _tree(self, graph, root, inputs, printed, out, last):
        # An explicit stack: a 1,000-node chain is deeper than Python's recursion limit.
        stack = [(root, "", last, "")]
        while stack:
            nid, prefix, is_last, label = stack.pop()
            node = graph.nodes[nid]
            branch = "`-" if is_last else "|-"
            tag = f"{label}: " if label else ""
            if nid in printed and graph.layout == "dataflow":
                out.append(f"{prefix}{branch}{tag}^ {_ref(node)} (shared, shown above)")
                continue
            printed.add(nid)
            out.append(f"{prefix}{branch}{tag}{self.describe(node)}")
            child_prefix = prefix + ("  " if is_last else "| ")
            kids = inputs.get(nid, [])
            for i in range(len(kids) - 1, -1, -1):
                src, lab = kids[i]
                stack.append((src, child_prefix, i == len(kids) - 1, lab))

    # ------------------------------------------------------------------ let scopes
    def _scopes(self, graph: Graph) -> list[str]:
        # Items of each scope in order of appearance: nodes, and sub-scopes right after the node
        # that opens them (an ``if`` opens then/else, a closure its body).
        items: dict = {cid: [] for cid in graph.clusters}
        opened_by: dict = {}
        for e in graph.edges:
            if e.kind == "branch":
                opened_by.setdefault(e.src, [])
                group = graph.nodes[e.dst].group
                if group not in opened_by[e.src]:
                    opened_by[e.src].append(group)
        for cid, c in graph.clusters.items():
            if c.kind == "closure" and c.parent is not None:
                owner = cid.rsplit("/", 1)[0]
                opened_by.setdefault(owner, []).append(cid)
        for node in graph.nodes.values():
            if node.group in items:
                items[node.group].append(("node", node.id))
                for sub in opened_by.get(node.id, []):
                    items[node.group].append(("scope", sub))
        out: list[str] = []
        for cid, c in graph.clusters.items():
            if c.parent is None:
                out.append(_oneline(c.label))
                self._scope(graph, cid, items, "", out)
        return out

    def _scope(self, graph, cid, items, prefix, out):
        entries = items[cid]
        for i, (kind, ref) in enumerate(entries):
            last = i == len(entries) - 1
            branch = "`-" if last else "|-"
            if kind == "node":
                node = graph.nodes[ref]
                if node.kind == "param":
                    text = self.describe(node)
                elif node.kind == "return":
                    text = f"Return {node.text}" + (f" : {node.type}" if node.type else "")
                else:
                    text = _oneline(node.text) + (f" : {node.type}" if node.type else "")
                    if self.show_source and node.source is not None:
                        text += f" <line {node.line}>"
                out.append(f"{prefix}{branch}{text}")
            else:
                out.append(f"{prefix}{branch}{_oneline(graph.clusters[ref].label)}:")
                self._scope(graph, ref, items, prefix + ("  " if last else "| "), out)


def _top(graph: Graph, cid) -> Optional[str]:
    path = graph.cluster_path(cid) if cid else []
    return path[0] if path else None


def _ref(node: Node) -> str:
    return f"%{node.name}" if node.name else node.op


def _oneline(text) -> str:
    return str(text).replace("\n", "\\n")
