"""A drawing fitted to a notebook column: scaled to the output's width, never below the scale
that keeps its smallest label readable (issue 20).

JupyterLab shows an ``image/svg+xml`` output as an ``<img>`` at the SVG's own size (a 1,577 px
graph overflowed a 953 px column behind a scrollbar), so the plotters' SVG is re-sized here:
:func:`fit_svg` for the image form, :func:`fit_html` for an inline, responsive form. When even
the readable minimum does not fit, ``mlclab.viz.views`` folds the graph further rather than
shrink its text (``Fit.readable`` is the test).
"""
from __future__ import annotations

import html
import math
import re
import uuid

# The width a static picture is fitted to: a JupyterLab notebook's output area in a 1,100 px
# window is 953 px wide (measured in Chromium); narrower columns scale the HTML form further.
COLUMN_PX = 940
# A laptop's: with the file browser open a 1,100 px window's notebook column is about 648 px,
# its output area about 600. A picture that could fit there only with text under the minimum
# carries a further-folded rung for it, which its column picks (fit_html).
NARROW_COLUMN_PX = 600
# The smallest text a student can read: a picture is never shrunk below the scale that draws
# its smallest label this tall (it scrolls instead); views fold more rather than shrink
# further (mlclab.viz.views).
MIN_TEXT_PX = 9.0
_PX_PER_PT = 4 / 3          # Graphviz draws in points; CSS px are 3/4 pt
# Graphviz writes width first; a painted copy (viz.paint, ElementTree) puts xmlns before it.
_SVG_SIZE = re.compile(r'<svg\b([^>]*?) width="([\d.]+)pt" height="([\d.]+)pt"')
_FONT_SIZE = re.compile(r'font-size="([\d.]+)"')


class Fit:
    """How a Graphviz SVG fits a column: its natural size in px, its smallest text, and the
    scale it is shown at (at most 1, at least the scale that keeps text at MIN_TEXT_PX)."""

    def __init__(self, svg: str, column: float = COLUMN_PX):
        size = _SVG_SIZE.search(svg)
        if size is None:
            raise ValueError("not an SVG Graphviz wrote (no width/height in points)")
        self.width = float(size.group(2)) * _PX_PER_PT
        self.height = float(size.group(3)) * _PX_PER_PT
        fonts = [float(f) for f in _FONT_SIZE.findall(svg)]
        self.smallest_text = min(fonts) * _PX_PER_PT if fonts else MIN_TEXT_PX
        self.column = column

    @property
    def min_scale(self) -> float:
        """The smallest scale at which every label is still MIN_TEXT_PX tall."""
        return min(1.0, MIN_TEXT_PX / self.smallest_text)

    @property
    def needed_scale(self) -> float:
        """The scale that fits the column (1 when it fits as it is)."""
        return min(1.0, self.column / self.width) if self.width else 1.0

    @property
    def readable(self) -> bool:
        """Whether the picture fits the column with its text at least MIN_TEXT_PX tall."""
        return self.needed_scale >= self.min_scale - 1e-9

    @property
    def scale(self) -> float:
        return max(self.needed_scale, self.min_scale)

    @property
    def min_width(self) -> float:
        """The width below which the HTML form scrolls instead of shrinking (px)."""
        return self.width * self.min_scale

    def text_px(self) -> float:
        """The smallest label's height as shown in the column."""
        return self.smallest_text * self.scale

    def improved_by(self, other: "Fit") -> bool:
        """Whether ``other`` (a further-folded drawing of the same graph) is shown instead:
        it fits at a larger scale, or with readable text."""
        return other.scale > self.scale or other.readable


def choose(rungs, measure):
    """The rung a column shows, from ``rungs`` (``(nodes, item)`` pairs, folded more and more;
    the first is what was asked for) and ``measure(item) -> Fit``: the first rung that fits
    readably, else the one that fits best; a rung with no fewer nodes than the one chosen is
    skipped unmeasured. Returns ``(index, Fit)``. ``static/fit.js`` (``chooseRung``) is the
    same rule in the browser, where no ``dot`` program exists (tests/js/fit.test.mjs holds
    both to the same answers)."""
    chosen, fit, nodes = None, None, None
    for k, (count, item) in enumerate(rungs):
        if fit is not None:
            if fit.readable:
                break
            if count >= nodes:
                continue
        candidate = measure(item)
        if fit is None or fit.improved_by(candidate):
            chosen, fit, nodes = k, candidate, count
    return chosen, fit


def _sized(svg: str, width: str, height: str, style: str) -> str:
    return _SVG_SIZE.sub(lambda m: f'<svg{m.group(1)} width="{width}" height="{height}" '
                         f'style="{style}"', svg, count=1)


def fit_svg(svg: str, column: float = COLUMN_PX) -> str:
    """The SVG drawn at the scale that fits ``column`` (never below the readable scale); the
    viewBox is kept, so it stays sharp at any size. For ``image/svg+xml`` outputs, which
    JupyterLab shows as an ``<img>`` at the SVG's own size."""
    fit = Fit(svg, column)
    return _sized(svg, f"{fit.width * fit.scale:.0f}px", f"{fit.height * fit.scale:.0f}px",
                  "max-width:100%;height:auto")


def _sized_html(svg: str, fit: Fit) -> str:
    body = svg[svg.find("<svg"):] if "<svg" in svg else svg
    # The width and height attributes are the column fit (what a renderer that drops styles,
    # as GitHub's does, shows); the style makes it follow the output area, up to the natural
    # size and down to the readable minimum.
    return _sized(body, f"{fit.width * fit.scale:.0f}px", f"{fit.height * fit.scale:.0f}px",
                  f"width:100%;max-width:{fit.width:.0f}px;height:auto;"
                  f"min-width:{min(fit.width, fit.min_width):.0f}px")


def _caption(note: str) -> str:
    return (f'<div class="mlclab-fit-note" style="font-size:12px;opacity:0.8;'
            f'margin:2px 0">{html.escape(note)}</div>' if note else "")


def fit_html(svg: str, note: str = "", column: float = COLUMN_PX,
             narrow: "tuple | None" = None) -> str:
    """The SVG inline in HTML, scaled to its output area's width (``max-width:100%``, height
    from the viewBox) but never below the readable minimum (``min-width``; a narrower area
    scrolls inside its own box, never widening the page). ``note`` (escaped here) says what
    was folded to make it fit. ``narrow``: ``(svg, fit, note)`` of a further-folded drawing
    shown instead where the area is narrower than this one's readable minimum (a CSS
    container query: no script; a renderer that drops styles shows the first)."""
    fit = Fit(svg, column)
    first = f"{_caption(note)}{_sized_html(svg, fit)}"
    if narrow is None or min(fit.width, fit.min_width) <= narrow[1].min_width:
        return (f'<div class="mlclab-graph" style="max-width:100%;overflow-x:auto">'
                f"{first}</div>")
    other, other_fit, other_note = narrow
    key = f"mlclab-fit-{uuid.uuid4().hex[:12]}"
    below = math.ceil(min(fit.width, fit.min_width)) - 1
    rules = (f"@container (max-width:{below}px){{.{key}>.mlclab-rung-0{{display:none}}"
             f".{key}>.mlclab-rung-1{{display:block!important}}}}")
    return (f'<div class="mlclab-graph {key}" style="max-width:100%;overflow-x:auto;'
            f'container-type:inline-size"><style>{rules}</style>'
            f'<div class="mlclab-rung-0">{first}</div>'
            f'<div class="mlclab-rung-1" hidden style="display:none">{_caption(other_note)}'
            f"{_sized_html(other, Fit(other, column))}</div></div>")
