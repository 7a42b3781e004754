"""Matching the nodes of two view models (``mlclab.viz.view_model``), for a side-by-side
comparison (``mlclab.compare``).

Two ways, chosen by what the two sides are:

- ``"value"``: two passes of one build. Every value keeps its value id across passes
  (``inspect.pipeline`` carries it), so a node matches the node of the same id, else the one
  holding the same ``value``. Exact; what is left over was added or removed by the passes.
- ``"structure"``: two different programs (two functions, a DSL program and the PyTorch model
  it mirrors, a student's program and a reference). There is no shared id, so: parameters and
  constants match in order of appearance (then the inputs left over, in order: a weight is a
  parameter of a DSL program and a constant of an imported model); computing nodes match as the
  longest common subsequence of their operator sequence (``difflib``, nodes in the model's order,
  which is program order); a node left over matches a left-over node of the same kind and binding
  name.
  Limits: it is a heuristic. Two independent operators written in the other order match only
  one of them; a fused group matches only a fused group of the same label; a rename
  (``relu`` vs ``nn.relu``) or a folded module against its open operators does not match.
"""
from __future__ import annotations

import difflib
from typing import Mapping

from .model import COMPUTING

METHODS = ("value", "structure")
_INPUTS = ("param", "const")


def match(left: Mapping, right: Mapping, by: str = "value") -> dict:
    """``{left node id: right node id}`` for the nodes of view models ``left`` and ``right``
    that stand for the same thing (one to one), by ``"value"`` or ``"structure"``."""
    if by not in METHODS:
        raise ValueError(f"match: by must be one of {', '.join(METHODS)}, got {by!r}")
    a, b = left.get("nodes") or {}, right.get("nodes") or {}
    return by_value(a, b) if by == "value" else by_structure(a, b)


def by_value(a: Mapping, b: Mapping) -> dict:
    """Same node id, else same value id (each right node used once)."""
    out, used = {}, set()
    holder = {}
    for nid, n in b.items():
        if n.get("value"):
            holder.setdefault(n["value"], nid)
    for nid, n in a.items():
        hit = nid if nid in b else holder.get(n.get("value")) if n.get("value") else None
        if hit is not None and hit not in used:
            out[nid] = hit
            used.add(hit)
    return out


def _signature(n: Mapping) -> str:
    return f"{n.get('kind')}:{n.get('label')}"


def _changed(x: Mapping, y: Mapping) -> bool:
    """Whether a pair matched by structure differs: inputs by kind (their labels are their
    names), operators by kind and operator."""
    if x.get("kind") in _INPUTS and y.get("kind") in _INPUTS:
        return x.get("kind") != y.get("kind") or x.get("type") != y.get("type")
    return _signature(x) != _signature(y)


def by_structure(a: Mapping, b: Mapping) -> dict:
    """Inputs in order, operators by their longest common subsequence, then leftovers by kind
    and binding name (see the module docstring for the limits)."""
    out = {}
    for kind in ("param", "const"):
        left = [nid for nid, n in a.items() if n.get("kind") == kind]
        right = [nid for nid, n in b.items() if n.get("kind") == kind]
        out.update(zip(left, right))
    # A weight is a parameter in a DSL program and a constant in an imported model: the inputs
    # left over on both sides match in order (marked changed, their kinds differ).
    taken = set(out.values())
    left = [nid for nid, n in a.items() if n.get("kind") in ("param", "const") and nid not in out]
    right = [nid for nid, n in b.items()
             if n.get("kind") in ("param", "const") and nid not in taken]
    out.update(zip(left, right))
    left = [nid for nid, n in a.items() if n.get("kind") not in ("param", "const")]
    right = [nid for nid, n in b.items() if n.get("kind") not in ("param", "const")]
    seq = difflib.SequenceMatcher(None, [_signature(a[n]) for n in left],
                                  [_signature(b[n]) for n in right], autojunk=False)
    for block in seq.get_matching_blocks():
        for k in range(block.size):
            out[left[block.a + k]] = right[block.b + k]
    used = set(out.values())
    by_name = {}
    for nid in right:
        if nid not in used and b[nid].get("name"):
            by_name.setdefault((b[nid].get("kind"), b[nid]["name"]), nid)
    for nid in left:
        if nid in out or not a[nid].get("name"):
            continue
        hit = by_name.pop((a[nid].get("kind"), a[nid]["name"]), None)
        if hit is not None:
            out[nid] = hit
    return out


def summary(left: Mapping, right: Mapping, matches: Mapping, by: str = "value") -> dict:
    """Counts of matched nodes and of nodes only on each side (computing nodes and inputs
    alike), and the line a display shows: "12 matched, 3 only left, 5 only right". Matched
    by structure, a pair whose operators differ (matched by binding name) is ``changed``."""
    a, b = left.get("nodes") or {}, right.get("nodes") or {}
    only_left = [n for n in a if n not in matches]
    taken = set(matches.values())
    only_right = [n for n in b if n not in taken]
    changed = [] if by == "value" else [n for n, m in matches.items() if _changed(a[n], b[m])]
    line = f"{len(matches)} matched, {len(only_left)} only left, {len(only_right)} only right"
    if changed:
        line += f" ({len(changed)} of the matched changed)"
    return {"matched": len(matches), "only_left": only_left, "only_right": only_right,
            "changed": changed, "line": line}


def diff_entries(nodes: Mapping, unmatched, change: str, other: str) -> dict:
    """The ``diff`` overlay entries of node ids ``unmatched`` of one side: ``change``
    (``"removed"`` on the left, ``"added"`` on the right: no match in the ``other`` side;
    ``"changed"``: matched to another operator there)."""
    out = {}
    for nid in unmatched:
        n = nodes[nid]
        what = "operator" if n.get("kind") in COMPUTING else n.get("kind", "node")
        text = (f"changed: matched by name to a different operator in {other}"
                if change == "changed" else f"{change}: this {what} has no match in {other}")
        out[nid] = {"change": change, "text": text}
    return out
