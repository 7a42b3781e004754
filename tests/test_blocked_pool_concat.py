"""Max pooling with ``ceil_mode=True`` and channel concatenation in the blocked NCHW[x]c
layout (mlclab/backend/conv_layout.py): SqueezeNet's pools and Fire modules.  The ragged
last window of a ceil-mode pool must give PyTorch's answer on every size, stride and
padding, the pool must take the vectorized rule, and a concatenation of blocked channels
must keep the graph blocked -- or leave it when the blocks do not line up."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import torch

from mlclab.backend.conv_layout import channel_block  # noqa: E402
from mlclab.backend.passes import build_passes, resolve_target  # noqa: E402
from mlclab.backend.schedules import schedule_decision, vector_lanes  # noqa: E402
from mlclab.tvm_setup import tvm  # noqa: E402


def _import(model, shape):
    from tvm.relax.frontend.torch import from_exported_program

    torch.manual_seed(0)
    x = torch.randn(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            mod = from_exported_program(torch.export.export(model.eval(), (x,)))
    return mod, x


def _run(mod, x, fast_math=False):
    from tvm import relax

    from mlclab.api.build import build_executable

    executable, record = build_executable(mod, "llvm", fast_math=fast_math)
    out = relax.VirtualMachine(executable, tvm().cpu())["main"](tvm().runtime.tensor(x.numpy()))
    while not hasattr(out, "numpy"):   # the frontend returns a 1-tuple
        out = out[0]
    assert record.optimized, "mlclab's pipeline fell back to TVM's plain one"
    return out.numpy()


def _scheduled(mod):
    from tvm import tirx

    passes = build_passes("llvm")
    names = [p.info.name for p in passes]
    with resolve_target("llvm"):
        mod = tvm().transform.Sequential(passes[:names.index("mlclab.ScheduleCPU") + 1])(mod)
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)}


class ConvPool(torch.nn.Module):
    """A convolution (which puts the graph in the blocked layout), relu and a max pool."""

    def __init__(self, kernel, stride, padding, ceil_mode=True, channels=16):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, channels, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(kernel, stride, padding, ceil_mode=ceil_mode)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


# Sizes where ceil mode adds a ragged last window (odd sizes against stride 2), where the
# extra window would start in the padding and PyTorch drops it (5 with kernel 2, stride 2,
# padding 1), and where ceil and floor agree.
POOLS = [(h, k, s, p) for h, k, s, p in itertools.product((7, 8, 13, 27), (2, 3), (1, 2, 3),
                                                           (0, 1))
         if p <= k // 2] + [(5, 2, 2, 1), (111, 3, 2, 0), (6, 3, 3, 1)]


@pytest.mark.parametrize("h,kernel,stride,padding", POOLS)
def test_ceil_mode_max_pool_matches_pytorch(h, kernel, stride, padding):
    model = ConvPool(kernel, stride, padding)
    mod, x = _import(model, (1, 8, h, h + 2))      # a non-square image: both axes ragged
    with torch.no_grad():
        want = model(x).numpy()
    got = _run(mod, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_ceil_mode_pool_is_blocked_and_vectorized():
    mod, _ = _import(ConvPool(3, 2, 0), (1, 8, 26, 26))   # (26 - 3) / 2: a ragged window
    kernels = _scheduled(mod)
    (pool,) = [f for name, f in kernels.items() if "max_pool2d" in name]
    assert schedule_decision(pool)[0] == "blocked_max_pool2d"
    text = pool.script()
    assert "T.vectorized" in text
    # the ragged last window (rows and columns 24-26 of 26) read through the padding's
    # condition, max's identity outside the image, with no padded copy
    assert 'T.float32("-inf")' in text and "< T.int64(26)" in text
    assert "sblock_alloc_buffer" not in text


def _walked_and_single(shape, monkeypatch):
    """A ceil-mode max pool (kernel 3, stride 2) of ``shape`` with NaN, -inf and +-0 in
    scattered windows, as scheduled and one window at a time (``POOL_PIXELS = 1``): its
    scheduled kernel's text and both results, checked against PyTorch."""
    from mlclab.backend.schedules import blocked

    model = ConvPool(3, 2, 0)
    mod, x = _import(model, shape)
    (pool,) = [f for name, f in _scheduled(mod).items() if "max_pool2d" in name]
    with torch.no_grad():
        model.conv.weight.zero_()
        model.conv.bias.copy_(torch.tensor([0.0, -0.0, float("-inf"), 1, 2, 3, 4, 5]
                                           + [0.5] * 8))
        model.conv.weight[5, 0, 1, 1] = 1.0
    x[0, 0, 3, 7] = float("nan")
    x[0, 0, 6, shape[3] - 12] = float("nan")
    mod, _ = _import(model, shape)
    walked = _run(mod, x)
    monkeypatch.setattr(blocked, "POOL_PIXELS", 1)
    single = _run(mod, x)
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(walked, want, rtol=1e-5, atol=1e-5)
    assert 0 < np.isnan(walked).sum() < walked.size / 2    # NaN windows, and others
    return pool.script(), walked, single


def test_pool_walks_several_windows_at_once_with_the_same_bits(monkeypatch):
    """32 columns, kernel 3, stride 2, ceil mode -> 16 output columns, walked 8 at a time
    (``POOL_PIXELS``): NaN, -inf and +-0 in scattered windows give the bits of one window at
    a time."""
    text, walked, single = _walked_and_single((1, 8, 11, 32), monkeypatch)
    assert "T.unroll(T.int64(8))" in text
    assert np.array_equal(walked.view(np.uint32), single.view(np.uint32))


@pytest.mark.parametrize("columns,runs", [(28, 7), (27, 7), (35, 6)])
def test_a_prime_width_is_walked_in_runs_with_a_short_last_one(columns, runs, monkeypatch):
    """Kernel 3, stride 2, ceil mode: 28 -> 14 output columns (divisor 7, no bounds check),
    27 -> 13 (prime: runs of 7, the last one 6), 35 -> 17 (runs of 6, the last one 5).  NaN,
    -inf and +-0 give the bits of one window at a time (``blocked.pool_pixels``)."""
    from mlclab.backend.schedules import blocked

    text, walked, single = _walked_and_single((1, 8, 9, columns), monkeypatch)
    assert f"T.unroll(T.int64({runs}))" in text
    assert (columns == 28) != ("< T.int64(" in text and "T.where" in text)  # bounds check
    assert np.array_equal(walked.view(np.uint32), single.view(np.uint32))
    assert blocked.pool_pixels(13, epilogue=True) == 1      # an epilogue keeps the divisor


class ConvPadPool(torch.nn.Module):
    """A convolution and a max pool with padding, no activation between: NaN, -inf and
    -0.0 reach the pool's windows at the image's edges."""

    def __init__(self, kernel=3, stride=2, padding=1):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 1)
        self.pool = torch.nn.MaxPool2d(kernel, stride, padding)

    def forward(self, x):
        return self.pool(self.conv(x))


@pytest.mark.parametrize("kernel,stride,padding", [(3, 2, 1), (3, 1, 1), (2, 2, 1)])
def test_padded_pool_reads_through_the_padding_with_the_same_bits(kernel, stride, padding,
                                                                  monkeypatch):
    """The pool reads its input through the padding's condition (``INLINE_POOL_PADDING``)
    instead of a padded copy: NaN, -inf and +-0 at the edges and corners give the bits of
    the padded copy's pool, and PyTorch's values."""
    from mlclab.backend.schedules import blocked

    model = ConvPadPool(kernel, stride, padding)
    with torch.no_grad():
        model.conv.weight.zero_()
        model.conv.bias.copy_(torch.tensor([0.0, -0.0, float("-inf"), 1, 2, -3, 4, 5] * 2))
        model.conv.weight[:, 0] = 1.0
    mod, x = _import(model, (1, 8, 9, 14))
    x[0, 0] = 0.0
    x[0, 0, 0, 0] = float("nan")           # a corner: windows that overhang two edges
    x[0, 0, 8, 5] = float("nan")           # the bottom edge
    x[0, 0, 4, 13] = float("-inf")         # the right edge
    x[0, 0, 2, 0] = -0.0
    (pool,) = [f for name, f in _scheduled(mod).items() if "max_pool2d" in name]
    assert "sblock_alloc_buffer" not in pool.script()      # no padded copy
    read_through = _run(mod, x)
    monkeypatch.setattr(blocked, "INLINE_POOL_PADDING", False)
    (copied,) = [f for name, f in _scheduled(mod).items() if "max_pool2d" in name]
    assert "max_pool2d_NCHWc_pad" in copied.script()
    padded_copy = _run(mod, x)
    assert np.array_equal(read_through.view(np.uint32), padded_copy.view(np.uint32))
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(read_through, want, rtol=1e-6, atol=0)
    assert 0 < np.isnan(read_through).sum() < read_through.size / 4


def test_ceil_mode_pool_keeps_nan():
    model = ConvPool(3, 2, 0)
    mod, x = _import(model, (1, 8, 9, 9))
    with torch.no_grad():
        model.conv.bias[3] = float("nan")   # one channel entirely NaN
        want = model(x).numpy()
    from mlclab.api.torch_model import from_torch
    got = from_torch(model, x)(x.numpy())
    assert np.isnan(got[0, 3]).all() and not np.isnan(np.delete(got, 3, axis=1)).any()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class ConvAvgPoolConv(torch.nn.Module):
    """DenseNet's transition and ResNet-D's shortcut: a convolution, an average pool and
    a convolution after it."""

    def __init__(self, kernel, stride, ceil_mode, count_include_pad):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 32, 3, padding=1)
        self.pool = torch.nn.AvgPool2d(kernel, stride, ceil_mode=ceil_mode,
                                       count_include_pad=count_include_pad)
        self.after = torch.nn.Conv2d(32, 16, 1)

    def forward(self, x):
        pooled = self.pool(self.conv(x))   # an output too: NaN would hide it in ``after``'s
        return torch.cat([self.after(torch.relu(pooled)).flatten(), pooled.flatten()])


# (kernel, stride, ceil_mode, count_include_pad, height, width): windows that tile the
# image (blocked: ResNet-D's 2x2 ceil-mode pool without the padding's count, DenseNet's
# 2x2, a 3x3 stride 1 one whose count 9 is divided, not multiplied), and ones that do not
# (an odd width under ceil mode, a 3x3 stride 3 window overhanging the width: NCHW).
AVG_POOLS = [(2, 2, True, False, 14, 16, True), (2, 2, False, True, 12, 10, True),
             (3, 1, True, True, 9, 11, True), (2, 2, True, False, 12, 13, False),
             (3, 3, False, True, 12, 14, False)]


@pytest.mark.parametrize("kernel,stride,ceil_mode,count_include_pad,h,w,stays_blocked",
                         AVG_POOLS)
def test_average_pool_stays_blocked_where_its_windows_tile_the_image(
        kernel, stride, ceil_mode, count_include_pad, h, w, stays_blocked, monkeypatch):
    """The blocked average pool gives the NCHW one's bits (the same sums, a division by the
    count or a multiplication by its power-of-two inverse) and PyTorch's values; the graph
    keeps no NCHW round trip around it."""
    from mlclab.backend import blocked_pool

    model = ConvAvgPoolConv(kernel, stride, ceil_mode, count_include_pad)
    with torch.no_grad():  # NaN, inf, -inf and -0.0 channels reach the pool's windows
        model.conv.bias[3:7] = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0])
        model.conv.weight[3:7] = 0.0
    mod, x = _import(model, (1, 8, h, w))
    kernels = _scheduled(mod)
    (pool,) = [f for name, f in kernels.items() if "avg_pool2d" in name]
    assert (schedule_decision(pool)[0] == "blocked_max_pool2d") == stays_blocked
    transforms = [name for name in kernels if "layout_transform" in name]
    # the image in and both results out; in NCHW the pool's input out and its result in too
    assert len(transforms) == (3 if stays_blocked else 4)
    got = _run(mod, x)
    assert np.isnan(got).any() and np.isposinf(got).any() and np.isneginf(got).any()
    monkeypatch.setattr(blocked_pool, "BLOCKED_AVG_POOL", False)
    nchw = _run(mod, x)
    assert np.array_equal(got.view(np.uint32), nchw.view(np.uint32))
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class Fire(torch.nn.Module):
    """SqueezeNet's Fire module: squeeze 1x1, expand 1x1 and 3x3, concatenated, then a
    ceil-mode max pool."""

    def __init__(self, cin, squeeze, e1, e3):
        super().__init__()
        self.squeeze = torch.nn.Conv2d(cin, squeeze, 1)
        self.e1 = torch.nn.Conv2d(squeeze, e1, 1)
        self.e3 = torch.nn.Conv2d(squeeze, e3, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(3, 2, ceil_mode=True)

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        y = torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)
        return self.pool(y)


def test_fire_module_concatenates_in_the_blocked_layout():
    lanes = vector_lanes(resolve_target("llvm"))
    model = Fire(32, 16, 32, 32)
    mod, x = _import(model, (1, 32, 15, 15))
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(_run(mod, x), want, rtol=1e-5, atol=1e-5)
    kernels = _scheduled(mod)
    (concat,) = [f for name, f in kernels.items() if "concat" in name]
    block = channel_block(64, lanes)
    # the parts pooled, then joined (``conv_layout.POOL_PARTS``): 15 x 15 -> 7 x 7
    blocked = ", ".join(f"T.int64({d})" for d in (1, 64 // block, 7, 7, block))
    assert f"T.Buffer(({blocked})" in concat.script()   # its output is blocked
    # one transform in (the image) and one out (after the join): none around the concat
    assert sum("layout_transform" in name for name in kernels) == 2


class FireTwice(Fire):
    """The join read by its pool and by a mean too: it is needed whole, so the pool reads
    it as it is."""

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        y = torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)
        return self.pool(y) + y.mean((2, 3), keepdim=True)


@pytest.mark.parametrize("model", [Fire(32, 16, 32, 48), FireTwice(32, 16, 32, 32)])
def test_a_pool_of_a_join_pools_the_parts_with_the_same_bits(model, monkeypatch):
    """Pooling each part and joining the pooled parts (``POOL_PARTS``) gives the bits of
    the pooled join: NaN, +-inf and -0.0 in the image; a join read twice is pooled whole."""
    from mlclab.backend import conv_layout

    mod, x = _import(model, (1, 32, 15, 15))
    x[0, 0, 3, 4], x[0, 5, 9, 9], x[0, 7, 0, 14] = float("nan"), float("inf"), -0.0
    x[0, 2, 12, 1] = float("-inf")
    parts = _run(mod, x)
    pools = sum("max_pool2d" in name for name in _scheduled(mod))
    monkeypatch.setattr(conv_layout, "POOL_PARTS", False)
    whole = _run(mod, x)
    assert np.isnan(parts).any() and parts.tobytes() == whole.tobytes()
    assert pools == (1 if isinstance(model, FireTwice) else 2)   # 32 + 48: two kernels


def test_concat_of_mismatched_blocks_stays_in_nchw():
    """12 + 8 channels: blocks of 12 and 8 (AVX-512) against 20's block of 10 -- no common
    block, so the concatenation is done in NCHW, and the result still matches."""
    class Mixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(8, 12, 3, padding=1)
            self.b = torch.nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return torch.relu(torch.cat([self.a(x), self.b(x)], 1))

    model = Mixed()
    mod, x = _import(model, (1, 8, 16, 16))
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(_run(mod, x), want, rtol=1e-5, atol=1e-5)
