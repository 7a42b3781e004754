"""The pass scrubber (mlclab.notebook.scrubber, mlclab.viz.stable_layout): every pass of the real
build as a view model over the same value ids, what each pass did marked, one stable layout."""
import re

import pytest

import mlclab
from mlclab.notebook.page import unpacked_state
from mlclab.notebook.scrubber import INPUT, pass_scrubber
from mlclab.viz.stable_layout import node_keys, phases
from mlclab.viz.view_model import check

SOURCE = ("def mlp(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
          "    h = relu(linear(x, w, b))\n"
          "    return softmax(h, axis=-1)\n")


@pytest.fixture(scope="module")
def mlp():
    return mlclab.compile(SOURCE)["mlp"]


@pytest.fixture(scope="module")
def scrubber(mlp):
    v = pass_scrubber(mlp)
    v.draw_all()
    return v


def view_of(v, name):
    return check(v.views[next(n for n in v.views if n.endswith(f"· {name}"))])


def marks(vm, change):
    return {nid for nid, e in vm["overlays"].get("diff", {}).items() if e["change"] == change}


def centre(vm, nid):
    """The centre of node ``nid``'s shape in its SVG (Graphviz's drawing units)."""
    svg = vm["geometry"]["svg"]
    g = svg[svg.index(f'id="{nid}"'):]
    g = g[:g.index("</g>")]
    ellipse = re.search(r'<ellipse[^>]*\scx="([-\d.]+)" cy="([-\d.]+)"', g)
    if ellipse:
        return float(ellipse.group(1)), float(ellipse.group(2))
    shape = re.search(r'<(?:polygon|path)[^>]*\s(?:points|d)="([^"]*)"', g).group(1)
    nums = [float(x) for x in re.sub(r"[MC,]", " ", shape).split()]
    xs, ys = nums[0::2], nums[1::2]
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2


def test_every_pass_of_the_build_is_a_step_and_unchanged_ones_are_skipped_by_default(mlp, scrubber):
    pipe = mlp.pipeline()
    assert list(scrubber.views)[0] == INPUT and len(scrubber.views) == 1 + len(pipe.steps)
    assert [p["name"] for p in scrubber.passes] == ["input", *pipe.names]
    assert [p["changed"] for p in scrubber.passes[1:]] == [s.changed for s in pipe.steps]
    assert any(not p["changed"] for p in scrubber.passes)
    assert scrubber.skip_unchanged and scrubber.scrub
    assert not pass_scrubber(mlp, changed_only=False).skip_unchanged


def test_each_pass_marks_what_it_did(scrubber):
    # FuseTransposeMatmul: permute_dims + matmul become one NT_matmul: the removed value is a ghost.
    ftm = view_of(scrubber, "FuseTransposeMatmul")
    removed = marks(ftm, "removed")
    assert removed and all(ftm["nodes"][n]["status"] == "removed" and n.startswith("removed:")
                           for n in removed)
    # LegalizeOps rewrites every operator into a call_tir of a PrimFunc (same value, new op).
    legal = view_of(scrubber, "LegalizeOps")
    assert {legal["nodes"][n]["name"] for n in marks(legal, "rewritten")} >= {"h", "gv"}
    # FuseOps puts values in a fused group, outlined as a namespace of kind "fused".
    fuse = view_of(scrubber, "FuseOps")
    grouped = marks(fuse, "grouped")
    diff = fuse["overlays"]["diff"]
    assert grouped and all(diff[n]["text"] == "grouped by FuseOps" for n in grouped)
    assert any(ns["kind"] == "fused" for ns in fuse["namespaces"].values())
    # FuseTIR merges the group into one kernel; the absorbed values are shown as merged ghosts.
    tir = view_of(scrubber, "FuseTIR")
    merged = marks(tir, "merged")
    assert any(tir["nodes"][n]["kind"] == "fused" for n in merged)
    assert any(n.startswith("removed:") for n in merged)
    # An unchanged pass marks nothing.
    quiet = next(p for p in scrubber.passes if not p["changed"])
    assert not marks(check(scrubber.views[quiet["view"]]), "added")


def test_each_pass_says_what_it_changed_that_no_value_mark_shows(scrubber):
    form = {p["name"]: p["form"] for p in scrubber.passes}
    # ScheduleCPU rewrites kernels only: no value of the graph changes, and the pass says so.
    assert form["mlclab.ScheduleCPU"] == "changed 1 kernel (TensorIR)" or \
        re.fullmatch(r"changed \d+ kernels \(TensorIR\)", form["mlclab.ScheduleCPU"])
    # FuseOps adds the fused groups as Relax functions of their own.
    assert "added 1 Relax function" in form["FuseOps"]
    # A pass that changed nothing has nothing to say; the input neither.
    assert all(not p["form"] for p in scrubber.passes if not p["changed"] or p["name"] == "input")
    assert all(p["form"] for p in scrubber.passes[1:] if p["changed"])


def test_a_folded_modules_diff_entry_counts_its_changes():
    from mlclab.viz.overlays import overlay
    summed = overlay("diff").aggregate({"a": {"change": "rewritten"}, "b": {"change": "rewritten"},
                                        "c": {"change": "added"}}, ["a", "b", "c", "d"])
    assert summed["counts"] == {"rewritten": 2, "added": 1}


def test_nodes_are_matched_by_value_and_keep_their_place_across_passes(scrubber):
    first, fuse = check(scrubber.views[INPUT]), view_of(scrubber, "FuseOps")
    assert first["geometry"]["frame"] and first["geometry"]["frame"] == fuse["geometry"]["frame"]
    by_value = {n["value"]: nid for nid, n in fuse["nodes"].items() if n["value"]}
    shared = [(nid, by_value[n["value"]]) for nid, n in first["nodes"].items()
              if n["value"] in by_value]
    assert len(shared) >= 5
    # Each drawing is cropped to what it holds: the offsets between shared nodes are the same.
    (a0, a1), rest = shared[0], shared[1:]
    for b0, b1 in rest:
        before = [p - q for p, q in zip(centre(first, b0), centre(first, a0))]
        after = [p - q for p, q in zip(centre(fuse, b1), centre(fuse, a1))]
        assert max(abs(p - q) for p, q in zip(before, after)) < 1.5, (b0, before, after)


def test_a_folding_lays_every_pass_out_again_in_one_layout(scrubber):
    scrubber.view = next(n for n in scrubber.views if n.endswith("· FuseOps"))
    group = next(cid for cid, ns in scrubber.current["namespaces"].items() if ns["kind"] == "fused")
    scrubber.fold(group)
    assert any(n["folded"] for n in scrubber.nodes.values())
    frame = scrubber.current["geometry"]["frame"]
    scrubber.view = INPUT
    assert scrubber.current["geometry"]["frame"] == frame
    scrubber.folded = []


def test_the_twin_and_a_saved_file_carry_every_pass(mlp, tmp_path):
    v = pass_scrubber(mlp)
    state = unpacked_state(v._twin())
    assert list(state["views"]) == list(v.views)
    assert all("nodes" in x for x in state["views"].values())
    assert state["passes"] == v.passes and state["skip_unchanged"] is True and state["scrub"]
    page = (tmp_path / "passes.html")
    v.save(page)
    saved = unpacked_state(page.read_text())
    assert all("frame" in view["geometry"] for view in saved["views"].values())
    assert len(saved["views"]) == len(v.views)


def test_a_small_torch_model_marks_the_folded_batch_norm_and_the_fused_kernels():
    import torch
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()
    fn = mlclab.from_torch(net, torch.randn(1, 3, 8, 8))
    v = pass_scrubber(fn)
    v.draw_all()
    fold = view_of(v, "mlclab.FoldBatchNorm")
    gone = {fold["nodes"][n]["label"] for n in marks(fold, "removed")}
    assert any("batch_norm" in label for label in gone)
    assert marks(view_of(v, "FuseOps"), "grouped") and marks(view_of(v, "FuseTIR"), "merged")
    # The module of each value is kept across the passes (the search layer finds it).
    search = view_of(v, "FuseOps")["overlays"]["search"]
    assert any("1" in e["text"] or "0" in e["text"] for e in search.values())


def test_phases_split_where_a_pass_replaces_most_of_the_program(mlp):
    pipe = mlp.pipeline()
    from mlclab.notebook.sources import marked_graph

    graphs = [marked_graph(pipe, i) for i in range(-1, len(pipe.steps))]
    runs = phases(graphs)
    assert sum(runs, []) == list(range(len(graphs)))
    fuse = 1 + pipe.names.index("FuseOps")
    assert any(0 in r and fuse in r for r in runs)      # input to FuseOps: one layout
    keys = node_keys(graphs[0])
    assert all(k.startswith("v:") for k in keys.values())


def test_drawing_one_pass_whole_draws_every_pass_whole_in_one_layout(mlp):
    v = pass_scrubber(mlp)
    v.view = next(n for n in v.views if n.endswith("· FuseOps"))
    v.unfold()
    assert v.unfolded == list(v.views)
    assert v.views[INPUT] == {"pending": True} and "nodes" in v.current
    frame = v.current["geometry"]["frame"]
    v.view = INPUT
    assert v.current["geometry"]["frame"] == frame


def chain(values):
    """A graph of one chain of ops, one node per value id."""
    from mlclab.viz.model import Graph, Node

    g = Graph("f")
    for k, v in enumerate(values):
        g.add_node(Node(f"f:{v}", "op", "relu", name=v, value=v))
        if k:
            g.add_edge(f"f:{values[k - 1]}", f"f:{v}")
    return g


def test_a_pass_that_removes_most_nodes_stays_in_the_run_and_one_that_replaces_most_starts_one():
    whole = chain(list("abcdefghij"))
    pruned = chain(list("abc"))                 # most removed: what is left keeps its place
    lowered = chain(list("ab") + [f"vm{k}" for k in range(8)])   # 2 of 10 were there before
    more = chain(list("ab") + [f"vm{k}" for k in range(9)])
    assert phases([whole, pruned, lowered, more]) == [[0, 1], [2, 3]]
    # Half of the drawing already in the run is enough to stay in it.
    assert phases([whole, chain(list("abcde") + list("vwxyz"))]) == [[0, 1]]
    assert phases([whole, chain(list("abcd") + list("uvwxyz"))]) == [[0], [1]]


def made_up_build():
    """The scrubber's steps over the input and three passes of a made-up build, given as graphs
    (no diff marks): the second pass removes two nodes, the third lowers most of the program."""
    from types import SimpleNamespace

    from mlclab.notebook.scrubber import ScrubSteps

    class Steps(ScrubSteps):
        def __init__(self, graphs):
            super().__init__(SimpleNamespace(steps=[SimpleNamespace(
                index=k, name=f"p{k}", changed=True, seconds=0.0,
                form_change=lambda: "changed the form or attributes of main")
                for k in range(len(graphs) - 1)]))
            self._graphs = dict(enumerate(graphs))

        def texts(self, k):
            return {}

    return Steps([chain(list("abcdef")), chain(list("abcd")),
                  chain(list("ab") + [f"vm{j}" for j in range(6)]),
                  chain(list("ab") + [f"vm{j}" for j in range(7)])])


def test_the_first_pass_of_a_new_layout_says_so_and_only_it():
    steps = made_up_build()
    views = [check(steps.view(k, full=True)) for k in range(4)]
    frames = [vm["geometry"]["frame"] for vm in views]
    assert frames[0] == frames[1] != frames[2] == frames[3]
    assert [bool(vm["geometry"].get("new_layout")) for vm in views] == [False, False, True, False]
    # The pass that removed two nodes drew the rest where the input had them.
    assert centre(views[1], "f:d")[0] == pytest.approx(centre(views[0], "f:d")[0])
    assert centre(views[1], "f:d")[1] - centre(views[1], "f:a")[1] == pytest.approx(
        centre(views[0], "f:d")[1] - centre(views[0], "f:a")[1])


def test_a_pass_drawn_on_its_first_visit_is_sent_alone(mlp, monkeypatch):
    # What goes to the front end: re-syncing the views trait would send every pass drawn so far.
    v = pass_scrubber(mlp)
    sent = []
    monkeypatch.setattr(v.comm, "publish_msg", lambda msg_type, data=None, **_: sent.append(data))
    names = list(v.views)
    v.view = names[3]
    v.view = names[5]
    assert all("views" not in (m.get("state") or {}) for m in sent)
    views = [m["content"] for m in sent if m.get("method") == "custom"]
    assert [(m["event"], m["name"]) for m in views] == [("view", names[3]), ("view", names[5])]
    assert views[1]["view"] == v.views[names[5]] and "nodes" in views[1]["view"]
    # The kernel's views stay whole: a save or a later front end gets every pass drawn.
    assert "nodes" in v.views[names[3]] and v.views[names[4]] == {"pending": True}


@pytest.mark.parametrize("args, said", [
    ((42,), "pass_scrubber(): fn must be a compiled function (from mlclab.compile"),
    ((None,), "got NoneType"),
    (("SRC", "yes"), "pass_scrubber(): changed_only must be True or False, got 'yes'"),
    (("SRC", True, 1), "pass_scrubber(): full must be True or False, got 1"),
])
def test_a_bad_argument_is_a_type_error_naming_it(args, said):
    fn = mlclab.compile("def f(x: Tensor[(2,), f32]):\n    return x\n")["f"]
    with pytest.raises(TypeError) as err:
        pass_scrubber(*(fn if a == "SRC" else a for a in args))
    assert said in str(err.value)
