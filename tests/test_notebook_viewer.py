"""The graph viewer's Python side: SVG sanitizing, traits, static fallback, and the join of a
compiled function's graphs with its texts and validation marks."""
import numpy as np
import pytest
import traitlets

import mlclab
from mlclab.notebook.graphs import (draw_view, function_viewer, graph_viewer, view_payload,
                                    viewer_views)
from mlclab.notebook.viewer import PENDING, GraphViewer, sanitize_svg
from mlclab.viz.model import Graph, Node
from mlclab.notebook.widgets import validation_widget, widget_bundle
from mlclab.api.validation import validate

SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">{}</svg>'


def test_sanitize_svg_drops_active_content_and_keeps_drawing():
    dirty = SVG.format(
        '<g id="n1" class="node" onclick="alert(1)"><title>a</title><text>x &lt; y</text></g>'
        '<script>alert(2)</script><foreignObject><div>hi</div></foreignObject>'
        '<a xlink:href="javascript:alert(3)"><text>link</text></a><use href="#n1"/>')
    clean = sanitize_svg(dirty)
    assert "alert" not in clean and "foreignObject" not in clean and "javascript" not in clean
    assert 'id="n1"' in clean and "x &lt; y" in clean and 'href="#n1"' in clean


@pytest.mark.parametrize("bad", ["<svg", "<html><script>alert(1)</script></html>"])
def test_sanitize_svg_turns_non_svg_into_escaped_text(bad):
    out = sanitize_svg(bad)
    assert out.startswith('<pre class="mlclab-error">')
    assert "<script" not in out and "<html" not in out


def tiny(label="add"):
    g = Graph("f")
    g.add_node(Node("f:a", "op", label, name="a", value="f:a"))
    g.add_node(Node("f:b", "op", "mul", name="b", value="f:b"))
    g.add_edge("f:a", "f:b")
    return g


def test_viewer_traits_are_checked():
    v = GraphViewer({"dataflow": draw_view(tiny()), "let": draw_view(tiny())})
    assert v.view == "dataflow" and v.find("ADD") == ["f:a"]
    v.selected_node = "f:a"
    assert v.selected["label"] == "add"
    with pytest.raises(traitlets.TraitError, match="no node 'f:zz'"):
        v.selected_node = "f:zz"
    with pytest.raises(traitlets.TraitError, match="no view 'tree'"):
        v.view = "tree"
    with pytest.raises(ValueError, match="not a view model"):
        GraphViewer({"dataflow": {"svg": SVG.format(""), "nodes": {}}})


def test_viewer_bundle_carries_a_static_svg_without_script():
    v = GraphViewer({"dataflow": draw_view(tiny("n <script>alert(1)</script>"))}, highlight=["f:a"])
    data, _ = v._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert "<svg" in html and 'id="f:a"' in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html


SOURCE = """def foo(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32], c: Tensor[(2, 4), f32]):
    d = a @ b
    e = d + c
    return relu(e)
"""


@pytest.fixture(scope="module")
def foo():
    return mlclab.compile(SOURCE)["foo"]


def test_view_payloads_anchor_nodes_in_source_let_and_tvmscript(foo):
    assert viewer_views() == ("dataflow", "let", "tree", "fused")
    views = {view: view_payload(foo, view) for view in viewer_views()}
    let_lines = foo.text("let").splitlines()
    for view in ("dataflow", "let", "tree"):
        data = views[view]
        assert 'class="node"' in data["geometry"]["svg"], view
        d = data["nodes"]["foo:d"]
        assert d["name"] == "d" and d["line"] == 2 and "d = a @ b" in d["source"]["source_line"]
        assert "matmul" in d["label"]
        relax = data["texts"]["relax"].splitlines()
        assert "R.matmul" in relax[d["anchors"]["relax"] - 1]
        assert "matmul" in let_lines[d["anchors"]["let"] - 1]
    assert views["dataflow"]["namespaces"]["fn:foo"]["kind"] == "function"


def test_fused_view_shows_fuseops_groups_anchored_in_their_own_let_text(foo):
    fused = view_payload(foo, "fused")
    groups = [cid for cid, c in fused["namespaces"].items() if c["kind"] == "fused"]
    assert groups and all("fused_" in g for g in groups)
    members = [info for info in fused["nodes"].values() if info["namespace"] in groups]
    assert {"matmul", "add"} <= {m["label"] for m in members}
    let_lines = fused["texts"]["let"].splitlines()
    for m in members:
        if "let" in m["anchors"]:
            line = let_lines[m["anchors"]["let"] - 1]
            # Its ``let``, or Relay's tail: a function's last line is its result's expression.
            assert m["name"] in line or not line.lstrip().startswith("let ")
    # Lowering rewrote the vars, yet nodes still point at their DSL lines.
    assert {m["line"] for m in members} >= {2, 3}


def test_function_viewer_draws_views_when_shown_and_marks_each(foo):
    v = function_viewer(foo, annotations={"d": {"status": "diverged", "text": "bad"}},
                        highlight_bindings=["d"])
    assert v.overlay("validation")["foo:d"]["status"] == "diverged"
    assert v.highlight == ["foo:d"]
    assert v.source == foo.source and "let" in v.current["texts"]["let"]
    # Only the first view is drawn up front; the others when a student opens them.
    assert v.views["tree"] == PENDING and v.views["fused"] == PENDING
    v.view = "fused"
    fused = v.views["fused"]
    assert "<svg" in fused["geometry"]["svg"] and v.views["tree"] == PENDING
    fused_d = [nid for nid, info in fused["nodes"].items() if info.get("name") == "d"]
    assert fused_d and all(n in v.highlight and v.overlay("validation")[n]["status"] == "diverged"
                           for n in fused_d)
    v.selected_node = fused_d[0]


def test_a_view_that_fails_to_draw_says_why_in_place():
    def loader(name):
        raise RuntimeError("dot <crashed>")

    v = GraphViewer({"dataflow": draw_view(tiny()), "tree": PENDING}, loader=loader)
    v.view = "tree"
    assert v.views["tree"] == {"error": "RuntimeError: dot <crashed>", "nodes": {}}
    assert v.nodes == {} and v.find("add") == []


def test_validation_widget_highlights_and_selects_the_first_divergence(foo):
    report = validate(foo, seed=0)
    assert report.ok
    box = validation_widget(report)
    viewer = box.children[1]
    assert viewer.selected_node == "" and viewer.highlight == []
    layer = viewer.overlay("validation")
    assert layer and {e["status"] for e in layer.values()} == {"ok"}
    # Plant a divergence at d, as if TVM had computed it wrongly.
    report.bindings[0].comparison.mismatches = 1
    assert report.first_divergence == "d" and not report.ok
    viewer = validation_widget(report).children[1]
    assert viewer.selected_node == "foo:d" and "foo:d" in viewer.highlight
    assert viewer.overlay("validation")["foo:d"]["status"] == "diverged"
    data, _ = widget_bundle(validation_widget(report), report._repr_html_())
    assert "first divergence: <b>d</b>" in data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in data


def test_report_repr_and_mimebundle(foo):
    a = np.ones((2, 3), "float32")
    report = validate(foo, a, np.ones((3, 4), "float32"), np.zeros((2, 4), "float32"))
    assert repr(report).startswith("<ValidationReport foo: pass")
    data, _ = report._repr_mimebundle_()
    assert "mlclab-badge mlclab-pass" in data["text/html"]


def test_unfolding_an_overview_draws_the_whole_view_through_the_loader():
    calls = []
    whole = tiny()

    def loader(name, full=False):
        calls.append((name, full))
        return draw_view(whole, full=True)

    overview = draw_view(whole, full=True)
    overview["overview"] = {"shown": 1, "total": 2}
    v = GraphViewer({"dataflow": overview, "let": draw_view(tiny())}, loader=loader)
    assert "overview: 1 of 2 nodes" in v.static_html()
    v.unfold("let")                                   # not an overview: nothing to draw
    assert calls == []
    v.unfold()
    assert calls == [("dataflow", True)] and v.unfolded == ["let", "dataflow"]
    assert "overview" not in v.views["dataflow"] and set(v.nodes) == {"f:a", "f:b"}
    # Without a loader the overview stays (and says so), and folding is not offered.
    still = GraphViewer({"dataflow": overview})
    still.unfold()
    assert still.views["dataflow"]["overview"] == {"shown": 1, "total": 2} and not still.live


def test_folding_any_namespace_is_laid_out_again_by_the_one_fold(foo):
    v = graph_viewer({"fused": foo.graph("fused", collapse=None).graph})
    group = next(cid for cid, ns in v.current["namespaces"].items() if ns["kind"] == "fused")
    members = [nid for nid, n in v.nodes.items() if n["namespace"] == group]
    v.fold(group)
    (box,) = [n for n in v.nodes.values() if n["folded"]]
    assert box["folded"]["namespace"] == group and box["folded"]["nodes"] == len(members)
    assert v.current["namespaces"][group]["folded"] and not set(members) & set(v.nodes)
    assert f'id="{box["id"]}"' in v.current["geometry"]["svg"]
    v.fold(group, folded=False)
    assert set(members) <= set(v.nodes)
    with pytest.raises(ValueError, match="no namespace 'nope'"):
        v.fold("nope")


def test_a_fold_sends_only_what_changed(foo, monkeypatch):
    # The texts a view is anchored in stay as they were when a namespace folds: the message
    # names them instead of sending them again (half of a BERT-base fold's view model).
    v = function_viewer(foo)
    v.view = "fused"
    before = v.views["fused"]
    sent = []
    monkeypatch.setattr(v.comm, "publish_msg", lambda msg_type, data=None, **_: sent.append(data))
    group = next(cid for cid, ns in before["namespaces"].items() if ns["kind"] == "fused")
    v.fold(group)
    (msg,) = [m["content"] for m in sent if m.get("method") == "custom"]
    assert msg["event"] == "view" and msg["name"] == "fused" and "texts" in msg["same"]
    assert "texts" not in msg["view"] and "namespaces" in msg["view"]
    # What the front end rebuilds (switcher.js receiveView) is the kernel's view.
    rebuilt = {**msg["view"], **{k: before[k] for k in msg["same"]}}
    assert rebuilt == v.views["fused"]


def test_a_function_with_a_100000_character_name_draws_and_saves(tmp_path):
    """Graphviz reads no quoted string over 16,384 bytes: the ids holding the name are
    written to DOT in joined pieces, and the SVG carries them whole."""
    name, value = "f" * 100_000, "v" * 50_000
    fn = mlclab.compile(f"def {name}(x: Tensor[(2,), f32]):\n    {value} = relu(x)\n"
                        f"    return {value} + 1.0\n")[name]
    assert f'id="{name}:{value}"' in fn.graph().svg()
    path = tmp_path / "viewer.html"
    fn.viewer().save(str(path))
    assert path.stat().st_size > 100_000


def test_a_viewer_refuses_copy_and_pickle_saying_what_to_keep():
    """pickle's own error was "not the same object as ...GraphViewer"; a live widget says
    what to keep instead (its page)."""
    import copy
    import pickle

    from mlclab.notebook.scrubber import pass_scrubber

    fn = mlclab.compile("def f(x: Tensor[(2,), f32]):\n    return relu(x)\n")["f"]
    for viewer in (fn.viewer(), pass_scrubber(fn), mlclab.compare(fn, fn)):
        for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
            with pytest.raises(TypeError, match=r"is a live widget.*\.save\('page\.html'\)"):
                attempt(viewer)
