"""The CPU schedules: every scheduled operator kind agrees with numpy on ordinary, odd,
prime, tiny and symbolic shapes, the schedules really apply where they should, and
nothing a schedule can't handle ever breaks a build.

Modules are built with ``relax.BlockBuilder`` from the same Relax operators the DSL emits
and compiled with mlclab's own pipeline (``build_passes``), so these tests exercise
exactly the code a student's program runs.
"""
from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import textwrap

os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))

import numpy as np
import pytest

import tvm
from tvm import relax, tirx  # noqa: E402
from tvm.relax import op as R  # noqa: E402

from mlclab.backend.passes import build_passes, resolve_target  # noqa: E402
from mlclab.backend.schedules import (  # noqa: E402
    UNSCHEDULED, NotScheduled, schedule_cpu, schedule_decision,
    schedule_primfunc, vector_lanes)

RNG = np.random.default_rng(7)
# Results are compared with numpy evaluated in float64.  FMA contraction on the host target
# rounds a*b+c once instead of twice, and a float32 sum of K terms carries a rounding error
# growing like sqrt(K): the absolute tolerance scales with the reduction length ``terms``.
RTOL, ATOL = 1e-5, 1e-5


def _var(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorType(shape, dtype))


def _module(params, body):
    """A one-function Relax module: ``params`` is [(name, shape)], ``body(bb, *vars)``
    returns the output expression."""
    bb = relax.BlockBuilder()
    vs = [_var(name, shape) for name, shape in params]
    with bb.function("main", vs):
        with bb.dataflow():
            out = bb.emit_output(body(bb, *vs))
        bb.emit_func_output(out)
    return bb.get()


def _executable(mod, target="llvm", before=()):
    """Compiled with mlclab's pipeline, optionally preceded by the Relax passes ``before``."""
    return tvm.compile(mod, target=resolve_target(target),
                       relax_pipeline=tvm.transform.Sequential([*before, *build_passes(target)]))


def _build(mod, target="llvm", before=()):
    """``_executable``'s ``main`` as a function of numpy arrays."""
    ex = _executable(mod, target, before)
    fn = relax.VirtualMachine(ex, tvm.cpu())["main"]
    return lambda *arrays: fn(*[tvm.runtime.tensor(np.array(a, order="C")) for a in arrays]).numpy()


def _scheduled(mod, target="llvm"):
    """The module right after mlclab's schedule pass."""
    passes = build_passes(target)
    names = [p.info.name for p in passes]
    return tvm.transform.Sequential(passes[: names.index("mlclab.ScheduleCPU") + 1])(mod)


def _primfuncs(mod):
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)}


def _data(*shapes):
    return [RNG.standard_normal(s).astype("float32") for s in shapes]


def _check(params, body, reference, terms=1):
    """Compile, run on random data and compare with numpy (in float64)."""
    mod = _module(params, body)
    arrays = _data(*[s for _, s in params])
    got = _build(mod)(*arrays)
    want = reference(*[a.astype("float64") for a in arrays])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * max(1.0, np.sqrt(terms)))
    return mod


# ---------------------------------------------------------------------------------------
# correctness of every scheduled operator kind, on several shapes

MATMUL_SHAPES = [(512, 512, 512), (64, 784, 128), (64, 128, 10), (7, 13, 5), (1, 31, 1),
                 (97, 61, 67), (32, 16, 48), (4, 8, 28)]


@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
def test_matmul_relu_matches_numpy(m, k, n):
    _check([("a", (m, k)), ("b", (k, n))],
           lambda bb, a, b: R.nn.relu(bb.emit(R.matmul(a, b))),
           lambda a, b: np.maximum(a @ b, 0), terms=k)


@pytest.mark.parametrize("m,k,n", [(64, 784, 128), (64, 128, 10), (5, 7, 3), (33, 40, 17)])
def test_linear_with_bias_matches_numpy(m, k, n):
    _check([("x", (m, k)), ("w", (n, k)), ("b", (n,))],
           lambda bb, x, w, b: R.linear(x, w, b),
           lambda x, w, b: x @ w.T + b, terms=k)


@pytest.mark.parametrize("m,k,n", [(64, 784, 128), (64, 128, 10), (5, 7, 3), (33, 40, 17),
                                   (12, 64, 48), (8, 31, 1)])
def test_nt_matmul_with_packed_panels_matches_numpy(m, k, n):
    # FuseTransposeMatmul turns linear's permute_dims + matmul into one x @ w.T kernel,
    # whose weight the schedule transposes into packed panels.
    mod = _module([("x", (m, k)), ("w", (n, k)), ("b", (n,))],
                  lambda bb, x, w, b: R.nn.relu(bb.emit(R.linear(x, w, b))))
    x, w, b = _data((m, k), (n, k), (n,))
    got = _build(mod, before=[relax.transform.FuseTransposeMatmul()])(x, w, b)
    want = np.maximum(x.astype("float64") @ w.T + b, 0)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * np.sqrt(k))


def test_nt_matmul_is_packed_not_left_naive():
    mod = relax.transform.FuseTransposeMatmul()(_module(
        [("x", (64, 784)), ("w", (128, 784))], lambda bb, x, w: R.linear(x, w)))
    (func,) = _primfuncs(_legalized(mod)).values()
    text = schedule_primfunc(func, lanes=8, strict=True).script()
    assert 'sblock("w_global")' in text  # the packed panel
    assert "T.vectorized(T.int64(16))" in text and "T.unroll(T.int64(4))" in text


def test_symbolic_nt_matmul_matches_numpy():
    n = tirx.Var("n", "int64")
    mod = _module([("x", (n, 100)), ("w", (48, 100))], lambda bb, x, w: R.linear(x, w))
    run = _build(mod, before=[relax.transform.FuseTransposeMatmul()])
    for size in (1, 6, 33):
        x, w = _data((size, 100), (48, 100))
        np.testing.assert_allclose(run(x, w), x.astype("float64") @ w.T, rtol=RTOL, atol=ATOL * 10)


@pytest.mark.parametrize("shapes", [((3, 16, 24), (3, 24, 32)), ((2, 5, 7), (7, 11)),
                                    ((4, 3, 17, 8), (4, 3, 8, 64))])
def test_batched_and_broadcast_matmul_matches_numpy(shapes):
    sa, sb = shapes
    _check([("a", sa), ("b", sb)], lambda bb, a, b: R.matmul(a, b), lambda a, b: a @ b,
           terms=sa[-1])


def test_matmul_epilogue_chain_matches_numpy():
    _check([("a", (64, 96)), ("b", (96, 48)), ("c", (48,))],
           lambda bb, a, b, c: R.sigmoid(
               bb.emit(R.nn.relu(bb.emit(R.add(bb.emit(R.matmul(a, b)), c))))),
           lambda a, b, c: 1 / (1 + np.exp(-np.maximum(a @ b + c, 0))), terms=96)


@pytest.mark.parametrize("shape", [(2048, 16), (7, 13), (1,), (17, 1, 3), (2, 3, 5, 7), ()])
def test_fused_elementwise_chain_matches_numpy(shape):
    _check([("a", shape), ("b", shape), ("c", shape)],
           lambda bb, a, b, c: R.nn.relu(bb.emit(R.add(bb.emit(R.multiply(a, b)), c))),
           lambda a, b, c: np.maximum(a * b + c, 0))


def test_broadcast_and_transpose_match_numpy():
    _check([("a", (33, 64)), ("b", (64,))],
           lambda bb, a, b: R.permute_dims(bb.emit(R.exp(bb.emit(R.subtract(a, b))))),
           lambda a, b: np.exp(a - b).T)
    _check([("a", (6, 35))],
           lambda bb, a: R.reshape(bb.emit(R.tanh(a)), (5, 42)),
           lambda a: np.tanh(a).reshape(5, 42))


@pytest.mark.parametrize("shape,axes", [((128, 784), None), ((16, 24, 8), (2, 0, 1)),
                                        ((8, 40, 16), (0, 2, 1)), ((24, 9), None)])
def test_transposes_match_numpy(shape, axes):
    _check([("x", shape)], lambda bb, x: R.permute_dims(x, axes),
           lambda x: np.transpose(x, axes))


def test_transpose_gets_square_tiles():
    mod = _legalized(_module([("w", (128, 784))], lambda bb, w: R.permute_dims(w)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=8, strict=True).script()
    assert "T.unroll(T.int64(8))" in text and "T.vectorized(T.int64(8))" in text


# GPT-2's keys after 129 tokens, scaled and transposed for q @ k.T (and reshaped to heads, as
# its decoding step does: the reshape leaves ``(v // 129 + u) % 64`` in the read); a plain 2-D
# transpose with no outer loop to share; rows of 17 and 33 (one whole tile and a tail); a
# tail wider than half a vector.
@pytest.mark.parametrize("shape,axes,heads", [
    ((1, 12, 129, 64), (0, 1, 3, 2), None), ((1, 12, 129, 64), (0, 1, 3, 2), (12, 64, 129)),
    ((300, 16), None, None), ((5, 17, 8), (0, 2, 1), None), ((3, 33, 16), (0, 2, 1), None),
    ((2, 30, 8), (0, 2, 1), None)])
def test_transposes_with_a_row_tail_are_tiled_and_exact(shape, axes, heads):
    scale = 0.3535533905932738

    def body(bb, k):
        scaled = R.multiply(bb.emit(R.permute_dims(k, axes)), relax.const(scale, "float32"))
        return R.reshape(bb.emit(scaled), heads) if heads else scaled

    mod = _module([("k", shape)], body)
    (x,) = _data(shape)
    want = np.transpose(x, axes) * np.float32(scale)
    np.testing.assert_array_equal(_build(mod)(x), want.reshape(heads) if heads else want)
    for func in _primfuncs(_legalized(mod)).values():
        text = schedule_primfunc(func, lanes=8, strict=True).script()
        assert "T.unroll(T.int64(8))" in text and "T.vectorized(T.int64(8))" in text, text


@pytest.mark.parametrize("n,c,h,w,o,kernel,stride,pad", [
    (1, 3, 32, 32, 8, 3, 1, 1), (2, 4, 28, 28, 6, 5, 1, 2), (1, 3, 17, 13, 5, 3, 2, 0),
    (1, 2, 7, 7, 3, 1, 1, 0), (1, 1, 11, 29, 2, 3, 1, 1)])
def test_conv2d_matches_numpy(n, c, h, w, o, kernel, stride, pad):
    def reference(x, wt):
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        oh = (h + 2 * pad - kernel) // stride + 1
        ow = (w + 2 * pad - kernel) // stride + 1
        out = np.zeros((n, o, oh, ow), "float64")
        for ry in range(kernel):
            for rx in range(kernel):
                patch = xp[:, :, ry:ry + stride * oh:stride, rx:rx + stride * ow:stride]
                out += np.einsum("nchw,oc->nohw", patch, wt[:, :, ry, rx])
        return np.maximum(out, 0)

    _check([("x", (n, c, h, w)), ("w", (o, c, kernel, kernel))],
           lambda bb, x, wt: R.nn.relu(bb.emit(R.nn.conv2d(x, wt, strides=stride, padding=pad))),
           reference, terms=c * kernel * kernel)


def _pool(x, k, s, fn):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    windows = [x[:, :, i:i + s * oh:s, j:j + s * ow:s] for i in range(k) for j in range(k)]
    return fn(np.stack(windows), axis=0)


@pytest.mark.parametrize("shape,k,s", [((1, 8, 32, 32), 2, 2), ((2, 3, 13, 11), 3, 2),
                                       ((1, 1, 5, 5), 1, 1)])
def test_pooling_matches_numpy(shape, k, s):
    _check([("x", shape)], lambda bb, x: R.nn.max_pool2d(x, pool_size=k, strides=s),
           lambda x: _pool(x, k, s, np.max))
    _check([("x", shape)], lambda bb, x: R.nn.avg_pool2d(x, pool_size=k, strides=s),
           lambda x: _pool(x, k, s, np.mean))


@pytest.mark.parametrize("shape", [(64, 128), (7, 13), (3, 1, 97)])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_reductions_match_numpy(shape, axis):
    terms = int(np.prod(shape)) if axis is None else shape[axis]
    _check([("x", shape)], lambda bb, x: R.sum(x, axis=axis), lambda x: x.sum(axis=axis), terms)
    _check([("x", shape)], lambda bb, x: R.mean(x, axis=axis, keepdims=True),
           lambda x: x.mean(axis=axis, keepdims=True), terms)
    _check([("x", shape)], lambda bb, x: R.max(x, axis=axis), lambda x: x.max(axis=axis))


@pytest.mark.parametrize("shape", [(64, 10), (3, 7, 31)])
def test_softmax_matches_numpy(shape):
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    _check([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=-1), softmax)


def test_symbolic_sizes_match_numpy_for_each_size():
    n = tirx.Var("n", "int64")
    mod = _module([("x", (n, 784)), ("w", (128, 784)), ("b", (128,)), ("v", (n, 128))],
                  lambda bb, x, w, b, v: R.add(bb.emit(R.nn.relu(bb.emit(R.linear(x, w, b)))), v))
    run = _build(mod)
    for size in (1, 5, 64, 67):
        x, w, b, v = _data((size, 784), (128, 784), (128,), (size, 128))
        want = np.maximum(x.astype("float64") @ w.T + b, 0) + v
        np.testing.assert_allclose(run(x, w, b, v), want, rtol=RTOL, atol=ATOL * np.sqrt(784))


def test_symbolic_elementwise_and_reduction_match_numpy():
    n, m = tirx.Var("n", "int64"), tirx.Var("m", "int64")
    mod = _module([("x", (n, m)), ("y", (n, m))],
                  lambda bb, x, y: R.sum(bb.emit(R.exp(bb.emit(R.multiply(x, y)))), axis=1))
    run = _build(mod)
    for shape in ((1, 1), (3, 17), (40, 64)):
        x, y = _data(shape, shape)
        want = np.exp(x.astype("float64") * y).sum(axis=1)
        np.testing.assert_allclose(run(x, y), want, rtol=RTOL, atol=ATOL * np.sqrt(shape[1]))


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int8"])
def test_other_dtypes_match_numpy(dtype):
    # The vector width is chosen for float32; other widths must still be exact (integers)
    # or within their own precision.
    bb = relax.BlockBuilder()
    a, b = _var("a", (37, 64), dtype), _var("b", (64, 48), dtype)
    with bb.function("main", [a, b]):
        with bb.dataflow():
            mm = bb.emit(R.matmul(a, b))
            out = bb.emit_output(R.add(mm, mm))
        bb.emit_func_output(out)
    rng = np.random.default_rng(3)
    x, y = (rng.integers(-3, 4, size=s).astype(dtype) for s in ((37, 64), (64, 48)))
    got = _build(bb.get())(x, y)
    want = 2 * (x.astype("float64") @ y.astype("float64"))
    if dtype == "int8":
        want = want.astype(np.int64).astype(np.int8)  # numpy's wrap-around
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=1e-3)


def test_zero_size_tensors_build_and_run():
    mod = _module([("a", (0, 8)), ("b", (8, 16))],
                  lambda bb, a, b: R.nn.relu(bb.emit(R.matmul(a, b))))
    assert _build(mod)(*_data((0, 8), (8, 16))).shape == (0, 16)


def test_generic_target_gives_numpy_results_too():
    # {"kind": "llvm"} is generic x86-64: 4-wide vectors, no FMA.
    mod = _module([("a", (37, 41)), ("b", (41, 64))], lambda bb, a, b: R.matmul(a, b))
    a, b = _data((37, 41), (41, 64))
    np.testing.assert_allclose(_build(mod, {"kind": "llvm"})(a, b), a.astype("float64") @ b,
                               rtol=RTOL, atol=ATOL * np.sqrt(41))


# ---------------------------------------------------------------------------------------
# the schedules really apply


def _legalized(mod):
    from tvm.relax.backend import cpu_generic

    return tvm.transform.Sequential(cpu_generic.legalize_passes(None))(mod)


@pytest.mark.parametrize("params,body", [
    ([("a", (512, 512)), ("b", (512, 512))], lambda bb, a, b: R.nn.relu(bb.emit(R.matmul(a, b)))),
    ([("x", (64, 784)), ("w", (128, 784)), ("b", (128,))], lambda bb, x, w, b: R.linear(x, w, b)),
    ([("x", (1, 3, 32, 32)), ("w", (8, 3, 3, 3))], lambda bb, x, w: R.nn.conv2d(x, w, padding=1)),
    ([("a", (2048, 2048)), ("b", (2048, 2048))],
     lambda bb, a, b: R.nn.relu(bb.emit(R.multiply(a, b)))),
    ([("x", (64, 128))], lambda bb, x: R.nn.softmax(x)),
    ([("x", (1, 32, 128, 128))], lambda bb, x: R.nn.max_pool2d(x, pool_size=2, strides=2)),
])
def test_schedule_applies_without_falling_back(params, body):
    for name, func in _primfuncs(_legalized(_module(params, body))).items():
        scheduled = schedule_primfunc(func, lanes=8, strict=True)
        assert scheduled.attrs["tirx.is_scheduled"], name
        text = scheduled.script()
        assert "T.parallel" in text or "T.vectorized" in text, name


def test_matmul_gets_a_register_tile():
    mod = _legalized(_module([("a", (512, 512)), ("b", (512, 512))],
                             lambda bb, a, b: R.nn.relu(bb.emit(R.matmul(a, b)))))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=8, strict=True).script()
    assert "T.unroll(T.int64(4))" in text and "T.vectorized(T.int64(16))" in text
    assert "T.parallel(" in text
    assert 'sblock("b_global")' in text  # B's column panels are packed
    # The epilogue runs per tile: relu reads the tile buffer inside the parallel loop.
    assert text.index("T.max(") > text.index("T.parallel(")


def test_conv2d_tile_rows_are_output_channels():
    # Each input vector loaded is then reused by four output channels; tiling output rows
    # instead would load a different input vector for every row.
    mod = _legalized(_module([("x", (1, 16, 64, 64)), ("w", (32, 16, 3, 3))],
                             lambda bb, x, w: R.nn.conv2d(x, w, padding=1)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=8, strict=True).script()
    assert "for ff_1 in T.unroll(T.int64(4))" in text
    assert "for xx_1 in T.vectorized(T.int64(16))" in text


def test_avx512_schedules_compile():
    # This machine may lack AVX-512, so the code is only compiled, not run: the 16-lane
    # tiles (4 x 32 outputs) must build for an AVX-512 CPU such as the CI machines'.
    target = {"kind": "llvm", "mcpu": "znver5"}
    mod = _module([("x", (64, 784)), ("w", (128, 784)), ("b", (128,)), ("c", (1, 8, 32, 32)),
                   ("k", (16, 8, 3, 3))],
                  lambda bb, x, w, b, c, k: relax.Tuple([
                      bb.emit(R.nn.relu(bb.emit(R.linear(x, w, b)))),
                      bb.emit(R.nn.conv2d(c, k, padding=1))]))
    lowered = _scheduled(relax.transform.FuseTransposeMatmul()(mod), target)
    texts = [f.script() for f in _primfuncs(lowered).values()]
    assert any("T.vectorized(T.int64(32))" in t for t in texts)
    tvm.compile(mod, target=resolve_target(target),
                relax_pipeline=tvm.transform.Sequential(build_passes(target)))


def test_vector_width_follows_the_target():
    from tvm.target import Target

    assert vector_lanes(Target({"kind": "llvm", "mcpu": "znver5"})) == 16
    assert vector_lanes(Target({"kind": "llvm", "mcpu": "znver3"})) == 8
    assert vector_lanes(Target("llvm")) == 4


def test_pass_is_idempotent_and_leaves_its_input_alone():
    mod = _legalized(_module([("a", (64, 64)), ("b", (64, 64))], lambda bb, a, b: R.matmul(a, b)))
    before = mod.script()
    target = resolve_target("llvm")
    once = schedule_cpu(target)(mod)
    assert mod.script() == before
    assert once.script() != before
    assert schedule_cpu(target)(once).script() == once.script()


def test_a_refused_rule_falls_back_to_a_simpler_one_and_says_why(monkeypatch):
    from mlclab.backend.schedules import register_tile

    mod = _legalized(_module([("a", (128, 128)), ("b", (128, 128))],
                             lambda bb, a, b: R.matmul(a, b)))
    (func,) = _primfuncs(mod).values()

    def refuse(*args, **kwargs):
        raise ValueError("refused")

    monkeypatch.setattr(register_tile, "_tile_reduction", refuse)
    scheduled = schedule_primfunc(func, lanes=8, strict=True)
    text = scheduled.script()
    assert "T.parallel(" in text and "T.unroll" not in text  # the plain parallel rule
    rule, declined = schedule_decision(scheduled)
    assert rule == "parallel_loops"
    assert "register_tile_packed: ValueError: refused" in declined
    assert "register_tile: ValueError: refused" in declined
    assert declined[0].startswith("blocked_layout_transform: not a copy")


def test_unschedulable_function_is_left_unchanged_with_the_reasons():
    # Plain TIR loops without blocks: nothing for a block schedule to work on.
    from tvm.script import tirx as T

    @T.prim_func
    def loops_only(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
        for i in range(8):
            b[i] = a[i] + T.float32(1)

    left = schedule_primfunc(loops_only, lanes=8)
    assert left.body.same_as(loops_only.body)
    assert "tirx.is_scheduled" not in left.attrs
    rule, declined = schedule_decision(left)
    assert rule == UNSCHEDULED
    assert "parallel_loops: no blocks to schedule (plain loops)" in declined
    with pytest.raises(NotScheduled, match="parallel_loops: no blocks to schedule"):
        schedule_primfunc(loops_only, lanes=8, strict=True)


def test_host_target_names_this_cpu():
    target = resolve_target("llvm")
    assert target.kind.name == "llvm"
    assert resolve_target("llvm") is target  # resolved once per process
    assert resolve_target({"kind": "llvm"}).attrs.get("mcpu") is None


# ---------------------------------------------------------------------------------------
# the rule list: which rule scheduled each kernel, and why the others declined


def _decisions(mod):
    return {name: schedule_decision(f) for name, f in _primfuncs(_scheduled(mod)).items()}


def test_every_kernel_records_the_rule_that_scheduled_it():
    mod = _module([("a", (64, 96)), ("b", (96, 128))],
                  lambda bb, a, b: R.nn.softmax(bb.emit(R.nn.relu(bb.emit(R.matmul(a, b))))))
    decisions = _decisions(mod)
    assert all(d is not None for d in decisions.values()), decisions
    (matmul,) = [d for n, d in decisions.items() if "matmul" in n]
    (softmax,) = [d for n, d in decisions.items() if "softmax" in n]
    assert matmul[0] == "register_tile_packed"
    assert softmax[0] == "row_chain"
    # softmax's max and sum are two reductions: each register-tile rule says so
    assert "register_tile_packed: 2 reductions, not one" in softmax[1]
    assert [reason.split(":")[0] for reason in softmax[1]] == [
        "blocked_layout_transform", "blocked_max_pool2d", "blocked_conv2d",
        "blocked_depthwise_conv2d", "pointwise_conv2d", "outer_axes_reduction",
        "register_tile_prepacked",
        "register_tile_padded", "register_tile_packed", "register_tile"]
    a, b = _data((64, 96), (96, 128))
    z = np.maximum(a.astype("float64") @ b, 0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_build(mod)(a, b), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_a_new_rule_is_one_class_and_one_list_entry():
    from mlclab.backend.schedules import CPU_RULES, CPURule, Declined

    class OnlyAdds(CPURule):
        """Vectorize an elementwise add along its last axis, and nothing else."""

        name = "only_adds"

        def is_applicable(self, func):
            return None if "add" in func.script() else "not an add"

        def schedule(self, sch, blocks, lanes):
            if len(blocks) != 1:
                raise Declined("not one block")
            *_, inner = sch.get_loops(blocks[0])
            sch.vectorize(sch.split(inner, factors=[None, lanes])[1])

    rules = (OnlyAdds(), *CPU_RULES)
    target = resolve_target("llvm")
    params = [("x", (16, 64)), ("y", (16, 64))]
    adds = schedule_cpu(target, rules=rules)(
        _legalized(_module(params, lambda bb, x, y: R.add(x, y))))
    muls = schedule_cpu(target, rules=rules)(
        _legalized(_module(params, lambda bb, x, y: R.multiply(x, y))))
    (add,) = _primfuncs(adds).values()
    (mul,) = _primfuncs(muls).values()
    assert schedule_decision(add) == ("only_adds", [])
    rule, declined = schedule_decision(mul)
    assert rule == "parallel_loops" and declined[0] == "only_adds: not an add"
    ex = tvm.compile(adds, target=target)
    x, y = _data((16, 64), (16, 64))
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x),
                                                      tvm.runtime.tensor(y)).numpy()
    np.testing.assert_allclose(got, x + y, rtol=1e-6)


def test_the_rules_are_dlight_schedule_rules():
    # TVM's own driver accepts mlclab's rule list unchanged.
    from tvm.s_tir import dlight

    mod = _legalized(_module([("a", (64, 64)), ("b", (64, 64))], lambda bb, a, b: R.matmul(a, b)))
    from mlclab.backend.schedules import CPU_RULES

    with resolve_target("llvm"):
        out = dlight.ApplyDefaultSchedule(*CPU_RULES)(mod)
    (func,) = _primfuncs(out).values()
    assert func.attrs["tirx.is_scheduled"]
    assert "T.unroll(" in func.script()  # the register tile, first rule that applies


# ---------------------------------------------------------------------------------------
# extents no tile divides: padded, not left scalar


@pytest.mark.parametrize("b,m,k,n", [(3, 197, 64, 197), (3, 197, 197, 64), (1, 37, 16, 53)])
def test_prime_batched_matmul_is_padded_to_whole_tiles(b, m, k, n):
    # DeiT's attention: 197 tokens is a prime, which no tile divides.
    params = [("q", (b, m, k)), ("kt", (b, k, n))]
    mod = _check(params, lambda bb, q, kt: R.matmul(q, kt), lambda q, kt: q @ kt, terms=k)
    ((name, (rule, declined)),) = _decisions(mod).items()
    assert rule == "register_tile_padded", (name, declined)
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert re.search(r"T\.unroll\(T\.int64\([4-6]\)\)", func.script())  # rows per tile, not one


def test_linear_over_a_prime_token_count_matches_numpy():
    params = [("x", (197, 192)), ("w", (576, 192)), ("b", (576,))]
    mod = _module(params, lambda bb, x, w, b: R.linear(x, w, b))
    x, w, b = _data((197, 192), (576, 192), (576,))
    got = _build(mod, before=[relax.transform.FuseTransposeMatmul()])(x, w, b)
    np.testing.assert_allclose(got, x.astype("float64") @ w.T + b, rtol=RTOL,
                               atol=ATOL * np.sqrt(192))


def test_divisible_matmul_needs_no_padding():
    mod = _module([("a", (64, 96)), ("b", (96, 128))], lambda bb, a, b: R.matmul(a, b))
    ((_, (rule, declined)),) = _decisions(mod).items()
    assert rule == "register_tile_packed"
    assert "register_tile_padded: the extents divide into register tiles: no padding needed" \
        in declined


def test_gelu_is_vectorized_and_matches_pytorch():
    import torch
    mod = _module([("x", (8, 300))], lambda bb, x: R.nn.gelu(x))
    x = (RNG.standard_normal((8, 300)) * 4).astype("float32")
    x[0, :5] = [np.nan, np.inf, 0.0, 1e30, -1e30]
    got = _build(mod)(x)
    want = torch.nn.functional.gelu(torch.from_numpy(x.astype("float64"))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
    (func,) = _primfuncs(_scheduled(mod)).values()
    text = func.script()
    assert "T.erf" not in text and "T.vectorized" in text  # no scalar libm call per element


@pytest.mark.parametrize("m,k,n", [(197, 192, 768), (7, 13, 48)])
def test_a_linear_layer_with_gelu_is_one_register_tiled_kernel(m, k, n):
    # GELU was two blocks (the scaled input stored, then the GELU reading it once per
    # polynomial term): after a matmul, two epilogue blocks, which every register tile
    # declined, and 197x192 -> 768 ran as plain loops in 18 ms (0.23 ms tiled).
    import torch
    params = [("x", (m, k)), ("w", (n, k)), ("b", (n,))]
    mod = _module(params, lambda bb, x, w, b: R.nn.gelu(bb.emit(R.linear(x, w, b))))
    x, w, b = _data((m, k), (n, k), (n,))
    got = _build(mod, before=[relax.transform.FuseTransposeMatmul()])(x, w, b)
    h = torch.from_numpy(x.astype("float64") @ w.T.astype("float64") + b)
    want = torch.nn.functional.gelu(h).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * np.sqrt(k))
    passes = build_passes("llvm")
    names = [p.info.name for p in passes]
    scheduled = tvm.transform.Sequential(
        [relax.transform.FuseTransposeMatmul(),
         *passes[: names.index("mlclab.ScheduleCPU") + 1]])(mod)
    ((rule, declined),) = [schedule_decision(f) for f in _primfuncs(scheduled).values()]
    assert rule.startswith("register_tile"), declined
    assert "T.erf" not in str(scheduled)


@pytest.mark.parametrize("shape", [(3, 197, 197), (1, 197, 192), (2, 64, 40), (3, 192, 197),
                                   (2, 48, 64)])
def test_row_reductions_with_rows_split_off_match_numpy_on_every_thread_count(shape):
    # rows in the lanes of a vector, the rows no vector fills split off: run in parallel,
    # each thread's accumulators were written back over rows another thread had not
    # finished (softmax gave inf, layer norm garbage) -- in a subprocess per thread count;
    # 48 rows of 64: the passes of a row chain, groups of rows in parallel
    code = f"""
import sys, numpy as np, tvm
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import test_schedules as T
x = (np.random.default_rng(0).standard_normal({shape}) * 10).astype("float32")
z = x.astype("float64")
e = np.exp(z - z.max(-1, keepdims=True))
got = T._build(T._module([("x", x.shape)], lambda bb, v: T.R.nn.softmax(v, axis=-1)))(x)
np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
ones = tvm.relax.const(np.ones(x.shape[-1], "float32"))
zeros = tvm.relax.const(np.zeros(x.shape[-1], "float32"))
got = T._build(T._module([("x", x.shape)],
                         lambda bb, v: T.R.nn.layer_norm(v, ones, zeros, axes=[-1])))(x)
m = z.mean(-1, keepdims=True)
want = (z - m) / np.sqrt(((z - m) ** 2).mean(-1, keepdims=True) + 1e-5)
np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
"""
    for threads in ("1", "2", "3"):
        env = dict(os.environ, MLCLAB_NUM_THREADS=threads)
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, (threads, run.stderr[-3000:])


@pytest.mark.parametrize("shape,axis", [((3, 197, 197), -1), ((2, 5, 7), 1), ((4, 64), 0)])
def test_softmax_with_a_vectorizable_exp_matches_numpy(shape, axis):
    mod = _module([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=axis))
    x = (RNG.standard_normal(shape) * 10).astype("float32")
    x.flat[0] = np.nan           # its row is NaN, as numpy's
    x.flat[-1] = -np.inf         # exp(-inf) is 0
    got = _build(mod)(x)
    z = x.astype("float64")
    with np.errstate(invalid="ignore"):
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        want = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert "T.exp" not in func.script()  # no libm call per element



# ---------------------------------------------------------------------------------------
# a row of the register tile is whole vectors, or at most one vector: never 24 floats


@pytest.mark.parametrize("n", [19, 20, 24, 30, 36, 40])
def test_attention_head_widths_match_numpy(n):
    # MobileViT's heads are 24, 30 and 36 wide: attention's P @ V has that many columns.
    _check([("p", (4, 33, 64)), ("v", (4, 64, n))], lambda bb, p, v: R.matmul(p, v),
           lambda p, v: p @ v, terms=64)


@pytest.mark.parametrize("n,lanes,width", [(24, 16, 32), (30, 16, 32), (36, 16, 12),
                                           (20, 16, 32), (40, 16, 10), (12, 8, 16),
                                           (32, 16, 32), (10, 16, 10), (19, 16, 32)])
def test_tile_rows_are_never_between_one_and_two_vectors(n, lanes, width):
    # A 24-float vector on AVX-512 is split by LLVM into pieces it keeps in memory: P @ V
    # with 24 columns ran 100x slower than with 32.  Between one and two vectors, the
    # columns are padded to two (a row of half a vector holds half the accumulators: N = 24
    # took 1.28 ms in rows of 12, 0.72 padded to 32); above two, whole vectors or a divisor.
    mod = _legalized(_module([("p", (4, 64, 64)), ("v", (4, 64, n))],
                             lambda bb, p, v: R.matmul(p, v)))
    (func,) = _primfuncs(mod).values()
    scheduled = schedule_primfunc(func, lanes=lanes, strict=True)
    text = scheduled.script()
    widths = {int(w) for w in re.findall(r"T\.vectorized\(T\.int64\((\d+)\)\)", text)}
    assert width in widths, (widths, text)
    padded = lanes < n < 2 * lanes and n % lanes
    assert (schedule_decision(scheduled)[0] == "register_tile_padded") == bool(padded)
    update = text[text.index("for k in"):]
    assert f"T.vectorized(T.int64({width}))" in update


# ---------------------------------------------------------------------------------------
# copies whose input position is a division of the output's: vectors along the row


def _qkv_split(bb, x, n, heads, width):
    """timm's attention: (n, 3 * heads * width) -> (3, heads, n, width), q k v apart."""
    shaped = bb.emit(R.reshape(x, (n, 3, heads, width)))
    return R.permute_dims(shaped, [1, 2, 0, 3])


@pytest.mark.parametrize("n,heads,width", [(256, 4, 24), (64, 4, 30), (16, 4, 36), (7, 3, 5),
                                           (33, 2, 17), (8, 1, 4)])
def test_head_split_copies_match_numpy(n, heads, width):
    _check([("x", (n, 3 * heads * width))], lambda bb, x: _qkv_split(bb, x, n, heads, width),
           lambda x: x.reshape(n, 3, heads, width).transpose(1, 2, 0, 3))


def test_head_split_is_vectorized_along_its_rows():
    # Vectors of 32 across rows of 24 indexed the input with a division per lane: MobileViT's
    # qkv split ran at 11 GB/s; along the rows, in vectors of 12, at 78.
    mod = _legalized(_module([("x", (256, 288))], lambda bb, x: _qkv_split(bb, x, 256, 4, 24)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=16, strict=True).script()
    widths = {int(w) for w in re.findall(r"T\.vectorized\(T\.int64\((\d+)\)\)", text)}
    assert widths == {12}, text


@pytest.mark.parametrize("shape", [(3, 197, 197), (2, 7, 5)])
def test_a_row_reduction_over_a_prime_row_count_is_not_padded(shape):
    # SDPA's safe softmax asks, per row of scores, whether any is finite: one value per row.
    # Padding 197 rows to whole tiles only copied the whole input first (90 us -> 6 us).
    mod = _check([("x", shape)], lambda bb, x: R.max(x, axis=-1, keepdims=True),
                 lambda x: x.max(axis=-1, keepdims=True))
    ((name, (rule, declined)),) = _decisions(mod).items()
    assert rule != "register_tile_padded", (name, declined)


# ------------------------------------------------- reductions along rows, several at once
ROW_REDUCTIONS = [
    ("softmax", (4, 8, 33), lambda bb, x: R.nn.softmax(x, axis=-1)),
    ("softmax", (2, 3, 7, 13), lambda bb, x: R.nn.softmax(x, axis=-1)),
    ("softmax", (3, 197, 197), lambda bb, x: R.nn.softmax(x, axis=-1)),
    ("sum", (6, 300), lambda bb, x: R.sum(x, axis=-1)),
    ("mean", (5, 4, 7), lambda bb, x: R.mean(x, axis=-1, keepdims=True)),
    ("max", (7, 5, 31), lambda bb, x: R.max(x, axis=-1)),
    ("layer_norm", (1, 13, 24), lambda bb, x: R.nn.layer_norm(
        x, relax.const(np.linspace(0.5, 2, 24, dtype="float32")),
        relax.const(np.linspace(-1, 1, 24, dtype="float32")), axes=[-1])),
    # rows in the lanes of a vector: whole vectors of rows, and a tail split off
    ("layer_norm", (1, 197, 192), lambda bb, x: R.nn.layer_norm(
        x, relax.const(np.linspace(0.5, 2, 192, dtype="float32")),
        relax.const(np.linspace(-1, 1, 192, dtype="float32")), axes=[-1])),
    ("sum", (40, 300), lambda bb, x: R.sum(x, axis=-1)),
    ("max", (3, 37, 31), lambda bb, x: R.max(x, axis=-1)),
    ("mean", (2, 32, 24), lambda bb, x: R.mean(x, axis=-1, keepdims=True)),
]


def _numpy_row_reduction(op, x):
    if op == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if op == "layer_norm":
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        n = x.shape[-1]
        return (x - mean) / np.sqrt(var + 1e-5) * np.linspace(0.5, 2, n) + np.linspace(-1, 1, n)
    return {"sum": lambda: x.sum(axis=-1), "mean": lambda: x.mean(axis=-1, keepdims=True),
            "max": lambda: x.max(axis=-1)}[op]()


def _built_with_row_group(mod, group: int):
    from mlclab.backend.schedules import row_reductions

    saved, row_reductions.ROW_GROUP = row_reductions.ROW_GROUP, group
    try:
        return _build(mod)
    finally:
        row_reductions.ROW_GROUP = saved


@pytest.mark.parametrize("op,shape,body", ROW_REDUCTIONS,
                         ids=[f"{op}-{'x'.join(map(str, s))}" for op, s, _ in ROW_REDUCTIONS])
def test_rows_reduced_together_give_one_row_at_a_times_bits(op, shape, body):
    # Interleaved rows keep each row's own order of terms: bit for bit the old schedule's
    # results (ROW_GROUP 0: one row at a time), and numpy's within float32 rounding.
    mod = _module([("x", shape)], body)
    x = RNG.standard_normal(shape).astype("float32")
    x.reshape(-1, shape[-1])[1, 3] = 40.0        # one large term: an order would show
    together = _built_with_row_group(mod, 4)(x)
    alone = _built_with_row_group(mod, 0)(x)
    assert np.array_equal(together.view(np.uint32), alone.view(np.uint32))
    want = _numpy_row_reduction(op, x.astype("float64"))
    np.testing.assert_allclose(together, want, rtol=RTOL, atol=ATOL * np.sqrt(shape[-1]))


@pytest.mark.parametrize("shape,lanes,whole", [((3, 197, 197), 16, 192), ((1, 13, 24), 8, 8),
                                               ((2, 32, 33), 16, 32)])
def test_a_softmax_reduces_its_rows_in_the_lanes_of_a_vector(shape, lanes, whole):
    # Innermost row axes of at least a vector's lanes: that many rows in the lanes of one
    # vector (each lane its own row's terms in order), the rows that do not fill a vector
    # split off into a loop of their own (no predicate inside the vector loop).
    mod = _legalized(_module([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=-1)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=lanes, strict=True).script()
    assert text.count('scope="local"') == 2, text          # the max and the sum
    assert text.count(f"T.vectorized(T.int64({lanes}))") >= 4, text  # init and update, twice
    tail = shape[-2] - whole
    assert (f"range(T.int64({whole}), T.int64({shape[-2]}))" in text) == bool(tail), text


def test_a_softmax_over_a_long_row_no_vector_divides_builds_in_whole_vectors():
    # GPT-2's 50,257 logits: the exp and the division were one vector of the whole row,
    # which TVM's code generator refused from 32,768 lanes on (the build fell back to TVM's
    # plain pipeline); now whole vectors and the rest split off.
    shape = (2, 32771)
    mod = _module([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=-1))
    x = (RNG.standard_normal(shape) * 3).astype("float32")
    got = _build(mod)(x)
    e = np.exp(x.astype("float64") - x.max(axis=-1, keepdims=True))
    # the row's float32 sum of 32,771 terms: its rounding grows like sqrt(terms)
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=2e-4, atol=1e-9)
    text = "\n".join(f.script() for f in _primfuncs(_scheduled(mod)).values())
    widths = {int(w) for w in re.findall(r"T\.vectorized\(T\.int64\((\d+)\)\)", text)}
    assert max(widths) <= 2 * vector_lanes(resolve_target("llvm")), widths


@pytest.mark.parametrize("shape,rows,partial", [((4, 8, 33), 4, False),
                                                ((3, 197, 197), 4, True),
                                                ((1, 13, 24), 4, True),
                                                ((6, 3, 9), 3, False)])
def test_a_softmax_reduces_its_rows_in_groups(shape, rows, partial, monkeypatch):
    # Without rows in lanes (or fewer rows than lanes): groups of 4 along the innermost row
    # axis 4 divides (8 -> 4), else along the innermost one with a partial last group (197
    # tokens, a prime: 4 chains beat its 3 heads' 3), else a smaller divisor (3 rows of 9);
    # the group's accumulators are a local buffer, its rows an unrolled loop inside each
    # reduction.
    from mlclab.backend.schedules import row_reductions

    monkeypatch.setattr(row_reductions, "ROWS_IN_LANES", False)
    mod = _legalized(_module([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=-1)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=16, strict=True).script()
    assert text.count('scope="local"') == 2, text          # the max and the sum
    assert text.count(f"T.unroll(T.int64({rows}))") >= 4, text   # init and update, twice
    assert ("T.where(" in text) == partial, text


def _built_without_partial_maxima(mod):
    from mlclab.backend.schedules import row_reductions

    saved = row_reductions.order_free    # read by the block-by-block and the chain rules
    row_reductions.order_free = lambda *args: False
    try:
        return _build(mod)
    finally:
        row_reductions.order_free = saved


@pytest.mark.parametrize("shape", [(4, 4, 256, 256), (2, 3, 64), (5, 32), (6, 48)])
def test_a_softmax_max_in_vector_partials_gives_the_same_bits(shape):
    # Softmax's row maximum compared in 16 partial maxima per row instead of one chain: the
    # maximum is the same in any order, but for the sign of a zero maximum or which number
    # a row with a NaN gives -- and neither changes the softmax.  Bit for bit the old
    # schedule's results on rows with a zero maximum of either sign, infinities and NaN.
    mod = _module([("x", shape)], lambda bb, x: R.nn.softmax(x, axis=-1))
    x = RNG.standard_normal(shape).astype("float32")
    rows = x.reshape(-1, shape[-1])
    rows[0] = -np.abs(rows[0])
    rows[0, [3, 7]] = [0.0, -0.0]                       # the maximum is a zero of either sign
    rows[1, 5] = np.nan
    rows[2, 9] = np.inf
    rows[3, 1] = -np.inf
    rows[4, :] = -np.inf
    new, old = _build(mod)(x), _built_without_partial_maxima(mod)(x)
    assert np.array_equal(new.view(np.uint32), old.view(np.uint32))
    finite = np.isfinite(rows).all(axis=-1)
    e = np.exp(rows[finite].astype("float64") - rows[finite].max(axis=-1, keepdims=True))
    np.testing.assert_allclose(new.reshape(rows.shape)[finite], e / e.sum(axis=-1, keepdims=True),
                               rtol=RTOL, atol=ATOL * np.sqrt(shape[-1]))


# ------------------------------------------------- a chain of passes over the same rows
def _layer_norm(n):
    return lambda bb, x: R.nn.layer_norm(
        x, relax.const(np.linspace(0.5, 2, n, dtype="float32")),
        relax.const(np.linspace(-1, 1, n, dtype="float32")), axes=[-1])


def _built_block_by_block(mod):
    from mlclab.backend.schedules import rules

    def declined(self, sch, blocks, lanes):
        raise rules.Declined("off")

    saved, rules.RowChain.schedule = rules.RowChain.schedule, declined
    try:
        return _build(mod)
    finally:
        rules.RowChain.schedule = saved


ROW_CHAINS = [("softmax", (4, 4, 64, 64), lambda bb, x: R.nn.softmax(x, axis=-1)),
              ("softmax", (4, 32, 256), lambda bb, x: R.nn.softmax(x, axis=-1)),
              ("layer_norm", (1, 48, 768), _layer_norm(768)),
              ("layer_norm", (4, 128, 64), _layer_norm(64))]


@pytest.mark.parametrize("op,shape,body", ROW_CHAINS,
                         ids=[f"{op}-{'x'.join(map(str, s))}" for op, s, _ in ROW_CHAINS])
def test_a_row_chain_runs_every_pass_one_group_of_rows_at_a_time(op, shape, body):
    # Softmax (max, exp, sum, division) and layer norm (mean, variance, normalisation):
    # every pass under one parallel loop over groups of a vector's rows, so a group's rows
    # stay in cache from the first pass to the last (MobileViT's 4 MB of exponentials
    # went out of L2 between passes); each row's terms summed in their own order, bit for
    # bit the block-by-block schedule's results, special values included.
    mod = _module([("x", shape)], body)
    (func,) = _primfuncs(_scheduled(mod)).values()
    rule, declined = schedule_decision(func)
    assert rule == "row_chain", declined
    text = func.script()
    lanes = vector_lanes(resolve_target("llvm"))
    groups = math.prod(shape[:-1]) // lanes
    (extent,) = re.findall(r"T\.parallel\(T\.int64\((\d+)\)\)", text)
    assert int(extent) == groups, text
    # no other loop at the parallel loop's depth: every pass is inside it
    indent = re.search(r"^( *)for \w+ in T\.parallel", text, re.M).group(1)
    assert len(re.findall(rf"^{indent}for ", text, re.M)) == 1, text
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    rows = x.reshape(-1, shape[-1])
    rows[1, 3] = 40.0                                   # one large term: an order would show
    rows[2, 5], rows[3, 7], rows[4, 9] = np.nan, np.inf, -np.inf
    rows[5, :] = -np.inf
    chained, alone = _build(mod)(x), _built_block_by_block(mod)(x)
    assert np.array_equal(chained.view(np.uint32), alone.view(np.uint32))
    finite = np.isfinite(rows).all(axis=-1)
    want = _numpy_row_reduction(op, rows[finite].astype("float64"))
    np.testing.assert_allclose(chained.reshape(rows.shape)[finite], want, rtol=RTOL,
                               atol=ATOL * np.sqrt(shape[-1]))


@pytest.mark.parametrize("shape,body,reason", [
    ((3, 197, 197), lambda bb, x: R.nn.softmax(x, axis=-1), "not whole vectors"),
    ((2, 32, 33), lambda bb, x: R.nn.softmax(x, axis=-1), "not whole vectors"),
    ((16, 8192), lambda bb, x: R.nn.softmax(x, axis=-1), "exceeds"),
    # a column mean taken from every row: a group of rows cannot compute it alone
    ((2, 32, 32), lambda bb, x: R.subtract(x, R.mean(x, axis=-2, keepdims=True)),
     "not one of each row's columns"),
])
def test_what_is_not_a_row_chain_is_declined_with_the_reason(shape, body, reason):
    from mlclab.backend.schedules.rules import RowChain

    (func,) = _primfuncs(_legalized(_module([("x", shape)], body))).values()
    sch, why = RowChain().try_schedule(func, lanes=16)
    assert sch is None and reason in why, why


def test_only_softmaxs_maximum_is_compared_in_partials():
    # Softmax's maximum of rows of 64 gets vector partials (an rfactor block); a max that is
    # a result keeps the order of its terms (which NaN it meets first decides what it gives).
    # (mlclab's own softmax legalization marks the maximum: the build's passes, not TVM's)
    softmax = _scheduled(_module([("x", (8, 64))], lambda bb, x: R.nn.softmax(x, axis=-1)))
    (func,) = _primfuncs(softmax).values()
    text = func.script()
    assert 'T.sblock("T_softmax_maxelem_rf' in text and "T.vectorized(" in text, text
    plain = _scheduled(_module([("x", (8, 64))], lambda bb, x: R.max(x, axis=-1)))
    (func,) = _primfuncs(plain).values()
    assert "_rf" not in func.script()


@pytest.mark.parametrize("op,dtype,shape", [("max", "int8", (4, 4, 256)), ("min", "int32", (3, 64)),
                                            ("sum", "int32", (2, 5, 96)), ("max", "int8", (7, 40))])
def test_an_integer_row_reduction_in_vector_partials_matches_numpy(op, dtype, shape):
    # Integer max, min and sum are exact in any order (the sum wraps the same way): their
    # rows reduce in vector partials (an rfactor block) when the row is whole vectors.
    def body(bb, x):  # one value per row (kept as an axis of 1): parallel_loops' rows
        return getattr(R, op)(x, axis=-1, keepdims=True)

    bb = relax.BlockBuilder()
    x = _var("x", shape, dtype)
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(body(bb, x))
        bb.emit_func_output(out)
    mod = bb.get()
    info = np.iinfo(dtype)
    data = RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    # numpy's sum wraps in the dtype too
    want = data.sum(axis=-1, dtype=dtype, keepdims=True) if op == "sum" else \
        getattr(data, op)(axis=-1, keepdims=True)
    np.testing.assert_array_equal(_build(mod)(data), want)
    (func,) = _primfuncs(_scheduled(mod)).values()
    lanes = vector_lanes(resolve_target("llvm"))
    whole = shape[-1] % lanes == 0 and shape[-1] >= 2 * lanes
    assert ("_rf" in func.script()) == whole, func.script()


def test_a_float_sum_keeps_its_order():
    mod = _module([("x", (8, 64))], lambda bb, x: R.sum(x, axis=-1, keepdims=True))
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert "_rf" not in func.script()


@pytest.mark.parametrize("shape,width", [((16, 256, 24), 12), ((4, 6, 5, 7), 7)])
def test_unfolded_patches_are_vectorized_only_along_contiguous_runs(shape, width):
    # MobileViT folds (4 * heads, tokens, dim) back into (4, tokens, heads * dim): a copy
    # whose input is contiguous in runs of dim.  Fused vectors of 32 straddled the runs and
    # read one lane at a time (0.24 ms); vectors of 12 inside them took 0.022 ms.
    heads = shape[0] // 4

    def body(bb, x):
        split = bb.emit(R.reshape(x, (4, heads) + shape[1:]))
        moved = bb.emit(R.permute_dims(split, [0, 2, 1] + list(range(3, len(shape) + 1))))
        return R.reshape(moved, (4, shape[1], heads * math.prod(shape[2:])))

    mod = _module([("x", shape)], body)
    x = _data(shape)[0]
    want = x.reshape((4, heads) + shape[1:]).swapaxes(1, 2).reshape(4, shape[1], -1)
    np.testing.assert_array_equal(_build(mod)(x), want)
    (func,) = _primfuncs(_scheduled(mod)).values()
    widths = {int(w) for w in re.findall(r"T\.vectorized\(T\.int64\((\d+)\)\)",
                                         func.script())}
    assert widths == {width}, func.script()


@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 1, 98, 98, 3)])
def test_an_elementwise_nest_with_no_whole_vector_is_left_unfused(shape):
    # One fused loop over 258 x 258 x 3 (the stem convolution's padding) recovered every
    # index with a division and a remainder per element: with no vector to gain and on one
    # thread (below PARALLEL_MIN_ELEMENTS, as 98 x 98 x 3 is), the nest stays as it is
    # (the 258 x 258 x 3 convolution 208 -> 147 us on one core).
    mod = _check([("x", shape)], lambda bb, x: R.multiply(x, relax.const(2.0, "float32")),
                 lambda x: x * 2)
    (func,) = _primfuncs(_scheduled(mod)).values()
    text = func.script()
    assert "_fused" not in text and "//" not in text, text


@pytest.mark.parametrize("shape", [(1, 96, 56, 56), (1, 16, 28, 28), (4, 256, 24),
                                   (1, 3, 224, 224)])
def test_an_elementwise_nest_whose_vectors_straddle_rows_reads_them_whole(shape):
    # 56 x 56 planes in vectors of 32: fused over the whole nest, TVM's simplifier was left
    # two forms of the flat index that it never merged, so every lane's address was computed
    # and the loads gathered (ReLU of 1 x 96 x 56 x 56 on one Zen 4 core: 337 us, 7 GB/s;
    # 27 us fused over 56 x 56 alone).  The kernel's LLVM IR loads whole vectors, no float alone.
    mod = _module([("x", shape), ("y", shape)], lambda bb, x, y: R.nn.relu(bb.emit(R.add(x, y))))
    llvm_ir = "".join(m.inspect_source("ll") for m in _executable(mod).mod.imports)
    assert re.search(r"load <\d+ x float>", llvm_ir), llvm_ir[:2000]
    assert not re.search(r"load float, ptr", llvm_ir), llvm_ir[:2000]
    x, y = _data(shape, shape)
    np.testing.assert_array_equal(_build(mod)(x, y), np.maximum(x + y, 0))


def _unfold(shape, patch):
    """timm's MobileViT unfold of (1, C, H, W) into patches: (ph * pw, tokens, C), as Relax
    and as numpy."""
    c, h, w = shape
    ph, pw = patch
    steps = [lambda x, op: op["reshape"](x, (c * (h // ph), ph, w // pw, pw)),
             lambda x, op: op["permute"](x, [0, 2, 1, 3]),
             lambda x, op: op["reshape"](x, (1, c, (h // ph) * (w // pw), ph * pw)),
             lambda x, op: op["permute"](x, [0, 3, 2, 1]),
             lambda x, op: op["reshape"](x, (ph * pw, (h // ph) * (w // pw), c))]

    def relax_body(bb, x):
        ops = {"reshape": R.reshape, "permute": R.permute_dims}
        for step in steps[:-1]:
            x = bb.emit(step(x, ops))
        return steps[-1](x, ops)

    def numpy_body(x):
        ops = {"reshape": np.reshape, "permute": np.transpose}
        for step in steps:
            x = step(x, ops)
        return x
    return relax_body, numpy_body


UNFOLDS = [((96, 32, 32), (2, 2), 16, 16), ((120, 16, 16), (2, 2), 8, 15),
           ((5, 6, 10), (2, 2), 5, 5), ((7, 9, 6), (3, 2), 3, 7)]


@pytest.mark.parametrize("shape,patch,rows,width", UNFOLDS)
def test_unfolded_patches_are_copied_in_tiles_and_match_numpy(shape, patch, rows, width):
    # MobileViT's unfold reads its input 1024 floats apart along the output's channels and 2
    # apart along its tokens: a scalar copy (183 us for 96 x 32 x 32), now tiles of tokens
    # (unrolled) by vectors of channels (29 us).  Every split divides its loop: no bounds
    # check, nothing read outside the input.
    relax_body, numpy_body = _unfold(shape, patch)
    mod = _module([("x", (1,) + shape)], relax_body)
    x = _data((1,) + shape)[0]
    np.testing.assert_array_equal(_build(mod)(x), numpy_body(x))
    (func,) = _primfuncs(_legalized(mod)).values()
    text = schedule_primfunc(func, lanes=16, strict=True).script()
    assert f"T.unroll(T.int64({rows}))" in text, text
    assert f"T.vectorized(T.int64({width}))" in text, text
    assert "T.where" not in text and "T.if_then_else" not in text, text


@pytest.mark.parametrize("shape", [(4, 4, 64, 64), (1, 3, 197, 197), (2, 5, 7)])
def test_the_safe_softmax_check_is_one_pass_over_the_scores(shape):
    # PyTorch's safe softmax asks per row whether any score is finite: equal, not, cast
    # and max.  The element-wise steps are inlined into the max (one pass over the scores,
    # not three boolean copies first) and the rows reduced several at a time.
    def body(bb, x):
        inf = bb.emit(R.equal(x, relax.const(-np.inf, "float32")))
        finite = bb.emit(R.astype(bb.emit(R.logical_not(inf)), "int8"))
        return R.max(finite, axis=-1, keepdims=True)

    mod = _module([("x", shape)], body)
    x = _data(shape)[0]
    x.reshape(-1, shape[-1])[1, :] = -np.inf        # one row with no finite score
    want = (x != -np.inf).astype(np.int8).max(axis=-1, keepdims=True)
    np.testing.assert_array_equal(_build(mod)(x), want)
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert schedule_decision(func)[0] == "parallel_loops"
    text = func.script()
    assert text.count("T.sblock_alloc_buffer") == 1, text   # only the accumulators


# ---------------------------------------------------------------------------------------
# rows no tile divides: a predicated last tile, read in place; never outside a buffer

# The scores and heads of DeiT's attention (197 tokens, a prime), and odd small cases: a
# tail of one row (5 = 4 + 1), three rows (7), columns padded (53) or whole vectors (48).
ROW_TAIL_SHAPES = [(3, 197, 197, 64), (3, 197, 64, 197), (1, 37, 16, 53), (2, 5, 9, 48),
                   (1, 7, 3, 64)]


@pytest.mark.parametrize("b,m,k,n", ROW_TAIL_SHAPES)
def test_a_row_tail_is_predicated_not_copied(b, m, k, n):
    params = [("a", (b, m, k)), ("b", (b, k, n))]
    mod = _check(params, lambda bb, a, w: R.matmul(a, w), lambda a, w: a @ w, terms=k)
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert schedule_decision(func)[0] == "register_tile_padded"
    text = func.script()
    assert 'sblock("a_pad")' not in text, text        # the rows are not copied per call
    update = text[text.index("for k in"):]
    rows = [int(r) for r in re.findall(r"T\.unroll\(T\.int64\((\d+)\)\)", update)]
    assert rows and 4 <= rows[0] <= 6, text       # a tile of several rows, not one
    assert (m % rows[0] != 0) == ("T.where(" in update), text   # the last one masked


@pytest.mark.parametrize("lanes,unrolled,vector", [(16, 4, 16), (8, None, 16)])
def test_heads_of_four_vectors_are_one_tile_row_read_in_place(lanes, unrolled, vector):
    # DeiT's P @ V (197x197 @ 197x64 per head): on AVX-512 the 64 columns are one tile row
    # of 4 vectors, 16 accumulators as the packed weights' tile, and V is read in place
    # (117-133 us with rows padded and V packed, 60 us so).  AVX2's 16 registers hold 4 x 2.
    mod = _legalized(_module([("p", (3, 197, 197)), ("v", (3, 197, 64))],
                             lambda bb, p, v: R.matmul(p, v)))
    (func,) = _primfuncs(mod).values()
    text = schedule_primfunc(func, lanes=lanes, strict=True).script()
    update = text[text.index("for k in"):text.index('sblock("matmul_update")')]
    assert f"T.vectorized(T.int64({vector}))" in update, text
    if unrolled:
        assert update.count(f"T.unroll(T.int64({unrolled}))") == 2, text  # rows x vectors
        assert text.count("T.sblock_alloc_buffer") == 1, text   # the accumulators: no panel


# A kernel run on inputs and an output that each end where an unreadable page begins: a read
# or write past the end kills the process.  In a fresh interpreter, for that reason.
GUARDED_MATMUL = textwrap.dedent("""
    import ctypes, json, mmap, sys
    import numpy as np
    import tvm, tvm_ffi
    from tvm import relax, tirx
    from tvm.relax import op as R
    from tvm.relax.backend import cpu_generic
    from mlclab.backend.alignment import relax_param_alignment
    from mlclab.backend.passes import resolve_target
    from mlclab.backend.schedules import schedule_primfunc, vector_lanes

    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    maps = []

    def guarded(array):
        pages = -(-array.nbytes // PAGE)
        mm = mmap.mmap(-1, (pages + 1) * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
        if libc.mprotect(base + pages * PAGE, PAGE, 0) != 0:     # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect")
        maps.append(mm)
        out = np.frombuffer(mm, array.dtype, array.size, pages * PAGE - array.nbytes)
        out = out.reshape(array.shape)
        out[...] = array
        return out

    a_shape, b_shape = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    rng = np.random.default_rng(0)
    a = guarded(rng.standard_normal(a_shape).astype("float32"))
    b = guarded(rng.standard_normal(b_shape).astype("float32"))
    out = guarded(np.zeros(a_shape[:-1] + b_shape[-1:], "float32"))
    if sys.argv[3] == "past-the-end":             # the guard itself: this read must crash
        print(ctypes.c_float.from_address(out.ctypes.data + out.nbytes).value)
    bb = relax.BlockBuilder()
    params = [relax.Var(n, relax.TensorType(s, "float32"))
              for n, s in (("a", a_shape), ("b", b_shape))]
    with bb.function("main", params):
        with bb.dataflow():
            result = bb.emit_output(R.matmul(*params))
        bb.emit_func_output(result)
    mod = tvm.transform.Sequential(cpu_generic.legalize_passes(None))(bb.get())
    (func,) = [f for _, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)]
    target = resolve_target("llvm")
    func = schedule_primfunc(func, vector_lanes(target), strict=True)
    lib = relax_param_alignment()(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}))
    kernel = tvm.compile(lib, target=target)["main"]
    kernel(*[tvm_ffi.from_dlpack(x, require_alignment=4) for x in (a, b, out)])
    error = float(np.abs(out - a.astype("float64") @ b).max())
    print(json.dumps([str(func.attrs["mlclab.schedule"]), error]))
""")


def _guarded_matmul(a_shape, b_shape, mode="run"):
    return subprocess.run([sys.executable, "-c", GUARDED_MATMUL, json.dumps(a_shape),
                           json.dumps(b_shape), mode], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("b,m,k,n", ROW_TAIL_SHAPES)
def test_a_row_tail_reads_and_writes_nothing_past_its_buffers(b, m, k, n):
    done = _guarded_matmul([b, m, k], [b, k, n])
    assert done.returncode == 0, done.stderr[-2000:]
    rule, error = json.loads(done.stdout.splitlines()[-1])
    assert rule == "register_tile_padded"
    assert error <= ATOL * np.sqrt(k) + RTOL * k, error


def test_the_guard_page_catches_a_read_past_the_end():
    done = _guarded_matmul([1, 5, 3], [1, 3, 16], mode="past-the-end")
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-2000:])


# ---------------------------------------------------------------------------------------
# T5's attention: a scalar operand, and K^T copied into heads with a scale of 1.0


@pytest.mark.parametrize("heads,seq", [(8, 128), (3, 5)])
def test_a_scalar_input_leaves_an_elementwise_kernel_to_the_plain_schedule(heads, seq):
    # T5 masks its scores with ``where(mask, scores, min)`` and adds the relative position
    # bias, one kernel whose ``min`` is a 0-d tensor.  The transpose check indexed its
    # last axis and raised, so no rule scheduled the kernel: 100 us a layer, 14 scheduled.
    def body(bb, mask, x, low, bias):
        masked = bb.emit(R.where(mask, x, low))
        return R.add(masked, bb.emit(R.reshape(bias, (1, heads, seq, seq))))

    bb = relax.BlockBuilder()
    vs = [_var("mask", (1, 1, seq, seq), "bool"), _var("x", (1, heads, seq, seq)),
          _var("low", ()), _var("bias", (heads, seq, seq))]
    with bb.function("main", vs):
        with bb.dataflow():
            out = bb.emit_output(body(bb, *vs))
        bb.emit_func_output(out)
    mod = bb.get()
    mask = RNG.random((1, 1, seq, seq)) < 0.7
    x, bias = _data((1, heads, seq, seq), (heads, seq, seq))
    x.flat[:4] = [np.nan, np.inf, -0.0, -np.inf]
    low = np.array(np.finfo(np.float32).min, dtype=np.float32)
    want = np.where(mask, x, low) + bias.reshape(1, heads, seq, seq)
    np.testing.assert_array_equal(_build(mod)(mask, x, low, bias), want)
    (func,) = _primfuncs(_scheduled(mod)).values()
    assert schedule_decision(func)[0] == "parallel_loops", schedule_decision(func)
    assert "T.vectorized" in func.script()


def _keys_into_heads(bb, k, seq, heads, width, scale):
    """PyTorch's ``k.view(1, seq, heads, width).transpose(1, 2).transpose(2, 3) * scale``
    as ``from_torch`` gives it: one copy reading K^T, scaled."""
    shaped = bb.emit(R.reshape(k, (1, seq, heads, width)))
    moved = bb.emit(R.permute_dims(shaped, [0, 2, 3, 1]))
    return R.multiply(moved, relax.const(scale, "float32"))


@pytest.mark.parametrize("seq,heads,width,scale", [(128, 8, 64, 1.0), (128, 8, 64, 0.125),
                                                   (20, 3, 8, 1.0), (12, 2, 5, 0.5)])
def test_keys_copied_into_heads_with_a_scale_match_numpy(seq, heads, width, scale):
    # T5's K^T into heads reads its input 512 floats apart along the output's rows: it ran
    # one scalar at a time (80 us a layer, one core), now in tiles of rows by vectors
    # (12 us), like the plain copies.  The scale keeps its product per element: numpy's bits.
    mod = _module([("k", (seq, heads * width))],
                  lambda bb, k: _keys_into_heads(bb, k, seq, heads, width, scale))
    k = _data((seq, heads * width))[0]
    k.flat[:4] = [np.nan, np.inf, -0.0, -np.inf]
    want = k.reshape(1, seq, heads, width).transpose(0, 2, 3, 1) * np.float32(scale)
    np.testing.assert_array_equal(_build(mod)(k), want)


def test_keys_copied_into_heads_with_a_scale_are_tiled():
    mod = _module([("k", (128, 512))], lambda bb, k: _keys_into_heads(bb, k, 128, 8, 64, 1.0))
    (func,) = _primfuncs(_scheduled(mod)).values()
    text = func.script()
    lanes = vector_lanes(resolve_target("llvm"))
    assert f"T.unroll(T.int64({lanes}))" in text, text
    assert f"T.vectorized(T.int64({lanes}))" in text, text
    assert "T.where" not in text, text


def test_a_value_computed_from_an_iterator_is_not_a_copy():
    # An iota (the output's own index in the value) or two loaded elements is not "a copy of
    # one value": the gathered tile is for copies, scaled copies and casts only.
    from tvm.script import tirx as T

    from mlclab.backend.schedules.tir_util import blocks_of, is_copy_of_one_value

    @T.prim_func(s_tir=True, private=True)
    def kinds(a: T.Buffer((8, 4), "float32"), b: T.Buffer((4, 8), "float32"),
              c: T.Buffer((4, 8), "float32"), d: T.Buffer((4, 8), "float32"),
              e: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.sblock("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = a[vj, vi]
        for i, j in T.grid(4, 8):
            with T.sblock("scaled"):
                vi, vj = T.axis.remap("SS", [i, j])
                c[vi, vj] = T.max(a[vj, vi] * T.float32(0.5), T.float32(0))
        for i, j in T.grid(4, 8):
            with T.sblock("iota"):
                vi, vj = T.axis.remap("SS", [i, j])
                d[vi, vj] = a[vj, vi] + T.Cast("float32", vi)
        for i, j in T.grid(4, 8):
            with T.sblock("two"):
                vi, vj = T.axis.remap("SS", [i, j])
                e[vi, vj] = a[vj, vi] + b[vi, vj]

    got = {b.name_hint: is_copy_of_one_value(b.body) for b in blocks_of(kinds)}
    assert got == {"copy": True, "scaled": True, "iota": False, "two": False}

