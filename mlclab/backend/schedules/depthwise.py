"""The depthwise convolution in the blocked layout (``backend/grouped_conv.py``): each kernel
tap is one vector multiply-add over a channel block, for a row of output pixels held in
registers, with the fused epilogue (bias, ReLU/ReLU6, SiLU, hard-swish) applied per tile.

The general rules could not take it: the register tile needs a reduction over a contiguous
operand (a depthwise convolution has none in NCHW, and its stride-2 columns move the input
by two), and ``pad_einsum`` refuses its window access -- so EfficientNet-B0's depthwise
convolutions ran one float at a time, at 0.1-4 GFLOP/s, 70 % of the model's time.
"""
from __future__ import annotations

from .blocked import blocked_ops, finish_blocked_tile, max_accumulators, one_blocked_reduction
from .rule import CPURule, Declined
from .tir_util import extents_of


class BlockedDepthwiseConv2d(CPURule):
    """A depthwise conv2d in the blocked layout: output pixels x one channel-block vector
    in registers, a vector FMA per kernel tap."""

    name = "blocked_depthwise_conv2d"

    def is_applicable(self, func):
        from ..channel_blocks import DEPTHWISE_CONV2D

        return None if DEPTHWISE_CONV2D in blocked_ops(func) else "no blocked depthwise conv2d"

    def schedule(self, sch, blocks, lanes):
        schedule_blocked_depthwise(sch, blocks, lanes)


def depthwise_pixels(width: int, lanes: int) -> int:
    """Output pixels per register tile: the largest divisor of the output ``width`` within
    the accumulator budget (one vector each), so no loop needs a bounds check."""
    budget = max_accumulators(lanes)
    return next(p for p in range(min(width, budget), 0, -1) if width % p == 0)


def schedule_blocked_depthwise(sch, blocks, lanes: int) -> None:
    """``[n * c_chunk * oh (parallel), ow_outer] x [ky, kx] x [ow_inner (unrolled),
    c_block (vector)]``: ``ow_inner`` output pixels of one channel block accumulate in
    registers; each tap loads one weight vector and ``ow_inner`` input vectors (at stride
    ``sw`` blocks apart) for ``ow_inner`` FMAs.  The taps keep the NCHW order (``ky`` then
    ``kx``), so the sums are those of the unscheduled code.  The epilogue blocks run on the
    tile while it is hot, vectorized along the channel block; the padding is a vectorized
    copy of its own.  ``Declined`` (nothing changed) for anything else: no or several
    depthwise reductions, another reduction fused in, symbolic sizes."""
    from ..channel_blocks import DEPTHWISE_CONV2D

    conv, prologue, epilogue = one_blocked_reduction(sch, blocks, DEPTHWISE_CONV2D,
                                                     "depthwise convolution")
    loops = list(sch.get_loops(conv))
    extents = extents_of(sch, loops)
    if len(loops) != 7:
        raise Declined(f"{len(loops)} loops, not a blocked depthwise convolution's 7")
    if None in extents:
        raise Declined("symbolic sizes: the pixel tile needs a static width")
    n, c_chunk, oh, ow, c_block, ky, kx = loops
    pixels = depthwise_pixels(extents[3], lanes)
    ow_outer, ow_inner = sch.split(ow, factors=[None, pixels])
    sch.reorder(n, c_chunk, oh, ow_outer, ky, kx, ow_inner, c_block)
    finish_blocked_tile(sch, conv, prologue, epilogue, rows=(n, c_chunk, oh), tile=ow_outer,
                        vector=c_block, unrolled=(ow_inner,), first_reduction=ky, lanes=lanes)
