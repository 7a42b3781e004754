"""The registered graph views of a function, as notebook-ready objects.

``graph(fn, view)`` is what ``CompiledFunction.graph(view)`` returns: a ``GraphView`` that holds
the graph model (``.graph``, JSON via ``.to_dict()``), draws itself as SVG in a notebook, and
falls back to the terminal text, with a hint on installing Graphviz, when ``dot`` is missing.
"""
from __future__ import annotations

import html
from typing import Optional

from .dot import INSTALL_HINT, DotPlotter, LayoutTimeout, svg_text, write
from .model import Graph
from .modules import group_modules, has_modules
from .overview import MODULE_FOLD_NODES, fold_modules
from .registry import view_kind
from .term import TermPlotter

# Folding choices of ``collapse``: which cluster kinds fold into one node. "module" folds an
# imported model's modules by level (mlclab.viz.overview.fold_modules); "auto" does that only
# past MODULE_FOLD_NODES nodes, and nothing for the DSL.
COLLAPSE = {None: (), "function": ("function",), "group": ("fused",), "all": ("function", "fused"),
            "module": ("module",), "auto": ()}


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
    if kind.after is not None:   # drawn from the build record, which the api layer reads
        raise ValueError(f"view: {view!r} is the graph after the build's {kind.after} pass: "
                         f"draw it with fn.graph({view!r}) or, for plain IR, "
                         f"mlclab.inspect.pipeline.pipeline(mod).step({kind.after!r}).graph()")
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
    return GraphView(shape(g, collapse=collapse, depth=depth))


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


class GraphView:
    """A drawn view: SVG in notebooks, text in terminals, the model for widgets."""

    def __init__(self, graph: Graph, plotter: Optional[DotPlotter] = None):
        self.graph = graph
        self.plotter = plotter or DotPlotter()
        self._dot = None

    @property
    def view(self) -> str:
        return self.graph.view

    @property
    def dot(self):
        """The ``graphviz.Digraph`` (building it needs no ``dot`` binary; drawing does)."""
        if self._dot is None:
            self._dot = self.plotter.digraph(self.graph)
        return self._dot

    @property
    def source(self) -> str:
        return self.dot.source

    @property
    def text(self) -> str:
        return TermPlotter().render(self.graph)

    def svg(self) -> str:
        """The SVG text; raises ``graphviz.ExecutableNotFound`` without Graphviz and
        ``LayoutTimeout`` when the layout takes too long."""
        return svg_text(self.dot)

    def render(self, filename: str, format: Optional[str] = None) -> str:
        """Write svg/pdf/png/dot/txt; without ``dot`` writes the text next to it and warns."""
        return write(self.dot, self.graph, filename, format)

    def to_dict(self) -> dict:
        return self.graph.to_dict()

    def nodes(self, **match):
        return self.graph.find(**match)

    def _repr_mimebundle_(self, include=None, exclude=None):
        import graphviz

        try:
            return {"image/svg+xml": self.svg(), "text/plain": self.text}
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
