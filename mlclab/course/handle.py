"""``mlclab.exercise(key)``: the notebook's handle on one exercise: ``check()`` and ``hint()``.

The handle never shows the reference; ``check()`` looks the student's answer up by name in the
caller's namespace, so a check cell runs (and says "not run") before the exercise cell has.

A live check is formative: it runs in the student's own kernel, so anything the notebook does
(replacing ``mlclab.exercise``, a check's helpers, the reference) can fool it. Only a graded run
(``python -m mlclab.course grade``: the notebook in a sandbox, the answer checked in a clean
process) counts. What a live check does guarantee is that it returns: the student's code runs
under the exercise's time limit.
"""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Optional

from .checking import run_check
from .result import Result
from .spec import FAILED, NOT_RUN, Exercise

_MISSING = object()


class Hint:
    def __init__(self, exercise: Exercise, number: int):
        self.exercise, self.number = exercise, number

    def text(self) -> str:
        total = len(self.exercise.hints)
        if not total:
            return f"{self.exercise.title}: this exercise has no hints."
        return f"Hint {self.number} of {total}: {self.exercise.hints[self.number - 1]}"

    def __repr__(self) -> str:
        return self.text()

    def _repr_markdown_(self) -> str:
        hints = self.exercise.hints
        if not hints:
            return f"**{self.text()}**"
        return f"**Hint {self.number} of {len(hints)}.** {hints[self.number - 1]}"


class CheckTimeout(BaseException):
    """Raised in the student's code when a live check's time is up (a BaseException, so an
    ``except Exception`` in the answer does not swallow it)."""


@contextmanager
def time_limit(seconds: float):
    """Interrupt the main thread after ``seconds`` (SIGALRM). Elsewhere (a thread, Windows) there
    is no way to stop Python code from outside, so the code runs unlimited there."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    if not in_main_thread or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise CheckTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class ExerciseHandle:
    def __init__(self, exercise: Exercise):
        self.exercise = exercise
        self.hints_shown = 0

    @property
    def key(self) -> str:
        return self.exercise.key

    def check(self, answer: Any = _MISSING, *, namespace: Optional[dict] = None) -> Result:
        """Check the answer (by default: the exercise's name in the calling cell's namespace)."""
        if namespace is None:
            namespace = sys._getframe(1).f_globals
        if answer is _MISSING:
            if self.exercise.answer not in namespace:
                return self._left(Result(self.exercise, NOT_RUN,
                                         f"`{self.exercise.answer}` is not defined: write it in "
                                         "the exercise cell and run that cell first."))
            answer = namespace[self.exercise.answer]
        limit = self.exercise.time_limit_s
        try:
            with time_limit(limit):
                result = run_check(self.exercise, answer, namespace)
        except CheckTimeout:
            result = Result(self.exercise, FAILED,
                            f"the check stopped your `{self.exercise.answer}` after {limit:g} s, "
                            f"the time limit of {self.exercise.key}: does a loop never end?")
        return self._left(result)

    def hint(self) -> Hint:
        """The next hint; the last one again once all are shown."""
        self.hints_shown = min(self.hints_shown + 1, len(self.exercise.hints))
        return Hint(self.exercise, max(self.hints_shown, 1))

    def _left(self, result: Result) -> Result:
        result.hints_left = len(self.exercise.hints) - self.hints_shown
        return result

    def __repr__(self) -> str:
        return (f"<exercise {self.key}: {self.exercise.title}; answer `{self.exercise.answer}`, "
                f"{len(self.exercise.hints)} hints>")
