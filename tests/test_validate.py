"""validate(): comparison rules, random inputs, the report and its static HTML.

These tests drive validate() with a small stand-in for a CompiledFunction (the same duck
type: typed.params, __call__, reference, trace, reference_trace, bindings) so a fault can be
planted at a chosen binding; tests/test_validate_compiled.py runs it on real compiled code.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlclab.lang.typed import BindingInfo, Span
from mlclab.notebook.report_html import heatmap_svg, report_html
from mlclab.api.comparison import compare, default_tolerances
from mlclab.api.drawn_inputs import random_inputs
from mlclab.api.timing import time_per_call
from mlclab.api.validation import validate


def param(name, shape, dtype="float32"):
    return SimpleNamespace(name=name, type=SimpleNamespace(shape=tuple(shape), dtype=dtype))


class FakeFunction:
    """d = a @ b; e = d + c; return relu(e) — with an optional fault planted in one binding."""

    name = "foo"
    source = "def foo(a, b, c):\n    d = a @ b\n    e = d + c\n    return relu(e)\n"

    def __init__(self, fault=None, shape=("n", 3)):
        self.fault = fault
        self.typed = SimpleNamespace(params=[param("a", shape), param("b", (3, 4)),
                                             param("c", (1, 4))])
        lines = self.source.splitlines()
        self.bindings = {
            f"var_{n}": BindingInfo(n, dsl, Span(i, 4, i, 20), lines[i - 1], "binding")
            for n, dsl, i in [("d", "d", 2), ("e", "e", 3), ("lv", None, 4)]}

    def _steps(self, a, b, c, faulty):
        d = a @ b
        if faulty and self.fault == "d":
            d = d + 1.0
        e = d + c
        if faulty and self.fault == "e":
            e = e * 2.0
        return {"d": d, "e": e, "lv": np.maximum(e, 0)}

    def __call__(self, *args):
        return self._steps(*args, faulty=True)["lv"]

    def reference(self, *args):
        return self._steps(*args, faulty=False)["lv"]

    def trace(self, *args):
        return self._steps(*args, faulty=True)

    def reference_trace(self, *args, each=None):
        values = self._steps(*args, faulty=False)
        if each is None:
            return values
        for name, value in values.items():   # validate's protocol: handed over one by one
            each(name, value)
        return {}


def test_compare_within_and_outside_tolerance():
    e = np.array([[1.0, 2.0], [0.0, -4.0]], dtype=np.float32)
    ok = compare(e + 1e-7, e)
    assert ok.ok and ok.mismatches == 0 and ok.max_abs_err < 1e-6
    bad = compare(e + np.array([[0, 0], [0, 0.5]], dtype=np.float32), e)
    assert not bad.ok and bad.mismatches == 1
    assert bad.max_abs_err == pytest.approx(0.5) and bad.max_rel_err == pytest.approx(0.125)
    assert bad.tolerance_ratio[1, 1] > 1 and bad.tolerance_ratio[0, 0] == 0


def test_compare_nan_inf_shape_and_exact_dtypes():
    nan = np.array([np.nan, np.inf, 1.0], dtype=np.float32)
    assert compare(nan.copy(), nan).ok                       # NaN meets NaN, inf meets inf
    one_sided = compare(np.array([1.0, np.inf, 1.0], np.float32), nan)
    assert not one_sided.ok and one_sided.max_abs_err == np.inf
    shape = compare(np.zeros((2, 3)), np.zeros((3, 2)))
    assert not shape.ok and "shape (2, 3)" in shape.note
    assert default_tolerances("int32") == (0.0, 0.0)
    assert not compare(np.array([1, 2], np.int32), np.array([1, 3], np.int32)).ok
    assert compare(np.array([True, False]), np.array([True, False])).ok


def test_random_inputs_share_symbolic_sizes_and_follow_dtypes():
    params = [param("x", ("n", 3)), param("y", ("n",), "int32"), param("m", (2, 2), "bool"),
              param("u", (4,), "uint8")]
    args, sizes = random_inputs(params, seed=7)
    n = sizes["n"]
    assert 2 <= n <= 5
    assert args[0].shape == (n, 3) and args[0].dtype == np.float32
    assert args[1].shape == (n,) and args[1].dtype == np.int32
    assert args[2].dtype == np.bool_ and args[3].dtype == np.uint8 and args[3].min() >= 0
    again, _ = random_inputs(params, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(args, again))


def test_random_inputs_refuse_signatures_too_big_to_allocate():
    params = [param("x", (100_000, 100_000))]
    with pytest.raises(ValueError, match="38,147 MiB .*pass your own arguments"):
        random_inputs(params, seed=0)
    f16, _ = random_inputs([param("h", (3,), "float16")], seed=0)
    assert f16[0].dtype == np.float16


def test_validate_passes_on_a_correct_function_with_random_inputs():
    report = validate(FakeFunction(), seed=3)
    assert report.ok and bool(report)
    assert report.first_divergence is None
    assert report.max_abs_err == 0 and report.seed == 3 and "n" in report.sizes
    assert [b.name for b in report.bindings] == ["d", "e", "lv"]
    assert report.compiled_time_s > 0 and report.reference_time_s > 0


@pytest.mark.parametrize("fault", ["d", "e"])
def test_validate_names_the_first_divergent_binding(fault):
    report = validate(FakeFunction(fault=fault), seed=1)
    assert not report.ok
    assert report.first_divergence == fault
    bad = report.first_divergent_binding
    assert bad.dsl_name == fault and bad.line == {"d": 2, "e": 3}[fault]
    assert report.max_abs_err > 0.1
    html = report_html(report)
    assert 'class="mlclab-badge mlclab-fail"' in html
    assert f"first divergence: <b>{fault}</b>" in html


def test_validate_with_a_student_reference_and_given_args():
    f = FakeFunction()
    a, b, c = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.zeros((1, 4), np.float32)

    def my_numpy(a, b, c):
        return np.maximum(a @ b + c, 0) + 0.5          # a student's slip

    report = validate(f, a, b, c, reference=my_numpy)
    assert not report.ok and report.seed is None
    assert report.max_abs_err == pytest.approx(0.5)
    assert report.first_divergence is None              # TVM agrees with the program's numpy
    assert "my_numpy" in report.reference_name
    assert [n for n, _ in report.inputs] == ["a", "b", "c"]


def test_validate_tolerance_override():
    f = FakeFunction(fault="e")
    assert not validate(f, seed=0).ok
    # e*2 vs e: huge rtol lets it through, but never silently: the error is still reported.
    loose = validate(f, seed=0, rtol=10.0, atol=10.0)
    assert loose.ok and loose.max_abs_err > 0


def test_references_cannot_change_each_others_inputs():
    f = FakeFunction()

    def clobber(a, b, c):
        out = np.maximum(a @ b + c, 0)
        a[...] = 99.0
        return out

    report = validate(f, reference=clobber, seed=5)
    assert report.ok
    assert report.inputs[0][1].max() < 99


def test_report_html_escapes_everything():
    f = FakeFunction()
    f.name = "<img src=x onerror=alert(1)>"
    f.typed.params[0].name = "<b>a</b>"
    report = validate(f, seed=2)
    html = report_html(report)
    assert "<img" not in html and "<b>a</b>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;b&gt;a&lt;/b&gt;" in html
    assert "<script" not in html


def test_heatmap_marks_mismatches_and_block_reduces_big_outputs():
    from mlclab.viz.overlays import overlay

    bad = overlay("validation").style.looks["diverged"].stroke     # the graph's look too
    ratio = np.zeros((3, 4))
    ratio[1, 2] = 5.0
    svg = heatmap_svg(ratio, "output")
    assert svg.count("<rect") == 12
    assert svg.count(f'fill="{bad}"') == 1 and "[1, 2]" in svg
    big = np.zeros((200, 100))
    big[150, 7] = 2.0
    svg = heatmap_svg(big)
    assert svg.count("<rect") == 40 * 20 and svg.count(f'fill="{bad}"') == 1
    assert "5×5 blocks" in svg
    with pytest.raises(ValueError):
        heatmap_svg(np.zeros(3))


def test_report_shows_heatmap_for_2d_outputs_only():
    report = validate(FakeFunction(fault="e"), seed=4)
    assert "mlclab-heatmap" in report_html(report)


def test_time_per_call_grows_the_batch():
    calls = []
    t = time_per_call(lambda: calls.append(1), budget_s=0.002)
    assert t > 0 and len(calls) > 3


# Properties of compare(), over arbitrary float32 arrays (NaN and inf included).
_floats = arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 4)),
                 elements=st.floats(width=32, allow_nan=True, allow_infinity=True))


@settings(max_examples=60, deadline=None)
@given(_floats)
def test_an_array_always_matches_itself(a):
    c = compare(a.copy(), a)
    assert c.ok and c.max_abs_err == 0 and c.max_rel_err == 0
    assert not c.tolerance_ratio.any()


@settings(max_examples=60, deadline=None)
@given(_floats, _floats)
def test_mismatches_are_exactly_the_cells_the_heatmap_paints_red(a, e):
    if a.shape != e.shape:
        assert compare(a, e).note
        return
    c = compare(a, e)
    assert c.mismatches == int((c.tolerance_ratio > 1).sum())
    assert c.ok == (c.mismatches == 0)
    assert c.max_abs_err >= 0 and c.max_rel_err >= 0


def test_default_tolerance_accepts_float32_rounding_of_a_long_reduction():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 512)).astype("f4")
    b = rng.standard_normal((512, 512)).astype("f4")
    exact = a.astype("f8") @ b.astype("f8")
    assert compare(a @ b, exact.astype("f4")).ok
    assert not compare(a @ b + 0.05, exact.astype("f4")).ok


DOMAIN_SOURCE = """\
def logs(x: Tensor[(3,), f32], y: Tensor[(3,), f32]):
    return relu(log(x)) + x * y

def shifted(x: Tensor[(3,), f32]):
    return log(x - 0.5)

def rebound(x: Tensor[(3,), f32]):
    x = x * 2.0
    return sqrt(x)

def both(x: Tensor[(3,), f32]):
    return log1p(x) + log(x)

def bn(x: Tensor[(2, 3, 4, 4), f32], g: Tensor[(3,), f32], b: Tensor[(3,), f32],
       m: Tensor[(3,), f32], v: Tensor[(3,), f32]):
    return relu(batch_norm(x, g, b, m, v))
"""


def test_input_ranges_come_from_the_operator_table_for_direct_uses_only():
    from mlclab.api.drawn_inputs import input_ranges
    from mlclab.frontend.parser import parse_program
    from mlclab.ops.params import DOMAINS

    fns = parse_program(DOMAIN_SOURCE).functions
    # x also feeds a product: still drawn positive; y feeds nothing with a domain
    assert input_ranges(fns["logs"]) == {"x": DOMAINS["positive"]}
    assert input_ranges(fns["shifted"]) == {}        # a computed value is the program's business
    assert input_ranges(fns["rebound"]) == {}        # x no longer names the parameter
    assert input_ranges(fns["both"]) == {"x": (DOMAINS["positive"][0], DOMAINS["> -1"][1])}
    assert input_ranges(fns["bn"]) == {"v": DOMAINS["positive"]}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_validate_draws_random_inputs_inside_the_operators_domains(seed):
    import mlclab

    source = DOMAIN_SOURCE + ("\ndef root(x: Tensor[(4, 5), f32]):\n"
                              "    return sqrt(x) + 1.0\n")
    program = mlclab.compile(source)
    for name, positive in [("logs", "x"), ("root", "x"), ("bn", "v")]:
        report = validate(program[name], seed=seed)
        assert report.ok
        inputs = dict(report.inputs)
        assert (inputs[positive] > 0).all()
        # correct programs on inputs they are meant for: numbers compared, not NaN against NaN
        assert all(np.isfinite(o.actual).all() for o in report.outputs)


def test_tensors_that_require_grad_are_values_on_both_sides():
    import mlclab

    import torch
    f = mlclab.compile("def f(a: Tensor[(2,), f32]):\n    return exp(a)")["f"]
    w = torch.ones(2, requires_grad=True)
    assert mlclab.validate(f, reference=lambda a: torch.exp(torch.from_numpy(a)) * w).ok
    assert mlclab.validate(f, w).ok
    assert np.allclose(f(w), np.e)


def test_random_inputs_are_the_same_every_run_by_default():
    first, second = validate(FakeFunction()), validate(FakeFunction())
    assert first.seed == second.seed == 0
    for (_, a), (_, b) in zip(first.inputs, second.inputs):
        np.testing.assert_array_equal(a, b)
    other = validate(FakeFunction(), seed=1)
    assert other.seed == 1 and not np.array_equal(other.inputs[0][1], first.inputs[0][1])


def test_default_tolerances_grow_with_the_square_root_of_depth():
    # float32: atol = rtol * max|expected| = 1e-4 here; element 31 is -0.016, so its own
    # tolerance is about 1e-4 at depth 1 and 4e-4 sixteen operations deep.
    expected = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    off = expected.copy()
    off[31] += 3e-4                        # 3x the base tolerance: rounding 16 operations deep
    assert not compare(off, expected).ok
    assert compare(off, expected, depth=16).ok             # sqrt(16) = 4x
    off[31] += 3e-4                        # 6x: more than rounding explains
    assert not compare(off, expected, depth=16).ok
    # Tolerances the caller gives are used as given, at any depth.
    assert not compare(off, expected, rtol=1e-5, atol=1e-5, depth=10_000).ok


def test_intermediates_are_compared_as_the_reference_computes_them():
    # validate holds TVM's intermediates only: the reference's are handed over one at a time
    # (reference_trace(each=...)), each compared against TVM's and dropped.
    handed = []

    class Counting(FakeFunction):
        def reference_trace(self, *args, each=None):
            assert each is not None, "validate asked for every intermediate at once"
            return super().reference_trace(*args, each=lambda n, v: handed.append(n) or each(n, v))

    report = validate(Counting(fault="e"), seed=1)
    assert handed == ["d", "e", "lv"]
    assert [b.name for b in report.bindings] == ["d", "e", "lv"]
    assert report.first_divergence == "e"
    assert all(b.comparison.tolerance_ratio is None for b in report.bindings)


def test_the_real_reference_trace_hands_over_each_binding():
    import mlclab

    f = mlclab.compile("def f(a: Tensor[(3,), f32]):\n    b = exp(a)\n    c = b * 2.0\n"
                       "    return c + 1.0\n")["f"]
    a = np.array([0.0, 1.0, 2.0], "f4")
    handed = {}
    assert f.reference_trace(a, each=lambda name, value: handed.setdefault(name, value)) == {}
    whole = f.reference_trace(a)
    assert list(handed) == list(whole)
    for name in whole:
        np.testing.assert_array_equal(handed[name], whole[name])


def test_random_sizes_avoid_an_index_outside_a_symbolic_axis():
    """x[3] needs n >= 4: a drawn n of 2 or 3 is drawn again, never reported as the bug."""
    import mlclab

    fn = mlclab.compile('def f(x: Tensor[("n",), f32]):\n    return x[3]\n')["f"]
    for seed in range(6):
        report = mlclab.validate(fn, seed=seed)
        assert report.ok and report.sizes["n"] >= 4
