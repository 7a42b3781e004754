"""The text styles, each registered once, and the printed text they all return.

Every list of styles reads this registry: ``fn.text(style)``, the CLI's ``--style`` choices,
the ``%%tinynn --show`` choices and tab titles, and docs/visualizer.md. Adding a style is one
module with a ``render(subject, **options) -> IRText`` function and one call::

    register_style("toy", render, title="toy", description="what it prints")

The built-in styles are the modules of this package, which import on
``import mlclab.inspect.texts``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Optional

from ...registry import Registry


@dataclass
class IRText:
    """A printed text and, for each 1-based line that defines a value, that value's id
    (the ids of ``mlclab.viz.relax_info.value_ids``: the graph nodes' ``value``)."""

    style: str
    text: str
    line_values: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    def line_of(self, node_id: str) -> Optional[int]:
        """The first line defining the value a graph node of this text's module stands for.

        Node ids are value ids, but a tree view numbers repeats (``main:lv~2``), and the
        dataflow view inlines a fused group under its caller (``main:fused_add/lv``), whose
        definition this text prints in the group's own function (``fused_add:lv``).
        """
        vid = node_id.split("~", 1)[0]
        _, _, name = vid.partition(":")
        if "/" in name:                       # inlined: group/var -> group:var
            vid = ":".join(name.rsplit("/", 1))
        return self._first_lines.get(vid)

    @cached_property
    def _first_lines(self) -> dict:
        first: dict = {}
        for line, vid in sorted(self.line_values.items()):
            first.setdefault(vid, line)
        return first


@dataclass(frozen=True)
class TextStyle:
    """One registered text style."""

    name: str                          # fn.text(name), mlclab text --style name
    render: Callable                   # render(subject, **options) -> IRText
    title: str                         # tab title in a %%tinynn cell
    description: str                   # one line, for --help and the docs
    show: Optional[str] = None         # its %%tinynn --show keyword (None: not a tab)

    def options(self) -> tuple:
        """The keyword options ``render`` takes after the subject."""
        params = list(inspect.signature(self.render).parameters.values())[1:]
        return tuple(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


_STYLES = Registry("style", "text style")


def register_style(name: str, render: Callable, *, title: str, description: str,
                   show: Optional[str] = "") -> TextStyle:
    """Add a text style (``show`` defaults to its name); registering a name twice is a mistake."""
    _STYLES.check_new(name)
    if not callable(render):
        raise TypeError(f"render of style {name!r} must be callable, got {render!r}")
    return _STYLES.add(name, TextStyle(name, render, title, description,
                                       name if show == "" else show))


def unregister_style(name: str) -> None:
    """Remove a style (for tests and notebook experiments)."""
    _STYLES.remove(name)


def text_styles() -> tuple:
    """The registered styles, in registration order."""
    return _STYLES.entries()


def style_names() -> tuple:
    return _STYLES.names()


def text_style(name) -> TextStyle:
    """The style called ``name``; a ``ValueError`` naming the parameter and the choices if none."""
    return _STYLES.get(name)


def markdown_table() -> str:
    """The registered styles as the Markdown table docs/visualizer.md holds (a test compares)."""
    rows = ["| style | `%%tinynn --show` | options | what it prints |", "| --- | --- | --- | --- |"]
    for s in _STYLES.entries():
        show = f"`{s.show}`" if s.show else "(none)"
        options = ", ".join(f"`{o}`" for o in s.options()) or "—"
        rows.append(f"| `{s.name}` | {show} | {options} | {s.description} |")
    return "\n".join(rows) + "\n"
