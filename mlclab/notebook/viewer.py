"""The graph viewer widget: view models (``mlclab.viz.view_model``) made interactive.

Layout stays on the Python side (the ``dot`` binary through the ``graphviz`` package), and so
does folding: the loader lays a view out again when the student folds or opens a namespace
(with ``layouts``, a ``fold_layouts.FoldLayouts``: each fold state once, the next clicks' ahead
of time, in the background once the front end says the view is drawn).
The front end (``static/*.js``, joined by ``bundle.py``, shipped inside the package, no CDN)
adds pan/zoom, selection, hover links to the DSL source and the let binding, view switching,
search that zooms to its matches and the overlays. The selected node comes back to Python as
the ``selected_node`` trait, so a click can drive other cells or widgets.

A widget needs a live kernel and its front end; for everything else (nbconvert, nbviewer, a
file on disk) ``notebook.page`` makes the same viewer as self-contained HTML.
"""
from __future__ import annotations

import html
import pathlib
import uuid
import xml.etree.ElementTree as ET
from typing import Any, Callable, Mapping, Optional

import anywidget
import traitlets

from ..viz.paint import paint_svg
from ..viz.view_model import check
from .browser_layout import graphviz_module, needs_module
from .bundle import bundle
from .fold_layouts import FoldLayouts, checkpoint, fold_of, next_folds, with_ancestors

_STATIC = pathlib.Path(__file__).parent / "static"

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", _SVG_NS)
ET.register_namespace("xlink", _XLINK_NS)

# Elements that can run code or pull in another document: none belongs in a Graphviz drawing.
_ACTIVE_ELEMENTS = {"script", "foreignObject", "iframe", "object", "embed", "handler", "listener"}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def sanitize_svg(svg: str) -> str:
    """Return ``svg`` without active content (scripts, event handlers, external links).

    Graphviz escapes the labels it draws, but the SVG also carries whatever the DOT source put
    in ``URL``/``href``/``id`` attributes; this makes the drawing safe to inline in HTML no
    matter what a student named things. Text that is not well-formed SVG becomes an escaped
    ``<pre>`` note rather than raw markup.
    """
    try:
        root = ET.fromstring(svg.encode("utf-8") if isinstance(svg, str) else svg)
    except ET.ParseError as err:
        return f'<pre class="mlclab-error">unreadable SVG: {html.escape(str(err))}</pre>'
    if _local(root.tag) != "svg":
        tag = html.escape(_local(root.tag))
        return f'<pre class="mlclab-error">not an SVG document: {tag}</pre>'
    for parent in list(root.iter()):
        for child in list(parent):
            if _local(child.tag) in _ACTIVE_ELEMENTS:
                parent.remove(child)
        for name in list(parent.attrib):
            local = _local(name).lower()
            value = parent.attrib[name].strip().lower()
            if local.startswith("on"):
                del parent.attrib[name]
            elif local == "href" and not value.startswith("#"):
                del parent.attrib[name]
    return ET.tostring(root, encoding="unicode")


def static_drawing(vm: Mapping, annotations: Optional[Mapping] = None) -> str:
    """The drawing of view model ``vm`` for a renderer without script: its SVG with the overlays
    painted by the view model's style table (``viz.paint.paint_svg``, what ``static/paint.js``
    does where scripts run); ``annotations`` (node id -> entry) join its validation layer."""
    svg = ((vm or {}).get("geometry") or {}).get("svg") or ""
    layers = dict(vm.get("overlays") or {}) if svg else {}
    nodes = vm.get("nodes") or {}
    extra = {nid: e for nid, e in (annotations or {}).items() if nid in nodes}
    if extra:
        layers["validation"] = {**layers.get("validation", {}), **extra}
    return paint_svg(svg, layers, vm.get("styles") or {}) if layers else svg


def svg_of(graph: Any) -> str:
    """The SVG text of a graph: mlclab's ``GraphView``, a ``graphviz`` object (laid out by
    ``dot``) or SVG text."""
    if isinstance(graph, str):
        return graph
    if callable(getattr(graph, "svg", None)):
        return graph.svg()
    if hasattr(graph, "pipe"):
        # Laid out by mlclab's runner: the same time limit as every other drawing.
        from ..viz.dot import svg_text

        return svg_text(graph)
    if hasattr(graph, "_repr_image_svg_xml"):
        return graph._repr_image_svg_xml()
    raise TypeError(f"cannot draw {type(graph).__name__} as SVG")


PENDING: Mapping[str, Any] = {"pending": True}


def clean_view(v: Mapping) -> dict:
    """A view as the front end gets it: a checked view model with sanitized SVG, or a pending
    or failed view."""
    if v.get("pending"):
        return dict(PENDING)
    if v.get("error"):
        return {"error": str(v["error"]), "nodes": {}}
    vm = check(dict(v))
    geometry = dict(vm["geometry"])
    checkpoint()                        # a viewer's background layout gives way to a click
    if geometry.get("svg"):
        geometry["svg"] = sanitize_svg(svg_of(geometry["svg"]))
    return {**vm, "geometry": geometry}


# What a fold leaves as it was: the texts the nodes are anchored in, the namespace hierarchy
# (of the whole graph) and the overlays. A BERT-base fold's view model is ~330 kB, half of it
# the let and TVMScript texts.
_KEPT_ACROSS_FOLDS = ("texts", "namespaces", "overlays")


def view_message(name: str, payload: Mapping, previous: Optional[Mapping]) -> dict:
    """The ``view`` message that sends ``payload`` as view ``name`` to a front end holding
    ``previous`` (its last drawing of that view): what is equal to it is named in ``same``
    rather than sent again (``switcher.js`` ``receiveView`` takes it from the previous)."""
    if not previous or previous.get("pending") or previous.get("error"):
        return {"event": "view", "name": name, "view": payload}
    same = [k for k in _KEPT_ACROSS_FOLDS if k in payload and previous.get(k) == payload[k]]
    view = {k: v for k, v in payload.items() if k not in same}
    return {"event": "view", "name": name, "view": view, "same": same}


class TwinDisplay:
    """A widget shown with its interactive ``text/html`` twin (``notebook.page``), so an export
    keeps a picture whatever it does with widgets; the widget hides the twin where it draws.
    Mixed into an anywidget that has ``static_html()`` (no script), ``_twin()`` (the fragment
    with its script) and ``_plain()`` (its text/plain)."""

    def __reduce_ex__(self, protocol):
        # A live widget (its comm, its kernel-side layouts) has no copy; pickle's own error
        # ("not the same object as ...") said nothing of what to keep instead.
        raise TypeError(f"a {type(self).__name__} is a live widget: it cannot be pickled or "
                        f"copied; keep it as a page with .save('page.html'), or keep what it "
                        f"draws and make the viewer again")

    def __copy__(self):
        return self.__reduce_ex__(2)

    def __deepcopy__(self, memo):
        return self.__reduce_ex__(2)

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        data["text/html"] = self.static_html()
        return data, metadata

    def _ipython_display_(self):
        # Two outputs: the twin (needs no kernel; nbconvert picks the widget over a text/html
        # in the same output once widget state is stored), then the widget.
        from IPython.display import display

        display({"text/html": self._twin()}, raw=True)
        data, metadata = super()._repr_mimebundle_()
        data["text/plain"] = self._plain()
        display(data, metadata=metadata, raw=True)


class GraphViewer(TwinDisplay, anywidget.AnyWidget):
    """An interactive view of one or more view models (``mlclab.viz.view_model``) of the same
    program; see docs/view-model.md for their schema.

    ``views`` maps a view name (``"dataflow"``, ``"let"``, ``"tree"``, ``"fused"``) to its view
    model, or to :data:`PENDING`: drawn by ``loader(name)`` the first time it is shown (some
    views cost far more to lay out than the one a student looks at first). A big view is an
    overview (``"overview": {"shown", "total"}``); adding its name to ``unfolded`` ("draw all",
    :meth:`unfold`) draws it whole with ``loader(name, full=True)``.

    Folding is laid out here, by the loader: ``open_modules`` (module paths drawn open; an
    imported model's others are folded at first look) and ``folded`` (namespace ids folded,
    any kind: a fused group, a function, a module) are read by ``loader(name)``; changing
    either redraws the views that depend on them. ``annotations`` adds validation entries
    (node id -> ``{"status", "text"}``) to the views' own ``validation`` layer;
    ``highlight`` marks node ids. The selected node comes back as ``selected_node``.

    ``layouts`` (a :class:`~mlclab.notebook.fold_layouts.FoldLayouts`) replaces ``loader``
    with a layout that is a pure function of the fold state: each state is drawn once, and
    the states one click away are drawn in the background after the front end shows a view.
    """

    _esm = bundle()
    _css = _STATIC / "viewer.css"

    views = traitlets.Dict().tag(sync=True)
    view = traitlets.Unicode("").tag(sync=True)
    selected_node = traitlets.Unicode("").tag(sync=True)
    search = traitlets.Unicode("").tag(sync=True)
    highlight = traitlets.List(traitlets.Unicode()).tag(sync=True)
    annotations = traitlets.Dict().tag(sync=True)
    source = traitlets.Unicode("").tag(sync=True)
    unfolded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    open_modules = traitlets.List(traitlets.Unicode()).tag(sync=True)
    folded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    # Whether a kernel lays folds out (False in a saved file: the fold controls say so).
    live = traitlets.Bool(True).tag(sync=True)
    # The views are passes in order: a slider instead of view buttons (notebook/scrubber.py).
    scrub = traitlets.Bool(False).tag(sync=True)
    # Names this viewer's text/html twin, which the live viewer hides when it draws.
    uid = traitlets.Unicode("").tag(sync=True)
    # The WebAssembly Graphviz (notebook/browser_layout.py), where no `dot` program exists
    # here: sent only when the front end asks (`{"event": "graphviz"}`), because its page has
    # no copy (the twin above the widget carries one): the module travels once per output.
    graphviz_wasm = traitlets.Unicode("").tag(sync=True)

    def __init__(self, views: Optional[Mapping[str, Mapping]] = None,
                 loader: Optional[Callable[[str], Mapping]] = None,
                 layouts: Optional[FoldLayouts] = None, **kwargs: Any) -> None:
        self._loader = loader           # set first: setting ``view`` below may already need it
        self._layouts = layouts
        self._ready = False             # the first open_modules describes the views given
        self._first_open = with_ancestors(kwargs.get("open_modules") or ())
        clean = {name: clean_view(v) for name, v in (views or {}).items()}
        kwargs.setdefault("view", next(iter(clean), ""))
        kwargs.setdefault("live", self._lays_out)
        kwargs.setdefault("uid", uuid.uuid4().hex)
        super().__init__(views=clean, **kwargs)
        self._ready = True
        self.on_msg(self._on_front_end)
        self.ensure_view(self.view)

    @property
    def _lays_out(self) -> bool:
        return self._loader is not None or self._layouts is not None

    @traitlets.validate("view")
    def _check_view(self, proposal):
        name = proposal["value"]
        if self.views and name not in self.views:
            raise traitlets.TraitError(f"no view {name!r}; this viewer has {', '.join(self.views)}")
        return name

    @traitlets.validate("open_modules")
    def _with_ancestors(self, proposal):
        # Opening "layer2.1" opens "layer2" too (the browser sends the path it was asked for).
        return with_ancestors(proposal["value"])

    @traitlets.observe("view")
    def _on_view(self, change):
        self.ensure_view(change["new"])

    def ensure_view(self, name: str) -> None:
        """Draw view ``name`` now if it is still pending."""
        if not (self.views.get(name) or {}).get("pending") or not self._lays_out:
            return
        self._load(name)

    @traitlets.observe("unfolded")
    def _on_unfolded(self, change):
        for name in change["new"]:
            if self._lays_out and (self.views.get(name) or {}).get("overview"):
                self._load(name, full=True)
        # A view taken back out ("fold all" after "draw all"): its overview again.
        for name in set(change["old"]) - set(change["new"]):
            if self._lays_out:
                self._load(name)

    @traitlets.observe("open_modules", "folded")
    def _on_folding(self, change):
        # Every view drawn folded is redrawn with the new choice: the current one now, the
        # others when next shown. Views drawn whole stay so.
        if not self._lays_out or not self._ready:
            return
        stale = [name for name, v in self.views.items()
                 if not (v or {}).get("pending") and name not in self.unfolded]
        self.views = {**self.views, **{name: dict(PENDING) for name in stale if name != self.view}}
        if self.view in stale:
            self._load(self.view)

    def open_module(self, path: str) -> None:
        """Draw module ``path`` (``"layer1"``, ``"layer2.1"``) unfolded, and its ancestors."""
        if not isinstance(path, str) or not path:
            raise TypeError(f"path must be a module path such as 'layer1', got {path!r}")
        namespaces = (self.views.get(self.view) or {}).get("namespaces", {})
        known = {ns.get("path") for ns in namespaces.values() if ns.get("kind") == "module"}
        if path not in known:
            raise ValueError(f"the {self.view!r} view has no module {path!r}")
        self.open_modules = [*self.open_modules, path]

    def fold(self, namespace: str, folded: bool = True) -> None:
        """Fold (or, with ``folded=False``, open again) the namespace with id ``namespace``."""
        spaces = (self.views.get(self.view) or {}).get("namespaces", {})
        if namespace not in spaces:
            raise ValueError(f"the {self.view!r} view has no namespace {namespace!r}")
        rest = [n for n in self.folded if n != namespace]
        self.folded = [*rest, namespace] if folded else rest

    def unfold(self, view: Optional[str] = None) -> None:
        """Draw the whole graph of ``view`` (default: the current one) instead of its overview."""
        name = view or self.view
        if name not in self.unfolded:
            self.unfolded = [*self.unfolded, name]

    def draw_all(self) -> None:
        """Draw every view still pending (a saved page carries them all)."""
        for name in list(self.views):
            self.ensure_view(name)

    def _fold(self, name: str, full: bool = False):
        return fold_of(full or name in self.unfolded, self.open_modules, self.folded,
                       self._first_open)

    def _load(self, name: str, **how) -> None:
        try:
            if self._layouts is not None:
                payload = self._layouts.get(name, self._fold(name, how.get("full", False)))
            else:
                payload = clean_view(self._loader(name, **how))
        except Exception as err:  # noqa: BLE001 - shown in the canvas instead of a dead widget
            payload = {"error": f"{type(err).__name__}: {err}", "nodes": {}}
        self._put_view(name, payload)

    def _put_view(self, name: str, payload: dict) -> None:
        """``views[name] = payload``, sent to the front end alone (a ``view`` message): syncing
        the ``views`` trait would send every view drawn so far again (a scrubber's passes drawn
        whole: 65 MB per step at BERT-base size). ``views`` stays whole here, so a front end
        that attaches later, a save and the twin get every view."""
        previous = self.views.get(name)
        self._sending_one = True
        try:
            self.views = {**self.views, name: payload}      # a new dict: observers run
        finally:
            self._sending_one = False
        self.send(view_message(name, payload, previous))

    def _should_send_property(self, key, value):
        if key == "views" and getattr(self, "_sending_one", False):
            return False
        return super()._should_send_property(key, value)

    def _on_front_end(self, _widget, content, _buffers) -> None:
        # The front end drew a view: lay out the next clicks' states while the student looks.
        # The pointer is on a module: the state its click asks for is laid out next.
        if not isinstance(content, dict):
            return
        if content.get("event") == "drawn":
            self.prefetch(str(content.get("view", "")))
        elif content.get("event") == "hover" and self._layouts is not None:
            name = str(content.get("view", ""))
            paths = [message_names(content.get(k)) for k in ("open_modules", "folded")]
            if name in self.views and None not in paths:
                self._layouts.prefer(name, fold_of(name in self.unfolded, with_ancestors(paths[0]),
                                                   paths[1], self._first_open))
        # It must lay a view out and its page carries no WebAssembly Graphviz (browser_layout).
        elif content.get("event") == "graphviz":
            self.send_graphviz()

    def send_graphviz(self) -> None:
        """Send the WebAssembly Graphviz to the front end (once), where a view needs it."""
        if not self.graphviz_wasm and needs_module(self.views):
            self.graphviz_wasm = graphviz_module()

    def prefetch(self, name: Optional[str] = None) -> None:
        """Lay out, in the background, view ``name`` (default: the current one) as each
        click on a module would draw it next (nothing without ``layouts``)."""
        name = name or self.view
        vm = self.views.get(name) or {}
        if self._layouts is None or vm.get("pending") or vm.get("error") or not vm.get("nodes"):
            return
        fold = self._fold(name)
        self._layouts.prefetch(name, next_folds(vm, fold, self._first_open))

    def wait_for_layouts(self, timeout: float = 60.0) -> bool:
        """Block until the background layouts of :meth:`prefetch` are made (tests and
        benchmarks); False on timeout."""
        return True if self._layouts is None else self._layouts.wait_idle(timeout)

    @traitlets.validate("selected_node")
    def _check_selected(self, proposal):
        node = proposal["value"]
        if node and node not in self.nodes:
            raise traitlets.TraitError(f"no node {node!r} in the {self.view!r} view")
        return node

    @property
    def current(self) -> dict:
        """The view model of the current view ({} while pending)."""
        return self.views.get(self.view) or {}

    @property
    def nodes(self) -> dict:
        """Node id -> node record of the current view."""
        return self.current.get("nodes", {})

    @property
    def selected(self) -> Optional[dict]:
        """The record of the selected node, or None."""
        return self.nodes.get(self.selected_node)

    def overlay(self, name: str) -> dict:
        """Layer ``name`` of the current view (node id -> entry); validation includes
        ``annotations``."""
        layer = dict((self.current.get("overlays") or {}).get(name, {}))
        if name == "validation":
            layer.update({k: v for k, v in self.annotations.items() if k in self.nodes})
        return layer

    def find(self, query: str) -> list[str]:
        """Ids of the current view's nodes whose search text (operator, binding name, module
        path; a folded node: what it holds) contains ``query``, as the search box finds them."""
        query = query.lower()
        return [nid for nid, e in self.overlay("search").items() if query in e["text"].lower()]

    # ----------------------------------------------------------------- static fallback
    def static_html(self) -> str:
        """Self-contained HTML (no script) of the current view, for renderers without widgets."""
        geometry = self.current.get("geometry") or {}
        drawing = static_drawing(self.current, self.annotations)
        if not drawing and geometry.get("text"):
            note = html.escape(geometry.get("note", ""))
            drawing = (f'<div style="font:12px sans-serif">{note}</div>'
                       f'<pre>{html.escape(geometry["text"])}</pre>')
        names = " · ".join(html.escape(v) for v in self.views)
        return (f'<div class="mlclab-static-graph">{self._static_marks()}'
                f'<div style="font:12px sans-serif;color:#57606a">graph view: '
                f"<b>{html.escape(self.view)}</b> (views: {names})"
                f"{_overview_note(self.current)}</div>"
                f'<div style="overflow:auto;max-height:600px">{drawing}</div></div>')

    def _static_marks(self) -> str:
        # The static drawing cannot restyle nodes, so name the highlighted ones in text.
        bad = [nid for nid in self.highlight if nid in self.nodes]
        if not bad:
            return ""
        items = ", ".join(html.escape(self.nodes[n]["label"]) for n in bad)
        return f'<div style="font:12px sans-serif;color:#d1242f">highlighted: {items}</div>'

    def save(self, path, title: str = "") -> str:
        """Write the viewer as one self-contained HTML file (every view drawn, the front end and
        its data inside; opens from disk with no server and no network). Returns the path."""
        from .page import page

        self.draw_all()
        target = pathlib.Path(path)
        if target.suffix.lower() not in (".html", ".htm"):
            raise ValueError("path: save writes HTML, so the file should end in .html, "
                             f"got {str(path)!r}")
        target.write_text(page(self, title or f"mlclab · {self.view}"), encoding="utf-8")
        return str(target)

    def _twin(self) -> str:
        from .page import fragment

        return fragment(self)

    def _plain(self) -> str:
        return f"<GraphViewer {self.view}: its picture is in the output above>"


def message_names(value) -> Optional[list]:
    """``value`` if it is a list of strings (as a message from the page should be), else None."""
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value if ok else None


def _overview_note(view: Mapping) -> str:
    shown = view.get("overview")
    if not shown:
        return ""
    modules = any(ns["kind"] == "module" for ns in (view.get("namespaces") or {}).values())
    what = "modules folded" if modules else "groups folded, the start cut"
    return f' · overview: {int(shown["shown"])} of {int(shown["total"])} nodes ({what})'
