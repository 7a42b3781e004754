"""Reductions along rows (softmax's max and sum, a layer norm's mean and variance, a row
max): the spatial loops above each reduction fused and parallel, a few rows reduced at once
with each row's terms in their own order, and a reduction whose order cannot change a
result in vector partials."""
from __future__ import annotations

from .tir_util import (PARALLEL_MIN_ELEMENTS, block_bindings, bound_iter, extents_of,
                       free_vars, loop_kinds, static_int, worth_parallel)


def parallel_reduction(sch, block, lanes: int = 1) -> None:
    """Fuse the spatial loops above a reduction and make them parallel; the reduction
    loops below keep their order.  A reduction along contiguous rows (softmax's max and
    sum, a layer norm's mean) also runs several rows at once: ``lanes`` rows in the lanes
    of a vector (``_rows_in_lanes``) where its innermost row axis has that many, else a
    few rows unrolled (``_interleave_rows``).  One whose order cannot change a result
    reduces each row in vector partials instead (``_vector_partials``)."""
    from tvm.tirx import IterVar

    if _vector_partials(sch, block, lanes):
        return
    loops = list(sch.get_loops(block))
    kinds = loop_kinds(sch, block, loops)
    spatial = []
    for loop, kind in zip(loops, kinds):
        if kind != IterVar.DataPar:
            break
        spatial.append(loop)
    if not spatial:
        return
    parallel = worth_parallel(extents_of(sch, loops), PARALLEL_MIN_ELEMENTS)
    reduction = loops[len(spatial):]
    group = _row_group(sch, block, spatial, reduction, kinds[len(spatial):])
    if group is not None and lanes > 1 and ROWS_IN_LANES and not _refused(
            lambda s: _rows_in_lanes(s, block, spatial, reduction, lanes, parallel), sch):
        _rows_in_lanes(sch, block, spatial, reduction, lanes, parallel)
        return
    if group is not None and _refused(
            lambda s: _interleave_rows(s, block, spatial, reduction, *group), sch):
        group = None
    if group is not None:
        spatial = _interleave_rows(sch, block, spatial, reduction, *group)
    if parallel and spatial:
        sch.parallel(sch.fuse(*spatial) if len(spatial) > 1 else spatial[0])
    if group is not None:
        sch.decompose_reduction(block, reduction[0])


def _vector_partials(sch, block, lanes: int) -> bool:
    """A row reduction whose order cannot change a result (``order_free``) in ``lanes``
    partial results per row, one vector operation per ``lanes`` terms, then the partials
    reduced: the scalar chain of one compare per term was a third of MobileViT's softmax,
    and its safe softmax's "any finite score" check (an int8 max) the same.  False, with
    nothing changed, for any other block, or a row that is symbolic or not whole vectors
    (at least two)."""
    from tvm.tirx import IterVar

    if not order_free(sch, block) or lanes < 2:
        return False
    loops = list(sch.get_loops(block))
    kinds = loop_kinds(sch, block, loops)
    extent = static_int(sch.get(loops[-1]).extent)
    if kinds[-1] != IterVar.CommReduce or any(k != IterVar.DataPar for k in kinds[:-1]) \
            or not extent or extent % lanes or extent < 2 * lanes:
        return False

    parallel = worth_parallel(extents_of(sch, loops), PARALLEL_MIN_ELEMENTS)

    def partials(s):
        rows = list(s.get_loops(block))[:-1]
        row = s.fuse(*rows) if len(rows) > 1 else (rows[0] if rows else None)
        if row is not None and parallel:  # before rfactor: its blocks are not a reduction
            s.parallel(row)
        reduce_in_vector_partials(s, block, row, lanes)

    if _refused(partials, sch):
        return False
    partials(sch)
    return True


def reduce_in_vector_partials(sch, block, row, lanes: int) -> None:
    """The innermost (reduction) loop of ``block`` in ``lanes`` partial results per row,
    stored along a last axis of their own so that a step is one contiguous vector, computed
    under loop ``row`` (None: at the root) right before they are reduced."""
    _, lane = sch.split(sch.get_loops(block)[-1], factors=[None, lanes])
    factored = sch.rfactor(lane, len(sch.get(block).writes[0].source.shape))
    if row is not None:
        sch.compute_at(factored, row)
    *_, lane, over = sch.get_loops(factored)
    sch.reorder(over, lane)
    sch.vectorize(lane)
    sch.decompose_reduction(factored, over)


def order_free(sch, block) -> bool:
    """Whether the order a reduction combines its terms in cannot change a result: an
    integer max, min or sum (exact and associative, wrapping included), or softmax's row
    maximum (``fast_math.ORDER_FREE_MAX``: see there)."""
    from tvm import tirx

    from ..fast_math import ORDER_FREE_MAX

    node = sch.get(block)
    if ORDER_FREE_MAX in node.annotations:
        return True
    store = node.body
    if len(node.writes) != 1 or not isinstance(store, tirx.BufferStore):
        return False
    dtype = str(store.buffer.dtype)
    return dtype.startswith(("int", "uint")) and isinstance(
        store.value, (tirx.Max, tirx.Min, tirx.Add))


# Rows of a reduction run at once: each row's terms are still added (or maxed) one after
# the other in their own order, so results are bit for bit those of one row at a time,
# but the chains are independent and overlap in the pipeline.  One row at a time is a
# chain of dependent adds (3-4 cycles each): MobileViT's softmax over 4x4x256 rows of 256
# took 1.15 ms.  Interleaved by 4 it took 0.55-0.63x that on one core (load 7-8); by 8,
# 0.6-0.8x (LLVM's SLP vectorizer turns more of the unrolled rows into slow gathers).
ROW_GROUP = 4


def _row_group(sch, block, spatial, reduction, kinds):
    """``(axis, rows)``: the spatial loop whose rows to interleave (the innermost one with
    a divisor from ``ROW_GROUP`` down to 2) and how many; None when the reduction is not
    one of contiguous rows -- its loops must all be static reduction loops, the last one
    moving every input by one element along its last axis, with a single output."""
    from tvm.tirx import IterVar

    if ROW_GROUP < 2 or not reduction or any(k != IterVar.CommReduce for k in kinds):
        return None
    node = sch.get(block)
    if len(node.writes) != 1 or None in extents_of(sch, reduction):
        return None
    bindings = block_bindings(sch, block)
    inner = bound_iter(sch, reduction[-1], node, bindings)
    reduced = [bound_iter(sch, loop, node, bindings) for loop in reduction]
    if inner is None or None in reduced or not all(
            along_row(r, inner, reduced) for r in node.reads):
        return None
    extents = [static_int(sch.get(loop).extent) for loop in spatial]
    for axis in reversed(range(len(spatial))):
        if extents[axis] and extents[axis] % ROW_GROUP == 0:
            return axis, ROW_GROUP
    # No axis of whole groups (a prime such as 197 tokens): groups of ROW_GROUP with a
    # partial last one rather than a smaller divisor of another axis -- DeiT's softmax
    # over 3 x 197 rows, one core, interleaved (load 1.3): 3 heads at once 64 us, 4 rows
    # 57 us -- else the largest smaller divisor.
    if extents[-1] and extents[-1] > ROW_GROUP:
        return len(spatial) - 1, ROW_GROUP
    for axis in reversed(range(len(spatial))):
        rows = next((g for g in range(ROW_GROUP - 1, 1, -1)
                     if extents[axis] and extents[axis] % g == 0), None)
        if rows is not None:
            return axis, rows
    return None


# Rows in the lanes of a vector: each lane adds its own row's terms in their own order (bit
# for bit one row at a time), ``lanes`` chains in one instruction, the terms of a step
# loaded ``lanes`` rows apart.  A 197 x 192 layer norm on one AVX-512 core, interleaved
# (load 1.8): 4 rows unrolled 20.5 us, 16 rows in lanes 11.9 us (its last 5 rows one at a
# time).  With the rows that do not fill a vector under the same loop, behind a predicate,
# TVM scalarized the loop: 22.9 us.
ROWS_IN_LANES = True


def _rows_in_lanes(sch, block, spatial, reduction, lanes: int, parallel: bool) -> None:
    """The innermost row axis in groups of ``lanes`` rows, the group's loop below the
    reduction loops and vectorized, its accumulators a local buffer; the rows that do not
    fill a vector are split off first (``loop_partition``) and stay a loop of their own,
    one row at a time.  Raises when the form does not allow it (the caller tries it on a
    copy first)."""
    rows = spatial[-1]
    extent = static_int(sch.get(rows).extent)
    if extent is None or extent < lanes:
        raise ValueError("fewer rows than the lanes of a vector")
    whole = extent // lanes * lanes
    if whole < extent:
        # Not in parallel: the accumulators' write-back under each group then covers every
        # row of the partitioned block, not the group's, and threads wrote back rows other
        # threads had not finished (a 197-row softmax came out inf). One after the other,
        # a row's last write-back is of its final value.
        parallel = False
        # the main part's block, under a block of its own: its loops start at the rows
        (block,) = sch.get_child_blocks(sch.loop_partition(rows, [whole, None])[0])
        loops = list(sch.get_loops(block))
        rows, reduction = loops[-len(reduction) - 1], loops[-len(reduction):]
    outer, inner = sch.split(rows, factors=[None, lanes])
    sch.reorder(outer, *reduction, inner)
    out = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(out, outer)
    sch.vectorize(inner)
    if parallel and static_int(sch.get(outer).extent) > 1:
        sch.parallel(outer)
    sch.decompose_reduction(block, reduction[0])


def along_row(region, inner, reduced) -> bool:
    """Whether an input is read along its last axis by ``inner``, or once per row (a
    layer norm's mean, read by every term of the variance)."""
    indices = [r.min for r in region.region]
    if indices and indices[-1].same_as(inner):
        return True
    return not any(v.same_as(r) for i in indices for v in free_vars(i) for r in reduced)


def _interleave_rows(sch, block, spatial, reduction, axis: int, rows: int):
    """Loop ``axis`` of ``spatial`` split into ``rows`` consecutive rows that move below the
    reduction loops, unrolled, with their accumulators in a local buffer (registers)
    written out after the reduction.  A group never straddles another axis, so what is
    written out is exactly what was computed.  Returns the spatial loops left above."""
    loop = spatial[axis]
    if static_int(sch.get(loop).extent) > rows:
        outer, inner = sch.split(loop, factors=[None, rows])
        above = [*spatial[:axis], outer, *spatial[axis + 1:]]
    else:
        inner, above = loop, [*spatial[:axis], *spatial[axis + 1:]]
    sch.reorder(*above, *reduction, inner)
    out = sch.cache_write(block, 0, "local")
    if above:
        sch.reverse_compute_at(out, above[-1])
    sch.unroll(inner)
    return above


def _refused(primitives, sch) -> bool:
    """Whether ``primitives(schedule)`` raises on a copy of ``sch`` (which stays as it was)."""
    try:
        primitives(sch.copy())
    except Exception:  # a form the primitives refuse: the plain schedule instead
        return True
    return False
