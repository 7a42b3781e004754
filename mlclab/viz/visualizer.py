"""``Visualizer``: parse a Relax function with a parser, draw it with a plotter (relay_viz's
API)."""
from __future__ import annotations

from typing import Optional

from .dot import DotPlotter
from .modules import group_modules
from .parser import DataflowParser


class Visualizer:
    """``Visualizer(mod_or_fn, plotter=..., parser=..., params=None).render(filename=None)``.

    ``mod_or_fn`` is an mlclab compiled function, a ``relax.Function`` or an ``IRModule`` (its
    ``main`` is shown, with every function it calls). ``params`` maps parameter names to the
    arrays bound to them (weights), which are then drawn as constants. ``render`` returns what
    the plotter makes: the text for ``TermPlotter``, the ``graphviz.Digraph`` for ``DotPlotter``
    (or the written file's path when ``filename`` is given).
    """

    def __init__(self, mod_or_fn, plotter=None, parser=None, params: Optional[dict] = None,
                 function: Optional[str] = None):
        self.plotter = plotter if plotter is not None else DotPlotter()
        self.parser = parser if parser is not None else DataflowParser()
        # An imported PyTorch model's nodes go into their module clusters (as in fn.graph()).
        self.graph = group_modules(self.parser.parse(mod_or_fn, function=function,
                                                     params=params))

    def render(self, filename: Optional[str] = None):
        return self.plotter.render(self.graph, filename)
