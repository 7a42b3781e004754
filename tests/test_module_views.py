"""An imported model's module hierarchy in the views: nested module clusters, folded by level,
labelled with module paths, opened and searched in the viewer (issue 12)."""
import json
import xml.etree.ElementTree as ET

import pytest

import torch

import mlclab  # noqa: E402
from mlclab.frontend.pytorch import ModuleListing, module_tree  # noqa: E402
from mlclab.notebook.graphs import function_viewer, open_module_paths, view_payload  # noqa: E402
from mlclab.viz.modules import MODULE  # noqa: E402
from mlclab.viz.overview import MODULE_NODES, default_open, fold_modules  # noqa: E402

STEM_AND_HEAD = ["maxpool", "layer1", "layer2", "layer3", "layer4", "fc"]


@pytest.fixture(scope="module")
def resnet():
    tv = mlclab.import_torchvision()
    torch.manual_seed(0)
    return mlclab.from_torch(tv.models.resnet18(weights=None), torch.randn(1, 3, 224, 224))


@pytest.fixture(scope="module")
def resnet_full(resnet):
    return resnet.graph(collapse=None).graph


def module_cluster(graph, path):
    (c,) = [c for c in graph.clusters.values() if c.kind == MODULE and c.path == path]
    return c


def folded(graph):
    """Module path -> its folded node."""
    return {n.folded.path: n for n in graph.nodes.values()
            if n.folded is not None and n.folded.kind == MODULE}


# ------------------------------------------------------------------ the module tree
def test_module_tree_reads_every_module_of_the_listing():
    tv = mlclab.import_torchvision()
    model = tv.models.resnet18(weights=None)
    listing = ModuleListing(model)
    tree = module_tree(listing.text)
    assert set(tree) == {name for name, _ in model.named_modules()}
    assert tree["layer2.0.downsample.0"].head.startswith("Conv2d(64, 128, kernel_size=(1, 1)")
    assert tree["layer1"].head == "Sequential()" and tree[""].head == "ResNet()"
    # Each path's line is the one the listing gives that module (what bindings point at).
    for path, line in tree.items():
        assert line.lineno == listing.line_of[path] and line.span == listing.span(path)
    assert module_tree("") == {} and module_tree(None) == {}


# ------------------------------------------------------------------ clusters
def test_resnet_modules_nest_and_hold_their_convolutions(resnet_full):
    g = resnet_full
    layer1, block, conv = (module_cluster(g, p) for p in ("layer1", "layer1.0", "layer1.0.conv1"))
    assert block.parent == layer1.id and conv.parent == block.id and layer1.parent == "fn:ResNet"
    assert (layer1.label, block.label, conv.label) == ("layer1 · Sequential", "0 · BasicBlock",
                                                     "conv1 · Conv2d")
    assert conv.detail.startswith("Conv2d(64, 64, kernel_size=(3, 3)")
    convs = g.find(op="nn.conv2d")
    per_layer = {p: sum(1 for n in convs if module_cluster(g, p).id in g.cluster_path(n.group))
                 for p in ("layer1", "layer2", "layer3", "layer4")}
    # Two blocks of two convolutions each; layers 2-4 also downsample with a 1x1 convolution.
    assert per_layer == {"layer1": 4, "layer2": 5, "layer3": 5, "layer4": 5} and len(convs) == 20
    # Each convolution sits in its own module's box with its weight.
    (first,) = [n for n in convs if n.source.module == "layer1.0.conv1"]
    assert first.group == conv.id
    weights = [g.nodes[e.src] for e in g.edges
               if e.dst == first.id and g.nodes[e.src].kind == "const"]
    assert weights and all(w.group == conv.id for w in weights)


def test_a_module_called_twice_or_holding_one_node_gets_no_box(resnet_full):
    g = resnet_full
    paths = {c.path for c in g.clusters.values() if c.kind == MODULE}
    # BasicBlock calls its relu twice (two nodes far apart); the stem's relu is one node.
    assert "layer1.0.relu" not in paths and "relu" not in paths and "avgpool" not in paths
    relus = [n for n in g.find(op="nn.relu") if n.source.module == "layer1.0.relu"]
    assert len(relus) == 2 and {n.group for n in relus} == {module_cluster(g, "layer1.0").id}


def test_dsl_graphs_get_no_module_clusters():
    f = mlclab.compile("def f(x: Tensor[(8,), f32]):\n    y = log(x)\n    return y + y\n")["f"]
    for view in ("dataflow", "let", "tree"):
        default, whole = f.graph(view), f.graph(view, collapse=None)
        assert default.to_dict() == whole.to_dict() and default.graph.modules == {}
        assert all(c.kind != MODULE and "path" not in c.to_dict()
                   for c in default.graph.clusters.values())
        assert "line 2: y = log(x)" in default.source


# ------------------------------------------------------------------ folding
def test_resnet_first_look_is_stem_layers_and_head(resnet, resnet_full):
    g = resnet.graph().graph                     # folded by default: a big imported model
    assert len(g) <= MODULE_NODES and len(g) < len(resnet_full) / 5
    boxes = folded(g)
    assert sorted(boxes) == sorted(STEM_AND_HEAD)
    assert boxes["layer1"].folded.cls == "Sequential" and boxes["layer1"].folded.ops == 14
    # A folded module points at its line of the module tree (fn.source), as nodes do.
    line = boxes["layer1"].source
    assert line.source_line.strip() == "layer1: Sequential()" and line.module == "layer1"
    assert resnet.source.splitlines()[line.span.lineno - 1] == line.source_line
    assert boxes["fc"].folded.cls == "Linear" and boxes["fc"].is_output
    # The stem's conv1 and bn1 are single operators: drawn open, with their weights.
    (stem_conv,) = g.find(op="nn.conv2d")
    assert stem_conv.source.module == "conv1"
    assert {n.source.module for n in g.nodes.values() if n.source and n.kind == "op"} >= \
        {"conv1", "bn1", "relu", "avgpool"}
    # Edges run stem -> layer1 -> ... -> layer4 -> head.
    ids = {p: n.id for p, n in boxes.items()}
    for a, b in zip(STEM_AND_HEAD[1:4], STEM_AND_HEAD[2:5]):
        assert ids[b] in g.users(ids[a])


def test_resnet_static_picture_fits_a_laptops_column_with_its_constants_folded(resnet):
    # Issue 30: at the 9 px floor the stem's open conv1 and bn1, with bn1's four statistics
    # side by side, made the picture 1,276 px wide (957 px at 9 px text: it scrolled in a
    # 600 px output area). The ladder's next rung folds each constant into its reader and says
    # so, in the caption and on the reader's card.
    from mlclab.viz.fit import MIN_TEXT_PX, NARROW_COLUMN_PX, Fit

    view = resnet.graph()
    whats = [what for what, _ in view._refold]
    assert whats[-2:] == ["constants folded into the operators that read them",
                          "every module folded, one-operator ones too, and constants folded"]
    svg, fit, note = view.picture()
    assert "constants folded into the operators that read them" in note
    assert Fit(svg, NARROW_COLUMN_PX).readable and fit.text_px() >= MIN_TEXT_PX
    assert view.narrow_picture() is None                  # the same picture fits both columns
    drawn = view.drawn
    assert not drawn.find(kind="const")
    (bn,) = drawn.find(op="nn.batch_norm")
    assert bn.attrs["folded"] == "4 constants" and "folded=4 constants" in svg
    # Overlays keyed by a folded constant's id still land on its reader.
    consts = [n.id for n in view.graph.find(kind="const") if bn.id in view.graph.users(n.id)]
    assert len(consts) == 4 and set(consts) <= set(drawn.members[bn.id])
    # The last rung folds conv1 and bn1 themselves.
    last = view._refold[-1][1]()
    assert {"conv1", "bn1"} <= set(folded(last)) and not last.find(kind="const")


def test_opening_one_module_shows_its_children_folded(resnet_full):
    g = fold_modules(resnet_full, ["layer1"])
    boxes = folded(g)
    assert {"layer1.0", "layer1.1"} <= set(boxes) and "layer1" not in boxes
    layer1 = module_cluster(g, "layer1")
    assert boxes["layer1.0"].group == layer1.id and boxes["layer1.1"].group == layer1.id
    assert boxes["layer1.0"].folded.ops == 7                 # conv bn relu conv bn add relu
    assert {"layer2", "layer3", "layer4"} <= set(boxes)
    # One level more: the block's convolutions themselves.
    deeper = fold_modules(resnet_full, ["layer1", "layer1.0"])
    convs = [n for n in deeper.find(op="nn.conv2d") if n.source.module.startswith("layer1.0")]
    assert len(convs) == 2 and "layer1.0" not in folded(deeper)
    # Everything open is the whole graph; nothing open folds the outermost modules.
    everything = [c.path for c in resnet_full.clusters.values() if c.kind == MODULE]
    assert len(fold_modules(resnet_full, everything)) == len(resnet_full)
    assert sorted(folded(fold_modules(resnet_full, []))) == sorted(STEM_AND_HEAD)


def test_a_model_wrapping_one_module_opens_a_level_more():
    blocks = [torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()) for _ in range(8)]

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(*blocks)

        def forward(self, x):
            return self.body(x)

    fn = mlclab.from_torch(Wrapper(), torch.randn(2, 8))
    full = fn.graph(collapse=None).graph
    assert default_open(full) == ["body"]
    g = fn.graph(collapse="module").graph
    assert sorted(folded(g)) == [f"body.{i}" for i in range(8)]


# ------------------------------------------------------------------ labels and drawing
def test_labels_and_svg_show_module_paths_escaped():
    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def extra_repr(self):
            return "<b>&'\"x"

        def forward(self, x):
            return torch.relu(self.lin(x)) * 2

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleDict({"a<b&c": Odd(), "d>e": Odd()})

        def forward(self, x):
            for block in self.blocks.values():
                x = block(x)
            return x

    fn = mlclab.from_torch(Net(), torch.randn(2, 4))
    view = fn.graph(collapse=None)
    odd = module_cluster(view.graph, "blocks.a<b&c")
    assert odd.label == "a<b&c · Odd" and odd.detail == "Odd(<b>&'\"x)"
    svg = view.svg()
    ET.fromstring(svg)                                           # well formed
    assert "a&lt;b&amp;c · Odd" in svg                           # the cluster's label
    assert "blocks.a&lt;b&amp;c: Odd(&lt;b&gt;&amp;&#39;&quot;x)" in svg   # its tooltip
    assert "blocks.a&lt;b&amp;c.lin</text>" in svg               # a node's module row
    assert "<b>&" not in svg
    folded_svg = fn.graph(collapse="module").svg()
    ET.fromstring(folded_svg)
    assert "blocks" in folded_svg and "ModuleDict" in folded_svg


def test_node_cards_and_text_name_the_module(resnet):
    view = resnet.graph(collapse=None)
    src = view.source
    (conv,) = [line for line in src.splitlines() if 'id="ResNet:lv8"' in line]
    # The module path replaces the DSL line ("line 7: conv1: Conv2d(...)") on the card.
    assert ">layer1.0.conv1</font>" in conv and "line " not in conv
    assert "aten.convolution" in conv                             # in the tooltip
    assert ">layer4.1.bn2</font>" in src
    text = view.text
    assert "<layer1.0.conv1>" in text and "[module:" not in text
    folded_src = resnet.graph().source
    assert "Sequential · 14 ops" in folded_src and "BasicBlock" not in folded_src


def test_transformer_layer_and_mlp():
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    fn = mlclab.from_torch(layer, torch.randn(2, 16, 64))
    g = fn.graph().graph
    boxes = folded(g)
    assert boxes["self_attn"].folded.cls == "MultiheadAttention"
    assert {"self_attn", "linear1", "linear2"} <= set(boxes) and len(g) <= MODULE_NODES
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    small = mlclab.from_torch(mlp, torch.randn(3, 8)).graph().graph
    # Small enough to draw whole: each Linear a box; the ReLU one node labelled "1".
    assert not folded(small)
    assert sorted(c.label for c in small.clusters.values() if c.kind == MODULE) == \
        ["0 · Linear", "2 · Linear"]
    (relu,) = small.find(op="nn.relu")
    assert relu.source.module == "1" and relu.group == "fn:Sequential"


def test_the_fused_view_is_grouped_by_module_too(resnet):
    # The pipeline's graphs get their sources after parsing; grouping comes after that.
    g = resnet.graph("fused", collapse=None).graph
    fused = [c for c in g.clusters.values() if c.kind == "fused"]
    layers = {module_cluster(g, f"layer{i}").id for i in range(1, 5)}
    # A fused group moves whole into the module of its members: each block's two conv
    # groups into that block (layerN.M), each downsample into its own module.
    assert fused and sum(1 for c in fused if layers & set(g.cluster_path(c.id))) >= 16
    blocks = {module_cluster(g, f"layer{i}.{j}").id for i in range(1, 5) for j in (0, 1)}
    assert sum(1 for c in fused if c.parent in blocks) == 16
    assert all(module_cluster(g, f"layer{i}").parent == "fn:ResNet" for i in range(1, 5))


@pytest.fixture(scope="module")
def encoder(encoder_stack):
    return encoder_stack(3)


def test_each_call_of_a_shared_fused_function_sits_in_its_own_layer(encoder):
    # The three layers call the same fused functions (fused_softmax_...#2 is layer 1's call),
    # whose vars are layer 0's: each call's members take the module of the value it computes,
    # so every fused group sits in the innermost module holding all its members.
    g = encoder.graph("fused", collapse=None).graph
    for k in range(3):
        assert module_cluster(g, f"layers.{k}").parent == module_cluster(g, "layers").id
    fused = [c for c in g.clusters.values() if c.kind == "fused"]
    assert len(fused) == 45
    layer_of = {}
    for c in fused:
        parent = g.clusters[c.parent]
        assert parent.kind == MODULE and parent.path.startswith("layers.")
        layer_of[c.id] = parent.path.split(".")[1]
        members = [n for n in g.nodes.values() if n.group == c.id]
        paths = {n.source.module for n in members}
        assert all(p == parent.path or p.startswith(parent.path + ".") for p in paths), c.id
    # The k-th call of a fused function is layer k-1's; softmax and its mask are not swapped.
    for c in fused:
        k = int(c.id.rpartition("#")[2]) if "#" in c.id else 1
        assert layer_of[c.id] == str(k - 1), c.id
    assert module_cluster(g, "layers.1.self_attn").id in {
        c.parent for c in fused if c.label.startswith("fused_softmax")}
    # Its first look (fn.graph, the pipeline's step) is folded by layer, as the input view's.
    for view in (encoder.graph("fused"), encoder.pipeline()["FuseOps"].graph(), encoder.graph()):
        assert sorted(folded(view.graph)) == ["layers.0", "layers.1", "layers.2"]
        assert len(view.graph) <= 6


def test_the_profile_coloured_fused_view_shares_the_time_out_by_layer(encoder):
    # Every kernel call sits in its own layer, so three layers doing the same work take about a
    # third of the time each (layer 0 took 71 % when it held the later calls' kernels). Each
    # call of one kernel is given that kernel's median time: what is tested is where a call's
    # time goes, not how steady this shared machine's clock was (68/16/16 under load).
    import re
    import statistics

    profile = encoder.profile(repeat=3)
    by_name: dict = {}
    for k in profile.kernels:
        by_name.setdefault(k.name, []).append(k.seconds)
    for k in profile.kernels:
        k.seconds = statistics.median(by_name[k.name])
    view = encoder.graph("fused", profile=profile)
    g = view.graph
    layers = folded(g)
    heat = view.layers(g)["profile"]
    assert sorted(layers) == ["layers.0", "layers.1", "layers.2"]
    shares = [int(re.search(r"(\d+)% of kernel time", n.tooltip).group(1)) for n in layers.values()]
    assert all(heat[n.id]["fill"] for n in layers.values())
    assert all(20 <= s <= 47 for s in shares), shares
    assert 97 <= sum(shares) <= 102


def test_the_scrubbers_passes_after_fuseops_keep_the_layers(encoder):
    # After CallTIRRewrite a kernel writes into its destination (``_ = k(x, w, out)``) and
    # nothing reads ``_``: it goes with its buffer, so the layers hold together; a removed
    # value's module, drawn as a ghost, keeps its path.
    from mlclab.notebook.sources import marked_graph

    pipe = encoder.pipeline()
    for name in ("FuseOps", "FuseTIR", "CallTIRRewrite", "StaticPlanBlockMemory",
                 "KillAfterLastUse"):
        g = marked_graph(pipe, pipe[name].index)
        modules = [c for c in g.clusters.values() if c.kind == MODULE]
        assert all(c.path for c in modules), name
        assert {"layers.0", "layers.1", "layers.2"} <= {c.path for c in modules}, name
        kernels = [n for n in g.nodes.values() if n.kind == "fused"]
        in_module = [any(g.clusters[a].kind == MODULE for a in g.cluster_path(n.group))
                     for n in kernels]
        assert (kernels or name == "FuseOps") and all(in_module), name
    for step in pipe.steps:
        g = marked_graph(pipe, step.index)
        assert all(c.path for c in g.clusters.values() if c.kind == MODULE), step.name


def test_a_later_call_of_a_fused_function_takes_no_source_from_the_first_calls_vars(encoder):
    # Parsed with no pipeline to carry identities: the shared function's vars are layer 0's,
    # so a later call's members get no source rather than layer 0's.
    from mlclab.viz.parser import DataflowParser
    from mlclab.viz.relax_info import Subject, resolve

    subject = resolve(encoder)
    mod = encoder.pipeline()["FuseOps"].mod
    g = DataflowParser().parse(Subject(mod, subject.name, subject.bindings, subject.source))
    grouped = [n for n in g.nodes.values() if n.group]
    first = [n for n in grouped if n.group.endswith("/fused_packed_matmul_add")]
    later = [n for n in grouped if n.group.endswith("/fused_packed_matmul_add#2")]
    assert first and later
    assert any(n.source is not None and n.source.module == "layers.0.self_attn" for n in first)
    assert all(n.source is None for n in later)


def test_the_fused_view_of_a_big_model_starts_folded_as_the_dataflow_view_does(resnet):
    # Lesson 9's ResNet fused graph was drawn whole at 6,635 x 7,907 px: fn.graph("fused") and the
    # pipeline's steps fold an imported model's modules as fn.graph() does.
    for view in (resnet.graph("fused"), resnet.pipeline()["FuseOps"].graph()):
        folded = [n.op for n in view.graph.nodes.values()
                  if n.folded is not None and n.folded.kind == MODULE]
        assert {"layer1", "layer2", "layer3", "layer4"} <= set(folded)
        assert len(view.graph) < 30


# ------------------------------------------------------------------ the viewer
def test_viewer_payload_carries_module_paths_and_the_hierarchy(resnet):
    p = view_payload(resnet, "dataflow")
    json.dumps(p)
    assert p["overview"] == {"shown": len(p["nodes"]), "total": 197}
    assert open_module_paths(p) == []
    layer2 = "collapsed:fn:ResNet/module:layer2"
    search = p["overlays"]["search"][layer2]["text"]
    assert "layer2.1.conv1" in search and "layer2.0.downsample.0" in search
    assert p["nodes"][layer2]["folded"]["cls"] == "Sequential"
    assert p["namespaces"]["fn:ResNet/module:layer2.1"]["folded"]
    conv = next(n for n in p["nodes"].values() if n["label"] == "nn.conv2d")
    assert conv["source"]["module"] == "conv1" and conv["source"]["origin"] == "aten.convolution"
    opened = view_payload(resnet, "dataflow", open_modules=["layer1"])
    c = opened["namespaces"]["fn:ResNet/module:layer1"]
    assert {k: c[k] for k in ("label", "kind", "parent", "path", "detail", "folded")} == \
        {"label": "layer1 · Sequential", "kind": MODULE, "parent": "fn:ResNet",
         "path": "layer1", "detail": "Sequential()", "folded": False}
    assert open_module_paths(opened) == ["layer1"]
    whole = view_payload(resnet, "dataflow", full=True)
    assert "overview" not in whole and len(whole["nodes"]) == 197
    # Drawn whole, every foldable module is open (a conv's box is not foldable).
    assert not any(n["folded"] for n in whole["nodes"].values())
    assert {"layer1", "layer1.0", "layer2.0.downsample"} <= set(open_module_paths(whole))
    assert "layer1.0.conv1" not in open_module_paths(whole)
    assert whole["namespaces"]["fn:ResNet/module:layer1.0.conv1"]["parent"] == \
        "fn:ResNet/module:layer1.0"


def test_viewer_opens_folds_and_searches_modules(resnet):
    v = function_viewer(resnet)
    assert v.open_modules == [] and len(v.nodes) <= MODULE_NODES
    assert v.find("layer2.1") == ["collapsed:fn:ResNet/module:layer2"]
    v.open_module("layer2.1")
    assert v.open_modules == ["layer2", "layer2.1"]
    hits = v.find("layer2.1")
    assert hits and all(v.nodes[h]["source"]["module"].startswith("layer2.1") for h in hits)
    assert "collapsed:fn:ResNet/module:layer2.0" in v.nodes
    v.view = "let"                                   # the choice holds in every view
    assert "collapsed:fn:ResNet/module:layer2.0" in v.nodes and v.find("layer2.1")
    v.view = "dataflow"
    v.open_modules = []                              # "fold all": the first look again
    assert sorted(n["folded"]["path"] for n in v.nodes.values()
                  if n["folded"]) == sorted(STEM_AND_HEAD)
    v.unfold()                                       # "draw all"
    assert len(v.nodes) == 197
    v.unfolded = []                                  # "fold all" after it
    assert len(v.nodes) < 30 and "overview: " in v.static_html()
    with pytest.raises(TypeError, match="path"):
        v.open_module("")
    with pytest.raises(ValueError, match="no module 'layer9'"):
        v.open_module("layer9")


def test_validation_marks_reach_the_folded_module_that_holds_them(resnet, resnet_full):
    def binding(module):
        return next(n.name for n in resnet_full.nodes.values()
                    if n.source is not None and n.source.module == module and n.kind == "op")

    bad, good = binding("layer3.1.conv2"), binding("layer1.0.conv1")
    notes = {bad: {"status": "diverged", "text": "differs"}, good: {"status": "ok", "text": "ok"},
             binding("layer3.0.conv1"): {"status": "ok", "text": "ok"}}
    v = function_viewer(resnet, annotations=notes, highlight_bindings=[bad])
    layer3, layer1 = ("collapsed:fn:ResNet/module:layer3", "collapsed:fn:ResNet/module:layer1")
    checks = v.overlay("validation")
    assert checks[layer3]["status"] == "diverged"
    assert checks[layer3]["text"].startswith("1 of 2 checked values inside diverge")
    assert checks[layer1]["status"] == "ok" and v.highlight == [layer3]
    v.open_module("layer3")                          # one level down: the block holding it
    block = "collapsed:fn:ResNet/module:layer3.1"
    assert v.overlay("validation")[block]["status"] == "diverged" and block in v.highlight
    v.open_module("layer3.1")                        # the node itself
    (node,) = [nid for nid, info in v.nodes.items() if info.get("name") == bad]
    assert v.overlay("validation")[node] == {"status": "diverged", "text": "differs"}
    assert node in v.highlight
