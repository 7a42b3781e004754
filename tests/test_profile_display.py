"""What a profile shows (issue 20): folded modules coloured by the time of the kernels inside
them, and a static profile display that fits its output, names its dots, works in a dark theme
and explains a dot above a roof by that roof."""
import re

import pytest

import mlclab
from mlclab.inspect.profile import Kernel, Peaks, Profile, heat_colour
from mlclab.notebook.profile_html import profile_html, roofline_svg
from mlclab.viz.paint import node_paints

import torch


@pytest.fixture(scope="module")
def model_profile():
    torch.manual_seed(0)
    nn = torch.nn
    # Three stages of five blocks: past MODULE_FOLD_NODES nodes, so its views start folded.
    model = nn.Sequential(*[nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.ReLU())
                                            for _ in range(5)]) for _ in range(3)],
                          nn.Linear(64, 8))
    fn = mlclab.from_torch(model, torch.randn(32, 64))
    return fn, fn.profile(repeat=2)


def test_a_folded_module_carries_the_time_of_its_kernels(model_profile):
    fn, prof = model_profile
    view = fn.graph("fused", profile=prof)                  # collapse="auto": folded
    folded = {n.op: n for n in view.graph.nodes.values() if n.kind == "collapsed"}
    assert len(folded) >= 2
    total = prof.total_seconds
    paints = node_paints(view.layers(view.graph))          # what every painter draws
    for path, node in folded.items():
        inside = [k for k in prof.kernels if k.module == path or k.module.startswith(path + ".")]
        share = sum(k.seconds for k in inside) / total
        assert inside and paints[node.id]["fill"] == heat_colour(share)
        assert node.attrs["share"] == f"{100 * share:.0f} %"
        assert node.attrs["hottest"] == max(inside, key=lambda k: k.seconds).name
        assert f"{100 * share:.0f}% of kernel time" in node.tooltip
    # Drawn: "0 · 41 % of time" as the folded box's headline.
    source = view.source
    first = next(iter(folded))
    assert re.search(rf"<b>{re.escape(first)} · \d+ % of time</b>", source)
    # The unfolded view keeps colouring each kernel's own nodes.
    unfolded = fn.graph("fused", profile=prof, collapse=None)
    whole = unfolded.graph
    assert not any(n.kind == "collapsed" for n in whole.nodes.values())
    filled = node_paints(unfolded.layers(whole))
    assert sum(1 for nid in whole.nodes if filled.get(nid, {}).get("fill")) >= len(prof.kernels)


def test_an_imported_models_table_has_a_module_column(model_profile):
    _, prof = model_profile
    html = profile_html(prof)
    head = re.findall(r"<th [^>]*>(.*?)</th>", html)
    assert head[:4] == ["kernel", "time", "spread", "share"] and "module" in head
    assert "DSL line" not in head and "bound by" in head
    modules = [k.module for k in prof.kernels if k.module]
    assert modules and all(f">{m}</span>" in html for m in modules)
    if len(modules) < len(prof.kernels):          # a kernel no one module computed says so
        assert "no single module" in html
    assert "overflow-x:auto" in html                   # it scrolls in its output, never cut


def kernel(name, seconds, flops, nbytes, lines=(3,)):
    return Kernel(name, seconds, (seconds, seconds), flops, nbytes, lines, ("n",),
                  tuple(f"y = op{i}(x)" for i in range(len(lines))))


def test_a_dot_above_the_compute_roof_is_explained_by_the_compute_roof():
    peaks = Peaks(100.0, 10.0)                           # ridge at 10 FLOP/byte
    fast = kernel("fused_conv", 1.0, int(119e9), int(1e9))   # 119 FLOP/byte, 119 GFLOP/s: 119 %
    cached = kernel("fused_add", 1.0, int(1e9), int(0.5e9))  # 2 FLOP/byte, 1 GFLOP/s...
    cached = Kernel("fused_add", 0.01, (0.01, 0.01), int(1e9), int(0.5e9), (4,), ("n",), ("z",))
    prof = Profile("f", [fast, cached], peaks, 1, 2.0)
    assert fast.bound(peaks) == "compute" and fast.percent_of_roof(peaks) == pytest.approx(119)
    assert cached.bound(peaks) == "memory" and cached.percent_of_roof(peaks) > 100
    notes = roofline_svg(prof)
    compute = re.search(r"above the compute roof: ([^(]*)\((.*?)\)</div>", notes)
    memory = re.search(r"above the memory roof: ([^(]*)\((.*?)\)</div>", notes)
    assert compute.group(1).strip() == "fused_conv" and "caches" not in compute.group(2)
    assert "multiply-add" in compute.group(2)
    assert memory.group(1).strip() == "fused_add" and "caches" in memory.group(2)
    assert "main-memory bandwidth" in memory.group(2)


def test_dots_are_labelled_and_colours_follow_the_theme():
    peaks = Peaks(100.0, 10.0)
    kernels = [kernel(f"fused_k{i}", 0.001 * (i + 1), int(1e6 * (i + 1)), int(1e5))
               for i in range(12)]
    prof = Profile("f", kernels, peaks, 1, 1.0)
    svg = roofline_svg(prof)
    labels = re.findall(r'class="mlclab-kernel-label"[^>]*>([^<]*)<', svg)
    assert len(labels) == 8 and "k11" in labels              # the slowest kernels, named
    assert not any(label.startswith("fused_") for label in labels)
    html = profile_html(prof)
    # Text, axes, plot and dots from JupyterLab's theme variables (light fallbacks elsewhere):
    # in a dark theme nothing is drawn black on black.
    for var in ("--jp-content-font-color1", "--jp-layout-color0", "--jp-border-color2",
                "--jp-brand-color1"):
        assert f"var({var}," in html
    assert 'fill="#fff"' not in svg and "<text" in svg
    assert not re.search(r"<text [^>]*>(?![^<]*</text>)", svg)        # well formed
    assert all('style="fill:var(' in t for t in re.findall(r"<text [^>]*>", svg))
    # Twelve rows in the table, the rest folded under a summary.
    assert html.count("<details>") == 0
    more = Profile("f", kernels * 2, peaks, 1, 1.0)
    assert re.search(r"<summary[^>]*>12 more kernels \(\d+\.\d% of the time\)</summary>",
                     profile_html(more))


def test_a_long_kernel_name_and_a_long_line_are_cut_with_the_whole_in_a_tooltip():
    name = "fused_conv2d_NCHWc_add_add_relu_" + "x" * 40
    k = Kernel(name, 1e-3, (1e-3, 1e-3), 1000, 100, (7, 8, 9), ("n",),
               ("h = relu(conv2d(x, w, b, padding=(1, 1), strides=(2, 2)))", "a", "b"))
    html = profile_html(Profile("f", [k], Peaks(100.0, 10.0), 1, 2e-3))
    assert f'title="{name}"' in html and "fused_conv2d_NCHWc_add_…" in html
    assert "7: h = relu(conv2d(x,… +2" in html


def test_roofline_labels_never_overlap_even_when_dots_share_a_spot():
    from mlclab.notebook.profile_html import _CHAR_PX, _label_places
    # Lesson 9's case (ResNet-18): many kernels of one shape land on one spot, others close by.
    points = [(300.0, 150.0, f"conv2d_NCHWc{i}_add{i}_relu") for i in range(6)]
    points += [(310.0 + 4 * i, 160.0, f"conv2d_NCHWc9_add{i}") for i in range(4)]
    boxes = []
    for spot, (_, _, text) in zip(_label_places(points), points):
        if spot is not None:
            boxes.append((spot[0], spot[1] - 10, spot[0] + _CHAR_PX * len(text), spot[1]))
    assert len(boxes) >= 8
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
