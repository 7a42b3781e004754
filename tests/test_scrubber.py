"""The pass scrubber (mlclab.notebook.scrubber): one view model per pass over the same value ids."""
import pytest

import mlclab
from mlclab.notebook.scrubber import pass_scrubber, step_names
from mlclab.viz.view_model import check

SOURCE = ("def mlp(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
          "    h = relu(linear(x, w, b))\n"
          "    return softmax(h, axis=-1)\n")


@pytest.fixture(scope="module")
def mlp():
    return mlclab.compile(SOURCE)["mlp"]


def test_the_scrubber_has_the_input_then_each_pass_that_changed_something(mlp):
    pipe = mlp.pipeline()
    names = [n for n, _ in step_names(pipe)]
    assert names[0] == "0 · input"
    changed = [s for s in pipe.steps if s.changed]
    assert len(names) == 1 + len(changed)
    assert any("FuseOps" in n for n in names)
    v = pass_scrubber(mlp)
    assert v.scrub and list(v.views) == names and v.views[names[1]] == {"pending": True}


def test_each_pass_is_a_view_model_marking_what_it_changed_as_its_diff_layer(mlp):
    v = pass_scrubber(mlp)
    fuse = next(n for n in v.views if "FuseOps" in n)
    v.view = fuse
    vm = check(v.current)
    grouped = {nid for nid, n in vm["nodes"].items() if n["status"] == "grouped"}
    assert grouped and set(vm["overlays"]["diff"]) >= grouped
    assert all(vm["overlays"]["diff"][nid]["text"] == "grouped by FuseOps" for nid in grouped)
    # The same values across passes: the input's h is a node of every later pass.
    first = v.views["0 · input"]
    h = next(n["value"] for n in first["nodes"].values() if n["name"] == "h")
    assert any(n["value"] == h for n in vm["nodes"].values())
    # Folding works in the scrubber as anywhere.
    group = next(cid for cid, ns in vm["namespaces"].items() if ns["kind"] == "fused")
    v.fold(group)
    assert any(n["folded"] for n in v.nodes.values())
