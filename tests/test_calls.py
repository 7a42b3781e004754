"""Compiling and calling: the seed program, the decorator, argument checks, composition,
if/else, the cache, and results that never change behind the caller's back."""
import importlib
import threading

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



def run_on_threads(worker, count: int) -> None:
    """``worker(k)`` for k in 0..count-1, each on its own thread, all at once."""
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

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


# The DSL reads "n" as a symbolic size and relu as its own op: names Python never resolves.
@mlclab.function(target="llvm")
def decorated_tuple(x: Tensor[("n", 3), f32]):  # noqa: F821
    return relu(x), sum(x, axis=1)  # noqa: F821


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
    with pytest.raises(ValueError,
                       match=r"symbolic size 'n' is 3 from argument a but 4 in argument b"):
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


# ---------------------------------------------------------------------------------------
# the thin call: prepared by the first call, then used for numpy arrays of exactly the
# declared dtypes and fixed shapes; everything else still goes through bind()

THIN = """
def plus(a: Tensor[(2, 3), f32], b: Tensor[(2, 3), f32]):
    return a + b

def ident(x: Tensor[(4,), f32]):
    return x

def flat(x: Tensor[(2, 2), f32]):
    return reshape(x, (4,))

def const(x: Tensor[(4,), f32]):
    return ones((4,))

def pair(x: Tensor[(4,), f32]):
    y = x * 2.0
    return y, y

def pick(x: Tensor[(4,), f32]):
    if max(x) > 10.0:
        return x
    return x + 1.0

def chain(a: Tensor[(4, 4), f32], b: Tensor[(4, 4), f32]):
    h = relu(a @ b)
    return softmax(h, axis=1)

def wide(a: Tensor[(256, 512), f32], b: Tensor[(512, 512), f32]):
    h = a @ b
    return softmax(h, axis=1)
"""


@pytest.fixture()
def thin_prog():
    return mlclab.compile(THIN, force=True)


def _pair():
    return (rng.standard_normal((2, 3)).astype("f4"), rng.standard_normal((2, 3)).astype("f4"))


def _counting(monkeypatch, name):
    """Count the calls of ``mlclab.api.function.<name>`` (bind, check_sizes)."""
    function = importlib.import_module("mlclab.api.function")
    calls = []
    original = getattr(function, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(function, name, counted)
    return calls


def test_after_the_first_call_exact_arrays_skip_bind_and_the_size_walk(thin_prog, monkeypatch):
    f = thin_prog["plus"]
    binds, sizes = _counting(monkeypatch, "bind"), _counting(monkeypatch, "check_sizes")
    assert f._thin is None
    pairs = [_pair() for _ in range(5)]
    outs = [f(a, b) for a, b in pairs]
    assert f._thin is not None
    assert binds == ["bind"] and sizes == ["check_sizes"]  # the first call only
    for (a, b), out in zip(pairs, outs):
        np.testing.assert_array_equal(out, a + b)
        assert out.dtype == np.float32 and out.shape == (2, 3)


@pytest.mark.parametrize("unusual", [
    lambda a: a.tolist(),                                      # a list
    lambda a: np.asfortranarray(a),                            # not C-contiguous
    lambda a: np.lib.stride_tricks.as_strided(a, a.shape, a.strides, writeable=False),
    lambda a: a.view(np.matrix),                               # a subclass
    lambda a: np.frombuffer(b"\0" + a.tobytes(), "f4", offset=1).reshape(a.shape),  # misaligned
])
def test_anything_unusual_goes_through_bind_and_still_works(thin_prog, monkeypatch, unusual):
    f = thin_prog["plus"]
    a, b = _pair()
    f(a, b)
    binds = _counting(monkeypatch, "bind")
    odd = unusual(a)
    out = f(odd, b)
    assert binds == ["bind"]
    np.testing.assert_allclose(out, a + b, rtol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda f, a, b: f(a, b, b), TypeError,
     r"plus\(\) takes 2 arguments \(a, b\) but 3 were given"),
    (lambda f, a, b: f(a), TypeError, r"plus\(\) takes 2 arguments \(a, b\) but 1 was given"),
    (lambda f, a, b: f(a, b.astype("f8")), TypeError,
     r'argument b must be a float32 array \(f32\), got float64; convert it with b.astype'),
    (lambda f, a, b: f(a, b.astype(">f4")), TypeError,  # float32, the other byte order
     r"argument b must be a float32 array \(f32\), got >f4"),
    (lambda f, a, b: f(a, b.T.copy()), ValueError,
     r"argument b must have shape \(2, 3\), got \(3, 2\)"),
    (lambda f, a, b: f(a, b[None]), ValueError, r"argument b must have shape \(2, 3\) \(rank 2\)"),
    (lambda f, a, b: f(a, b=b), TypeError, r"plus\(\) takes its arguments by position \(a, b\)"),
    (lambda f, a, b: f(a, None), TypeError, "argument b must be a numpy array"),
])
def test_bad_arguments_give_the_same_errors_once_the_thin_call_exists(thin_prog, call, error,
                                                                      message):
    f = thin_prog["plus"]
    a, b = _pair()
    for _ in range(2):  # before the thin call is made, and after
        with pytest.raises(error, match=message):
            call(f, a, b)
        f(a, b)
    assert f._thin is not None


def test_thin_results_are_the_callers_own(thin_prog):
    """Fresh VM outputs are handed over without a copy -- the VM never reuses memory a
    returned array still holds -- and everything else is copied: the argument itself, a
    reshape of it, a constant, a tuple's repeated item, a branch that returns the input."""
    plus, ident, flat = thin_prog["plus"], thin_prog["ident"], thin_prog["flat"]
    a, b = _pair()
    first = plus(a, b)
    kept = first.copy()
    later = [plus(*_pair()) for _ in range(20)]
    np.testing.assert_array_equal(first, kept)  # no later call wrote into it
    assert not any(np.shares_memory(first, r) for r in later)
    first += 1  # and writing to it changes neither the inputs nor later results
    np.testing.assert_array_equal(plus(a, b), kept)

    for fn, x in ((ident, np.arange(4, dtype="f4")),
                  (flat, np.arange(4, dtype="f4").reshape(2, 2))):
        fn(x.copy())  # the thin call is made by the first call
        out = fn(x)
        assert fn._thin is not None and not np.shares_memory(out, x)
        np.testing.assert_array_equal(out, x.reshape(out.shape))

    const = thin_prog["const"]
    x = np.zeros(4, "f4")
    const(x)
    c1, c2 = const(x), const(x)
    c1[:] = -1
    np.testing.assert_array_equal(const(x), 1)
    assert not np.shares_memory(c1, c2)

    y1, y2 = thin_prog["pair"](x)
    y1, y2 = thin_prog["pair"](x + 1)
    assert not np.shares_memory(y1, y2)
    np.testing.assert_array_equal(y2, 2)

    pick = thin_prog["pick"]
    small, big = np.arange(4, dtype="f4"), np.arange(4, dtype="f4") * 10
    np.testing.assert_array_equal(pick(small), small + 1)
    out = pick(big)  # this branch returns the argument itself
    assert pick._thin is not None and not np.shares_memory(out, big)
    np.testing.assert_array_equal(out, big)


@pytest.mark.parametrize("failure, expected", [
    (RuntimeError("InternalError: deep in TVM\nStack trace: ..."), mlclab.InternalError),
    (ValueError("a user's mistake"), ValueError),
    (MemoryError("no room"), MemoryError),
])
def test_failures_in_the_thin_call_follow_the_error_policy(thin_prog, failure, expected):
    f = thin_prog["plus"]
    a, b = _pair()
    f(a, b)

    def broken(*args):
        raise failure

    f._thin = f._marshaller.thin(broken, f.program.built.lock, [(2, 3), (2, 3)])
    with pytest.raises(expected) as info:
        f(a, b)
    if expected is mlclab.InternalError:
        assert str(info.value).startswith("mlclab bug while calling plus: RuntimeError")
        assert info.value.__cause__ is failure
    else:
        assert info.value is failure
    assert not f.program.built.lock._is_owned()  # the VM lock was released


def test_the_thin_call_checks_memory_when_the_need_is_large(thin_prog, monkeypatch):
    function = importlib.import_module("mlclab.api.function")  # (mlclab.api.function is
    shapes = importlib.import_module("mlclab.api.shapes")       # also the decorator)

    monkeypatch.setattr(function, "ALWAYS_AVAILABLE", 0)
    monkeypatch.setattr(shapes, "_ALWAYS_AVAILABLE", 0)
    monkeypatch.setattr(shapes, "available_memory", lambda: 2 ** 40)
    f = thin_prog["plus"]
    a, b = _pair()
    f(a, b)
    np.testing.assert_array_equal(f(a, b), a + b)
    monkeypatch.setattr(shapes, "available_memory", lambda: 8)
    with pytest.raises(MemoryError, match=r"plus\(\): these sizes need about"):
        f(a, b)
    assert f._thin is not None


def test_thin_calls_from_several_threads_are_correct(thin_prog):

    f = thin_prog["plus"]
    f(*_pair())
    problems = []

    def worker(k):
        local = np.random.default_rng(k)
        for _ in range(200):
            a = local.standard_normal((2, 3)).astype("f4")
            b = local.standard_normal((2, 3)).astype("f4")
            out = f(a, b)
            if not np.array_equal(out, a + b):
                problems.append(k)

    run_on_threads(worker, 4)
    assert problems == []


def test_a_function_fetched_anew_for_every_call_keeps_its_thin_call(thin_prog, monkeypatch):
    # A program holds its functions weakly: prog["plus"](a, b) written out each time may make
    # a new CompiledFunction per call; the call state lives with the build instead.
    a, b = _pair()
    thin_prog["plus"](a, b)
    binds, sizes = _counting(monkeypatch, "bind"), _counting(monkeypatch, "check_sizes")
    for _ in range(3):
        np.testing.assert_array_equal(thin_prog["plus"](a, b), a + b)
    assert binds == [] and sizes == []


def test_a_symbolic_size_gets_a_thin_call_per_shape_bind_accepted(monkeypatch):
    f = mlclab.compile('def f(a: Tensor[("n", 3), f32], b: Tensor[(3,), f32]):\n'
                       '    return a * b', force=True)["f"]
    binds = _counting(monkeypatch, "bind")
    b = rng.standard_normal(3).astype("f4")
    for rows in (2, 2, 2, 5, 5, 2):
        a = rng.standard_normal((rows, 3)).astype("f4")
        np.testing.assert_array_equal(f(a, b), a * b)
    assert len(binds) == 3  # the first call, and each change of n
    with pytest.raises(ValueError, match=r"argument b must have shape \(3,\)"):
        f(a, b[:2])


def test_a_fresh_result_is_handed_over_without_a_copy(thin_prog):
    f = thin_prog["plus"]
    a, b = _pair()
    f(a, b)
    addresses = []
    vm_fn = f._state.vm_fn

    def recording(*arrays):
        result = vm_fn(*arrays)
        addresses.append(result.data_ptr())
        return result

    f._thin = f._marshaller.thin(recording, f.program.built.lock, [(2, 3), (2, 3)])
    out = f(a, b)
    assert addresses == [out.ctypes.data]  # numpy's view of the VM's own output
    np.testing.assert_array_equal(out, a + b)


# ---------------------------------------------------------------------------------------
# kernels only: a function that only checks its arguments, allocates tensors and runs
# kernels on them is called without the VM (its instructions cost more than tiny kernels)

def test_only_a_function_of_few_small_kernels_skips_the_vm(thin_prog):
    x4, x22 = np.arange(4, dtype="f4"), np.arange(4, dtype="f4").reshape(2, 2)
    a44, b44 = (rng.standard_normal((4, 4)).astype("f4") for _ in range(2))
    wide = (rng.standard_normal((256, 512)).astype("f4") * 0.1,
            rng.standard_normal((512, 512)).astype("f4") * 0.1)
    calls = {"plus": _pair(), "ident": (x4,), "flat": (x22,), "const": (x4,), "pair": (x4,),
             "pick": (x4,), "chain": (a44, b44), "wide": wide}
    plans = {}
    for name, arrays in calls.items():
        f = thin_prog[name]
        out = f(*arrays)
        np.testing.assert_allclose(out, f.reference(*arrays), rtol=1e-4, atol=1e-6)
        plans[name] = (f._state.kernel_plan, f._thin is not None)
    # (this reshape is a copy kernel;) the argument itself, a constant, a tuple, a branch:
    # the VM.  Two kernels: no VM; two kernels with a 512 KB intermediate: the VM (planned,
    # but the VM's memory pool is worth more than its instructions there)
    assert [len(plans[n][0].calls) for n in ("plus", "flat", "chain")] == [1, 1, 2]
    assert len(plans["wide"][0].calls) >= 2
    assert not any(plans[n][0] for n in ("ident", "const", "pair", "pick")), plans
    chain = thin_prog["chain"]
    out = chain(a44, b44)
    assert np.allclose(out, chain.reference(a44, b44), atol=1e-6)
    assert not np.shares_memory(out, a44) and not np.shares_memory(out, b44)
    assert chain(a44, b44) is not out and not np.shares_memory(chain(a44, b44), out)
    out = thin_prog["flat"](x22)
    assert not np.shares_memory(out, x22) and out.tolist() == [0, 1, 2, 3]
    symbolic = mlclab.compile('def f(a: Tensor[("n",), f32]):\n    return a * 2.0', force=True)
    symbolic["f"](x4)
    assert symbolic["f"]._state.kernel_plan is None   # a size read from the argument


def test_the_direct_call_runs_the_planned_kernels_only(thin_prog, monkeypatch):
    """After the first call, ``chain`` runs its two kernels and nothing of the VM; ``wide``
    (a 512 KB intermediate) keeps calling the VM."""
    from mlclab.kernel_plan import DIRECT_MAX_INTERMEDIATE_BYTES

    chain, wide = thin_prog["chain"], thin_prog["wide"]
    a44, b44 = (rng.standard_normal((4, 4)).astype("f4") for _ in range(2))
    x = (rng.standard_normal((256, 512)).astype("f4") * 0.1,
         rng.standard_normal((512, 512)).astype("f4") * 0.1)
    chain(a44, b44), wide(*x)
    vm_calls = []
    for f in (chain, wide):
        vm_fn = f._state.vm_fn

        def counted(*args, vm_fn=vm_fn, name=f.name):
            vm_calls.append(name)
            return vm_fn(*args)

        f._state.vm_fn = f._vm_fn = counted
        f._thin = f._state.thin = f._state.thin_shapes = None   # prepared again next call
    chain(a44, b44), wide(*x)                     # (the full path: both through the VM)
    vm_calls.clear()
    for _ in range(3):
        np.testing.assert_allclose(chain(a44, b44), chain.reference(a44, b44), atol=1e-6)
        np.testing.assert_allclose(wide(*x), wide.reference(*x), rtol=1e-4, atol=1e-7)
    assert vm_calls == ["wide"] * 3
    assert DIRECT_MAX_INTERMEDIATE_BYTES < 256 * 512 * 4   # the matmul's result


def test_kernel_plan_reads_only_plain_bytecode():
    from mlclab.kernel_plan import KernelPlan, kernel_plan, one_kernel

    plain = ("@f:\n"
             "  call  vm.builtin.check_tensor_info in: %0, i1, c[0], c[1] dst: %void\n"
             "  call  vm.builtin.match_shape in: %0, %void, i1, i0, i4, c[1] dst: %void\n"
             "  call  vm.builtin.alloc_storage in: %vm, c[3], i0, c[4], c[5] dst: %1\n"
             "  call  vm.builtin.alloc_tensor in: %1, i0, c[6], c[0] dst: %2\n"
             "  call  vm.builtin.null_value in:              dst: %1\n"
             "  call  k                in: %0, %2   dst: %void\n"
             "  ret   %2\n\n@k packed_func;\n")
    assert one_kernel(plain, "f", 1) == "k"
    assert kernel_plan(plain, "f", 1) == KernelPlan((("k", (0, 2)),), (2,), 2)
    assert one_kernel(plain, "g", 1) is None and one_kernel(plain, "f", 2) is None
    second = ("  call  vm.builtin.alloc_storage in: %vm, c[3], i0, c[4], c[5] dst: %3\n"
              "  call  vm.builtin.alloc_tensor in: %3, i0, c[6], c[0] dst: %4\n"
              "  call  k2 in: %2, %0, %4 dst: %void\n  ret   %4")
    two = plain.replace("  ret   %2", second)
    assert kernel_plan(two, "f", 1) == KernelPlan((("k", (0, 2)), ("k2", (2, 0, 4))),
                                                   (2, 4), 4)
    assert one_kernel(two, "f", 1) is None                       # a second kernel
    for change in [("in: %0, %2", "in: %2, %0"),                  # another argument order
                   ("  ret", "  call  k2 in: %2 dst: %void\n  ret")]:  # a second kernel
        assert one_kernel(plain.replace(*change), "f", 1) is None, change
    for change in [("ret   %2", "ret   %0"),                      # returns its argument
                   ("%0, %void, i1", "%0, %3, i1"),               # a size into the heap
                   ("c[6], c[0] dst", "%3, c[0] dst"),            # a computed shape
                   ("in: %0, %2", "in: %0, c[7], %2"),            # a constant (a weight)
                   ("  call  k ", "  call  vm.builtin.copy "),    # a builtin, not a kernel
                   ("  ret   %2", "  ret   %2\n  call  k in: %0, %2 dst: %void")]:  # after
        assert kernel_plan(plain.replace(*change), "f", 1) is None, change
    many = plain.replace("  ret", "  call  k in: %0, %2 dst: %void\n" * 16 + "  ret")
    assert kernel_plan(many, "f", 1) is None                     # 17 kernels


def test_one_kernel_calls_in_parallel_threads_are_correct_and_their_own():
    """No lock around a kernel called without the VM: a parallel kernel (TVM's pool is per
    calling thread) from four threads at once, each result fresh."""

    f = mlclab.compile("def f(a: Tensor[(256, 512), f32], b: Tensor[(256, 512), f32]):\n"
                       "    return relu(a * b + 1.0)", force=True)["f"]
    a, b = (rng.standard_normal((256, 512)).astype("f4") for _ in range(2))
    f(a, b)
    assert f._state.kernel_plan is not None
    problems, results = [], []

    def worker(k):
        local = np.random.default_rng(k)
        x = local.standard_normal((256, 512)).astype("f4")
        for _ in range(30):
            out = f(x, b)
            results.append(out)
            if not np.array_equal(out, np.maximum(x * b + np.float32(1), 0)):
                problems.append(k)

    run_on_threads(worker, 4)
    assert problems == []
    addresses = {r.ctypes.data for r in results}
    assert len(addresses) == len({id(r) for r in results}) == 120   # no two share memory


def test_a_kernels_only_call_from_parallel_threads_is_correct_and_its_own(thin_prog):
    """Two kernels and an intermediate, without the VM or its lock, from four threads."""
    chain = thin_prog["chain"]
    b = rng.standard_normal((4, 4)).astype("f4")
    chain(b, b)
    assert len(chain._state.kernel_plan.calls) == 2
    problems, results = [], []

    def worker(k):
        a = np.random.default_rng(k).standard_normal((4, 4)).astype("f4")
        h = np.maximum(a @ b, 0)
        want = np.exp(h - h.max(1, keepdims=True))
        want /= want.sum(1, keepdims=True)
        for _ in range(200):
            out = chain(a, b)
            results.append(out)
            if not np.allclose(out, want, rtol=1e-5, atol=1e-6):
                problems.append(k)

    run_on_threads(worker, 4)
    assert problems == []
    assert len({r.ctypes.data for r in results}) == len(results) == 800
