"""Constant kernels computed at compile time in one build (mlclab.backend.fold_kernels, issue 21's
compile time): the pipeline's FoldConstant step gives exactly what TVM's FoldConstant gives,
with one LLVM build for all the constant kernels instead of one per call."""
import sys

import numpy as np
import pytest

import mlclab
from mlclab.backend.fold_kernels import fold_constant_kernels
from mlclab.backend.passes import resolve_target

import torch
import tvm
import tvm_ffi  # noqa: E402


class Constants(torch.nn.Module):
    """Values that depend on constants alone: a convolution's bias (reshaped to (1, C, 1, 1)),
    a chain from a buffer (slice, multiply, add, cast, reshape), and ``ones`` (no inputs)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, bias=True)
        self.register_buffer("pos", torch.arange(16).reshape(1, 16))

    def forward(self, x):
        chain = (self.pos[:, :8] * 2 + 1).float().reshape(1, 8, 1, 1)
        return self.conv(x) + chain + torch.ones(1, 8, 1, 1)


@pytest.fixture(scope="module")
def built():
    torch.manual_seed(0)
    model = Constants().eval()
    x = torch.randn(1, 3, 10, 10)
    return model, x, mlclab.from_torch(model, x)


def _before_fold(fn):
    record = fn.build_record
    return record.runs[record["FoldConstant"].index - 1].mod


def _codegen_calls(monkeypatch) -> list:
    """Each LLVM code generation from now on, appended to the returned list."""
    module = sys.modules["tvm.tirx.build"]
    real, calls = module.codegen_build, []

    def counted(mod, target):
        calls.append(mod)
        return real(mod, target)

    monkeypatch.setattr(module, "codegen_build", counted)
    return calls


def test_the_model_computes_what_pytorch_does(built):
    model, x, fn = built
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(fn(x.numpy()), expected, rtol=1e-5, atol=1e-5)


def test_the_fold_step_is_exactly_tvm_s_foldconstant(built):
    _, _, fn = built
    before = _before_fold(fn)
    with resolve_target("llvm"):
        expected = tvm.relax.transform.FoldConstant()(before)
    step = fn.build_record["FoldConstant"]
    assert step.changed and step.fallback is None
    assert tvm_ffi.structural_equal(step.mod, expected)


def test_every_constant_kernel_is_built_in_one_module(built, monkeypatch):
    _, _, fn = built
    before = _before_fold(fn)
    calls = _codegen_calls(monkeypatch)
    with resolve_target("llvm"):
        tvm.relax.transform.FoldConstant()(before)
        tvm_builds = len(calls)
        del calls[:]
        folded = fold_constant_kernels()(before)
    # TVM's own pass builds a module per constant call: the case this pass is for.
    assert tvm_builds >= 4
    assert len(calls) == 1
    # ``ones`` has no inputs: like FoldConstant, the pass leaves it a kernel, not a constant.
    main = folded[fn.name]
    called = [b.value.args[0].name_hint for block in main.body.blocks for b in block.bindings
              if isinstance(b.value, tvm.relax.Call) and b.value.op.name == "relax.call_tir"]
    assert any(name.startswith("full") for name in called)
    assert not any(name.startswith(("strided_slice", "astype")) for name in called)


def test_a_module_without_constant_kernels_is_returned_as_it_was():
    fn = mlclab.compile("def twice(a: Tensor[(4,), f32]):\n    return a * 2.0\n")["twice"]
    before = _before_fold(fn)
    with resolve_target("llvm"):
        assert fold_constant_kernels()(before).same_as(before)
