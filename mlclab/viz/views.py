"""The registered graph views of a function, as notebook-ready objects.

``graph(fn, view)`` is what ``CompiledFunction.graph(view)`` returns: a ``GraphView`` that holds
the graph model (``.graph``, JSON via ``.to_dict()``), draws itself as SVG in a notebook, and
falls back to the terminal text, with a hint on installing Graphviz, when ``dot`` is missing.
"""
from __future__ import annotations

import functools
import html
import importlib
import itertools
from pathlib import Path
from typing import Callable, Mapping, Optional

from .dot import (INSTALL_HINT, DotPlotter, LayoutTimeout, dot_available, run_dot, svg_text,
                  write)
from .fit import COLUMN_PX, NARROW_COLUMN_PX, Fit, choose, fit_html, fit_svg
from .model import Graph
from .modules import group_modules, has_modules
from .overlays import layer_for
from .overview import (MODULE_FOLD_NODES, OVERVIEW_NODES, fold_modules, foldable_modules,
                       overview)
from .paint import node_paints, paint_svg
from .registry import view_kind
from .term import TermPlotter

# Folding choices of ``collapse``: which cluster kinds fold into one node. "module" folds an
# imported model's modules by level (mlclab.viz.overview.fold_modules); "auto" does that only
# past MODULE_FOLD_NODES nodes, and nothing for the DSL.
COLLAPSE = {None: (), "function": ("function",), "group": ("fused",), "all": ("function", "fused"),
            "module": ("module",), "auto": ()}


# Where no ``dot`` program exists, a GraphView's notebook HTML is laid out by the browser: the
# notebook layer provides that form (it owns the front end and the vendored WebAssembly
# Graphviz), named here by the facade as "module:attribute" and imported on first use, as
# api.displays does for the api layer.
_BROWSER_FORM: list = []


def register_browser_form(target: str) -> None:
    """Name the callable ``(GraphView) -> HTML or None`` that draws a view in the browser."""
    if ":" not in target:
        raise ValueError(f"browser form: {target!r} is not of the form 'module:attribute'")
    _BROWSER_FORM[:] = [target]


def _browser_form(view: "GraphView") -> Optional[str]:
    if not _BROWSER_FORM:
        return None
    module, _, attribute = _BROWSER_FORM[0].partition(":")
    return getattr(importlib.import_module(module), attribute)(view)


def graph(fn, view: str = "dataflow", *, function: Optional[str] = None,
          collapse: Optional[str] = "auto", depth: Optional[int] = None,
          params: Optional[dict] = None, max_nodes: Optional[int] = None) -> "GraphView":
    """One registered view of ``fn`` (a compiled function, ``relax.Function`` or ``IRModule``).

    - ``view``: a name of ``mlclab.viz.registry.view_names()``: ``"dataflow"`` (graph binding,
      a DAG), ``"tree"`` (shared values duplicated and marked recomputed), ``"let"`` (A-normal
      form, scopes nested), and any view registered since; a view of a build step
      (``"fused"``) is drawn by ``fn.graph``, which reads the build record.
    - ``collapse``: ``"function"`` folds each called function into one node, ``"group"`` each
      fused group, ``"all"`` both; ``"module"`` folds an imported model's modules by level,
      and ``"auto"`` (the default) does so for models past ``MODULE_FOLD_NODES`` nodes;
      ``None`` draws everything. ``depth`` keeps nodes at most that many edges from a result.
    - ``max_nodes``: where the tree view stops expanding (it can grow exponentially).
    """
    kind = view_kind(view)
    step = step_of(fn, view)
    if step is not None:
        if max_nodes is not None or params is not None or function is not None:
            raise ValueError(f"view: {view!r} draws a step of the build; function=, params= "
                             "and max_nodes= are not options of it")
        return step.graph(view, collapse=collapse, depth=depth)
    check_shape_options(collapse, depth)
    if max_nodes is not None:
        if view != "tree":
            raise ValueError("max_nodes limits the tree view only (the others are never larger "
                             "than the IR); use depth or collapse to shrink them")
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
            raise ValueError(f"max_nodes must be a positive int, got {max_nodes!r}")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict of parameter name -> array, got "
                        f"{type(params).__name__}")
    parser = kind.parser() if max_nodes is None else kind.parser(max_nodes=max_nodes)
    g = parser.parse(fn, function=function, params=params)
    return fitted_view(g, collapse=collapse, depth=depth)


def step_of(fn, view: str):
    """The build step a view of ``fn`` is drawn from, or None for a view of ``fn`` itself: a
    view registered with ``after=`` ("fused": after FuseOps) draws the module as ``fn``'s
    build record has it after that pass (``fn.pipeline().step(after)``). The one place that
    asks (``fn.graph``, the viewer, a comparison's sides and the cell's tabs read it)."""
    after = view_kind(view).after
    if after is None:
        return None
    if not callable(getattr(fn, "pipeline", None)):
        raise ValueError(f"view: {view!r} is the graph after the build's {after} pass: draw "
                         f"it with fn.graph({view!r}) or, for plain IR, "
                         f"mlclab.inspect.pipeline.pipeline(mod).step({after!r}).graph()")
    return fn.pipeline().step(after)


def check_shape_options(collapse, depth) -> None:
    """``collapse`` and ``depth`` as ``graph`` takes them, or a ValueError/TypeError naming them."""
    if not isinstance(collapse, (str, type(None))) or collapse not in COLLAPSE:
        choices = ", ".join(repr(c) for c in COLLAPSE)
        raise ValueError(f"collapse must be one of {choices}, got {collapse!r}")
    if depth is not None:
        if isinstance(depth, bool) or not isinstance(depth, int):
            raise TypeError(f"depth must be an int (edges from a result), got {depth!r}")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")


def shape(g: Graph, collapse: Optional[str] = None, depth: Optional[int] = None) -> Graph:
    """Apply the big-graph options to a parsed graph, after grouping an imported model's nodes
    by module (here, not in the parser: the pipeline's graphs get their sources after parsing)."""
    check_shape_options(collapse, depth)
    g = group_modules(g)
    if collapse == "module" or (collapse == "auto" and len(g) > MODULE_FOLD_NODES):
        if has_modules(g):
            g = fold_modules(g)
    elif COLLAPSE[collapse]:
        g = g.collapse(COLLAPSE[collapse], keep=[f"fn:{g.name}"])
    if depth is not None:
        g = g.limit_depth(depth)
    return g


def refolds(g: Graph, depth: Optional[int] = None) -> list:
    """The ways to fold ``g`` further, least first, as ``(what, make graph)``: tried in turn
    when ``collapse="auto"``'s drawing would need text under the readable minimum to fit a
    column (:class:`mlclab.viz.fit.Fit`). ``g`` is grouped by module, not yet folded."""
    out = []
    kinds = {c.kind for c in g.clusters.values()}
    main = [f"fn:{g.name}"]

    def then_depth(graph):
        return graph if depth is None else graph.limit_depth(depth)

    if has_modules(g):
        out.append(("its modules folded to the outermost level",
                    lambda: then_depth(fold_modules(g, open_modules=()))))
    if sum(1 for c in g.clusters.values() if c.kind == "function") > 1:
        out.append(("each called function folded into one node",
                    lambda: then_depth(g.collapse(("function",), keep=main))))
    if "fused" in kinds:
        out.append(("each fused group and called function folded into one node",
                    lambda: then_depth(g.collapse(("function", "fused"), keep=main))))
    # Then, on the most folded of those: constants into their readers (a batch norm's four
    # statistics drawn side by side set ResNet-18's width), then every module, however small.
    most = out[-1][1] if out else (lambda: then_depth(g))
    if any(n.kind == "const" for n in g.nodes.values()):
        out.append(("constants folded into the operators that read them",
                    lambda: most().fold_constants()))
    if has_modules(g) and foldable_modules(g, min_ops=1).keys() - foldable_modules(g).keys():
        groups = {c.kind for c in g.clusters.values()} & {"function", "fused"}
        out.append(("every module folded, one-operator ones too, and constants folded",
                    lambda: then_depth(fold_modules(g.collapse(groups, keep=main),
                                                    open_modules=(), min_ops=1)
                                       .fold_constants())))
    return out


def fitted_view(g: Graph, collapse: Optional[str] = "auto", depth: Optional[int] = None,
                finish: Optional[Callable[[Graph], Graph]] = None,
                overlays: Optional[Mapping[str, Mapping[str, dict]]] = None) -> "GraphView":
    """The ``GraphView`` of a parsed graph shaped by ``collapse``/``depth`` (:func:`shape`);
    with ``collapse="auto"`` its picture folds further (:func:`refolds`) when that is what
    it takes to fit a column with readable text. ``finish`` is applied to every graph drawn
    (a profile's overlay on folded nodes); ``overlays``: as :class:`GraphView` takes them."""
    finish = finish or (lambda graph: graph)
    shown = finish(shape(g, collapse=collapse, depth=depth))
    more, start = [], None
    if collapse == "auto":
        grouped = group_modules(g)
        more = [(what, (lambda make=make: finish(make())))
                for what, make in refolds(grouped, depth)]
        if len(shown) > OVERVIEW_NODES:
            # Past what a student can read (and Graphviz lays out quickly), the picture is the
            # viewer's first look: groups folded, cut to the nodes nearest the results.
            first = finish(overview(shown))
            start = (f"an overview, groups and functions folded and the start cut "
                     f"({len(first)} of {len(shown)} nodes)", first)
    return GraphView(shown, refold=more, start=start, overlays=overlays)


def _made(graph: Graph) -> Graph:
    """A refold already made (what a copied GraphView carries)."""
    return graph


class GraphView:
    """A drawn view: SVG in notebooks, text in terminals, the model for widgets.

    In a notebook the picture is fitted to the output's width (``mlclab.viz.fit``). ``refold``:
    ``(what, make graph)`` pairs, folded more and more, drawn instead of ``graph`` when its
    picture could only fit by shrinking text below the readable minimum; the picture then says
    what was folded, and ``drawn`` is the graph it shows (``graph`` stays what was asked for).
    ``overlays`` (layer name -> {node id: entry}, keyed by the unfolded graph's ids; a folded
    node sums its members' up) are painted into every drawing by the style table
    (``viz.paint``): a pass's marks, a profile's heat.
    """

    def __init__(self, graph: Graph, plotter: Optional[DotPlotter] = None, refold=(),
                 start: Optional[tuple] = None,
                 overlays: Optional[Mapping[str, Mapping[str, dict]]] = None):
        self.graph = graph
        self.overlays = {name: dict(entries) for name, entries in (overlays or {}).items()}
        self.plotter = plotter or DotPlotter()
        self._dot = None
        self._refold = list(refold)
        self._start = start              # (what, graph): drawn instead of graph from the start
        self._picture = None             # (svg, Fit, what was folded, graph drawn)

    @property
    def view(self) -> str:
        return self.graph.view

    def __getstate__(self):
        # A refold is a closure over the graph it folds, which pickle refuses: a copy carries
        # the folded graphs themselves, made now.
        state = dict(self.__dict__)
        state.pop("_made", None)
        state.pop("_svgs", None)
        state["_refold"] = [(what, functools.partial(_made, make()))
                            for what, make in self._refold]
        return state

    @property
    def dot(self):
        """The ``graphviz.Digraph``, unpainted (building it needs no ``dot`` binary; drawing
        does): :meth:`svg` paints the overlays into its drawing."""
        if self._dot is None:
            self._dot = self.digraph(self.graph, painted=False)
        return self._dot

    def layers(self, graph: Graph) -> dict:
        """The overlays on ``graph`` (this view's, or a rung of it): folded nodes summed up."""
        return {name: layer_for(graph, name, entries) for name, entries in self.overlays.items()}

    def digraph(self, graph: Graph, painted: bool = False):
        """The ``graphviz.Digraph`` of ``graph`` (this view's, or a rung of it); ``painted``:
        the overlays drawn into the DOT, for formats nothing edits after (``viz.paint``)."""
        layers = self.layers(graph) if painted else {}
        return self.plotter.digraph(graph, node_paints(layers) if layers else None)

    def drawing(self, graph: Graph) -> str:
        """The SVG of ``graph`` (this view's, or a rung of it) with the overlays painted in
        by their registered looks (``viz.paint.paint_svg``)."""
        dot = self.dot if graph is self.graph else self.digraph(graph)
        return paint_svg(svg_text(dot), self.layers(graph))

    @property
    def source(self) -> str:
        return self.dot.source

    @property
    def text(self) -> str:
        return TermPlotter().render(self.graph)

    def svg(self) -> str:
        """The SVG text, overlays painted; raises ``graphviz.ExecutableNotFound`` without
        Graphviz and ``LayoutTimeout`` when the layout takes too long."""
        return self.drawing(self.graph)

    def rungs(self):
        """The drawings a column may show, folded more and more, as ``(graph, note)``, made
        one at a time: what was asked for (or its overview), then each way of folding further
        (:func:`refolds`). :meth:`picture` lays them out here; where no ``dot`` program exists
        :meth:`ladder` sends them to the browser, which chooses by the same rule."""
        if self._start is None:
            yield self.graph, ""
        else:
            what, drawn = self._start
            yield drawn, f"Drawn as {what}. collapse=None draws everything."
        for what, make in self._refold:
            candidate = make()
            yield candidate, (f"Folded to fit the column: {what} ({len(candidate)} of "
                              f"{len(self.graph)} nodes). collapse=None draws everything.")

    def _choose(self, column: float) -> tuple:
        """``(rung index, Fit)`` of the rung a ``column`` px wide shows (``fit.choose``); the
        rungs are made and laid out once, for every column asked about."""
        made = self.__dict__.setdefault("_made", [])            # [(graph, note)]
        svgs = self.__dict__.setdefault("_svgs", {})            # rung index -> SVG

        def lazily():
            rungs = None
            for k in range(1 << 30):
                if k == len(made):
                    rungs = rungs or itertools.islice(self.rungs(), k, None)
                    nxt = next(rungs, None)
                    if nxt is None:
                        return
                    made.append(nxt)
                yield len(made[k][0]), k

        def measure(k):
            if k not in svgs:
                svgs[k] = self.drawing(made[k][0])
            return Fit(svgs[k], column)

        return choose(lazily(), measure)

    def picture(self) -> tuple:
        """``(svg, fit, note)``: the SVG shown in a column (``fit.COLUMN_PX``), how it fits,
        and what was folded to make it fit ("" when nothing was). Laid out once."""
        if self._picture is None:
            k, fit = self._choose(COLUMN_PX)
            graph, note = self._made[k]
            self._picture = (self._svgs[k], fit, note, graph)
        return self._picture[:3]

    def narrow_picture(self) -> Optional[tuple]:
        """``(svg, fit, note)`` a laptop's column (``fit.NARROW_COLUMN_PX``) shows instead of
        :meth:`picture`, which it could show only with text under the readable minimum, or
        None when it shows the same. The HTML holds both and its column picks (``fit_html``)."""
        svg, fit, _ = self.picture()
        if fit.min_width <= NARROW_COLUMN_PX:
            return None
        k, narrow = self._choose(NARROW_COLUMN_PX)
        if self._svgs[k] is svg or narrow.min_width >= fit.min_width:
            return None
        return self._svgs[k], narrow, self._made[k][1]

    @property
    def drawn(self) -> Graph:
        """The graph the notebook picture shows (``graph``, or a folded copy of it)."""
        self.picture()
        return self._picture[3]

    def render(self, filename: str, format: Optional[str] = None) -> str:
        """Write svg/pdf/png/dot/txt; without ``dot`` writes the text next to it and warns.
        The overlays are painted in (the DOT of a ``.dot`` file is the layout alone)."""
        fmt = format or (Path(filename).suffix[1:] or "svg")
        if self.overlays and fmt == "svg" and dot_available():
            Path(filename).write_text(paint_svg(run_dot(self.dot.source, "svg", None)
                                                .decode("utf-8"), self.layers(self.graph)),
                                      encoding="utf-8")
            return str(filename)
        dot = self.digraph(self.graph, painted=True) if self.overlays else self.dot
        return write(dot, self.graph, filename, format)

    def ladder(self) -> list:
        """Where no ``dot`` program exists: :meth:`rungs` as the browser gets them, each
        ``{"dot", "note", "nodes"}`` and the rung's ``overlays`` if any (the page paints them
        by the style table: ``static/paint.js``). The page lays out the first and walks down
        the ladder by :func:`mlclab.viz.fit.choose`'s rule, measured in its real column
        (``static/fit.js``). A rung no smaller than the first is left out (never chosen)."""
        out = []
        for graph, note in self.rungs():
            if out and len(graph) >= out[0]["nodes"]:
                continue
            rung = {"dot": self.digraph(graph, painted=False).source, "note": note,
                    "nodes": len(graph)}
            if self.overlays:
                rung["overlays"] = self.layers(graph)
            out.append(rung)
        return out

    def to_dict(self) -> dict:
        return self.graph.to_dict()

    def nodes(self, **match):
        return self.graph.find(**match)

    def _repr_mimebundle_(self, include=None, exclude=None):
        import graphviz

        if not dot_available():
            form = _browser_form(self)
            if form is not None:
                note = next(self.rungs())[1]          # the first rung's: nothing refolded
                return {"text/html": form,
                        "text/plain": (note + "\n\n" if note else "") + self.text}
        try:
            svg, _, note = self.picture()
            return {"text/html": fit_html(svg, note, narrow=self.narrow_picture()),
                    "image/svg+xml": fit_svg(svg),
                    "text/plain": (note + "\n\n" if note else "") + self.text}
        except (graphviz.ExecutableNotFound, LayoutTimeout) as err:
            why = INSTALL_HINT if isinstance(err, graphviz.ExecutableNotFound) else \
                f"{err}; the graph is shown as text instead (depth= or collapse= shrink it)."
            pre = html.escape(self.text)
            return {"text/html": f"<p>{html.escape(why)}</p><pre>{pre}</pre>",
                    "text/plain": why + "\n\n" + self.text}

    def __repr__(self) -> str:
        return f"<GraphView {self.graph.view} of {self.graph.name}: {len(self.graph)} nodes>"

    def __str__(self) -> str:
        return self.text
