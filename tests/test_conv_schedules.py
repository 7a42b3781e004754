"""Convolutions in the blocked NCHW[x]c layout (mlclab/backend/conv_layout.py), batch norm
folded into them (fold_batchnorm.py) and their CPU schedule (schedules._schedule_blocked):
which convolutions take the path, what the scheduled code looks like, and that every result
matches PyTorch or numpy -- including the convolutions that must fall back."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mlclab
from mlclab.backend.conv_layout import BLOCK_NAME, channel_block
from mlclab.backend.passes import build_passes, resolve_target
from mlclab.backend.schedules import SCHEDULE_ATTR, schedule_decision, vector_lanes
from mlclab.backend.schedules.blocked import STACK_BYTES, conv_tile
from mlclab.tvm_setup import tvm

import torch

TOL = 1e-4


@pytest.fixture(scope="module")
def lanes():
    return vector_lanes(resolve_target("llvm"))


def _import(model, *shapes, seed=0):
    """``model`` (eval mode) through torch.export into Relax, and an input for it."""
    from tvm.relax.frontend.torch import from_exported_program

    torch.manual_seed(seed)
    model = model.eval()
    inputs = tuple(torch.randn(*s) for s in shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            mod = from_exported_program(torch.export.export(model, inputs))
    return mod, inputs


def _run(mod, inputs):
    """(result, whether mlclab's own pipeline built it)."""
    from tvm import relax

    from mlclab.api.build import build_executable

    executable, record = build_executable(mod, "llvm")
    vm = relax.VirtualMachine(executable, tvm().cpu())
    out = vm["main"](*[tvm().runtime.tensor(x.numpy()) for x in inputs])
    while not hasattr(out, "numpy"):   # the frontend returns a 1-tuple
        out = out[0]
    return out.numpy(), record.optimized


def _check_against_torch(model, *shapes):
    mod, inputs = _import(model, *shapes)
    got, optimized = _run(mod, inputs)
    with torch.no_grad():
        want = model(*inputs).numpy()
    assert optimized, "mlclab's pipeline fell back to TVM's plain one"
    np.testing.assert_allclose(got, want, atol=TOL, rtol=TOL)
    return mod


def _until(mod, last: str):
    """``mod`` after the build passes up to and including ``last``."""
    passes = build_passes("llvm")
    names = [p.info.name for p in passes]
    with resolve_target("llvm"):
        return tvm().transform.Sequential(passes[:names.index(last) + 1])(mod)


def _kernels(mod):
    from tvm import tirx

    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)}


class ConvBnRelu(torch.nn.Module):
    def __init__(self, cin, cout, kernel, stride, padding, **conv):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, kernel, stride, padding, bias=False, **conv)
        self.bn = torch.nn.BatchNorm2d(cout)
        with torch.no_grad():  # statistics that are not the identity
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Residual(torch.nn.Module):
    """ResNet's basic block, with a strided 1x1 downsample when the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = ConvBnRelu(cin, cout, 3, stride, 1)
        self.b = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn = torch.nn.BatchNorm2d(cout)
        self.down = (torch.nn.Conv2d(cin, cout, 1, stride, bias=False)
                     if stride != 1 or cin != cout else None)

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        return torch.relu(self.bn(self.b(self.a(x))) + skip)


# ------------------------------------------------------------------ the blocked path is taken
def test_channel_block_is_the_widest_divisor_in_a_vector():
    assert channel_block(64, 16) == 16 and channel_block(24, 16) == 12
    assert channel_block(3, 16) == 3 and channel_block(40, 8) == 8 and channel_block(7, 16) == 7


def test_resnet_style_conv_is_blocked_vectorized_and_register_tiled(lanes):
    mod, _ = _import(torch.nn.Sequential(torch.nn.Conv2d(64, 64, 3, 1, 1), torch.nn.ReLU()),
                     (1, 64, 14, 14))
    block = channel_block(64, lanes)
    relax_text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    assert f'data_layout="NCHW{block}c", kernel_layout="OIHW{block}i{block}o"' in relax_text
    # the constant weight was re-laid out at compile time: no transform of it is left
    assert relax_text.count("R.layout_transform") == 2  # the input in, the result out
    kernels = _kernels(_until(mod, "mlclab.ScheduleCPU"))
    (name,) = [n for n in kernels if n.startswith("fused_conv2d_NCHWc")]
    assert "relu" in name  # the epilogue is fused into the convolution's kernel
    tir = kernels[name].script()
    assert f'T.sblock("{BLOCK_NAME}_update")' in tir
    assert kernels[name].attrs[SCHEDULE_ATTR] == "blocked_conv2d"
    # the two layout transforms at the edges (input in, result out) took their own rule
    transforms = [f for n, f in kernels.items() if n != name]
    assert [schedule_decision(f)[0] for f in transforms] == ["blocked_layout_transform"] * 2
    # the inner loops: channel blocks and output pixels unrolled, the channel block one
    # vector -- a tile of accumulators small enough to stay in registers
    oc_tile, pixels = conv_tile(64 // block, 14, lanes)
    assert oc_tile * pixels * lanes * 4 < STACK_BYTES
    assert f"for o in T.vectorized(T.int64({block})):" in tir
    assert f"for x_1 in T.unroll(T.int64({pixels})):" in tir
    if oc_tile > 1:
        assert f"for oc_1 in T.unroll(T.int64({oc_tile})):" in tir
    # the two transforms at the edges are tiled transposes: one side vectorized, the
    # other unrolled
    transforms = [f.script() for n, f in kernels.items() if n.startswith("te_layout_transform")]
    assert len(transforms) == 2
    assert all("T.vectorized" in t and "T.unroll" in t for t in transforms)


def test_an_avx512_tile_of_eight_accumulators_doubles_for_deep_sums():
    # 2 x 4 (a width of a power of two under the stack bound) becomes 2 x 8 when each
    # output sums 32 terms or more; not for short sums, one channel block, a tile of 14
    # already, or AVX2's 16 registers
    assert conv_tile(4, 32, 16, depth=9 * 64) == (2, 8)
    assert conv_tile(8, 128, 16, depth=32) == (2, 8)
    assert conv_tile(4, 128, 16, depth=16) == (2, 4)
    assert conv_tile(3, 64, 16, depth=128) == (3, 4)     # three blocks: three at a time
    assert conv_tile(5, 64, 16, depth=128) == (1, 8)     # five: one at a time
    assert conv_tile(4, 56, 16, depth=64) == (2, 7)
    assert conv_tile(4, 32, 8, depth=9 * 64) == (2, 4)


def test_four_channel_blocks_where_the_width_leaves_two_few_pixels():
    # SqueezeNet's stem (111 = 3 x 37 wide) and its 27-wide stage: 2 x 3 or 1 x 9 -> 4 x 3;
    # not where two blocks already hold as many (2 x 6 against 4 x 3) or four do not divide
    assert conv_tile(4, 111, 16, depth=27) == (4, 3)
    assert conv_tile(8, 27, 16, depth=288) == (4, 3)
    assert conv_tile(4, 12, 16, depth=27) == (2, 6)
    assert conv_tile(6, 111, 16, depth=27) == (2, 3)


def test_a_prime_width_is_tiled_in_runs_with_a_short_last_one(monkeypatch):
    # SqueezeNet's 13 x 13 stage: 1 x 13 (a broadcast per FMA) -> two blocks by 7 + 6, or
    # three (its classifier's 63 blocks) by 5 + 5 + 3; one block, or five, stays 1 x 13;
    # a width with a divisor keeps it (ResNet's 7 fits whole: 2 x 7)
    from mlclab.backend.schedules import blocked

    assert conv_tile(4, 13, 16, depth=512) == (2, 7)
    assert conv_tile(63, 13, 16, depth=512) == (3, 5)
    assert conv_tile(1, 13, 16, depth=512) == (1, 13)
    assert conv_tile(5, 13, 16, depth=512) == (1, 13)
    assert conv_tile(4, 7, 16, depth=512) == (2, 7)
    monkeypatch.setattr(blocked, "TAIL_TILE", False)
    assert conv_tile(4, 13, 16, depth=512) == (1, 13)


class Stage13(torch.nn.Module):
    """A 1x1 and a 3x3 convolution (padded) on a prime width, as SqueezeNet's last Fires,
    and a 1x1 to 48 channels (three blocks on AVX-512)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(32, 64, 1)
        self.b = torch.nn.Conv2d(64, 64, 3, padding=1)
        self.c = torch.nn.Conv2d(64, 48, 1)

    def forward(self, x):
        return torch.relu(self.c(torch.relu(self.b(torch.relu(self.a(x))))))


def test_tiles_with_a_short_last_run_give_the_same_bits(monkeypatch):
    """The tiles over 13 columns with a short last run (``TAIL_TILE``): the bits of the
    tiles of one block by 13 columns, NaN, +-inf and -0.0 in the image, and PyTorch's."""
    from mlclab.backend.schedules import blocked

    model = Stage13()
    mod, (x,) = _import(model, (1, 32, 11, 13))
    x[0, 0, 3, 4], x[0, 5, 9, 12], x[0, 7, 0, 12] = float("nan"), float("inf"), -0.0
    x[0, 2, 10, 0] = float("-inf")
    runs, optimized = _run(mod, (x,))
    monkeypatch.setattr(blocked, "TAIL_TILE", False)
    whole, _ = _run(mod, (x,))
    assert optimized and np.isnan(runs).any() and runs.tobytes() == whole.tobytes()
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(np.nan_to_num(runs), np.nan_to_num(want), atol=TOL, rtol=TOL)


def test_a_stem_in_tiles_of_four_blocks_matches_pytorch():
    """Four output blocks per tile over an odd width: 19 columns, 3x3 stride 2, no padding
    -> 9 (4 x 3 on AVX-512, against 2 x 3 or 1 x 9)."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, 2), torch.nn.ReLU())
    _check_against_torch(model, (1, 3, 21, 19))


# (input channels, groups, kernel, stride, size): stems (RGB in blocks of 3), MobileNetV3's
# 5x5 depthwise on 72 channels (blocks of 12 on AVX-512) and RegNetY's groups of 8 (blocks of
# 8), whose paddings took the same scalar loop.
NARROW_PADDINGS = [(3, 1, 3, 2, (23, 30)), (3, 1, 7, 2, (20, 17)), (3, 1, 3, 1, (9, 11)),
                   (72, 72, 5, 1, (14, 13)), (48, 6, 3, 1, (10, 12))]


@pytest.mark.parametrize("cin,groups,kernel,stride,size", NARROW_PADDINGS)
def test_a_narrow_blocked_padding_is_a_fill_and_a_vector_copy(cin, groups, kernel, stride,
                                                              size, lanes, monkeypatch):
    """A stem's RGB image is blocked by 3: its zero padding was one float at a time under
    a bounds test (210 of ResNet-18d's stem's 309 us).  It is now a fill of zeros and a
    copy of the image rows in vectors; the convolution reads the same values, so the
    results are the same bits.  (The copy's test: the padding is made, not read through.)"""
    from mlclab.backend.schedules import blocked

    monkeypatch.setattr(blocked, "BORDER_IN_KERNEL", False)
    cout = 32 if groups == 1 else cin
    model = ConvBnRelu(cin, cout, kernel, stride, kernel // 2, groups=groups)
    mod = _check_against_torch(model, (1, cin, *size))
    (conv,) = [f for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()
               if "conv2d" in name]
    if channel_block(cin // groups if groups not in (1, cin) else cin, lanes) % lanes == 0:
        return  # a whole-vector block (AVX2: 48's blocks of 8 fill a vector): nothing to do
    text = conv.script()
    assert '_pad_pad_const")' in text                               # the fill
    lines = text.splitlines()
    copy = next(i for i, line in enumerate(lines) if 'T.sblock("' in line
                and line.rstrip().endswith('_pad"):'))
    assert "T.vectorized" in lines[copy - 1]                        # the copy, in vectors
    split, _ = _run(*_import(model, (1, cin, *size)))
    monkeypatch.setattr(blocked, "SPLIT_NARROW_PADDING", False)
    (old,) = [f for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()
              if "conv2d" in name]
    assert "pad_const" not in old.script()
    whole, _ = _run(*_import(model, (1, cin, *size)))
    assert np.array_equal(split.view(np.uint32), whole.view(np.uint32))


def test_only_channel_planes_4kib_apart_are_stored_along_the_width():
    # 32 x 32 float32 planes start 4 KiB apart: a vector of the channel block stored into
    # 16 of them hit one L1 set (MobileViT-XS's 96 x 32 x 32 back to NCHW: 48 -> 13 us)
    from mlclab.backend.schedules.blocked import _planes_alias

    assert _planes_alias(32 * 32) and _planes_alias(64 * 64)
    assert not _planes_alias(56 * 56) and not _planes_alias(28 * 28)
    assert not _planes_alias(16 * 16)


def test_dsl_conv2d_takes_the_blocked_path_with_a_weight_parameter(lanes):
    src = textwrap.dedent('''
        def block(x: Tensor[(1, 16, 12, 12), f32], w: Tensor[(32, 16, 3, 3), f32],
                  b: Tensor[(32,), f32]):
            y = relu(conv2d(x, w, bias=b, strides=(2, 2), padding=(1, 1)))
            return max_pool2d(y, (2, 2))
    ''')
    fn = mlclab.compile(src)["block"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32)
            for s in [(1, 16, 12, 12), (32, 16, 3, 3), (32,)]]
    np.testing.assert_allclose(fn(*args), fn.reference(*args), atol=TOL, rtol=TOL)
    step = fn.pipeline()["mlclab.BlockConvLayout"]
    assert step.changed
    text = step.mod["block"].script()
    assert f'kernel_layout="OIHW{channel_block(16, lanes)}i{channel_block(32, lanes)}o"' in text
    # a weight that is a parameter is re-laid out at run time, by a kernel of its own
    assert "R.layout_transform(w, " in text
    assert f'layout="NCHW{channel_block(32, lanes)}c"' in text  # max pooling stays blocked


def test_batch_norm_is_folded_into_the_convolution():
    mod, _ = _import(ConvBnRelu(8, 16, 3, 1, 1), (1, 8, 10, 10))
    assert "R.nn.batch_norm" in mod["main"].script()
    folded = _until(mod, "mlclab.FoldBatchNorm")["main"].script()
    assert "batch_norm" not in folded
    assert folded.count("R.nn.conv2d") == 1 and folded.count("R.add") == 1
    names = list(_kernels(_until(mod, "FuseTIR")))
    assert [n for n in names if n.startswith("fused_conv2d_NCHWc")] != []
    assert not [n for n in names if "batch_norm" in n or "multiply" in n]


# ------------------------------------------------------------------ results match PyTorch
@pytest.mark.parametrize("cin, cout, kernel, stride, padding, size", [
    (16, 32, 3, 1, 1, 14),      # 3x3 stride 1
    (16, 32, 3, 2, 1, 15),      # 3x3 stride 2, odd size
    (3, 16, 7, 2, 3, 32),       # ResNet's stem: 7x7 stride 2 pad 3, three input channels
    (32, 64, 1, 2, 0, 14),      # the downsample: 1x1 stride 2
    (24, 40, 3, 1, 1, 9),       # channels no vector divides (blocks of 12 and 10 or 8)
    (8, 16, 3, 1, (0, 2), 7),   # asymmetric padding
    (8, 16, 3, 3, 1, 14),       # stride 3
    (64, 32, 3, 1, 0, 3),       # a 1x1 output
    (1, 8, 3, 1, 1, 16),        # one input channel (NCHW1c)
    (4, 8, 3, 3, 1, 5),         # tiny: stays NCHW (below MIN_MACS)
    (64, 96, 3, 1, 1, 32),      # 3x3 at a width of 32: tiles of 2 x 8 on AVX-512
    (64, 48, 1, 1, 0, 20),      # three channel blocks of 16: tiles of 3 x 4
])
def test_conv_bn_relu_matches_pytorch(cin, cout, kernel, stride, padding, size):
    _check_against_torch(ConvBnRelu(cin, cout, kernel, stride, padding), (1, cin, size, size))


@pytest.mark.parametrize("cin, cout, stride", [(16, 16, 1), (16, 32, 2)])
def test_residual_block_matches_pytorch(cin, cout, stride):
    mod = _check_against_torch(Residual(cin, cout, stride), (1, cin, 12, 12))
    names = list(_kernels(_until(mod, "FuseTIR")))
    # the residual add and the relu run in a convolution's epilogue: every kernel is a
    # convolution, or one of the two layout transforms at the edges
    assert len([n for n in names if n.startswith("fused_conv2d_NCHWc")]) == len(names) - 2
    assert any("relu" in n and n.count("_add") >= 1 for n in names)


def test_conv_with_bias_then_max_pool_matches_pytorch():
    model = torch.nn.Sequential(torch.nn.Conv2d(8, 32, 3, 1, 1), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(3, 2, 1), torch.nn.Conv2d(32, 16, 1))
    _check_against_torch(model, (1, 8, 17, 17))


def test_activations_between_convolutions_stay_blocked():
    """MobileNet-style activations (relu6 is clip, SiLU a sigmoid and a multiply) and a
    batch norm after a biased convolution (a multiply and an add): the graph stays in the
    blocked layout from the first convolution to the last."""
    model = torch.nn.Sequential(
        torch.nn.Conv2d(8, 32, 3, 1, 1), torch.nn.BatchNorm2d(32), torch.nn.ReLU6(),
        torch.nn.Conv2d(32, 32, 1), torch.nn.SiLU(), torch.nn.Conv2d(32, 16, 3, 2, 1),
        torch.nn.Sigmoid(), torch.nn.Conv2d(16, 16, 1), torch.nn.Hardtanh(-0.5, 0.5),
        torch.nn.GELU(), torch.nn.LeakyReLU(0.2), torch.nn.Tanh())
    mod = _check_against_torch(model, (1, 8, 12, 12))
    text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    assert text.count("R.layout_transform") == 2  # the input in, the result out


@pytest.mark.parametrize("conv", [
    dict(groups=16),           # depthwise with a channel multiplier (16 -> 32)
    dict(dilation=2),          # dilated
])
def test_unusual_convs_fall_back_and_stay_correct(conv):
    model = ConvBnRelu(16, 32, 3, 1, 2, **conv)
    mod = _check_against_torch(model, (1, 16, 12, 12))
    text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    assert 'data_layout="NCHW"' in text and "NCHW16c" not in text and "layout_transform" not in text
    # ... but batch norm was still folded into its (grouped or dilated) weights
    # (grouped and depthwise convolutions that are blocked: tests/test_grouped_conv.py)
    assert "batch_norm" not in text


def test_a_prime_channel_count_wider_than_a_vector_falls_back():
    # 17 output channels: no block of at least MIN_BLOCK divides them
    mod = _check_against_torch(torch.nn.Conv2d(4, 17, 3, padding=1), (1, 4, 8, 8))
    assert "layout_transform" not in _until(mod, "mlclab.BlockConvLayout")["main"].script()


def test_a_block_under_half_a_vector_leaves_the_conv_in_nchw(lanes):
    from mlclab.backend.channel_blocks import MIN_BLOCK, min_block

    assert min_block(16) == 8 and min_block(8) == 4 and min_block(4) == MIN_BLOCK
    # ShuffleNetV2's 116 channels (4 x 29): blocks of 4, a quarter of an AVX-512 vector
    model = ConvBnRelu(116, 116, 1, 1, 0)
    mod = _check_against_torch(model, (1, 116, 13, 15))
    text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    assert ("layout_transform" in text) == (channel_block(116, lanes) >= min_block(lanes))


def test_output_channels_in_a_cut_vector_are_padded_to_whole_vectors(lanes, monkeypatch):
    """200 output channels are blocks of 10 on AVX-512 (a 16-lane vector and a 2-lane one
    per FMA): computed as 208 in blocks of 16 with zero weights, sliced back to 200 in NCHW
    for the bias, the activation and the next convolution (odd image, stride 2).  Each
    output's sum is the unpadded one's, so the results are the same bits."""
    from mlclab.backend import channel_blocks

    model = torch.nn.Sequential(torch.nn.Conv2d(7, 200, 3, 2, 1), torch.nn.ReLU(),
                                torch.nn.Conv2d(200, 24, 1))
    mod = _check_against_torch(model, (1, 7, 13, 11))
    text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    cut = lanes // 2 < channel_block(200, lanes) < lanes
    assert ("R.strided_slice" in text) == cut
    assert (f"R.Tensor((1, {208 // lanes}, 7, 6, {lanes})" in text) == cut
    padded, _ = _run(*_import(model, (1, 7, 13, 11)))
    monkeypatch.setattr(channel_blocks, "PAD_SHARE", 0)
    unpadded, _ = _run(*_import(model, (1, 7, 13, 11)))
    assert np.array_equal(padded, unpadded)


def test_padding_a_cut_vector_is_bounded():
    """24 channels (blocks of 12) would need a third more: not padded."""
    from mlclab.backend import channel_blocks

    mod = _check_against_torch(torch.nn.Conv2d(8, 24, 3, padding=1), (1, 8, 9, 9))
    assert "R.strided_slice" not in _until(mod, "mlclab.BlockConvLayout")["main"].script()
    assert channel_blocks.PAD_SHARE < 8 / 24


def test_a_tiny_conv_stays_nchw():
    """Lesson 3's first block: 2,304 multiply-adds, less than the transforms would cost."""
    mod = _check_against_torch(torch.nn.Conv2d(1, 4, 3, padding=1), (1, 1, 8, 8))
    assert "layout_transform" not in _until(mod, "mlclab.BlockConvLayout")["main"].script()
    mod = _check_against_torch(torch.nn.Conv2d(1, 8, 3, padding=1), (1, 1, 32, 32))
    assert "layout_transform" in _until(mod, "mlclab.BlockConvLayout")["main"].script()


def test_symbolic_batch_falls_back_and_stays_correct():
    from tvm import relax
    from tvm.relax import op as R

    from mlclab.api.build import build_executable

    n = tvm().tirx.Var("n", "int64")
    x = relax.Var("x", relax.TensorType((n, 16, 8, 8), "float32"))
    w = np.random.default_rng(1).standard_normal((32, 16, 3, 3), dtype=np.float32)
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit_output(R.nn.relu(R.nn.conv2d(x, relax.const(w), padding=1)))
        bb.emit_func_output(y)
    mod = bb.get()
    assert "layout_transform" not in _until(mod, "mlclab.BlockConvLayout")["main"].script()
    executable, record = build_executable(mod, "llvm")
    assert record.optimized
    vm = relax.VirtualMachine(executable, tvm().cpu())
    data = np.random.default_rng(2).standard_normal((3, 16, 8, 8), dtype=np.float32)
    got = vm["main"](tvm().runtime.tensor(data)).numpy()
    want = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(data), torch.from_numpy(w),
                                                 padding=1)).numpy()
    np.testing.assert_allclose(got, want, atol=TOL, rtol=TOL)


def test_blocked_max_pool_keeps_nan_as_numpy_does():
    src = textwrap.dedent('''
        def f(x: Tensor[(1, 16, 32, 32), f32], w: Tensor[(16, 16, 1, 1), f32]):
            return max_pool2d(conv2d(x, w), (2, 2))
    ''')
    fn = mlclab.compile(src)["f"]
    x = np.random.default_rng(3).standard_normal((1, 16, 32, 32), dtype=np.float32)
    x[0, 0, 0, 0] = np.nan
    w = np.eye(16, dtype=np.float32).reshape(16, 16, 1, 1)
    got, want = fn(x, w), fn.reference(x, w)
    assert np.isnan(got[:, :, 0, 0]).all() and np.isnan(want[:, :, 0, 0]).all()
    np.testing.assert_allclose(got, want, atol=TOL, rtol=TOL)
    block = channel_block(16, vector_lanes(resolve_target("llvm")))
    assert f'layout="NCHW{block}c"' in fn.pipeline()["mlclab.BlockConvLayout"].mod["f"].script()


def test_misaligned_arrays_in_a_subprocess():
    """Blocked kernels use AVX-512 vectors; arrays that are not 64-byte aligned (numpy's
    usual 16) are read in place. A crash would kill the test process, so run it apart."""
    code = textwrap.dedent('''
        import numpy as np, mlclab
        src = """
        def f(x: Tensor[(1, 32, 9, 9), f32], w: Tensor[(32, 32, 3, 3), f32]):
            return relu(conv2d(x, w, padding=(1, 1)))
        """
        fn = mlclab.compile(src)["f"]
        rng = np.random.default_rng(0)
        for offset in range(0, 16, 4):   # 0, 4, 8 and 12 floats past a 64-byte boundary
            raw = np.empty(32 * 81 + 32 * 9 * 32 + 64, np.float32)
            base = (-raw.ctypes.data // 4) % 16 + offset
            x = raw[base:base + 32 * 81].reshape(1, 32, 9, 9)
            w = raw[base + 32 * 81:base + 32 * 81 + 32 * 288].reshape(32, 32, 3, 3)
            x[...] = rng.standard_normal(x.shape)
            w[...] = rng.standard_normal(w.shape)
            assert np.allclose(fn(x, w), fn.reference(x, w), atol=1e-4), offset
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


# ------------------------------------------------------------------ refusals fall back
def test_a_refused_blocked_schedule_falls_back_to_the_general_rules(monkeypatch):
    from mlclab.backend.schedules import rules

    def refuse(*_args):
        raise ValueError("refused")

    mod, _ = _import(Residual(16, 16, 1), (1, 16, 10, 10))
    monkeypatch.setattr(rules.BlockedConv2d, "schedule", refuse)
    kernels = _kernels(_until(mod, "mlclab.ScheduleCPU"))
    conv = [f for n, f in kernels.items() if n.startswith("fused_conv2d_NCHWc")]
    # still scheduled (by the general reduction rules), not left naive, and the refusal
    # is recorded rather than swallowed
    assert conv and all(f.attrs.get("tirx.is_scheduled", False) for f in conv)
    for f in conv:
        rule, declined = schedule_decision(f)
        assert rule in ("register_tile_packed", "register_tile", "parallel_loops")
        assert "blocked_conv2d: ValueError: refused" in declined
    _check_against_torch(Residual(16, 16, 1), (1, 16, 10, 10))


def test_a_failing_layout_pass_is_skipped_and_recorded(monkeypatch):
    from mlclab.backend import conv_layout

    def broken(*_args):
        raise RuntimeError("broken")

    monkeypatch.setattr(conv_layout, "_Blocker", broken)
    model = ConvBnRelu(8, 16, 3, 1, 1)
    mod, inputs = _import(model, (1, 8, 9, 9))
    got, optimized = _run(mod, inputs)
    assert not optimized
    with torch.no_grad():
        np.testing.assert_allclose(got, model(*inputs).numpy(), atol=TOL, rtol=TOL)


def test_a_conv_inside_an_if_is_left_to_the_general_schedule():
    """The layout rewrite only touches functions of one dataflow block, so a value it moves
    is always in scope where it is used; a branch keeps its NCHW convolution."""
    src = textwrap.dedent('''
        def f(x: Tensor[(1, 16, 6, 6), f32], w: Tensor[(16, 16, 3, 3), f32]):
            if sum(x) > 0.0:
                y = relu(conv2d(x, w, padding=(1, 1)))
            else:
                y = conv2d(x, w, padding=(1, 1))
            return y + 1.0
    ''')
    fn = mlclab.compile(src)["f"]
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 16, 6, 6), dtype=np.float32), \
        rng.standard_normal((16, 16, 3, 3), dtype=np.float32)
    for sign in (1, -1):
        xs = np.abs(x) * sign
        np.testing.assert_allclose(fn(xs, w), fn.reference(xs, w), atol=TOL, rtol=TOL)
    assert not fn.pipeline()["mlclab.BlockConvLayout"].changed


# ------------------------------------------------- the border read in the kernel (issue 32)
def _special_border(shape, seed):
    """Random values with NaN, +-inf and -0.0 on the border rows and columns (and one NaN
    inside): what a padded copy and a read through the padding's test must treat alike."""
    torch.manual_seed(seed)
    x = torch.randn(*shape)
    x[0, 0, 0, 1] = float("nan")
    x[0, 1, -1, 2] = float("inf")
    x[0, 2, 3, 0] = float("-inf")
    x[0, 3, 2, -1] = float("nan")
    x[0, 4, 0, :] = -0.0
    x[0, 5, :, -1] = -0.0
    x[0, 6, shape[2] // 2, shape[3] // 2] = float("nan")
    return x


BORDER_CASES = [(ConvBnRelu(16, 32, 3, 1, 1), 7), (ConvBnRelu(16, 32, 3, 2, 1), 13),
                (ConvBnRelu(16, 16, 3, 1, 1), 13), (Residual(16, 16, 1), 7),
                (Residual(16, 16, 1), 13), (Residual(16, 32, 2), 13),
                (ConvBnRelu(3, 32, 3, 2, 1), 13),   # a stem: blocks of 3 channels
                (ConvBnRelu(16, 16, 3, 1, 1), 56)]  # 8 column tiles: 6 in the interior


@pytest.mark.parametrize("case", range(len(BORDER_CASES)))
def test_a_convolution_reading_through_its_padding_gives_the_copys_bits(case, monkeypatch):
    """``BORDER_IN_KERNEL``: no padded copy, the input read through the padding's test, the
    column tests ``likely`` so TVM's LoopPartition frees the interior tiles of them.  The
    same values are summed in the same order: the same bits as the copy, NaN, +-inf and
    -0.0 on the border included, and PyTorch's values."""
    from mlclab.backend.schedules import blocked

    model, size = BORDER_CASES[case]
    model = model.eval()
    cin = next(model.parameters()).shape[1]
    x = _special_border((1, max(cin, 7), size, size), case)[:, :cin].contiguous()
    mod, _ = _import(model, (1, cin, size, size))
    results = {}
    for on in (False, True):
        monkeypatch.setattr(blocked, "BORDER_IN_KERNEL", on)
        texts = [f.script() for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()
                 if "conv2d_NCHWc" in name]
        padded = [t for t in texts if "conv2d_NCHWc_pad" in t]
        assert bool(padded) != on and any(("T.likely" in t) == on for t in texts), on
        results[on], optimized = _run(mod, (x,))
        assert optimized
    assert np.array_equal(results[True].view(np.uint32), results[False].view(np.uint32))
    with torch.no_grad():
        want = model(x).numpy()
    assert np.isnan(want).any() and np.array_equal(np.isnan(results[True]), np.isnan(want))
    np.testing.assert_allclose(results[True], want, atol=TOL, rtol=TOL)


@pytest.mark.parametrize("cin, cout, kernel, stride, size", [(3, 16, 7, 2, 224),
                                                           (16, 16, 5, 1, 13)])
def test_a_padding_wider_than_one_column_keeps_its_copy(cin, cout, kernel, stride, size,
                                                         monkeypatch):
    """A padding of 2 or 3 columns (5x5, 7x7) is not read through: LoopPartition would split
    the unrolled pixel loop at a bound that depends on the kernel column, which UnrollLoop
    refuses (ResNet-50's 7x7 stem fell back to TVM's plain pipeline).  Its copy stays, and
    mlclab's pipeline builds it."""
    from mlclab.backend.schedules import blocked

    monkeypatch.setattr(blocked, "BORDER_IN_KERNEL", True)
    model = ConvBnRelu(cin, cout, kernel, stride, kernel // 2)
    mod = _check_against_torch(model, (1, cin, size, size))
    texts = [f.script() for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()
             if "conv2d_NCHWc" in name]
    assert texts and all("T.likely" not in t for t in texts)
    assert any("conv2d_NCHWc_pad" in t for t in texts)


@pytest.mark.parametrize("cin, cout, size", [(32, 128, 27), (64, 256, 13), (16, 16, 56)])
def test_few_pixels_or_a_short_last_tile_keep_the_copy(cin, cout, size, lanes, monkeypatch):
    """Tiles of fewer than ``READ_THROUGH_MIN_PIXELS`` output pixels keep the padded copy
    (SqueezeNet's 27-wide 3x3, in tiles of 3 pixels, was 1.2x slower read through), and so
    do rows whose last tile is short (a prime width in runs, ``TAIL_TILE``: SqueezeNet's
    13-wide 3x3s in tiles of 7 made the model 1.09x slower read through); a 56-wide row in
    whole tiles reads through.  The same bits either way."""
    from mlclab.backend.schedules import blocked

    model = ConvBnRelu(cin, cout, 3, 1, 1)
    mod, inputs = _import(model, (1, cin, size, size))
    _, pixels = conv_tile(cout // channel_block(cout, lanes), size, lanes, cin * 9)
    reads = pixels >= blocked.READ_THROUGH_MIN_PIXELS and size % pixels == 0
    assert reads == (size == 56) or lanes != 16   # the tiles named above are AVX-512's
    results = {}
    for on in (False, True):
        monkeypatch.setattr(blocked, "BORDER_IN_KERNEL", on)
        texts = [f.script() for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()
                 if "conv2d_NCHWc" in name]
        assert texts and all(("conv2d_NCHWc_pad" in t) != (on and reads) for t in texts)
        results[on], _ = _run(mod, inputs)
    assert np.array_equal(results[True].view(np.uint32), results[False].view(np.uint32))
