"""Compile tinynn programs and call them: ``compile()``, ``@function``, ``Program``,
``CompiledFunction``, the compile cache and the argument checks.

TVM is imported on first use, never at ``import mlclab``: it costs seconds (and imports torch).
"""
from __future__ import annotations

import functools
import inspect
import os
import textwrap
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Optional

import numpy as np

from . import reference as _reference
from .lang import dims as D
from .lang.annotations import SHORT_NAMES
from .lang.diagnostics import DSLError
from .frontend.parser import parse_program
from .lang.typed import TensorType, TupleType, TypedProgram

__all__ = ["compile", "function", "Program", "CompiledFunction", "clear_cache", "cache_info"]

_VERSION = "0.1.0"


def tvm():
    """Import TVM once, with every core at work (it defaults to half of them on x86)."""
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    # TVM's workers busy-wait after each kernel, as OpenBLAS's do; when numpy and mlclab
    # alternate (validate, the lessons' timings) the two pools starve each other on few cores.
    os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "0")
    import tvm as _tvm

    return _tvm


# ---------------------------------------------------------------------------- the cache
class _Cache:
    """An LRU of compiled programs, keyed by normalized source, target and versions.

    Only compiled artifacts and plain data are kept; IR objects are never copied or pickled
    (that crashes TVM, TVM-NOTES §8).
    """

    def __init__(self, size: int = 64):
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.hits = self.misses = 0
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            prog = self.entries.get(key)
            if prog is None:
                self.misses += 1
                return None
            self.entries.move_to_end(key)
            self.hits += 1
            return prog

    def put(self, key, prog):
        with self.lock:
            self.entries[key] = prog
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


_CACHE = _Cache()


def clear_cache() -> None:
    """Forget every compiled program (the next compile builds afresh)."""
    with _CACHE.lock:
        _CACHE.entries.clear()
        _CACHE.hits = _CACHE.misses = 0


def cache_info() -> dict:
    return {"hits": _CACHE.hits, "misses": _CACHE.misses, "size": len(_CACHE.entries)}


def _normalize(source: str) -> str:
    """Source with trailing blanks and blank edge lines dropped: they change nothing."""
    return "\n".join(line.rstrip() for line in source.splitlines()).strip("\n")


def _target_key(target) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, Mapping):
        return repr(sorted(target.items()))
    return str(target)


# ---------------------------------------------------------------------------- compile
def compile(source: str, *, target="llvm", filename: str = "<string>",
            force: bool = False) -> "Program":
    """Compile every tinynn function in ``source``; returns a ``Program`` (name -> function).

    Compiling the same source again for the same target is a cache hit (``force=True``
    rebuilds). A rejected program raises ``DSLError``.
    """
    if not isinstance(source, str):
        raise TypeError(f"compile(): source must be a str of tinynn code, got "
                        f"{type(source).__name__}")
    if not isinstance(filename, str):
        raise TypeError("compile(): filename must be a str")
    key = (_normalize(source), filename, _target_key(target), _VERSION)
    if not force:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
    typed = parse_program(source, filename)
    prog = Program(typed, target)
    _CACHE.put(key, prog)
    return prog


def _check_target(target):
    try:
        from .backend.passes import resolve_target

        return resolve_target(target)
    except (TypeError, ValueError):  # mlclab.backend.targets names the parameter and the reason
        raise
    except Exception as exc:   # TVM's message names the problem; ours names the parameter
        raise ValueError(f"target: {target!r} is not a target TVM knows "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                         f"use \"llvm\" for this CPU") from None


class _HoldsIR:
    """Copying or pickling TVM IR kills the process (TVM-NOTES §8). Compiled programs are
    immutable, so a copy can be the object itself; pickling is refused with the way out."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError(f"{self!r} cannot be pickled (it holds TVM IR); pickle its source and "
                        f"call mlclab.compile(source) again")


class Program(_HoldsIR, Mapping):
    """Every function of one compiled tinynn source, in source order, plus the module."""

    def __init__(self, typed: TypedProgram, target):
        from .backend.builder import build_module

        self.typed = typed
        self.source = typed.source
        self.filename = typed.filename
        self.target = target
        _check_target(target)
        built = build_module(typed)
        self.mod = built.mod
        self._bindings = built.bindings
        # ``optimized`` is False when mlclab's own passes failed and TVM's plain CPU pipeline
        # built the program instead; fn.pipeline() then shows that pipeline.
        self.executable, self.optimized = _build(self.mod, target)
        self._vm = None
        self.lock = threading.Lock()
        self._functions = {name: CompiledFunction(self, name) for name in typed.functions}
        self._traces: dict = {}

    @property
    def vm(self):
        if self._vm is None:
            t = tvm()
            from tvm import relax

            self._vm = relax.VirtualMachine(self.executable, t.cpu())
        return self._vm

    def traced(self, name: str):
        """``name`` rebuilt so that it also returns every top-level binding (cached)."""
        if name not in self._traces:
            from tvm import relax

            from .backend.builder import build_module

            built = build_module(self.typed, trace=name)
            ex, _ = _build(built.mod, self.target)
            self._traces[name] = (built, relax.VirtualMachine(ex, tvm().cpu()))
        return self._traces[name]

    def __getitem__(self, name):
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no function {name!r} in this program; it has "
                           f"{', '.join(self._functions)}") from None

    def __iter__(self):
        return iter(self._functions)

    def __len__(self):
        return len(self._functions)

    def __repr__(self):
        return f"<mlclab.Program {', '.join(self._functions)} ({self.target})>"



def _build(mod, target_name):
    """Compile with mlclab's pipeline, or with TVM's plain one if that fails.

    Returns the executable and whether the optimized pipeline built it.
    """
    from .backend.builder import clean_tvm_message
    from .backend.passes import build_passes

    t = tvm()
    target = _check_target(target_name)
    error = None
    for optimized in (True, False):
        passes = t.transform.Sequential(build_passes(target_name, optimized=optimized),
                                        name="mlclab.build")
        try:
            return t.compile(mod, target=target, relax_pipeline=passes), optimized
        except Exception as exc:
            error = error or exc
    raise DSLError(f"TVM could not compile this program: {clean_tvm_message(error)}",
                   internal=True, hint="this program passed mlclab's checks, so this is an "
                   "mlclab bug: please report it")


# ---------------------------------------------------------------------------- functions
class CompiledFunction(_HoldsIR):
    """One compiled tinynn function: call it with numpy arrays, get numpy arrays back."""

    def __init__(self, program: Program, name: str):
        from .runtime import Marshaller

        self.program = program
        self.name = name
        self.__name__ = name
        self.__qualname__ = name
        self.typed = program.typed.functions[name]
        self.bindings = program._bindings[name]
        self._marshaller = Marshaller([p.type.dtype for p in self.typed.params])
        self._vm_fn = None

    # the contract of docs/architecture.md
    @property
    def source(self) -> str:
        return self.program.source

    @property
    def mod(self):
        return self.program.mod

    @property
    def relax_function(self):
        return self.program.mod[self.name]

    @property
    def target(self):
        return self.program.target

    @property
    def executable(self):
        return self.program.executable

    @property
    def params(self):
        return self.typed.params

    @property
    def ret_type(self):
        return self.typed.ret_type

    def signature(self) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.typed.params)
        return f"{self.name}({params}) -> {self.typed.ret_type}"

    def __repr__(self):
        return f"<mlclab function {self.signature()}>"

    # ------------------------------------------------------------------ calling
    def check_args(self, args, caller: Optional[str] = None) -> list:
        """The arguments as numpy arrays of the declared dtypes, or a clear error."""
        caller = caller or self.name
        params = self.typed.params
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise TypeError(f"{caller}() takes {len(params)} argument{'s' * (len(params) != 1)} "
                            f"({names}) but {len(args)} {'was' if len(args) == 1 else 'were'} given")
        sizes: dict = {}
        where: dict = {}
        out = []
        for p, a in zip(params, args):
            arr = _as_array(a, p.type.dtype, p.name, caller)
            want: TensorType = p.type
            if arr.ndim != want.ndim:
                raise ValueError(f"{caller}(): argument {p.name} must have shape "
                                 f"{_fmt_shape(want.shape)} (rank {want.ndim}), got shape "
                                 f"{tuple(arr.shape)} (rank {arr.ndim})")
            for axis, (d, n) in enumerate(zip(want.shape, arr.shape)):
                if isinstance(d, int):
                    if d != n:
                        raise ValueError(f"{caller}(): argument {p.name} must have shape "
                                         f"{_fmt_shape(want.shape)}, got {tuple(arr.shape)} "
                                         f"(dimension {axis} is {n}, expected {d})")
                elif d in sizes and sizes[d] != n:
                    raise ValueError(
                        f"{caller}(): symbolic size {d!r} is {sizes[d]} from argument {where[d]} "
                        f"but {n} in argument {p.name} (shape {tuple(arr.shape)})")
                else:
                    sizes[d], where[d] = n, p.name
            out.append(arr)
        return out

    def __call__(self, *args):
        arrays = self.check_args(args)
        # One VM per program, and the VM is not thread-safe: calls take turns.
        with self.program.lock:
            if self._vm_fn is None:
                self._vm_fn = self.program.vm[self.name]
            result = self._vm_fn(*self._marshaller.to_tvm(arrays))
            return self._marshaller.to_numpy(result)

    def reference(self, *args):
        """The same program evaluated by numpy, operator by operator (for validation)."""
        arrays = self.check_args(args, f"{self.name}.reference")
        return _reference.evaluate(self.program.typed, self.name, arrays)

    def reference_trace(self, *args) -> dict:
        """numpy's value of every top-level binding, keyed by its IR binding name."""
        arrays = self.check_args(args, f"{self.name}.reference_trace")
        built, _ = self.program.traced(self.name)
        expr_vars = built.expr_vars[self.name]
        wanted = set(self._trace_names())
        out = {}

        def record(expr, value):
            var = expr_vars.get(expr)
            if var is not None and var.name in wanted:
                out[var.name] = value

        _reference.evaluate(self.program.typed, self.name, arrays, record)
        return {k: out[k] for k in self._trace_names() if k in out}

    def trace(self, *args) -> dict:
        """TVM's value of every top-level binding, keyed by its IR binding name."""
        arrays = self.check_args(args, f"{self.name}.trace")
        built, vm = self.program.traced(self.name)
        with self.program.lock:
            result = vm[self.name](*self._marshaller.to_tvm(arrays))
            values = self._marshaller.to_numpy(result[1])
        return dict(zip(self._trace_names(), values))

    def _trace_names(self) -> list:
        built, _ = self.program.traced(self.name)
        fn = built.mod[self.name]
        ret = fn.body.body
        inter = ret.fields[1].fields if hasattr(ret, "fields") else []
        return [v.name for v in inter]

    # ------------------------------------------------------------------ views
    def graph(self, view: str = "dataflow", **opts):
        """The computation graph: ``"dataflow"`` (graph binding), ``"tree"`` or ``"let"``."""
        from .viz.views import graph

        return graph(self, view, **opts)

    def text(self, style: str = "relax", **options) -> str:
        """The program as text: ``"relax"``, ``"relay"``, ``"let"`` or ``"tir"`` (options as in
        ``mlclab.inspect.text.text``, e.g. ``names="fresh"`` for ``%v1``-style let names)."""
        from .inspect.text import text

        return text(self, style, **options)

    def pipeline(self):
        """The build pipeline applied one pass at a time."""
        from .inspect.pipeline import pipeline

        return pipeline(self)

    def viewer(self, view: str = "dataflow", **options):
        """The interactive graph viewer (a widget; a static SVG where widgets cannot run)."""
        from .notebook.graphs import function_viewer

        return function_viewer(self, view=view, **options)


def _fmt_shape(shape) -> str:
    inner = ", ".join(D.format_dim(d) if isinstance(d, int) else repr(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _as_array(a, dtype: str, name: str, caller: str) -> np.ndarray:
    short = SHORT_NAMES.get(dtype, dtype)
    if isinstance(a, np.ndarray) or isinstance(a, np.generic):
        arr = np.asarray(a)
        if arr.dtype != np.dtype(dtype):
            raise TypeError(f"{caller}(): argument {name} must be a {dtype} array ({short}), got "
                            f"{arr.dtype}; convert it with {name}.astype(\"{dtype}\")")
        return arr
    if isinstance(a, (bool, int, float, list, tuple)) or hasattr(a, "__array__"):
        try:
            raw = np.asarray(a)
        except Exception as exc:
            raise TypeError(f"{caller}(): argument {name} could not be made into a tensor "
                            f"({exc})") from None
        if raw.dtype == object or raw.dtype.kind not in "biuf":
            raise TypeError(f"{caller}(): argument {name} must hold numbers, got {raw.dtype} "
                            f"from {type(a).__name__}")
        want = np.dtype(dtype)
        if hasattr(a, "__array__") and not isinstance(a, (list, tuple)) and raw.dtype != want:
            raise TypeError(f"{caller}(): argument {name} must be {dtype} ({short}), got "
                            f"{raw.dtype}; convert it first")
        if raw.dtype.kind == "f" and want.kind in "iub":
            raise TypeError(f"{caller}(): argument {name} holds floats but the parameter is "
                            f"{dtype}; pass integers or convert with np.asarray(..., "
                            f"dtype=\"{dtype}\")")
        if want.kind in "iu" and raw.size and raw.dtype.kind in "iu":
            info = np.iinfo(want)
            if raw.min() < info.min or raw.max() > info.max:
                raise ValueError(f"{caller}(): argument {name} has values outside {dtype}'s range")
        return raw.astype(want)
    raise TypeError(f"{caller}(): argument {name} must be a numpy array (or a list or number), "
                    f"got {type(a).__name__}")


# ---------------------------------------------------------------------------- decorator
def function(fn=None, *, target="llvm"):
    """Compile a Python function written in tinynn: ``@mlclab.function`` or
    ``@mlclab.function(target="llvm")``. The body is read from the source, never run."""
    if fn is None:
        return functools.partial(function, target=target)
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"mlclab.function decorates a def, got {type(fn).__name__}")
    try:
        lines, start = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError):
        raise TypeError(f"mlclab.function cannot read the source of {fn.__name__!r} (was it made "
                        f"with exec?); pass the source text to mlclab.compile instead") from None
    # Pad with blank lines so line numbers in errors are the file's own.
    text = "\n" * (start - 1) + textwrap.dedent("".join(lines))
    prog = compile(text, target=target, filename=filename)
    compiled = prog[fn.__name__]
    compiled.__doc__ = fn.__doc__
    compiled.__module__ = fn.__module__
    compiled.__wrapped__ = fn
    return compiled
