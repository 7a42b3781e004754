"""Room for deep programs: the recursive walkers run in a thread with a large stack.

The parser, the type checker, the Relax builder and the numpy reference walk a program
recursively, a few Python frames per level of nesting. ``x + x + ... + x`` with 400 terms is an
expression 400 levels deep, and measured on Python 3.11 the checker, the builder and the
reference each need about 4 frames per level (1560 for 400 terms): past the default limit of
1000 frames. ``ast.parse`` itself builds its tree
recursively in C and stops at the same limit (a 4000-term sum fails there). Rewriting four
walkers as loops would make them much harder to read, so instead they run here: in a worker
thread with a 512 MiB stack (address space, touched only as deep as it is used) while the
recursion limit is raised to :data:`RECURSION_LIMIT`. The parser bounds nesting at
:data:`MAX_DEPTH` levels, which every walker handles within that limit, and says so in a
``DSLError`` beyond it.
"""
from __future__ import annotations

import contextvars
import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")

#: Nesting (of expressions, and of calls between DSL functions) the parser accepts.
MAX_DEPTH = 10_000
#: Python frames allowed while deep work runs: 20 per level of :data:`MAX_DEPTH` (each walker
#: needs ~4 per level of an expression, more per level of a call chain), plus the caller's.
RECURSION_LIMIT = 20 * MAX_DEPTH + 10_000
_STACK_BYTES = 512 * 1024 * 1024

_lock = threading.Lock()
_active = 0          # deep runs in progress (the limit is raised while any is)
_saved_limit = 0
_local = threading.local()


def run_deep(fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)``, run where :data:`MAX_DEPTH` levels of recursion fit.

    Exceptions propagate to the caller unchanged. Nested calls run in place.
    """
    if getattr(_local, "deep", False):
        return fn(*args, **kwargs)
    outcome: dict = {}
    # The worker sees the caller's context variables (numpy's errstate is one).
    context = contextvars.copy_context()

    def work():
        _local.deep = True
        try:
            outcome["value"] = context.run(fn, *args, **kwargs)
        except BaseException as exc:   # handed to the calling thread, which re-raises it
            outcome["error"] = exc

    _raise_limit()   # before the worker starts, which may recurse at once
    try:
        worker = _start(work)
        if worker is not None:
            worker.join()
    finally:
        _restore_limit()
    if worker is None:   # no room for a big stack (a tight ulimit -v): run with Python's limits
        return fn(*args, **kwargs)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _start(work) -> "threading.Thread | None":
    with _lock:
        old_size = threading.stack_size(_STACK_BYTES)
        try:
            worker = threading.Thread(target=work, name="mlclab-deep", daemon=True)
            worker.start()
            return worker
        except RuntimeError:   # "can't start new thread": the address space is limited
            return None
        finally:
            threading.stack_size(old_size)


def _raise_limit() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)
