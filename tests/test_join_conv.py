"""A blocked convolution reading a channel join's parts instead of a copy of the join
(mlclab/backend/join_conv.py, the loop split in ``schedules.blocked.inline_join``):
SqueezeNet's squeeze convolutions and classifier.  The kernel must give the bits of the
join copied and then convolved (NaN, +-inf and -0.0 in the image), take the blocked
convolution's schedule with its loop over input channel blocks split at the parts'
boundaries, and leave joins it does not fit (read twice, padded) to the copy."""
from __future__ import annotations

import re

import numpy as np
import pytest

import torch

from tests.test_blocked_pool_concat import _import, _run, _scheduled


def _poison(x):
    """NaN, +-inf and -0.0 in the image (each reaches the join through the expansions)."""
    x[0, 0, 3, 4], x[0, 5, 9, 9], x[0, 7, 0, 10] = float("nan"), float("inf"), -0.0
    x[0, 2, 12, 1] = float("-inf")
    return x


class Fire(torch.nn.Module):
    """Expansions joined, then a convolution of the join (the next Fire's squeeze)."""

    def __init__(self, widths=(32, 48), out=24, kernel=1, stride=1, padding=0):
        super().__init__()
        self.parts = torch.nn.ModuleList(torch.nn.Conv2d(16, w, 1 + 2 * (i % 2), padding=i % 2)
                                         for i, w in enumerate(widths))
        self.squeeze = torch.nn.Conv2d(sum(widths), out, kernel, stride, padding)

    def join(self, x):
        return torch.cat([torch.relu(p(x)) for p in self.parts], 1)

    def forward(self, x):
        return torch.relu(self.squeeze(self.join(x)))


class JoinReadTwice(Fire):
    """The join also leaves the model: it is needed whole, so it is copied."""

    def forward(self, x):
        y = self.join(x)
        return torch.relu(self.squeeze(y)), y


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def _both(model, shape, monkeypatch):
    """The model's output with the parts read and with the join copied, and the kernels of
    the build that reads the parts."""
    from mlclab.backend import join_conv

    mod, x = _import(model, shape)
    x = _poison(x)
    with torch.no_grad():
        want = [t.numpy() for t in _outputs(model(x))]
    parts, kernels = _run(mod, x), _scheduled(mod)
    monkeypatch.setattr(join_conv, "READ_PARTS", False)
    whole = _run(mod, x)
    return parts, whole, want, kernels


# (the parts' channels, the convolution's output channels, its stride): two parts as
# SqueezeNet's, three, a part of one channel block, a strided convolution, and an output
# padded to whole vectors (1000 -> 1008 in SqueezeNet's classifier; 200 here)
CASES = [((32, 48), 24, 1), ((16, 32, 64), 32, 1), ((16, 64), 16, 2), ((64, 64), 200, 1)]


@pytest.mark.parametrize("widths,out,stride", CASES)
def test_a_convolution_reads_the_parts_of_its_join_with_the_same_bits(widths, out, stride,
                                                                        monkeypatch):
    model = Fire(widths, out, stride=stride)
    parts, whole, want, kernels = _both(model, (1, 16, 13, 11), monkeypatch)
    assert np.isnan(parts).any() and parts.tobytes() == whole.tobytes()
    np.testing.assert_allclose(np.nan_to_num(parts), np.nan_to_num(want[0]),
                               rtol=1e-4, atol=1e-4)
    assert not any("concat" in name for name in kernels)     # no copy of the join left
    (conv,) = [f for name, f in kernels.items() if "conv2d_NCHWc_parts" in name]
    assert str(conv.attrs["mlclab.schedule"]) == "blocked_conv2d"
    # the loop over input channel blocks split into one loop per part
    script = conv.script()
    pieces = re.findall(r'T\.sblock\("conv2d_NCHWc_update_ic_chunk\d+_partition"\)', script)
    assert len(pieces) == len(widths), script


class JoinPadded(Fire):
    """A 3x3 convolution with padding reads the join: not rewritten."""

    def __init__(self):
        super().__init__((32, 48), 24, kernel=3, padding=1)


@pytest.mark.parametrize("model", [JoinReadTwice(), JoinPadded()])
def test_a_join_read_otherwise_is_copied(model, monkeypatch):
    parts, whole, want, kernels = _both(model, (1, 16, 13, 11), monkeypatch)
    assert parts.tobytes() == whole.tobytes()
    np.testing.assert_allclose(np.nan_to_num(parts), np.nan_to_num(want[0]),
                               rtol=1e-4, atol=1e-4)
    assert any("concat" in name for name in kernels)
    assert not any("conv2d_NCHWc_parts" in name for name in kernels)
