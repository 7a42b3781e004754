"""The graph viewer widget: Graphviz's SVG made interactive in the notebook.

Layout stays on the Python side (the ``dot`` binary through the ``graphviz`` package); the
front end (``static/viewer.js``, shipped inside the package, no CDN) adds pan/zoom, selection,
hover links to the DSL source and the let binding, view switching, collapsing of clusters and
search. The selected node comes back to Python as the ``selected_node`` trait, so a click can
drive other cells or widgets.

A widget needs a live kernel and its front end; notebook renderers without them (nbconvert,
nbviewer, GitHub) fall back to the static HTML this module also puts in every display.
"""
from __future__ import annotations

import html
import re
import pathlib
import xml.etree.ElementTree as ET
from typing import Any, Callable, Mapping, Optional

import anywidget
import traitlets

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
        return f'<pre class="mlclab-error">not an SVG document: {html.escape(_local(root.tag))}</pre>'
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


def _clean_view(v: Mapping) -> dict:
    """A view payload as the front end gets it: sanitized SVG, plain JSON."""
    if v.get("pending"):
        return dict(PENDING)
    if v.get("error"):
        return {"error": str(v["error"]), "nodes": {}}
    out = {"svg": sanitize_svg(svg_of(v["svg"])) if v.get("svg") else "",
           "nodes": dict(v.get("nodes") or {}),
           "clusters": dict(v.get("clusters") or {})}
    for key in ("let_text", "overview", "modules", "text", "note"):
        if key in v:
            out[key] = v[key]
    return out


def search_text(info: Mapping, inside=()) -> str:
    """What search matches in a node: its operator, binding name, module path (imported
    models), and for a folded module the paths inside it (viewer.js searches the same)."""
    source = info.get("source") or {}
    attrs = info.get("attrs") or {}
    return " ".join([info.get("op") or "", info.get("name") or "", source.get("module") or "",
                     attrs.get("module") or "", *inside])


def node_label(info: Mapping, node_id: str = "") -> str:
    """What a node is called in lists and titles: its operator, else its name, else its id."""
    return info.get("op") or info.get("name") or node_id


class GraphViewer(anywidget.AnyWidget):
    """An interactive view of one or more Graphviz drawings of the same program.

    ``views`` maps a view name (``"dataflow"``, ``"let"``, ``"tree"``) to
    ``{"svg": <svg text>, "nodes": {node_id: info},
    "clusters": {cluster_id: {"label", "kind", "parent"}}}`` (``clusters`` optional; a cluster
    of kind ``"function"`` is not folded by "collapse groups"). A view may carry its own
    ``let_text`` (a view of a later IR than ``let_text`` shows). The SVG's node groups carry
    the node ids as their ``id`` attribute (the Graphviz node name is used when they do not;
    ``use<k>:<id>`` is a copy of node ``id`` drawn at one of its readers). ``info`` is the
    JSON of ``mlclab.viz.Node.to_dict()`` (any of its keys: ``op``, ``kind``, ``name``,
    ``type``, ``attrs``, ``line``, ``source`` with ``source_line`` and ``dsl_name``,
    ``group`` (the cluster folding hides it in), ...) plus ``let_line`` (in ``let_text``) and
    ``script`` (the TVMScript line); see ``mlclab.notebook.graphs.node_info``.

    A view may also be :data:`PENDING`: it is drawn by ``loader(name)`` (returning such a
    payload) the first time it is shown, since some views (the tree of a program with shared
    values) cost far more to lay out than the one a student looks at first. A big view may be
    an overview (``"overview": {"shown", "total"}``); adding its name to ``unfolded`` (the
    viewer's "draw all" button, or :meth:`unfold`) draws it whole with ``loader(name,
    full=True)``. A view whose layout ran out of time carries ``text`` and ``note`` instead of
    an SVG.

    An imported model's view may fold its modules (``"modules": {"open": [paths], "folded":
    {node id: [paths inside]}}``, see ``mlclab.notebook.graphs.view_payload``): clicking a
    folded module, or :meth:`open_module`, adds its path to ``open_modules``, which redraws
    such views through ``loader(name)`` (the loader reads ``open_modules``); clicking an open
    module's name folds it again, and the banner's "fold all" empties the list (back to the
    first look).
    """

    _esm = _STATIC / "viewer.js"
    _css = _STATIC / "viewer.css"

    views = traitlets.Dict().tag(sync=True)
    view = traitlets.Unicode("").tag(sync=True)
    selected_node = traitlets.Unicode("").tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)
    search = traitlets.Unicode("").tag(sync=True)
    highlight = traitlets.List(traitlets.Unicode()).tag(sync=True)
    annotations = traitlets.Dict().tag(sync=True)
    source = traitlets.Unicode("").tag(sync=True)
    let_text = traitlets.Unicode("").tag(sync=True)
    unfolded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    open_modules = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(self, views: Optional[Mapping[str, Mapping]] = None,
                 loader: Optional[Callable[[str], Mapping]] = None, **kwargs: Any) -> None:
        self._loader = loader           # set first: setting ``view`` below may already need it
        self._ready = False             # the first open_modules describes the views given
        clean = {name: _clean_view(v) for name, v in (views or {}).items()}
        kwargs.setdefault("view", next(iter(clean), ""))
        super().__init__(views=clean, **kwargs)
        self._ready = True
        self.ensure_view(self.view)

    @traitlets.validate("view")
    def _check_view(self, proposal):
        name = proposal["value"]
        if self.views and name not in self.views:
            raise traitlets.TraitError(f"no view {name!r}; this viewer has {', '.join(self.views)}")
        return name

    @traitlets.observe("view")
    def _on_view(self, change):
        self.ensure_view(change["new"])

    def ensure_view(self, name: str) -> None:
        """Draw view ``name`` now if it is still pending."""
        if not (self.views.get(name) or {}).get("pending") or self._loader is None:
            return
        self._load(name)

    @traitlets.observe("unfolded")
    def _on_unfolded(self, change):
        for name in change["new"]:
            if self._loader is not None and (self.views.get(name) or {}).get("overview"):
                self._load(name, full=True)
        # A view taken back out ("fold all" after "draw all"): its overview again.
        for name in set(change["old"]) - set(change["new"]):
            if self._loader is not None and (self.views.get(name) or {}).get("modules"):
                self._load(name)

    @traitlets.observe("open_modules")
    def _on_open_modules(self, change):
        # Views that fold modules are redrawn with the new choice: the current one now, the
        # others when next shown. Views drawn whole stay so.
        if self._loader is None or not self._ready:
            return
        stale = [name for name, v in self.views.items()
                 if (v or {}).get("modules") and name not in self.unfolded]
        if not stale:
            return
        self.views = {**self.views, **{name: dict(PENDING) for name in stale if name != self.view}}
        if self.view in stale:
            self._load(self.view)

    def open_module(self, path: str) -> None:
        """Draw module ``path`` (``"layer1"``, ``"layer2.1"``) unfolded, and its ancestors."""
        if not isinstance(path, str) or not path:
            raise TypeError(f"path must be a module path such as 'layer1', got {path!r}")
        known = (self.views.get(self.view) or {}).get("modules")
        if known is None:
            raise ValueError(f"the {self.view!r} view has no modules to open")
        parts = path.split(".")
        wanted = [".".join(parts[:k]) for k in range(1, len(parts) + 1)]
        self.open_modules = list(dict.fromkeys([*known.get("open", []), *wanted]))

    def unfold(self, view: Optional[str] = None) -> None:
        """Draw the whole graph of ``view`` (default: the current one) instead of its overview."""
        name = view or self.view
        if name not in self.unfolded:
            self.unfolded = [*self.unfolded, name]

    def _load(self, name: str, **how) -> None:
        try:
            payload = _clean_view(self._loader(name, **how))
        except Exception as err:  # noqa: BLE001 - shown in the canvas instead of a dead widget
            payload = {"error": f"{type(err).__name__}: {err}", "nodes": {}}
        # A new dict, so traitlets sees the change and syncs it.
        self.views = {**self.views, name: payload}

    @traitlets.validate("selected_node")
    def _check_selected(self, proposal):
        node = proposal["value"]
        if node and node not in self.nodes:
            raise traitlets.TraitError(f"no node {node!r} in the {self.view!r} view")
        return node

    @property
    def nodes(self) -> dict:
        """Node id -> info for the current view."""
        return (self.views.get(self.view) or {}).get("nodes", {})

    @property
    def selected(self) -> Optional[dict]:
        """The info of the selected node, or None."""
        return self.nodes.get(self.selected_node)

    def find(self, op: str) -> list[str]:
        """Ids of the current view's nodes whose operator, name or module path contains
        ``op`` (a folded module matches the paths inside it), as the search box finds them."""
        op = op.lower()
        folded = ((self.views.get(self.view) or {}).get("modules") or {}).get("folded", {})
        return [nid for nid, info in self.nodes.items()
                if op in search_text(info, folded.get(nid, ())).lower()]

    # ----------------------------------------------------------------- static fallback
    def static_html(self) -> str:
        """Self-contained HTML (no script) of the current view, for renderers without widgets."""
        current = self.views.get(self.view) or {}
        drawing = current.get("svg") or ""
        if not drawing and current.get("text"):
            drawing = (f'<div style="font:12px sans-serif">{html.escape(current.get("note", ""))}</div>'
                       f'<pre>{html.escape(current["text"])}</pre>')
        names = " · ".join(html.escape(v) for v in self.views)
        return (f'<div class="mlclab-static-graph">{self._static_marks()}'
                f'<div style="font:12px sans-serif;color:#57606a">graph view: '
                f'<b>{html.escape(self.view)}</b> (views: {names}){_overview_note(current)}</div>'
                f'<div style="overflow:auto;max-height:600px">{drawing}</div></div>')

    def _static_marks(self) -> str:
        # The static drawing cannot restyle nodes, so name the highlighted ones in text.
        bad = [nid for nid in self.highlight if nid in self.nodes]
        if not bad:
            return ""
        items = ", ".join(html.escape(node_label(self.nodes[n], n)) for n in bad)
        return f'<div style="font:12px sans-serif;color:#d1242f">highlighted: {items}</div>'

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        data["text/html"] = self.static_html()
        return data, metadata


def _overview_note(view: Mapping) -> str:
    shown = view.get("overview")
    if not shown:
        return ""
    what = "modules folded" if view.get("modules") else "groups folded, the start cut"
    return f' · overview: {int(shown["shown"])} of {int(shown["total"])} nodes ({what})'



# ``let %x = ...``, ``x = ...`` and ``x: R.Tensor(...) = ...``: the name a line binds.
_BINDING = re.compile(r"^\s*(?:let\s+)?%?([\w.]+)\s*(?::[^=]*)?=(?!=)")


def binding_lines(text: str) -> dict:
    """IR name -> the 1-based line of ``text`` that first binds it (one pass over the text:
    looking each node up again would be quadratic in a 1,000-binding program)."""
    lines: dict = {}
    for i, line in enumerate(text.splitlines(), start=1):
        m = _BINDING.match(line)
        if m:
            lines.setdefault(m.group(1), i)
    return lines
