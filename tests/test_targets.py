"""The target registry: the CPU forms that work, and every other target refused up front
with a ValueError naming ``target`` and the reason (issue 9) -- before this, ``cuda`` or an
aarch64 triple compiled and then failed inside TVM's runtime at the first call."""
from __future__ import annotations

import json

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

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
