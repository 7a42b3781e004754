"""``DSLError``: every rejected program raises it, pointing at the line and the span."""
from __future__ import annotations

import re
from typing import Optional, Sequence

from .source import Span, displayable, line_at

# How much of a long line or word an error shows: a 100,000-character name pasted into a cell
# must give a readable message, not a 300,000-character one. The full texts stay on the error.
QUOTE_WIDTH = 100
WORD_WIDTH = 40
_LONG_WORD = re.compile(r"[^\s'\"`]{%d,}" % (WORD_WIDTH + 1))


class DSLError(Exception):
    """A tinynn program was rejected.

    ``lineno`` is 1-based in the text that was compiled (the cell, the string, or the
    decorated function's file); ``col_offset`` is 0-based. ``str(err)`` quotes the line with a
    caret under the offending span, says what was expected and, where there is one, the fix.
    """

    def __init__(self, message: str, *, lineno: int = 1, col_offset: int = 0,
                 end_col_offset: Optional[int] = None, source_line: str = "",
                 filename: str = "<string>", hint: Optional[str] = None, internal: bool = False):
        self.message = message
        self.lineno = lineno
        self.col_offset = col_offset
        self.end_col_offset = end_col_offset
        self.source_line = displayable(source_line)   # printable whatever the source held
        self.filename = filename
        self.hint = hint
        # True when the front end accepted the program and TVM rejected it: a bug of mlclab's
        # checker, which the fuzz tests hunt for.
        self.internal = internal
        super().__init__(self._format())

    @classmethod
    def at(cls, message: str, span: Span, lines: Sequence[str], filename: str,
           hint: Optional[str] = None, internal: bool = False) -> "DSLError":
        """The error for ``span`` of a source whose ``source_lines`` are ``lines``.

        A span over several lines is marked from its start to the end of its first line.
        """
        line = line_at(lines, span.lineno)
        end = span.end_col_offset if span.end_lineno == span.lineno else len(line)
        return cls(message, lineno=span.lineno, col_offset=span.col_offset, end_col_offset=end,
                   source_line=line, filename=filename, hint=hint, internal=internal)

    def _format(self) -> str:
        lines = [f"{self.filename}, line {self.lineno}: {clip_words(self.message)}"]
        if self.source_line:
            text = self.source_line.rstrip("\n")
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            start = max(self.col_offset - indent, 0)
            end = self.end_col_offset if self.end_col_offset is not None else self.col_offset + 1
            width = max(min(end, len(text.rstrip())) - self.col_offset, 1)
            quoted, start, width = quote_window(stripped, start, width)
            lines.append("    " + quoted)
            lines.append("    " + " " * start + "^" * width)
        if self.hint:
            lines.append(f"hint: {clip_words(self.hint)}")
        return "\n".join(lines)

    def __reduce__(self):
        # Exceptions pickle by their args; keep every field (used when errors cross processes).
        return (_rebuild, (self.message, self.__dict__.copy()))


def _rebuild(message, state):
    err = DSLError.__new__(DSLError)
    Exception.__init__(err, "")
    err.__dict__.update(state)
    err.args = (err._format(),)
    return err


def clip_words(text: str) -> str:
    """``text`` with every word longer than ``WORD_WIDTH`` shortened around an ellipsis that
    says how long it was."""
    def clip(m: re.Match) -> str:
        word = m.group()
        half = WORD_WIDTH // 2
        return f"{word[:half]}…{word[-half:]} ({len(word):,} characters)"
    return _LONG_WORD.sub(clip, text)


def quote_window(line: str, start: int, width: int) -> tuple[str, int, int]:
    """At most ``QUOTE_WIDTH`` characters of ``line`` around the marked span (``start``,
    ``width``), with ``…`` where text was cut, and the span's position in what is shown."""
    if len(line) <= QUOTE_WIDTH:
        return line, start, width
    width = min(width, QUOTE_WIDTH // 2)
    left = max(0, min(start - QUOTE_WIDTH // 4, len(line) - QUOTE_WIDTH))
    shown = line[left:left + QUOTE_WIDTH]
    prefix = "…" if left > 0 else ""
    suffix = "…" if left + QUOTE_WIDTH < len(line) else ""
    return prefix + shown + suffix, start - left + len(prefix), width
