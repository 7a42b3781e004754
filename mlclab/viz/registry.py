"""The graph views, each registered once.

Every list of views reads this registry: ``fn.graph(view)``, the CLI's ``--view`` choices, the
``%%tinynn --show`` choices and tab titles, the notebook viewer's view switch and the table in
docs/visualizer.md. Adding a view is one module holding its parser (a ``RelaxParser`` subclass
whose ``layout`` tells the plotters how to draw its graph) and one call::

    register_view("toy", ToyParser, title="toy", description="what it shows", show="toy")

A view can also be a step of the build pipeline: ``after="FuseOps"`` draws its parser's graph of
the module as the build left it after that pass (read from the build record, never re-run).
``"fused"`` is such a view, the dataflow graph after FuseOps, so it is in every list above;
``fn.graph(view, after=pass_name)`` draws any view after any recorded pass.

The built-in views register at the bottom of ``mlclab.viz.parser``, which ``mlclab.viz``
imports, so the registry is complete as soon as anything of ``mlclab.viz`` is imported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..registry import Registry
from .model import LAYOUTS


@dataclass(frozen=True)
class ViewKind:
    """One registered graph view."""

    name: str                    # fn.graph(name), mlclab viz --view name
    parser: type                 # makes the Graph: parser().parse(fn, function=, params=)
    title: str                   # tab title in a %%tinynn cell
    description: str             # one line, for --help and the docs
    show: Optional[str] = None   # its %%tinynn --show keyword; None: only in the viewer's switch
    after: Optional[str] = None  # a pass of the build: the view draws the module after it

    @property
    def layout(self) -> str:
        """How plotters lay its graphs out (one of ``mlclab.viz.model.LAYOUTS``)."""
        return self.parser.layout


_VIEWS = Registry("view", "view")


def register_view(name: str, parser: type, *, title: str, description: str,
                  show: Optional[str] = None, after: Optional[str] = None) -> ViewKind:
    """Add a graph view (``after``: the pass of the build whose result it draws); registering
    a name twice is a mistake (``ValueError``)."""
    _VIEWS.check_new(name)
    if not callable(getattr(parser, "parse", None)):
        raise TypeError(f"parser of view {name!r} must have a parse(fn, function=, params=) "
                        f"method, got {parser!r}")
    if getattr(parser, "layout", None) not in LAYOUTS:
        raise ValueError(f"parser of view {name!r} must set layout to one of "
                         f"{', '.join(LAYOUTS)}, got {getattr(parser, 'layout', None)!r}")
    if after is not None and not isinstance(after, str):
        raise TypeError(f"after of view {name!r} must be a pass name (a str), got {after!r}")
    return _VIEWS.add(name, ViewKind(name, parser, title, description, show, after))


def unregister_view(name: str) -> None:
    """Remove a view (for tests and notebook experiments)."""
    _VIEWS.remove(name)


def view_kinds() -> tuple:
    """The registered views, in registration order."""
    return _VIEWS.entries()


def view_names() -> tuple:
    return _VIEWS.names()


def view_kind(name) -> ViewKind:
    """The view called ``name``; a ``ValueError`` naming the parameter and the choices if none."""
    return _VIEWS.get(name)


def markdown_table() -> str:
    """The registered views as the Markdown table docs/visualizer.md holds (a test compares)."""
    rows = ["| view | `%%tinynn --show` | layout | what it shows |", "| --- | --- | --- | --- |"]
    for k in _VIEWS.entries():
        show = f"`{k.show}`" if k.show else "(viewer only)"
        rows.append(f"| `{k.name}` | {show} | {k.layout} | {k.description} |")
    return "\n".join(rows) + "\n"
