"""The one exception policy at the api boundary.

What leaves ``compile()``, ``@function``, a call, ``reference`` or ``validate`` is either a
user's mistake -- ``DSLError`` (located), ``TypeError``/``ValueError`` (naming the parameter),
``MemoryError`` (with the figure) -- or an :class:`InternalError`: a short "mlclab bug" line,
with the original exception chained for whoever debugs it, never TVM's traceback as the message.
"""
from __future__ import annotations

import functools

from ..frontend.torch_indices import INDEX_ERROR, IndexOutOfRange
from ..lang.diagnostics import DSLError

#: What a student's input can legitimately cause; these leave mlclab unchanged.
USER_ERRORS = (DSLError, TypeError, ValueError, MemoryError)

_FROM_USER_CODE = "_mlclab_from_user_code"


class InternalError(RuntimeError):
    """Something failed inside mlclab or TVM that the checks should have prevented: a bug."""


def from_user_code(exc: BaseException) -> BaseException:
    """Mark ``exc`` as raised by the student's own code (a numpy reference function passed to
    ``validate``): it leaves the boundary as it is."""
    setattr(exc, _FROM_USER_CODE, True)
    return exc


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
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if passes_through(exc):
                    raise
                raise translate(exc, _describe(what, fn, args)) from exc

        return guarded

    return wrap
