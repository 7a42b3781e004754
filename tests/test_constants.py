"""Constants a student writes (``-inf`` for an attention mask); literals fold as Python does."""
import numpy as np
import pytest

import mlclab
from mlclab import DSLError

F = "def f(x: Tensor[(2, 3), f32]):\n"
X = np.float32([[1, 2, 3], [4, 5, 6]])


def compiled(body, sig="x: Tensor[(2, 3), f32]"):
    return mlclab.compile(f"import math\nimport numpy as np\ndef f({sig}):\n{body}")["f"]


@pytest.mark.parametrize("spelled,value", [
    ("inf", np.inf), ("-inf", -np.inf), ("nan", np.nan), ("math.inf", np.inf),
    ("-math.inf", -np.inf), ("math.nan", np.nan), ("np.inf", np.inf), ("-np.inf", -np.inf),
    ("float('inf')", np.inf), ("float('-inf')", -np.inf), ("float('nan')", np.nan),
    ("float('-Infinity')", -np.inf), ("math.pi", np.pi), ("np.e", np.e), ("(inf - inf)", np.nan),
])
def test_each_spelling_is_the_constant(spelled, value):
    fn = compiled(f"    return x + {spelled}\n")
    expect = X + np.float32(value)
    np.testing.assert_array_equal(fn(X), expect)
    np.testing.assert_array_equal(fn.reference(X), expect)


def test_an_attention_mask_with_minus_inf_gives_masked_positions_zero_weight():
    fn = compiled("    return softmax(where(mask, s, -inf), axis=-1)\n",
                  sig="s: Tensor[(2, 3), f32], mask: Tensor[(2, 3), bool]")
    mask = np.array([[True, True, False], [True, False, False]])
    s = np.float32([[0.5, 1.0, 9.0], [2.0, 7.0, 8.0]])
    out = fn(s, mask)
    np.testing.assert_allclose(out[1], [1.0, 0.0, 0.0])
    e = np.exp(s[0, :2] - s[0, :2].max())
    np.testing.assert_allclose(out[0], list(e / e.sum()) + [0.0], rtol=1e-6)


@pytest.mark.parametrize("body,value", [
    ("    return full((2, 3), -inf) + x\n", -np.inf),
    ("    return full_like(x, nan)\n", np.nan),
    ("    return maximum(x, full_like(x, math.inf))\n", np.inf),
])
def test_creation_operators_fill_with_infinities_and_nan(body, value):
    fn = compiled(body)
    np.testing.assert_array_equal(fn(X), np.full((2, 3), value, "float32"))
    np.testing.assert_array_equal(fn.reference(X), fn(X))


def test_pad_with_minus_inf():
    out = compiled("    return pad(x, 1, constant_values=-inf)\n")(X)
    assert out.shape == (4, 5) and np.isneginf(out[0]).all() and (out[1:3, 1:4] == X).all()


def test_a_tensor_named_inf_hides_the_constant():
    np.testing.assert_array_equal(compiled("    inf = x * 2.0\n    return inf + 1.0\n")(X),
                                  X * 2 + 1)


@pytest.mark.parametrize("body,phrase,col", [
    ("    return astype(x, i32) + inf\n", "the float inf meets the i32 tensor", 28),
    ("    return x + float('abc')\n", "float() cannot read 'abc' as a number", 21),
    ("    return x + float(x)\n", "float(...) makes a constant from a string", 15),
    ("    return x * math.tau\n", "math.tau is not a constant tinynn knows", 15),
    ("    return full((2, 2), 1e40)\n", "1e+40 is out of range for f32", 24),
    ("    return x * 1e40\n", "1e+40 is out of range for f32", 15),
])
def test_constants_that_do_not_fit_are_located_errors(body, phrase, col):
    with pytest.raises(DSLError) as info:
        compiled(body)
    assert phrase in str(info.value)
    assert (info.value.lineno, info.value.col_offset) == (4, col)


def test_a_loop_count_beyond_any_machine_size_is_the_unroll_limit():
    with pytest.raises(DSLError, match="unroll to more than"):
        compiled("    for t in range(10 ** 30):\n        x = x + 1.0\n    return x\n")
