"""A reduction over axes outside the contiguous one: a global average pool in the blocked
layout (``mean`` of ``(n, c_chunk, h, w, c_block)`` over ``h, w``, squeeze-excite's first
step and the pool before a classifier), or a column sum.  Every input and the output are
contiguous along the same innermost axis, so the whole reduction runs on vectors of it --
one vector add per input vector, each output's terms summed in their original order."""
from __future__ import annotations

from .loops import vector_factor, vectorize_spatial
from .register_tile import epilogue_per_tile
from .rule import CPURule, Declined
from .tir_util import (PARALLEL_MIN_ELEMENTS, blocks_of, extents_of, is_reduction, loop_kinds,
                       work, worth_parallel)


class OuterAxesReduction(CPURule):
    """One reduction whose innermost output axis is the innermost axis of every input and
    is not reduced: vector accumulators along it, the reduced loops around them."""

    name = "outer_axes_reduction"

    def is_applicable(self, func):
        from tvm.tirx import IterVar

        reductions = [b for b in blocks_of(func)
                      if any(int(iv.iter_type) == IterVar.CommReduce for iv in b.iter_vars)]
        if len(reductions) != 1:
            return f"{len(reductions)} reductions, not one"
        if not _contiguous_along_kept_axis(reductions[0]):
            return "the innermost axis is reduced, or not every access is contiguous along it"
        return None

    def schedule(self, sch, blocks, lanes):
        from tvm.tirx import IterVar

        reductions = [k for k, b in enumerate(blocks) if is_reduction(sch, b)]
        index = reductions[0]
        red, prologue, epilogue = blocks[index], blocks[:index], blocks[index + 1:]
        loops = list(sch.get_loops(red))
        kinds = loop_kinds(sch, red, loops)
        extents = extents_of(sch, loops)
        n_spatial = kinds.count(IterVar.DataPar)
        if kinds[:n_spatial] != [IterVar.DataPar] * n_spatial or n_spatial == len(loops) \
                or any(k != IterVar.CommReduce for k in kinds[n_spatial:]):
            raise Declined("not spatial loops above reduction loops")
        width = extents[n_spatial - 1]
        # whole vectors, or one partial vector (a channel block of 12 for 24 channels)
        factor = vector_factor(width, lanes) or \
            (width if width is not None and 4 <= width <= lanes else None)
        if factor is None:
            raise Declined(f"an innermost axis of {width}: not whole vectors")
        inner = loops[n_spatial - 1]
        outer, vector = sch.split(inner, factors=[None, factor])
        rows = loops[:n_spatial - 1] + [outer]
        sch.reorder(*rows, *loops[n_spatial:], vector)
        fused = sch.fuse(*rows) if len(rows) > 1 else rows[0]
        if worth_parallel([work(sch, red)], PARALLEL_MIN_ELEMENTS):
            sch.parallel(fused)
        sch.vectorize(vector)
        sch.decompose_reduction(red, loops[n_spatial])
        for b in prologue:
            vectorize_spatial(sch, b, lanes)
        for b in epilogue:  # the mean's division, per row of vectors
            epilogue_per_tile(sch, b, fused)


def _contiguous_along_kept_axis(block) -> bool:
    """Whether the block's innermost spatial iterator is the last index of its output and
    of every input (so vectors of it are contiguous everywhere), and no reduction iterator
    is."""
    from tvm.tirx import IterVar

    spatial = [iv.var for iv in block.iter_vars if int(iv.iter_type) == IterVar.DataPar]
    if not spatial or not block.reads:
        return False
    inner = spatial[-1]
    return all(len(region.region) > 0 and region.region[-1].min.same_as(inner)
               for region in [*block.reads, *block.writes])
