"""DOT attribute values as ``DotPlotter`` writes them straight into a graph's body (going
through ``graphviz.Digraph.node`` would quote every attribute again, slower than the layout)."""
from __future__ import annotations

#: Graphviz's lexer refuses a quoted string longer than 16,384 bytes ("syntax error ...
#: longer than 16384?"); DOT joins quoted strings written ``"a" + "b"``, so a longer value (an
#: id holding a 100,000-character name) is written in pieces of at most this many characters
#: (4 UTF-8 bytes each at most).
_DOT_PIECE = 4000


def quote(value: str) -> str:
    """A DOT attribute value: HTML-like labels (``<...>``) as they are, the rest quoted.

    Values that hold user text went through ``dot_string`` (every backslash doubled, marked
    ``nohtml``: never taken for an HTML-like label), so every quote here is a real quote and
    gets its backslash.
    """
    if value.startswith("<") and value.endswith(">"):
        from graphviz.quoting import NoHtml

        if not isinstance(value, NoHtml):
            return value
    if len(value) <= _DOT_PIECE:
        return '"' + value.replace('"', '\\"') + '"'
    pieces, start = [], 0
    while start < len(value):
        end = min(start + _DOT_PIECE, len(value))
        # Never between a backslash and what it escapes: an odd run of them moves on.
        run = len(value[start:end]) - len(value[start:end].rstrip("\\"))
        end -= run % 2 if end < len(value) else 0
        pieces.append(value[start:end])
        start = end
    return " + ".join('"' + p.replace('"', '\\"') + '"' for p in pieces or [""])


def attr_list(attrs: dict) -> str:
    return "[" + " ".join(f"{k}={quote(v if isinstance(v, str) else str(v))}"
                          for k, v in attrs.items()) + "]"
