"""The api layer: ``compile()``, ``@function``, ``Program``, ``CompiledFunction``, the compile
cache, argument and size checks, ``validate()`` and the exception policy at this boundary.

It may use every layer below it (the DSL, the build, the runtime, the texts and graphs) and
never the notebook layer: displays reach it through :mod:`mlclab.api.displays`.
"""
from .cache import cache_dir, cache_info, clear_cache
from .errors import InternalError
from .function import CompiledFunction
from .program import Program, compile, function
from .validation import validate

__all__ = ["compile", "function", "Program", "CompiledFunction", "validate", "clear_cache",
           "cache_dir", "cache_info", "InternalError"]
