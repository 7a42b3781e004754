"""Every operator of the table, compiled by TVM, against its numpy reference and numpy itself."""
import numpy as np
import pytest

import mlclab
from mlclab import ops

rng = np.random.default_rng(0)


def rand(shape, dtype="float32", low=-2.0, high=2.0):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(-9, 10, size=shape).astype(dtype)


def run(src, *args, rtol=1e-5, atol=1e-5, expect=None):
    prog = mlclab.compile(src)
    f = prog[list(prog)[-1]]
    got = f(*args)
    ref = f.reference(*args)
    for g, r in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
        assert g.dtype == r.dtype
        assert g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)
    if expect is not None:
        np.testing.assert_allclose(got, expect, rtol=rtol, atol=atol)
    return got


UNARY = {
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh, "exp": np.exp, "abs": np.abs, "negative": np.negative,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x = rand((3, 5))
    run(f"def f(x: Tensor[(3, 5), f32]):\n    return {name}(x)", x, expect=UNARY[name](x))


@pytest.mark.parametrize("name,fn", [("log", np.log), ("sqrt", np.sqrt)])
def test_unary_positive(name, fn):
    x = rand((4,), low=0.1, high=3.0)
    run(f"def f(x: Tensor[(4,), f32]):\n    return {name}(x)", x, expect=fn(x))


BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
          "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
          "==": np.equal, "!=": np.not_equal}


@pytest.mark.parametrize("sym", sorted(BINARY))
@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)),
                                   ((2, 1, 3), (4, 1))])
def test_binary_broadcasting(sym, sa, sb):
    a, b = rand(sa), rand(sb, low=0.5, high=2.0)
    src = (f"def f(a: Tensor[{sa}, f32], b: Tensor[{sb}, f32]):\n"
           f"    return a {sym} b")
    run(src, a, b, expect=BINARY[sym](a, b))


def test_power_and_scalars():
    x = rand((3, 3), low=0.5, high=2.0)
    run("def f(x: Tensor[(3, 3), f32]):\n    return x ** 2.0 * 3 + 1.5 - x / 2",
        x, expect=x ** 2 * 3 + 1.5 - x / 2)
    run("def f(x: Tensor[(3, 3), f32]):\n    return 2.0 - x", x, expect=2.0 - x)
    run("def f(x: Tensor[(3, 3), f32]):\n    return -x + (2 * 3)", x, expect=-x + 6)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_integer_floor_divide_and_mod_match_numpy_including_zero(dtype):
    a = np.array([7, -7, 7, -7, 5, 0, 3], dtype=dtype)
    b = np.array([2, 2, -2, -2, 0, 0, -1], dtype=dtype)
    src = (f"def f(a: Tensor[(7,), \"{dtype}\"], b: Tensor[(7,), \"{dtype}\"]):\n"
           f"    return a // b, a % b")
    with np.errstate(all="ignore"):
        run(src, a, b, expect=(a // b, a % b))


def test_integer_min_divided_by_minus_one_wraps_like_numpy():
    a = np.array([np.iinfo(np.int32).min, 9], dtype="int32")
    b = np.array([-1, -1], dtype="int32")
    src = "def f(a: Tensor[(2,), i32], b: Tensor[(2,), i32]):\n    return a // b, a % b"
    with np.errstate(all="ignore"):
        run(src, a, b, expect=(a // b, a % b))


def test_unsigned_division_by_zero():
    a = np.array([7, 200, 3], dtype="uint8")
    b = np.array([2, 0, 0], dtype="uint8")
    with np.errstate(all="ignore"):
        run("def f(a: Tensor[(3,), u8], b: Tensor[(3,), u8]):\n    return a // b, a % b",
            a, b, expect=(a // b, a % b))


def test_maximum_minimum_where_astype():
    a, b = rand((3, 4)), rand((4,))
    run("def f(a: Tensor[(3, 4), f32], b: Tensor[(4,), f32]):\n"
        "    return maximum(a, b), minimum(a, 0.0), where(a > b, a, b), astype(a, i32)",
        a, b, expect=None)
    got = mlclab.compile("def f(a: Tensor[(3, 4), f32]):\n    return astype(a, f64)")["f"](a)
    assert got.dtype == np.float64


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)),
                                   ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 2)),
                                   ((1, 2, 3), (4, 3, 2))])
def test_matmul_numpy_semantics(sa, sb):
    a, b = rand(sa), rand(sb)
    run(f"def f(a: Tensor[{sa}, f32], b: Tensor[{sb}, f32]):\n    return a @ b", a, b,
        expect=a @ b)


def test_matmul_integers():
    a, b = rand((3, 4), "int32"), rand((4, 2), "int32")
    run("def f(a: Tensor[(3, 4), i32], b: Tensor[(4, 2), i32]):\n    return matmul(a, b)", a, b,
        expect=a @ b)


def test_linear_like_pytorch():
    x, w, b = rand((5, 8)), rand((3, 8)), rand((3,))
    run("def f(x: Tensor[(5, 8), f32], w: Tensor[(3, 8), f32], b: Tensor[(3,), f32]):\n"
        "    return linear(x, w, b), linear(x, w), linear(x, w, bias=b)", x, w, b)
    got = mlclab.compile("def f(x: Tensor[(5, 8), f32], w: Tensor[(3, 8), f32], b: Tensor[(3,), f32]):\n"
                         "    return linear(x, w, b)")["f"](x, w, b)
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", ["", ", strides=2", ", padding=1", ", padding=(1, 2), strides=(2, 1)",
                                ", dilation=2", ", groups=2", ", padding=(0, 1, 2, 1)"])
def test_conv2d(kw):
    x = rand((2, 4, 9, 8))
    groups = 2 if "groups" in kw else 1
    w = rand((6, 4 // groups, 3, 3))
    b = rand((6,))
    run(f"def f(x: Tensor[(2, 4, 9, 8), f32], w: Tensor[(6, {4 // groups}, 3, 3), f32], "
        f"b: Tensor[(6,), f32]):\n    return conv2d(x, w, b{kw}), conv2d(x, w{kw})",
        x, w, b, rtol=1e-4, atol=1e-4)


def test_conv2d_against_direct_loops():
    x, w = rand((1, 2, 5, 5)), rand((3, 2, 3, 3))
    expect = np.zeros((1, 3, 3, 3), "float32")
    for o in range(3):
        for i in range(3):
            for j in range(3):
                expect[0, o, i, j] = np.sum(x[0, :, i:i + 3, j:j + 3] * w[o])
    run("def f(x: Tensor[(1, 2, 5, 5), f32], w: Tensor[(3, 2, 3, 3), f32]):\n    return conv2d(x, w)",
        x, w, expect=expect, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("call", ["max_pool2d(x, 2)", "max_pool2d(x, (3, 2), strides=(1, 2))",
                                  "max_pool2d(x, 3, strides=2, padding=1)", "avg_pool2d(x, 2)",
                                  "avg_pool2d(x, 3, strides=1, padding=1)", "global_avg_pool2d(x)"])
def test_pools(call):
    x = rand((2, 3, 8, 7))
    run(f"def f(x: Tensor[(2, 3, 8, 7), f32]):\n    return {call}", x)


def test_max_pool_matches_a_direct_computation():
    x = rand((1, 1, 4, 4))
    expect = x.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5))
    run("def f(x: Tensor[(1, 1, 4, 4), f32]):\n    return max_pool2d(x, 2)", x, expect=expect)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_family(name, axis):
    x = rand((3, 5, 2))
    got = run(f"def f(x: Tensor[(3, 5, 2), f32]):\n    return {name}(x, axis={axis})", x)
    if name == "softmax":
        np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-5)


def test_batch_norm_and_layer_norm():
    x = rand((2, 3, 4, 4))
    g, b, m, v = rand((3,)), rand((3,)), rand((3,)), rand((3,), low=0.5, high=2)
    run("def f(x: Tensor[(2, 3, 4, 4), f32], g: Tensor[(3,), f32], b: Tensor[(3,), f32], "
        "m: Tensor[(3,), f32], v: Tensor[(3,), f32]):\n    return batch_norm(x, g, b, m, v)",
        x, g, b, m, v, rtol=1e-4, atol=1e-4,
        expect=(x - m.reshape(1, 3, 1, 1)) / np.sqrt(v.reshape(1, 3, 1, 1) + 1e-5)
        * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1))
    y, g2, b2 = rand((4, 6)), rand((6,)), rand((6,))
    run("def f(y: Tensor[(4, 6), f32], g: Tensor[(6,), f32], b: Tensor[(6,), f32]):\n"
        "    return layer_norm(y, g, b), layer_norm(y, g, b, epsilon=0.001)", y, g2, b2,
        rtol=1e-4, atol=1e-4)


def test_shape_operators():
    x = rand((2, 3, 4))
    got = run("def f(x: Tensor[(2, 3, 4), f32]):\n"
              "    return reshape(x, (4, -1)), flatten(x), transpose(x), transpose(x, (1, 0, 2)), "
              "expand_dims(x, 1), squeeze(expand_dims(x, 0)), concat((x, x), axis=2)", x)
    assert [g.shape for g in got] == [(4, 6), (2, 12), (4, 3, 2), (3, 2, 4), (2, 1, 3, 4),
                                      (2, 3, 4), (2, 3, 8)]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("kw", ["", ", axis=1", ", axis=(0, 2), keepdims=True", ", axis=-1"])
def test_reductions(name, kw):
    x = rand((2, 3, 4))
    got = run(f"def f(x: Tensor[(2, 3, 4), f32]):\n    return {name}(x{kw})", x)
    expect = getattr(np, name)(x, **eval(f"dict({kw[2:]})"))
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


def test_integer_sum_keeps_dtype():
    x = rand((3, 4), "int32")
    got = run("def f(x: Tensor[(3, 4), i32]):\n    return sum(x, axis=0)", x)
    assert got.dtype == np.int32


def test_symbolic_sizes():
    src = ("def mlp(x: Tensor[(\"n\", 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
           "    h = relu(linear(x, w, b))\n"
           "    return softmax(h), flatten(reshape(h, (\"n\", 2, 2)))")
    f = mlclab.compile(src)["mlp"]
    w, b = rand((4, 8)), rand((4,))
    for n in (1, 3, 7):
        x = rand((n, 8))
        got = f(x, w, b)
        ref = f.reference(x, w, b)
        assert got[0].shape == (n, 4) and got[1].shape == (n, 4)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-6)


def test_every_operator_has_a_test_here():
    """A new table entry must come with a test in this file."""
    import pathlib

    text = pathlib.Path(__file__).read_text()
    named = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
             "floor_divide": "//", "mod": "%", "matmul": "@", "equal": "==", "not_equal": "!=",
             "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}
    missing = [n for n in ops.OPS if n not in text and named.get(n, "@@") not in text]
    assert not missing


def test_docs_operator_reference_is_generated_from_the_table():
    import pathlib

    doc = pathlib.Path(__file__).parents[1] / "docs" / "operators.md"
    assert doc.read_text() == ops.reference_markdown(), "run: python -m mlclab.ops > docs/operators.md"


def test_linear_of_a_tensor_with_itself_builds():
    """Found by the fuzzer: TVM's FuseTransposeMatmul fails on x @ x.T; the build falls back
    to TVM's plain CPU pipeline, and fn.pipeline() shows the passes that really ran."""
    x = rand((2, 3))
    f = mlclab.compile("def f(x: Tensor[(2, 3), f32]):\n    return linear(x, x)")["f"]
    np.testing.assert_allclose(f(x), x @ x.T, rtol=1e-5, atol=1e-6)
    assert not f.program.optimized
    assert "FuseTransposeMatmul" not in [s.name for s in f.pipeline().steps]
