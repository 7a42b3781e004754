"""Squeeze-excite (EfficientNet, MobileNetV3, RegNetY) and the global average pool in the
blocked layout: the mean over the image stays blocked (no transform back to NCHW around
it) and is one vectorized reduction (``outer_axes_reduction``), a whole SE block imported
with ``mlclab.from_torch`` matches PyTorch, and the new rule records what it takes and
what it declines."""
from __future__ import annotations

import re

import numpy as np
import pytest

import torch

import mlclab  # noqa: E402

F = torch.nn.functional


class SqueezeExcite(torch.nn.Module):
    """A 1x1 convolution with SiLU, then squeeze-excite (pool, 1x1 conv, SiLU, 1x1 conv,
    sigmoid, scale) and the projection that reads the scaled activation."""

    def __init__(self, channels=64, squeezed=16):
        super().__init__()
        self.expand = torch.nn.Conv2d(channels, channels, 1)
        self.reduce = torch.nn.Conv2d(channels, squeezed, 1)
        self.excite = torch.nn.Conv2d(squeezed, channels, 1)
        self.project = torch.nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        x = F.silu(self.expand(x))
        gate = torch.sigmoid(self.excite(F.silu(self.reduce(x.mean((2, 3), keepdim=True)))))
        return self.project(x * gate)


class PoolThenClassify(torch.nn.Module):
    """A convolution, the mean over the image without ``keepdim`` and a linear layer."""

    def __init__(self, channels=32):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, channels, 3, padding=1)
        self.fc = torch.nn.Linear(channels, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def _elements(func) -> int:
    """The elements of a PrimFunc's first parameter, read from its signature."""
    shape = func.script().split("T.Buffer((", 1)[1].split('"float32"', 1)[0]
    return int(np.prod([int(d) for d in re.findall(r"T\.int64\((\d+)\)", shape)]))


def _compiled(model, *shape):
    torch.manual_seed(0)
    model = model.eval()
    x = torch.randn(*shape)
    fn = mlclab.from_torch(model, x)
    assert fn.program.optimized
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(fn(x.numpy()), want, rtol=1e-5, atol=1e-5)
    return fn, fn.build_record.schedule_decisions()


def test_squeeze_excite_block_matches_pytorch_with_a_blocked_vector_pool():
    fn, decisions = _compiled(SqueezeExcite(), 1, 64, 14, 14)
    (mean,) = [n for n in decisions if n.startswith("mean")]
    assert decisions[mean][0] == "outer_axes_reduction"
    assert "T.vectorized" in fn.program.build_record.final[mean].script()
    # The activation goes into the blocked layout once and comes out once; the pool, the
    # gate's multiply and the projection read it blocked.  The only other transform is
    # the pooled (1, 64, 1, 1) vector going to the two small convolutions, which are
    # below the blocked layout's size (MIN_MACS).
    sizes = sorted(_elements(fn.program.build_record.final[n])
                   for n in decisions if n.startswith("te_layout_transform"))
    assert sizes == [64, 64 * 14 * 14, 64 * 14 * 14]


@pytest.mark.parametrize("channels", [32, 24])   # 24: blocks of 12 (8 on AVX2), not a vector
def test_mean_without_keepdim_is_a_reshape_of_the_blocked_mean(channels):
    _, decisions = _compiled(PoolThenClassify(channels), 2, 8, 12, 12)
    (mean,) = [n for n in decisions if n.startswith("mean")]
    assert decisions[mean][0] == "outer_axes_reduction"
    # only the image's transform into the blocked layout: the activation never goes back
    assert sum(n.startswith("te_layout_transform") for n in decisions) == 1


def _sum_kernel(axis: int):
    """(a function summing a (37, 48) matrix over ``axis``, its kernel's decision)."""
    fn = mlclab.compile(f"""
def sums(x: Tensor[(37, 48), f32]):
    return sum(x, axis={axis})
""")["sums"]
    ((decision),) = fn.build_record.schedule_decisions().values()
    return fn, decision


class HardSwishExcite(torch.nn.Module):
    """MobileNetV3's block: a convolution with hard-swish (``x * relu6(x + 3) / 6``) and
    squeeze-excite gated by hard-sigmoid."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.reduce = torch.nn.Conv2d(32, 8, 1)
        self.excite = torch.nn.Conv2d(8, 32, 1)

    def forward(self, x):
        x = F.hardswish(self.conv(x))
        gate = F.hardsigmoid(self.excite(torch.relu(self.reduce(x.mean((2, 3), keepdim=True)))))
        return x * gate


def test_hard_swish_divide_stays_in_the_convolutions_kernel():
    _, decisions = _compiled(HardSwishExcite(), 1, 16, 20, 20)
    (conv,) = [n for n in decisions if n.startswith("fused_conv2d_NCHWc")]
    assert conv.endswith("_divide")    # hard-swish's / 6 fused into the convolution
    assert not [n for n in decisions if n.startswith("divide")]


@pytest.mark.parametrize("axis", [0, 1])
def test_column_sum_takes_the_rule_and_a_row_sum_declines_it(axis):
    fn, (rule, declined) = _sum_kernel(axis)
    x = np.random.default_rng(1).standard_normal((37, 48)).astype(np.float32)
    np.testing.assert_allclose(fn(x), x.astype(np.float64).sum(axis), rtol=1e-5, atol=1e-5)
    if axis == 0:  # 48 columns: three vectors of 16 (or six of 8) summed down the rows
        assert rule == "outer_axes_reduction"
    else:
        assert rule != "outer_axes_reduction"
        assert ("outer_axes_reduction: the innermost axis is reduced, or not every access "
                "is contiguous along it") in declined


@pytest.mark.parametrize("shape,gate", [((1, 240, 14, 14), (1, 240, 1, 1)),   # 196: 4 x 49
                                        ((1, 64, 8, 8), (1, 64, 1, 1)),       # whole vectors
                                        ((2, 24, 5, 7), (1, 24, 1, 1)),       # odd sizes
                                        ((64, 48), (64, 1))])
def test_nchw_gate_multiply_vectorizes_without_dividing_indices(shape, gate):
    """Squeeze-excite's scale in NCHW (when its producer is not blocked): vectors along the
    pixels of one channel, so the gate is one broadcast value per vector -- not an index
    divided lane by lane, which LLVM does in scalar code."""
    fn = mlclab.compile(f"""
def scale(x: Tensor[{shape}, f32], g: Tensor[{gate}, f32]):
    return x * sigmoid(g)
""")["scale"]
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(gate)
    g = g.astype(np.float32)
    np.testing.assert_allclose(fn(x, g), x * (1 / (1 + np.exp(-g.astype(np.float64)))),
                               rtol=1e-5, atol=1e-6)
    (name,) = [n for n in fn.build_record.schedule_decisions() if "multiply" in n]
    vector, gate_bindings = _vector_loop_and_gate_bindings(fn.build_record.final[name], "g")
    assert vector is not None
    # the gate's indices do not move within a vector: one broadcast value per vector
    assert not any(_uses(binding, vector) for binding in gate_bindings), gate_bindings


@pytest.mark.parametrize("shape", [(0, 4, 3, 3), ("n", 24, 5, 5)])
def test_empty_and_symbolic_gate_multiplies_take_the_optimized_pipeline(shape):
    """An empty tensor (no vector of 0 lanes, which LLVM refuses) and a symbolic batch."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", mlclab.FallbackWarning)
        fn = mlclab.compile(f"""
def scale(x: Tensor[{shape}, f32], g: Tensor[(1, {shape[1]}, 1, 1), f32]):
    return x * g
""")["scale"]
    assert fn.program.optimized
    for n in ((0,) if shape[0] == 0 else (1, 3)):
        x = np.ones((n, *shape[1:]), np.float32)
        g = np.arange(shape[1], dtype=np.float32).reshape(1, -1, 1, 1)
        np.testing.assert_array_equal(fn(x, g), x * g)


def _vector_loop_and_gate_bindings(func, gate: str):
    """The vectorized loop's variable, and the loop expressions bound to the block
    iterators that index the parameter ``gate``."""
    from tvm import tirx
    from tvm.s_tir import SBlockRealize

    vector, bindings, pending = None, [], [func.body]
    while pending:  # a walk over the statements (this TIR has no Python visitor)
        node = pending.pop()
        if isinstance(node, tirx.SeqStmt):
            pending.extend(node.seq)
            continue
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.VECTORIZED:
            vector = node.loop_var
        if isinstance(node, SBlockRealize):
            block = node.block
            values = dict(zip([iv.var for iv in block.iter_vars], node.iter_values))
            for region in block.reads:
                if region.source.name.startswith(gate):
                    bindings += [value for var, value in values.items()
                                 if any(_uses(r.min, var) for r in region.region)]
            node = block
        if getattr(node, "body", None) is not None:
            pending.append(node.body)
    return vector, bindings


def _uses(expr, var) -> bool:
    from tvm import tirx

    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(expr, []))
