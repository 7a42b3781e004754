"""Compare any two graphs: two panes side by side (stacked when the output is narrow), nodes
matched between them, selection synced, what has no match marked as added or removed.

    mlclab.compare(a, b)                     # a, b: what a side can be, below

A side is a compiled function (its ``view`` graph), a step of a build
(``fn.pipeline().step("FuseOps")``: the program after that pass) or ``(fn, "FuseOps")`` (the
same; ``(fn, "input")`` is the build's input). Both sides from one build are matched by value
id (exact), anything else by structure (``mlclab.viz.matching``, a heuristic with its limits
said there); ``match=`` picks one. A compiled function compared with a step of its own build
stands for the build's input, so that its value ids are the build's.

Each pane is the ordinary viewer (``static/viewer.js``) over its own view model; the compare
front end (``static/compare.js``) only joins the two: a click in one pane selects its match in
the other and centres it there. The display works as a widget, as the ``text/html`` twin an
export keeps, and as one file (``save("x.html")``).
"""
from __future__ import annotations

import html
import pathlib
import uuid
import xml.etree.ElementTree as ET
from typing import Any, Mapping, Optional

import anywidget
import traitlets

from ..viz.matching import METHODS, diff_entries, match, summary
from .browser_layout import graphviz_module, needs_module
from .bundle import STATIC, bundle
from .viewer import TwinDisplay, _clean_view

# How a node with no match is drawn, in the SVG itself (so the static twin shows it too).
MARKS = {"removed": ("#cf222e", "6,3"), "added": ("#1a7f37", ""), "changed": ("#bf8700", "2,2")}
_SHAPES = {"polygon", "ellipse", "path", "rect"}


# ---------------------------------------------------------------------- the two sides
def side_view(x: Any, view: str = "dataflow", pipelined: bool = False, full: bool = False) -> tuple:
    """``(view model, build key, title, DSL source)`` of one side (see the module docstring).
    The build key is the same object for two sides of one build; ``pipelined``: a plain
    function stands for its build's input; ``full``: the whole graph, not its overview."""
    from ..inspect.pipeline import Step
    from .graphs import view_payload
    from .scrubber import step_view

    if isinstance(x, Step):
        return (step_view(x.pipeline, x.index, full=full), x.pipeline.record,
                f"after {x.index + 1} · {x.name}", _source(x.pipeline.subject))
    if isinstance(x, tuple):
        if len(x) != 2 or not isinstance(x[1], (str, type(None))):
            raise TypeError("compare: a side given as a tuple is (fn, pass name), e.g. "
                            f"(fn, 'FuseOps') or (fn, 'input'); got {x!r}")
        fn, name = x
        if not callable(getattr(fn, "pipeline", None)):
            raise TypeError(f"compare: (fn, pass): fn must be a compiled function, got "
                            f"{type(fn).__name__}")
        pipe = fn.pipeline()
        if name in (None, "input"):
            return (step_view(pipe, -1, full=full), pipe.record, f"{pipe.name} · input",
                    _source(pipe.subject))
        return side_view(pipe.step(name), view, full=full)
    if callable(getattr(x, "pipeline", None)) and callable(getattr(x, "graph", None)):
        if pipelined:
            pipe = x.pipeline()
            return step_view(pipe, -1, full=full), pipe.record, f"{pipe.name} · input", _source(x)
        key = getattr(x, "build_record", None) or x
        return view_payload(x, view, full=full), key, f"{getattr(x, 'name', 'function')} · {view}", _source(x)
    raise TypeError(f"compare: a side is a compiled function, a pipeline step "
                    f"(fn.pipeline().step('FuseOps')) or (fn, 'FuseOps'); got {type(x).__name__}")


def _source(x) -> str:
    """The DSL source a side's nodes point into ("" for an imported model)."""
    source = getattr(x, "source", "")
    return source if isinstance(source, str) else ""


def _is_step(x) -> bool:
    from ..inspect.pipeline import Step

    return isinstance(x, (Step, tuple))


def mark_svg(svg: str, changes: Mapping[str, str]) -> str:
    """``svg`` with each node ``changes`` names (id -> ``"added"``/``"removed"``) outlined in
    its colour and given the class ``mlclab-added`` / ``mlclab-removed``."""
    if not svg or not changes:
        return svg
    root = ET.fromstring(svg)
    for g in root.iter():
        change = changes.get(g.get("id", ""))
        if change is None:
            continue
        colour, dash = MARKS[change]
        g.set("class", f"{g.get('class', '')} mlclab-{change}".strip())
        for shape in g:
            if shape.tag.rsplit("}", 1)[-1] in _SHAPES:
                shape.set("stroke", colour)
                shape.set("stroke-width", "3")
                if dash:
                    shape.set("stroke-dasharray", dash)
    return ET.tostring(root, encoding="unicode")


def _drawing(geometry: Mapping) -> str:
    """A pane's drawing without script: dot's SVG, or the graph as text and why (laid out by
    the browser where no dot exists)."""
    if geometry.get("svg") or not geometry.get("text"):
        return geometry.get("svg", "")
    return (f'<div style="font:12px sans-serif">{html.escape(geometry.get("note", ""))}</div>'
            f'<pre>{html.escape(geometry["text"])}</pre>')


def payload(left: Mapping, right: Mapping, by: str, names=("left", "right")) -> dict:
    """The compare display's data: both view models (checked, their SVG sanitized, unmatched
    nodes marked in the drawing and in the ``diff`` layer), ``matches`` (left id -> right id)
    and the ``summary`` line."""
    left, right = _clean_view(left), _clean_view(right)
    matches = match(left, right, by)
    s = summary(left, right, matches, by)
    changed_right = [matches[n] for n in s["changed"]]
    for vm, ids, change, changed, other in (
            (left, s["only_left"], "removed", s["changed"], names[1]),
            (right, s["only_right"], "added", changed_right, names[0])):
        entries = {**diff_entries(vm["nodes"], ids, change, other),
                   **diff_entries(vm["nodes"], changed, "changed", other)}
        marks = {nid: e["change"] for nid, e in entries.items()}
        vm["overlays"] = {**vm["overlays"], "diff": {**vm["overlays"].get("diff", {}), **entries}}
        if vm["geometry"].get("dot"):      # laid out in the browser, which outlines them there
            outlines = {nid: {"change": c, "colour": MARKS[c][0], "dash": MARKS[c][1]}
                        for nid, c in marks.items()}
            vm["geometry"] = {**vm["geometry"], "marks": outlines}
        else:
            vm["geometry"] = {**vm["geometry"], "svg": mark_svg(vm["geometry"].get("svg", ""), marks)}
    return {"left": left, "right": right, "matches": matches, "summary": s["line"], "method": by}


# ---------------------------------------------------------------------- the display
class CompareViewer(TwinDisplay, anywidget.AnyWidget):
    """Two view models side by side with matched nodes (``matches``: left id -> right id) and
    synced selection (``selected_left``/``selected_right``: setting one selects its match)."""

    _esm = bundle(entry="compare.js")
    _css = STATIC / "viewer.css"

    left = traitlets.Dict().tag(sync=True)
    right = traitlets.Dict().tag(sync=True)
    left_name = traitlets.Unicode("left").tag(sync=True)
    right_name = traitlets.Unicode("right").tag(sync=True)
    left_source = traitlets.Unicode("").tag(sync=True)
    right_source = traitlets.Unicode("").tag(sync=True)
    matches = traitlets.Dict().tag(sync=True)
    summary = traitlets.Unicode("").tag(sync=True)
    method = traitlets.Unicode("value").tag(sync=True)
    selected_left = traitlets.Unicode("").tag(sync=True)
    selected_right = traitlets.Unicode("").tag(sync=True)
    uid = traitlets.Unicode("").tag(sync=True)
    # A live widget hides its text/html twin (False in a page: localModel says so).
    live = traitlets.Bool(True).tag(sync=True)
    # The WebAssembly Graphviz, sent only when the panes are laid out in the browser (no dot).
    graphviz_wasm = traitlets.Unicode("").tag(sync=True)

    def __init__(self, data: Mapping, **kwargs: Any) -> None:
        kwargs.setdefault("uid", uuid.uuid4().hex)
        self._syncing = False
        super().__init__(**dict(data), **kwargs)
        if needs_module({"left": self.left, "right": self.right}):
            self.graphviz_wasm = graphviz_module()

    @property
    def reverse(self) -> dict:
        return {r: l for l, r in self.matches.items()}

    @traitlets.validate("selected_left", "selected_right")
    def _check_selected(self, proposal):
        side = proposal["trait"].name.split("_")[1]
        node = proposal["value"]
        if node and node not in getattr(self, side).get("nodes", {}):
            raise traitlets.TraitError(f"no node {node!r} in the {side} pane")
        return node

    @traitlets.observe("selected_left", "selected_right")
    def _sync(self, change):
        # The other side follows (its match, or nothing), unless the two already agree: the
        # front end sends both sides at once, and their notifications arrive one by one
        # (a node with no match, its other side empty, must not clear itself).
        side = change["name"].split("_")[1]
        other = "right" if side == "left" else "left"
        there = getattr(self, f"selected_{other}")
        if self._syncing or self._match(other, there) == change["new"]:
            return
        self._syncing = True
        try:
            setattr(self, f"selected_{other}", self._match(side, change["new"]))
        finally:
            self._syncing = False

    def _match(self, side: str, node: str) -> str:
        """The node of the other pane matching ``node`` of pane ``side`` ("" for none)."""
        if not node:
            return ""
        return (self.matches if side == "left" else self.reverse).get(node, "")

    # ----------------------------------------------------------------- without a kernel
    def state(self) -> dict:
        names = ("left", "right", "left_name", "right_name", "left_source", "right_source", "matches", "summary", "method",
                 "selected_left", "selected_right", "uid", "graphviz_wasm")
        return {n: getattr(self, n) for n in names}

    def static_html(self) -> str:
        """The two drawings side by side (no script), unmatched nodes outlined."""
        panes = "".join(
            f'<div style="flex:1 1 420px;min-width:0"><div style="font:600 12px sans-serif">'
            f'{html.escape(name)}</div><div style="overflow:auto;max-height:600px">'
            f'{_drawing(vm.get("geometry", {}))}</div></div>'
            for name, vm in ((self.left_name, self.left), (self.right_name, self.right)))
        return (f'<div class="mlclab-static-compare"><div style="font:12px sans-serif">'
                f'{html.escape(self.summary)} (matched by {html.escape(self.method)}; '
                f'<span style="color:#cf222e">red dashed</span>: only left, '
                f'<span style="color:#1a7f37">green</span>: only right, '
                f'<span style="color:#bf8700">amber dotted</span>: changed)</div>'
                f'<div style="display:flex;flex-wrap:wrap;gap:8px">{panes}</div></div>')

    def fragment(self) -> str:
        from .page import standalone_fragment

        return standalone_fragment(self.state(), self.static_html(), "compare.js")

    def save(self, path, title: str = "") -> str:
        """Write the comparison as one self-contained HTML file (no server, no network)."""
        from .page import document

        target = pathlib.Path(path)
        if target.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"path: save writes HTML, so the file should end in .html, got {str(path)!r}")
        title = title or f"mlclab · {self.left_name} vs {self.right_name}"
        target.write_text(document(self.fragment(), title), encoding="utf-8")
        return str(target)

    def _twin(self) -> str:
        return self.fragment()

    def _plain(self) -> str:
        return f"<CompareViewer {self.summary}: its picture is in the output above>"


def compare(a, b, view: str = "dataflow", match: Optional[str] = None,
            full: bool = False) -> CompareViewer:
    """``a`` and ``b`` side by side, nodes matched (see the module docstring). ``view``: which
    graph of a compiled function; ``match``: ``"value"`` or ``"structure"`` (default: by value
    when both sides come from one build, else by structure). A big graph is compared as its
    overview (modules folded, as the viewer first draws it); ``full=True`` draws and matches
    the whole graphs (folding is not offered in a comparison)."""
    if match is not None and match not in METHODS:
        raise ValueError(f"compare: match must be one of {', '.join(METHODS)}, got {match!r}")
    pipelined = _is_step(a) or _is_step(b)
    (lvm, lkey, lname, lsrc), (rvm, rkey, rname, rsrc) = (side_view(x, view, pipelined, full)
                                                          for x in (a, b))
    if lname == rname:
        lname, rname = f"left: {lname}", f"right: {rname}"
    by = match or ("value" if lkey is rkey else "structure")
    data = payload(lvm, rvm, by, (lname, rname))
    return CompareViewer(data, left_name=lname, right_name=rname, left_source=lsrc,
                         right_source=rsrc)
