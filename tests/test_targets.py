"""The target registry: the CPU forms that work, and every other target refused up front
with a ValueError naming ``target`` and the reason (issue 9) -- before this, ``cuda`` or an
aarch64 triple compiled and then failed inside TVM's runtime at the first call."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tvm

import mlclab  # noqa: E402
from mlclab.backend.passes import build_passes, resolve_target  # noqa: E402
from mlclab.backend.targets import BACKENDS, backend_for, host_cpu  # noqa: E402

SOURCE = "def f(x: Tensor[(4,), f32]):\n    return x * 2.0\n"


@pytest.mark.parametrize("target", [
    "llvm",
    {"kind": "llvm"},
    {"kind": "llvm", "mcpu": "znver3"},
    '{"kind": "llvm", "mcpu": "znver3"}',
    "  llvm ",
])
def test_cpu_targets_compile_and_run(target):
    f = mlclab.compile(SOURCE, target=target, force=True)["f"]
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(f(x), x * 2)


def test_plain_llvm_is_this_cpu_and_the_dict_stays_generic():
    assert resolve_target("llvm").attrs.get("mcpu") == host_cpu()
    assert resolve_target({"kind": "llvm"}).attrs.get("mcpu") is None
    assert resolve_target({"kind": "llvm", "mcpu": "znver3"}).attrs["mcpu"] == "znver3"
    target = tvm.target.Target({"kind": "llvm", "mcpu": "znver3"})
    assert resolve_target(target) is target


@pytest.mark.parametrize("target,reason", [
    ("cuda", "GPU target"),
    ("opencl", "GPU target"),
    ("vulkan", "GPU target"),
    ("metal", "GPU target"),
    ('{"kind": "rocm"}', "GPU target"),
    ("c", "C source"),
    ({"kind": "llvm", "mtriple": "aarch64-linux-gnu"}, "another CPU"),
    ({"kind": "llvm", "mtriple": "riscv64-unknown-linux-gnu"}, "another CPU"),
    ("garbage", "not a target mlclab knows"),
    ("", "not a target mlclab knows"),
    ("llvm -mcpu=znver3", "options go in a dict"),
    ({"kind": "llvm", "mcpu": "no-such-cpu"}, "not a CPU LLVM knows"),
    ({"kind": "llvm", "bogus": 1}, "Unknown config option 'bogus'"),
    ({"mcpu": "znver3"}, "needs a \"kind\""),
    ("{oops", "not valid JSON"),
])
def test_other_targets_are_refused_with_the_reason(target, reason):
    with pytest.raises(ValueError, match="^target: ") as info:
        resolve_target(target)
    assert reason in str(info.value)
    # ... and compile() refuses before any work, with the same message.
    with pytest.raises(ValueError, match="^target: ") as info:
        mlclab.compile(SOURCE, target=target, force=True)
    assert reason in str(info.value)


def test_a_tvm_target_object_for_a_gpu_or_another_cpu_is_refused():
    with pytest.raises(ValueError, match="GPU target"):
        resolve_target(tvm.target.Target({"kind": "opencl"}))
    with pytest.raises(ValueError, match="another CPU"):
        resolve_target(tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu"}))


def test_a_target_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="target must be"):
        resolve_target(3)


def test_the_llvm_registration_drives_the_build():
    target = resolve_target("llvm")
    backend = backend_for(target)
    assert backend is BACKENDS["llvm"]
    assert str(backend.device()) == str(tvm.cpu())
    names = [p.info.name for p in build_passes("llvm")]
    assert names == [p.info.name for p in backend.passes(target, True)]
    assert "mlclab.ScheduleCPU" in names
    assert "mlclab.ScheduleCPU" not in [p.info.name for p in build_passes("llvm", False)]
    json.dumps(sorted(BACKENDS))  # names a CLI or the docs can list


# TVM's LLVM backend hard-codes ``TargetOptions.NoNaNsFPMath = true`` (llvm_instance.cc; no
# target attribute or pass option turns it off).  On x86 LLVM resets those options per function
# from the function's own attributes, and TVM's functions carry no "no-nans-fp-math", so the
# code generator honours NaN.  This probe would catch the day that stops holding: its
# comparisons reach LLVM as ordered ``fcmp`` (TVM's simplifier never sees ``x != x``) and LLVM
# lowers them NaN-aware only while no-NaNs is off -- as the positive control shows.
_NAN_PROBES = {            # (x, y) = (NaN, 1), (1, NaN), (NaN, NaN), (2, 1), (1, 2), (3, 3)
    "x != y": ([0, 0, 0, 1, 1, 0], lambda x, y: x != y),   # TVM's != is ordered (fcmp one)
    "x == y": ([0, 0, 0, 0, 0, 1], lambda x, y: x == y),
    "x < y": ([0, 0, 0, 0, 1, 0], lambda x, y: x < y),
    "x >= y": ([0, 0, 0, 1, 0, 1], lambda x, y: x >= y),
}


def _nan_probe(target, vectorized: bool) -> dict:
    from tvm import s_tir, te

    n = 48
    x = te.placeholder((n,), "float32", name="x")
    y = te.placeholder((n,), "float32", name="y")
    xs = np.tile(np.array([np.nan, 1, np.nan, 2, 1, 3], "float32"), n // 6)
    ys = np.tile(np.array([1, np.nan, np.nan, 1, 2, 3], "float32"), n // 6)
    got = {}
    for name, (_, compare) in _NAN_PROBES.items():
        func = te.create_prim_func([x, y, _selected(compare, x, y)])
        if vectorized:
            sch = s_tir.Schedule(func)
            (loop,) = sch.get_loops(sch.get_sblock("out"))
            sch.vectorize(sch.split(loop, [None, 16])[1])
            func = sch.mod["main"]
        kernel = tvm.compile(tvm.IRModule({"main": func}), target=target)
        result = tvm.runtime.tensor(np.zeros(n, "float32"))
        kernel["main"](tvm.runtime.tensor(xs), tvm.runtime.tensor(ys), result)
        got[name] = result.numpy()[:6].astype(int).tolist()
    return got


def _selected(compare, x, y):
    """1.0 where ``compare(x, y)`` holds, else 0.0 (te.compute takes no default arguments)."""
    from tvm import te, tirx

    one, zero = tirx.const(1.0, "float32"), tirx.const(0.0, "float32")
    return te.compute(x.shape, lambda i: tirx.Select(compare(x[i], y[i]), one, zero), name="out")


@pytest.mark.parametrize("vectorized", [False, True], ids=["scalar", "vector"])
def test_llvm_compares_nan_as_ieee_says_despite_tvms_no_nans_option(vectorized):
    target = resolve_target("llvm")
    assert _nan_probe(target, vectorized) == {k: v[0] for k, v in _NAN_PROBES.items()}
    # The probe can fail: with no-NaNs in force (here as the instruction flag), != turns True.
    nnan = tvm.target.Target({**target.export(), "fast-math-nnan": True})
    assert _nan_probe(nnan, vectorized)["x != y"][:3] == [1, 1, 1]
