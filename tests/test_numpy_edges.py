"""Programs the checker once passed and TVM then rejected (the student saw "line 1" and TVM's
text): each now compiles to numpy's answer or is a located DSLError at the argument."""
import warnings

import numpy as np
import pytest

import mlclab
from mlclab import DSLError

X23 = np.arange(6, dtype="float32").reshape(2, 3)


def compiled(sig: str, body: str):
    return mlclab.compile(f"def f({sig}):\n    return {body}\n")["f"]


def same_as_numpy(fn, want, *args):
    got, ref = fn(*args), fn.reference(*args)
    assert got.shape == ref.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref, want)


@pytest.mark.parametrize("sig,body,phrase,mark", [
    ("x: Tensor[(2, 3), f32]", "pad(x, 1, constant_values=1e40)", "1e+40 is out of range for f32",
     "1e40"),
    ("x: Tensor[(2, 3), f32]", "full((2, 2), 1e40)", "1e+40 is out of range for f32", "1e40"),
    ("x: Tensor[(2, 3), f16]", "full_like(x, 70000.0)", "70000.0 is out of range for f16",
     "70000.0"),
    ("x: Tensor[(0, 3), f32]", "mean(x, axis=0)", "mean over axis 0 of size 0 divides by a "
     "count of 0", "x"),
    ("x: Tensor[(0, 3), f32]", "var(x)", "var over axis 0 of size 0", "x"),
    ("x: Tensor[(3, 0), f64]", "std(x, axis=-1, keepdims=True)", "std over axis 1 of size 0", "x"),
])
def test_what_tvm_refuses_is_a_located_error(sig, body, phrase, mark):
    with pytest.raises(DSLError) as info:
        compiled(sig, body)
    e = info.value
    assert phrase in str(e) and "mlclab bug" not in str(e) and e.lineno == 2
    line = f"    return {body}"
    assert line[e.col_offset:e.end_col_offset] == mark


def test_a_mean_over_the_axis_that_holds_elements_is_fine():
    x = np.zeros((0, 3), "float32")
    same_as_numpy(compiled("x: Tensor[(0, 3), f32]", "mean(x, axis=1)"), np.mean(x, axis=1), x)


@pytest.mark.parametrize("sig,body,want", [
    ("x: Tensor[(2, 3), f32]", "repeat(x, 0, axis=0)", np.repeat(X23, 0, axis=0)),
    ("x: Tensor[(2, 3), f32]", "repeat(x, 0, axis=-1)", np.repeat(X23, 0, axis=-1)),
    ("x: Tensor[(2, 3), f32]", "repeat(x, 0)", np.repeat(X23, 0)),
    ('x: Tensor[("n", 3), f32]', "repeat(x, 0, axis=0) + 1.0", np.repeat(X23, 0, axis=0)),
    ('x: Tensor[("n", 3), f32]', "repeat(x, 0)", np.repeat(X23, 0)),
])
def test_repeat_zero_times_is_empty_as_in_numpy(sig, body, want):
    same_as_numpy(compiled(sig, body), want, X23)


@pytest.mark.parametrize("sig,index", [
    ("x: Tensor[(4, 3), f32]", "::9223372036854775807"),
    ('x: Tensor[("n", 3), f32]', "::9223372036854775807"),
    ("x: Tensor[(4, 3), f32]", "::-9223372036854775808"),
    ("x: Tensor[(4, 3), f32]", "1::2**70"),
    ('x: Tensor[("n", 3), f32]', "1::2**70"),
    ("x: Tensor[(4, 3), f32]", ":, ::-2**64"),
])
def test_a_step_past_the_end_takes_one_element(sig, index):
    x = np.arange(12, dtype="float32").reshape(4, 3)
    want = eval(f"x[{index}]")      # the test's own numpy expression
    same_as_numpy(compiled(sig, f"x[{index}]"), want, x)


def test_slices_of_a_symbolic_axis_broadcast_against_each_other():
    """x[1:][0:1] is typed (1, 3); TVM's own size for it (min(1, max(n - 1, 0))) could not
    broadcast, and the build failed with "CodeGenVM cannot emit this Relax operator"."""
    fn = compiled('x: Tensor[("n", 3), f32]', "x[:, ::-1] + x[1:, :][0:1]")
    for n in (2, 3, 5):
        x = np.arange(3 * n, dtype="float32").reshape(n, 3)
        same_as_numpy(fn, x[:, ::-1] + x[1:, :][0:1], x)
    # n = 1 gives numpy a (1, 3) + (0, 3) the program's types do not describe: refused first
    with pytest.raises(ValueError, match="needs n >= 2; x has n=1"):
        fn(np.zeros((1, 3), "float32"))


@pytest.mark.parametrize("body,n,needs", [
    ("x[0:2]", 1, "n >= 2"), ("x[-2:]", 0, "n >= 2"), ("x[1:3, 0]", 2, "n >= 3")])
def test_a_symbolic_axis_that_does_not_cover_the_slice_is_refused_before_it_runs(body, n, needs):
    """The slice's type says 2 rows; with fewer the kernel would read past the array."""
    fn = compiled('x: Tensor[("n", 3), f32]', body)
    with pytest.raises(ValueError) as info:
        fn(np.zeros((n, 3), "float32"))
    assert f"needs {needs}" in str(info.value) and f"x has n={n}" in str(info.value)


def test_argmax_and_argmin_of_all_infinite_slices_are_numpys_first_index():
    """A fully masked attention row is all -inf; TVM's reducer kept its start index -1."""
    x = np.float32([[-np.inf] * 3, [np.inf] * 3, [1, 5, 5], [np.nan, 1, np.nan],
                    [-np.inf, 2, -np.inf]])
    fn = mlclab.compile("def f(x: Tensor[(5, 3), f32]):\n"
                        "    return argmax(x, axis=1), argmin(x, axis=1), argmax(-x, axis=0), "
                        "argmin(x)\n")["f"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = (np.argmax(x, axis=1), np.argmin(x, axis=1), np.argmax(-x, axis=0), np.argmin(x))
    for got, ref, w in zip(fn(x), fn.reference(x), want):
        np.testing.assert_array_equal(got, w)
        np.testing.assert_array_equal(ref, w)


def test_argmax_of_the_smallest_int_is_index_0():
    x = np.int32([[-2 ** 31, -2 ** 31], [3, 7]])
    fn = mlclab.compile("def f(x: Tensor[(2, 2), i32]):\n"
                        "    return argmax(x, axis=1), argmin(-(x + 1), axis=1)\n")["f"]
    for got, w in zip(fn(x), (np.argmax(x, axis=1), np.argmin(-(x + 1), axis=1))):
        np.testing.assert_array_equal(got, w)


@pytest.mark.parametrize("sig,body,want", [
    ("", "zeros((5, 0))", np.zeros((5, 0), "float32")),
    ("x: Tensor[(2, 3), f32]", "zeros((0,), i64)", np.zeros((0,), "int64")),
    ("x: Tensor[(2, 3), f32]", "ones((0, 2)) * 2.0", np.ones((0, 2), "float32") * 2),
    ("x: Tensor[(2, 3), f32]", "x, zeros((2, 0))", (X23, np.zeros((2, 0), "float32"))),
])
def test_an_empty_constant_result_is_made_at_run_time(sig, body, want):
    # TVM folds these into constants its VM cannot load back ("Invalid DLTensor file
    # format" at the first call); the build makes them at run time instead.
    fn = compiled(sig, body)
    args = [X23] if sig else []
    got, ref = fn(*args), fn.reference(*args)
    for g, r, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, ref, want))):
        assert g.shape == r.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert mlclab.validate(fn).ok and not fn.build_record.fallbacks


F16_AVERAGES = [
    ((70000,), "mean(x)", lambda x: np.mean(x, dtype=np.float32)),
    ((300, 300), "var(x, axis=(0, 1))", lambda x: np.var(x, dtype=np.float32)),
    ((70000,), "std(x)", lambda x: np.std(x, dtype=np.float32)),
    ((1, 1, 300, 300), "global_avg_pool2d(x)",
     lambda x: np.mean(x, axis=(2, 3), keepdims=True, dtype=np.float32)),
    ((1, 1, 300, 300), "avg_pool2d(x, (300, 300))",
     lambda x: np.mean(x, axis=(2, 3), keepdims=True, dtype=np.float32)),
]


@pytest.mark.parametrize("shape, body, want", F16_AVERAGES, ids=[b for _, b, _ in F16_AVERAGES])
def test_a_float16_average_of_more_values_than_float16_holds_matches_numpy(shape, body, want):
    """TVM divides a float16 average by its count as a float16 constant and refused past
    65,504 with its C++ check (kMaxFloat16); mlclab accumulates float16 averages in float32
    (ops/lowering.py), as numpy and PyTorch do, so they are right at any size."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(np.float16)
    fn = compiled(f"x: Tensor[{shape}, f16]", body)
    np.testing.assert_allclose(fn(x).astype(np.float32), want(x), rtol=2e-3)


def test_the_suggested_float32_average_matches_numpy():
    fn = compiled("x: Tensor[(70000,), f16]", "astype(mean(astype(x, f32)), f16)")
    x = np.random.default_rng(0).uniform(0.5, 1.5, 70000).astype(np.float16)
    assert fn(x) == np.mean(x, dtype=np.float32).astype(np.float16)


def test_a_float16_average_over_a_symbolic_count_past_its_range_matches_numpy():
    fn = compiled('x: Tensor[("n",), f16]', "mean(x)")
    assert fn(np.ones(70000, np.float16)) == 1.0   # (a float16 count would be inf: 0)
    assert fn(np.ones(1000, np.float16)) == 1.0
