"""The four texts of a function (mlclab.inspect.text): goldens for small programs."""
import numpy as np
import pytest

import mlclab
from programs import BRANCHY, LOG_TWICE, SAME_NAME_CALLS
from mlclab.inspect.text import render_text, style_names, text

from tvm import relax  # noqa: E402
from tvm.relax import op as R  # noqa: E402

SRC = LOG_TWICE + "\n" + BRANCHY.format(name="branchy") + "\n" + '''\
def mlp(x: Tensor[("n", 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):
    h = relu(linear(x, w, b))
    return softmax(h, axis=-1), h

def conv(x: Tensor[(1, 3, 8, 8), f32], w: Tensor[(4, 3, 3, 3), f32]):
    return max_pool2d(conv2d(x, w, padding=(1, 1)), (2, 2))

def main(x: Tensor[(8,), f32]):
    a = f(x)
    return f(a) * 2.0
'''


@pytest.fixture(scope="module")
def prog():
    return mlclab.compile(SRC)


def test_relay_graph_binding_numbers_values_and_computes_log_once(prog):
    assert text(prog["f"], "relay") == (
        "fn (%x: Tensor[(8), float32]) {\n"
        "  %0 = log(%x);\n"
        "  add(%0, %0)\n"
        "}\n")


def test_let_form_names_values_in_order(prog):
    assert text(prog["f"], "let") == (
        "fn (%x: Tensor[(8), float32]) {\n"
        "  let %y = log(%x);\n"
        "  add(%y, %y)\n"
        "}\n")
    # Relay's ToANormalForm numbering, as the course notes print it.
    assert text(prog["f"], "let", names="fresh") == (
        "fn (%x: Tensor[(8), float32]) {\n"
        "  let %v1 = log(%x);\n"
        "  add(%v1, %v1)\n"
        "}\n")


def test_if_is_a_nested_scope_in_both_forms(prog):
    assert text(prog["branchy"], "relay") == (
        "fn (%x: Tensor[(4), float32]) {\n"
        "  %0 = sum(%x);\n"
        "  %1 = greater(%0, 0f);\n"
        "  if (%1) {\n"
        "    %2 = multiply(%x, 2f);\n"
        "    nn.relu(%2)\n"
        "  } else {\n"
        "    negative(%x)\n"
        "  }\n"
        "}\n")
    let = text(prog["branchy"], "let")
    # The bindings computed only in a branch are let-bound inside that branch's braces.
    then_part = let[let.index("if ("):let.index("} else {")]
    else_part = let[let.index("} else {"):]
    assert "multiply(%x, 2f)" in then_part and "multiply" not in else_part
    assert "negative(%x)" in else_part


def test_attrs_symbolic_shapes_and_tuples(prog):
    assert text(prog["mlp"], "relay") == (
        "fn (%x: Tensor[(n, 8), float32], %w: Tensor[(4, 8), float32], "
        "%b: Tensor[(4), float32]) {\n"
        "  %0 = permute_dims(%w);\n"
        "  %1 = matmul(%x, %0);\n"
        "  %2 = add(%1, %b);\n"
        "  %3 = nn.relu(%2);\n"
        "  %4 = nn.softmax(%3);\n"
        "  (%4, %3)\n"
        "}\n")
    # Only attributes that differ from the operator's defaults, as Relay printed them.
    assert text(prog["conv"], "relay").splitlines()[1:3] == [
        "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);",
        "  nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2])",
    ]


def test_calls_between_functions_print_as_a_relay_module(prog):
    assert text(prog["main"], "relay") == (
        "def @main(%x: Tensor[(8), float32]) {\n"
        "  %0 = @f(%x);\n"
        "  %1 = @f(%0);\n"
        "  multiply(%1, 2f)\n"
        "}\n"
        "\n"
        "def @f(%x: Tensor[(8), float32]) {\n"
        "  %0 = log(%x);\n"
        "  add(%0, %0)\n"
        "}\n")


def test_tensor_constants_print_as_meta_references():
    x = relax.Var("x", relax.TensorType((3,), "float32"))
    k = relax.const(np.arange(3, dtype="float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.add(x, k))
            b = bb.emit_output(R.multiply(a, k))
        bb.emit_func_output(b)
    assert text(bb.get(), "relay", types=True) == (
        "fn (%x: Tensor[(3), float32]) {\n"
        "  %0 = add(%x, meta[relay.Constant][0]); /* ty=Tensor[(3), float32] */\n"
        "  multiply(%0, meta[relay.Constant][0])\n"
        "}\n")


def test_relax_text_is_tvmscript_annotated_with_dsl_lines(prog):
    out = text(prog["f"], "relax")
    assert "@R.function" in out and "def f(x: R.Tensor((8,), dtype=\"float32\"))" in out
    assert 'y: R.Tensor((8,), dtype="float32") = R.log(x)  # line 2: y = log(x)' in out
    assert "# line 3: return y + y" in out
    plain = text(prog["f"], "relax", annotate=False)
    assert "# line" not in plain and "R.log(x)" in plain


def test_relax_text_of_a_caller_includes_its_callees(prog):
    out = text(prog["main"], "relax")
    assert "class Module" in out and "def f(" in out and "cls.f(x)" in out


def test_tir_text_is_the_lowered_primfuncs(prog):
    out = text(prog["f"], "tir")
    assert "@T.prim_func" in out and "T.log(" in out
    assert "R.function" not in out                   # only TensorIR, no Relax
    mlp = text(prog["mlp"], "tir")
    assert "def fused_" in mlp                        # what FuseOps/FuseTIR made of it


def test_every_text_line_maps_to_the_value_ids_of_the_graph_views(prog):
    fn = prog["f"]
    graph_values = {n.value for n in fn.graph("dataflow").graph.nodes.values()}
    for style in ("relax", "relay", "let"):
        t = render_text(fn, style)
        lines = t.text.splitlines()
        assert set(t.line_values.values()) <= graph_values
        (y_line,) = [i for i, v in t.line_values.items() if v == "f:y"]
        assert "log(" in lines[y_line - 1]


def test_unknown_style_is_a_clear_error(prog):
    assert style_names() == ("relax", "relay", "let", "tir")
    with pytest.raises(ValueError, match="relax, relay, let, tir"):
        text(prog["f"], "llvm")
    with pytest.raises(ValueError, match="'ir' or 'fresh'"):
        text(prog["f"], "let", names="v")


def test_required_attributes_stay_and_defaults_go():
    bn = mlclab.compile(
        "def bn(x: Tensor[(1, 4, 2, 2), f32], g: Tensor[(4,), f32], b: Tensor[(4,), f32],\n"
        "       m: Tensor[(4,), f32], v: Tensor[(4,), f32]):\n"
        "    return batch_norm(x, g, b, m, v)\n")["bn"]
    # axis has no default (always shown); inference mode differs from the default training=True.
    assert "nn.batch_norm(%x, %g, %b, %m, %v, axis=1, training=False)" in text(bn, "relay")


def test_bad_text_options_name_the_parameter(prog):
    f = prog["f"]
    with pytest.raises(TypeError, match="text style 'relay' has no option 'names'"):
        text(f, "relay", names="fresh")
    with pytest.raises(TypeError, match="'tir' has no option 'bogus' \\(it takes no options\\)"):
        text(f, "tir", bogus=1)
    with pytest.raises(TypeError, match="types must be True or False, got 'yes'"):
        text(f, "let", types="yes")
    with pytest.raises(TypeError, match="annotate must be True or False"):
        text(f, "relax", annotate=None)
    with pytest.raises(ValueError, match="style: unknown text style 3"):
        text(f, 3)


def test_a_registered_style_is_one_module_and_one_call(prog):
    from mlclab.inspect.texts import IRText, register_style, unregister_style

    def shout(subject, loud: bool = True):
        return IRText("shout", subject.name.upper() + ("!" if loud else "") + "\n")

    register_style("shout", shout, title="SHOUT", description="the name, loudly")
    try:
        assert "shout" in style_names() and text(prog["f"], "shout") == "F!\n"
        assert prog["f"].text("shout", loud=False) == "F\n"
        with pytest.raises(ValueError, match="already registered"):
            register_style("shout", shout, title="x", description="x")
    finally:
        unregister_style("shout")
    assert "shout" not in style_names()


def test_line_of_finds_a_nodes_line_in_every_view(prog):
    from mlclab.inspect.texts import IRText

    let = render_text(prog["f"], "let")
    lines = let.text.splitlines()
    tree = prog["f"].graph("tree").graph
    for node in tree.find(name="y"):                  # f:y and its recomputed twin f:y~2
        assert "log(" in lines[let.line_of(node.id) - 1]
    # A fused group drawn inline under its caller is printed in its own function.
    t = IRText("let", "fn\n  let %lv = add(%a, %b);\n", {2: "fused_add:lv"})
    assert t.line_of("main:fused_add/lv") == t.line_of("main:fused_add/lv~2") == 2
    assert t.line_of("main:return") is None




@pytest.mark.parametrize("style", ["relax", "relay", "let"])
def test_two_functions_binding_the_same_name_each_link_to_their_own_line(style):
    # Issue 19: main's y = exp(x) and g's y = log(a). The printer says which line defines
    # which value; a name match would give both nodes the first ``y`` it saw.
    fn = mlclab.compile(SAME_NAME_CALLS)["main"]
    t = render_text(fn, style)
    lines = t.text.splitlines()
    assert "exp(" in lines[t.line_of("main:y") - 1] and "log(" not in lines[t.line_of("main:y") - 1]
    assert "log(" in lines[t.line_of("g:y") - 1] and "exp(" not in lines[t.line_of("g:y") - 1]


def test_relax_text_carries_no_markers_with_or_without_annotations(prog):
    for annotate in (True, False):
        t = render_text(prog["main"], "relax", annotate=annotate)
        assert "\ue000" not in t.text and "\ue001" not in t.text
        assert t.line_values and all(not line.endswith(" ") for line in t.text.splitlines())
    assert "# line" not in render_text(prog["main"], "relax", annotate=False).text
