"""x[...] with static bounds: numpy's basic indexing, compiled by TVM (strided_slice, then
squeeze for int indices) and checked against numpy itself and the reference."""
import numpy as np
import pytest

import mlclab
from mlclab import DSLError, ops

rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, size=(4, 6, 5)).astype("float32")

INDICES = ["0", "-1", "1, 2", "1, 2, 3", "-1, -2, -3", ":, 0:6", ":, -1", "..., ::2", "..., 0",
           "::-1", "1:3, ::-2, 4:0:-3", ":, 4:1:-1", "3:1", ":, 10:", "-100:100", "::3, ..., 1:",
           ":, :, ::-5", "2:, ..., -1", ":, 5:5, :", "...", "1:-1, 1:-1, 1:-1", ":, ::-1, -2"]


def compiled(src):
    prog = mlclab.compile(src)
    return prog[list(prog)[-1]]


@pytest.mark.parametrize("index", INDICES)
def test_static_slices_match_numpy(index):
    f = compiled(f"def f(x: Tensor[(4, 6, 5), f32]):\n    return x[{index}] * 1.0")
    want = eval(f"X[{index}]")    # the test's own numpy expression, not DSL source
    got, ref = f(X), f.reference(X)
    assert got.shape == want.shape == ref.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref, want)


def test_symbolic_sizes_are_written_from_the_bounds():
    src = ('def f(t: Tensor[("n", 5), f32]):\n'
           '    return t[1:], t[:-2, 0], t[-1], t[::2, 1:4], t[2:-1], t[-3:], t[1:3]')
    f = compiled(src)
    for n in (7, 4, 8):
        t = rng.uniform(-1, 1, size=(n, 5)).astype("float32")
        want = (t[1:], t[:-2, 0], t[-1], t[::2, 1:4], t[2:-1], t[-3:], t[1:3])
        for got, ref, w in zip(f(t), f.reference(t), want):
            np.testing.assert_array_equal(got, w)
            np.testing.assert_array_equal(ref, w)
    # the result sizes assume n covers the bounds; a smaller n is refused before TVM runs
    with pytest.raises(ValueError, match="needs n >= 4"):
        f(np.zeros((3, 5), "float32"))


def test_the_typed_result_names_the_symbolic_size():
    from mlclab.frontend.parser import parse_program

    fn = parse_program('def f(t: Tensor[("n", 5), f32]):\n    return t[1:], t[::2], t[-3:]')
    types = [str(t) for t in fn.functions["f"].ret_type.fields]
    assert types == ["Tensor[(n - 1, 5), f32]", "Tensor[((n + 1)//2, 5), f32]",
                     "Tensor[(3, 5), f32]"]


def test_int_dtypes_and_empty_results():
    a = np.arange(24, dtype="int32").reshape(4, 6)
    f = compiled("def f(a: Tensor[(4, 6), i32]):\n    return a[2:2], a[:, 6:], a[::-1, 0]")
    for got, w in zip(f(a), (a[2:2], a[:, 6:], a[::-1, 0])):
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_array_equal(got, w)


def test_bool_masks_and_zero_size_inputs():
    f = compiled("def f(m: Tensor[(3, 4), bool], x: Tensor[(0, 4), f32]):\n"
                 "    return m[1:, ::-1], m[0, 2], x[:, 1:3], x[..., -1]")
    m = rng.integers(0, 2, (3, 4)).astype(bool)
    x = np.zeros((0, 4), "float32")
    for got, want in zip(f(m, x), (m[1:, ::-1], m[0, 2], x[:, 1:3], x[..., -1])):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    with pytest.raises(DSLError, match="of size 0 \\(it is empty\\)"):
        mlclab.compile("def f(x: Tensor[(0, 4), f32]):\n    return x[0]")


def test_slices_feed_other_operators_and_tuples_still_index():
    """Splitting fused gates, as an LSTM step does; t[0] on a tuple is still its item."""
    src = ("def f(x: Tensor[(2, 6), f32], w: Tensor[(6, 8), f32]):\n"
           "    gates = x @ w\n"
           "    pair = (gates[:, 0:4], gates[:, 4:])\n"
           "    return sigmoid(pair[0]) * tanh(pair[-1])")
    x = rng.uniform(-1, 1, (2, 6)).astype("float32")
    w = rng.uniform(-1, 1, (6, 8)).astype("float32")
    gates = x @ w
    want = 1 / (1 + np.exp(-gates[:, 0:4])) * np.tanh(gates[:, 4:])
    np.testing.assert_allclose(compiled(src)(x, w), want, rtol=1e-5, atol=1e-6)


def test_direct_call_of_the_entry():
    f = compiled("def f(x: Tensor[(3, 5), f32]):\n"
                 "    return strided_slice(x, (1, None), (None, 0), (1, -2))")
    x = X[0, :3]
    np.testing.assert_array_equal(f(x), x[1:, :0:-2])


def test_views_show_slices():
    f = compiled('def f(x: Tensor[(4, 6), f32], t: Tensor[("n", 5), f32]):\n'
                 '    a = x[:, 0:6:2]\n    b = t[1:, -1]\n    return a, b')
    relay = f.text("relay")
    assert "strided_slice(%x, (1,), (0,), (6,), (2,)" in relay
    assert "strided_slice(%t, (0, 1), (1, 4), (%n, 5), (1, 1), assume_inbound=True)" in relay
    assert "squeeze(" in relay and "Sub" not in relay
    assert "R.strided_slice(x" in f.text("relax")
    assert "let %a = strided_slice(" in f.text("let")
    graph = f.graph()
    # the bounds are shown inline, not as one leaf node per int
    assert "Call strided_slice %a" in graph.text and "Const 0 : Prim" not in graph.text
    svg = graph.svg() if callable(graph.svg) else graph.svg
    assert "strided_slice" in svg


@pytest.mark.parametrize("body,phrase,span", [
    ("x[4]", "index 4 is out of range for axis 0 of size 4 (valid: -4 .. 3)", "4"),
    ("x[:, :, :, 0]", "too many indices", ":, :, :, 0"),
    ("x[..., ...]", "only one ellipsis", "..."),
    ("x[::0]", "step cannot be zero", "0"),
    ("x[0.5]", "must be an int literal", "0.5"),
    ("x[(0, 1),]", "list or tuple of indices", "(0, 1)"),
])
def test_static_index_errors_are_located(body, phrase, span):
    with pytest.raises(DSLError) as info:
        mlclab.compile(f"def f(x: Tensor[(4, 6, 5), f32]):\n    return {body}")
    e = info.value
    assert phrase in str(e) and not e.internal
    assert e.lineno == 2
    line = str(e).splitlines()
    start = len(line[2]) - len(line[2].lstrip())
    assert line[1][start:start + line[2].count("^")] == span


@pytest.mark.parametrize("body,phrase", [
    ("t[::-1]", "negative step needs a static size"),
    ("t[-3:2]", "size depends on n"),
])
def test_symbolic_slices_that_cannot_be_sized(body, phrase):
    with pytest.raises(DSLError) as info:
        mlclab.compile(f'def f(t: Tensor[("n", 5), f32]):\n    return {body}')
    assert phrase in str(info.value) and info.value.lineno == 2


def test_the_entry_is_in_the_table():
    entry = ops.OPS["strided_slice"]
    assert entry.category == "shape" and "x[...]" in entry.doc
