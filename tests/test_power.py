"""``power`` by a constant 2 or 3 (GPT-2's GELU cubes every activation) compiles to vector
multiplications instead of a ``powf`` call per element, with the same correctly rounded
values (issue 32)."""
import numpy as np
import pytest

import mlclab

N = 4099      # not a multiple of any vector width


def _inputs():
    rng = np.random.default_rng(0)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e13, -1e13, 1e-30, -1e-30, 3.4e38]
    return np.concatenate([rng.standard_normal(N - len(special)) * 1e3, special]).astype("f4")


@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_a_small_constant_power_is_correctly_rounded_and_has_no_pow_call(exponent):
    fn = mlclab.compile(f"def f(x: Tensor[({N},), f32]):\n    return power(x, {exponent})\n")["f"]
    x = _inputs()
    with np.errstate(over="ignore"):
        want = (x.astype("f8") ** exponent).astype("f4")      # correctly rounded, inf on overflow
    np.testing.assert_array_equal(fn(x), want)
    assert "pow" not in fn.text("tir").replace("power", "")


def test_other_exponents_keep_tvms_power():
    fn = mlclab.compile(f"def f(x: Tensor[({N},), f32]):\n    return power(x, 2.5)\n")["f"]
    x = np.abs(_inputs())
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_allclose(fn(x), np.power(x, np.float32(2.5)), rtol=1e-6)
