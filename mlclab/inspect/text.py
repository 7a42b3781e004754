"""The program as text, in any registered style (``mlclab.inspect.texts``).

Built in: ``relax`` (TVMScript, each binding annotated with its DSL line), ``relay`` (Relay's
graph binding, ``%0 = log(%x);``), ``let`` (Relay's A-normal form, ``let %v = ...;``) and
``tir`` (the TensorIR PrimFuncs the build pipeline lowers the function to).

``render_text`` also returns, for every line, the id of the value it defines (the ids of
``mlclab.viz.relax_info.value_ids``), so the notebook layer can link a line to graph nodes.
"""
from __future__ import annotations

from typing import Optional

from ..viz.relax_info import resolve
from .texts import IRText, style_names, text_style
from .texts.common import reachable
from .texts.relay import RelayPrinter

__all__ = ["IRText", "RelayPrinter", "reachable", "render_text", "style_names", "text"]


def text(fn, style: str = "relax", *, function: Optional[str] = None, **options) -> str:
    """The text of ``fn`` (a compiled function, ``relax.Function`` or ``IRModule``) in ``style``."""
    return render_text(fn, style, function=function, **options).text


def render_text(fn, style: str = "relax", *, function: Optional[str] = None,
                **options) -> IRText:
    kind = text_style(style)
    unknown = [k for k in options if k not in kind.options()]
    if unknown:
        takes = ", ".join(kind.options()) or "no options"
        raise TypeError(f"text style {style!r} has no option {unknown[0]!r} (it takes {takes})")
    return kind.render(resolve(fn, function), **options)
