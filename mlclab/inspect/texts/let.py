"""The ``let`` style: Relay's A-normal form.

Every value is a ``let`` with its name, in evaluation order, scoped inside ``if`` branches; the
tail expression is the result. ``names="fresh"`` numbers them ``%v1, %v2, ...`` as Relay's
ToANormalForm did; ``types=True`` adds ``/* ty=... */``.
"""
from __future__ import annotations

from ...viz.relax_info import Subject
from .registry import IRText, register_style
from .relay import RelayPrinter


def render(subject: Subject, names: str = "ir", types: bool = False) -> IRText:
    return RelayPrinter(subject, let=True, names=names, types=types).render()


register_style("let", render, title="let (ANF)",
               description="Relay's A-normal form: let %x = op(...); in evaluation order")
