"""Compiled code against numpy, bit for bit, on the values a careful student tries.

Strict mode (the default) promises numpy's answers (mlclab/ops/strict.py, docs/operators.md):
bit for bit for the exactly rounded operators, within ``ULP_BOUND`` for transcendental ones,
within ``REDUCTION_BOUND`` for sums. Three parts:

- every row of issue 31's table, each a regression test against numpy itself;
- a differential tester: Hypothesis draws element-wise programs (the operators of
  tests/test_fuzz.py that numpy computes exactly) and runs them on arrays holding every
  special value of the dtype (+-0, +-inf, NaN, the extremes, denormals), paired by
  broadcasting so each binary operator meets every pair; the compiled result must equal
  ``fn.reference`` (numpy) bit for bit;
- each transcendental operator and reduction on the same values, within the stated bound.

The CI run draws ``CI_PROGRAMS`` programs (about a minute); ``pytest -m slow`` draws
``SLOW_PROGRAMS`` (benchmarks/numerics_differential.py --programs N runs it).
"""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlclab
from mlclab.ops.strict import REDUCTION_BOUND, ULP_BOUND

CI_PROGRAMS = 60
SLOW_PROGRAMS = int(os.environ.get("MLCLAB_DIFFERENTIAL_PROGRAMS", "1500"))

FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
INT_DTYPES = {"i8": np.int8, "i32": np.int32, "i64": np.int64, "u8": np.uint8}


def specials(dtype) -> np.ndarray:
    """Every value a careful student tries for ``dtype``, then a few ordinary ones."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        fi = np.finfo(dtype)
        values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0,
                  float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny),
                  float(fi.smallest_subnormal), 1e-3, -20.0]
    else:
        ii = np.iinfo(dtype)
        values = [0, 1, 2, 3, 7, ii.max, ii.min, ii.max - 1, ii.min + 1]
        if ii.min < 0:
            values += [-1, -2, -7]
    with np.errstate(all="ignore"):
        return np.array(values, dtype=dtype)


def _ordered(a: np.ndarray) -> np.ndarray:
    """The bits of a float array as integers ordered like the floats (-0 and +0 equal)."""
    bits = a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.itemsize]).astype(np.int64)
    return np.where(bits < 0, -(bits & ((1 << (8 * a.itemsize - 1)) - 1)), bits)


def assert_bitwise(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if got.dtype.kind == "f":
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), f"{what}: NaN at other places"
        # NaN's payload and sign are not numpy's promise; everything else is, bit for bit
        unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.itemsize]
        differ = (np.ascontiguousarray(got).reshape(-1).view(unsigned)
                  != np.ascontiguousarray(want).reshape(-1).view(unsigned)).reshape(got.shape)
        differ &= ~nan
    else:
        differ = got != want
    if differ.any():
        at = np.argwhere(differ)[0]
        raise AssertionError(f"{what}: {int(differ.sum())} elements differ from numpy, first "
                             f"at {tuple(at)}: {got[tuple(at)]!r} vs numpy {want[tuple(at)]!r}")


def assert_within_ulps(got, want, dtype, what=""):
    """Within ``ULP_BOUND[dtype]``: NaN and infinities exactly where numpy's are."""
    ulps, absolute = ULP_BOUND[np.dtype(dtype).name]
    got, want = np.asarray(got), np.asarray(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN at other places"
    special = np.isinf(want) | np.isinf(got)
    assert np.array_equal(got[special], want[special]), f"{what}: infinities differ"
    ok = ~(np.isnan(want) | special)
    g, w = got[ok], want[ok]
    distance = np.abs(_ordered(g) - _ordered(w))
    error = np.abs(g.astype(np.float64) - w.astype(np.float64))
    bad = (distance > ulps) & (error > absolute)
    if bad.any():
        i = int(np.argmax(bad))
        raise AssertionError(f"{what}: {int(bad.sum())} elements beyond {ulps} ulp / "
                             f"{absolute:g}: {g[i]!r} vs numpy {w[i]!r} ({distance[i]} ulp)")


def _compile(src, fast_math=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = mlclab.compile(src, fast_math=fast_math)
    return prog[list(prog)[0]]


def _run(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args), fn.reference(*args)


# ------------------------------------------------------------------ issue 31, row by row
F32 = np.float32
NAN_ONE = np.array([np.nan, 1.0], F32)
ONES = np.array([1.0, 1.0], F32)

ROWS = [
    ("x != x", "def f(x: Tensor[(2,), f32]):\n    return x != x", [NAN_ONE],
     lambda x: x != x),
    ("where(x != x, 0.0, x)", "def f(x: Tensor[(2,), f32]):\n    return where(x != x, 0.0, x)",
     [NAN_ONE], lambda x: np.where(x != x, F32(0), x)),
    ("~(x < y)", "def f(x: Tensor[(2,), f32], y: Tensor[(2,), f32]):\n    return ~(x < y)",
     [NAN_ONE, ONES], lambda x, y: ~(x < y)),
    ("~(x >= y)", "def f(x: Tensor[(2,), f32], y: Tensor[(2,), f32]):\n    return ~(x >= y)",
     [NAN_ONE, ONES], lambda x, y: ~(x >= y)),
    ("x * 0.0", "def f(x: Tensor[(4,), f32]):\n    return x * 0.0",
     [np.array([np.inf, -np.inf, np.nan, 2.0], F32)], lambda x: x * F32(0)),
    ("f32 (x + 1e30) - 1e30", "def f(x: Tensor[(1,), f32]):\n    return (x + 1e30) - 1e30",
     [np.array([1.0], F32)], lambda x: (x + F32(1e30)) - F32(1e30)),
    ("f64 (x + 1e20) - 1e20", "def f(x: Tensor[(1,), f64]):\n    return (x + 1e20) - 1e20",
     [np.array([1.0])], lambda x: (x + 1e20) - 1e20),
    ("i32 (x + 1) > x", "def f(x: Tensor[(1,), i32]):\n    return (x + 1) > x",
     [np.array([2**31 - 1], np.int32)], lambda x: (x + np.int32(1)) > x),
    ("f16 sum of 4096 ones", "def f(x: Tensor[(4096,), f16]):\n    return sum(x)",
     [np.ones(4096, np.float16)], np.sum),
    ("f16 mean of 70000 ones", "def f(x: Tensor[(70000,), f16]):\n    return mean(x)",
     [np.ones(70000, np.float16)], np.mean),
    ("f32 x % y", "def f(x: Tensor[(1,), f32], y: Tensor[(1,), f32]):\n    return x % y",
     [np.array([1e10], F32), np.array([7.0], F32)], lambda x, y: x % y),
    ("f16 (x + 0.0004) - x", "def f(x: Tensor[(1,), f16]):\n    return (x + 0.0004) - x",
     [np.array([1.0], np.float16)], lambda x: (x + np.float16(0.0004)) - x),
    ("f32 a * b - c", "def f(a: Tensor[(999,), f32], b: Tensor[(999,), f32], "
     "c: Tensor[(999,), f32]):\n    return a * b - c",
     [np.random.default_rng(i).standard_normal(999).astype(F32) for i in range(3)],
     lambda a, b, c: a * b - c),
    ("f64 a * b - c", "def f(a: Tensor[(999,), f64], b: Tensor[(999,), f64], "
     "c: Tensor[(999,), f64]):\n    return a * b - c",
     [np.random.default_rng(i).standard_normal(999) for i in range(3)],
     lambda a, b, c: a * b - c),
    ("1.0 / (x + 0.0), x = -0.0", "def f(x: Tensor[(1,), f32]):\n    return 1.0 / (x + 0.0)",
     [np.array([-0.0], F32)], lambda x: F32(1) / (x + F32(0))),
    ("f32 inf // 2", "def f(x: Tensor[(4,), f32]):\n    return x // 2.0",
     [np.array([np.inf, -np.inf, 5.0, -5.0], F32)], lambda x: x // F32(2)),
]


@pytest.mark.parametrize("name, src, args, numpy_fn", ROWS, ids=[r[0] for r in ROWS])
def test_issue_table_row_matches_numpy(name, src, args, numpy_fn):
    fn = _compile(src)
    got, ref = _run(fn, *args)
    with np.errstate(all="ignore"):
        want = np.asarray(numpy_fn(*args))
    if want.dtype != np.asarray(got).dtype:      # numpy's sum of float16 is float16 too
        want = want.astype(np.asarray(got).dtype)
    assert_bitwise(got, want, name)
    assert_bitwise(ref, want, f"{name} (reference)")


def test_fast_math_is_an_opt_in_that_changes_the_answer_visibly():
    src = "def f(x: Tensor[(1,), f32]):\n    return (x + 1e30) - 1e30"
    strict, fast = _compile(src), _compile(src, fast_math=True)
    x = np.array([1.0], F32)
    assert strict(x)[0] == 0.0 and fast(x)[0] == 1.0   # the rewrite (x + c) - c -> x
    assert strict.program is not fast.program          # the cache keys the option
    assert not strict.program.fast_math and fast.program.fast_math
    assert "fast-math" in repr(fast) and "fast-math" not in repr(strict)
    assert "fast-math" in repr(fast.pipeline()) and "strict math" in repr(strict.pipeline())
    assert "fast-math" in fast.pipeline()._repr_html_()
    assert "fast-math" in repr(fast.program.build_record)


def test_fast_math_must_be_a_bool():
    with pytest.raises(TypeError, match="fast_math"):
        mlclab.compile("def f(x: Tensor[(1,), f32]):\n    return x", fast_math="yes")


def test_float_floor_divide_and_mod_follow_numpy_divmod():
    x = np.repeat(specials(F32), len(specials(F32)))
    y = np.tile(specials(F32), len(specials(F32)))
    n = len(x)
    for op in ("//", "%"):
        fn = _compile(f"def f(x: Tensor[({n},), f32], y: Tensor[({n},), f32]):\n"
                      f"    return x {op} y")
        with np.errstate(all="ignore"):
            want = x // y if op == "//" else x % y
        got, _ = _run(fn, x, y)
        assert_bitwise(got, want, op)


def test_integer_arithmetic_wraps_like_numpy():
    for dt, np_dt in INT_DTYPES.items():
        v = specials(np_dt)
        x, y = np.repeat(v, len(v)), np.tile(v, len(v))
        n = len(x)
        for op in ("+", "-", "*", "//", "%", ">", "=="):
            if op == "*" and dt == "i64":
                continue   # int64 multiply keeps TVM's lowering (docs/operators.md)
            fn = _compile(f"def f(x: Tensor[({n},), {dt}], y: Tensor[({n},), {dt}]):\n"
                          f"    return x {op} y")
            got, ref = _run(fn, x, y)
            assert_bitwise(got, ref, f"{dt} {op}")


# ------------------------------------------------------------------ random programs
BINARY = ["+", "-", "*", "/", "//", "%"]
COMPARE = ["<", "<=", ">", ">=", "==", "!="]
CALLS = ["maximum", "minimum"]
UNARY = ["-", "abs", "relu", "floor", "round", "sign", "sqrt"]
LITERALS = ["0.0", "-0.0", "1.0", "0.5", "3.0", "2.0"]
# a literal near the dtype's largest and smallest: (x + big) - big and x * tiny
EXTREME_LITERALS = {"f16": ["6e4", "-1e-7"], "f32": ["1e30", "-1e-30"],
                    "f64": ["1e300", "-1e-300"]}


@st.composite
def exact_programs(draw):
    """An element-wise program of operators numpy computes exactly, over float params
    shaped (K, 1) and (1, K) so a binary operator meets every pair of special values."""
    dt = draw(st.sampled_from(list(FLOAT_DTYPES)))
    k = len(specials(FLOAT_DTYPES[dt]))
    names = ["x", "y"]
    literals = LITERALS + EXTREME_LITERALS[dt]
    lines = []
    for i in range(draw(st.integers(1, 5))):
        a = draw(st.sampled_from(names))
        b = draw(st.sampled_from(names + literals))
        kind = draw(st.integers(0, 5))
        if kind <= 1:
            op = draw(st.sampled_from(BINARY))
            if op in ("/", "//", "%") and b in ("0.0", "-0.0"):
                b = "2.0"     # a zero literal divisor is a DSLError (said at the line)
            expr = f"{a} {op} {b}"
        elif kind == 2:
            cmp = f"{a} {draw(st.sampled_from(COMPARE))} {b}"
            if draw(st.booleans()):
                cmp = f"~({cmp})"
            expr = f"where({cmp}, {a}, {draw(st.sampled_from(names + literals))})"
        elif kind == 3:
            expr = f"{draw(st.sampled_from(CALLS))}({a}, {b})"
        elif kind == 4:
            u = draw(st.sampled_from(UNARY))
            expr = f"-{a}" if u == "-" else f"{u}({a})"
        else:
            expr = f"{a} * {b} {draw(st.sampled_from(['+', '-']))} {draw(st.sampled_from(names))}"
        lines.append(f"    v{i} = {expr}")
        names.append(f"v{i}")
    out = names[-1] if len(names) > 2 else "x"
    body = "\n".join(lines + [f"    return {out} + 0.0 * x" if out in ("x", "y")
                              else f"    return {out}"])
    src = f"def f(x: Tensor[({k}, 1), {dt}], y: Tensor[(1, {k}), {dt}]):\n{body}"
    return dt, src


def _check_exact(dt, src):
    values = specials(FLOAT_DTYPES[dt])
    x, y = values.reshape(-1, 1), values.reshape(1, -1)
    fn = _compile(src)
    got, ref = _run(fn, x, y)
    got = np.broadcast_to(got, np.shape(ref))
    assert_bitwise(got, ref, src)


FOUND = [  # programs the long run once found wrong, kept as regressions
    ("f16", "def f(x: Tensor[(18, 1), f16], y: Tensor[(1, 18), f16]):\n"
            "    v2 = where(x < x, x, x)\n    return x - v2"),
    ("f32", "def f(x: Tensor[(18, 1), f32], y: Tensor[(1, 18), f32]):\n    return x - x"),
    ("f64", "def f(x: Tensor[(18, 1), f64], y: Tensor[(1, 18), f64]):\n    return x / x"),
    ("f16", "def f(x: Tensor[(18, 1), f16], y: Tensor[(1, 18), f16]):\n    return relu(x)"),
    ("f16", "def f(x: Tensor[(18, 1), f16], y: Tensor[(1, 18), f16]):\n"
            "    return maximum(x, y)"),
    ("f16", "def f(x: Tensor[(18, 1), f16], y: Tensor[(1, 18), f16]):\n"
            "    v0 = relu(x)\n    return y // v0"),
]


@pytest.mark.parametrize("dt, src", FOUND)
def test_programs_the_long_run_found(dt, src):
    _check_exact(dt, src)


@settings(max_examples=CI_PROGRAMS, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(exact_programs())
def test_random_exact_programs_match_numpy_bit_for_bit(case):
    _check_exact(*case)


@pytest.mark.slow
@settings(max_examples=SLOW_PROGRAMS, deadline=None, suppress_health_check=list(HealthCheck))
@given(exact_programs())
def test_random_exact_programs_match_numpy_bit_for_bit_long(case):
    _check_exact(*case)


# ------------------------------------------------------------------ within a bound
TRANSCENDENTAL = ["exp", "log", "tanh", "sigmoid", "erf", "sin", "cos", "log1p", "expm1",
                  "softplus", "silu", "gelu"]


@pytest.mark.parametrize("dt", list(FLOAT_DTYPES))
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_transcendental_within_the_stated_ulp_bound(op, dt):
    rng = np.random.default_rng(0)
    np_dt = FLOAT_DTYPES[dt]
    with np.errstate(all="ignore"):
        x = np.concatenate([specials(np_dt), (rng.standard_normal(200) * 5).astype(np_dt),
                            (rng.standard_normal(50) * 100).astype(np_dt)])
    fn = _compile(f"def f(x: Tensor[({len(x)},), {dt}]):\n    return {op}(x)")
    got, ref = _run(fn, x)
    assert_within_ulps(got, ref, np_dt, f"{dt} {op}")


@pytest.mark.parametrize("dt", list(FLOAT_DTYPES))
@pytest.mark.parametrize("op", ["sum", "mean", "softmax", "log_softmax"])
def test_reductions_within_the_stated_bound(op, dt):
    np_dt = FLOAT_DTYPES[dt]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 300)).astype(np_dt)
    x[1, 7], x[2, 9], x[3, 4], x[3, 5] = np.nan, np.inf, np.inf, -np.inf
    fn = _compile(f"def f(x: Tensor[(6, 300), {dt}]):\n    return {op}(x, axis=-1)")
    got, ref = _run(fn, x)
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    assert np.array_equal(got[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    eps = float(np.finfo(np_dt).eps)
    magnitude = np.abs(x.astype(np.float64)).sum(axis=-1, keepdims=op.endswith("max"))
    if op == "mean":
        magnitude = magnitude / x.shape[-1]
    bound = REDUCTION_BOUND * x.shape[-1] * eps * np.broadcast_to(magnitude, ref.shape)
    if op.endswith("max"):
        bound = np.maximum(bound, eps * 8 * (1 + np.abs(ref)))  # exp's ulps on top
    bound = bound + eps * np.abs(ref)                 # the final rounding to dtype
    with np.errstate(invalid="ignore"):       # inf - inf where numpy's is not finite
        error = np.abs(got - ref)
    assert np.all(error[finite] <= bound[finite])
