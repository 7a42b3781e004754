"""mlclab: learn machine-learning compilation by compiling tiny neural networks with TVM.

``import mlclab`` is light: TVM, graphviz and the notebook layer load on first use.
"""
from . import tvm_setup as _tvm_setup

_tvm_setup.prepare()   # before anything imports TVM: torch kept out of it, threads sized

from .lang.annotations import Tensor, f16, f32, f64, i8, i16, i32, i64, u8
from .lang.diagnostics import DSLError
from .api import (CompiledFunction, InternalError, Program, cache_dir, cache_info, clear_cache,
                  compile, function, validate)
from .api import displays as _displays
from .viz.views import register_browser_form as _register_browser_form
from .api.profiling import compare_profiles
from .api.torch_model import TorchFunction, from_torch
from .backend.extra_passes import extra_passes
from .backend.record import FallbackWarning
from .frontend.torchvision_compat import import_torchvision
from .course import exercise
from .threadpool import threads

__version__ = "0.1.0"

__all__ = ["Tensor", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "DSLError",
           "InternalError", "compile", "function", "validate", "Program", "CompiledFunction",
           "clear_cache", "cache_info", "cache_dir", "compare_profiles", "import_torchvision",
           "from_torch", "TorchFunction", "FallbackWarning", "extra_passes", "exercise",
           "load_ipython_extension", "compare", "threads"]

# The notebook layer's displays, attached by name so nothing loads until one is shown.
_displays.register("viewer", "mlclab.notebook.graphs:function_viewer")
_displays.register("validation_widget", "mlclab.notebook.widgets:validation_widget")
_displays.register("validation_html", "mlclab.notebook.report_html:report_html")
_displays.register("widget_bundle", "mlclab.notebook.widgets:widget_bundle")
_displays.register("show_validation", "mlclab.notebook.widgets:show_validation")
_displays.register("profile_html", "mlclab.notebook.profile_html:profile_html")
_displays.register("profile_compare_html", "mlclab.notebook.profile_html:comparison_html")
_displays.register("function_display", "mlclab.notebook.cell_display:function_display")
_displays.register("show_function", "mlclab.notebook.cell_display:show_function")
_displays.register("compare", "mlclab.notebook.compare:compare")
# Where no `dot` program exists, fn.graph() is laid out by the browser.
_register_browser_form("mlclab.notebook.picture:graph_html")


def compare(a, b, view: str = "dataflow", match=None, full: bool = False):
    """Two graphs side by side, nodes matched, selection synced, differences marked
    (``mlclab.notebook.compare``; docs/visualizer.md). ``a``/``b``: a compiled function, a
    step of a build (``fn.pipeline().step("FuseOps")``) or ``(fn, "FuseOps")``."""
    return _displays.lookup("compare")(a, b, view=view, match=match, full=full)


def load_ipython_extension(ipython):
    """``%load_ext mlclab``: registers the ``%%tinynn`` and ``%%solution`` cell magics."""
    from .course.solution_magic import load_ipython_extension as _load_solution
    from .notebook.magic import load_ipython_extension as _load

    _load(ipython)
    _load_solution(ipython)
