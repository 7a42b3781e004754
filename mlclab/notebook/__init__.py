"""The notebook layer: ``%%tinynn``, the validation widget and the graph viewer widget."""
from .magic import TinyNNMagics, load_ipython_extension
from .viewer import GraphViewer, sanitize_svg

__all__ = ["GraphViewer", "TinyNNMagics", "load_ipython_extension", "sanitize_svg"]
