"""The register tile of a matmul whose weight was packed at compile time (``pack_weights``):
``out[..., i, j] = sum_k x[..., i, k] * panels[j // width, k, j % width]``.

The panels are already contiguous ``K x width`` strips, so the kernel packs nothing: a tile
of ``rows x (panels * width)`` outputs is accumulated in registers while ``k`` runs -- per
step, ``rows`` broadcast values of ``x`` and one vector from each of ``panels`` strips that
the prefetcher streams in order -- and the fused epilogue (bias, GELU, ...) is applied to the
tile before it leaves the registers.  Column blocks of tiles run in parallel.

The tile holds ``accumulators(lanes)`` vectors: on one AVX-512 core, 128x768x3072 with the
weight packed, 4 x 2 vectors (the general rule's tile) ran at 211 GFLOP/s, 4 x 4 at 244 (this
core's measured peak: 276), 8 x 2 the same.  Rows that no tile divides (197 tokens) get a
bounds check on the unrolled row loop, outside the vector loop (197x768x768: 259 GFLOP/s).
Deep reductions run in blocks of ``K_BLOCK`` (a few percent: see there).  The reduction is
never reordered: every output is summed in the order of the unscheduled code.
"""
from __future__ import annotations

import math

from .loops import vectorize_spatial
from .register_tile import accumulators, epilogue_per_tile
from .rule import Declined
from .tir_util import (PARALLEL_MIN_MACS, PARALLEL_MIN_STREAM_BYTES, balanced, is_reduction,
                       loop_kinds, static_int, work, worth_parallel)

# Rows of the tile: four broadcasts of ``x`` per step, reused by every column vector.
TILE_ROWS = 4


# K-blocking: a reduction of at least twice this depth runs in blocks of it, every row block
# passing each block of the panels while it is in L1/L2, the accumulators stored between
# blocks (the summation order is unchanged).  One AVX-512 core, load 2.4, interleaved
# minima: 128x3072x768 (BERT's FFN down-projection) 240 GFLOP/s unblocked, 250/253/255 in
# blocks of 256/512/1024; 128x768x3072 in blocks of 256: 253 against 264 unblocked.
K_BLOCK = 1024


def packed_width(block):
    """The panel width ``pack_weights`` annotated on a packed matmul's reduction, or None."""
    from ..pack_weights import PACKED_MATMUL

    value = block.annotations.get(PACKED_MATMUL)
    return None if value is None else int(value)


def weight_bytes(sch, red, columns, depth):
    """The bytes of the packed weight one call of the matmul streams, or None if a size is
    symbolic."""
    if columns is None or depth is None:
        return None
    panels = sch.get(red).reads[1].source     # x, then the panels
    return columns * depth * panels.dtype.bits // 8


def worth_parallel_matmul(sch, red, columns, depth) -> bool:
    """Column blocks in parallel when the matmul has the arithmetic (``PARALLEL_MIN_MACS``)
    or streams enough weight (``PARALLEL_MIN_STREAM_BYTES``): a few rows do one
    multiply-add per weight element loaded, so their time is the weight's bytes."""
    if worth_parallel([work(sch, red)], PARALLEL_MIN_MACS):
        return True
    streamed = weight_bytes(sch, red, columns, depth)
    return streamed is not None and streamed >= PARALLEL_MIN_STREAM_BYTES


def schedule_packed_matmul(sch, blocks, lanes: int) -> None:
    """``[batch..., column blocks (parallel), row blocks] x k x [rows (unrolled), panels
    (unrolled), width (vector)]`` with the epilogue per tile; ``Declined`` when the function
    is not one packed matmul and at most one epilogue block."""
    from tvm.tirx import IterVar

    reductions = [b for b in blocks if is_reduction(sch, b)]
    if len(reductions) != 1 or packed_width(sch.get(reductions[0])) is None:
        raise Declined("not one packed matmul")
    red = reductions[0]
    index = blocks.index(red)
    prologue, epilogue = blocks[:index], blocks[index + 1:]
    if len(epilogue) > 1:
        raise Declined(f"{len(epilogue)} epilogue blocks after the packed matmul, not one")
    width = packed_width(sch.get(red))
    loops = list(sch.get_loops(red))
    kinds = loop_kinds(sch, red, loops)
    if kinds[-1] != IterVar.CommReduce or IterVar.CommReduce in kinds[:-1] \
            or len(loops) < 3 or None in kinds:
        raise Declined("the packed matmul's loops are not [batch..., i, j, k]")
    *batch, i, j, k = loops
    columns = static_int(sch.get(j).extent)
    vectors = columns // width
    rows_extent = static_int(sch.get(i).extent)
    rows = rows_extent if rows_extent is not None and rows_extent <= TILE_ROWS else TILE_ROWS
    budget = max(1, accumulators(lanes) * lanes // width // rows)
    panels = max(p for p in range(1, min(budget, vectors) + 1) if vectors % p == 0)
    jo, jp, ji = sch.split(j, factors=[None, panels, width])
    if rows_extent is None or rows_extent > rows:
        io, ii = sch.split(i, factors=[None, rows])
    else:
        io, ii = None, i
    parallel = worth_parallel_matmul(sch, red, columns, static_int(sch.get(k).extent))
    batch_extents = [static_int(sch.get(lp).extent) for lp in batch]
    # the column blocks (batch x panel groups), 0 when a batch axis is symbolic
    column_blocks = 0 if None in batch_extents else math.prod(batch_extents) * (vectors // panels)
    by_column = balanced(column_blocks) or io is None
    ko = None
    depth = static_int(sch.get(k).extent)
    if (depth is not None and depth >= 2 * K_BLOCK and depth % K_BLOCK == 0
            and rows_extent is not None and column_blocks and (by_column or not parallel)):
        ko, k = sch.split(k, factors=[None, K_BLOCK])
    sch.reorder(*batch, jo, *[lp for lp in (ko, io) if lp is not None], k, ii, jp, ji)
    # Without an epilogue, accumulate into a tile-sized buffer that LLVM keeps in registers.
    epilogue = epilogue[0] if epilogue else sch.cache_write(red, 0, "global")
    column = sch.fuse(*batch, jo) if batch else jo
    if parallel:
        sch.parallel(column if by_column else io)
    # K-blocked, the tiles are finished only after the last block of K: the epilogue then
    # runs once per column block.
    epilogue_per_tile(sch, epilogue, column if ko is not None or io is None else io)
    sch.vectorize(ji)
    sch.unroll(jp)
    sch.unroll(ii)
    sch.decompose_reduction(red, ko if ko is not None else k)
    for block in prologue:  # what FuseOps put before the matmul (a reshape of x)
        vectorize_spatial(sch, block, lanes)
