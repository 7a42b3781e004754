"""A student's own function may take an operator's name, as a Python def may shadow a builtin.

The textbook exercise defines ``def gelu(x)``: inside that program every ``gelu(...)`` is the
student's function; the operator table is untouched, so other programs still get the operator.
"""
import math

import numpy as np
import pytest

import mlclab
from mlclab import DSLError

# The tanh approximation a textbook asks for; visibly different from the exact-erf operator.
OWN_GELU = """\
def gelu(x: Tensor[(2, 3), f32]):
    return 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

def block(x: Tensor[(2, 3), f32]):
    return gelu(x) + relu(x)
"""

X = np.array([[-3.0, -1.0, -0.5], [0.0, 0.5, 2.0]], dtype="float32")


def tanh_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def erf_gelu(x):
    return np.array([[0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in row] for row in x],
                    dtype="float32")


def test_own_gelu_compiles_and_every_call_in_the_program_means_it():
    prog = mlclab.compile(OWN_GELU)
    assert list(prog) == ["gelu", "block"]
    np.testing.assert_allclose(prog["gelu"](X), tanh_gelu(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(prog["block"](X), tanh_gelu(X) + np.maximum(X, 0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(prog["block"].reference(X), prog["block"](X), rtol=1e-5,
                               atol=1e-6)
    # the two formulas differ by more than the tolerance: the test can tell them apart
    assert np.abs(tanh_gelu(X) - erf_gelu(X)).max() > 1e-4


def test_the_operator_stays_reachable_in_programs_that_do_not_shadow_it():
    mlclab.compile(OWN_GELU)
    other = mlclab.compile("def f(x: Tensor[(2, 3), f32]):\n    return gelu(x)\n")["f"]
    np.testing.assert_allclose(other(X), erf_gelu(X), rtol=1e-5, atol=1e-6)


def test_a_def_named_like_an_operator_with_a_symbol_leaves_the_symbol_alone():
    src = ("def add(a: Tensor[(3,), f32], b: Tensor[(3,), f32]):\n    return a - b\n\n"
           "def f(a: Tensor[(3,), f32], b: Tensor[(3,), f32]):\n    return (a + b) * add(a, b)\n")
    f = mlclab.compile(src)["f"]
    a, b = np.float32([1, 2, 3]), np.float32([3, 2, 1])
    np.testing.assert_allclose(f(a, b), (a + b) * (a - b))


def test_a_shadowing_def_and_the_operators_kernel_do_not_collide():
    """``+`` lowers to a TVM kernel named ``add``; a Relax function ``add`` beside it still
    builds (optimized and plain), runs, and prints in every text style."""
    src = ("def add(a: Tensor[(4,), f32], b: Tensor[(4,), f32]):\n    return a + b * 2.0\n\n"
           "def f(x: Tensor[(4,), f32]):\n    return add(x, x) + exp(x)\n")
    prog = mlclab.compile(src)
    x = np.float32([-1, 0, 1, 2])
    np.testing.assert_allclose(prog["f"](x), 3 * x + np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(prog["add"](x, x), 3 * x, rtol=1e-6)
    for style in ("relax", "relay", "let", "tir"):
        assert "add" in str(prog["f"].text(style))


def refused(src: str) -> DSLError:
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    return info.value


def test_calling_the_name_inside_its_own_def_is_recursion_and_says_the_operator_is_hidden():
    err = refused("def gelu(x: Tensor[(2, 3), f32]):\n    return gelu(x) * 1.0\n")
    assert err.lineno == 2
    assert "recursion is not supported: gelu -> gelu" in str(err)
    assert "def gelu hides the operator gelu" in str(err)


def test_a_tensor_named_like_an_operator_is_not_callable():
    err = refused("def f(x: Tensor[(3,), f32]):\n    exp = x * 2.0\n    return exp(x)\n")
    assert err.lineno == 3
    assert "'exp' is a tensor here, not a function" in str(err)
    assert "rename the tensor to call the operator exp" in str(err)
