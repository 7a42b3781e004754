"""fn.profile(): per-kernel times, FLOPs and bytes from the TIR, the roofline, the overlay on
the fused graph, compare_profiles, and the static HTML (issue 15).

No assertion is on a time's size (the machine is shared and noisy): work is checked against
hand counts, times only for being positive and adding up.
"""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlclab
from mlclab.inspect.profile import Kernel, Peaks, Profile, heat_colour
from mlclab.inspect.work import expr_flops, kernel_work
from mlclab.notebook.profile_html import comparison_html, profile_html, roofline_svg

N = 1 << 16

SRC = f'''
def mm(a: Tensor[(512, 512), f32], b: Tensor[(512, 512), f32]):
    return a @ b

def chain(a: Tensor[({N},), f32], b: Tensor[({N},), f32], c: Tensor[({N},), f32]):
    return relu(a * b + c)

def scale(a: Tensor[({N},), f32], b: Tensor[({N},), f32]):
    return a * b

def split_chain(a: Tensor[({N},), f32], b: Tensor[({N},), f32], c: Tensor[({N},), f32]):
    t = scale(a, b)
    return relu(t + c)

def mlp(x: Tensor[(8, 32), f32], w1: Tensor[(16, 32), f32], b1: Tensor[(16,), f32],
        w2: Tensor[(4, 16), f32], b2: Tensor[(4,), f32]):
    h = relu(linear(x, w1, b1))
    return linear(h, w2, b2)

def dyn(a: Tensor[("n", 8), f32]):
    return exp(a) * 2.0
'''


@pytest.fixture(scope="module")
def prog():
    return mlclab.compile(SRC)


@pytest.fixture(scope="module")
def mm_profile(prog):
    return prog["mm"].profile(repeat=2)


@pytest.fixture(scope="module")
def chain_profile(prog):
    return prog["chain"].profile(repeat=3)


def check_times(prof):
    assert prof.kernels
    for k in prof.kernels:
        assert k.seconds > 0
        assert k.spread[0] <= k.seconds <= k.spread[1]
    assert prof.total_seconds == pytest.approx(sum(k.seconds for k in prof.kernels))
    assert prof.call_seconds > 0
    assert sum(prof.share(k) for k in prof.kernels) == pytest.approx(1.0)
    assert [k.seconds for k in prof.by_time()] == sorted((k.seconds for k in prof.kernels),
                                                         reverse=True)


def test_matmul_counts_two_flops_per_multiply_add(mm_profile):
    (k,) = mm_profile.kernels
    assert k.flops == 2 * 512 ** 3
    assert k.bytes == 3 * 512 * 512 * 4          # a, b and the result, once each
    assert k.intensity == pytest.approx(2 * 512 ** 3 / (3 * 512 * 512 * 4))
    assert k.lines == (3,)
    check_times(mm_profile)


def test_fused_chain_moves_inputs_plus_output_once(chain_profile):
    (k,) = chain_profile.kernels                 # one fused kernel
    assert k.name.startswith("fused_")
    assert k.bytes == (3 + 1) * 4 * N
    assert k.flops == 3 * N                      # multiply, add, max
    assert k.gbps == pytest.approx(k.bytes / k.seconds / 1e9)
    assert k.gflops == pytest.approx(k.flops / k.seconds / 1e9)
    check_times(chain_profile)


def test_unfused_chain_has_a_kernel_per_function_and_more_traffic(prog, chain_profile):
    split = prog["split_chain"].profile(repeat=2)
    assert len(split.kernels) == 2               # scale's multiply; add + relu fused in split_chain
    assert sum(k.flops for k in split.kernels) == 3 * N
    # The intermediate t goes to memory and back: 2 extra N-float transfers.
    assert sum(k.bytes for k in split.kernels) == (3 + 1 + 2) * 4 * N
    cmp = mlclab.compare_profiles(split, chain_profile)
    assert cmp.ratio == pytest.approx(chain_profile.total_seconds / split.total_seconds)
    names = [name for name, _, _ in cmp.rows()]
    assert set(names) == {k.name for k in split.kernels} | {k.name for k in chain_profile.kernels}
    html = cmp._repr_html_()
    assert "b / a" in html and "total in kernels" in html
    assert "total" in repr(cmp)
    assert split.compare(chain_profile).ratio == cmp.ratio


def test_mlp_kernels_know_their_lines_and_nodes(prog):
    fn = prog["mlp"]
    prof = fn.profile(repeat=2)
    check_times(prof)
    assert len(prof.kernels) == 2
    first, second = prof.kernels
    assert first.flops == 2 * 8 * 32 * 16 + 8 * 16 + 8 * 16     # matmul, + bias, relu
    assert second.flops == 2 * 8 * 16 * 4 + 8 * 4
    assert first.bytes == 4 * (8 * 32 + 16 * 32 + 16 + 8 * 16)
    assert first.lines == (17,) and 18 in second.lines     # h = ..., return ...
    assert first.code == ("h = relu(linear(x, w1, b1))",)
    assert "17: h = relu(linear(x, w1, b1))" in prof._repr_html_()
    fused = fn.graph("fused")
    for k in prof.kernels:
        assert k.nodes and all(nid in fused.graph.nodes for nid in k.nodes)


def test_symbolic_sizes_are_taken_from_the_arguments(prog):
    prof = prog["dyn"].profile(np.ones((5, 8), "float32"), repeat=1)
    assert sum(k.flops for k in prof.kernels) == 2 * 5 * 8          # exp 1, multiply 1
    assert sum(k.bytes for k in prof.kernels) == 2 * 5 * 8 * 4
    drawn = prog["dyn"].profile(repeat=1)                            # random sizes
    assert drawn.kernels


def test_overlay_colours_the_fused_view(prog):
    fn = prog["mlp"]
    prof = fn.profile(repeat=2)
    view = fn.graph("fused", profile=prof)
    fills = {nid: e["fill"] for nid, e in view.layers(view.graph)["profile"].items()}
    marked = [view.graph.nodes[nid] for nid in fills]
    assert set(fills) == {nid for k in prof.kernels for nid in k.nodes}
    for colour in fills.values():
        assert re.fullmatch(r"#[0-9a-f]{6}", colour)
    # A fused kernel's time is drawn once, on its output; its other members say whose it is.
    for k in prof.kernels:
        *members, output = k.nodes
        drawn = view.graph.nodes[output]
        assert "GFLOP/s" in drawn.tooltip and "time" in drawn.attrs
        for nid in members:
            node = view.graph.nodes[nid]
            assert "time" not in node.attrs and f"part of fused kernel {k.name}" in node.tooltip
    assert any(len(k.nodes) > 1 for k in prof.kernels)
    # Painted into the picture by the profile overlay's registered look (viz.paint).
    assert f'fill="{fills[marked[0].id]}"' in view.svg() and "GFLOP/s" in view.source
    # The plain fused view is left as it was.
    plain = fn.graph("fused")
    assert not plain.overlays
    assert all(f'fill="{c}"' not in plain.svg() for c in set(fills.values()) - {"#ffffff"})


def test_profile_html_is_static_sorted_and_has_a_roofline(chain_profile, mm_profile):
    html = mm_profile._repr_html_()
    assert "<script" not in html
    assert html.count("<svg") == 1 and 'class="mlclab-kernel"' in html
    assert "GFLOP/s" in html and "FMA" in html and "STREAM" in html     # the method is stated
    assert mm_profile.kernels[0].name in html


def test_labels_are_escaped():
    bad = '<img src=x onerror="alert(1)">'
    k = Kernel(bad, 1e-3, (1e-3, 2e-3), 1000, 100, (1,), ("n",), (bad,))
    prof = Profile(bad, [k], Peaks(100.0, 10.0, bad), 1, 2e-3)
    for html in (profile_html(prof), roofline_svg(prof), comparison_html(prof.compare(prof))):
        assert "<img" not in html and "&lt;img" in html


def test_roofline_places_each_kernel_under_its_roof():
    peaks = Peaks(100.0, 10.0)                   # ridge at 10 FLOP/byte
    mem = Kernel("mem", 1.0, (1.0, 1.0), int(1e9), int(1e9), (), ())        # 1 FLOP/B, 1 GF/s
    comp = Kernel("comp", 1.0, (1.0, 1.0), int(50e9), int(1e9), (), ())     # 50 FLOP/B
    assert mem.bound(peaks) == "memory" and mem.roof(peaks) == pytest.approx(10.0)
    assert mem.percent_of_roof(peaks) == pytest.approx(10.0)
    assert comp.bound(peaks) == "compute" and comp.percent_of_roof(peaks) == pytest.approx(50.0)
    svg = roofline_svg(Profile("f", [mem, comp], peaks, 1, 2.0))
    assert svg.count('class="mlclab-kernel"') == 2


def test_peaks_are_measured_once(mm_profile, chain_profile):
    assert mm_profile.peaks is chain_profile.peaks
    assert mm_profile.peak_gflops > 0 and mm_profile.peak_gbps > 0


def test_flop_rules():
    import tvm
    from tvm import te, tirx

    a = te.placeholder((10,), "float32", name="a")
    out = te.compute((10,), lambda i: te.max(a[i] * 2.0 + 1.0, tirx.const(0, "float32")), name="o")
    assert kernel_work(te.create_prim_func([a, out]), [((10,), "float32")] * 2).flops == 30
    e = te.compute((10,), lambda i: tvm.tirx.exp(a[i]), name="e")
    assert kernel_work(te.create_prim_func([a, e]), [((10,), "float32")] * 2).flops == 10
    assert expr_flops(tirx.const(1.0, "float32")) == 0


def test_bad_arguments_are_named(prog, chain_profile):
    fn = prog["chain"]
    with pytest.raises(ValueError, match="repeat"):
        fn.profile(repeat=0)
    with pytest.raises((TypeError, ValueError)):
        fn.profile(np.ones(3, "float32"))
    with pytest.raises(ValueError, match="fused"):
        fn.graph("dataflow", profile=chain_profile)
    with pytest.raises(TypeError, match="profile"):
        fn.graph("fused", profile="nope")
    with pytest.raises(ValueError, match="chain"):
        prog["mm"].graph("fused", profile=chain_profile)
    with pytest.raises(TypeError, match="compare_profiles"):
        mlclab.compare_profiles(chain_profile, 3)


def test_heat_colour_runs_white_to_red():
    assert heat_colour(0) == "#ffffff"
    assert heat_colour(1) == "#ff4b37"
    assert heat_colour(5) == heat_colour(1)


def test_viewer_shows_the_profile_on_the_fused_view(prog):
    from mlclab.notebook.graphs import function_viewer, view_payload

    fn = prog["mlp"]
    prof = fn.profile(repeat=1)
    payload = view_payload(fn, "fused", profile=prof)
    marked = payload["overlays"]["profile"]
    assert set(marked) == {nid for k in prof.kernels for nid in k.nodes} and marked
    assert all(e["fill"].startswith("#") for e in marked.values())
    # the kernel's numbers once, on its output; its other members name it
    assert all(("part of fused kernel" if e.get("member") else "GFLOP/s") in e["text"]
               for e in marked.values())
    assert sum({e["kernel"]: e["share"] for e in marked.values()}.values()) == \
        pytest.approx(1.0)
    # The drawing is layout only: the viewer paints the heat from the style table.
    assert payload["styles"]["profile"]["fill_key"] == "fill"
    viewer = function_viewer(fn, "fused", profile=prof)
    assert viewer.overlay("profile") == marked


def test_compare_two_builds_of_one_program_matches_kernels():
    src = "def mm(a: Tensor[(64, 64), f32], b: Tensor[(64, 64), f32]):\n    return relu(a @ b)\n"
    generic = mlclab.compile(src, target={"kind": "llvm"})["mm"].profile(repeat=2)
    native = mlclab.compile(src)["mm"].profile(repeat=2)
    cmp = mlclab.compare_profiles(generic, native)
    ((name, a, b),) = cmp.rows()
    assert a.name == b.name == name and a.flops == b.flops == 2 * 64 ** 3 + 64 * 64
    assert "×" in cmp._repr_html_()


def test_profile_of_a_0d_input_keeps_it_0d():
    """The profile's own copies of the inputs keep their rank (no TVM ndim check reaches it)."""
    fn = mlclab.compile("def f(x: Tensor[(), f32]):\n    return x * 2.0\n")["f"]
    prof = fn.profile(np.array(1.5, dtype=np.float32), repeat=1)
    assert [k.name for k in prof.kernels] == ["multiply"]


def test_each_roof_is_measured_when_first_read():
    # In a fresh process: the bandwidth's 64 MB copy runs only when its roof is read
    # (lesson 13 prints the compute peak of its largest model's profile, nothing else).
    code = textwrap.dedent("""
        from mlclab.inspect import profile
        gflops = profile.peaks().gflops
        print(profile._peak_gflops.cache_info().currsize, profile._peak_gbps.cache_info().currsize)
        ridge = profile.peaks().ridge
        print(profile._peak_gbps.cache_info().currsize, ridge == gflops / profile.peaks().gbps)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1", "0", "1", "True"]
