"""Values padded to whole vectors (mlclab/backend/padded_layout.py): a convolution whose
channel block is a vector cut in pieces is computed with zero-weight channels, and its
bias, activation and mean over the image stay padded and blocked -- the same bits as the
unpadded model, NaN, infinities and -0.0 included."""
from __future__ import annotations

import numpy as np
import pytest

import torch

from mlclab.backend import channel_blocks, padded_layout
from mlclab.backend.channel_blocks import channel_block
from mlclab.backend.passes import resolve_target
from mlclab.backend.schedules import vector_lanes
from tests.test_conv_schedules import TOL, _import, _run, _until

# 200 output channels: blocks of 10 on AVX-512 (padded to 208), of 8 on AVX2 (whole
# vectors, not padded); 7 input channels, an odd image, stride 2: the classifier's shape.
SHAPE = (1, 7, 13, 11)


@pytest.fixture(scope="module")
def lanes():
    return vector_lanes(resolve_target("llvm"))


def _cut(lanes: int) -> bool:
    return lanes // 2 <= channel_block(200, lanes) < lanes


class Classifier(torch.nn.Module):
    """SqueezeNet's classifier: a convolution, ReLU, the mean over the image."""

    def __init__(self, keepdims: bool):
        super().__init__()
        self.conv = torch.nn.Conv2d(7, 200, 3, 2, 1)
        self.keepdims = keepdims

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return y.mean((2, 3), keepdim=True) if self.keepdims else torch.flatten(
            torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)


class Mirrored(torch.nn.Module):
    """A padded value read by an operator with no padded form: its product with another
    map (itself mirrored, which is computed in NCHW)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(7, 200, 3, 2, 1)

    def forward(self, x):
        y = torch.relu(self.conv(x)) + 0.5
        return y * torch.flip(y, [3])


def _specials(x):
    """``x`` with NaN, +-inf and -0.0 in it."""
    x = x.clone()
    x[0, 0, 0, :4] = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0])
    x[0, 3, 5, 2] = float("nan")
    return x


def _three_ways(model, monkeypatch):
    """The model's output padded and kept padded, padded but read through NCHW, unpadded
    (on an input with special values), and the module after the layout pass."""
    mod, (x,) = _import(model, SHAPE)
    inputs = (_specials(x),)
    new, optimized = _run(mod, inputs)
    assert optimized, "mlclab's pipeline fell back to TVM's plain one"
    monkeypatch.setattr(padded_layout, "KEEP_PADDED", False)
    nchw, _ = _run(mod, inputs)
    monkeypatch.setattr(channel_blocks, "PAD_SHARE", 0)
    unpadded, _ = _run(mod, inputs)
    monkeypatch.undo()
    return (new, nchw, unpadded), _until(mod, "mlclab.BlockConvLayout")["main"].script()


@pytest.mark.parametrize("keepdims", [False, True])
def test_a_padded_classifier_is_blocked_through_its_mean(lanes, monkeypatch, keepdims):
    """The bias and the ReLU on the padded blocked value, the mean over its blocked image,
    the slice on the ``(n, C')`` means: no transform of the map back to NCHW."""
    model = Classifier(keepdims)
    (new, nchw, unpadded), text = _three_ways(model, monkeypatch)
    assert np.isnan(new).any()                      # the NaN reached the output
    assert new.tobytes() == nchw.tobytes() == unpadded.tobytes()
    cut = _cut(lanes)
    # only the input's transform is left when padded (blocked by 16: 13 blocks of 208)
    assert text.count("R.layout_transform") == (1 if cut else 2)
    assert (f"R.Tensor((1, {208 // lanes}, {lanes}), " in text) == cut   # the means
    mod, (x,) = _import(model, SHAPE)
    got, _ = _run(mod, (x,))
    with torch.no_grad():
        want = model(x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=TOL, rtol=TOL)


def test_an_operator_without_a_padded_form_reads_the_sliced_nchw_view(lanes, monkeypatch):
    """``y * flip(y)`` of a padded ``y`` (after a bias, a ReLU and a scalar add, all padded)
    reads ``y`` transformed back to NCHW and sliced to its 200 channels: the same bits."""
    (new, nchw, unpadded), text = _three_ways(Mirrored(), monkeypatch)
    assert new.tobytes() == nchw.tobytes() == unpadded.tobytes()
    assert ("R.strided_slice" in text) == _cut(lanes)
    (product,) = [line for line in text.splitlines() if "R.multiply(" in line]
    assert "R.Tensor((1, 200, 7, 6)" in product                  # in NCHW, 200 channels
    assert new.shape == (1, 200, 7, 6)


def test_a_vector_computed_at_run_time_is_not_padded(lanes, monkeypatch):
    """A per-channel vector that is not a constant (here the input's own channel means)
    would need padding at run time: the product reads the NCHW view instead."""

    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(7, 200, 3, 2, 1)

        def forward(self, x):
            y = self.conv(x)
            return y * y.mean((2, 3), keepdim=True).sigmoid()

    (new, nchw, unpadded), text = _three_ways(Scaled(), monkeypatch)
    assert new.tobytes() == nchw.tobytes()
    # Padded or not (PAD_SHARE 0), a NaN's sign differs here (0xffc00000 against
    # 0x7fc00000), as it did before this module (KEEP_PADDED off): not this module's.
    assert np.array_equal(nchw, unpadded, equal_nan=True)
    assert ("R.strided_slice" in text) == _cut(lanes)
