"""A comparison's pair of fold states made from two single-side layouts (``notebook/compare.py``).

A pair is what the panes show: each side laid out with its own fold, the nodes matched, what
has no match marked. The layout of one side (Graphviz, the view model's check, the SVG's
sanitizing: about 0.1-0.15 s per side at BERT-base size) does not depend on the other side, so
it is made once per ``(side, Fold)`` (:func:`side_layout`, kept by a ``FoldLayouts`` of its
own) and shared by every pair that draws that side so: opening ``encoder.layer.5`` on the left
while the right stays as it was lays out only the left. What a pair adds is cheap: the matching
and the marks, written into the sanitized SVG by :func:`mark_svg_text` (edits of a few node
groups in the text, the same output as marking the parsed drawing, without parsing and writing
the whole drawing again: that pass cost as much as the layout).
"""
from __future__ import annotations

import html
import re
from typing import Any, Mapping

from ..viz.matching import diff_entries, match, summary
from .fold_layouts import Fold
from .viewer import clean_view, sanitize_svg

# How a node with no match is drawn, in the SVG itself (so the static twin shows it too).
MARKS = {"removed": ("#cf222e", "6,3"), "added": ("#1a7f37", ""), "changed": ("#bf8700", "2,2")}
_SHAPES = {"polygon", "ellipse", "path", "rect"}

# In SVG as ElementTree writes it (sanitize_svg's output): "<" only starts a tag (text and
# attribute values escape it), attribute values are double-quoted, no comments.
_ID_START = re.compile(r'<[A-Za-z_][\w:.-]*(?:\s[\w:.-]+="[^"]*")*?\sid="([^"]*)"')
_TAG = re.compile(r'<(/?)([A-Za-z_][\w:.-]*)((?:[^>"/]|"[^"]*")*)(/?)>')


def mark_svg_text(svg: str, changes: Mapping[str, str]) -> str:
    """``svg`` (``sanitize_svg``'s output) with each node ``changes`` names (id ->
    ``"added"``/``"removed"``/``"changed"``) given the class ``mlclab-<change>`` and its shapes
    outlined in the change's colour, done on the text: only the marked elements (Graphviz's
    node groups) are edited, the rest is copied (the text ElementTree would write for the same
    edits of the parsed drawing)."""
    if not svg or not changes:
        return svg
    out, pos = [], 0
    for start in _ID_START.finditer(svg):
        change = changes.get(html.unescape(start.group(1)))
        if change is None or start.start() < pos:      # (a group inside one marked: as is)
            continue
        colour, dash = MARKS[change]
        head = _TAG.match(svg, start.start())
        if head is None:
            continue
        cls = re.search(r'\sclass="([^"]*)"', head.group(3))
        value = f"{html.unescape(cls.group(1)) if cls else ''} mlclab-{change}".strip()
        out += [svg[pos:start.start()], _with(head, {"class": value})]
        pos, depth = head.end(), 0
        for tag in () if head.group(4) else _TAG.finditer(svg, head.end()):
            closing, name, _attrs, empty = tag.groups()
            if closing:
                if depth == 0:
                    break
                depth -= 1
                continue
            if depth == 0 and name.rsplit(":", 1)[-1] in _SHAPES:
                edits = {"stroke": colour, "stroke-width": "3"}
                if dash:
                    edits["stroke-dasharray"] = dash
                out += [svg[pos:tag.start()], _with(tag, edits)]
                pos = tag.end()
            if not empty:
                depth += 1
    out.append(svg[pos:])
    return "".join(out)


def _with(tag: re.Match, values: Mapping[str, str]) -> str:
    """The start tag ``tag`` (a ``_TAG`` match) with attributes set: in place where present,
    else appended, as ElementTree's ``set`` then ``tostring`` writes them."""
    attrs = tag.group(3)
    body, tail = attrs.rstrip(), attrs[len(attrs.rstrip()):]
    for name, value in values.items():
        value = html.escape(value, quote=True)
        body, n = re.subn(rf'(\s{re.escape(name)}=)"[^"]*"', lambda m: f'{m.group(1)}"{value}"',
                          body, count=1)
        if not n:
            body += f' {name}="{value}"'
    return f"<{tag.group(2)}{body}{tail}{tag.group(4)}>"


def side_layout(side: Any, fold: Fold) -> dict:
    """One side (``compare_sides.Side``) drawn with ``fold``: ``{"vm": checked view model
    without its SVG, "svg": the SVG sanitized, unmarked}``; a pure function of the fold."""
    return checked(side.draw(fold.full, fold.open_modules, fold.folded))


def checked(vm: Mapping) -> dict:
    """A view model as :func:`side_layout` gives it: checked as ``clean_view`` checks it, its
    SVG sanitized apart (marked per pair)."""
    geometry = dict(vm.get("geometry") or {})
    svg = geometry.get("svg", "")
    clean = clean_view({**vm, "geometry": {**geometry, "svg": ""} if svg else geometry})
    return {"vm": clean, "svg": sanitize_svg(svg) if svg else ""}


def pair_payload(left: Mapping, right: Mapping, by: str, names=("left", "right")) -> dict:
    """The compare display's data from two :func:`side_layout` results (left untouched: they
    are shared between pairs): both view models, unmatched nodes marked in the drawing and in
    the ``diff`` layer, ``matches`` (left id -> right id) and the ``summary`` line."""
    lvm, rvm = dict(left["vm"]), dict(right["vm"])
    matches = match(lvm, rvm, by)
    s = summary(lvm, rvm, matches, by)
    changed_right = [matches[n] for n in s["changed"]]
    for vm, svg, ids, change, changed, other in (
            (lvm, left["svg"], s["only_left"], "removed", s["changed"], names[1]),
            (rvm, right["svg"], s["only_right"], "added", changed_right, names[0])):
        entries = {**diff_entries(vm["nodes"], ids, change, other),
                   **diff_entries(vm["nodes"], changed, "changed", other)}
        marks = {nid: e["change"] for nid, e in entries.items()}
        vm["overlays"] = {**vm["overlays"], "diff": {**vm["overlays"].get("diff", {}), **entries}}
        if vm["geometry"].get("dot"):      # laid out in the browser, which outlines them there
            outlines = {nid: {"change": c, "colour": MARKS[c][0], "dash": MARKS[c][1]}
                        for nid, c in marks.items()}
            vm["geometry"] = {**vm["geometry"], "marks": outlines}
        if svg:
            vm["geometry"] = {**vm["geometry"], "svg": mark_svg_text(svg, marks)}
    return {"left": lvm, "right": rvm, "matches": matches, "summary": s["line"], "method": by}
