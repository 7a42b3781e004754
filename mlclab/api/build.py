"""Building a typed program for a target: the Relax module, the executable (mlclab's
pipeline, or TVM's plain one if that fails), and what is made from them on demand (the VM,
traced builds). Renamed programs (a cache hit under another filename) share one ``Built``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..lang.diagnostics import DSLError
from ..lang.typed import TypedProgram
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


def build_executable(mod, target):
    """Compile ``mod`` with mlclab's pipeline, or with TVM's plain one if that fails.

    Returns the executable and whether the optimized pipeline built it.
    """
    from ..backend.builder import clean_tvm_message
    from ..backend.passes import build_passes
    from ..backend.tvm_log import quiet

    t = tvm()
    resolved = check_target(target)
    error = None
    for optimized in (True, False):
        passes = t.transform.Sequential(build_passes(target, optimized=optimized),
                                        name="mlclab.build")
        try:
            with quiet():        # TVM's C++ warnings would reach the notebook cell
                return t.compile(mod, target=resolved, relax_pipeline=passes), optimized
        except Exception as exc:
            error = error or exc
    raise DSLError(f"TVM could not compile this program: {clean_tvm_message(error)}",
                   internal=True, hint="this program passed mlclab's checks, so this is an "
                   "mlclab bug: please report it")


class Built:
    """Everything compiled from one Relax module for one target.

    ``trace(name)`` makes the traced build's module: something whose ``mod`` holds ``name``
    also returning the values of its top-level bindings (``backend.trace``'s shape). A DSL
    program rebuilds from its typed program (``of_program``); an imported model rewrites its IR.

    Holds no reference back to a ``Program`` or a function, so when the cache evicts a
    program and its users let go, reference counting frees the native code at once instead of
    leaving it to the cyclic garbage collector.
    """

    def __init__(self, mod, bindings: dict, target, trace: Callable[[str], Any]):
        self.mod = mod
        self.bindings = bindings          # function name -> {relax.Var: BindingInfo}
        self.target = target
        self._trace = trace
        # ``optimized`` is False when mlclab's own passes failed and TVM's plain CPU pipeline
        # built the program instead; fn.pipeline() then shows that pipeline.
        self.executable, self.optimized = build_executable(self.mod, target)
        # One VM per program, and a VM is not thread-safe: calls take turns on this lock.
        self.lock = threading.RLock()
        self._vm = None
        # function name -> what calling it prepares (api.function's call state): a program
        # keeps its functions weakly, so this outlives each CompiledFunction
        self.call_states: dict = {}
        self._traces: dict = {}

    @classmethod
    def of_program(cls, typed: TypedProgram, target) -> "Built":
        from ..backend.builder import build_module

        module = build_module(typed)
        return cls(module.mod, module.bindings, target,
                   lambda name: build_module(typed, trace=name))

    @property
    def vm(self):
        with self.lock:
            if self._vm is None:
                from tvm import relax

                self._vm = relax.VirtualMachine(self.executable, tvm().cpu())
            return self._vm

    def traced(self, name: str):
        """``name`` rebuilt so that it also returns every top-level binding (cached)."""
        with self.lock:
            if name not in self._traces:
                from tvm import relax

                with IR_LOCK:   # TVM's builders are process-wide (tvm_setup.IR_LOCK)
                    module = self._trace(name)
                    executable, _ = build_executable(module.mod, self.target)
                self._traces[name] = (module, relax.VirtualMachine(executable, tvm().cpu()))
            return self._traces[name]
