"""DenseNet's layers (mlclab/backend/concat.py, conv_layout.py): every layer joins all
earlier feature maps, then a batch norm and a ReLU.  A concatenation whose parts are partly
in NCHW (an average pool's output) is blocked, and ``relu(concat(parts) * scale + shift)``
of blocked parts is one kernel -- with the same bits as the copy and the separate batch
norm it replaces, NaN, infinities and signed zeros included, and PyTorch's answer."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch

from mlclab.backend import blocked_pool, channel_blocks, concat
from mlclab.backend.schedules import schedule_decision
from mlclab.tvm_setup import tvm
from tests.test_blocked_pool_concat import _run, _scheduled


class Dense(torch.nn.Module):
    """A stem, a transition (batch norm, ReLU, 1x1 convolution, average pool: its output
    is NCHW), then ``layers`` dense layers of ``growth`` channels and a final batch norm
    and ReLU over the whole join, as torchvision's DenseNet."""

    def __init__(self, stem=32, growth=16, layers=3):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, stem, 3, padding=1)
        self.transition = torch.nn.Sequential(
            torch.nn.BatchNorm2d(stem), torch.nn.ReLU(), torch.nn.Conv2d(stem, stem, 1),
            torch.nn.AvgPool2d(2, 2))
        self.layers = torch.nn.ModuleList()
        channels = stem
        for _ in range(layers):
            self.layers.append(torch.nn.Sequential(
                torch.nn.BatchNorm2d(channels), torch.nn.ReLU(),
                torch.nn.Conv2d(channels, growth, 3, padding=1)))
            channels += growth
        self.norm = torch.nn.BatchNorm2d(channels)
        torch.manual_seed(0)
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):   # statistics that change the values
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
                m.weight.data.uniform_(-2, 2)
                m.bias.data.uniform_(-1, 1)

    def forward(self, x):
        features = [self.transition(self.stem(x))]
        for layer in self.layers:
            features.append(layer(torch.cat(features, 1)))
        return torch.relu(self.norm(torch.cat(features, 1)))


def _import(model, x):
    from tvm.relax.frontend.torch import from_exported_program

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            return from_exported_program(torch.export.export(model.eval(), (x,)))


def _special_input(shape):
    """Random values with NaN, +-inf and -0.0 here and there."""
    torch.manual_seed(1)
    x = torch.randn(*shape)
    x[0, 0, 3, 4] = float("nan")
    x[0, 1, 5, 5] = float("inf")
    x[0, 2, 0, 0] = -float("inf")
    x[0, 1, 2, 2] = -0.0
    return x


def _old_path(monkeypatch):
    monkeypatch.setattr(channel_blocks, "BLOCK_NCHW_PARTS", False)
    monkeypatch.setattr(concat, "FUSE_NORM_RELU", False)


# the kernel serial, parallel, and over a batch of two
@pytest.mark.parametrize("batch, size", [(1, (12, 10)), (1, (64, 48)), (2, (12, 10))])
def test_dense_layers_give_the_bits_of_the_copy_and_batch_norm(monkeypatch, batch, size):
    # The transition's pool in NCHW, as before average pools stayed blocked (blocked_pool):
    # its output is then the NCHW part this path blocks.
    monkeypatch.setattr(blocked_pool, "BLOCKED_AVG_POOL", False)
    model = Dense()
    x = _special_input((batch, 3, *size))
    mod = _import(model, x)
    kernels = _scheduled(mod)
    fused = {n: f for n, f in kernels.items() if n.startswith(concat.NORM_RELU_NAME)}
    # the three layers after the first (one part: TVM's own fused kernel) and the final norm
    assert len(fused) == 3
    for func in fused.values():
        assert schedule_decision(func)[0] == concat.NORM_RELU_RULE
        assert ("T.parallel" in func.script()) == (size == (64, 48))
    # the pool's NCHW output blocked once; nothing goes back to NCHW between the layers
    transforms = [n for n in kernels if "layout_transform" in n]
    assert len(transforms) <= 4, transforms     # image in, pool out and in, result out
    new = _run(mod, x)
    _old_path(monkeypatch)
    old_kernels = _scheduled(mod)
    assert not any(n.startswith(concat.NORM_RELU_NAME) for n in old_kernels)
    assert sum("layout_transform" in n for n in old_kernels) > len(transforms)
    old = _run(mod, x)
    assert np.array_equal(new.view(np.uint32), old.view(np.uint32))
    assert np.isnan(new).any() and not np.isnan(new).all()
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(new, want, rtol=1e-5, atol=1e-5)


def test_fast_math_fuses_too_with_the_same_results(monkeypatch):
    model = Dense(layers=2)
    x = torch.randn(1, 3, 16, 16)
    mod = _import(model, x)
    new = _run(mod, x, fast_math=True)
    _old_path(monkeypatch)
    old = _run(mod, x, fast_math=True)
    np.testing.assert_allclose(new, old, rtol=1e-6, atol=1e-6)


def test_a_join_read_twice_is_not_fused():
    """The joined map also returned: its copy is needed, so the pattern is left alone."""
    class Both(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.b = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.norm = torch.nn.BatchNorm2d(32).eval()

        def forward(self, x):
            joined = torch.cat([self.a(x), self.b(x)], 1)
            return torch.relu(self.norm(joined)), joined

    model = Both()
    x = torch.randn(1, 3, 16, 16)
    mod = _import(model, x)
    assert not any(n.startswith(concat.NORM_RELU_NAME) for n in _scheduled(mod))
    from tvm import relax

    from mlclab.api.build import build_executable

    executable, _ = build_executable(mod, "llvm")
    out = relax.VirtualMachine(executable, tvm().cpu())["main"](tvm().runtime.tensor(x.numpy()))
    with torch.no_grad():
        want = model(x)
    for got, expected in zip(out, want):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_nchw_parts_stay_nchw_when_no_part_is_blocked():
    """A concatenation of two NCHW values (no convolution before it) is not blocked."""
    class Plain(torch.nn.Module):
        def forward(self, x):
            return torch.relu(torch.cat([x * 2, x + 1], 1))

    model = Plain()
    x = torch.randn(1, 16, 8, 8)
    mod = _import(model, x)
    assert not any("layout_transform" in n for n in _scheduled(mod))
    np.testing.assert_allclose(_run(mod, x), model(x).numpy(), rtol=1e-6)
