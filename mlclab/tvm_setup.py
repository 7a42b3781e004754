"""TVM's one-time import and set-up, shared by the build and the runtime.

TVM is imported on first use, never at ``import mlclab``: it costs seconds (and imports torch).
"""
from __future__ import annotations

import functools
import gc
import os
import threading

_READY = False

#: Held while mlclab builds or compiles TVM IR. TVM's Python ``BlockBuilder`` keeps the
#: builder being used on a class-level stack (``BlockBuilder.current()``) shared by every
#: thread, and ``torch.export`` keeps process-wide state too: two threads building at once
#: pop each other's builders (an ``AssertionError`` inside TVM) or fail the export. Re-entrant,
#: so a build may start another (a traced build inside a compile). Taken by the api's entries
#: (compile, traced builds, ``from_torch``) on the calling thread; code they run on
#: ``run_deep``'s worker thread must not take it again (the caller holds it for the worker).
IR_LOCK = threading.RLock()


def holding_ir_lock(fn):
    """Decorator: ``fn`` runs holding :data:`IR_LOCK`."""

    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with IR_LOCK:
            return fn(*args, **kwargs)

    return locked


def tvm():
    """The ``tvm`` module, imported once with mlclab's settings applied."""
    global _READY
    # Every core at work (TVM defaults to half of them on x86).
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    # TVM's workers busy-wait after each kernel, as OpenBLAS's do; when numpy and mlclab
    # alternate (validate, the lessons' timings) the two pools starve each other on few cores.
    os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "0")
    import tvm as _tvm

    if not _READY:
        _guard_ir_copies(_tvm)
        _guard_compiled_copies(_tvm)
        # Importing TVM leaves garbage reference cycles that hold the import's frames, and so
        # every frame of the caller's stack with its local variables (the first compiled
        # Program among them) until the cyclic collector runs: collect them now, once.
        gc.collect()
        _READY = True
    return _tvm


def _refuse_pickle(self):
    raise TypeError(f"a TVM {type(self).__name__} cannot be pickled: TVM 0.27's serializer "
                    "crashes the process on IR; keep the tinynn source and compile it again")


def _same_object(self, memo=None):
    return self


class HoldsIR:
    """Base of mlclab's own objects that hold TVM IR (a compiled function, a pipeline step, a
    view's subject): immutable once built, so a copy is the object itself, and pickling -- which
    would reach TVM's serializer, see :func:`_guard_ir_copies` -- is refused saying what to
    save instead (``pickle_instead``)."""

    pickle_instead = "keep the tinynn source and compile it again"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError(f"{self._held_name()} holds TVM IR, which cannot be pickled; "
                        f"{self.pickle_instead}")

    def _held_name(self) -> str:
        return f"a {type(self).__name__}"


def _guard_ir_copies(tvm_module) -> None:
    """Make copying TVM IR safe and pickling it a ``TypeError`` instead of a segfault.

    ``copy.copy``, ``copy.deepcopy`` and ``pickle.dumps`` of an IR node go through TVM-FFI's
    JSON graph serializer, which kills the process when it writes an object's DataType
    *field*: ``tvm.ir.save_json(tvm.ir.PrimType("int32"))`` alone is a SIGSEGV, while a bare
    ``DataType``, a ``Span``, an empty ``TupleType`` or a ``GlobalVar`` serialize fine. So it is
    neither spans nor mlclab's attributes but a bug inside TVM 0.27, and every Relax
    expression, type and module holds dtypes: ``fn.mod``, a binding's var, a pipeline step.

    IR nodes are immutable, so a copy may share them: ``copy``/``deepcopy`` return the node
    itself (a container of them -- a dict, a pipeline -- then copies for real), and pickling
    raises a ``TypeError`` saying why. Compiled code and runtime tensors are not IR nodes:
    :func:`_guard_compiled_copies` handles them.
    """
    for cls in (tvm_module.ir.Node, tvm_module.ir.Attrs, tvm_module.ir.Span,
                tvm_module.ir.SourceName):
        cls.__copy__ = _same_object
        cls.__deepcopy__ = _same_object
        cls.__reduce__ = _refuse_pickle
        cls.__reduce_ex__ = lambda self, protocol: _refuse_pickle(self)


def _refuse_pickle_compiled(self):
    raise TypeError(f"a TVM {type(self).__name__} (compiled code) cannot be pickled: TVM keeps "
                    "its machine code in memory only; keep the source and compile it again, or "
                    "save the executable as a library with fn.executable.export_library(path)")


def _guard_compiled_copies(tvm_module) -> None:
    """Make copying compiled code well defined and pickling it a clear ``TypeError``.

    An executable, the runtime module holding its machine code and a virtual machine reach
    TVM's binary serializer when copied or pickled, which refuses with an ``InternalError``
    ("llvm is not binary serializable"). The code never changes once built, so a copy is the
    object itself (as for IR, :func:`_guard_ir_copies`); pickling says what to save instead.
    """
    import tvm_ffi
    from tvm.runtime.vm import VirtualMachine

    for cls in (tvm_module.runtime.Executable, tvm_ffi.Module, VirtualMachine):
        cls.__copy__ = _same_object
        cls.__deepcopy__ = _same_object
        cls.__reduce__ = _refuse_pickle_compiled
        cls.__reduce_ex__ = lambda self, protocol: _refuse_pickle_compiled(self)
    # A runtime tensor pickles through TVM's serializer into one that segfaults when read
    # (TVM 0.27): through numpy instead, the data it holds (mlclab runs on the CPU).
    tensor = tvm_module.runtime.Tensor
    tensor.__reduce__ = _tensor_reduce
    tensor.__reduce_ex__ = lambda self, protocol: _tensor_reduce(self)


def _tensor_reduce(self):
    from tvm.runtime import tensor

    return tensor, (self.numpy(),)
