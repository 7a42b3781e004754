"""A chain of passes over the same rows (softmax: row max, exponentials, row sum, division;
a layer norm: mean, variance, normalisation) computed one group of rows at a time.

Scheduled block by block (``loops.py``), each pass walks the whole tensor before the next
starts: MobileViT's softmax over 4 x 4 x 256 x 256 scores makes four passes over 4 MB,
and its 4 MB of exponentials, written by one pass and read by the next two, no longer fit
a core's L2 (1 MB on Zen 4).  Here the last block's rows run in groups of ``lanes``
(parallel), and every earlier block is computed under that group's loop (``compute_at``):
a group's 16 rows of 256 scores and their exponentials (16 KB each) stay in L1 from the
first pass to the last.  That softmax, one Zen 4 core: 0.74-1.0 ms block by block,
0.65-0.73 ms per group (PyTorch 0.62).

Inside a group each block keeps its kind's schedule: element-wise passes in whole vectors
along the row, an order-free row maximum in vector partials, any other reduction with the
group's rows in the lanes of one vector (each lane sums its own row in the order of the
unscheduled code, so results are bit for bit the block-by-block ones).
"""
from __future__ import annotations

from . import row_reductions
from .inline import inline_elementwise_prologue
from .rule import Declined
from .tir_util import (PARALLEL_MIN_ELEMENTS, block_bindings, bound_iter, extents_of,
                       is_reduction, loop_kinds, worth_parallel)

# The bytes of one group's rows of one tensor above which the chain is left to the
# block-by-block schedule: a group's input, intermediates and output should share L2.
GROUP_BYTES = 64 << 10


def schedule_row_chain(sch, blocks, lanes: int) -> None:
    """Compute ``blocks`` (after inlining their element-wise prologue) one group of
    ``lanes`` rows at a time; ``Declined`` when they are not a row chain: the last block
    element-wise over ``[rows..., columns]``, every earlier one element-wise over the same
    or a reduction of its columns, all sizes static, the columns whole vectors and the
    innermost row axis whole groups."""
    blocks = inline_elementwise_prologue(sch, blocks)
    last = blocks[-1]
    if len(blocks) < 2 or is_reduction(sch, last) or \
            not any(is_reduction(sch, b) for b in blocks[:-1]):
        raise Declined("not reductions of rows followed by an element-wise pass")
    loops = list(sch.get_loops(last))
    extents = extents_of(sch, loops)
    if len(loops) < 2 or None in extents:
        raise Declined("the last block is not a static nest of rows and columns")
    *rows, columns = extents
    if columns % lanes or rows[-1] % lanes:
        raise Declined(f"rows of {columns} or {rows[-1]} of them are not whole vectors")
    itemsize = sch.get(last).writes[0].source.dtype.bits // 8
    if lanes * columns * itemsize > GROUP_BYTES:
        raise Declined(f"a group of {lanes} rows of {columns} exceeds {GROUP_BYTES} bytes")
    for block in blocks[:-1]:
        if is_reduction(sch, block) and not _reduces_each_row(sch, block, rows, columns):
            raise Declined("a reduction of the chain is not one of each row's columns")

    group, _ = sch.split(loops[-2], factors=[None, lanes])
    for block in reversed(blocks[:-1]):
        sch.compute_at(block, group, preserve_unit_loops=True)
    above = [*loops[:-2], group]
    group = sch.fuse(*above) if len(above) > 1 else group
    # before any reduction is decomposed: a loop above an init and an update block is
    # not one TVM can prove parallel
    if worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(group)

    for block in blocks:
        inner = list(sch.get_loops(block))[1:]
        if extents_of(sch, inner)[-1] != columns:
            raise Declined("a block of the chain does not walk the rows' columns")
        if not is_reduction(sch, block):
            _, vector = sch.split(inner[-1], factors=[None, lanes])
            sch.vectorize(vector)
            continue
        rows_here = sch.fuse(*inner[:-1]) if len(inner) > 2 else inner[0]
        if row_reductions.order_free(sch, block):
            row_reductions.reduce_in_vector_partials(sch, block, rows_here, lanes)
            continue
        # the group's rows in the lanes of one vector, the columns one after the other
        sch.reorder(inner[-1], rows_here)
        sch.cache_write(block, 0, "local")
        sch.vectorize(rows_here)
        sch.decompose_reduction(block, inner[-1])


def _reduces_each_row(sch, block, rows, columns: int) -> bool:
    """Whether a reduction block has the row loops ``rows`` (their extents) and one
    reduction loop of ``columns`` inside them that reads each input along its last axis
    (or not at all: a layer norm's mean, read once per row by its variance)."""
    from tvm.tirx import IterVar

    loops = list(sch.get_loops(block))
    kinds = loop_kinds(sch, block, loops)
    if kinds != [IterVar.DataPar] * len(rows) + [IterVar.CommReduce] or \
            extents_of(sch, loops) != [*rows, columns]:
        return False
    node = sch.get(block)
    inner = bound_iter(sch, loops[-1], node, block_bindings(sch, block))
    return inner is not None and all(
        row_reductions.along_row(region, inner, [inner]) for region in node.reads)
