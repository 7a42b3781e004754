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
from .tir_util import extents_of, largest_divisor, static_int


class BlockedDepthwiseConv2d(CPURule):
    """A depthwise conv2d in the blocked layout: output pixels x one channel-block vector
    in registers, a vector FMA per kernel tap."""

    name = "blocked_depthwise_conv2d"

    def is_applicable(self, func):
        from ..channel_blocks import DEPTHWISE_CONV2D

        return None if DEPTHWISE_CONV2D in blocked_ops(func) else "no blocked depthwise conv2d"

    def schedule(self, sch, blocks, lanes):
        schedule_blocked_depthwise(sch, blocks, lanes)


# The most times the padding of one input row may be redone when it is made per output row
# (kernel height / stride).  A depthwise convolution reads its padded input once per tap,
# so a padding pass over the whole plane (a copy to memory and back: 96 x 114 x 114 floats
# is 5 MB) costs as much as the arithmetic.  Made under each output row, the padded rows
# stay in L1, at the price of making each one ``kh / sh`` times.  One core, interleaved
# kernel medians, whole plane vs per row: 96 ch 112 px 3x3/2 0.20 vs 0.08 ms, 144 ch 56 px
# 5x5/2 0.077 vs 0.055, 32 ch 112 px 3x3/1 0.085 vs 0.064; but 240 ch 28 px 5x5/1 0.054 vs
# 0.065 and 96 ch 56 px 7x7/1 0.160 vs 0.191.
PAD_PER_ROW_MAX_REDO = 3


def _pad_per_row(sch, conv, extents) -> bool:
    """Whether the padding is made per output row: when the kernel height is at most
    ``PAD_PER_ROW_MAX_REDO`` times the vertical stride."""
    return extents[5] <= PAD_PER_ROW_MAX_REDO * _row_stride(sch, conv)


def _row_stride(sch, conv) -> int:
    """The vertical stride: how far the input rows move per output row (the coefficient
    of the output-row iterator in the input's row index, ``y * sh + ky``)."""
    from tvm import sym

    node = sch.get(conv)
    y = node.iter_vars[2].var
    output = node.writes[0].source
    for region in node.reads:
        if len(region.region) == 5 and not region.source.same_as(output):
            coeff = sym.detect_linear_equation(region.region[2].min, [y])
            if len(coeff) and static_int(coeff[0]):
                return static_int(coeff[0])
    return 1


def depthwise_pixels(width: int, lanes: int) -> int:
    """Output pixels per register tile: the largest divisor of the output ``width`` within
    the accumulator budget (one vector each), so no loop needs a bounds check."""
    budget = max_accumulators(lanes)
    return largest_divisor(width, budget)


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
    per_row = _pad_per_row(sch, conv, extents)
    rows = finish_blocked_tile(sch, conv, [] if per_row else prologue, epilogue,
                               rows=(n, c_chunk, oh), tile=ow_outer, vector=c_block,
                               unrolled=(ow_inner,), first_reduction=ky, lanes=lanes)
    if per_row:
        for b in prologue:  # the padded input rows of one output row, made under it
            sch.compute_at(b, rows, preserve_unit_loops=True)
            sch.vectorize(sch.get_loops(b)[-1])
