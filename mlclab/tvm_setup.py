"""TVM's one-time import and set-up, shared by the build and the runtime.

TVM is imported on first use, never at ``import mlclab``: it costs seconds. TVM-FFI imports
torch when it is imported (``tvm_ffi/__init__.py``, a workaround for one Windows build), which is
200-500 MB in every kernel although most lessons never use torch: :func:`defer_torch` keeps
torch out of that import (see its docstring for why nothing torch does needs it).
"""
from __future__ import annotations

import functools
import gc
import importlib.abc
import os
import sys
import threading

from .threadpool import configure_once as configure_threads

# How many times TVM's idle worker calls sched_yield, waiting for the next parallel kernel,
# before it sleeps (TVM reads it once per process). ~0.4 ms on an idle core here: enough to
# bridge the serial kernels between two parallel ones inside a model's call, so a worker
# is running when the next one comes; short enough that between calls it sleeps. A worker
# that sleeps at once (0, mlclab's setting until 2026-11-29) is woken for every parallel
# kernel, and on a VM that cost more than the second core gave: MobileNetV2 took 4.1-4.3 ms
# on 2 threads against 3.6 on 1, and 2.2 ms with this spin (docs/performance.md, section 4).
# TVM's own default, 300,000 (~0.1 s), is what OpenBLAS's workers do after a BLAS call.
POOL_SPIN_COUNT = 1000

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


class _TorchFreeTVM(importlib.abc.MetaPathFinder):
    """Finds ``tvm`` and ``tvm_ffi`` as the other finders do, but runs their module bodies with
    ``import torch`` refused on the importing thread; steps out of ``sys.meta_path`` once both
    are imported.

    What TVM does with torch when it finds it at import: TVM-FFI (1) binds ``torch`` as a global
    of its Cython core, used to pick the argument setter of a ``torch.Tensor`` -- without it the
    tensor goes by the DLPack protocol (``__dlpack_c_exchange_api__``, which torch >= 2.10
    defines on the class, is checked before it anyway) -- and of a ``torch.dtype`` argument,
    which neither TVM's PyTorch importer nor mlclab passes (they pass dtype strings); (2) builds
    or loads a DLPack speed-up extension for torch older than 2.10; (3) patches CUDA streams.
    ``tvm.relax.base_py_module`` keeps torch's legacy ``to_dlpack`` as its third fallback. A
    student's CPU tensors, ``from_torch``, TVM's ``from_exported_program``/``from_fx`` and
    ``tvm.runtime.tensor`` of a torch tensor's DLPack all work without them
    (tests/test_footprint.py). Torch imported before TVM is simply used: ``import torch`` finds
    it in ``sys.modules`` without asking a finder.
    """

    WRAPPED = ("tvm", "tvm_ffi")

    def __init__(self):
        self.thread = None   # the thread executing a wrapped module body
        self.depth = 0       # how many wrapped bodies it is inside (tvm imports tvm_ffi)

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            if self.depth and self.thread == threading.get_ident():
                raise ModuleNotFoundError("TVM is imported without torch (mlclab.tvm_setup)",
                                          name=name)
            return None
        if name not in self.WRAPPED:
            return None
        spec = None
        for finder in sys.meta_path:      # whichever finder would have found it
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is not None and spec.loader is not None:
            spec.loader = _TorchFreeLoader(spec.loader, self)
        return spec

    def enter(self) -> None:
        me = threading.get_ident()
        if self.depth and self.thread != me:
            return            # another thread's import: Python's import lock orders them
        self.thread = me
        self.depth += 1

    def leave(self) -> None:
        if self.thread != threading.get_ident():
            return
        self.depth -= 1
        if not self.depth:
            self.thread = None
            if all(name in sys.modules for name in self.WRAPPED) and self in sys.meta_path:
                sys.meta_path.remove(self)


class _TorchFreeLoader(importlib.abc.Loader):
    def __init__(self, loader, finder):
        self.loader, self.finder = loader, finder

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.finder.enter()
        try:
            self.loader.exec_module(module)
        finally:
            self.finder.leave()


_FINDER = _TorchFreeTVM()


def defer_torch() -> None:
    """Import TVM without torch from now on (``import mlclab`` calls this, so a lesson's own
    ``import tvm`` after it is light too). Does nothing once TVM is imported, or when
    ``MLCLAB_TVM_IMPORTS_TORCH=1`` asks for TVM's own behaviour."""
    if "tvm" in sys.modules or os.environ.get("MLCLAB_TVM_IMPORTS_TORCH") == "1":
        return
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def prepare() -> None:
    """What must happen before TVM is imported or runs its first parallel kernel: torch kept out
    of TVM's import, the thread pool sized to this process's CPUs (``mlclab.threads``). Run at
    ``import mlclab``, so a lesson's own ``import tvm`` after it gets both."""
    defer_torch()
    configure_threads()
    os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", str(POOL_SPIN_COUNT))


def tvm():
    """The ``tvm`` module, imported once with mlclab's settings applied."""
    global _READY
    prepare()
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
