"""The operators added for issue 11, compiled by TVM, against numpy itself: broadcasting,
negative axes, symbolic sizes, empty tensors and NaN where they apply."""
import functools

import numpy as np
import pytest

import mlclab
from mlclab import ops
from programs import random_array

rng = np.random.default_rng(11)
rand = functools.partial(random_array, rng)


def check(src, args, expect, rtol=1e-5, atol=1e-6):
    """Compile ``src``'s last function, run it and its reference, compare both with numpy's
    ``expect`` (a tuple when the function returns several), NaN for NaN."""
    prog = mlclab.compile(src)
    f = prog[list(prog)[-1]]
    got, ref = f(*args), f.reference(*args)
    as_tuple = lambda v: v if isinstance(v, tuple) else (v,)  # noqa: E731
    for g, r, e in zip(as_tuple(got), as_tuple(ref), as_tuple(expect)):
        e = np.asarray(e)
        assert g.dtype == r.dtype == e.dtype, (g.dtype, r.dtype, e.dtype)
        assert g.shape == r.shape == e.shape, (g.shape, r.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        np.testing.assert_allclose(r, e, rtol=rtol, atol=atol, equal_nan=True)
    return got


def error(src):
    with pytest.raises(mlclab.DSLError) as info:
        mlclab.compile(src)
    e = info.value
    return str(e), e.source_line[e.col_offset:e.end_col_offset]


# --------------------------------------------------------------------------- bugs of the issue
def test_where_takes_a_literal_branch_in_the_other_branch_dtype():
    x = rand((3, 4))
    mask = x > 0.5
    check("def f(x: Tensor[(3, 4), f32], m: Tensor[(3, 4), bool]):\n"
          "    return where(x > 0.0, x, 0.0), where(m, x, -1e9), where(m, 1.0, x)",
          [x, mask], (np.where(x > 0, x, np.float32(0)), np.where(mask, x, np.float32(-1e9)),
                      np.where(mask, np.float32(1), x)))
    i = rand((4,), "int32")
    check("def f(i: Tensor[(4,), i32]):\n    return where(i > 0, i, 0)", [i],
          np.where(i > 0, i, np.int32(0)))


def test_where_with_two_number_branches_says_one_must_be_a_tensor():
    message, span = error("def f(m: Tensor[(3,), bool]):\n    return where(m, 1.0, 0.0)")
    assert "x1 and x2 are both numbers" in message and span == "where(m, 1.0, 0.0)"


def test_a_float_axis_of_max_asks_for_maximum():
    for call, pair in (("max(x, 0.0)", "maximum(x, 0.0)"), ("min(h, y)", "minimum(h, y)")):
        message, span = error("def f(x: Tensor[(3,), f32], y: Tensor[(3,), f32]):\n"
                              f"    h = x\n    return {call}")
        assert f"did you mean {pair}?" in message
        assert span == call.split(", ")[1][:-1]
    message, _ = error("def f(x: Tensor[(3,), f32]):\n    return sum(x, 0.5)")
    assert "must be an int literal" in message and "did you mean" not in message


NAN = np.array([[np.nan, -1.0, 2.0, 0.5], [1.0, np.nan, -3.0, np.inf], [0.0, 1.0, 2.0, 3.0]],
               "float32")


def test_nan_propagates_like_numpy():
    y = np.array([1.0, 0.0, np.nan, np.nan], "float32")
    check("def f(x: Tensor[(3, 4), f32], y: Tensor[(4,), f32]):\n"
          "    return relu(x), maximum(x, y), minimum(y, x), maximum(x, 0.0), max(x, axis=1), "
          "min(x, axis=0), max(x), min(x, axis=-1, keepdims=True), clip(x, 0.0, 1.0), sign(x)",
          [NAN, y],
          (np.maximum(NAN, 0), np.maximum(NAN, y), np.minimum(y, NAN), np.maximum(NAN, 0),
           NAN.max(axis=1), NAN.min(axis=0), NAN.max(), NAN.min(axis=-1, keepdims=True),
           np.clip(NAN, 0, 1), np.sign(NAN)))


def test_max_of_infinities_is_infinite():
    """TVM's own max reduction started from the lowest finite float: max of -inf was -3.4e38."""
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0]], "float32")
    check("def f(x: Tensor[(2, 2), f32]):\n    return max(x, axis=1), min(-x, axis=1)", [x],
          (x.max(axis=1), (-x).min(axis=1)))


def test_relu_max_and_pool_stay_one_binding_each():
    """NaN handling lives in their lowering: the views show the program as written."""
    f = mlclab.compile("def f(x: Tensor[(1, 1, 4, 4), f32]):\n"
                       "    return max(relu(max_pool2d(x, 2)), axis=-1)")["f"]
    let = f.text("let")
    assert let.count("let %") == 2 and "isnan" not in let      # the third is the result
    assert "max(%lv1, axis=[-1])" in let


def test_max_pool_keeps_nan_like_numpy():
    x = np.arange(32, dtype="float32").reshape(1, 2, 4, 4)
    x[0, 0, 0, 0] = x[0, 1, 3, 2] = np.nan
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf), (3, 3), axis=(2, 3))
    check("def f(x: Tensor[(1, 2, 4, 4), f32]):\n"
          "    return max_pool2d(x, 2), max_pool2d(x, 3, strides=1, padding=1)", [x],
          (x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)), windows.max(axis=(-2, -1))))


def test_nan_checks_stay_element_wise_and_fused():
    """The NaN guard is in the lowering: the Relax program is as written, and the kernel is
    one fused, vectorised loop with an isnan select (a test of the float's bits, which TVM
    vectorizes itself: ops.strict.isnan)."""
    f = mlclab.compile("def f(x: Tensor[(64,), f32], y: Tensor[(64,), f32]):\n"
                       "    return maximum(relu(x), y)")["f"]
    assert "isnan" not in f.text("relax")
    tir = f.text("tir")
    assert tir.count("@T.prim_func") == 1 and "T.vectorized" in tir
    assert 'T.reinterpret("int32"' in tir and "2139095040" in tir     # bits above +inf


def test_integer_maximum_has_no_nan_check():
    a, b = rand((5,), "int32"), rand((5,), "int32")
    f = mlclab.compile("def f(a: Tensor[(5,), i32], b: Tensor[(5,), i32]):\n"
                       "    return maximum(a, b), relu(a), max(a)")["f"]
    assert "isnan" not in f.text("relax")
    got = f(a, b)
    np.testing.assert_array_equal(got[0], np.maximum(a, b))
    np.testing.assert_array_equal(got[2], a.max())


# --------------------------------------------------------------------------- argmax, argmin
@pytest.mark.parametrize("kw", ["", ", axis=0", ", axis=-1", ", axis=1, keepdims=True",
                                ", keepdims=True"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, kw):
    x = rand((3, 5))
    x[1, 2] = x[1, 4] = x.max() + 1          # ties: the first index wins, as numpy
    kwargs = eval(f"dict({kw[2:]})")
    got = check(f"def f(x: Tensor[(3, 5), f32]):\n    return {name}(x{kw})", [x],
                getattr(np, name)(x, **kwargs))
    assert got.dtype == np.int64


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_of_nan_is_the_first_nan_and_ints_work(name):
    check(f"def f(x: Tensor[(3, 4), f32]):\n    return {name}(x, axis=1), {name}(x)", [NAN],
          (getattr(np, name)(NAN, axis=1), getattr(np, name)(NAN)))
    i = rand((2, 7), "int8")
    check(f"def f(i: Tensor[(2, 7), i8]):\n    return {name}(i, axis=-1)", [i],
          getattr(np, name)(i, axis=-1))


def test_accuracy_with_argmax_and_a_mean_of_bools():
    logits, labels = rand((6, 4)), rng.integers(0, 4, size=6).astype("int64")
    src = ("def f(logits: Tensor[(\"n\", 4), f32], labels: Tensor[(\"n\",), i64]):\n"
           "    return mean(argmax(logits, axis=1) == labels), sum(argmax(logits, axis=1) == "
           "labels)")
    hits = np.argmax(logits, axis=1) == labels
    got = check(src, [logits, labels], (np.mean(hits), np.sum(hits)))
    assert got[0].dtype == np.float64 and got[1].dtype == np.int64


def test_sum_and_mean_of_bools_promote_like_numpy():
    b = rand((3, 4), "bool")
    check("def f(b: Tensor[(3, 4), bool]):\n"
          "    return sum(b), sum(b, axis=0), mean(b, axis=-1, keepdims=True)", [b],
          (np.sum(b), np.sum(b, axis=0), np.mean(b, axis=-1, keepdims=True)))


# --------------------------------------------------------------------------- element-wise
@pytest.mark.parametrize("name,fn,low,high", [
    ("round", np.round, -4, 4), ("floor", np.floor, -3, 3), ("ceil", np.ceil, -3, 3),
    ("sign", np.sign, -2, 2), ("sin", np.sin, -7, 7), ("cos", np.cos, -7, 7),
    ("softplus", lambda x: np.logaddexp(0, x), -40, 40),
    ("silu", lambda x: x / (1 + np.exp(-x)), -8, 8),
    ("log1p", np.log1p, -0.99, 5), ("expm1", np.expm1, -5, 5)])
def test_unary_math_against_numpy(name, fn, low, high):
    x = rand((4, 6), "float64", low, high)
    x[0, :3] = [1e-12, -1e-10, 0.0]                 # where log1p/expm1 must not cancel
    check(f"def f(x: Tensor[(4, 6), f64]):\n    return {name}(x)", [x], fn(x), rtol=1e-6,
          atol=1e-12)


def test_round_halves_to_even_like_numpy():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999], "float32")
    check("def f(x: Tensor[(6,), f32]):\n    return round(x)", [x], np.round(x))


def test_log1p_and_expm1_keep_tiny_values_and_edges():
    x = np.array([1e-30, -1e-20, 3e-8, -1.0, np.inf, 100.0, -100.0], "float32")
    with np.errstate(all="ignore"):
        expect = (np.log1p(x), np.expm1(x))
    check("def f(x: Tensor[(7,), f32]):\n    return log1p(x), expm1(x)", [x], expect, rtol=1e-6)


def test_erf_and_exact_gelu():
    from math import erf

    x = rand((5, 3), "float64", -4, 4)
    e = np.vectorize(erf)(x)
    check("def f(x: Tensor[(5, 3), f64]):\n    return erf(x), gelu(x)", [x],
          (e, 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))), rtol=1e-6, atol=1e-9)


def test_float_only_math_refuses_integers():
    message, span = error("def f(i: Tensor[(3,), i32]):\n    return floor(i)")
    assert "floor needs a floating-point tensor" in message and span == "i"


def test_clip_forms():
    x = rand((3, 4), low=-8, high=8)
    i = rand((5,), "int32")
    check("def f(x: Tensor[(3, 4), f32], i: Tensor[(5,), i32]):\n"
          "    return clip(x, 0.0, 6.0), clip(x, None, 1), clip(x, a_min=-1.0), clip(i, -2, 3), "
          "clip(x, 2.0, 1.0)",
          [x, i], (np.clip(x, 0, 6), np.minimum(x, np.float32(1)), np.maximum(x, np.float32(-1)),
                   np.clip(i, -2, 3), np.minimum(np.maximum(x, np.float32(2)), np.float32(1))))
    message, span = error("def f(i: Tensor[(5,), i32]):\n    return clip(i, 0.5, 3)")
    assert "does not promote" in message and span == "0.5"
    message, _ = error("def f(x: Tensor[(5,), f32]):\n    return clip(x)")
    assert "needs a_min or a_max" in message


def test_logical_operators_and_their_python_spellings():
    a, b = rand((2, 3), "bool"), rand((3,), "bool")
    check("def f(a: Tensor[(2, 3), bool], b: Tensor[(3,), bool]):\n"
          "    return a & b, a | b, a ^ b, ~a, logical_and(a, b), logical_not(b), "
          "logical_or(a, True)",
          [a, b], (a & b, a | b, a ^ b, ~a, a & b, ~b, a | True))
    x = rand((2, 3))
    check("def f(x: Tensor[(2, 3), f32]):\n    return (x > 0.0) & (x < 1.0), ~(x > 0.0)", [x],
          ((x > 0) & (x < 1), ~(x > 0)))
    message, span = error("def f(i: Tensor[(3,), i32]):\n    return i & i")
    assert "'&' combines bool masks, but i is i32" in message and span == "i"


# --------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("kw", ["", ", axis=0", ", axis=(0, -1), keepdims=True"])
def test_var_std_ddof0(name, kw):
    x = rand((2, 3, 4))
    check(f"def f(x: Tensor[(2, 3, 4), f32]):\n    return {name}(x{kw})", [x],
          getattr(np, name)(x, **eval(f"dict({kw[2:]})")), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", ["", ", axis=0", ", axis=-1"])
def test_cumsum(kw):
    x, i = rand((3, 4)), rand((3, 4), "int32")
    kwargs = eval(f"dict({kw[2:]})")
    check(f"def f(x: Tensor[(3, 4), f32], i: Tensor[(3, 4), i32]):\n"
          f"    return cumsum(x{kw}), cumsum(i{kw})", [x, i],
          (np.cumsum(x, **kwargs), np.cumsum(i, **kwargs).astype("int32")))


def test_reductions_with_symbolic_sizes_and_empty_tensors():
    src = ("def f(x: Tensor[(\"n\", 3), f32]):\n"
           "    return var(x, axis=1), argmax(x, axis=1), cumsum(x, axis=0), sum(x > 0.0, axis=0)")
    for n in (1, 4):
        x = rand((n, 3))
        check(src, [x], (np.var(x, axis=1), np.argmax(x, axis=1), np.cumsum(x, axis=0),
                         np.sum(x > 0, axis=0)))
    x = rand((0, 3))                     # nothing reduced over an empty axis: still numpy's
    check("def f(x: Tensor[(\"n\", 3), f32]):\n"
          "    return var(x, axis=1), argmax(x, axis=1), cumsum(x, axis=0)", [x],
          (np.zeros(0, "float32"), np.zeros(0, "int64"), x))


def test_cumsum_of_bools_counts_like_numpy():
    b = rand((3, 4), "bool")
    check("def f(b: Tensor[(3, 4), bool]):\n    return cumsum(b, axis=1), cumsum(b)", [b],
          (np.cumsum(b, axis=1), np.cumsum(b)))


@pytest.mark.parametrize("call", ["max(x)", "min(x, axis=0)", "argmax(x, axis=-2)", "argmin(x)"])
def test_max_of_an_empty_axis_is_refused_like_numpy(call):
    message, span = error(f"def f(x: Tensor[(0, 3), f32]):\n    return {call}")
    assert "over an empty axis has no value" in message and span == "x"


# --------------------------------------------------------------------------- creation
def test_zeros_ones_full_and_likes():
    x = rand((2, 3))
    check("def f(x: Tensor[(\"n\", 3), f32]):\n"
          "    return zeros((\"n\", 3)) + x, ones((2,), i32), full((2, 1), -1.5), "
          "full((3,), True, bool), zeros_like(x), ones_like(x, i64), full_like(x, 7.0), "
          "zeros((0, 2))",
          [x], (x, np.ones(2, "int32"), np.full((2, 1), -1.5, "float32"), np.full(3, True),
                np.zeros_like(x), np.ones(x.shape, "int64"), np.full_like(x, 7), np.zeros((0, 2),
                                                                                     "float32")))


@pytest.mark.parametrize("call,phrase,span", [
    ("full((2,), 1.5, i32)", "cannot fill an i32 tensor", "1.5"),
    ("full((2,), 1, bool)", "filled with True or False", "1"),
    ("zeros((2, -1))", "non-negative", "(2, -1)"),
    ("full_like(x, True)", "cannot fill a f32 tensor", "True"),
    ("zeros((2, \"k\"))", "'k' is not a symbolic size", "\"k\""),
])
def test_creation_errors(call, phrase, span):
    message, got_span = error(f"def f(x: Tensor[(\"n\", 3), f32]):\n    return {call}")
    assert phrase in message and got_span == span


# --------------------------------------------------------------------------- shapes
def test_swapaxes_broadcast_to_tile_repeat_stack():
    x = rand((2, 3, 4))
    c = rand((3, 1))
    check("def f(x: Tensor[(2, 3, 4), f32], c: Tensor[(3, 1), f32]):\n"
          "    return swapaxes(x, 0, -1), swapaxes(x, 1, 1), broadcast_to(c, (2, 3, 5)), "
          "tile(c, (2, 2, 3)), tile(x, 2), repeat(x, 2, axis=-2), repeat(c, 3), "
          "stack((x, x), axis=-1), stack((c, c, c))",
          [x, c], (np.swapaxes(x, 0, -1), x, np.broadcast_to(c, (2, 3, 5)), np.tile(c, (2, 2, 3)),
                   np.tile(x, 2), np.repeat(x, 2, axis=-2), np.repeat(c, 3),
                   np.stack((x, x), axis=-1), np.stack((c, c, c))))


def test_shape_moves_with_symbolic_sizes():
    src = ("def f(x: Tensor[(\"n\", 3), f32]):\n"
           "    return swapaxes(x, 0, 1), tile(x, (1, 2)), repeat(x, 2, axis=0), "
           "stack((x, x), axis=1), broadcast_to(expand_dims(x, 0), (2, \"n\", 3)), pad(x, 1)")
    for n in (0, 2, 5):
        x = rand((n, 3))
        check(src, [x], (x.T, np.tile(x, (1, 2)), np.repeat(x, 2, axis=0), np.stack((x, x), 1),
                         np.broadcast_to(x, (2, n, 3)), np.pad(x, 1)))


@pytest.mark.parametrize("width", ["1", "(1, 2)", "((1, 0),)", "((0, 1), (2, 0), (1, 1))", "(3,)"])
def test_pad_width_forms_like_numpy(width):
    x = rand((2, 3, 4))
    check(f"def f(x: Tensor[(2, 3, 4), f32]):\n    return pad(x, {width}, constant_values=-2.5)",
          [x], np.pad(x, eval(width), constant_values=-2.5))
    i = rand((2, 2), "int32")
    check(f"def f(i: Tensor[(2, 2), i32]):\n    return pad(i, (1, 2), constant_values=7)", [i],
          np.pad(i, (1, 2), constant_values=7))


@pytest.mark.parametrize("call,phrase,span", [
    ("pad(x, ((1, 2), (3, 4), (5, 6)))", "does not fit a tensor of rank 2",
     "((1, 2), (3, 4), (5, 6))"),
    ("pad(x, -1)", "non-negative", "-1"),
    ("broadcast_to(x, (3, 2))", "cannot broadcast", "(3, 2)"),
    ("broadcast_to(x, (3,))", "cannot drop axes", "(3,)"),
    ("tile(x, (2, -1))", "non-negative int", "-1"),
    ("stack((x, transpose(x)))", "one shape", "(x, transpose(x))"),
    ("stack((x, x), axis=3)", "axis 3 is out of range", "3"),
    ("swapaxes(x, 0, 2)", "axis 2 is out of range", "2"),
    ("split(x, 4, axis=1)", "does not divide into 4", "4"),
    ("split(x, (2, 2), axis=1)", "must increase strictly", "(2, 2)"),
    ("take(x, x)", "integer indices", "x"),
])
def test_shape_errors_are_located(call, phrase, span):
    message, got_span = error(f"def f(x: Tensor[(2, 6), f32]):\n    return {call}")
    assert phrase in message, message
    assert got_span == span


def test_split_unpacks_into_names():
    x = rand((4, 6))
    parts = np.split(x, 3, axis=1)
    check("def f(x: Tensor[(\"n\", 6), f32]):\n"
          "    a, b, c = split(x, 3, axis=-1)\n"
          "    head, tail = split(x, (4,), axis=1)\n"
          "    return a + b * c, head, tail",
          [x], (parts[0] + parts[1] * parts[2], x[:, :4], x[:, 4:]))
    message, _ = error("def f(x: Tensor[(2, 6), f32]):\n    return relu(split(x, 2, axis=1))")
    assert "unpack it first" in message


# --------------------------------------------------------------------------- take
def test_take_is_numpy_take_for_valid_indices_including_negative():
    table = rand((5, 3))
    idx = np.array([[0, 4], [-1, -5], [2, 2]], "int64")
    check("def f(t: Tensor[(5, 3), f32], i: Tensor[(\"n\", 2), i64]):\n"
          "    return take(t, i, axis=0), take(t, i), take(t, i, axis=-1)",
          [table, idx], (np.take(table, idx, axis=0), np.take(table, idx),
                         np.take(table, idx % 3, axis=-1)))


def test_take_out_of_range_wraps_instead_of_reading_garbage():
    """numpy raises IndexError here; compiled code cannot raise, and must never read memory
    outside the tensor: indices wrap around, exactly as np.take(..., mode="wrap")."""
    table = np.arange(5, dtype="float32")
    idx = np.array([5, 7, -6, 123456789, -123456789], "int32")
    check("def f(t: Tensor[(5,), f32], i: Tensor[(5,), i32]):\n    return take(t, i)",
          [table, idx], np.take(table, idx, mode="wrap"))


def test_cross_entropy_with_integer_labels():
    """take on the flattened log-probabilities at row * classes + label."""
    logits = rand((4, 3))
    labels = np.array([0, 2, 1, 2], "int64")
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    flat = np.arange(4) * 3 + labels
    check("def f(z: Tensor[(4, 3), f32], k: Tensor[(4,), i64]):\n"
          "    return -mean(take(log_softmax(z, axis=1), k))", [logits, flat],
          np.float32(-logp.reshape(-1)[flat].mean()), rtol=1e-5)


def test_take_along_axis_is_numpys_with_broadcasting_and_negative_indices():
    x = rand((2, 3, 4))
    i = rng.integers(-4, 4, size=(2, 1, 3)).astype("int32")
    j = rng.integers(-3, 3, size=(1, 5, 4)).astype("int64")
    check("def f(x: Tensor[(2, 3, 4), f32], i: Tensor[(2, 1, 3), i32], "
          "j: Tensor[(1, 5, 4), i64]):\n"
          "    return take_along_axis(x, i, axis=-1), take_along_axis(x, j, axis=1)",
          [x, i, j], (np.take_along_axis(x, i, axis=-1), np.take_along_axis(x, j, axis=1)))


def test_take_along_axis_out_of_range_wraps():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    i = np.array([[3, -4], [7, 2]], "int64")
    check("def f(x: Tensor[(2, 3), f32], i: Tensor[(2, 2), i64]):\n"
          "    return take_along_axis(x, i, axis=1)", [x, i],
          np.take_along_axis(x, i % 3, axis=1))


def test_cross_entropy_picks_each_rows_label():
    z = rand((5, 3))
    y = np.array([0, 2, 1, 1, 0], "int64")
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    check("def ce(z: Tensor[(\"n\", 3), f32], y: Tensor[(\"n\",), i64]):\n"
          "    p = log_softmax(z, axis=1)\n"
          "    return -mean(take_along_axis(p, expand_dims(y, 1), axis=1))", [z, y],
          np.float32(-logp[np.arange(5), y].mean()), rtol=1e-5)


def test_take_along_axis_with_small_unsigned_indices_into_a_long_axis():
    x = rand((1, 300))
    i = np.array([[0, 255, 7]], "uint8")
    check("def f(x: Tensor[(1, 300), f32], i: Tensor[(1, 3), u8]):\n"
          "    return take_along_axis(x, i, axis=1), take(x, i, axis=1)", [x, i],
          (np.take_along_axis(x, i, axis=1), np.take(x, i, axis=1)))


def test_take_along_axis_errors():
    message, span = error("def f(x: Tensor[(2, 3), f32], y: Tensor[(2,), i64]):\n"
                          "    return take_along_axis(x, y, axis=1)")
    assert "needs indices of x's rank 2" in message and "expand_dims(y, 1)" in message
    assert span == "y"


def test_take_errors():
    message, span = error("def f(t: Tensor[(\"v\", 3), f32], i: Tensor[(2,), i64]):\n"
                          "    return take(t, i, axis=0)")
    assert "static size" in message and span == "t"
    message, _ = error("def f(t: Tensor[(0, 3), f32], i: Tensor[(2,), i64]):\n"
                       "    return take(t, i, axis=0)")
    assert "empty axis" in message


# --------------------------------------------------------------------------- einsum
@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (2,)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]),
    ("ij,jk", [(2, 3), (3, 4)]), ("ij,ij->i", [(2, 3), (2, 3)])])
def test_einsum_against_numpy(spec, shapes):
    arrays = [rand(s) for s in shapes]
    names = ["a", "b"][:len(shapes)]
    params = ", ".join(f"{n}: Tensor[{s if len(s) > 1 else (s[0],)}, f32]"
                       for n, s in zip(names, shapes))
    check(f"def f({params}):\n    return einsum(\"{spec}\", {', '.join(names)})", arrays,
          np.einsum(spec, *arrays), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call,phrase,span", [
    ("einsum(\"ij,jk->ik\", a)", "names 2 operand(s) but 1 are given", "\"ij,jk->ik\""),
    ("einsum(\"ijk,jk->ik\", a, a)", "names 3 axes but a has rank 2", "a"),
    ("einsum(\"ij,ij->ik\", a, a)", "each input letter at most once", "\"ij,ij->ik\""),
    ("einsum(\"ij,jk->ik\", a, a)", "axis 'j' is 3 in one place and 2 in a", "a"),
    ("einsum(\"...j,jk\", a, a)", "ellipsis", "\"...j,jk\""),
    ("einsum(\"ii->i\", a)", "repeats a letter", "\"ii->i\""),
    ("einsum(ij, a)", "must be a string literal", "ij"),
])
def test_einsum_errors_are_located(call, phrase, span):
    message, got_span = error(f"def f(a: Tensor[(2, 3), f32]):\n    return {call}")
    assert phrase in message, message
    assert got_span == span


def test_every_new_entry_is_documented():
    doc = ops.reference_markdown()
    for name in ("argmax", "argmin", "clip", "round", "floor", "ceil", "sign", "erf", "gelu",
                 "sin", "cos", "softplus", "silu", "log1p", "expm1", "take", "zeros", "ones",
                 "full", "zeros_like", "ones_like", "full_like", "logical_and", "logical_or",
                 "logical_not", "logical_xor", "var", "std", "pad", "swapaxes", "broadcast_to",
                 "tile", "repeat", "cumsum", "stack", "split", "einsum"):
        assert f"`{name}(" in doc, name
