"""Folding a module answers from layouts made ahead of the click (issue 20): each fold state of
a viewer is laid out once, and the states one click away are laid out in the background once
the front end says a view is drawn. The pictures are the ones a fresh layout makes."""
import threading

import pytest

import torch

import mlclab  # noqa: E402
from mlclab.notebook.fold_layouts import Fold, FoldLayouts, fold_of, next_folds, with_ancestors  # noqa: E402
from mlclab.notebook.graphs import function_viewer, view_payload  # noqa: E402
from mlclab.notebook.viewer import clean_view  # noqa: E402


@pytest.fixture(scope="module")
def resnet():
    tv = mlclab.import_torchvision()
    torch.manual_seed(0)
    return mlclab.from_torch(tv.models.resnet18(weights=None), torch.randn(1, 3, 224, 224))


def folded_paths(viewer):
    return [n["folded"]["path"] for n in viewer.nodes.values()
            if (n.get("folded") or {}).get("kind") == "module"]


def test_ancestors_open_with_a_module_and_the_first_look_is_one_state():
    assert with_ancestors(["layer2.1", "layer2"]) == ["layer2", "layer2.1"]
    assert fold_of(False, ["a"], [], ["a"]) == Fold()              # the first look's choice
    assert (fold_of(False, ["a", "b"], ["fused:x"], ["a"])
            == Fold(False, frozenset("ab"), frozenset(["fused:x"])))
    assert fold_of(True, ["a"], ["x"], []) == Fold(True)           # drawn whole: nothing folds


def test_the_next_states_are_each_folded_module_opened_and_each_open_one_closed(resnet):
    v = function_viewer(resnet)
    first = next_folds(v.current, Fold(), v.open_modules)
    # The likely clicks first: the biggest module (most operators), equals in drawing order.
    ops = {ns["path"]: ns["ops"] for ns in v.current["namespaces"].values()
           if ns["kind"] == "module"}
    biggest_first = sorted(folded_paths(v), key=lambda p: -ops[p])
    assert [sorted(f.open_modules) for f in first] == [[p] for p in biggest_first]
    # layer2-4 hold a downsample more than layer1; the stem's maxpool is the smallest.
    assert biggest_first == ["layer2", "layer3", "layer4", "layer1", "fc", "maxpool"]
    v.open_module("layer2")
    now = fold_of(False, v.open_modules, v.folded, [])
    after = next_folds(v.current, now, [])
    # Opening a block inside keeps layer2 open; closing layer2 is the first look again.
    inner = [p for p in folded_paths(v) if p.startswith("layer2.")]
    assert inner == ["layer2.0", "layer2.1"]
    assert all(Fold(False, frozenset({"layer2", p})) in after for p in inner)
    assert Fold() in after and len(after) == len(folded_paths(v)) + 1
    v.open_module("layer2.1")
    now = fold_of(False, v.open_modules, v.folded, [])
    after = next_folds(v.current, now, [])
    # Closing layer2 closes layer2.1 with it; closing layer2.1 leaves layer2 open.
    assert Fold() in after and Fold(False, frozenset({"layer2"})) in after and now not in after


def test_clicks_after_the_view_is_drawn_are_served_from_the_layouts_made_ahead(resnet):
    v = function_viewer(resnet)
    calls = []
    layout = v._layouts._layout
    v._layouts._layout = lambda name, fold: (calls.append(fold), layout(name, fold))[1]
    # What the front end sends once the view is on screen.
    v._on_front_end(v, {"event": "drawn", "view": "dataflow"}, [])
    assert v.wait_for_layouts(120)
    made = len(calls)
    assert made == len(folded_paths(v)) > 0
    for path in folded_paths(v):
        v.open_module(path)
        assert not v.current.get("error") and path in {
            ns["path"] for ns in v.current["namespaces"].values() if ns["kind"] == "module"}
        v.open_modules = []                                      # closing: the first look
    assert len(calls) == made, "a click laid the graph out again"
    # The picture is the one a layout made at the click would be: same SVG, same nodes.
    v.open_module("layer3")
    fresh = clean_view(view_payload(resnet, "dataflow", open_modules=["layer3"]))
    assert v.current["geometry"]["svg"] == fresh["geometry"]["svg"]
    assert v.current["nodes"] == fresh["nodes"]


def test_a_click_waits_for_the_layout_being_made_and_makes_each_state_once():
    started, release, calls = threading.Event(), threading.Event(), []

    def layout(name, fold):
        calls.append(fold)
        if fold.open_modules == frozenset({"slow"}):
            started.set()
            release.wait(10)
        return {"drawn": sorted(fold.open_modules or ())}

    layouts = FoldLayouts(layout)
    slow, other = Fold(False, frozenset({"slow"})), Fold(False, frozenset({"other"}))
    layouts.prefetch("v", [slow, other])
    assert started.wait(10)
    got = []
    waiter = threading.Thread(target=lambda: got.append(layouts.get("v", slow)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive(), "the click did not wait for the layout being made"
    release.set()
    waiter.join(10)
    assert got == [{"drawn": ["slow"]}]
    assert layouts.wait_idle(10)
    assert layouts.get("v", other) == {"drawn": ["other"]}
    assert calls.count(slow) == 1 and calls.count(other) == 1


def test_a_new_prefetch_drops_the_states_the_student_left_and_failures_are_redone_at_the_click():
    calls = []

    def layout(name, fold):
        calls.append(fold)
        if fold.open_modules == frozenset({"bad"}):
            raise RuntimeError("dot failed")
        return {"open": sorted(fold.open_modules or ())}

    layouts = FoldLayouts(layout, capacity=2)
    bad = Fold(False, frozenset({"bad"}))
    layouts.prefetch("v", [bad])
    assert layouts.wait_idle(10) and not layouts.cached("v", bad)
    with pytest.raises(RuntimeError, match="dot failed"):      # the viewer shows this message
        layouts.get("v", bad)
    for name in "abc":
        layouts.get("v", Fold(False, frozenset(name)))
    assert not layouts.cached("v", Fold(False, frozenset("a")))  # the oldest is dropped
    assert layouts.cached("v", Fold(False, frozenset("c")))


def test_a_failing_layout_shows_its_message_in_the_viewer(resnet):
    v = function_viewer(resnet)
    real = v._layouts._layout

    def broken(name, fold):
        if fold.open_modules and "layer4" in fold.open_modules:
            raise RuntimeError("Graphviz is missing")
        return real(name, fold)

    v._layouts._layout = broken
    v.open_module("layer4")
    assert v.current["error"] == "RuntimeError: Graphviz is missing"
    v.open_modules = []
    assert not v.current.get("error") and v.nodes


def test_the_module_under_the_pointer_is_laid_out_next(resnet):
    v = function_viewer(resnet)
    order, first, go = [], threading.Event(), threading.Event()
    real = v._layouts._layout

    def layout(name, fold):
        order.append(sorted(fold.open_modules or ()))
        if len(order) == 1:
            first.set()
            go.wait(60)
        return real(name, fold)

    v._layouts._layout = layout
    v._on_front_end(v, {"event": "drawn", "view": "dataflow"}, [])
    assert first.wait(60)
    # Messages the page should not send change nothing.
    for junk in ({"event": "hover", "view": "nope", "open_modules": ["maxpool"], "folded": []},
                 {"event": "hover", "view": "dataflow", "open_modules": "maxpool", "folded": []},
                 {"event": "hover", "view": "dataflow", "open_modules": [3], "folded": []},
                 "hover"):
        v._on_front_end(v, junk, [])
    # What the front end sends when the pointer enters the folded maxpool (the smallest: last).
    v._on_front_end(v, {"event": "hover", "view": "dataflow", "open_modules": ["maxpool"],
                        "folded": []}, [])
    go.set()
    assert v.wait_for_layouts(120)
    assert order == [["layer2"], ["maxpool"], ["layer3"], ["layer4"], ["layer1"], ["fc"]]
