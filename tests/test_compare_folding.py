"""Folding inside a comparison (issue 20): both sides start folded as the viewer first draws
them; opening a module on one side opens the matching module on the other, closing it closes
both, and the selection stays synced across the new drawings. Each side's fold state is laid
out once and shared by the pairs that draw it (notebook/compare_pairs.py), a pair's marks are
written into the SVG's text as marking the parsed drawing writes them, and the pairs one click
away are laid out ahead, the likely clicks first."""

import pytest

import torch

import mlclab  # noqa: E402
from mlclab.notebook.compare import CompareViewer, counterpart_module  # noqa: E402
from mlclab.notebook.compare_pairs import side_layout  # noqa: E402
from mlclab.notebook.compare_sides import side_of  # noqa: E402
from mlclab.notebook.fold_layouts import Fold  # noqa: E402


@pytest.fixture(scope="module")
def layer():
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    return mlclab.from_torch(model, torch.randn(2, 16, 64))


def folded(vm):
    return sorted(n["folded"]["path"] for n in vm["nodes"].values()
                  if (n.get("folded") or {}).get("kind") == "module")


def drawn_modules(vm):
    return {ns["path"] for ns in vm["namespaces"].values() if ns["kind"] == "module"}


def test_opening_a_module_on_one_side_opens_it_on_the_other_and_closing_closes_both(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    assert c.live
    assert folded(c.left) == folded(c.right) == ["linear1", "linear2", "self_attn"]
    c.open_module("right", "self_attn")
    assert c.fold_left["open_modules"] == c.fold_right["open_modules"] == ["self_attn"]
    assert "self_attn" in drawn_modules(c.left) and "self_attn" in drawn_modules(c.right)
    assert folded(c.left) == folded(c.right) == ["linear1", "linear2"]
    # The new drawings are matched anew: the attention's operators are matched too.
    assert len(c.matches) > 40 and c.summary.startswith(f"{len(c.matches)} matched")
    c.fold_left = {**c.fold_left, "open_modules": []}          # its label clicked on the left
    assert c.fold_right["open_modules"] == []
    assert folded(c.left) == folded(c.right) == ["linear1", "linear2", "self_attn"]


def test_selection_stays_synced_after_a_fold_and_a_folded_away_node_is_let_go(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    c.open_module("left", "self_attn")
    inside = next(n for n in c.matches
                  if ((c.left["nodes"][n].get("source") or {}).get("module") or "")
                  .startswith("self_attn"))
    c.selected_left = inside
    assert c.selected_right == c.matches[inside]
    c.fold_right = {**c.fold_right, "open_modules": []}
    # The node is folded away on both sides now: nothing stays selected.
    assert c.selected_left == "" and c.selected_right == ""


def test_collapse_and_draw_all_act_on_their_own_side(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    c.fold_left = {**c.fold_left, "full": True}
    assert folded(c.left) == [] and folded(c.right) == ["linear1", "linear2", "self_attn"]
    with pytest.raises(Exception, match="open_modules must be a list of module paths"):
        c.fold_left = {"open_modules": "self_attn"}
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        c.open_module("middle", "self_attn")


def test_the_matching_module_is_the_same_path_else_the_one_of_the_matched_folded_node():
    def vm(path, nid):
        return {"namespaces": {}, "nodes": {nid: {"folded": {"kind": "module", "path": path}}}}
    left, right = vm("encoder.0", "l:enc"), vm("layers.0", "r:enc")
    assert counterpart_module(left, vm("encoder.0", "r:x"), {}, "encoder.0") == "encoder.0"
    assert counterpart_module(left, right, {"l:enc": "r:enc"}, "encoder.0") == "layers.0"
    assert counterpart_module(left, right, {}, "encoder.0") == ""


def test_without_a_kernel_layout_the_folding_stays_as_given(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    fixed = CompareViewer({n: getattr(c, n) for n in ("left", "right", "matches", "summary")})
    assert not fixed.live
    before = fixed.left
    fixed.open_module("left", "self_attn")
    assert fixed.left is before


def counting_drawings(monkeypatch) -> list:
    """The drawings a comparison lays out from now on (one per side per fold state)."""
    import mlclab.notebook.compare_sides as sides_module

    calls = []
    real = sides_module.draw_view
    monkeypatch.setattr(sides_module, "draw_view",
                        lambda *a, **k: (calls.append(k.get("open_modules")), real(*a, **k))[1])
    return calls


def test_going_back_to_a_fold_state_already_drawn_lays_nothing_out(layer, monkeypatch):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = counting_drawings(monkeypatch)
    first = c.left
    c.open_module("left", "self_attn")
    made = len(calls)
    assert made == 2                                           # both sides drawn
    c.fold_left = {**c.fold_left, "open_modules": []}          # back to the first look
    c.open_module("right", "self_attn")                        # and open again
    assert len(calls) == made
    c.fold_right = {**c.fold_right, "open_modules": []}
    assert c.left["geometry"]["svg"] == first["geometry"]["svg"]


def test_each_side_is_read_once_and_a_new_fold_state_only_lays_out(layer, monkeypatch):
    from mlclab.inspect.pipeline import Pipeline

    pipelines, parses = [], []
    real_init, real_graph = Pipeline.__init__, Pipeline._graph
    monkeypatch.setattr(Pipeline, "__init__",
                        lambda self, *a, **k: (pipelines.append(1), real_init(self, *a, **k))[1])
    monkeypatch.setattr(Pipeline, "_graph",
                        lambda self, *a, **k: (parses.append(a), real_graph(self, *a, **k))[1])
    c = mlclab.compare(layer, (layer, "FuseOps"))
    assert len(pipelines) == 1              # both sides of one function share its pipeline
    read = len(parses)
    c.open_module("left", "self_attn")
    c.open_module("left", "linear1")
    c.fold_right = {**c.fold_right, "open_modules": []}
    assert len(parses) == read and len(pipelines) == 1
    assert folded(c.left) == folded(c.right) == ["linear1", "linear2", "self_attn"]


def test_the_next_clicks_pairs_are_both_sides_folded_as_the_click_would_leave_them(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    c.open_module("left", "self_attn")
    pairs = {(tuple(sorted(left["open_modules"])), tuple(sorted(right["open_modules"])))
             for left, right in c.next_pairs()}
    assert pairs == {(("linear1", "self_attn"),) * 2, (("linear2", "self_attn"),) * 2, ((), ())}


def test_once_the_panes_are_drawn_the_next_clicks_answer_without_a_layout(layer, monkeypatch):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = counting_drawings(monkeypatch)
    c._on_front_end(c, {"event": "drawn", "view": "left", "side": "left"}, [])
    assert c.wait_for_layouts(120)
    ahead = len(calls)
    assert ahead == 2 * 3                   # three modules to open, each pair laid out once
    c.open_module("right", "linear2")
    assert len(calls) == ahead
    assert c.fold_left["open_modules"] == ["linear2"]
    assert "linear2" in drawn_modules(c.left) and "linear2" in drawn_modules(c.right)
    # The selection still follows the match in the drawing the cache answered with.
    node = next(iter(c.matches))
    c.selected_left = node
    assert c.selected_right == c.matches[node]


@pytest.fixture(scope="module")
def stack(encoder_stack):
    """Two encoder layers: modules two deep (layers, layers.0, layers.0.self_attn, ...)."""
    return encoder_stack(2)


def test_a_module_inside_one_folded_on_the_other_side_is_opened_there_too(stack):
    c = mlclab.compare(stack, stack)
    c.fold_left = {**c.fold_left, "open_modules": []}
    assert folded(c.right) == ["layers"]            # layers.1 is inside a folded node there
    c.open_module("left", "layers.1")
    assert c.fold_right["open_modules"] == ["layers", "layers.1"]
    assert "layers.1" in drawn_modules(c.right) and "layers.0" in folded(c.right)
    c.fold_left = {**c.fold_left, "open_modules": ["layers"]}   # layers.1 closed on the left
    assert c.fold_right["open_modules"] == ["layers"]


def test_the_next_clicks_inside_the_module_just_opened_are_laid_out_first(stack):
    c = mlclab.compare(stack, (stack, "FuseOps"))
    c.fold_left = {**c.fold_left, "open_modules": []}
    c.open_module("left", "layers.1")       # drawn after layers.0, which stays folded

    def inside(pair):
        now = set(c.fold_left["open_modules"]) | set(c.fold_right["open_modules"])
        return any(p.startswith("layers.1.")
                   for fold in pair for p in set(fold["open_modules"]) - now)
    order = [inside(pair) for pair in c.next_pairs()]
    assert True in order and False in order
    assert order == sorted(order, reverse=True)          # all of those inside layers.1 first


def test_a_pair_marks_only_its_diff_layer_and_never_edits_the_shared_drawing(layer):
    """What has no match is painted by every display from the ``diff`` layer and its
    registered look (static/paint.js); the side's SVG stays the layout, the same for every
    pair that draws it."""
    c = mlclab.compare(layer, (layer, "FuseOps"), full=True)
    drawn = c.right["geometry"]["svg"]
    unmatched = {nid: e["change"] for nid, e in c.right["overlays"]["diff"].items()
                 if e.get("change") in ("added", "changed")}
    assert unmatched and c.right["styles"]["diff"]["looks"]["added"]["stroke"]
    assert "mlclab-added" not in drawn and "mlclab-changed" not in drawn
    alone = side_layout(side_of((layer, "FuseOps"), pipelined=True), Fold(True))
    assert alone["vm"]["geometry"]["svg"] == drawn


def test_a_pair_that_keeps_one_side_as_it_was_lays_out_only_the_other(layer, monkeypatch):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = counting_drawings(monkeypatch)
    c.fold_left = {**c.fold_left, "full": True}            # "draw all" on the left only
    assert len(calls) == 1
    c.fold_right = {**c.fold_right, "full": True}          # now both: the left is kept
    assert len(calls) == 2
    c.fold_left = {**c.fold_left, "full": False}           # the left's first look: kept too
    assert len(calls) == 2


def test_the_marks_of_a_pair_are_the_pairs_and_never_leak_into_a_shared_side(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    first_left = c.left
    c.fold_right = {**c.fold_right, "full": True}          # a new pair, the same left side
    c.fold_right = {**c.fold_right, "full": False}         # back: the first pair, as it was
    assert c.left == first_left
    again = mlclab.compare(layer, (layer, "FuseOps"))
    assert again.left == first_left and again.right == c.right      # deterministic


def test_the_likely_clicks_come_first_the_biggest_module_before_smaller_and_closes_last(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    ops = {ns["path"]: ns["ops"] for ns in c.left["namespaces"].values() if ns["kind"] == "module"}
    opened = [next(iter(left["open_modules"] or ["-"])) for left, _right in c.next_pairs()]
    assert set(opened) == {"linear1", "linear2", "self_attn"}
    firsts = list(dict.fromkeys(opened))
    assert [ops[p] for p in firsts] == sorted((ops[p] for p in firsts), reverse=True)
    assert firsts[0] == "self_attn"
    c.open_module("left", "self_attn")
    closes = [not set(c.fold_left["open_modules"]) <= set(left["open_modules"])
              for left, _right in c.next_pairs()]
    assert closes == sorted(closes) and closes[-1]          # the close after every open


def test_showing_a_comparison_lays_out_its_likely_first_clicks(layer, monkeypatch, capsys):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = counting_drawings(monkeypatch)
    c._ipython_display_()                   # as a notebook shows it (outside one: printed)
    assert c.wait_for_layouts(120)
    ahead = len(calls)
    assert ahead >= 2
    c.open_module("left", "self_attn")      # the biggest module: answered from what was made
    assert len(calls) == ahead


def test_the_module_under_the_pointer_has_its_pair_laid_out_next(layer):
    # A pane tells the kernel (through the comparison's comm, with its side) which fold a
    # click on what is under the pointer asks for: that pair, the other side following.
    c = mlclab.compare(layer, (layer, "FuseOps"))
    (expected,) = {c._pair(*p) for p in c.next_pairs() if p[0]["open_modules"] == ["linear2"]}
    c._on_front_end(c, {"event": "hover", "side": "left", "open_modules": ["linear2"],
                        "folded": []}, [])
    assert c._layouts._pointed == ("pair", expected)
    # Malformed or idle messages change nothing.
    for bad in ({"event": "hover", "side": "top", "open_modules": [], "folded": []},
                {"event": "hover", "side": "left", "open_modules": "linear2", "folded": []},
                {"event": "hover", "side": "left", "open_modules": [], "folded": []}):
        c._on_front_end(c, bad, [])
        assert c._layouts._pointed == ("pair", expected)


def test_the_fuseops_side_of_a_stack_of_layers_folds_and_opens_by_layer(stack):
    # Each layer calls the same fused functions: their calls sit in their own layer's module on
    # the FuseOps side, so it folds by layer, and opening layer 1 there opens that one only.
    c = mlclab.compare(stack, (stack, "FuseOps"))
    assert folded(c.right) == ["layers.0", "layers.1"]
    c.open_module("right", "layers.1")
    assert folded(c.right) == [
        "layers.0", "layers.1.linear1", "layers.1.linear2", "layers.1.self_attn"]
    assert "layers.1.self_attn" in folded(c.left)
    assert len(c.right["nodes"]) <= 25
