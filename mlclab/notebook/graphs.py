"""A compiled function's graphs as view models (``mlclab.viz.view_model``), for the viewer widget.

``view_payload(fn, view)`` makes one view's view model: the graph model (folded to an overview
when big), the let and TVMScript texts its nodes are anchored in, the overlay layers
(validation, profile, search, ...) and the Graphviz drawing. Every display reads that and
nothing else.

Folding is one mechanism: ``mlclab.viz.overview.overview`` folds namespaces with
``Graph.fold``, from the first look's choice, the module paths the student opened
(``open_modules``) and the namespaces they folded (``folded``).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Mapping, Optional

from ..viz.dot import DotPlotter, LayoutTimeout, dot_available, xml_text
from ..viz.overview import overview
from ..viz.paint import with_badges
from ..viz.registry import view_names
from ..viz.view_model import build
from ..viz.views import GraphView, refolds
from .browser_layout import dot_geometry
from .fold_layouts import Fold, FoldLayouts, checkpoint
from .sources import view_source
from .viewer import PENDING, GraphViewer, clean_view, svg_of

# Parsing a view and printing its texts happen once per viewer, from the kernel's thread or a
# viewer's background layouts (notebook/fold_layouts.py): one at a time.
_SOURCES_LOCK = threading.Lock()


def viewer_views() -> tuple:
    """The viewer's view switch: every registered view (mlclab.viz.registry), "fused" (the
    graph after the build's FuseOps pass) among them."""
    return view_names()


def clean_json(value):
    """``value`` (JSON-like) with every string XML-safe: a pasted control character or a lone
    surrogate in a DSL line would otherwise break the SVG, the HTML or the comm's UTF-8."""
    if isinstance(value, str):
        return xml_text(value)
    if isinstance(value, dict):
        return {clean_json(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def validation_entries(graph, annotations: Mapping[str, Mapping]) -> dict:
    """The ``validation`` layer: binding name -> ``{"status", "text"}`` put on every node of
    ``graph`` that holds that binding."""
    out = {}
    for nid, node in graph.nodes.items():
        note = annotations.get(node.name) if node.name else None
        if note is not None:
            out[nid] = {"status": note["status"], "text": str(note.get("text", ""))}
    return out


def view_payload(fn, view: str, full: bool = False, profile=None,
                 open_modules: Optional[Iterable[str]] = None, folded: Iterable[str] = (),
                 annotations: Optional[Mapping[str, Mapping]] = None,
                 sources: Optional[dict] = None, ladder: bool = False) -> dict:
    """The view model of one view of a compiled function.

    A big graph is drawn as an overview unless ``full`` (the model then has ``"overview":
    {"shown", "total"}``); ``open_modules`` (module paths) and ``folded`` (namespace ids) say
    what the student opened and folded. ``profile`` (``fn.profile()``) lays its time shares
    over the fused view, ``annotations`` (binding name -> ``{"status", "text"}``) the
    validation marks over any view; folded nodes carry both summed up. If Graphviz runs out of
    time, the geometry holds the graph as ``"text"`` with a ``"note"`` instead of an SVG.
    ``sources`` (a dict) keeps each view's graph and texts for the next call; ``ladder``: as
    :func:`draw_view`'s.
    """
    if sources is None:
        drawn, texts = view_source(fn, view)
    else:                                  # a viewer's cache: parse and print each view once
        with _SOURCES_LOCK:              # a viewer's background layouts read it too
            if view not in sources:
                sources[view] = view_source(fn, view)
            drawn, texts = sources[view]
    layers = {}
    if profile is not None:
        from ..inspect.profile import overlay_entries

        layers["profile"] = overlay_entries(profile)
    if annotations:
        layers["validation"] = validation_entries(drawn.graph, annotations)
    return draw_view(drawn.graph, texts, layers, full=full, open_modules=open_modules,
                     folded=folded, ladder=ladder)


def draw_view(whole, texts: Optional[Mapping] = None, layers: Optional[Mapping] = None,
              full: bool = False, open_modules: Optional[Iterable[str]] = None,
              folded: Iterable[str] = (), draw: Optional[Callable] = None,
              ladder: bool = False) -> dict:
    """The view model of graph model ``whole`` (any ``mlclab.viz.Graph``, hand-made too),
    folded to an overview unless ``full``, with ``texts`` (style -> ``IRText``) and overlay
    ``layers`` (name -> entries keyed by ``whole``'s node ids), laid out by Graphviz: here
    (``draw(drawing)``: SVG of the drawing made another way, the scrubber's stable layout),
    or where no ``dot`` program exists, in the browser (``browser_layout.dot_geometry``;
    ``ladder``: with the further-folded drawings a column picture of it may need, which only
    a static form asks for: ``notebook.picture``)."""
    # checkpoint(): between steps, a viewer's background layout gives way to a click.
    shown = whole if full else overview(whole, open_modules=open_modules, folded=folded)
    checkpoint()
    vm = build(shown, whole, texts, layers)
    checkpoint()
    # Geometry is layout only: the overlays' looks are painted by every display from the
    # view model's style table (static/paint.js); a badge is label text, laid out.
    drawing = with_badges(shown, vm["overlays"])
    plotter = DotPlotter()
    copies = plotter.copies(drawing)
    vm["geometry"]["copies"] = {svg_id: {"node": drawing.edges[k].src,
                                         "reader": drawing.edges[k].dst}
                                for k, svg_id in copies.items()}
    if not dot_available():
        # The browser lays it out; a column picture of it (a %%tinynn tab's static form) may
        # need it folded further, which the kernel cannot measure: the rungs go along.
        # Those rungs are pictures without a view model to paint from: painted in their DOT.
        rungs = ([(what, (lambda make=make: with_badges(make(), vm["overlays"])))
                  for what, make in refolds(shown)] if ladder else [])
        vm["geometry"].update(dot_geometry(GraphView(drawing, plotter, refold=rungs,
                                                     overlays=layers)))
        return clean_json(vm)
    try:
        vm["geometry"]["svg"] = draw(drawing) if draw else svg_of(GraphView(drawing, plotter))
    except LayoutTimeout as err:
        vm["geometry"].update(svg="", text=GraphView(drawing).text,
                              note=f"{err}; the graph is shown as text instead.")
    checkpoint()
    return clean_json(vm)


def function_viewer(fn, view: str = "dataflow", views: Optional[Iterable[str]] = None,
                    annotations: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    highlight_bindings: Iterable[str] = (),
                    draw: Optional[Callable[[str], dict]] = None, profile=None,
                    **kwargs) -> GraphViewer:
    """A :class:`GraphViewer` of ``fn``; only ``view`` is drawn now, the others when shown.

    ``annotations`` maps IR binding names to ``{"status": "ok" | "diverged", "text": ...}``,
    laid over every view as its ``validation`` layer; ``highlight_bindings`` names bindings to
    mark (a folded node holding one is marked). ``draw(view)`` replaces :func:`view_payload`
    for the first look (to share drawings between viewers). ``profile`` (``fn.profile()``)
    lays each kernel's share of the time over the "fused" view.
    """
    views = viewer_views() if views is None else views
    annotations, wanted = dict(annotations or {}), set(highlight_bindings)
    sources: dict = {}                     # view -> (whole graph, texts), made once

    def layout(name: str, fold: Fold) -> dict:
        # A pure function of the fold state: FoldLayouts may call it from its thread.
        if fold == Fold() and draw is not None and not annotations and profile is None:
            return clean_view(draw(name))
        return clean_view(view_payload(fn, name, full=fold.full, profile=profile,
                                        annotations=annotations, sources=sources,
                                        open_modules=fold.open_modules, folded=fold.folded))

    def marked(data: dict) -> list:
        nodes = data.get("nodes", {})
        search = (data.get("overlays") or {}).get("search", {})
        return [nid for nid, n in nodes.items()
                if n.get("name") in wanted
                or (n.get("folded") and wanted & set(search.get(nid, {}).get("text", "").split()))]

    layouts = FoldLayouts(layout)
    # The whole graph and texts of the first view are made here, before any thread reads them.
    first = layouts.get(view, Fold())
    viewer = GraphViewer({name: first if name == view else PENDING for name in views},
                         layouts=layouts, view=view, source=xml_text(fn.source),
                         highlight=marked(first), open_modules=open_module_paths(first), **kwargs)
    if wanted:
        def mark_new(change):
            new = [v for k, v in change["new"].items() if v is not change["old"].get(k)]
            viewer.highlight = list(dict.fromkeys([*viewer.highlight,
                                                   *(nid for v in new for nid in marked(v))]))
        viewer.observe(mark_new, "views")
    return viewer


def graph_viewer(graphs: Mapping[str, Any], texts: Optional[Mapping] = None,
                 layers: Optional[Mapping] = None, **kwargs) -> GraphViewer:
    """A :class:`GraphViewer` of graph models made any way (``{view name: Graph}``), with
    ``texts`` (style -> ``IRText``) and overlay ``layers`` shared by all views; folding and
    "draw all" lay the graphs out again here."""
    def layout(name: str, fold: Fold) -> dict:
        return clean_view(draw_view(graphs[name], texts, layers, full=fold.full,
                                     folded=fold.folded, open_modules=fold.open_modules))

    names = list(graphs)
    layouts = FoldLayouts(layout)
    first = layouts.get(names[0], Fold())
    return GraphViewer({n: first if i == 0 else PENDING for i, n in enumerate(names)},
                       layouts=layouts, open_modules=open_module_paths(first), **kwargs)


def open_module_paths(vm: Mapping) -> list:
    """The paths of the module namespaces a view model draws open (foldable ones: a module
    holding at least two operators)."""
    return [ns["path"] for ns in (vm.get("namespaces") or {}).values()
            if ns["kind"] == "module" and not ns["folded"] and ns["ops"] >= 2]
