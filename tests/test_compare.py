"""Compare any two (mlclab.compare): nodes matched between two graphs, by value id across the
passes of one build and by structure between programs; the payload is two checked view models
with what has no match marked, and it works as a widget, an HTML twin and a saved file."""
import json

import pytest

import mlclab
from mlclab.notebook.compare import CompareViewer, payload
from mlclab.viz.matching import by_structure, by_value, match, summary
from mlclab.viz.view_model import check, from_json, to_json

MLP = ("def mlp(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
       "    h = relu(linear(x, w, b))\n"
       "    return softmax(h, axis=-1)\n")
# The same program with one operator swapped and one added: a student's version of MLP.
STUDENT = ("def student(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
           "    h = sigmoid(linear(x, w, b))\n"
           "    s = softmax(h, axis=-1)\n"
           "    return exp(s)\n")


@pytest.fixture(scope="module")
def mlp():
    return mlclab.compile(MLP)["mlp"]


@pytest.fixture(scope="module")
def student():
    return mlclab.compile(STUDENT)["student"]


def node(nid, kind, label, name=None, value=None):
    return {"id": nid, "kind": kind, "label": label, "name": name, "value": value}


def test_matching_by_value_follows_value_ids_not_node_ids():
    a = {"f:x": node("f:x", "param", "x", "x", "f:x"),
         "f:lv": node("f:lv", "op", "matmul", "lv", "f:lv"),
         "f:gone": node("f:gone", "op", "add", "g", "f:gone")}
    b = {"f:x": node("f:x", "param", "x", "x", "f:x"),
         "f:fused/lv": node("f:fused/lv", "op", "NT_matmul", "lv", "f:lv"),
         "f:new": node("f:new", "op", "exp", "n", "f:new")}
    assert by_value(a, b) == {"f:x": "f:x", "f:lv": "f:fused/lv"}
    s = summary({"nodes": a}, {"nodes": b}, by_value(a, b))
    assert s["line"] == "2 matched, 1 only left, 1 only right"
    assert s["only_left"] == ["f:gone"] and s["only_right"] == ["f:new"]


def test_matching_by_structure_pairs_inputs_in_order_and_operators_as_a_common_subsequence():
    a = {"a:x": node("a:x", "param", "x"), "a:1": node("a:1", "op", "matmul", "t"),
         "a:2": node("a:2", "op", "relu", "h"), "a:3": node("a:3", "op", "softmax", "y")}
    b = {"b:inp": node("b:inp", "param", "inp"), "b:1": node("b:1", "op", "matmul", "mm"),
         "b:9": node("b:9", "op", "exp", "e"), "b:2": node("b:2", "op", "relu", "r"),
         "b:3": node("b:3", "op", "softmax", "out")}
    assert by_structure(a, b) == {"a:x": "b:inp", "a:1": "b:1", "a:2": "b:2", "a:3": "b:3"}
    # A DSL program's weight parameter against an imported model's constant.
    a["a:w"] = node("a:w", "param", "w")
    b["b:c"] = node("b:c", "const", "const")
    assert by_structure(a, b)["a:w"] == "b:c"
    said = summary({"nodes": a}, {"nodes": b}, by_structure(a, b), "structure")
    assert said["changed"] == ["a:w"]
    assert match({"nodes": a}, {"nodes": b}, "structure")["a:2"] == "b:2"
    with pytest.raises(ValueError, match="by must be one of value, structure"):
        match({"nodes": a}, {"nodes": b}, "names")


def test_before_and_after_a_pass_match_by_value_and_the_fused_nodes_keep_their_match(mlp):
    c = mlclab.compare(mlp, mlp.pipeline().step("FuseOps"))
    assert isinstance(c, CompareViewer) and c.method == "value"
    assert c.left_source == c.right_source == MLP      # each pane's DSL lines light up
    h_left = next(n for n, v in c.left["nodes"].items() if v["name"] == "h")
    h_right = c.matches[h_left]
    assert c.right["nodes"][h_right]["value"] == c.left["nodes"][h_left]["value"]
    assert c.right["nodes"][h_right]["namespace"] != c.left["nodes"][h_left]["namespace"]
    s = summary(c.left, c.right, c.matches)
    assert c.summary == s["line"] and s["matched"] == len(c.matches) > 0
    # FuseOps folds the separate matmul's transpose into NT_matmul: that node is gone.
    assert s["only_left"] and not s["only_right"]
    for nid in s["only_left"]:
        assert c.left["overlays"]["diff"][nid]["change"] == "removed"
    # The same sides written as (fn, pass) give the same comparison.
    same = mlclab.compare((mlp, "input"), (mlp, "FuseOps"))
    assert same.matches == c.matches and same.summary == c.summary


def test_a_student_program_against_a_reference_matches_by_structure_and_marks_differences(
        mlp, student):
    c = mlclab.compare(student, mlp)
    assert c.method == "structure"
    by_name = {v["name"]: k for k, v in c.left["nodes"].items()}
    right = c.right["nodes"]
    # relu became sigmoid: matched by binding name, marked changed on both sides.
    assert right[c.matches[by_name["h"]]]["name"] == "h"
    assert c.left["overlays"]["diff"][by_name["h"]]["change"] == "changed"
    assert c.right["overlays"]["diff"][c.matches[by_name["h"]]]["change"] == "changed"
    assert "changed" in c.summary
    # The student's extra exp has no match in the reference: only left, outlined by the diff
    # layer's registered look (every display paints it; the drawing stays layout).
    extra = next(k for k, v in c.left["nodes"].items() if v["label"].endswith("exp"))
    assert extra not in c.matches
    assert c.left["overlays"]["diff"][extra]["change"] == "removed"
    assert c.left["styles"]["diff"]["looks"]["removed"]["dashed"] is True
    assert "mlclab-removed" not in c.left["geometry"]["svg"]


def test_the_payload_round_trips_through_the_view_models_check(mlp):
    c = mlclab.compare(mlp, (mlp, "FuseOps"))
    for side in (c.left, c.right):
        assert from_json(to_json(side)) == json.loads(to_json(side))
        check(side)
    again = payload(json.loads(to_json(c.left)), json.loads(to_json(c.right)), "value",
                    (c.left_name, c.right_name))
    assert again["matches"] == c.matches and again["summary"] == c.summary
    json.dumps(c.state())     # the page's state is plain JSON


def test_selecting_a_node_on_one_side_selects_its_match_on_the_other(mlp):
    c = mlclab.compare(mlp, (mlp, "FuseOps"))
    left, right = next(iter(c.matches.items()))
    c.selected_left = left
    assert c.selected_right == right
    c.selected_left = ""
    assert c.selected_right == ""                 # clearing one side clears both
    c.selected_right = right
    assert c.selected_left == left
    # A node with no match stays selected; the other side has nothing selected.
    alone = next(n for n in c.left["nodes"] if n not in c.matches)
    c.selected_left = alone
    assert (c.selected_left, c.selected_right) == (alone, "")
    # The front end sends both sides at once (notified one by one): they stay as sent.
    c.set_state({"selected_left": left, "selected_right": right})
    c.set_state({"selected_left": alone, "selected_right": ""})
    assert (c.selected_left, c.selected_right) == (alone, "")
    with pytest.raises(Exception, match="no node 'nope' in the right pane"):
        c.selected_right = "nope"


def test_bad_sides_and_options_say_what_a_side_can_be(mlp):
    with pytest.raises(TypeError, match="a side is a compiled function, a pipeline step"):
        mlclab.compare(mlp, 42)
    with pytest.raises(TypeError, match=r"\(fn, pass name\)"):
        mlclab.compare(mlp, (mlp, "FuseOps", 3))
    with pytest.raises(ValueError, match="FuseOpz"):
        mlclab.compare(mlp, (mlp, "FuseOpz"))
    with pytest.raises(ValueError, match="match must be one of value, structure"):
        mlclab.compare(mlp, mlp, match="names")


def test_it_works_without_a_kernel_as_html_twin_and_saved_file(mlp, tmp_path):
    c = mlclab.compare(mlp, (mlp, "FuseOps"))
    twin = c.fragment()
    assert "mlclab-state" in twin and "renderCompare" in twin and "<svg" in twin
    assert c.summary in c.static_html()
    # the static form cannot tell whether its panes are stacked: it names each side both ways
    assert "left (top when stacked): " in c.static_html()
    assert "right (bottom when stacked): " in c.static_html()
    path = c.save(tmp_path / "cmp.html")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>") and "http://" not in text.split("<svg", 1)[0]
    with pytest.raises(ValueError, match="should end in .html"):
        c.save(tmp_path / "cmp.txt")
    bundle, _ = c._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and c.summary in bundle["text/html"]


def test_a_dsl_program_against_the_pytorch_model_it_mirrors(mlp):
    import torch
    mlclab.import_torchvision()

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.softmax(torch.relu(self.fc(x)), dim=-1)

    model = mlclab.from_torch(MLP().eval(), torch.randn(2, 8))
    c = mlclab.compare(mlp, model)
    assert c.method == "structure"
    assert c.summary.startswith("8 matched, 0 only left, 0 only right")
    labels = {c.left["nodes"][left]["label"]: c.right["nodes"][right]["label"]
              for left, right in c.matches.items()}
    assert labels["nn.relu"] == "nn.relu" and labels["matmul"] == "matmul"
    # The DSL's weight parameters are the model's constants: matched, marked changed.
    weights = [n for n, v in c.left["nodes"].items() if v["name"] in ("w", "b")]
    assert all(c.left["overlays"]["diff"][n]["change"] == "changed" for n in weights)
