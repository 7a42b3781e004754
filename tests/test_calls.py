"""Compiling and calling: the seed program, the decorator, argument checks, composition,
if/else, the cache, and results that never change behind the caller's back."""
import numpy as np
import pytest

import mlclab
from mlclab import Tensor, f32, i32

SEED = """
def foo(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32], c: Tensor[(2, 4), f32]):
    d = a @ b
    e = d + c
    return e
"""

rng = np.random.default_rng(1)


def args():
    return (rng.standard_normal((2, 3)).astype("f4"), rng.standard_normal((3, 4)).astype("f4"),
            rng.standard_normal((2, 4)).astype("f4"))


def test_seed_program():
    prog = mlclab.compile(SEED)
    assert list(prog) == ["foo"] and len(prog) == 1
    a, b, c = args()
    out = prog["foo"](a, b, c)
    np.testing.assert_allclose(out, a @ b + c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(prog["foo"].reference(a, b, c), a @ b + c, rtol=1e-6)
    assert out.dtype == np.float32 and out.shape == (2, 4)
    assert "R.matmul(a, b" in prog.mod.script() and prog["foo"].mod is prog.mod
    assert prog["foo"].source == SEED
    assert repr(prog["foo"]) == ("<mlclab function foo(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), "
                                 "f32], c: Tensor[(2, 4), f32]) -> Tensor[(2, 4), f32]>")


@mlclab.function
def decorated(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32], c: Tensor[(2, 4), f32]):
    """Seed program as a decorated function."""
    d = a @ b
    e = d + c
    return e


@mlclab.function(target="llvm")
def decorated_tuple(x: Tensor[("n", 3), f32]):
    return relu(x), sum(x, axis=1)


def test_decorator_forms():
    a, b, c = args()
    np.testing.assert_allclose(decorated(a, b, c), a @ b + c, rtol=1e-5, atol=1e-6)
    assert decorated.__doc__ == "Seed program as a decorated function."
    assert decorated.__name__ == "decorated"
    assert decorated.bindings and decorated.program.filename == __file__
    x = rng.standard_normal((5, 3)).astype("f4")
    r, s = decorated_tuple(x)
    np.testing.assert_allclose(r, np.maximum(x, 0))
    np.testing.assert_allclose(s, x.sum(axis=1), rtol=1e-5)


def test_decorator_needs_source():
    namespace = {}
    exec("def g(x):\n    return x", namespace)
    with pytest.raises(TypeError, match="cannot read the source"):
        mlclab.function(namespace["g"])
    with pytest.raises(TypeError, match="decorates a def"):
        mlclab.function(3)


def test_argument_count():
    with pytest.raises(TypeError, match=r"foo\(\) takes 3 arguments \(a, b, c\) but 2 were given"):
        mlclab.compile(SEED)["foo"](*args()[:2])


def test_argument_shape_names_the_parameter():
    a, b, c = args()
    with pytest.raises(ValueError, match=r"argument b must have shape \(3, 4\), got \(4, 3\)"):
        mlclab.compile(SEED)["foo"](a, b.T.copy(), c)
    with pytest.raises(ValueError, match=r"argument a must have shape \(2, 3\) \(rank 2\)"):
        mlclab.compile(SEED)["foo"](a.ravel(), b, c)


def test_symbolic_size_bound_twice():
    f = mlclab.compile('def f(a: Tensor[("n", 2), f32], b: Tensor[("n", 2), f32]):\n'
                       '    return a + b')["f"]
    with pytest.raises(ValueError, match=r"symbolic size 'n' is 3 from argument a but 4 in argument b"):
        f(np.zeros((3, 2), "f4"), np.zeros((4, 2), "f4"))


def test_wrong_dtype_says_how_to_fix():
    a, b, c = args()
    with pytest.raises(TypeError, match=r'argument c must be a float32 array \(f32\), got float64; '
                                        r'convert it with c.astype\("float32"\)'):
        mlclab.compile(SEED)["foo"](a, b, c.astype("float64"))


def test_lists_and_scalars_are_converted():
    f = mlclab.compile("def f(a: Tensor[(3,), f32], s: Tensor[(), f32]):\n    return a * s")["f"]
    np.testing.assert_allclose(f([1, 2, 3], 2), [2, 4, 6])
    g = mlclab.compile("def g(a: Tensor[(2,), i32]):\n    return a + 1")["g"]
    np.testing.assert_array_equal(g([1, 2]), [2, 3])
    with pytest.raises(TypeError, match="holds floats but the parameter is int32"):
        g([1.5, 2])
    with pytest.raises(TypeError, match="must hold numbers"):
        g(["x", "y"])
    with pytest.raises(TypeError, match="must be a numpy array"):
        g(None)
    with pytest.raises(ValueError, match="outside int32's range"):
        g([2 ** 40, 1])


def test_strided_and_misaligned_inputs_give_correct_results():
    f = mlclab.compile("def f(a: Tensor[(4, 4), f32], b: Tensor[(4,), f32]):\n"
                       "    return a * 2.0 + b")["f"]
    big = rng.standard_normal((8, 8)).astype("f4")
    strided = big[::2, ::2]
    raw = np.zeros(4 * 5 + 1, "f4")
    misaligned = raw[1:5]
    misaligned[:] = [1, 2, 3, 4]
    assert not strided.flags.c_contiguous and misaligned.ctypes.data % 64 != 0
    np.testing.assert_allclose(f(strided, misaligned), strided * 2 + misaligned)


def test_returned_arrays_are_never_overwritten_by_later_calls():
    f = mlclab.compile("def f(a: Tensor[(3,), f32]):\n    return a + 1.0")["f"]
    ident = mlclab.compile("def ident(a: Tensor[(3,), f32]):\n    return a")["ident"]
    first = f(np.array([1, 2, 3], "f4"))
    f(np.array([7, 7, 7], "f4"))
    np.testing.assert_array_equal(first, [2, 3, 4])
    x = np.array([1, 2, 3], "f4")
    out = ident(x)
    ident(np.array([9, 9, 9], "f4"))
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_composition_calls_between_functions():
    src = """
def dense(x: Tensor[("n", "k"), f32], w: Tensor[("m", "k"), f32], b: Tensor[("m",), f32]):
    return relu(linear(x, w, b))

def mlp(x: Tensor[("n", 8), f32], w1: Tensor[(16, 8), f32], b1: Tensor[(16,), f32],
        w2: Tensor[(4, 16), f32], b2: Tensor[(4,), f32]):
    h = dense(x, w1, b1)
    return softmax(linear(h, w2, b2))
"""
    prog = mlclab.compile(src)
    assert list(prog) == ["dense", "mlp"]
    ws = [rng.standard_normal(s).astype("f4") for s in [(3, 8), (16, 8), (16,), (4, 16), (4,)]]
    out = prog["mlp"](*ws)
    h = np.maximum(ws[0] @ ws[1].T + ws[2], 0)
    z = h @ ws[3].T + ws[4]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert "cls.dense" in prog.mod.script()


def test_if_else_on_a_bool_scalar():
    src = """
def f(x: Tensor[(4,), f32]):
    if sum(x) > 0.0:
        y = relu(x * 2.0)
    else:
        y = -x
    return y

def g(x: Tensor[(4,), f32]):
    if max(x) > 10.0:
        return x
    return x + 1.0
"""
    prog = mlclab.compile(src)
    np.testing.assert_allclose(prog["f"]([1, -2, 3, 4]), [2, 0, 6, 8])
    np.testing.assert_allclose(prog["f"]([-1, -2, -3, 4]), [1, 2, 3, -4])
    np.testing.assert_allclose(prog["g"]([1, 2, 3, 40]), [1, 2, 3, 40])
    np.testing.assert_allclose(prog["g"]([1, 2, 3, 4]), [2, 3, 4, 5])
    np.testing.assert_allclose(prog["g"].reference([1, 2, 3, 4]), [2, 3, 4, 5])


def test_cache_hits_for_unchanged_source_and_force_rebuilds():
    mlclab.clear_cache()
    src = SEED.replace("foo", "cached_foo")
    p1 = mlclab.compile(src)
    p2 = mlclab.compile(src + "\n\n   ")
    assert p1 is p2
    p3 = mlclab.compile(src, force=True)
    assert p3 is not p1
    info = mlclab.cache_info()
    assert info["hits"] == 1


def test_trace_and_reference_trace_agree_per_binding():
    f = mlclab.compile(SEED)["foo"]
    a, b, c = args()
    t, r = f.trace(a, b, c), f.reference_trace(a, b, c)
    assert list(t) == list(r) == ["d", "e"]
    for k in t:
        np.testing.assert_allclose(t[k], r[k], rtol=1e-5, atol=1e-6)


def test_bindings_carry_names_and_spans():
    f = mlclab.compile(SEED)["foo"]
    infos = {i.name: i for i in f.bindings.values()}
    assert infos["d"].span.lineno == 3 and infos["d"].source_line.strip() == "d = a @ b"
    assert infos["a"].kind == "param" and infos["e"].dsl_name == "e"
    var = next(v for v, i in f.bindings.items() if i.name == "d")
    assert var.span.line == 3


def test_bad_target_names_the_parameter():
    with pytest.raises(ValueError, match="target"):
        mlclab.compile(SEED.replace("foo", "t_foo"), target="no-such-target")


def test_compile_rejects_non_text():
    with pytest.raises(TypeError, match="source must be a str"):
        mlclab.compile(b"def f(): pass")


def test_dtypes_and_tensor_annotations_are_importable_python():
    spec = Tensor[(2, "n"), f32]
    assert spec.shape == (2, "n") and spec.dtype == "float32"
    assert repr(Tensor[(3,), i32]) == "Tensor[(3,), i32]"
    assert Tensor[(1,), bool].dtype == "bool"
    with pytest.raises(TypeError):
        Tensor()


def test_calls_from_several_threads_take_turns_safely():
    from concurrent.futures import ThreadPoolExecutor

    f = mlclab.compile("def f(a: Tensor[(64, 64), f32]):\n    return relu(a @ a)")["f"]
    xs = [rng.standard_normal((64, 64)).astype("f4") for _ in range(16)]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(f, xs))
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, np.maximum(x @ x, 0), rtol=1e-4, atol=1e-4)
