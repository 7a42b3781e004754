"""The 1x1 convolution in NCHW (``backend/pointwise_conv.py``): a matmul of the weights by
the pixels, register-tiled over output channels and whole vectors of pixels.

The general register tile took it as rows of output channels by one row of pixels: two
channels (58 = 2 x 29) by one 14-pixel vector (28 = 2 x 14), two accumulators, image rows
never tiled -- ShuffleNetV2's 58-channel 1x1 convolutions ran at 29 % of the FLOP roof.
An image's rows follow each other in memory, so where its pixels are whole vectors (28 x 28
is 49 vectors of 16) a tile is ``oc`` channels by ``vectors`` of the flattened image (2 x 7
there, whole rows, so the epilogue under the tile is rectangular): per input channel,
``oc`` broadcast weights and ``vectors`` loads feed ``oc x vectors`` FMAs.  Where they are
not (14 x 14 is 12.25 vectors) and a row is a little narrower than a vector, each row is
padded to one vector (``_pad_rows_and_tile``).  The input channels are summed in the order
of the unscheduled loop nest, so the results are the same bits.
"""
from __future__ import annotations

from .blocked import blocked_ops, finish_blocked_tile, max_accumulators, one_blocked_reduction
from .rule import CPURule, Declined
from .tir_util import extents_of


class PointwiseConv2d(CPURule):
    """A 1x1 conv2d in NCHW: output channels x image rows x pixel vectors in registers."""

    name = "pointwise_conv2d"

    def is_applicable(self, func):
        from ..channel_blocks import POINTWISE_CONV2D

        return None if POINTWISE_CONV2D in blocked_ops(func) else "no 1x1 NCHW conv2d"

    def schedule(self, sch, blocks, lanes):
        schedule_pointwise_conv(sch, blocks, lanes)


def pointwise_tile(out_channels: int, height: int, width: int, lanes: int, budget: int):
    """``(channels, vectors)`` of a register tile over ``height x width`` pixels in vectors
    of ``lanes``, each dividing its loop and the vectors whole image rows (the epilogue
    under the tile covers whole rows): the most accumulators within ``budget``, then the
    fewest loads per input channel (channels broadcast plus vectors loaded); None when no
    tile of whole rows exists."""
    best, best_key = None, None
    for oc in _divisors(out_channels, budget):
        for per_tile in _divisors(height * width // lanes, budget // oc):
            if per_tile * lanes % width:
                continue
            key = (oc * per_tile, -(oc + per_tile))
            if best_key is None or key > best_key:
                best, best_key = (oc, per_tile), key
    return best


# The most bytes of input a tile may read (its pixels times the input channels) and still
# run every output-channel tile past them, out of L1 (48 KiB on this core); a larger one
# streams the pixels past each channel tile's weights instead.  One AVX-512 core,
# interleaved: 58 -> 58 at 28 x 28 (26 KiB) 26 us pixels outer, 45 us channels outer;
# 116 -> 116 at 28 x 28 (52 KiB) 321 us pixels outer, 175 us channels outer.
L1_TILE_BYTES = 32 * 1024


def _divisors(extent: int, at_most: int):
    return [d for d in range(1, min(extent, at_most) + 1) if extent % d == 0]


def schedule_pointwise_conv(sch, blocks, lanes: int) -> None:
    """``[n * pixels_outer * oc_outer (parallel)] x [ic] x [oc_inner, vectors (unrolled),
    lanes (vector)]``, the fused epilogue (bias, ReLU) per tile -- the output-channel tiles
    inside the pixel tiles where the tile's input fits ``L1_TILE_BYTES``, outside them
    otherwise."""
    from ..channel_blocks import POINTWISE_CONV2D

    conv, prologue, epilogue = one_blocked_reduction(sch, blocks, POINTWISE_CONV2D,
                                                     "1x1 convolution")
    loops = list(sch.get_loops(conv))
    extents = extents_of(sch, loops)
    if len(loops) != 5 or None in extents:
        raise Declined("not a static 1x1 convolution")
    n, oc, y, x, ic = loops
    _, out_channels, height, width, in_channels = extents
    if height * width % lanes:
        if width >= lanes or lanes - width > width * ROW_PAD_SHARE:
            raise Declined(f"{height} x {width} pixels: not whole vectors of {lanes}")
        _pad_rows_and_tile(sch, conv, lanes, out_channels, height, in_channels)
        return
    # The image's rows follow each other in memory: its pixels are one axis of whole vectors.
    tile = pointwise_tile(out_channels, height, width, lanes, max_accumulators(lanes))
    if tile is None:
        raise Declined(f"no tile of whole {width}-pixel rows in whole vectors of {lanes}")
    oc_tile, per_tile = tile
    oc_outer, oc_inner = sch.split(oc, factors=[None, oc_tile])
    p_outer, p_vectors, p_lanes = sch.split(sch.fuse(y, x), factors=[None, per_tile, lanes])
    if in_channels * per_tile * lanes * 4 <= L1_TILE_BYTES:
        outer = (n, p_outer, oc_outer)   # the pixels' channels stay in L1 for every oc tile
    else:
        outer = (n, oc_outer, p_outer)   # the tile's weights stay, the pixels stream past
    sch.reorder(*outer, ic, oc_inner, p_vectors, p_lanes)
    finish_blocked_tile(sch, conv, prologue, epilogue, rows=outer, tile=None, vector=p_lanes,
                        unrolled=(p_vectors, oc_inner), first_reduction=ic, lanes=lanes)


# The most a row narrower than a vector may be padded, as a share of its pixels (14 -> 16).
# ShuffleNetV2's 116 -> 116 at 14 x 14, one AVX-512 core, kernel medians: 45-47 us as the
# general register tile (4 channels x one 14-lane vector); padded, 44 us in tiles of 2
# channels x 7 rows (whose 52 KiB of input leave L1), 37 us in 4 x 2, 27 us in 4 x 3 (the
# image's 14 rows padded to 15).
ROW_PAD_SHARE = 1 / 7


def _pad_rows_and_tile(sch, conv, lanes: int, out_channels: int, height: int,
                       in_channels: int) -> None:
    """Image rows narrower than a vector whose pixels are not whole vectors (14 x 14):
    each row padded to one vector with zeros, and the rows to a whole number of tiles
    (``pad_einsum``: a padded copy of the input, a padded result cropped into the output),
    then ``oc x rows`` one-vector rows per tile.  The padding adds zeros to sums that are
    thrown away."""
    from .tir_util import child_blocks, try_inline

    # as many rows as keep the tile's input in L1 while every channel tile runs past them
    in_rows = max(1, L1_TILE_BYTES // (in_channels * lanes * 4))
    oc_tile, rows = _rows_tile(out_channels, height, max_accumulators(lanes), in_rows)
    sch.pad_einsum(conv, [1, 1, rows, lanes, 1])
    blocks = child_blocks(sch)
    index = next(k for k, b in enumerate(blocks) if sch.get(b).same_as(sch.get(conv)))
    prologue, after = blocks[:index], blocks[index + 1:]
    if len(after) > 1:
        try_inline(sch, after[0])   # the crop, into the epilogue that follows
        after = child_blocks(sch)[index + 1:]
    n, oc, y, x, ic = sch.get_loops(conv)
    oc_outer, oc_inner = sch.split(oc, factors=[None, oc_tile])
    y_outer, y_inner = sch.split(y, factors=[None, rows])
    sch.reorder(n, y_outer, oc_outer, ic, oc_inner, y_inner, x)
    finish_blocked_tile(sch, conv, [], after, rows=(n, y_outer, oc_outer), tile=None,
                        vector=x, unrolled=(y_inner, oc_inner), first_reduction=ic,
                        lanes=lanes)
    for block in prologue:   # the padding: one vector per row, its last lanes zero
        *outer_loops, columns = sch.get_loops(block)
        sch.fuse(*outer_loops)
        sch.vectorize(columns)


def _rows_tile(out_channels: int, height: int, budget: int, max_rows: int):
    """``(channels, rows)`` of a tile of one-vector rows: the most accumulators within
    ``budget`` and at most ``max_rows`` rows, then the fewest rows of padding, then the
    fewest loads; the channels divide ``out_channels``, the rows are padded to whole
    tiles."""
    best, best_key = None, None
    for oc in _divisors(out_channels, budget):
        for rows in range(1, min(max_rows, budget // oc) + 1):
            key = (oc * rows, -(-height // rows * rows), -(oc + rows))
            if best_key is None or key > best_key:
                best, best_key = (oc, rows), key
    return best
