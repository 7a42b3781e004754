"""Namespace kinds: what groups nodes in a graph (``Cluster.kind``), registered once each.

A DSL function, a fused group, a branch of an ``if`` and a PyTorch module are the same kind of
thing to every display: a namespace that nests, folds into one node (``Graph.fold``) and sums
up its overlays. What differs is registered here: how Graphviz draws its frame, and whether
the viewer's "collapse groups" folds it (modules fold by level instead, a function shown is
never folded). Adding a kind is one call::

    register_namespace_kind("stage", style={"style": "dashed", "color": "#0e7490"},
                            collapse=True, description="a pipeline stage")

and a parser (or a grouping step such as ``viz.modules.group_modules``) that makes clusters of
that kind.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..registry import Registry


@dataclass(frozen=True)
class NamespaceKind:
    name: str
    style: dict = field(default_factory=dict)   # Graphviz cluster attributes
    collapse: bool = True                       # folded by the viewer's "collapse groups"
    description: str = ""


_KINDS = Registry("namespace kind", "namespace kind")


def register_namespace_kind(name: str, style: dict | None = None, collapse: bool = True,
                            description: str = "") -> NamespaceKind:
    if not isinstance(collapse, bool):
        raise TypeError(f"collapse of namespace kind {name!r} must be True or False")
    return _KINDS.add(name, NamespaceKind(name, dict(style or {}), collapse, description))


def unregister_namespace_kind(name: str) -> None:
    _KINDS.remove(name)


def namespace_kind(name) -> NamespaceKind:
    return _KINDS.get(name)


def namespace_kinds() -> tuple:
    return _KINDS.entries()


register_namespace_kind("function", {"style": "rounded", "color": "#6b7280"}, collapse=False,
                        description="a function of the program (a called one folds to its call)")
register_namespace_kind("fused", {"style": "rounded,filled", "color": "#d97706",
                                  "fillcolor": "#fffbeb"},
                        description="a FuseOps group: one kernel")
register_namespace_kind("then", {"style": "dashed", "color": "#9ca3af"},
                        description="an if's true branch")
register_namespace_kind("else", {"style": "dashed", "color": "#9ca3af"},
                        description="an if's false branch")
register_namespace_kind("closure", {"style": "dotted", "color": "#6b7280"},
                        description="a local function")
# An imported model's modules: thin blue frames, unfilled, so nested levels stay light.
register_namespace_kind("module", {"style": "rounded", "color": "#93c5fd", "fontcolor": "#1e40af"},
                        collapse=False, description="a PyTorch module (folded by level)")
