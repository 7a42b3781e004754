"""A comparison's pair of fold states made from two single-side layouts (``notebook/compare.py``).

A pair is what the panes show: each side laid out with its own fold, the nodes matched, what
has no match in the ``diff`` layer. The layout of one side (Graphviz, the view model's check,
the SVG's sanitizing: about 0.1-0.15 s per side at BERT-base size) does not depend on the other
side, so it is made once per ``(side, Fold)`` (:func:`side_layout`, kept by a ``FoldLayouts``
of its own) and shared by every pair that draws that side so: opening ``encoder.layer.5`` on
the left while the right stays as it was lays out only the left. What a pair adds is cheap:
the matching and the ``diff`` entries of what has no match. The drawing is never edited: every
display paints the ``diff`` layer by its registered look (``static/paint.js``).
"""
from __future__ import annotations

from typing import Any, Mapping

from ..viz.matching import diff_entries, match, summary
from .fold_layouts import Fold
from .viewer import clean_view


def side_layout(side: Any, fold: Fold) -> dict:
    """One side (``compare_sides.Side``) drawn with ``fold``, checked and its SVG sanitized
    (:func:`checked`); a pure function of the fold."""
    return checked(side.draw(fold.full, fold.open_modules, fold.folded))


def checked(vm: Mapping) -> dict:
    """A view model as :func:`side_layout` gives it: ``{"vm": checked as clean_view checks
    it}``, shared by every pair that draws it (never changed by one)."""
    return {"vm": clean_view(vm)}


def pair_payload(left: Mapping, right: Mapping, by: str, names=("left", "right")) -> dict:
    """The compare display's data from two :func:`side_layout` results (left untouched: they
    are shared between pairs): both view models, unmatched nodes in the ``diff`` layer,
    ``matches`` (left id -> right id) and the ``summary`` line."""
    lvm, rvm = dict(left["vm"]), dict(right["vm"])
    matches = match(lvm, rvm, by)
    s = summary(lvm, rvm, matches, by)
    changed_right = [matches[n] for n in s["changed"]]
    for vm, ids, change, changed, other in (
            (lvm, s["only_left"], "removed", s["changed"], names[1]),
            (rvm, s["only_right"], "added", changed_right, names[0])):
        entries = {**diff_entries(vm["nodes"], ids, change, other),
                   **diff_entries(vm["nodes"], changed, "changed", other)}
        vm["overlays"] = {**vm["overlays"], "diff": {**vm["overlays"].get("diff", {}), **entries}}
    return {"left": lvm, "right": rvm, "matches": matches, "summary": s["line"], "method": by}
