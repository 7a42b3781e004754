"""Folding inside a comparison (issue 20): both sides start folded as the viewer first draws
them; opening a module on one side opens the matching module on the other, closing it closes
both, and the selection stays synced across the new drawings."""
import pytest

torch = pytest.importorskip("torch")

import mlclab  # noqa: E402
from mlclab.notebook.compare import CompareViewer, counterpart_module  # noqa: E402


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
                  if ((c.left["nodes"][n].get("source") or {}).get("module") or "").startswith("self_attn"))
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


def test_going_back_to_a_fold_state_already_drawn_lays_nothing_out(layer, monkeypatch):
    import mlclab.notebook.compare as compare_module

    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = []
    real = compare_module.side_view
    monkeypatch.setattr(compare_module, "side_view", lambda *a, **k: (calls.append(k), real(*a, **k))[1])
    first = c.left
    c.open_module("left", "self_attn")
    made = len(calls)
    assert made >= 2                                           # both sides drawn
    c.fold_left = {**c.fold_left, "open_modules": []}          # back to the first look
    c.open_module("right", "self_attn")                        # and open again
    assert len(calls) == made
    c.fold_right = {**c.fold_right, "open_modules": []}
    assert c.left["geometry"]["svg"] == first["geometry"]["svg"]
