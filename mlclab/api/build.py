"""Building a typed program for a target: the Relax module, the executable (mlclab's
pipeline, a failing pass of its own skipped, or TVM's plain one if that fails, said with a
``FallbackWarning``), the record of the passes that built it, and what is made from them on
demand (the VM, traced builds). Renamed programs (a cache hit under another filename) share one
``Built``.
"""
from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any, Callable

from ..lang.diagnostics import DSLError
from ..lang.typed import TypedProgram
from ..runtime import give_back_memory
from ..tvm_setup import IR_LOCK, tvm


def check_target(target):
    """The ``tvm.target.Target`` for ``target``, or a ``ValueError`` naming the parameter.

    The target registry (``mlclab.backend.targets``) refuses, with the reason, anything this
    process cannot run: a program built for another device or architecture would compile
    fine and then fail inside TVM at call time."""
    from ..backend.passes import resolve_target

    tvm()
    try:
        return resolve_target(target)
    except (TypeError, ValueError):  # the registry names the parameter and the reason
        raise
    except Exception as exc:   # TVM's message names the problem; ours names the parameter
        first = (str(exc).splitlines() or [""])[0] or type(exc).__name__
        raise ValueError(f"target: {target!r} is not a target TVM knows ({first}); "
                         f"use \"llvm\" for this CPU") from None


def build_executable(mod, target, fast_math: bool = False):
    """Compile ``mod`` with mlclab's pipeline (a failing pass of its own skipped), or with
    TVM's plain one if that still fails; strict arithmetic unless ``fast_math``.

    Returns the executable and the ``BuildRecord`` of the passes that built it
    (``mlclab.backend.record``): every view reads it instead of running the passes again.
    """
    from ..backend.builder import clean_tvm_message
    from ..backend.passes import recorded_build

    t = tvm()
    resolved = check_target(target)
    try:
        return recorded_build(mod, resolved, lambda pipeline: t.compile(
            mod, target=resolved, relax_pipeline=pipeline), fast_math)
    except Exception as error:
        raise DSLError(f"TVM could not compile this program: {clean_tvm_message(error)}",
                       internal=True, hint="this program passed mlclab's checks, so this is "
                       "an mlclab bug: please report it") from None


def warn_fallbacks(record, what: str) -> None:
    """Say in the cell (a ``FallbackWarning``) what mlclab's pipeline could not do for ``what``."""
    from ..backend.record import FallbackWarning

    if record.fallbacks:
        said = "; ".join(str(f) for f in record.fallbacks)
        warnings.warn(FallbackWarning(
            f"{what} was built without part of mlclab's pipeline, so it may run slower (the "
            f"results are the same): {said}. fn.pipeline() marks it; fn.build_record lists "
            f"it."), stacklevel=3)


def _compiled(mod, target, fast_math: bool, stored, what: str):
    """``(executable, record)``: loaded from the disk cache (``record`` None: made again when
    asked), else built -- a build that fell back is said in the cell and not stored."""
    if stored is not None:
        executable = stored.load()
        if executable is not None:
            return executable, None
    executable, record = build_executable(mod, target, fast_math)
    warn_fallbacks(record, what)
    if stored is not None and record.optimized and not record.fallbacks:
        stored.save(executable)
    return executable, record


class Built:
    """Everything compiled from one Relax module for one target.

    ``trace(name)`` makes the traced build's module: something whose ``mod`` holds ``name``
    also returning the values of its top-level bindings (``backend.trace``'s shape). A DSL
    program rebuilds from its typed program (``of_program``); an imported model rewrites its IR.

    Holds no reference back to a ``Program`` or a function, so when the cache evicts a
    program and its users let go, reference counting frees the native code at once instead of
    leaving it to the cyclic garbage collector.
    """

    def __init__(self, mod, bindings: dict, target, trace: Callable[[str], Any],
                 fast_math: bool = False, stored=None, loans=None):
        self.mod = mod
        self.bindings = bindings          # function name -> {relax.Var: BindingInfo}
        self.target = target
        self.fast_math = fast_math        # False: strict, numpy's answers (ops/strict.py)
        self._trace = trace
        # Where the disk cache keeps this build (``api.cache.Stored``), or None.
        self._stored = stored
        # An imported model's weights ``mod`` reads in PyTorch's memory
        # (``frontend.borrowed.Loans``), or None: every build from ``mod`` runs lending them
        # (the executable owns copies of what it keeps) after checking they are unchanged.
        self._loans = loans
        # What each pass of the build did (``mlclab.backend.record``), read by every view.
        # ``optimized`` is False when a pass of mlclab's own failed (and was skipped or
        # replaced) or TVM's plain pipeline built the program; the build then warns.
        with self._lending(own=True):
            self.executable, self._record = _compiled(
                self.mod, target, fast_math, stored, f"{', '.join(bindings) or 'this program'}")
        # LLVM's and the passes' garbage, and what the cells before left in the heap: a
        # build is rare enough to pay the trim, and the profile or validate that usually
        # follows starts from what is really in use (lesson 08 peaked at 747 MB, was 786).
        give_back_memory()
        # Only builds without a fallback are stored on disk, so a loaded one is optimized.
        self.optimized = self._record.optimized if self._record is not None else True
        self.from_disk = self._record is None
        # One VM per program, and a VM is not thread-safe: calls take turns on this lock.
        self.lock = threading.RLock()
        self._vm = None
        self._device = None
        # function name -> what calling it prepares (api.function's call state): a program
        # keeps its functions weakly, so this outlives each CompiledFunction
        self.call_states: dict = {}
        self._traces: dict = {}

    @classmethod
    def of_program(cls, typed: TypedProgram, target, fast_math: bool = False,
                   stored=None) -> "Built":
        from ..backend.builder import build_module

        module = build_module(typed)
        return cls(module.mod, module.bindings, target,
                   lambda name: build_module(typed, trace=name), fast_math, stored)

    @property
    def record(self):
        """The build record. An executable loaded from the disk cache has none (IR cannot be
        saved in TVM 0.27): the same passes are recorded again on ``mod`` the first time a
        view asks (``record_pipeline``, a tenth of a second, no code generation)."""
        if self._record is None:
            from ..backend.passes import record_pipeline

            with IR_LOCK:
                if self._record is None:
                    with self._lending(own=False):     # IR for the views, never run
                        self._record = record_pipeline(self.mod, self.target, self.fast_math)
        return self._record

    @property
    def device(self):
        """The device the target's code runs on (its backend's ``device``)."""
        if self._device is None:
            from ..backend.passes import device_for

            self._device = device_for(self.target)
        return self._device

    @property
    def vm(self):
        with self.lock:
            if self._vm is None:
                from tvm import relax

                self._vm = relax.VirtualMachine(self.executable, device=self.device)
            return self._vm

    def _lending(self, own: bool):
        """Where a build from ``mod`` runs: with an imported model's weights checked unchanged
        since the import, and lent (``frontend.borrowed``); ``own``: the executable copies
        what it keeps of them (the program's own build), else it reads them in place."""
        if self._loans is None:
            return contextlib.nullcontext()
        if hasattr(self, "executable"):       # a build after the first: the weights may
            self._loans.check()               # have been trained since
        return self._loans.building(own)

    def traced(self, name: str):
        """``name`` rebuilt so that it also returns every top-level binding (cached).

        An imported model's traced build reads its weights in PyTorch's memory instead of a
        copy of its own (ResNet-18: 43 MB; the program's build has re-laid out or copied
        them): they are checked unchanged at every use (``Loans.check``, a checksum), so it
        computes with the compiled weights or refuses (``WeightsChanged``)."""
        with self.lock:
            if self._loans is not None and name in self._traces:
                self._loans.check()
            if name not in self._traces:
                from tvm import relax

                stored = None if self._stored is None else self._stored.child(f"trace {name}")
                # TVM's builders are process-wide (IR_LOCK)
                with IR_LOCK, self._lending(own=False):
                    module = self._trace(name)
                    # (its record is dropped: the views show the program's own build)
                    executable, _ = _compiled(module.mod, self.target, self.fast_math, stored,
                                              f"the traced build of {name} (for trace and "
                                              f"validate)")
                self._traces[name] = (module, relax.VirtualMachine(executable, device=self.device))
            return self._traces[name]
