"""One paint path (issue 30): each overlay registers its look once (``viz.overlays.Style``);
a picture without JavaScript is painted by Graphviz from that table (``viz.paint``) and every
display's view model carries it for ``static/paint.js`` (tests/browser/test_paint_browser.py
paints the same drawing there). A view model's drawing is layout only. These tests fail if a
second painter comes back: a colour of a look written anywhere but its registration, a look
painted into a view model's SVG, or a static picture that does not show the registered look."""
import pathlib
import re
import xml.etree.ElementTree as ET

from mlclab.notebook.graphs import draw_view
from mlclab.viz.model import Cluster, Graph, Node
from mlclab.viz.overlays import styles
from mlclab.viz.paint import DASH, node_paints
from mlclab.viz.views import GraphView

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mlclab"
SVG = "{http://www.w3.org/2000/svg}"


def every_look():
    """A chain with one node per registered look, and the layers that give each its look."""
    g = Graph("main")
    g.add_cluster(Cluster("fn:main", "fn main", "function"))
    layers: dict = {}
    prev = None
    k = 0
    for layer, style in styles().items():
        values = list(style["looks"]) or ["#fdae61"]
        for value in values:
            nid = f"main:n{k}"
            g.add_node(Node(nid, "op", f"op{k}", name=f"v{k}", value=nid, group="fn:main"))
            if prev:
                g.add_edge(prev, nid)
            prev, k = nid, k + 1
            entry = {"text": f"{layer} {value}"}
            if style["key"]:
                entry[style["key"]] = value
            else:
                entry[style["fill_key"]] = value
            layers.setdefault(layer, {})[nid] = entry
    g.outputs = [prev]
    return g, layers


def shapes_of(svg: str) -> dict:
    """Node id -> (its group's classes, its first shape's paint attributes)."""
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if "node" not in (g.get("class") or "").split():
            continue
        shape = next(s for s in g.iter() if s.tag[len(SVG):] in ("polygon", "ellipse", "path"))
        out[g.get("id")] = (set(g.get("class").split()),
                            {a: shape.get(a) for a in ("stroke", "stroke-width",
                                                       "stroke-dasharray", "fill")})
    return out


def expected(paint: dict) -> dict:
    return {"stroke": paint.get("stroke"),
            "stroke-width": f"{paint['width']:g}" if paint.get("width") else None,
            "stroke-dasharray": DASH if paint.get("dashed") else None,
            "fill": paint.get("fill")}


def test_the_static_picture_shows_every_registered_look():
    g, layers = every_look()
    paints = node_paints(layers)
    assert len(paints) == len(g.nodes) >= 9
    drawn = shapes_of(GraphView(g, overlays=layers).svg())
    for nid, paint in paints.items():
        classes, attrs = drawn[nid]
        assert set(paint["classes"]) <= classes, nid
        assert {a: v for a, v in expected(paint).items() if v} == \
            {a: attrs[a] for a, v in expected(paint).items() if v}, nid


def test_a_view_models_drawing_is_layout_only_and_carries_the_style_table():
    g, layers = every_look()
    vm = draw_view(g, layers=layers, full=True)
    assert vm["styles"] == styles()
    svg = vm["geometry"]["svg"]
    for style in styles().values():
        for value, look in style["looks"].items():
            assert f"mlclab-{value}" not in svg
            assert look.get("stroke", "#none") not in svg
    for nid, (classes, _attrs) in shapes_of(svg).items():
        assert not any(c.startswith("mlclab-") for c in classes), nid


def test_no_look_is_written_anywhere_but_its_registration():
    """Every colour a look registers appears in no other module that draws a graph (a second
    painter: a table of marks in a display, a Graphviz style keyed by status, a regex that
    writes strokes into SVG text). (The course's pass/fail words are not a graph's.)"""
    colours = {look[k].lower() for style in styles().values() for look in style["looks"].values()
               for k in ("stroke", "fill") if k in look}
    # The registrations: the overlays', and the namespace kinds' (a fused group's frame is the
    # amber of the "grouped" look on purpose: the mark says "put in this frame").
    registries = {PACKAGE / "viz" / "overlays.py", PACKAGE / "viz" / "namespaces.py"}
    drawing = [PACKAGE / part for part in ("viz", "inspect", "notebook", "api")]
    for path in [*(p for d in drawing for p in d.rglob("*.py")),
                 *(PACKAGE / "notebook" / "static").glob("*.js")]:
        if path in registries:
            continue
        text = path.read_text(encoding="utf-8").lower()
        found = sorted(c for c in colours if c in text)
        assert not found, f"{path.relative_to(PACKAGE)} writes a look's colour {found}"
    assert not re.search(r"stroke-dasharray", (PACKAGE / "notebook" / "compare_pairs.py")
                         .read_text(encoding="utf-8"))


def test_a_new_overlay_is_one_registration_and_its_layer():
    """docs/architecture.md's worked example: registering "memory" with its look is all it
    takes for the view model to carry the look and the static picture to show it."""
    from mlclab.viz.overlays import Look, Style, register_overlay, unregister_overlay

    register_overlay("memory", lambda entries, members: {"text": "inside", "size": "big"},
                     "bytes each value holds",
                     Style(key="size", looks={"big": Look(stroke="#7c3aed", width=2.5)}))
    try:
        g, _ = every_look()
        nid = next(iter(g.nodes))
        layers = {"memory": {nid: {"size": "big", "text": "2 MiB"}}}
        vm = draw_view(g, layers=layers, full=True)
        assert vm["styles"]["memory"]["looks"]["big"] == {"stroke": "#7c3aed", "width": 2.5}
        classes, attrs = shapes_of(GraphView(g, overlays=layers).svg())[nid]
        assert "mlclab-big" in classes
        assert attrs["stroke"] == "#7c3aed" and attrs["stroke-width"] == "2.5"
    finally:
        unregister_overlay("memory")


def test_a_painted_picture_is_fitted_to_its_column_like_any_other():
    """The painted SVG (ElementTree writes xmlns before width) is measured and sized as
    Graphviz's own: a pipeline diff's picture in a notebook."""
    g, layers = every_look()
    view = GraphView(g, overlays=layers)
    bundle = view._repr_mimebundle_()
    assert "mlclab-added" in bundle["text/html"] and "max-width:100%" in bundle["text/html"]
    assert re.search(r'<svg\b[^>]* width="[\d.]+px" height="[\d.]+px"', bundle["image/svg+xml"])
