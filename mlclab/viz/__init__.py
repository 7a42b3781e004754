"""See the program: graph model, Relax -> graph parsers, Dot and terminal plotters, binding views.

The split follows TVM's relay_viz: a parser turns IR into a plain graph (``Graph``), a plotter
draws it (``DotPlotter`` for Graphviz/SVG, ``TermPlotter`` for text), and ``Visualizer`` ties
the two together. ``graph(fn, view)`` gives the dataflow, tree and let binding views.
"""
from .dot import INSTALL_HINT, DotPlotter, MissingDotWarning
from .model import Cluster, Edge, Graph, Node
from .parser import DataflowParser, LetParser, RelaxParser, TreeParser
from .term import TermPlotter
from .views import GraphView, graph
from .visualizer import Visualizer

__all__ = ["Visualizer", "DotPlotter", "TermPlotter", "DataflowParser", "TreeParser",
           "LetParser", "RelaxParser", "Graph", "Node", "Edge", "Cluster", "GraphView", "graph",
           "MissingDotWarning", "INSTALL_HINT"]
