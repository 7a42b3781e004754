"""Depthwise and grouped convolutions in the blocked NCHW[x]c layout
(mlclab/backend/grouped_conv.py) and the depthwise schedule rule
(mlclab/backend/schedules/depthwise.py): which convolutions take the blocked path, that the
rule schedules them (and declines, with a reason, what it does not handle), that no layout
round trip appears between blocks, and that every result matches PyTorch or numpy."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlclab
from mlclab.backend.grouped_conv import ConvBlocks, blocks_of_grouped
from mlclab.backend.schedules import schedule_decision
from mlclab.backend.schedules.depthwise import BlockedDepthwiseConv2d, depthwise_pixels
from mlclab.backend.schedules.rules import CPU_RULES
from tests.test_conv_schedules import TOL, ConvBnRelu, _check_against_torch, _kernels, _until

import torch


def _decisions(mod):
    """{kernel name: (rule, declined)} after mlclab's schedule pass."""
    return {name: schedule_decision(f)
            for name, f in _kernels(_until(mod, "mlclab.ScheduleCPU")).items()}


def _relax_text(mod):
    return _until(mod, "mlclab.BlockConvLayout")["main"].script()


class ConvBnAct(ConvBnRelu):
    """Conv, batch norm (with statistics that are not the identity), then ``act``."""

    def __init__(self, cin, cout, kernel, stride=1, groups=1, act=torch.nn.ReLU6, padding=None):
        super().__init__(cin, cout, kernel, stride, kernel // 2 if padding is None else padding,
                         groups=groups)
        self.act = act()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class InvertedResidual(torch.nn.Module):
    """MobileNetV2's block: 1x1 expand, depthwise, 1x1 project, and the skip."""

    def __init__(self, channels, expand, kernel=3, act=torch.nn.ReLU6):
        super().__init__()
        hidden = channels * expand
        self.expand = ConvBnAct(channels, hidden, 1, act=act)
        self.depthwise = ConvBnAct(hidden, hidden, kernel, groups=hidden, act=act)
        self.project = ConvBnAct(hidden, channels, 1, act=torch.nn.Identity)

    def forward(self, x):
        return x + self.project(self.depthwise(self.expand(x)))


class RegNetBlock(torch.nn.Module):
    """RegNetY's bottleneck without squeeze-excite: 1x1, grouped 3x3, 1x1, the skip."""

    def __init__(self, channels, group_width, stride=1):
        super().__init__()
        self.a = ConvBnAct(channels, channels, 1, act=torch.nn.ReLU)
        self.b = ConvBnAct(channels, channels, 3, stride, channels // group_width,
                           act=torch.nn.ReLU)
        self.c = ConvBnAct(channels, channels, 1, act=torch.nn.Identity)
        self.stride = stride

    def forward(self, x):
        y = self.c(self.b(self.a(x)))
        return torch.relu(y + x) if self.stride == 1 else torch.relu(y)


# ------------------------------------------------------------------------ which blocks
def test_depthwise_keeps_the_neighbours_block_and_a_one_channel_weight_block():
    assert blocks_of_grouped(96, (96, 1, 3, 3), 96, 16) == ConvBlocks(16, 1, 16)
    assert blocks_of_grouped(24, (24, 1, 5, 5), 24, 16) == ConvBlocks(12, 1, 12)
    assert ConvBlocks(16, 1, 16).layouts() == ("NCHW16c", "OIHW1i16o", "NCHW16c")


def test_a_strided_depthwise_conv_takes_a_block_narrower_than_a_dense_one():
    # no general schedule runs a strided depthwise conv in NCHW: blocks of 2 rather than none
    assert blocks_of_grouped(58, (58, 1, 3, 3), 58, 16, strided=True) == ConvBlocks(2, 1, 2)
    # at stride 1 the register tile runs it in NCHW along the width
    assert blocks_of_grouped(58, (58, 1, 3, 3), 58, 16) is None
    # ... and in blocks under half a vector: blocks of 4 are AVX2's, not AVX-512's
    assert blocks_of_grouped(116, (116, 1, 3, 3), 116, 16) is None
    assert blocks_of_grouped(116, (116, 1, 3, 3), 116, 8) == ConvBlocks(4, 1, 4)
    assert blocks_of_grouped(116, (116, 1, 3, 3), 116, 16, strided=True) == ConvBlocks(4, 1, 4)
    # a prime count has no block but 1
    assert blocks_of_grouped(29, (29, 1, 3, 3), 29, 16, strided=True) is None


def test_grouped_blocks_divide_the_groups():
    # 64 channels in groups of 16: the neighbours' block 16 divides the group
    assert blocks_of_grouped(64, (64, 16, 3, 3), 4, 16) == ConvBlocks(16, 16, 16)
    # RegNetY's groups of 8 in 48 channels (blocked by 16 around it): blocks of 8
    assert blocks_of_grouped(48, (48, 8, 3, 3), 6, 16) == ConvBlocks(8, 8, 8)
    # ... and an input already blocked by 8 is read as it is
    assert blocks_of_grouped(104, (104, 8, 3, 3), 13, 16, incoming=8) == ConvBlocks(8, 8, 8)


@pytest.mark.parametrize("args", [
    (16, (32, 1, 3, 3), 16),   # a channel multiplier: one input, two outputs per group
    (34, (34, 1, 3, 3), 34),   # depthwise, 34 = 2 x 17: no block of at least 4
    (12, (12, 3, 3, 3), 4),    # groups of 3 channels: no block of at least 4 divides them
    (16, (16, 8, 3, 3), 3),    # inconsistent: 3 groups of 8 is not 16 channels
])
def test_convolutions_without_usable_blocks_stay_nchw(args):
    assert blocks_of_grouped(*args, lanes=16) is None


# -------------------------------------------------------- depthwise: blocked, scheduled
@pytest.mark.parametrize("channels, size, kernel, stride, padding", [
    (32, 14, 3, 1, 1),    # MobileNet's 3x3
    (32, 15, 3, 2, 1),    # stride 2 on an odd width
    (48, 12, 5, 1, 2),    # EfficientNet's 5x5
    (48, 13, 5, 2, 2),
    (32, 14, 7, 1, 3),    # ConvNeXt's 7x7
    (32, 12, 3, 1, 0),    # no padding
    (24, 13, 3, 2, 1),    # a block of 12 channels (24 = 2 x 12), a prime width
    (58, 15, 3, 2, 1),    # ShuffleNetV2's: 58 = 2 x 29, blocks of 2 since it is strided
    (34, 13, 5, 2, 2),    # 34 = 2 x 17, a 5x5 kernel
])
def test_depthwise_conv_is_blocked_scheduled_and_matches_pytorch(channels, size, kernel, stride,
                                                                 padding):
    model = ConvBnAct(channels, channels, kernel, stride, channels, padding=padding)
    mod = _check_against_torch(model, (1, channels, size, size))
    assert 'groups=%d' % channels in _relax_text(mod) and "OIHW1i" in _relax_text(mod)
    (depthwise,) = [d for name, d in _decisions(mod).items() if "depthwise" in name]
    assert depthwise[0] == "blocked_depthwise_conv2d"
    # the rules before it said why they did not take it
    assert "blocked_conv2d: no blocked conv2d" in depthwise[1]


@pytest.mark.parametrize("act", [torch.nn.ReLU, torch.nn.ReLU6, torch.nn.SiLU,
                                 torch.nn.Hardswish, torch.nn.Identity])
def test_depthwise_epilogues_are_fused_into_its_kernel(act):
    model = ConvBnAct(32, 32, 3, 1, 32, act=act)
    mod = _check_against_torch(model, (1, 32, 16, 16))
    kernels = _kernels(_until(mod, "mlclab.ScheduleCPU"))
    (name,) = [n for n in kernels if "depthwise" in n]
    # bias (the folded batch norm) and the activation in the convolution's own kernel
    assert "add" in name and "transform" not in name
    text = kernels[name].script()
    assert "T.vectorized" in text and "T.unroll" in text and "T.parallel" not in text


def test_depthwise_register_tile_is_a_divisor_of_the_width_within_the_budget():
    assert depthwise_pixels(112, 16) == 14 and depthwise_pixels(56, 16) == 14
    assert depthwise_pixels(7, 16) == 7 and depthwise_pixels(13, 16) == 13
    assert depthwise_pixels(17, 16) == 1   # a prime wider than the budget: one pixel
    assert depthwise_pixels(28, 8) == 7    # AVX2: 16 registers, 12 accumulators


def test_a_dsl_depthwise_conv_with_its_weight_as_a_parameter_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 32, 20, 20)).astype("float32")
    w = rng.standard_normal((32, 1, 3, 3)).astype("float32")
    fn = mlclab.compile(
        "def f(x: Tensor[(1, 32, 20, 20), f32], w: Tensor[(32, 1, 3, 3), f32]):\n"
        "    return relu(conv2d(x, w, strides=2, padding=(0, 1, 2, 1), groups=32))")["f"]
    np.testing.assert_allclose(fn(x, w), fn.reference(x, w), rtol=TOL, atol=TOL)
    rules = [rule for rule, _ in fn.build_record.schedule_decisions().values()]
    assert "blocked_depthwise_conv2d" in rules


# -------------------------------------------------------------------- the rule declines
def _te_depthwise(width, then_reduce=False, kernel_size=3, stride=1):
    """A blocked depthwise PrimFunc made by the lowering itself (``width`` may be a
    symbolic var), optionally followed by another reduction in the same function."""
    from tvm import te

    from mlclab.backend.grouped_conv import _depthwise_nchwc

    data = te.placeholder((1, 2, 10, width, 16), name="data")
    kernel = te.placeholder((2, 1, kernel_size, kernel_size, 1, 16), name="kernel")
    pad = kernel_size // 2
    out = _depthwise_nchwc(data, kernel, strides=(stride, stride), padding=(pad,) * 4)
    if then_reduce:
        r = te.reduce_axis((0, 16), name="r")
        out = te.compute((1, 2, 10, width), lambda n, c, y, x: te.sum(out[n, c, y, x, r], axis=r))
    return te.create_prim_func([data, kernel, out])


def test_the_depthwise_rule_declines_what_it_does_not_handle_with_a_reason():
    from tvm import tirx

    rule = BlockedDepthwiseConv2d()
    sch, reason = rule.try_schedule(_te_depthwise(tirx.Var("w", "int64")), 16)
    assert sch is None and reason.startswith("symbolic sizes")
    sch, reason = rule.try_schedule(_te_depthwise(12, then_reduce=True), 16)
    assert sch is None and reason == "a depthwise convolution fused with another reduction"
    # a dense blocked convolution is not the rule's
    from tvm import te

    from mlclab.backend.conv_layout import _conv2d_nchwc
    data = te.placeholder((1, 2, 10, 10, 16))
    kernel = te.placeholder((2, 2, 3, 3, 16, 16))
    dense = te.create_prim_func([data, kernel, _conv2d_nchwc(data, kernel, (1, 1), (1, 1, 1, 1))])
    assert rule.try_schedule(dense, 16) == (None, "no blocked depthwise conv2d")
    # ... and the one it handles it schedules
    sch, reason = rule.try_schedule(_te_depthwise(12), 16)
    assert reason is None and "T.vectorized" in sch.mod["main"].script()


def test_parallel_depthwise_rows_on_two_threads_in_a_subprocess():
    """Big enough to run its rows in parallel, each with the padded rows it makes; on two
    threads, misaligned input included.  A crash would kill the test process."""
    code = textwrap.dedent('''
        import numpy as np, mlclab
        src = """
        def f(x: Tensor[(1, 64, 96, 96), f32], w: Tensor[(64, 1, 3, 3), f32]):
            return relu(conv2d(x, w, strides=%d, padding=1, groups=64))
        """
        rng = np.random.default_rng(0)
        for stride in (1, 2):
            fn = mlclab.compile(src % stride)["f"]
            assert "T.parallel" in str(fn.text("tir"))
            raw = np.empty(64 * 96 * 96 + 4, np.float32)
            x = raw[1:1 + 64 * 96 * 96].reshape(1, 64, 96, 96)   # 4 bytes off alignment
            x[...] = rng.standard_normal(x.shape)
            w = rng.standard_normal((64, 1, 3, 3)).astype("float32")
            for _ in range(5):
                assert np.allclose(fn(x, w), fn.reference(x, w), atol=1e-4), stride
        print("ok")
    ''')
    env = {**os.environ, "TVM_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize("kernel_size, stride, per_row", [
    (3, 1, True), (3, 2, True), (5, 2, True),   # each padded row made at most 3 times
    (5, 1, False), (7, 1, False),               # 5 and 7 times: one pass over the plane
])
def test_the_padding_is_made_per_output_row_unless_that_redoes_it_too_often(
        kernel_size, stride, per_row):
    sch, reason = BlockedDepthwiseConv2d().try_schedule(
        _te_depthwise(12, kernel_size=kernel_size, stride=stride), 16)
    assert reason is None
    pad_loops = sch.get_loops(sch.get_sblock("depthwise_conv2d_NCHWc_pad"))
    conv_loops = sch.get_loops(sch.get_sblock("depthwise_conv2d_NCHWc_update"))
    assert sch.get(pad_loops[0]).same_as(sch.get(conv_loops[0])) == per_row


def test_a_declined_depthwise_conv_falls_to_the_general_rules():
    """The symbolic one falls to the general rules, which record why the depthwise one
    declined."""
    from tvm import tirx

    from mlclab.backend.schedules import schedule_primfunc

    func = schedule_primfunc(_te_depthwise(tirx.Var("w", "int64")), 16, rules=CPU_RULES)
    rule, declined = schedule_decision(func)
    assert rule not in ("blocked_depthwise_conv2d", "none")
    assert any(d.startswith("blocked_depthwise_conv2d: symbolic sizes") for d in declined)


# --------------------------------------------------------------------- grouped convs
@pytest.mark.parametrize("channels, group_width, stride", [
    (48, 8, 1), (48, 8, 2),      # RegNetY-400MF's first stage: blocks of 8 inside 16
    (64, 16, 1), (64, 16, 2),    # groups as wide as the vector block
    (32, 4, 1),                  # groups of 4 (the narrowest block taken)
])
def test_grouped_conv_is_blocked_and_matches_pytorch(channels, group_width, stride):
    model = ConvBnAct(channels, channels, 3, stride, channels // group_width, act=torch.nn.ReLU)
    mod = _check_against_torch(model, (1, channels, 14, 14))
    assert f"groups={channels // group_width}" in _relax_text(mod)
    (grouped,) = [d for name, d in _decisions(mod).items() if "group_conv2d" in name]
    assert grouped[0] == "blocked_conv2d"


def test_regnet_block_is_reblocked_once_with_no_nchw_round_trip():
    mod = _check_against_torch(RegNetBlock(48, 8), (1, 48, 14, 14))
    text = _relax_text(mod)
    # the image in, 16c -> 8c before the grouped conv, the result out: the 1x1 conv after
    # the grouped one reads its blocks of 8 as they are
    assert text.count("R.layout_transform") == 3
    assert text.count("_reblocked") >= 1 and "NCHW8c" in text


class SqueezeExcite(torch.nn.Module):
    """torchvision's: global mean, 1x1 squeeze, activation, 1x1 excite, sigmoid, ``s * x``."""

    def __init__(self, channels, squeezed, act=torch.nn.SiLU):
        super().__init__()
        self.squeeze = torch.nn.Conv2d(channels, squeezed, 1)
        self.excite = torch.nn.Conv2d(squeezed, channels, 1)
        self.act = act()

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return torch.sigmoid(self.excite(self.act(self.squeeze(s)))) * x


@pytest.mark.parametrize("channels, groups, act", [
    (192, 192, torch.nn.SiLU),   # EfficientNet's MBConv: the scale in the activation's block
    (208, 26, torch.nn.ReLU),    # RegNetY's: groups of 8, the scale blocked by 16
])
def test_squeeze_excite_scales_the_blocked_activation_without_a_round_trip(channels, groups,
                                                                          act):
    # squeeze and excite are big enough (>= 8,192 multiply-adds) to be blocked themselves
    model = torch.nn.Sequential(
        ConvBnAct(16, channels, 1, act=act), ConvBnAct(channels, channels, 3, 1, groups, act=act),
        SqueezeExcite(channels, channels // 4, act=act),
        ConvBnAct(channels, 16, 1, act=torch.nn.Identity))
    mod = _check_against_torch(model, (1, 16, 7, 7))
    lines = _relax_text(mod).splitlines()
    multiplies = [ln for ln in lines if "R.multiply(" in ln]
    # every multiply of the activation is blocked (5-d), none reads an NCHW copy of it
    assert multiplies and all(f"(1, {channels}, 7, 7)" not in ln for ln in multiplies)
    whole = [ln for ln in lines if "R.layout_transform" in ln and f"(1, {channels}, 7, 7)" in ln]
    assert not whole   # squeeze-excite's mean reads the blocked activation too (conv_layout)


# --------------------------------------------------------------------- end to end
@pytest.mark.parametrize("act", [torch.nn.ReLU6, torch.nn.Hardswish, torch.nn.SiLU])
def test_an_inverted_residual_block_from_torch_matches_pytorch_and_stays_blocked(act):
    torch.manual_seed(0)
    model = torch.nn.Sequential(InvertedResidual(16, 6, act=act),
                                InvertedResidual(16, 4, kernel=5, act=act)).eval()
    x = torch.randn(1, 16, 20, 20)
    fn = mlclab.from_torch(model, x)
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(fn(x.numpy()), want, rtol=TOL, atol=TOL)
    assert fn.program.optimized
    (layout,) = [r.mod for r in fn.build_record.runs if r.name == "mlclab.BlockConvLayout"]
    text = layout.script()
    assert text.count("R.layout_transform") == 2   # in and out: none between the blocks
    rules = [rule for rule, _ in fn.build_record.schedule_decisions().values()]
    assert rules.count("blocked_depthwise_conv2d") == 2
