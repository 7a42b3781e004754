"""mlclab: learn machine-learning compilation by compiling tiny neural networks with TVM.

``import mlclab`` is light: TVM, graphviz and the notebook layer load on first use.
"""
from .lang.annotations import Tensor, f16, f32, f64, i8, i16, i32, i64, u8
from .lang.diagnostics import DSLError
from .compile import CompiledFunction, Program, compile, function
# validate's module is named validation, so no submodule import can shadow the function.
from .validation import validate

__version__ = "0.1.0"

__all__ = ["Tensor", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "DSLError",
           "compile", "function", "validate", "Program", "CompiledFunction",
           "load_ipython_extension"]


def load_ipython_extension(ipython):
    """``%load_ext mlclab``: registers the ``%%tinynn`` cell magic."""
    from .notebook.magic import load_ipython_extension as _load

    _load(ipython)
