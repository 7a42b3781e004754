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

Folding: both sides start folded as the viewer first draws them (an imported model's modules).
With a kernel, opening a module on one side opens the matching module on the other (the same
module path, else the module of the folded node matched to it) and closing it closes both;
"collapse groups" and "draw all" act on their own side. The kernel lays both sides out again
and matches them anew; a saved file keeps the folding it was saved with. Each side is read
once (parsed, identities carried, texts printed: ``compare_sides.Side``); each side's fold
state is laid out once and shared by every pair that draws it, and each pair of fold states
matched and marked once (``compare_pairs``; ``fold_layouts.FoldLayouts``, the viewer's cache,
keyed by the side, then by the pair). From the display on, the pairs one click away are laid
out in its background thread, the likely clicks first (:meth:`CompareViewer.next_pairs`).
"""
from __future__ import annotations

import html
import pathlib
import uuid
from typing import Any, Callable, Mapping, Optional

import anywidget
import traitlets

from ..viz.matching import METHODS
from ..viz.overlays import styles
from .browser_layout import graphviz_module, needs_module
from .bundle import STATIC, bundle
from .compare_pairs import checked, pair_payload, side_layout
from .compare_sides import is_step, side_of
from .fold_layouts import Fold, FoldLayouts, fold_of, next_folds, with_ancestors
from .graphs import open_module_paths
from .viewer import TwinDisplay, message_names, static_drawing

def _drawing(vm: Mapping) -> str:
    """A pane's drawing without script: dot's SVG, unmatched nodes painted by the ``diff``
    layer's look (``viewer.static_drawing``), or the graph as text and why (laid out by the
    browser where no dot exists)."""
    geometry = vm.get("geometry") or {}
    if geometry.get("svg") or not geometry.get("text"):
        return static_drawing(vm)
    return (f'<div style="font:12px sans-serif">{html.escape(geometry.get("note", ""))}</div>'
            f'<pre>{html.escape(geometry["text"])}</pre>')


def payload(left: Mapping, right: Mapping, by: str, names=("left", "right")) -> dict:
    """The compare display's data: both view models (checked, their SVG sanitized, unmatched
    nodes marked in the drawing and in the ``diff`` layer), ``matches`` (left id -> right id)
    and the ``summary`` line."""
    return pair_payload(checked(left), checked(right), by, names)


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
    # How each side is drawn: {"open_modules": [paths], "folded": [namespace ids], "full": bool}.
    fold_left = traitlets.Dict().tag(sync=True)
    fold_right = traitlets.Dict().tag(sync=True)
    # A live widget hides its text/html twin and lays folds out (False in a page: localModel
    # says so; False too without ``layouts``).
    live = traitlets.Bool(True).tag(sync=True)
    # The WebAssembly Graphviz, where the panes are laid out in the browser (no dot): sent
    # only when a pane asks (`{"event": "graphviz"}`), because its page has no copy (the
    # twin beside the widget carries one), as the viewer does.
    graphviz_wasm = traitlets.Unicode("").tag(sync=True)

    def __init__(self, data: Mapping, layouts: Optional[FoldLayouts] = None,
                 pair: Optional[Callable[[Mapping, Mapping], Any]] = None, **kwargs: Any) -> None:
        """``layouts``: the comparison's data (as :func:`payload`) with the sides folded as
        ``pair(fold_left, fold_right)`` names, under the view name "pair" (made once each;
        the next clicks' pairs in the background once the front end says the panes are
        drawn). Without it the folding stays as given."""
        kwargs.setdefault("uid", uuid.uuid4().hex)
        kwargs.setdefault("live", layouts is not None)
        self._syncing = False
        self._layouts, self._pair = layouts, pair
        self._opened: list = []         # the module paths the last click opened (innermost)
        super().__init__(**dict(data), **kwargs)
        for side in ("left", "right"):
            if not getattr(self, f"fold_{side}"):
                vm = getattr(self, side)
                setattr(self, f"fold_{side}", {"open_modules": open_module_paths(vm),
                                               "folded": [], "full": False})
        self.observe(self._on_fold, ["fold_left", "fold_right"])
        self.on_msg(self._on_front_end)

    # ----------------------------------------------------------------- folding
    def open_module(self, side: str, path: str) -> None:
        """Open module ``path`` on ``side`` ("left" or "right"); the other side follows."""
        if side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right', got {side!r}")
        fold = getattr(self, f"fold_{side}")
        setattr(self, f"fold_{side}", {**fold, "open_modules": [*fold["open_modules"], path]})

    def _followed(self, side: str, old: Mapping, new: Mapping) -> dict:
        """The other side's fold once ``side``'s went from ``old`` to ``new``: the modules
        matching those opened are opened there, those matching the closed ones closed."""
        other = "right" if side == "left" else "left"
        there = getattr(self, f"fold_{other}")
        opened = follow(getattr(self, side), getattr(self, other),
                        self.matches if side == "left" else self.reverse,
                        old.get("open_modules", ()), new.get("open_modules", ()),
                        there.get("open_modules", ()))
        return {**there, "open_modules": opened}

    def _on_fold(self, change):
        if self._syncing or self._layouts is None:
            return
        side = change["name"].split("_")[1]
        other = "right" if side == "left" else "left"
        there = self._followed(side, change["old"], change["new"])
        added = (set(change["new"].get("open_modules", ()))
                 - set(change["old"].get("open_modules", ())))
        # The module clicked, not the ancestors opened with it.
        self._opened = sorted(p for p in added if not any(q.startswith(p + ".") for q in added))
        folds = {side: change["new"], other: there}
        data = self._layouts.get("pair", self._pair(folds["left"], folds["right"]))
        self._syncing = True
        try:
            # One message: the other side's fold and both drawings reach the panes together.
            with self.hold_sync():
                setattr(self, f"fold_{other}", there)
                for name in ("left", "right", "matches", "summary"):
                    setattr(self, name, data[name])
                # A selected node may be folded away: keep it only where it is still drawn.
                for s in ("left", "right"):
                    if getattr(self, f"selected_{s}") not in getattr(self, s).get("nodes", {}):
                        setattr(self, f"selected_{s}", "")
        finally:
            self._syncing = False

    def next_pairs(self) -> list:
        """The pair of folds each click on a module would ask for next (each folded module
        opened, each open one closed, on either side, the other side following), the likely
        first: those that open a module inside the one just opened (where a student looks
        next), then the other opens, the biggest module (most operators) first, then the
        closes; equals in drawing order."""
        ranked = []
        for side in ("left", "right"):
            fold, vm = getattr(self, f"fold_{side}"), getattr(self, side)
            if fold.get("full"):
                continue
            opened = fold.get("open_modules", [])
            ops = {ns.get("path"): ns.get("ops", 0) for ns in (vm.get("namespaces") or {}).values()
                   if ns.get("kind") == "module"}
            # next_folds against the present state as "first look": every state it gives
            # differs from it, so each names its open modules (none is None).
            for f in next_folds(vm, Fold(False, None, frozenset(fold["folded"])), opened):
                new = {**fold, "open_modules": with_ancestors(sorted(f.open_modules))}
                followed = self._followed(side, fold, new)
                pair = (new, followed) if side == "left" else (followed, new)
                added = set(f.open_modules) - set(opened)
                inside = any(p.startswith(o + ".") for p in added for o in self._opened)
                size = max((ops.get(p, 0) for p in added), default=-1)   # -1: a close
                ranked.append((not inside, -size, len(ranked), pair))
        return [pair for *_, pair in sorted(ranked, key=lambda r: r[:3])]

    def prefetch(self) -> None:
        """Lay out, in the background, the pairs of folds of :meth:`next_pairs`."""
        if self._layouts is not None and self.left.get("nodes") and self.right.get("nodes"):
            self._layouts.prefetch("pair", [self._pair(*p) for p in self.next_pairs()])

    def _ipython_display_(self):
        super()._ipython_display_()
        # The likely first clicks laid out while the panes travel and are drawn.
        self.prefetch()

    def wait_for_layouts(self, timeout: float = 60.0) -> bool:
        """Block until the background layouts of :meth:`prefetch` are made (tests and
        benchmarks); False on timeout."""
        return True if self._layouts is None else self._layouts.wait_idle(timeout)

    def _on_front_end(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict):
            return
        # A pane was drawn: lay out the next clicks' pairs while the student looks.
        if content.get("event") == "drawn":
            self.prefetch()
        # The pointer is on a module of a pane: the pair its click asks for is laid out next.
        elif content.get("event") == "hover":
            self._prefer(content.get("side"), message_names(content.get("open_modules")),
                         message_names(content.get("folded")))
        # A pane lays out in the browser and its page holds no WebAssembly Graphviz.
        elif content.get("event") == "graphviz":
            self.send_graphviz()

    def _prefer(self, side, open_modules: Optional[list], folded: Optional[list]) -> None:
        if self._layouts is None or side not in ("left", "right") or None in (open_modules, folded):
            return
        fold = getattr(self, f"fold_{side}")
        new = {**fold, "open_modules": with_ancestors(open_modules), "folded": folded}
        if new == fold:
            return
        followed = self._followed(side, fold, new)
        self._layouts.prefer("pair", self._pair(*((new, followed) if side == "left"
                                                  else (followed, new))))

    def send_graphviz(self) -> None:
        """Send the WebAssembly Graphviz (the ``graphviz_wasm`` trait), once, if a side needs it."""
        if not self.graphviz_wasm and needs_module(self._sides()):
            self.graphviz_wasm = graphviz_module()

    def _sides(self) -> dict:
        return {"left": self.left, "right": self.right}

    @traitlets.validate("fold_left", "fold_right")
    def _check_fold(self, proposal):
        fold = dict(proposal["value"])
        paths = fold.get("open_modules", [])
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise traitlets.TraitError(f"{proposal['trait'].name}: open_modules must be a list of "
                                       f"module paths such as 'layer1', got {paths!r}")
        return {"open_modules": with_ancestors(paths), "folded": list(fold.get("folded", [])),
                "full": bool(fold.get("full", False))}

    @property
    def reverse(self) -> dict:
        return {right: left for left, right in self.matches.items()}

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
        names = ("left", "right", "left_name", "right_name", "left_source", "right_source",
                 "matches", "summary", "method", "selected_left", "selected_right", "uid",
                 "fold_left", "fold_right")
        state = {n: getattr(self, n) for n in names}
        # A page has no kernel to ask: it carries the module when a side needs it.
        if needs_module(self._sides()):
            state["graphviz_wasm"] = graphviz_module()
        return state

    def static_html(self) -> str:
        """The two drawings side by side (no script), unmatched nodes outlined."""
        panes = "".join(
            f'<div style="flex:1 1 420px;min-width:0"><div style="font:600 12px sans-serif">'
            f'{side}: {html.escape(name)}</div><div style="overflow:auto;max-height:600px">'
            f'{_drawing(vm)}</div></div>'
            # without script nothing knows whether the panes are stacked: say both
            for side, name, vm in (("left (top when stacked)", self.left_name, self.left),
                                   ("right (bottom when stacked)", self.right_name, self.right)))
        looks = styles()["diff"]["looks"]
        legend = ", ".join(
            f'<span style="color:{looks[change]["stroke"]}">{word}</span>: {meaning}'
            for change, word, meaning in (("removed", "dashed red", "only left"),
                                          ("added", "green", "only right"),
                                          ("changed", "dashed amber", "changed")))
        return (f'<div class="mlclab-static-compare"><div style="font:12px sans-serif">'
                f'{html.escape(self.summary)} (matched by {html.escape(self.method)}; '
                f'{legend})</div>'
                f'<div style="display:flex;flex-wrap:wrap;gap:8px">{panes}</div></div>')

    def fragment(self) -> str:
        from .page import standalone_fragment

        return standalone_fragment(self.state(), self.static_html(), "compare.js")

    def save(self, path, title: str = "") -> str:
        """Write the comparison as one self-contained HTML file (no server, no network)."""
        from .page import document

        target = pathlib.Path(path)
        if target.suffix.lower() not in (".html", ".htm"):
            raise ValueError("path: save writes HTML, so the file should end in .html, "
                             f"got {str(path)!r}")
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
    the whole graphs."""
    if match is not None and match not in METHODS:
        raise ValueError(f"compare: match must be one of {', '.join(METHODS)}, got {match!r}")
    pipelined, pipes = is_step(a) or is_step(b), {}
    # Each side is read once; every folding is drawn from what was read (Side.draw).
    left, right = (side_of(x, view, pipelined, pipes) for x in (a, b))
    lname, rname = left.title, right.title
    if lname == rname:
        lname, rname = f"left: {lname}", f"right: {rname}"
    by = match or ("value" if left.key is right.key else "structure")
    # Each side's fold states laid out once each and shared by every pair that draws that
    # side so (compare_pairs); a pair adds only the matching and the marks.
    sides = {"left": left, "right": right}
    drawn = FoldLayouts(lambda name, fold: side_layout(sides[name], fold))
    data = pair_payload(drawn.get("left", Fold(full)), drawn.get("right", Fold(full)), by,
                        (lname, rname))
    first_open = {side: with_ancestors(open_module_paths(data[side])) for side in ("left", "right")}

    def key(fold: Mapping, side: str) -> Fold:
        return fold_of(fold["full"], fold["open_modules"], fold["folded"], first_open[side])

    def draw(_name: str, folds: tuple) -> dict:
        return pair_payload(drawn.get("left", folds[0]), drawn.get("right", folds[1]), by,
                            (lname, rname))

    # A pair of fold states is the pair's: matched and marked together, once (FoldLayouts
    # keeps it), the next clicks' pairs ahead in its thread.
    layouts = FoldLayouts(draw, capacity=24)

    def pair(fold_left: Mapping, fold_right: Mapping) -> tuple:
        return key(fold_left, "left"), key(fold_right, "right")

    folds = {f"fold_{side}": {"open_modules": first_open[side], "folded": [], "full": full}
             for side in ("left", "right")}
    layouts.keep("pair", pair(folds["fold_left"], folds["fold_right"]), data)
    return CompareViewer(data, layouts=layouts, pair=pair, left_name=lname, right_name=rname,
                         left_source=left.source, right_source=right.source, **folds)


def follow(here: Mapping, there: Mapping, matches: Mapping, old_open, new_open,
           there_open) -> list:
    """The modules open in view model ``there`` (now ``there_open``) once those of ``here``
    went from ``old_open`` to ``new_open``: the counterpart of each module opened is opened
    (with its ancestors), of each closed one closed (with its inner ones)."""
    old, new = set(old_open), set(new_open)
    opened = list(there_open)
    for path in sorted(new - old):
        match = counterpart_module(here, there, matches, path)
        if match and match not in opened:
            opened = with_ancestors([*opened, match])
    for path in sorted(old - new):
        match = counterpart_module(here, there, matches, path)
        if match:
            opened = [p for p in opened if p != match and not p.startswith(match + ".")]
    return opened


def counterpart_module(here: Mapping, there: Mapping, matches: Mapping, path: str) -> str:
    """The module of view model ``there`` that matches module ``path`` of ``here``: the same
    path when ``there`` has it, else the module of the node matched to ``path``'s folded node
    ("" for none)."""
    def modules(vm):
        spaces = {ns.get("path") for ns in (vm.get("namespaces") or {}).values()
                  if ns.get("kind") == "module"}
        folds = [n.get("folded") or {} for n in (vm.get("nodes") or {}).values()]
        return spaces | {fold.get("path") for fold in folds if fold.get("kind") == "module"}
    if path in modules(there):
        return path
    node = next((nid for nid, n in (here.get("nodes") or {}).items()
                 if (n.get("folded") or {}).get("path") == path), None)
    other = (there.get("nodes") or {}).get(matches.get(node, "")) if node else None
    f = (other or {}).get("folded") or {}
    return f.get("path", "") if f.get("kind") == "module" else ""
