"""``compile()``, ``Program`` and the ``@function`` decorator: tinynn source in, compiled
functions out, through the compile cache."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import textwrap
import threading
import weakref
from collections.abc import Mapping

from .. import ops
from ..frontend.parser import parse_program
from ..lang.typed import TypedProgram
from ..backend import extra_passes
from ..tvm_setup import IR_LOCK
from . import cache
from .build import Built, check_target
from .errors import boundary
from .function import CompiledFunction
from .holds_ir import HoldsCompiledIR


@boundary("compiling")
def compile(source: str, *, target="llvm", filename: str = "<string>",
            force: bool = False, fast_math: bool = False) -> "Program":
    """Compile every tinynn function in ``source``; returns a ``Program`` (name -> function).

    Compiling the same text again for the same target is a cache hit, whatever the filename,
    in memory or on disk (``mlclab.cache_info()``; ``force=True`` rebuilds). A rejected program
    raises ``DSLError``.
    The compiled code computes numpy's answers (IEEE 754 floats, wrapping integers);
    ``fast_math=True`` lets TVM and LLVM rewrite float arithmetic as if it were exact
    (``(x + c) - c`` is ``x``, ``a * b + c`` one fused multiply-add), for speed.
    """
    if not isinstance(source, str):
        raise TypeError(f"compile(): source must be a str of tinynn code, got "
                        f"{type(source).__name__}")
    if not isinstance(filename, str):
        raise TypeError("compile(): filename must be a str")
    if not isinstance(fast_math, bool):
        raise TypeError(f"compile(): fast_math must be True or False, got {fast_math!r}")
    check_target(target)
    options = {"fast_math": True} if fast_math else {}   # every compile option but the target
    # The cache is keyed by the text: a build with the user's own passes neither comes from it
    # nor goes into it (mlclab.backend.extra_passes).
    uncached = force or bool(extra_passes.active())
    key = cache.key(source, target, options, ops.generation())
    hit = None if uncached else cache.CACHE.get(key)
    if hit is not None:
        return hit.renamed(filename, source)
    # On disk, a restarted kernel's program (or the class's shared one) is loaded, not built;
    # not while a student's own operator is in the table: its code is the kernel's alone, and
    # the table's generation counts registrations in this process only.
    own_ops = any(not op.built_in for op in ops.OPS.values())
    stored = None if uncached or own_ops else cache.Stored(key)
    with IR_LOCK:   # TVM's builders are process-wide (tvm_setup.IR_LOCK)
        typed = parse_program(source, filename)
        prog = Program(typed, target, Built.of_program(typed, target, fast_math, stored))
    if not extra_passes.active():
        cache.CACHE.put(key, prog)
    return prog


class Program(HoldsCompiledIR, Mapping):
    """Every function of one compiled tinynn source, in source order, plus the module."""

    function_class = CompiledFunction     # what ``program[name]`` makes

    def __init__(self, typed: TypedProgram, target, built: Built = None,
                 fast_math: bool = False):
        self.typed = typed
        self.source = typed.source
        self.filename = typed.filename
        self.target = target
        self.built = built if built is not None else Built.of_program(typed, target, fast_math)
        # Functions are made on demand and held weakly: a function points at its program, so
        # a strong table here would be a reference cycle, and an evicted program's native code
        # would wait for the cyclic garbage collector.
        self._functions = weakref.WeakValueDictionary()
        self._functions_lock = threading.Lock()

    def renamed(self, filename: str, source: str) -> "Program":
        """This program as compiled from ``source`` in ``filename`` (the same text up to
        trailing blanks): a cache hit from another cell shares the compiled code but has its
        own filename and text for errors and views. (The IR's spans keep the first name.)"""
        if filename == self.filename:
            return self
        typed = dataclasses.replace(self.typed, filename=filename, source=source)
        return Program(typed, self.target, self.built)  # (fast_math is the built's)

    # the compiled artefacts, shared with renamed programs
    @property
    def mod(self):
        return self.built.mod

    @property
    def executable(self):
        return self.built.executable

    @property
    def optimized(self) -> bool:
        return self.built.optimized

    @property
    def fast_math(self) -> bool:
        """Whether it was compiled with ``fast_math=True`` (False: numpy's answers)."""
        return self.built.fast_math

    @property
    def build_record(self):
        """What each pass of the build did (``mlclab.backend.record.BuildRecord``)."""
        return self.built.record

    @property
    def lock(self):
        return self.built.lock

    @property
    def vm(self):
        return self.built.vm

    def traced(self, name: str):
        return self.built.traced(name)

    # Mapping
    def __getitem__(self, name):
        if name not in self.typed.functions:
            raise KeyError(f"no function {name!r} in this program; it has "
                           f"{', '.join(self.typed.functions)}")
        with self._functions_lock:
            fn = self._functions.get(name)
            if fn is None:
                fn = self._functions[name] = self.function_class(self, name)
            return fn

    def __iter__(self):
        return iter(self.typed.functions)

    def __len__(self):
        return len(self.typed.functions)

    def __repr__(self):
        math = ", fast-math" if self.fast_math else ""
        return f"<mlclab.Program {', '.join(self.typed.functions)} ({self.target}{math})>"


def function(fn=None, *, target="llvm", fast_math: bool = False):
    """Compile a Python function written in tinynn: ``@mlclab.function``,
    ``@mlclab.function(target="llvm")`` or ``@mlclab.function(fast_math=True)`` (see
    ``compile``). The body is read from the source, never run."""
    if fn is None:
        return functools.partial(function, target=target, fast_math=fast_math)
    return _decorate(fn, target, fast_math)


@boundary(lambda fn, target, *_: f"compiling {getattr(fn, '__name__', 'a function')}")
def _decorate(fn, target, fast_math=False):
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
    compiled = compile(text, target=target, filename=filename,
                       fast_math=fast_math)[fn.__name__]
    compiled.__doc__ = fn.__doc__
    compiled.__module__ = fn.__module__
    compiled.__wrapped__ = fn
    return compiled
