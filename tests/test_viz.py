"""The graph model, the three binding views and the plotters (mlclab.viz)."""
import json
import re
import warnings
import xml.etree.ElementTree as ET

import graphviz
import numpy as np
import pytest

import mlclab
from programs import BRANCHY, LOG_TWICE
from mlclab.lang import dims as D
from mlclab.lang.source import Span
from mlclab.lang.typed import BindingInfo
from mlclab.viz import (INSTALL_HINT, DataflowParser, DotPlotter, Graph, LetParser,
                        MissingDotWarning, Node, TermPlotter, TreeParser, Visualizer, graph)

import tvm
from tvm import relax, tirx  # noqa: E402
from tvm.relax import op as R  # noqa: E402

SRC = LOG_TWICE + "\n" + BRANCHY.format(name="branchy") + "\n" + '''\
def dense(x: Tensor[(2, 3), f32], w: Tensor[(3, 3), f32]):
    return relu(x @ w)

def main(x: Tensor[(2, 3), f32], w: Tensor[(3, 3), f32]):
    h = dense(x, w)
    return h + h
'''


@pytest.fixture(scope="module")
def prog():
    return mlclab.compile(SRC)


def dot_nodes(source):
    """Node statements of a DOT source: ``n3 [...]`` lines."""
    return re.findall(r"^\s*(n\d+) \[", source, re.M)


def dot_edges(source):
    return re.findall(r"^\s*(n\d+) -> (n\d+)", source, re.M)


# ------------------------------------------------------------------ the key lesson example
def test_dataflow_draws_a_shared_value_once_with_fan_out(prog):
    view = prog["f"].graph("dataflow")
    g = view.graph
    logs = g.find(op="log")
    assert len(logs) == 1
    (add,) = g.find(op="add")
    assert g.inputs(add.id) == [logs[0].id, logs[0].id]
    assert sorted(g.users(logs[0].id)) == [add.id, add.id]
    src = view.source
    assert len(dot_nodes(src)) == len(g.nodes) == 3          # x, log, add
    assert len(dot_edges(src)) == len(g.edges) == 3          # x->log, log->add twice
    assert src.count("<b>log</b>") == 1


def test_tree_duplicates_the_shared_value_and_marks_it_recomputed(prog):
    g = prog["f"].graph("tree").graph
    logs = g.find(op="log")
    assert len(logs) == 2
    assert sorted(n.recomputed for n in logs) == [False, True]
    assert {n.value for n in logs} == {"f:y"}                # one value, two evaluations
    assert len(g.find(kind="param")) == 2                    # a tree: x under each log
    src = DotPlotter().digraph(g).source
    assert src.count("<b>log</b>") == 2 and "recomputed" in src


def test_let_view_lists_bindings_in_order(prog):
    g = prog["f"].graph("let").graph
    seq = [e for e in g.edges if e.kind == "seq"]
    order = [seq[0].src] + [e.dst for e in seq]
    assert [g.nodes[n].text for n in order] == ["x: Tensor[(8), float32]", "let y = log(x)",
                                                "let gv = add(y, y)", "gv"]
    assert g.nodes[order[-1]].kind == "return"
    text = TermPlotter().render(g)
    assert text.index("let y = log(x)") < text.index("let gv = add(y, y)") < text.index("Return gv")


def test_every_view_carries_the_same_identity_and_dsl_line(prog):
    fn = prog["f"]
    for view in ("dataflow", "tree", "let"):
        (node,) = [n for n in fn.graph(view).graph.nodes.values()
                   if n.value == "f:y" and not n.recomputed]
        assert node.name == "y"
        assert node.line == 2 and node.source.source_line.strip() == "y = log(x)"
        assert node.source.dsl_name == "y"


def test_term_plotter_dataflow_points_back_to_shared_values(prog):
    text = prog["f"].graph("dataflow").text
    assert text.splitlines() == [
        "fn f(x: Tensor[(8), float32])",
        "`-Call add %gv : Tensor[(8), float32] <line 3>",
        "  |-Call log %y : Tensor[(8), float32] <line 2>",
        "  | `-Param %x : Tensor[(8), float32] <line 1>",
        "  `-^ %y (shared, shown above)",
    ]


# ------------------------------------------------------------------ if scopes
def test_if_branches_are_nested_scopes(prog):
    g = prog["branchy"].graph("let").graph
    kinds = {c.kind for c in g.clusters.values()}
    assert {"function", "then", "else"} <= kinds
    then = next(c for c in g.clusters.values() if c.kind == "then")
    els = next(c for c in g.clusters.values() if c.kind == "else")
    in_then = {n.op for n in g.nodes.values() if n.group == then.id}
    in_else = {n.op for n in g.nodes.values() if n.group == els.id}
    assert {"multiply", "nn.relu"} <= in_then and "negative" in in_else
    assert "negative" not in in_then
    (if_node,) = g.find(kind="if")
    branch = {e.label for e in g.edges if e.src == if_node.id and e.kind == "branch"}
    assert branch == {"then", "else"}
    text = TermPlotter().render(g)
    assert re.search(r"\|-then:\n\| \|-let \w+ = multiply\(x, 2f\)", text)


def test_if_in_dataflow_feeds_branch_results_into_the_if(prog):
    g = prog["branchy"].graph("dataflow").graph
    (if_node,) = g.find(kind="if")
    labels = sorted(e.label for e in g.edges if e.dst == if_node.id and e.kind == "branch")
    assert labels == ["else", "then"]
    assert g.nodes[g.inputs(if_node.id)[0]].op == "greater"


# ------------------------------------------------------------------ functions and big graphs
def test_multi_function_module_main_first_one_cluster_each_calls_drawn(prog):
    g = prog["main"].graph("dataflow").graph
    clusters = [c for c in g.clusters.values() if c.kind == "function"]
    assert [c.id for c in clusters] == ["fn:main", "fn:dense"]
    (call,) = g.find(kind="call")
    assert call.op == "dense"
    (edge,) = [e for e in g.edges if e.kind == "call"]
    assert edge.src == call.id and g.nodes[edge.dst].group == "fn:dense"
    src = graph(prog["main"]).source
    assert re.search(r'lhead="?cluster_1\b', src) and "compound=true" in src


def test_let_view_draws_calls_into_the_callee_scope(prog):
    g = prog["main"].graph("let").graph
    (edge,) = [e for e in g.edges if e.kind == "call"]
    assert g.nodes[edge.src].text == "let h = dense(x, w)"
    assert g.nodes[edge.dst].group == "fn:dense" and g.nodes[edge.dst].kind == "param"


def test_collapse_by_function_folds_the_callee(prog):
    full = prog["main"].graph("dataflow").graph
    folded = prog["main"].graph("dataflow", collapse="function").graph
    (box,) = folded.find(kind="collapsed")
    assert box.op.startswith("fn dense") and box.folded.nodes == 4 and box.folded.kind == "function"
    assert len(folded) == len(full) - 4 + 1
    assert not any(n.group == "fn:dense" for n in folded.nodes.values())


def chain_module(n):
    """A 1-D chain of ``n`` unary ops: the shape of a deep network."""
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            v = x
            for i in range(n - 1):
                v = bb.emit(R.nn.relu(v) if i % 2 else R.exp(v))
            v = bb.emit_output(R.negative(v))
        bb.emit_func_output(v)
    return bb.get()


def test_depth_limit_keeps_the_result_end_and_marks_the_cut():
    g = graph(chain_module(50), depth=3).graph
    ops = [n for n in g.nodes.values() if n.kind == "op"]
    assert len(ops) == 4                            # the result and 3 edges back
    (cut,) = g.find(kind="elided")
    assert int(cut.attrs["hidden"]) == 51 - 4       # 50 ops + x, minus what is shown
    assert "… 47 more" in DotPlotter().digraph(g).source


def test_thousand_node_graph_parses_and_plots_without_recursion_limits():
    view = graph(chain_module(1000))
    assert len(view.graph) == 1001
    assert len(dot_nodes(view.source)) == 1001
    assert view.text.count("\n") == 1002            # header + one line per node
    tree = graph(chain_module(1000), "tree").graph
    assert len(tree) == 1001


def test_tree_view_stops_at_max_nodes():
    # Each level uses the previous value twice: the tree doubles at every level.
    x = relax.Var("x", relax.TensorType((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            v = x
            for _ in range(20):
                v = bb.emit(R.add(v, v))
            v = bb.emit_output(v)
        bb.emit_func_output(v)
    g = graph(bb.get(), "tree", max_nodes=300).graph
    assert len(g.find(kind="elided")) >= 1
    assert len([n for n in g.nodes.values() if n.kind != "elided"]) == 300


# ------------------------------------------------------------------ bare Relax input
def bare_module():
    n = tirx.Var("n", "int64")
    x = relax.Var("x", relax.TensorType((n, 3, 8, 8), "float32"))
    w = relax.Var("w", relax.TensorType((4, 3, 3, 3), "float32"))
    ones = relax.const(np.ones(4, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            c = bb.emit(R.nn.conv2d(x, w, strides=1, padding=1), "c")
            t = bb.emit(R.nn.batch_norm(c, ones, ones, ones, ones, axis=1, training=False), "t")
            g = bb.emit(relax.TupleGetItem(t, 0), "g")
            s = bb.emit(R.sum(g, axis=[2, 3]), "s")
            out = bb.emit_output(relax.Tuple([s, g]), "out")
        bb.emit_func_output(out)
    return bb.get()


def test_bare_module_cards_show_attrs_symbolic_shapes_and_constants():
    g = DataflowParser().parse(bare_module())
    (conv,) = g.find(op="nn.conv2d")
    assert conv.type == "Tensor[(n, 4, 8, 8), float32]"
    assert conv.attrs == {"padding": "[1, 1, 1, 1]"}    # defaults (strides 1, NCHW) left out
    assert conv.source is None                        # plain IR: no DSL behind it
    consts = g.find(kind="const")
    assert len(consts) == 1                           # one constant object used 4 times
    (bn,) = g.find(op="nn.batch_norm")
    assert g.inputs(bn.id) == [conv.id] + [consts[0].id] * 4
    (item,) = g.find(kind="getitem")
    assert item.attrs == {"index": "0"} and g.inputs(item.id) == [bn.id]
    (tup,) = g.find(kind="tuple")
    assert tup.is_output and g.outputs == [tup.id]
    json.dumps(g.to_dict())                           # JSON-able for the notebook widget


def test_symbolic_sizes_read_the_same_in_views_and_in_types():
    """One spelling of a symbolic size (lang.dims): TVM's ``(h - 3) // 2 + 1`` is shown as
    mlclab's own types print it."""
    fn = mlclab.compile('def f(y: Tensor[("b", 3, "h", 8), f32], w: Tensor[(2, 3, 3, 3), f32],'
                        ' x: Tensor[("n", 3, 4), f32]):\n'
                        '    return conv2d(y, w, strides=2), flatten(x)\n')["f"]
    conv_t, flat_t = fn.typed.ret_type.fields
    g = fn.graph("dataflow").graph
    (conv,) = g.find(op="nn.conv2d")
    (flat,) = g.find(op="nn.batch_flatten")
    assert conv.type == f"Tensor[{D.format_shape(conv_t.shape)}, float32]"
    assert "((h - 3)//2) + 1" in conv.type
    assert flat.type == "Tensor[(n, 12), float32]"


def test_a_tvm_span_is_quoted_from_the_line_python_numbered():
    """Plain IR carrying TVM spans: its node source is a BindingInfo whose line is looked up
    as the tokenizer splits (a form feed in a comment does not end a line)."""
    from mlclab.viz.relax_info import Subject

    src = "# a\x0c comment\ndef f(x):\n    y = log(x)\n"
    span = Span(3, 4, 3, 14).to_tvm(tvm.ir.SourceName("f.py"))
    x = relax.Var("x", relax.TensorType((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(relax.Call(tvm.ir.Op.get("relax.log"), [x], span=span), "y")
        bb.emit_func_output(y)
    g = DataflowParser().parse(Subject(bb.get(), "main", source=src))
    (node,) = g.find(op="log")
    assert node.source == BindingInfo("y", None, Span(3, 4, 3, 14), "    y = log(x)", "binding")
    assert node.to_dict()["source"]["source_line"] == "    y = log(x)"


def test_params_bound_to_weights_are_drawn_as_constants():
    g = DataflowParser().parse(bare_module(), params={"w": np.zeros((4, 3, 3, 3), "float32")})
    assert g.nodes["main:w"].kind == "const" and g.nodes["main:w"].attrs == {"bound": "weight"}


def test_relax_function_without_module_is_accepted():
    fn = bare_module()["main"]
    assert len(DataflowParser().parse(fn)) == 8     # x, w, const, c, t, g, s, out
    tree = TreeParser().parse(fn)
    # out -> (s -> g, g): g's subtree (g, t, c, x, w, 4 constants: 9 nodes) appears twice.
    assert len(tree) == 2 + 2 * 9
    assert [n.recomputed for n in tree.find(name="g")] == [False, True]
    assert LetParser().parse(fn).name == "main"


def test_unknown_view_and_function_are_clear_errors(prog):
    with pytest.raises(ValueError, match="dataflow, let, tree"):   # registration order
        graph(prog["f"], "ssa")
    with pytest.raises(ValueError, match="no Relax function 'nope'"):
        graph(bare_module(), function="nope")
    with pytest.raises(TypeError, match="relax.Function or an IRModule"):
        graph(42)


# ------------------------------------------------------------------ plotters and escaping
def test_visualizer_api_returns_text_or_digraph_or_file(prog, tmp_path):
    text = Visualizer(prog["f"], plotter=TermPlotter()).render()
    assert isinstance(text, str) and "Call log %y" in text
    dot = Visualizer(prog["f"], plotter=DotPlotter(), parser=TreeParser()).render()
    assert isinstance(dot, graphviz.Digraph) and dot.source.count("<b>log</b>") == 2
    out = Visualizer(prog["f"]).render(str(tmp_path / "f.svg"))
    assert out.endswith("f.svg") and "<svg" in (tmp_path / "f.svg").read_text()
    assert Visualizer(bare_module(), plotter=TermPlotter(), parser=LetParser()).render() \
        .startswith("fn main(")


def test_dot_nodes_carry_ids_that_reach_the_svg(prog):
    view = prog["f"].graph()
    assert 'id="f:y"' in view.source
    svg = ET.fromstring(view.svg())
    ids = {el.get("id") for el in svg.iter() if el.get("id")}
    assert {"f:x", "f:y", "f:gv", "cluster:fn:f"} <= ids


NASTY = 'a<b>&"c\' \\N {x} ]> \n end'


def test_labels_escape_html_and_dot_characters():
    g = Graph("m&<x>")
    g.add_node(Node("weird", "op", NASTY, name="n<1>", type='Tensor["&"]', attrs={"k<": NASTY}))
    g.add_node(Node("p\\x", "param", "p", name="p",
                    source=BindingInfo("p", None, Span(1, 0, 1, 5), 'print("a\\"b") # <&>',
                                       "param")))
    g.add_edge("p\\x", "weird", 0, "data", label="<&>")
    dot = DotPlotter().digraph(g)
    src = dot.source
    assert "a&lt;b&gt;&amp;&quot;c&#39;" in src
    assert "<b>a<b>" not in src and "n<1>" not in src
    assert 'id="p\\\\x"' in src                          # backslash kept literal, not \x escape
    svg = dot.pipe(format="svg", encoding="utf-8")      # dot accepts it ...
    root = ET.fromstring(svg)                           # ... and the SVG is well formed
    texts = "".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    assert 'a<b>&"c\'' in texts                          # the student sees the real text
    ids = {el.get("id") for el in root.iter()}
    assert "p\\x" in ids
    titles = [el.get("{http://www.w3.org/1999/xlink}title") for el in root.iter()]
    assert 'line 1: print("a\\"b") # <&>' in titles          # the tooltip, intact


def test_term_plotter_keeps_each_node_on_one_line():
    g = Graph("m")
    g.add_node(Node("a", "op", "op\nwith newline", name="v"))
    g.outputs.append("a")
    lines = TermPlotter().render(g).splitlines()
    assert lines == ["`-Call op\\nwith newline %v"]


# ------------------------------------------------------------------ missing dot
def test_missing_dot_falls_back_to_text_with_an_install_hint(prog, monkeypatch, tmp_path):
    # mlclab runs Graphviz itself (with a time limit): point it at a program that is not there,
    # in an install without the WebAssembly Graphviz too (with it, the browser lays the graph
    # out: tests/test_browser_layout.py).
    import mlclab.notebook.browser_layout

    monkeypatch.setattr(mlclab.viz.dot, "DOT", "no-such-graphviz-dot")
    monkeypatch.setattr(mlclab.notebook.browser_layout, "MODULE", tmp_path / "no-graphviz.js")
    view = prog["f"].graph("tree")
    bundle = view._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert bundle["text/plain"].startswith(INSTALL_HINT)
    assert "recomputed" in bundle["text/plain"]
    assert "apt-get install graphviz" in bundle["text/html"]
    assert "&lt;line 2&gt;" in bundle["text/html"]      # the text is escaped into the HTML
    with pytest.warns(MissingDotWarning, match="apt-get install graphviz"):
        written = view.render(str(tmp_path / "g.png"))
    assert written.endswith("g.txt")
    assert "Call log %y" in (tmp_path / "g.txt").read_text()
    assert not (tmp_path / "g.png").exists()


def test_repr_mimebundle_with_dot_gives_svg_and_text(prog):
    bundle = prog["f"].graph()._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert bundle["text/plain"].startswith("fn f(")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # nothing to warn about here
        prog["f"].graph().render("/dev/null", "dot")


def test_a_whole_program_or_module_draws_every_function_main_first(prog):
    g = graph(prog).graph                                    # an mlclab Program
    functions = [c.id for c in g.clusters.values() if c.kind == "function"]
    assert functions[:2] == ["fn:main", "fn:dense"]           # main, then what it calls
    assert set(functions) == {f"fn:{name}" for name in prog}
    assert g.nodes["f:y"].line == 2                  # DSL lines kept
    assert [c.id for c in graph(prog.mod).graph.clusters.values()
            if c.kind == "function"] == functions
    only_f = graph(prog.mod, function="f").graph
    assert [c.id for c in only_f.clusters.values()] == ["fn:f"]


def test_imported_pytorch_model():
    import torch
    from tvm.relax.frontend.torch import from_fx

    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 4)).eval()
    mod = from_fx(torch.fx.symbolic_trace(model), [((2, 8), "float32")])
    g = graph(mod).graph
    assert len(g.find(op="matmul")) == 2 and len(g.find(op="nn.relu")) == 1
    assert len(g.find(kind="const")) == 4                    # two weights, two biases
    assert g.nodes[g.outputs[0]].op == "add"
    text = graph(mod, "let").text
    assert "let lv" in text and "nn.relu" in text


def test_docs_list_exactly_the_registered_views_and_styles():
    from pathlib import Path

    import mlclab.inspect.texts.registry as styles
    import mlclab.viz.registry as views

    doc = (Path(__file__).parents[1] / "docs" / "visualizer.md").read_text()
    assert views.markdown_table() in doc, "regenerate with mlclab.viz.registry.markdown_table()"
    assert styles.markdown_table() in doc, \
        "regenerate with mlclab.inspect.texts.registry.markdown_table()"


def test_plotters_read_the_layout_not_the_view_name(prog):
    from mlclab.viz.dot import DotPlotter

    g = LetParser().parse(prog["f"])
    assert g.layout == "sequence" and g.to_dict()["layout"] == "sequence"
    g.view = "renamed"                        # the view's name says nothing to a plotter
    assert "let y = log(x)" in TermPlotter().render(g)
    assert 'constraint="false"' in DotPlotter().digraph(g).source
    flat = DataflowParser().parse(prog["f"])
    assert flat.layout == "dataflow" and 'constraint' not in DotPlotter().digraph(flat).source
    assert flat.collapse(("function",)).layout == "dataflow"
    assert g.limit_depth(1).layout == g.copy().layout == "sequence"


def test_registering_a_view_twice_or_without_a_layout_is_refused():
    from mlclab.viz.registry import register_view

    with pytest.raises(ValueError, match="already registered"):
        register_view("dataflow", DataflowParser, title="x", description="x")

    class NoLayout:
        layout = "spiral"

        def parse(self, fn, function=None, params=None):
            raise AssertionError

    with pytest.raises(ValueError, match="layout to one of dataflow, tree, sequence"):
        register_view("spiral", NoLayout, title="x", description="x")


def test_bad_graph_options_name_the_parameter(prog):
    f = prog["f"]
    with pytest.raises(TypeError, match="depth must be an int.*'a'"):
        graph(f, depth="a")
    with pytest.raises(ValueError, match="depth must be >= 0, got -1"):
        graph(f, depth=-1)
    with pytest.raises(ValueError, match="collapse must be one of"):
        graph(f, collapse=["group"])
    with pytest.raises(ValueError, match="max_nodes must be a positive int"):
        graph(f, "tree", max_nodes="many")
    with pytest.raises(TypeError, match="params must be a dict"):
        graph(f, params=[1, 2])
    with pytest.raises(ValueError, match="view: unknown view 3"):
        graph(f, 3)
    with pytest.raises(TypeError, match="depth must be an int"):
        f.pipeline()["FuseOps"].graph(depth="a")
    with pytest.raises(ValueError, match="params: f has no parameter 'w'; it has x"):
        graph(f, params={"w": np.ones(8, "float32")})
    with pytest.raises(TypeError, match="function must be a function's name"):
        graph(f, function=3)
    with pytest.raises(ValueError, match="function: no Relax function 'g'"):
        f.text("relay", function="g")


def test_a_node_kind_the_plotters_do_not_know_is_refused():
    from mlclab.viz.model import NODE_KINDS, Node

    assert Node("n0", "op", "add").kind in NODE_KINDS
    with pytest.raises(ValueError, match="kind 'operator' is not one of"):
        Node("n1", "operator", "add")


def test_a_graph_view_with_refolds_copies_and_pickles(prog):
    """A refold is a closure over its graph (the profile's overlay one too): a copy or a
    pickle carries the folded graphs themselves and draws the same picture."""
    import copy
    import pickle

    fn = prog["main"]
    views = [fn.graph(), fn.graph("fused"), fn.graph("fused", profile=fn.profile(repeat=1))]
    for view in views:
        assert view._refold, "each of these can fold a called function further"
        for again in (pickle.loads(pickle.dumps(view)), copy.copy(view), copy.deepcopy(view)):
            assert [g.nodes.keys() for g, _ in again.rungs()] == \
                [g.nodes.keys() for g, _ in view.rungs()]
            assert again.source == view.source


ODD_NAMES = ["<b>x</b>", "<x>", 'a"b', "a{b}c", "a\\b", "a\\", "x -> y; z", "é名", "a\nb",
             "a\x07b", "edge:0"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_function_named_with_markup_or_dot_syntax_draws(name):
    """A Relax function's name is the graph's name: `<b>x</b>` was written into DOT as an
    HTML-like string, a syntax error for dot."""
    x = relax.Var("x", relax.TensorType((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function(name, [x]):
        bb.emit_func_output(bb.emit(R.nn.relu(x)))
    view = mlclab.viz.graph(bb.get())
    root = ET.fromstring(view.svg())
    title = root.find("{http://www.w3.org/2000/svg}g/{http://www.w3.org/2000/svg}title")
    shown = {"a\\b": "a\\\\b", "a\\": "a\\\\", "a\nb": "a b", "a\x07b": "a\u2407b"}
    assert title.text == shown.get(name, name)   # (a backslash shows doubled)
    html = view._repr_mimebundle_()["text/html"]
    assert "<b>x</b>" not in html


def test_a_dot_value_past_graphvizs_string_limit_is_joined_from_pieces():
    """Graphviz refuses a quoted string over 16,384 bytes; a piece never ends between a
    backslash and what it escapes."""
    from mlclab.viz.dot import dot_string, run_dot
    from mlclab.viz.dot_quote import attr_list

    for value in ("é" * 20_000, "a" * 3_999 + "\\" * 3 + '"' * 5 + "b" * 30_000,
                  "a" * 3_999 + "\\\\" + "c" * 20_000):
        source = f"digraph g {{ n0 {attr_list({'id': dot_string(value)})} }}"
        svg = run_dot(source).decode()
        node = ET.fromstring(svg).find(".//{http://www.w3.org/2000/svg}g[@class='node']")
        assert node.get("id") == value
