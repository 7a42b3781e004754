"""One paint path (issue 30), in a real Chromium: a saved viewer's drawing painted by
``static/paint.js`` from the view model's style table shows every registered look exactly as
the picture made without JavaScript (``viz.paint.paint_svg``) and as the registry says, with
nothing else (a stylesheet, a second painter) drawing over it."""
import pathlib
import sys

import pytest

from mlclab.notebook.graphs import graph_viewer
from mlclab.viz.paint import DASH, node_paints
from mlclab.viz.views import GraphView

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from test_paint import every_look, expected, shapes_of  # noqa: E402

pytestmark = pytest.mark.browser

READ = """svg => Object.fromEntries([...svg.querySelectorAll('g.node')].map(g => {
    const shape = g.querySelector('polygon, ellipse, path');
    const css = getComputedStyle(shape);
    return [g.id, {classes: [...g.classList],
        attrs: Object.fromEntries(['stroke', 'stroke-width', 'stroke-dasharray', 'fill']
            .map(a => [a, shape.getAttribute(a)])),
        computed: {stroke: css.stroke, fill: css.fill, width: css.strokeWidth,
                   dash: css.strokeDasharray}}];
}))"""


def rgb(colour: str) -> str:
    r, g, b = (int(colour[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_every_look_is_painted_in_the_page_as_in_the_static_picture(page, tmp_path, screenshot):
    g, layers = every_look()
    paints = node_paints(layers)
    static = shapes_of(GraphView(g, overlays=layers).svg())
    path = graph_viewer({"dataflow": g}, layers=layers).save(tmp_path / "looks.html")
    page.goto(f"file://{path}")
    svg = page.locator(".mlclab-viewer svg.mlclab-graph")
    svg.wait_for()
    painted = svg.evaluate(READ)
    assert set(paints) <= set(painted)
    for nid, paint in paints.items():
        want = {a: v for a, v in expected(paint).items() if v}
        got = painted[nid]
        # the page's attributes are the static picture's, and the registry's
        assert {a: got["attrs"][a] for a in want} == want, nid
        assert {a: static[nid][1][a] for a in want} == want, nid
        assert set(paint["classes"]) <= set(got["classes"]) and \
            set(paint["classes"]) <= static[nid][0], nid
        # and nothing draws over them (no stylesheet paints an overlay)
        if paint.get("stroke"):
            assert got["computed"]["stroke"] == rgb(paint["stroke"]), nid
        if paint.get("fill"):
            assert got["computed"]["fill"] == rgb(paint["fill"]), nid
        if paint.get("dashed"):
            assert got["computed"]["dash"].replace("px", "").replace(" ", "") == DASH, nid
    screenshot("paint-every-look")
