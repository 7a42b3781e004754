"""The one exception policy at the api boundary.

What leaves ``compile()``, ``@function``, a call, ``reference`` or ``validate`` is either a
user's mistake -- ``DSLError`` (located), ``TypeError``/``ValueError`` (naming the parameter),
``MemoryError`` (with the figure), ``IndexOutOfBounds`` (numpy's ``IndexError``) -- or an
:class:`InternalError`: a short "mlclab bug" line, with the original exception chained
for whoever debugs it, never TVM's traceback as the message.
"""
from __future__ import annotations

import functools
import os
import types

from ..frontend.torch_indices import INDEX_ERROR, IndexOutOfRange
from ..lang.diagnostics import DSLError

_RED, _RESET = "\x1b[1;31m", "\x1b[0m"


class IndexOutOfBounds(IndexError):
    """numpy's IndexError for an index the student wrote that is outside its axis at this
    call (``x[5]`` with n = 2): a user's mistake, unlike an IndexError from inside mlclab."""


#: What a student's input can legitimately cause; these leave mlclab unchanged.
USER_ERRORS = (DSLError, TypeError, ValueError, MemoryError, IndexOutOfBounds)

_FROM_USER_CODE = "_mlclab_from_user_code"


class InternalError(RuntimeError):
    """Something failed inside mlclab or TVM that the checks should have prevented: a bug."""


def from_user_code(exc: BaseException) -> BaseException:
    """Mark ``exc`` as raised by the student's own code (a numpy reference function passed to
    ``validate``): it leaves the boundary as it is."""
    setattr(exc, _FROM_USER_CODE, True)
    return exc


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def shortened(exc: BaseException) -> BaseException:
    """``exc`` without mlclab's own frames in its traceback, to raise at the boundary.

    A student's mistake is said by the message; the 40-50 lines of mlclab internals above it
    would only bury it. So a user error raised by mlclab leaves with no frames below the
    boundary, and an error from the student's own code (a reference function) keeps the frames
    of that code and of what it called, with mlclab's between them dropped. (The boundary's
    own frame is marked ``__tracebackhide__``, which IPython honours.) An ``InternalError``
    keeps everything: its cause is what a bug report needs.
    """
    if isinstance(exc, InternalError):
        return exc
    if not getattr(exc, _FROM_USER_CODE, False):
        return compact(exc).with_traceback(None)
    kept = []
    tb = exc.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    chain = None
    for tb in reversed(kept):
        chain = types.TracebackType(chain, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return exc.with_traceback(chain)


def compact_traceback(kind: str, message: str) -> list[str]:
    """What IPython prints instead of a traceback: ``kind: first line`` then the rest."""
    first, *rest = message.splitlines() or [""]
    return [f"{_RED}{kind}{_RESET}: {first}", *rest]


def compact(exc: BaseException) -> BaseException:
    """``exc`` shown in a notebook as its message alone, as a DSL error is: IPython asks an
    exception for ``_render_traceback_()`` before formatting one. Set on the instance, so the
    exception keeps its type for code that catches it; plain Python still prints a traceback."""
    exc._render_traceback_ = _Compact(type(exc).__name__, str(exc))
    return exc


class _Compact:
    """The ``_render_traceback_`` :func:`compact` sets: a class, not a lambda, so that the
    exception still pickles (multiprocessing sends exceptions back that way)."""

    def __init__(self, kind: str, message: str):
        self.kind, self.message = kind, message

    def __call__(self) -> list[str]:
        return compact_traceback(self.kind, self.message)


def passes_through(exc: BaseException) -> bool:
    """Whether ``exc`` leaves the boundary as it is."""
    return (isinstance(exc, (USER_ERRORS, InternalError))
            or getattr(exc, _FROM_USER_CODE, False))


def translate(exc: Exception, what: str) -> Exception:
    """The exception to raise for ``exc`` escaping ``what`` (e.g. ``"calling foo"``)."""
    if passes_through(exc):
        return exc
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    if isinstance(exc, AssertionError) and INDEX_ERROR in str(exc):
        # An imported model's in-graph index check (frontend.torch_indices) refused an index.
        text = str(exc)
        return IndexOutOfRange(f"{what}: {text[text.index(INDEX_ERROR) + len(INDEX_ERROR):]}")
    if "bad_alloc" in str(exc):
        # TVM's allocator failing is memory the machine does not have, not a bug.
        return MemoryError(f"{what}: out of memory (TVM could not allocate a buffer)")
    if "Resource temporarily unavailable" in str(exc):
        # EAGAIN from pthread_create: TVM starts a pool of worker threads for each thread
        # that calls a parallel kernel, and the process is at its limit of address space
        # (each thread's stack) or of threads. Nothing is left half-done: a later call retries.
        return MemoryError(f"{what}: TVM could not start its worker threads (Resource "
                           f"temporarily unavailable): the process is at its limit of memory "
                           f"(ulimit -v) or of threads (ulimit -u); call from fewer threads "
                           f"or raise the limit")
    return InternalError(f"mlclab bug while {what}: {type(exc).__name__}: {first} "
                         f"(please report it with the program)")


def _describe(what, fn, args) -> str:
    if not callable(what):
        return what
    try:
        return what(*args)
    except Exception:  # describing the failure must not replace it
        return fn.__qualname__


def boundary(what):
    """Decorator applying the policy; ``what`` is a phrase or a function of the positional
    arguments."""

    def wrap(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841 (read by IPython from the frame)
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if passes_through(exc):
                    raise shortened(exc)  # noqa: B904 (the exception itself, re-raised)
                raise translate(exc, _describe(what, fn, args)) from exc

        return guarded

    return wrap
