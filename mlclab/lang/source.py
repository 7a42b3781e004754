"""Source text as Python's parser sees it: its lines, its columns and source spans.

Every quoted line (in a ``DSLError``, a ``BindingInfo``, a view) must be the line that Python's
``ast`` numbered. ``str.splitlines`` disagrees with ``ast`` on purpose-built text: it also
breaks at form feed, vertical tab, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which
Python's tokenizer keeps inside a line (a form feed pasted into a comment shifted every later
quoted line by one). ``ast`` also counts columns in UTF-8 bytes, so a caret after an ``é`` was
off by one. Everything here follows the tokenizer: lines end at ``\\n``, ``\\r\\n`` or ``\\r``;
columns are characters; a leading UTF-8 byte-order mark is not part of the text (Python
accepts one at the start of a file, ``ast.parse`` of a string does not).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Sequence, Union

BOM = "\ufeff"
_LINE_END = re.compile(r"\r\n|\r|\n")
# Control characters (a pasted ANSI colour escape, a form feed) and lone surrogates: valid in
# a comment, but they recolour a terminal, break XML (Graphviz labels, SVG) or cannot be
# encoded at all.
_UNDISPLAYABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def without_bom(source: str) -> str:
    """``source`` without a leading byte-order mark (what ``ast.parse`` must be given)."""
    return source[1:] if source.startswith(BOM) else source


def source_lines(source: str) -> list[str]:
    """The lines of ``source`` as Python numbers them (line ``n`` is item ``n - 1``)."""
    return _LINE_END.split(without_bom(source))


def line_at(source: Union[str, Sequence[str]], lineno: int) -> str:
    """Line ``lineno`` (1-based) of a source text or of its ``source_lines``; "" outside."""
    lines = source_lines(source) if isinstance(source, str) else source
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def displayable(line: str) -> str:
    """``line`` with each undisplayable character replaced by a visible stand-in
    (:func:`stand_in`), one for one, so columns still match.

    For quoting a source line to a person (an error, a graph label); the program keeps its text.
    """
    return _UNDISPLAYABLE.sub(lambda m: stand_in(m.group()), line)


def stand_in(ch: str) -> str:
    """What to show for an undisplayable character: a form feed or vertical tab (whitespace to
    Python) as a space, another C0 control as its Unicode "control picture" (a pasted colour
    escape shows as ``␛[31m``), anything else (DEL, C1, a lone surrogate) as U+FFFD."""
    if ch in "\x0b\x0c":
        return " "
    return chr(0x2400 + ord(ch)) if ch < "\x20" else "\ufffd"


def char_offset(line: str, byte_offset: int) -> int:
    """The character column of ``ast``'s UTF-8 byte column ``byte_offset`` in ``line``."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8", "surrogatepass")[:byte_offset].decode("utf-8", "ignore"))


def columns_to_characters(tree: ast.AST, lines: Sequence[str]) -> None:
    """Rewrite every node's columns in ``tree`` from UTF-8 bytes to characters, in place.

    Only lines with non-ASCII text change, so an ASCII program costs one walk.
    """
    if all(line.isascii() for line in lines):
        return
    for node in ast.walk(tree):
        for line_attr, col_attr in (("lineno", "col_offset"), ("end_lineno", "end_col_offset")):
            lineno, col = getattr(node, line_attr, None), getattr(node, col_attr, None)
            if lineno is not None and col is not None:
                setattr(node, col_attr, char_offset(line_at(lines, lineno), col))


@dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 0-based character columns (``ast``'s convention).

    The one source-location type: the typed program, ``DSLError``, ``BindingInfo`` and the
    TVM spans on Relax vars all carry these four numbers.
    """

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int

    @classmethod
    def of(cls, node) -> "Span":
        """The span of an ``ast`` node (its columns already in characters)."""
        return cls(node.lineno, node.col_offset,
                   getattr(node, "end_lineno", None) or node.lineno,
                   getattr(node, "end_col_offset", None) or node.col_offset + 1)

    @classmethod
    def from_tvm(cls, span) -> "Span":
        """The span a ``tvm.ir.Span`` holds (mlclab writes them with :meth:`to_tvm`)."""
        return cls(int(span.line), int(span.column), int(span.end_line), int(span.end_column))

    def to_tvm(self, source_name):
        """This span as a ``tvm.ir.Span`` of ``source_name`` (a ``tvm.ir.SourceName``)."""
        from tvm import ir

        return ir.Span(source_name, self.lineno, self.end_lineno, self.col_offset,
                       self.end_col_offset)

    def to_dict(self) -> dict:
        return {"lineno": self.lineno, "col_offset": self.col_offset,
                "end_lineno": self.end_lineno, "end_col_offset": self.end_col_offset}
