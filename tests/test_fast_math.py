"""The vectorizable lowerings of ``backend/fast_math.py`` for the sigmoid family: accurate
to float32 rounding against float64 numpy and PyTorch over the whole range, with NaN,
infinities, overflowing and denormal inputs giving what the exact functions give, and
compiled without a scalar libm call per element."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tvm
from tvm import relax  # noqa: E402
from tvm.relax import op as R  # noqa: E402

from mlclab.backend.passes import build_passes, resolve_target  # noqa: E402

# The inputs where a sigmoid goes wrong first: NaN, infinities, where exp(-x) overflows
# float32 (|x| > 88.7), where sigmoid's small side becomes a denormal (x < -87.3), huge
# values, signed zeros and denormal inputs.
EXTREMES = np.array([np.nan, np.inf, -np.inf, 88.0, -88.0, 88.8, -88.8, 89.0, -89.0, 87.3,
                     -87.3, 1e4, -1e4, 3e38, -3e38, 0.0, -0.0, 1e-40, -1e-40, 1e-30, 16.6,
                     -16.6, 20.0, -20.0, 103.0, -103.0], dtype=np.float32)
# Below this the true result is a denormal, which the lowering may give as 0.
SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)
ULP = float(np.finfo(np.float32).eps)


def _inputs():
    rng = np.random.default_rng(3)
    return np.concatenate([EXTREMES, np.linspace(-100, 100, 40001, dtype=np.float32),
                           (rng.standard_normal(20000) * 8).astype(np.float32)])


def _compiled(body, n, dtype="float32"):
    """(run, LLVM IR of the kernels) of a one-input Relax function built by mlclab's
    pipeline."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((n,), dtype))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(body(x))
        bb.emit_func_output(out)
    ex = tvm.compile(bb.get(), target=resolve_target("llvm"),
                     relax_pipeline=tvm.transform.Sequential(build_passes("llvm")))
    fn = relax.VirtualMachine(ex, tvm.cpu())["main"]
    llvm_ir = "".join(m.inspect_source("ll") for m in ex.mod.imports)
    return (lambda a: fn(tvm.runtime.tensor(a)).numpy()), llvm_ir


def _sigmoid64(x):
    with np.errstate(over="ignore"):
        return np.where(np.isnan(x), np.nan, 1.0 / (1.0 + np.exp(-x.astype(np.float64))))


def _assert_close(got, want, denormal_slack=None):
    """Equal NaNs and infinities; within a few float32 ulps relative elsewhere, except where
    a sigmoid's true value is a denormal float32, which the lowering may give as 0: there
    within ``denormal_slack`` (the smallest normal float32 for the sigmoid itself)."""
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    got, want = got[ok].astype(np.float64), want[ok]
    with np.errstate(invalid="ignore"):  # inf - inf
        error = np.where(got == want, 0.0, np.abs(got - want))
    slack = np.full(want.shape, SMALLEST_NORMAL) if denormal_slack is None else denormal_slack[ok]
    loose = slack > 0
    assert np.all(error[~loose] <= 4 * ULP * np.abs(want[~loose])), \
        float(np.max(error[~loose] / np.abs(want[~loose])))
    assert np.all(error[loose] <= np.maximum(slack[loose], 4 * ULP * np.abs(want[loose])))


def test_sigmoid_matches_float64_and_pytorch_at_the_extremes():
    import torch
    x = _inputs()
    run, _ = _compiled(R.sigmoid, x.size)
    got = run(x)
    slack = np.where(_sigmoid64(x) < SMALLEST_NORMAL, SMALLEST_NORMAL, 0.0)
    _assert_close(got, _sigmoid64(x), slack)
    _assert_close(got, torch.sigmoid(torch.from_numpy(x)).numpy().astype(np.float64), slack)
    head = got[:EXTREMES.size]
    at = dict(zip(EXTREMES.tolist(), head.tolist()))
    assert np.isnan(head[0])
    assert at[np.inf] == 1.0 and at[-np.inf] == 0.0 and at[1e4] == 1.0 and at[-1e4] == 0.0
    assert np.all(head[np.abs(EXTREMES) < 1e-29] == 0.5)  # signed zeros and denormals
    assert at[-20.0] == pytest.approx(2.0611536e-09, rel=4 * ULP)  # small side stays exact


def test_silu_matches_x_times_sigmoid():
    x = _inputs()
    run, _ = _compiled(R.nn.silu, x.size)
    got = run(x)
    with np.errstate(invalid="ignore"):  # -inf * 0 is NaN in numpy too
        want = x.astype(np.float64) * _sigmoid64(x)
    want[np.isneginf(x)] = np.nan  # -inf * sigmoid(-inf) = -inf * 0
    with np.errstate(invalid="ignore"):
        slack = np.where(_sigmoid64(x) < SMALLEST_NORMAL, np.abs(x) * SMALLEST_NORMAL, 0.0)
    _assert_close(got, want, slack)


@pytest.mark.parametrize("body", [R.sigmoid, R.nn.silu,
                                  lambda x: R.multiply(x, R.sigmoid(x)),
                                  R.tanh, R.nn.gelu_tanh,
                                  lambda x: R.multiply(x, R.tanh(R.add(x, x)))],
                         ids=["sigmoid", "silu", "x*sigmoid(x)",
                              "tanh", "gelu_tanh", "x*tanh(x+x)"])
def test_exp_based_kernels_are_vector_code_without_a_libm_call(body):
    _, llvm_ir = _compiled(body, 4096)
    assert not re.search(r"call [^\n]*@(expf|tanhf|llvm\.exp\.)", llvm_ir)
    assert re.search(r"<(4|8|16|32) x float>", llvm_ir)


def test_float64_sigmoid_keeps_the_exact_lowering():
    x = _inputs().astype(np.float64)
    run, llvm_ir = _compiled(R.sigmoid, x.size, "float64")
    np.testing.assert_allclose(run(x), _sigmoid64(x), rtol=1e-15, atol=0)
    assert re.search(r"@(exp|llvm\.exp\.f64)\b", llvm_ir)


# ----------------------------------------------------------------------------- tanh
def _ulps(got, want):
    """Distance in float32 units in the last place (the bit patterns, ordered)."""
    def ordered(a):
        i = np.ascontiguousarray(a, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(got) - ordered(want))


def test_tanh_is_within_an_ulp_of_the_correctly_rounded_value_and_of_numpy():
    # the inputs above plus a dense sweep of where the two pieces meet (0.625) and where
    # tanh rounds to 1 (~9.01), and tiny and denormal inputs, which come back as themselves
    x = np.concatenate([_inputs(), np.linspace(0.6, 0.65, 20001, dtype=np.float32),
                        np.linspace(8.9, 9.2, 20001, dtype=np.float32),
                        np.geomspace(1e-44, 1e-3, 2001, dtype=np.float32)])
    x = np.concatenate([x, -x])
    run, _ = _compiled(R.tanh, x.size)
    got = run(x)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(x))
    number = ~np.isnan(x)
    assert _ulps(got[number], exact[number]).max() <= 1
    assert _ulps(got[number], np.tanh(x)[number]).max() <= 2
    # odd, bit for bit: -0.0 stays -0.0, infinities give +-1
    assert np.array_equal(got[number].view(np.uint32) ^ np.uint32(0x80000000),
                          run(-x)[number].view(np.uint32))
    assert np.signbit(run(np.full(x.size, -0.0, np.float32))).all()
    at = dict(zip(x[:EXTREMES.size].tolist(), got[:EXTREMES.size].tolist()))
    tiny = float(np.float32(1e-40))
    assert at[np.inf] == 1.0 and at[-np.inf] == -1.0 and at[tiny] == tiny


def _gelu_tanh64(x):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * x * (1 + 0.044715 * x * x)))


def test_gelu_tanh_matches_float64_and_pytorch():
    import torch
    x = _inputs()
    x = x[np.isfinite(x) & (np.abs(x) < 1e4)]     # where the formula itself stays finite
    run, _ = _compiled(R.nn.gelu_tanh, x.size)
    got = run(x).astype(np.float64)
    eager = torch.nn.functional.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    # GELU is 0.5x + 0.5x * tanh(...): where the two terms nearly cancel (x < 0), any
    # float32 evaluation (PyTorch's too) is accurate relative to |x|, not to the result
    scale = np.maximum(np.abs(x.astype(np.float64)), SMALLEST_NORMAL)
    for want in (_gelu_tanh64(x), eager.astype(np.float64)):
        assert np.max(np.abs(got - want) / scale) <= 2 * ULP


def test_each_kernel_holds_one_tanh():
    """LLVM's time grows exponentially with the vector exps chained in one kernel (3 tanh
    links: 5.6 s, 5: over 300 s), so FuseOps gives each tanh its own kernel, the
    element-wise operators after it joining it."""
    import mlclab

    body = "".join("    h = tanh(h * 0.9 + 0.1)\n" for _ in range(8))
    prog = mlclab.compile(f"def f(x: Tensor[(64, 64), f32]):\n    h = x\n{body}    return h\n",
                          force=True)
    kernels = [gv.name_hint for gv, fn in prog.built.record.final.functions.items()
               if isinstance(fn, tvm.tirx.PrimFunc)]
    assert kernels and all(name.count("tanh") <= 1 for name in kernels), kernels
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    want = x
    for _ in range(8):
        want = np.tanh(want * np.float32(0.9) + np.float32(0.1))
    np.testing.assert_allclose(prog["f"](x), want, rtol=8 * ULP, atol=1e-7)
