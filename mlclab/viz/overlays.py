"""Overlays: per-node data laid over a graph, one layer each, keyed by node id.

As Model Explorer's node data providers: a layer is ``{node id: entry}`` for the nodes of the
*whole* graph, and the view model (``mlclab.viz.view_model``) carries every layer next to the
nodes, never inside them. A folded node (a module, a fused group, a function) gets its layer
entry by summing up the entries of the nodes it stands for, with the layer's own ``aggregate``.

Adding an overlay is one registration, its look (:class:`Style`) given there once::

    register_overlay("memory", aggregate=lambda entries, members: {
        "text": f"{sum(e['value'] for e in entries.values()):,} bytes inside",
        "value": sum(e["value"] for e in entries.values())},
        style=Style(key="size", looks={"big": Look(stroke="#7c3aed", width=2.5)}))

A style is data: the view model carries the table (``styles()``), ``static/paint.js`` paints
every display's drawing from it and ``viz.paint.dot_attrs`` the picture made without
JavaScript, so both draw the same look from one registration.

An entry is a JSON object; the keys every display reads are ``text`` (shown in the details
pane and on hover), and optionally ``status`` (``"ok"`` / ``"diverged"``: a mark on the node),
``fill`` (a ``#rrggbb`` background), ``badge`` (a few words drawn after the node's name:
"layer3 · 41 % of time") and ``hottest`` (the node id a folded node's "jump to" goes to). A
layer may add keys of its own (``share``, ``seconds``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ..registry import Registry

# aggregate(entries of the member nodes that have one {member id: entry}, all member ids) ->
# the folded node's entry, or None for none.
Aggregate = Callable[[Mapping[str, dict], list], "dict | None"]

_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
STATUSES = ("ok", "diverged")


@dataclass(frozen=True)
class Look:
    """How a marked node is painted: its outline colour (``#rrggbb``), width (px) and whether
    dashed (Graphviz's dash, ``5,2``), its fill, and ``legend``: the words a display's legend
    gives it. Every field is optional."""
    stroke: Optional[str] = None
    width: Optional[float] = None
    dashed: bool = False
    fill: Optional[str] = None
    legend: str = ""

    def to_dict(self) -> dict:
        return {k: v for k, v in (("stroke", self.stroke), ("width", self.width),
                                  ("dashed", self.dashed), ("fill", self.fill),
                                  ("legend", self.legend)) if v}


@dataclass(frozen=True)
class Style:
    """An overlay's look: entry ``key``'s value picks a :class:`Look` of ``looks`` (the node's
    SVG group also gets the class ``mlclab-<value>``); ``fill_key`` names an entry key holding
    the node's own fill colour (the profile's heat)."""
    key: Optional[str] = None
    looks: Mapping[str, Look] = field(default_factory=dict)
    fill_key: Optional[str] = None

    def __post_init__(self):
        for value, look in self.looks.items():
            for colour in (look.stroke, look.fill):
                if colour is not None and not _COLOUR.fullmatch(colour):
                    raise ValueError(f"style: look {value!r}: colour {colour!r} is not #rrggbb")

    def to_dict(self) -> dict:
        return {"key": self.key, "fill_key": self.fill_key,
                "looks": {v: look.to_dict() for v, look in self.looks.items()}}


@dataclass(frozen=True)
class Overlay:
    name: str
    aggregate: Aggregate
    description: str = ""
    style: Optional[Style] = None


_OVERLAYS = Registry("overlay", "overlay")


def register_overlay(name: str, aggregate: Aggregate, description: str = "",
                     style: Optional[Style] = None) -> Overlay:
    """Add an overlay layer; ``aggregate`` sums a folded node's members up, ``style`` says how
    its marks look (see the module docstring). Registering a name twice is a mistake."""
    if not callable(aggregate):
        raise TypeError(f"aggregate of overlay {name!r} must be callable, got {aggregate!r}")
    if style is not None and not isinstance(style, Style):
        raise TypeError(f"style of overlay {name!r} must be an overlays.Style, got {style!r}")
    return _OVERLAYS.add(name, Overlay(name, aggregate, description, style))


def unregister_overlay(name: str) -> None:
    _OVERLAYS.remove(name)


def overlay_names() -> tuple:
    return _OVERLAYS.names()


def overlay(name) -> Overlay:
    return _OVERLAYS.get(name)


def styles() -> dict:
    """The style table: overlay name -> :meth:`Style.to_dict`, for every overlay with a look,
    in registration order (a later layer's look wins on a node two layers mark)."""
    return {name: kind.style.to_dict() for name in overlay_names()
            if (kind := overlay(name)).style is not None}


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
    fill = entry.get("fill")
    if "fill" in entry and not (isinstance(fill, str) and _COLOUR.fullmatch(fill)):
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
                 "each checked value ok or diverged against the reference",
                 Style(key="status", looks={
                     "ok": Look(stroke="#1a7f37", width=2, legend="matches the reference"),
                     "diverged": Look(stroke="#cf222e", width=3, fill="#ffebe9",
                                      legend="diverges from the reference")}))
register_overlay("profile", _profile, "each kernel's share of the measured time",
                 Style(fill_key="fill"))
# A pass's marks (inspect.pipeline.Diff) and a comparison's unmatched nodes (viz.matching).
register_overlay("diff", _diff, "what the last pass added, removed or merged",
                 Style(key="change", looks={
                     "added": Look(stroke="#15803d", width=2.5, fill="#dcfce7", legend="added"),
                     "removed": Look(stroke="#b91c1c", width=2.5, dashed=True, fill="#fee2e2",
                                     legend="removed (ghost)"),
                     "merged": Look(stroke="#c2410c", width=2.5, fill="#ffedd5",
                                    legend="fused into one kernel"),
                     "rewritten": Look(stroke="#1d4ed8", width=2, legend="rewritten"),
                     "grouped": Look(stroke="#d97706", width=2, legend="put in a fused group"),
                     "changed": Look(stroke="#bf8700", width=2.5, dashed=True,
                                     legend="changed")}))


def _search(entries: Mapping[str, dict], members: list) -> dict:
    words = dict.fromkeys(w for e in entries.values() for w in e.get("text", "").split())
    return {"text": " ".join(words)}


register_overlay("search", _search, "what search matches: operator, binding name, module path")
