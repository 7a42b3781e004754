"""Overlays: per-node data laid over a graph, one layer each, keyed by node id.

As Model Explorer's node data providers: a layer is ``{node id: entry}`` for the nodes of the
*whole* graph, and the view model (``mlclab.viz.view_model``) carries every layer next to the
nodes, never inside them. A folded node (a module, a fused group, a function) gets its layer
entry by summing up the entries of the nodes it stands for, with the layer's own ``aggregate``.

Adding an overlay is one registration::

    register_overlay("memory", aggregate=lambda entries, members: {
        "text": f"{sum(e['value'] for e in entries.values()):,} bytes inside",
        "value": sum(e["value"] for e in entries.values())})

An entry is a JSON object; the keys every display reads are ``text`` (shown in the details
pane and on hover), and optionally ``status`` (``"ok"`` / ``"diverged"``: a mark on the node),
``fill`` (a ``#rrggbb`` background), ``badge`` (a few words drawn after the node's name:
"layer3 · 41 % of time") and ``hottest`` (the node id a folded node's "jump to" goes to). A
layer may add keys of its own (``share``, ``seconds``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

from ..registry import Registry

# aggregate(entries of the member nodes that have one {member id: entry}, all member ids) ->
# the folded node's entry, or None for none.
Aggregate = Callable[[Mapping[str, dict], list], "dict | None"]

_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
STATUSES = ("ok", "diverged")


@dataclass(frozen=True)
class Overlay:
    name: str
    aggregate: Aggregate
    description: str = ""


_OVERLAYS = Registry("overlay", "overlay")


def register_overlay(name: str, aggregate: Aggregate, description: str = "") -> Overlay:
    """Add an overlay layer; ``aggregate`` sums a folded node's members up (see the module
    docstring). Registering a name twice is a mistake."""
    if not callable(aggregate):
        raise TypeError(f"aggregate of overlay {name!r} must be callable, got {aggregate!r}")
    return _OVERLAYS.add(name, Overlay(name, aggregate, description))


def unregister_overlay(name: str) -> None:
    _OVERLAYS.remove(name)


def overlay_names() -> tuple:
    return _OVERLAYS.names()


def overlay(name) -> Overlay:
    return _OVERLAYS.get(name)


def check_entry(layer: str, node_id: str, entry) -> dict:
    """``entry`` if it is a well-formed layer entry, else a ValueError naming layer and node."""
    where = f"overlay {layer!r}, node {node_id!r}"
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: an entry is a dict, got {type(entry).__name__}")
    if not isinstance(entry.get("text", ""), str):
        raise ValueError(f"{where}: 'text' must be a string")
    if "status" in entry and entry["status"] not in STATUSES:
        raise ValueError(f"{where}: status must be one of {', '.join(STATUSES)}, "
                         f"got {entry['status']!r}")
    if "fill" in entry and not (isinstance(entry["fill"], str) and _COLOUR.fullmatch(entry["fill"])):
        raise ValueError(f"{where}: fill must be a #rrggbb colour, got {entry['fill']!r}")
    return dict(entry)


def layer_for(graph, name: str, entries: Mapping[str, dict]) -> dict:
    """Layer ``name`` on the nodes of ``graph`` (maybe folded): entries of the nodes it shows,
    and for each folded node what the overlay's ``aggregate`` makes of its members' entries."""
    kind = overlay(name)
    out = {}
    for nid in graph.nodes:
        if nid in entries:
            out[nid] = check_entry(name, nid, entries[nid])
            continue
        members = graph.members.get(nid)
        if not members:
            continue
        inside = {m: entries[m] for m in members if m in entries}
        if inside:
            summed = kind.aggregate(inside, members)
            if summed is not None:
                out[nid] = check_entry(name, nid, summed)
    return out


# ---------------------------------------------------------------------- the built-in layers
def _validation(entries: Mapping[str, dict], members: list) -> dict:
    bad = sum(1 for e in entries.values() if e.get("status") == "diverged")
    n = len(entries)
    if bad:
        first = next(m for m, e in entries.items() if e.get("status") == "diverged")
        return {"status": "diverged", "hottest": first, "badge": f"{bad} diverge",
                "text": f"{bad} of {n} checked values inside diverge; open it to see which"}
    return {"status": "ok", "text": f"{n} checked values inside, all ok"}


def _profile(entries: Mapping[str, dict], members: list) -> dict:
    # A kernel call's nodes all carry its entry: count each call once.
    kernels = {e.get("call", m): e for m, e in entries.items()}
    share = sum(float(e.get("share", 0.0)) for e in kernels.values())
    hottest = max(entries, key=lambda m: float(entries[m].get("share", 0.0)))
    return {"share": share, "fill": heat_colour(share), "hottest": hottest,
            "badge": f"{100 * share:.0f} % of time",
            "text": f"{100 * share:.0f} % of time in {len(kernels)} kernel call"
                    f"{'' if len(kernels) == 1 else 's'}; hottest: "
                    f"{entries[hottest].get('kernel', hottest)}"}


def _diff(entries: Mapping[str, dict], members: list) -> dict:
    counts: dict = {}
    for e in entries.values():
        counts[e.get("change", "changed")] = counts.get(e.get("change", "changed"), 0) + 1
    # ``counts``: what a display totals (a folded module's changes count, not as one node).
    return {"text": ", ".join(f"{n} {what}" for what, n in counts.items()) + " inside",
            "hottest": next(iter(entries)), "counts": counts}


def heat_colour(share: float) -> str:
    """White (no time) to red (all the time), as ``#rrggbb``."""
    s = min(max(share, 0.0), 1.0)
    r, g, b = 255, round(255 - 180 * s), round(255 - 200 * s)
    return f"#{r:02x}{g:02x}{b:02x}"


register_overlay("validation", _validation,
                 "each checked value ok or diverged against the reference")
register_overlay("profile", _profile, "each kernel's share of the measured time")
register_overlay("diff", _diff, "what the last pass added, removed or merged")


def _search(entries: Mapping[str, dict], members: list) -> dict:
    words = dict.fromkeys(w for e in entries.values() for w in e.get("text", "").split())
    return {"text": " ".join(words)}


register_overlay("search", _search, "what search matches: operator, binding name, module path")
