"""Drawing stays bounded at any program size, and any text a student pastes draws (issue 10).

No timings here (the machine is shared): the tests check the structure that bounds Graphviz's
work (copies of widely shared values, capped passes, the overview, the time limit) and that a
layout over its time limit is stopped and replaced by text. ``benchmarks/graph_render.py``
prints the times.
"""
import json
import re
import stat
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import mlclab
import mlclab.viz.dot as dot_module
from mlclab.notebook.graphs import draw_view, function_viewer, view_payload
from mlclab.notebook.viewer import GraphViewer
from mlclab.viz import DotPlotter, Graph, Node, graph
from mlclab.viz.dot import SHARED_USES, LayoutTimeout, run_dot, svg_text, xml_text
from mlclab.viz.overview import OVERVIEW_NODES, overview
from mlclab.lang.source import Span
from mlclab.lang.typed import BindingInfo
from mlclab.viz.views import GraphView

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
# x + x + ... + x: one value read by every node of a long chain (the benchmark draws it too)
from graph_render import sum_module  # noqa: E402


def out_edges(source):
    found = {}
    for tail, _ in re.findall(r"^\s*(n\w+) -> (n\w+)", source, re.M):
        found[tail] = found.get(tail, 0) + 1
    return found


# ------------------------------------------------------------------ fan-out
def test_a_value_read_by_many_is_drawn_again_at_each_reader():
    g = graph(sum_module(130)).graph
    (x,) = g.find(kind="param")
    assert len(g.users(x.id)) == 130                           # the model keeps every use
    source = DotPlotter().digraph(g).source
    # No DOT node pulls hundreds of long edges: the shared x has one, each copy one.
    assert max(out_edges(source).values()) <= SHARED_USES
    copies = re.findall(r'id="use(\d+):main:x"', source)
    assert len(copies) == 129 and out_edges(source)["n0"] == 1
    svg = ET.fromstring(svg_text(DotPlotter().digraph(g)).encode("utf-8"))
    drawn = {el.get("id"): el.get("class") for el in svg.iter("{http://www.w3.org/2000/svg}g")}
    assert drawn["use2:main:x"] == "node mlclab-copy" and drawn["main:x"] == "node"


def test_a_value_read_by_a_few_keeps_its_edges():
    g = graph(sum_module(SHARED_USES)).graph
    source = DotPlotter().digraph(g).source
    assert "mlclab-copy" not in source
    (x,) = g.find(kind="param")
    assert out_edges(source)["n0"] == len(g.users(x.id)) == SHARED_USES


def test_big_graphs_get_capped_layout_passes():
    small = DotPlotter().digraph(graph(sum_module(10)).graph).source
    big = DotPlotter().digraph(graph(sum_module(DotPlotter.BIG_GRAPH)).graph).source
    assert "nslimit" not in small
    for key, value in DotPlotter.BIG_GRAPH_ATTRS.items():
        assert f"{key}={value}" in big


# ------------------------------------------------------------------ the overview
def test_a_big_graph_is_shown_as_an_overview_that_keeps_the_results():
    g = graph(sum_module(1000)).graph
    small = overview(g)
    assert len(small) <= OVERVIEW_NODES < len(g)
    assert small.outputs == g.outputs
    (cut,) = small.find(kind="elided")
    assert int(cut.attrs["hidden"]) + len(small) - 1 == len(g)     # every node accounted for
    lesson = graph(sum_module(20)).graph
    assert overview(lesson) is lesson


@pytest.fixture(scope="module")
def rnn():
    steps = "\n".join("    h = tanh(h @ w + x @ u + b)" for _ in range(64))
    return mlclab.compile(
        "def rnn(h: Tensor[(2, 8), f32], x: Tensor[(2, 8), f32], w: Tensor[(8, 8), f32],\n"
        "        u: Tensor[(8, 8), f32], b: Tensor[(8,), f32]):\n" + steps
        + "\n    return h\n")["rnn"]


def test_the_viewer_opens_a_big_graph_as_an_overview_and_draws_all_on_request(rnn):
    full = rnn.graph()
    assert len(full.graph) > OVERVIEW_NODES
    viewer = function_viewer(rnn)
    first = viewer.views["dataflow"]
    assert first["overview"] == {"shown": len(first["nodes"]), "total": len(full.graph)}
    assert "overview: " in viewer.static_html()
    viewer.unfold()
    whole = viewer.views["dataflow"]
    assert "overview" not in whole and len(whole["nodes"]) == len(full.graph)
    assert whole["geometry"]["svg"].count('class="node"') == len(full.graph)


# ------------------------------------------------------------------ the time limit
@pytest.fixture
def slow_dot(tmp_path, monkeypatch):
    """A stand-in for ``dot`` that never answers."""
    script = tmp_path / "slow-dot"
    script.write_text("#!/bin/sh\nexec sleep 600\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(dot_module, "DOT", str(script))
    return script


def test_a_layout_over_its_time_limit_is_stopped(slow_dot):
    with pytest.raises(LayoutTimeout, match="over 0.2 s"):
        run_dot("digraph { a -> b }", timeout=0.2)


def test_a_graph_whose_layout_runs_out_of_time_displays_as_text(slow_dot, monkeypatch):
    monkeypatch.setattr(dot_module, "LAYOUT_TIMEOUT", 0.2)
    bundle = graph(sum_module(5))._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "over 0.2 s" in bundle["text/plain"] and "Call add" in bundle["text/plain"]


def test_a_view_whose_layout_runs_out_of_time_carries_text(slow_dot, monkeypatch, rnn):
    monkeypatch.setattr(dot_module, "LAYOUT_TIMEOUT", 0.2)
    payload = view_payload(rnn, "dataflow")
    geometry = payload["geometry"]
    assert geometry["svg"] == "" and "over 0.2 s" in geometry["note"] and "tanh" in geometry["text"]
    viewer = GraphViewer({"dataflow": payload})
    assert "tanh" in viewer.static_html()


# ------------------------------------------------------------------ pasted characters
BAD = "\x1b[31mred\x1b[0m \x00\x0c \ud800 \ufffe"


def test_xml_text_replaces_what_xml_forbids_with_visible_stand_ins():
    assert xml_text(BAD) == "␛[31mred␛[0m ␀  \ufffd \ufffd"   # a form feed is whitespace
    assert xml_text("tab\tline\nok é ∑") == "tab\tline\nok é ∑"


def test_control_characters_and_lone_surrogates_draw_and_serialize():
    g = Graph("main")
    src = BindingInfo("y", f"y{BAD}", Span(2, 4, 2, 9), f"    y = log(x)  # {BAD}", "binding")
    g.add_node(Node("main:x", "param", "x", name="x"))
    g.add_node(Node("main:y", "op", f"log{BAD}", name="y", type=BAD, source=src,
                    attrs={"note": BAD}))
    g.add_edge("main:x", "main:y")
    svg = GraphView(g).svg()                                        # through the real dot
    ET.fromstring(svg.encode("utf-8"))
    assert "␛[31mred" in svg
    vm = draw_view(g)
    json.dumps(vm, ensure_ascii=False).encode("utf-8")             # what the comm sends
    assert vm["nodes"]["main:y"]["source"]["source_line"].endswith("\ufffd \ufffd")


def test_an_ansi_escape_in_a_dsl_comment_draws(tmp_path):
    fn = mlclab.compile("def f(x: Tensor[(4,), f32]):\n"
                        "    y = log(x)  # \x1b[31mred\x1b[0m\n"
                        "    return y\n")["f"]
    svg = fn.graph().svg()
    ET.fromstring(svg.encode("utf-8"))
    assert "␛[31mred" in svg
    viewer = function_viewer(fn)
    json.dumps(viewer.views, ensure_ascii=False).encode("utf-8")
    ET.fromstring(viewer.views["dataflow"]["geometry"]["svg"])
    fn.graph().render(str(tmp_path / "g.svg"))
    ET.parse(tmp_path / "g.svg")


# ------------------------------------------------------------------ fitting a column (issue 20)
SVG_NS = "{http://www.w3.org/2000/svg}"

THREE_FUNCTIONS = '''
def dense(x: Tensor[(2, 3), f32], w: Tensor[(3, 4), f32]):
    return relu(x @ w)

def head(h: Tensor[(2, 4), f32], v: Tensor[(4, 2), f32]):
    return softmax(h @ v)

def model(x: Tensor[(2, 3), f32], w: Tensor[(3, 4), f32], v: Tensor[(4, 2), f32]):
    return head(dense(x, w), v)
'''

CNN = '''
def block1(x: Tensor[(1, 1, 8, 8), f32], w: Tensor[(4, 1, 3, 3), f32], b: Tensor[(4,), f32]):
    y = relu(conv2d(x, w, b, padding=(1, 1)))
    return max_pool2d(y, (2, 2))

def block2(x: Tensor[(1, 4, 4, 4), f32], w: Tensor[(8, 4, 3, 3), f32], b: Tensor[(8,), f32]):
    y = relu(conv2d(x, w, b, padding=(1, 1)))
    return max_pool2d(y, (2, 2))

def cnn(x: Tensor[(1, 1, 8, 8), f32], w1: Tensor[(4, 1, 3, 3), f32], b1: Tensor[(4,), f32],
        w2: Tensor[(8, 4, 3, 3), f32], b2: Tensor[(8,), f32],
        w3: Tensor[(10, 32), f32], b3: Tensor[(10,), f32]):
    h1 = block1(x, w1, b1)
    h2 = block2(h1, w2, b2)
    return softmax(linear(flatten(h2), w3, b3))
'''


def shown(view):
    """(width px, smallest text px) of the notebook picture as a 953 px column shows it."""
    from mlclab.viz.fit import Fit

    bundle = view._repr_mimebundle_()
    image = bundle["image/svg+xml"]
    width = float(re.search(r'<svg width="([\d.]+)px"', image).group(1))
    svg, fit, _ = view.picture()
    return width, fit.text_px(), Fit(svg, column=953)


def boxes(svg: str) -> dict:
    """SVG element id -> (min x, min y, max x, max y) of its first shape, in SVG units."""
    root = ET.fromstring(svg.encode("utf-8"))
    out = {}
    for g in root.iter(SVG_NS + "g"):
        shape = next((el for el in g.iter() if el.tag in (SVG_NS + "ellipse", SVG_NS + "polygon",
                                                          SVG_NS + "path")), None)
        if shape is None or not g.get("id"):
            continue
        if shape.tag == SVG_NS + "ellipse":
            cx, cy, rx, ry = (float(shape.get(k)) for k in ("cx", "cy", "rx", "ry"))
            out[g.get("id")] = (cx - rx, cy - ry, cx + rx, cy + ry)
        else:
            nums = [float(v)
                    for v in re.findall(r"-?[\d.]+", shape.get("points") or shape.get("d"))]
            xs, ys = nums[0::2], nums[1::2]
            out[g.get("id")] = (min(xs), min(ys), max(xs), max(ys))
    return out


@pytest.fixture(scope="module")
def lesson3():
    return mlclab.compile(THREE_FUNCTIONS), mlclab.compile(CNN)["cnn"]


def test_lesson_3_graphs_fit_a_column_with_readable_text(lesson3):
    # Before: 1,577 px (three functions), 2,401 px (CNN) and 1,396 px (CNN, functions folded)
    # in a 953 px column, shown at their natural size as an <img>.
    from mlclab.viz.fit import COLUMN_PX, MIN_TEXT_PX

    program, cnn = lesson3
    for view in (program["model"].graph(), cnn.graph(), cnn.graph(collapse="function")):
        width, text_px, at_953 = shown(view)
        assert width <= COLUMN_PX and text_px >= MIN_TEXT_PX
        assert at_953.readable                       # the real column too
        assert view.picture()[2] == ""               # nothing had to be folded for that


def test_a_picture_keeps_its_viewbox_scales_with_its_output_and_never_below_9px():
    from mlclab.viz.fit import MIN_TEXT_PX, Fit, fit_html, fit_svg

    svg = svg_text(DotPlotter().digraph(graph(sum_module(40)).graph))
    fit = Fit(svg, column=300)
    view_box = re.search(r'viewBox="[^"]+"', svg).group()
    image, html = fit_svg(svg, column=300), fit_html(svg, column=300)
    assert view_box in image and view_box in html
    width = float(re.search(r'<svg width="([\d.]+)px"', image).group(1))
    assert width == pytest.approx(fit.width * fit.scale, abs=1)
    assert fit.smallest_text * width / fit.width >= MIN_TEXT_PX - 0.01
    # The HTML form follows its output's width down to the readable minimum, then scrolls.
    style = re.search(r'<svg [^>]*style="([^"]+)"', html).group(1)
    assert "width:100%" in style and f"max-width:{fit.width:.0f}px" in style
    assert "height:auto" in style
    assert re.search(r'<svg width="([\d.]+)px"', html).group(1) == f"{width:.0f}"
    min_width = float(re.search(r"min-width:([\d.]+)px", style).group(1))
    assert min_width == pytest.approx(fit.width * MIN_TEXT_PX / fit.smallest_text, abs=1)
    assert 'overflow-x:auto' in html and "<?xml" not in html


def test_functions_stack_and_parameters_keep_their_signature_order(lesson3):
    program, cnn = lesson3
    where = boxes(program["model"].graph().svg())
    # main on top, then the functions it calls, one under the other (not in a row).
    model, dense, head = (where[f"cluster:fn:{f}"] for f in ("model", "dense", "head"))
    assert model[3] <= dense[1] and dense[3] <= head[1]
    for fname, params in (("model", "xw"), ("dense", "xw"), ("head", "hv")):
        xs = [where[f"{fname}:{p}"][0] for p in params]
        assert xs == sorted(xs), (fname, xs)
    where = boxes(cnn.graph().svg())
    for fname in ("block1", "block2"):
        xs = [where[f"{fname}:{p}"][0] for p in "xwb"]
        assert xs == sorted(xs), (fname, xs)


def test_a_folded_function_prints_its_signature_once(lesson3):
    _, cnn = lesson3
    source = cnn.graph(collapse="function").source
    node = next(line for line in source.splitlines() if 'id="collapsed:fn:block1"' in line)
    label = node[node.index("label=<"):node.index("</table>>")]
    assert label.count("block1") == 1 and "<b>fn block1</b>" in label and "8 nodes" in label
    assert "x: Tensor" not in label               # the signature is not printed (twice) any more
    assert 'tooltip="fn block1(x: Tensor[(1, 1, 8, 8), float32]' in node    # it is the tooltip


WIDE = ("def wide(" + ", ".join(f"p{i}: Tensor[(1, 64), f32]" for i in range(14)) + "):\n"
        "    return concat((" + ", ".join(f"p{i}" for i in range(14)) + "), axis=0)\n\n"
        "def main(x: Tensor[(1, 64), f32]):\n"
        "    return relu(wide(" + ", ".join(["x"] * 14) + "))\n")


def test_a_graph_that_cannot_fit_readably_is_folded_and_says_so():
    from mlclab.viz.fit import MIN_TEXT_PX

    fn = mlclab.compile(WIDE)["main"]
    whole = fn.graph(collapse=None)
    _, text_px, fit = shown(whole)
    assert not fit.readable and text_px >= MIN_TEXT_PX      # never shrunk: it scrolls
    view = fn.graph()                                         # collapse="auto"
    svg, fit, note = view.picture()
    assert fit.readable and "each called function folded into one node" in note
    assert any(n.kind == "collapsed" for n in view.drawn.nodes.values())
    assert len(view.graph) == len(whole.graph)                # .graph is what was asked for
    bundle = view._repr_mimebundle_()
    assert "Folded to fit the column" in bundle["text/html"]
    assert bundle["text/plain"].startswith("Folded to fit the column")


def test_the_picture_of_a_big_program_is_its_overview_the_model_stays_whole():
    view = graph(sum_module(1000))
    svg, fit, note = view.picture()
    assert len(view.graph) == 1000 and len(view.drawn) <= OVERVIEW_NODES
    assert note.startswith("Drawn as an overview") and "collapse=None" in note
    assert 'id="main:lv998"' in svg and fit.readable             # the result is kept
    assert graph(sum_module(1000), collapse=None).picture()[2] == ""      # as asked: all of it


def fanout(n):
    """``x`` read by ``n`` relus side by side: about 96 px of width each."""
    from mlclab.viz.model import Cluster, Graph, Node

    g = Graph("main")
    g.add_cluster(Cluster("fn:main", "fn main", "function"))
    g.add_node(Node("main:x", "param", "x", name="x", value="main:x", group="fn:main"))
    for k in range(n):
        nid = f"main:v{k}"
        g.add_node(Node(nid, "op", "relu", name=f"v{k}", value=nid, group="fn:main"))
        g.add_edge("main:x", nid)
    g.outputs = [f"main:v{n - 1}"]
    return g


def laptop_view():
    """16 side by side, refolded to 12 (readable at 940 px, not at 600) then 6."""
    from mlclab.viz.views import GraphView

    return GraphView(fanout(16), refold=[("twelve", lambda: fanout(12)),
                                         ("six", lambda: fanout(6))])


def test_a_static_picture_carries_a_further_folded_rung_for_a_laptops_column():
    """Issue 30: at a 648 px column a static picture folds further instead of scrolling; its
    HTML holds both rungs and the column picks one with a container query (no script)."""
    from mlclab.viz.fit import COLUMN_PX, NARROW_COLUMN_PX, MIN_TEXT_PX, Fit

    view = laptop_view()
    svg, fit, note = view.picture()
    assert "twelve" in note and fit.readable and fit.min_width > NARROW_COLUMN_PX
    narrow, narrow_fit, narrow_note = view.narrow_picture()
    assert "six" in narrow_note and narrow_fit.min_width <= NARROW_COLUMN_PX
    assert Fit(narrow, NARROW_COLUMN_PX).text_px() >= MIN_TEXT_PX
    html = view._repr_mimebundle_()["text/html"]
    assert html.count("<svg ") == 2 and "container-type:inline-size" in html
    assert f"@container (max-width:{round(fit.min_width) - 1}px)" in html
    assert 'class="mlclab-rung-1" hidden style="display:none"' in html
    # a picture that fits the laptop's column already carries one rung
    small = type(view)(fanout(6))
    assert small.narrow_picture() is None and small._repr_mimebundle_()["text/html"] \
        .count("<svg ") == 1
    assert COLUMN_PX == 940


def test_fold_constants_folds_each_constant_into_its_readers_and_says_so():
    """The ladder's constants rung (issue 30): a constant read only by operators is dropped,
    each reader's card says how many it read, overlays keyed by the constant sum up on the
    reader; a constant a result or a tuple reads stays drawn."""
    from mlclab.viz.model import Cluster, Graph, Node

    g = Graph("main")
    g.add_cluster(Cluster("fn:main", "fn main", "function"))
    g.add_node(Node("x", "param", "x", name="x", group="fn:main"))
    for c in ("mean", "var", "kept"):
        g.add_node(Node(c, "const", "const", group="fn:main"))
    g.add_node(Node("bn", "op", "nn.batch_norm", name="lv", group="fn:main"))
    g.add_node(Node("t", "tuple", "Tuple", name="gv", group="fn:main"))
    for src, dst in (("x", "bn"), ("mean", "bn"), ("var", "bn"), ("bn", "t"), ("kept", "t")):
        g.add_edge(src, dst)
    g.outputs = ["t"]
    out = g.fold_constants()
    assert sorted(out.nodes) == ["bn", "kept", "t", "x"] and len(g) == 6   # a copy
    assert out.nodes["bn"].attrs == {"folded": "2 constants"}
    assert sorted(out.members["bn"]) == ["bn", "mean", "var"]
    assert all(e.src not in ("mean", "var") for e in out.edges)
    assert "folded=2 constants" in DotPlotter().digraph(out).source
    # One constant: singular; none to fold: the graph itself.
    g.edges = [e for e in g.edges if e.src != "var"]
    del g.nodes["var"]
    assert g.fold_constants().nodes["bn"].attrs == {"folded": "1 constant"}
    assert out.fold_constants() is out
