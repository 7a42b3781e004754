"""``mlclab.exercise(key)``: the notebook's handle on one exercise: ``check()`` and ``hint()``.

The handle never shows the reference; ``check()`` looks the student's answer up by name in the
caller's namespace, so a check cell runs (and says "not run") before the exercise cell has.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

from .checking import run_check
from .result import Result
from .spec import NOT_RUN, Exercise

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
        return f"**{self.text()}**" if not self.exercise.hints else \
            f"**Hint {self.number} of {len(self.exercise.hints)}.** {self.exercise.hints[self.number - 1]}"


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
                                         f"`{self.exercise.answer}` is not defined: write it in the "
                                         "exercise cell and run that cell first."))
            answer = namespace[self.exercise.answer]
        return self._left(run_check(self.exercise, answer, namespace))

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
