"""The CPU's schedule rules, one class per kind of function, and their order.

To schedule a new kind of operator: write a ``CPURule`` subclass here (or in a module of
its own for a long schedule) and put an instance in ``CPU_RULES`` before the rules it
should win over.  The first rule that schedules a function wins; the others' reasons for
declining are recorded on it (``apply.py``).
"""
from __future__ import annotations

from .blocked import (blocked_ops, is_channel_blocking, schedule_blocked_conv,
                      schedule_blocked_pool, schedule_channel_blocking)
from .depthwise import BlockedDepthwiseConv2d
from .loops import schedule_each_block
from .outer_reduction import OuterAxesReduction
from .packed_matmul import packed_width, schedule_packed_matmul
from .padded_tile import awkward_extents, pad_and_tile
from .pointwise import PointwiseConv2d
from .register_tile import tile_single_reduction
from .row_chain import schedule_row_chain
from .rule import CPURule


class BlockedLayoutTransform(CPURule):
    """NCHW <-> NCHW{x}c at the edges of a blocked region: a transpose of small tiles."""

    name = "blocked_layout_transform"

    def is_applicable(self, func):
        if not is_channel_blocking(func):
            return "not a copy between NCHW and a channel-blocked layout"
        return None

    def schedule(self, sch, blocks, lanes):
        schedule_channel_blocking(sch, blocks[0], lanes)


class BlockedMaxPool(CPURule):
    """Max or average pooling in the blocked layout: one vector compare or add per window
    step (the name is the max pool's, which it scheduled first)."""

    name = "blocked_max_pool2d"

    def is_applicable(self, func):
        from ..channel_blocks import AVG_POOL2D, MAX_POOL2D

        return None if {MAX_POOL2D, AVG_POOL2D} & blocked_ops(func) else "no blocked pooling"

    def schedule(self, sch, blocks, lanes):
        schedule_blocked_pool(sch, blocks, lanes)


class BlockedConv2d(CPURule):
    """A conv2d in the blocked layout: output pixels x channel blocks in registers."""

    name = "blocked_conv2d"

    def is_applicable(self, func):
        from ..channel_blocks import CONV2D

        return None if CONV2D in blocked_ops(func) else "no blocked conv2d"

    def schedule(self, sch, blocks, lanes):
        schedule_blocked_conv(sch, blocks, lanes)


class RegisterTile(CPURule):
    """One reduction whose output's last axis is contiguous (matmul, linear, batched
    matmul, NCHW conv2d): a register tile, with inputs packed per column panel where that
    pays (``pack``) or only where a transposed input needs it."""

    def __init__(self, pack: bool):
        self.pack = pack
        self.name = "register_tile_packed" if pack else "register_tile"

    def is_applicable(self, func):
        count = _reductions(func)
        return None if count == 1 else f"{count} reductions, not one"

    def schedule(self, sch, blocks, lanes):
        tile_single_reduction(sch, blocks, lanes, pack=self.pack)


class PrepackedRegisterTile(CPURule):
    """A matmul whose weight ``pack_weights`` packed at compile time: the register tile
    reads the panels directly, no copy per call (``packed_matmul.py``)."""

    name = "register_tile_prepacked"

    def is_applicable(self, func):
        from .tir_util import blocks_of

        if not any(packed_width(b) is not None for b in blocks_of(func)):
            return "no pre-packed matmul"
        return None

    def schedule(self, sch, blocks, lanes):
        schedule_packed_matmul(sch, blocks, lanes)


class PaddedRegisterTile(CPURule):
    """One reduction whose rows or columns no tile divides (a prime such as 197 tokens):
    padded to whole tiles with zeros, register-tiled, cropped (``padded_tile.py``)."""

    name = "register_tile_padded"

    def is_applicable(self, func):
        count = _reductions(func)
        if count != 1:
            return f"{count} reductions, not one"
        # A cheap look before a Schedule is built: rows and columns that a tile of any
        # vector width (4, 8 or 16 lanes) can divide need no padding.
        if not awkward_extents(func):
            return "the extents divide into register tiles: no padding needed"
        return None

    def schedule(self, sch, blocks, lanes):
        pad_and_tile(sch, blocks, lanes)


class RowChain(CPURule):
    """Reductions of rows and the element-wise passes over the same rows (softmax, layer
    norm): every pass computed one group of rows at a time, in cache (``row_chain.py``)."""

    name = "row_chain"

    def is_applicable(self, func):
        return None if _reductions(func) else "no reduction"

    def schedule(self, sch, blocks, lanes):
        schedule_row_chain(sch, blocks, lanes)


class ParallelLoops(CPURule):
    """Anything else: spatial loops fused, vectorized and parallel; reductions with their
    spatial loops parallel and the reduction one serial loop."""

    name = "parallel_loops"

    def schedule(self, sch, blocks, lanes):
        schedule_each_block(sch, blocks, lanes)


# The CPU's rules, most specific and most ambitious first.
CPU_RULES = (
    BlockedLayoutTransform(),
    BlockedMaxPool(),
    BlockedConv2d(),
    BlockedDepthwiseConv2d(),
    PointwiseConv2d(),
    # before the register tiles, which would take a blocked global pool as a matmul
    OuterAxesReduction(),
    PrepackedRegisterTile(),
    PaddedRegisterTile(),
    RegisterTile(pack=True),
    RegisterTile(pack=False),
    RowChain(),
    ParallelLoops(),
)


def _reductions(func) -> int:
    from tvm.tirx import IterVar

    from .tir_util import blocks_of

    return sum(any(int(iv.iter_type) == IterVar.CommReduce for iv in b.iter_vars)
               for b in blocks_of(func))
