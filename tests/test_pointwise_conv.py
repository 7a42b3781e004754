"""1x1 convolutions left in NCHW, lowered as a matmul (mlclab/backend/pointwise_conv.py) and
tiled over output channels and whole pixel vectors (schedules/pointwise.py), and blocks of
half a vector padded to whole ones (channel_blocks.PAD_FROM): which convolutions take the
paths, and that every result equals PyTorch's, and the previous lowering's bit for bit
(the same sums in the same order), NaN and infinity included."""
from __future__ import annotations

import numpy as np
import pytest

from mlclab.backend import channel_blocks, pointwise_conv
from mlclab.backend.channel_blocks import channel_block, min_block
from mlclab.backend.schedules import schedule_decision
from mlclab.backend.schedules.blocked import max_accumulators
from mlclab.backend.schedules.pointwise import ROW_PAD_SHARE, pointwise_tile
from mlclab.backend.passes import resolve_target
from mlclab.backend.schedules import vector_lanes
from tests.test_conv_schedules import (ConvBnRelu, _check_against_torch, _import, _kernels,
                                       _run, _until)

import torch


@pytest.fixture(scope="module")
def lanes():
    return vector_lanes(resolve_target("llvm"))


def _old_lowering(monkeypatch):
    """TVM's own lowering of every NCHW convolution, as before this path."""
    monkeypatch.setattr(pointwise_conv, "is_pointwise_nchw", lambda call: False)


def _same_bits(a, b) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _conv_rules(mod):
    """The rule that scheduled each convolution kernel of ``mod``."""
    kernels = _kernels(_until(mod, "mlclab.ScheduleCPU"))
    return {name: schedule_decision(f)[0] for name, f in kernels.items() if "conv2d" in name}


# ShuffleNetV2's branches: 58 channels (2 x 29) at 28 x 28, and 24 -> 58 at 56 x 56 (whole
# vectors of pixels); odd counts on an image of 48 pixels, a 6-wide row (whole rows in
# whole vectors of 4, 8 or 16); 116 at 14 x 14 and 58 at 3 x 15, whose pixels are no
# whole vectors of 16: each row padded to one vector (a copy of the input, the padding
# cropped from the result).
@pytest.mark.parametrize("cin, cout, h, w", [(58, 58, 28, 28), (24, 58, 56, 56),
                                             (7, 29, 8, 6), (116, 116, 14, 14), (9, 58, 3, 15)])
def test_a_1x1_conv_in_nchw_is_a_matmul_tile_with_the_same_bits(cin, cout, h, w, lanes,
                                                                 monkeypatch):
    model = ConvBnRelu(cin, cout, 1, 1, 0)
    mod = _check_against_torch(model, (1, cin, h, w))
    assert channel_block(cout, lanes) < min_block(lanes)  # left in NCHW by the layout
    rules = _conv_rules(mod)
    (name,) = rules
    assert name.startswith("fused_conv2d_1x1_nchw") and "relu" in name  # epilogue fused
    whole = h * w % lanes == 0
    padded = not whole and w < lanes and lanes - w <= w * ROW_PAD_SHARE
    assert whole or padded or lanes < 16, "on AVX-512 each case takes the path"
    assert (rules[name] == "pointwise_conv2d") == (whole or padded)
    tir = _kernels(_until(mod, "mlclab.ScheduleCPU"))[name].script()
    assert "pad_temp" not in tir and "T.vectorized" in tir
    assert ('_pad")' in tir) == padded  # the padded copy of the input
    new, _ = _run(*_import(model, (1, cin, h, w)))
    _old_lowering(monkeypatch)
    old_mod, inputs = _import(model, (1, cin, h, w))
    assert all(not n.startswith("fused_conv2d_1x1") for n in _conv_rules(old_mod))
    old, _ = _run(old_mod, inputs)
    assert _same_bits(new, old)


def test_nan_and_infinity_go_through_a_1x1_conv_as_in_numpy(monkeypatch):
    """A NaN spreads to every output channel of its pixel, an infinity gives infinities
    (the sum's other terms are finite), ReLU keeps NaN: as numpy computes it."""
    model = torch.nn.Sequential(torch.nn.Conv2d(58, 58, 1), torch.nn.ReLU()).eval()
    torch.manual_seed(1)
    x = torch.randn(1, 58, 28, 28)
    x[0, 3, 0, 5] = float("nan")
    x[0, 40, 7, 0] = float("inf")
    x[0, 57, 27, 27] = float("-inf")
    mod, _ = _import(model, (1, 58, 28, 28))
    assert "pointwise_conv2d" in _conv_rules(mod).values()
    got, _ = _run(mod, (x,))
    w = model[0].weight.detach().numpy()[:, :, 0, 0].astype(np.float64)
    b = model[0].bias.detach().numpy().astype(np.float64)
    with np.errstate(invalid="ignore"):
        want = np.einsum("oi,nihw->nohw", w, x.numpy().astype(np.float64)) \
            + b[None, :, None, None]
        want = np.where(np.isnan(want), want, np.maximum(want, 0)).astype(np.float32)
    assert np.isnan(got[0, :, 0, 5]).all() and np.isinf(got[0, :, 7, 0]).any()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)  # equal_nan, same infinities
    _old_lowering(monkeypatch)
    old, _ = _run(*_import(model, (1, 58, 28, 28))[:1], (x,))
    assert _same_bits(got, old)


@pytest.mark.parametrize("shape, why", [
    ((1, 116, 5, 5), "not whole vectors"),        # 25 pixels, rows of 5: too narrow to pad
    ((1, 58, 16, 17), "no tile of whole"),        # 17 vectors of 16: none is whole rows
])
def test_a_1x1_conv_whose_pixels_fit_no_tile_is_left_to_the_register_tile(shape, why, lanes):
    assert lanes >= 8, "the shapes are chosen for vectors of 8 or 16"
    cin = shape[1]
    mod = _check_against_torch(ConvBnRelu(cin, cin, 1, 1, 0), shape)
    kernels = _kernels(_until(mod, "mlclab.ScheduleCPU"))
    (f,) = [f for n, f in kernels.items() if n.startswith("fused_conv2d_1x1_nchw")]
    rule, declined = schedule_decision(f)
    assert rule.startswith("register_tile")
    assert any(d.startswith("pointwise_conv2d:") and why in d for d in declined)


def test_only_unit_stride_unpadded_1x1_convs_are_read_as_matmuls():
    for conv in (torch.nn.Conv2d(58, 58, 1, stride=2), torch.nn.Conv2d(58, 58, 1, padding=1),
                 torch.nn.Conv2d(58, 58, 3, padding=1), torch.nn.Conv2d(58, 58, 1, groups=2)):
        mod = _check_against_torch(conv, (1, 58, 16, 16))
        assert not any(n.startswith("fused_conv2d_1x1") or n.startswith("conv2d_1x1")
                       for n in _kernels(_until(mod, "mlclab.ScheduleCPU")))


def test_a_1x1_conv_without_an_epilogue_is_tiled_too(monkeypatch):
    """No bias, no activation: the tile is accumulated in a tile-sized buffer and copied
    out (the two stacked convolutions keep the first one's output unfused)."""
    model = torch.nn.Conv2d(10, 58, 1, bias=False)
    mod = _check_against_torch(model, (1, 10, 16, 16))
    assert set(_conv_rules(mod).values()) == {"pointwise_conv2d"}
    new, _ = _run(*_import(model, (1, 10, 16, 16)))
    _old_lowering(monkeypatch)
    old, _ = _run(*_import(model, (1, 10, 16, 16)))
    assert _same_bits(new, old)


def test_the_tile_holds_the_most_accumulators_in_whole_rows():
    budget = max_accumulators(16)
    assert pointwise_tile(58, 28, 28, 16, budget) == (2, 7)      # 2 x 7 vectors, 4 rows
    assert pointwise_tile(58, 56, 56, 16, budget) == (2, 7)      # 2 rows of 56
    assert pointwise_tile(116, 28, 28, 16, budget) == (2, 7)
    # 12 accumulators three ways (12 x 1, 6 x 2, 3 x 4): the fewest loads, 3 + 4
    assert pointwise_tile(48, 8, 8, 16, budget) == (3, 4)
    assert pointwise_tile(58, 16, 17, 16, budget) is None        # 17 vectors per 16 rows
    for oc, per in [pointwise_tile(c, h, w, 16, budget) for c, h, w in
                    [(58, 28, 28), (24, 8, 6), (7, 4, 4), (116, 28, 28)]]:
        assert oc * per <= budget


def test_half_a_vector_of_output_channels_is_padded_to_whole_vectors(lanes, monkeypatch):
    """ShuffleNetV2's 232 channels are blocks of 8, half an AVX-512 vector: computed as
    240 in blocks of 16 with zero weights and sliced back (3.4 % more, under PAD_SHARE).
    Each output's sum is the unpadded one's: the same bits."""
    model = torch.nn.Sequential(torch.nn.Conv2d(16, 232, 1), torch.nn.ReLU(),
                                torch.nn.Conv2d(232, 24, 3, padding=1))
    mod = _check_against_torch(model, (1, 16, 7, 7))
    text = _until(mod, "mlclab.BlockConvLayout")["main"].script()
    half = lanes * channel_blocks.PAD_FROM <= channel_block(232, lanes) < lanes
    assert ("R.strided_slice" in text) == half
    assert (f"R.Tensor((1, {240 // lanes}, 7, 7, {lanes})" in text) == half
    padded, _ = _run(*_import(model, (1, 16, 7, 7)))
    monkeypatch.setattr(channel_blocks, "PAD_FROM", 0.51)
    text = _until(_import(model, (1, 16, 7, 7))[0], "mlclab.BlockConvLayout")["main"].script()
    assert "R.strided_slice" not in text
    unpadded, _ = _run(*_import(model, (1, 16, 7, 7)))
    assert _same_bits(padded, unpadded)
