"""What a check says: a verdict, one message, and how many hints are left. Shown as text, as HTML,
and as JSON under its own MIME type (the lessons' tests and the grader read that one)."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .spec import PASSED

if TYPE_CHECKING:
    from .spec import Exercise

MIME = "application/vnd.mlclab.exercise+json"
_COLOURS = {PASSED: "#1a7f37"}


@dataclass
class Result:
    exercise: "Exercise"
    status: str                  # passed, failed, not run, unchanged
    message: str
    hints_left: int = 0

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __bool__(self) -> bool:
        return self.passed

    def _next_step(self) -> str:
        if self.passed or not self.exercise.hints:
            return ""
        if self.hints_left:
            total = len(self.exercise.hints)
            return (f" Stuck? `mlclab.exercise({self.exercise.key!r}).hint()` shows hint "
                    f"{total - self.hints_left + 1} of {total}.")
        return " (All hints are shown.)"

    def text(self) -> str:
        mark = "✔" if self.passed else "✘"
        message = self.message if self.message.endswith((".", "?", "!")) else self.message + "."
        return f"{mark} {self.exercise.title}: {self.status.upper()}: {message}{self._next_step()}"

    def __repr__(self) -> str:
        return self.text()

    def to_json(self) -> dict:
        return {"exercise": self.exercise.key, "status": self.status, "passed": self.passed,
                "message": self.message}

    def _repr_html_(self) -> str:
        colour = _COLOURS.get(self.status, "#cf222e")
        return (f'<div class="mlclab-exercise" '
                f'style="border-left:4px solid {colour};padding:4px 8px">'
                f'<b style="color:{colour}">{html.escape(self.status.upper())}</b> '
                f'<b>{html.escape(self.exercise.title)}</b>: {html.escape(self.message)}'
                f'<i>{html.escape(self._next_step())}</i></div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self.text(), "text/html": self._repr_html_(), MIME: self.to_json()}
