"""Schedules of the functions ``conv_layout`` makes: a convolution or max pooling in the
blocked NCHW[x]c layout (register tiles of output pixels times channel-block vectors), and
the transforms into and out of that layout."""
from __future__ import annotations

from .loops import vectorize_spatial
from .register_tile import epilogue_per_tile
from .rule import Declined
from .tir_util import (PARALLEL_MIN_ELEMENTS, PARALLEL_MIN_MACS, blocks_of, extents_of, is_copy,
                       is_reduction, largest_divisor, static_int, work, worth_parallel)


# The most vector accumulators a convolution's register tile holds.  Two limits: the
# registers (AVX-512 has 32, AVX2 and SSE 16; four stay free for the weight vectors and the
# broadcast input), and the stack -- TVM places a kernel's buffers smaller than 1 KiB
# (``kMaxStackAlloca``) on the stack, where LLVM promotes them to registers, and takes
# larger ones from ``TVMBackendAllocWorkspace``, where every FMA loads and stores its
# accumulator.  Measured on one AVX-512 core, ResNet-18's 3x3 64->64 at 56x56: 28
# accumulators (1.75 KiB) 1.8 ms, 14 (896 B) 0.95 ms.
STACK_BYTES = 1024


def max_accumulators(lanes: int) -> int:
    registers = 32 if lanes >= 16 else 16
    return min(registers - 4, (STACK_BYTES - 1) // (lanes * 4))


# Output-channel blocks per register tile: each broadcast input value then feeds two FMAs
# instead of one, which halves the broadcast loads per FMA.  ResNet-18 on one AVX-512 core,
# 2 x 7 against 1 x 14 accumulators: 3x3 at 56x56 1.00 vs 1.09 ms, at 14x14 0.98 vs
# 1.06 ms, at 7x7 1.04 vs 1.31 ms.
OC_TILE = 2


# Where the stack bound leaves a tile of at most 8 accumulators (2 x 4 for widths of a power
# of two), an AVX-512 tile of two channel blocks may hold 16: one more than the bound, and
# still none of them in the workspace (the LLVM IR of MobileViT-XS's convolutions at 16 has
# no workspace call).  Eight FMAs in flight are just the two FMA pipes' latency, with no
# slack; sixteen hide it.  One AVX-512 core, interleaved: MobileViT-XS's 3x3 convolutions
# 0.74-0.98x (96 -> 160 at 16 x 16: 719 -> 627 us), its 1x1 ones of 32 terms or more
# 0.84-0.95x.  Not with fewer terms per output (a 16 -> 64 1x1: 1.04x), nor one channel
# block wide (1 x 8 -> 1 x 16: 1.02-1.03x), nor from 14 (ResNet-18's 2 x 7 -> 2 x 8 at
# 56 x 56: 1.01x for its 3x3, 1.07x for a 64 -> 64 1x1).
DOUBLED_ACCUMULATORS = 16
MIN_DOUBLED_DEPTH = 32


def conv_tile(out_chunks: int, width: int, lanes: int, depth: int = 0):
    """(output-channel blocks, output pixels) of a register tile: the most accumulators
    within the budget, each count dividing its loop; two channel blocks on a tie.
    ``depth``: the terms of each output's sum (input channels x taps)."""
    best = _best_tile(out_chunks, width, max_accumulators(lanes))
    tail = _tail_tile(out_chunks, width, max_accumulators(lanes), best)
    if tail is not None:
        return tail
    if lanes >= 16 and depth >= MIN_DOUBLED_DEPTH and best[0] == OC_TILE \
            and best[0] * best[1] <= DOUBLED_ACCUMULATORS // 2:
        doubled = _best_tile(out_chunks, width, DOUBLED_ACCUMULATORS)
        if doubled[0] == OC_TILE:
            return doubled
    return best


# An odd number of channel blocks takes three at a time where three divide it, rather than
# one: MobileViT-XS's 1x1 convolutions to 48 channels (3 blocks of 16) at 64 x 64 went from
# tiles of 1 x 8 to 3 x 4, 0.86x each on one AVX-512 core (interleaved, bit-identical).
ODD_OC_TILE = 3


# Four channel blocks at a time where the width's divisors leave two blocks few pixels: the
# stem of SqueezeNet (3 -> 64, 3x3 stride 2, 111 = 3 x 37 wide) went from 2 x 3 tiles (6
# accumulators, fewer than the FMA pipes' latency hides) to 4 x 3, 363 -> 319 us a call
# (one AVX-512 core, interleaved, bit-identical).  Only where it holds strictly more.
QUAD_OC_TILE = 4


# Where a prime width leaves a tile one channel block wide (SqueezeNet's 13 x 13: 1 x 13, a
# weight vector and 13 broadcast loads for 13 FMAs), two or three blocks take the width in
# equal runs with a short last one (13 -> 7 + 6, or 5 + 5 + 3; the split's bounds check
# skips the missing pixels).  Its classifier (512 -> 1008 at 13 x 13) 810-839 -> 712-717 us
# at 3 x 5 (2 x 7: 723; 3 x 4: 809), a 512 -> 512 376 against 403 (one core, hot, bits
# identical).
TAIL_TILE = True


def _tail_tile(out_chunks: int, width: int, budget: int, best):
    """``(blocks, pixels)`` of a tile whose pixels do not divide a prime ``width``, for
    ``TAIL_TILE``; None where the divisors' ``best`` tile holds more than one channel block
    (or the width has a divisor but 1 and itself)."""
    if not TAIL_TILE or best != (1, width) or width <= 2 \
            or largest_divisor(width, width - 1) != 1:
        return None
    for oc_tile in (OC_TILE, ODD_OC_TILE):
        if out_chunks % oc_tile == 0:
            most = budget // oc_tile
            runs = -(-width // most)
            return oc_tile, -(-width // runs)
    return None


def _best_tile(out_chunks: int, width: int, budget: int):
    best = None
    for oc_tile in (OC_TILE if out_chunks % OC_TILE == 0 else ODD_OC_TILE, 1, QUAD_OC_TILE):
        if out_chunks % oc_tile:
            continue
        pixels = largest_divisor(width, budget // oc_tile)
        if best is None or oc_tile * pixels > best[0] * best[1]:
            best = (oc_tile, pixels)
    return best


def blocked_op(block):
    """The blocked-layout operator (``channel_blocks.CONV2D``, ``MAX_POOL2D``, ...) that ``block``
    computes, from the annotation ``conv_layout`` gives it; None for any other block."""
    from ..channel_blocks import BLOCKED_OP

    value = block.annotations.get(BLOCKED_OP)
    return None if value is None else str(value)


def blocked_ops(func) -> set:
    """The blocked-layout operators whose reductions ``func`` holds (a walk over the
    statements: building a Schedule of every function would cost 10 % of scheduling)."""
    return {op for op in map(blocked_op, blocks_of(func)) if op is not None}


def is_channel_blocking(func) -> bool:
    """Whether ``func`` is one of ``conv_layout``'s transforms at the graph's edges: one
    block copying NCHW into NCHW{x}c (a 4-d read, a 5-d write) or back (5-d, 4-d).  Known by
    that shape, not by the block name TVM's legalization happens to give it."""
    blocks = blocks_of(func)
    if len(blocks) != 1:
        return False
    block = blocks[0]
    if len(block.reads) != 1 or len(block.writes) != 1 or not is_copy(block.body):
        return False
    ranks = (len(block.reads[0].region), len(block.writes[0].region))
    return ranks in ((4, 5), (5, 4))


def one_blocked_reduction(sch, blocks, op: str, what: str):
    """``(reduction, prologue, epilogue)``: the function's one reduction annotated ``op``,
    the blocks before it (padding) and after it (the fused epilogue); ``Declined`` when
    there is not exactly one, or another reduction is fused in (``what`` names it)."""
    found = [b for b in blocks if blocked_op(sch.get(b)) == op and is_reduction(sch, b)]
    if len(found) != 1:
        raise Declined(f"{len(found)} {what}s, not one")
    index = blocks.index(found[0])
    prologue, epilogue = blocks[:index], blocks[index + 1:]
    if any(is_reduction(sch, b) for b in prologue + epilogue):
        raise Declined(f"a {what} fused with another reduction")
    return found[0], prologue, epilogue


def finish_blocked_tile(sch, conv, prologue, epilogue, rows, tile, vector, unrolled,
                        first_reduction, lanes: int, read_through: bool = False) -> None:
    """What a blocked convolution's schedule does once its loops are split and ordered:
    the ``rows`` loops fused (parallel if the work is worth it), the epilogue blocks --
    or a tile-sized accumulator LLVM keeps in registers -- applied under ``tile`` (None:
    the fused rows loop itself) while the tile is hot, the channel block ``vector``-ized,
    the ``unrolled`` loops unrolled, the init split off at ``first_reduction``, and the
    padding a vectorized copy -- or, ``read_through``, one made to be read through
    (``channel_blocks.READ_THROUGH``) inlined (``BORDER_IN_KERNEL``)."""
    from ..channel_blocks import READ_THROUGH

    if not epilogue:
        epilogue = [sch.cache_write(conv, 0, "global")]
    fused = sch.fuse(*rows)
    if worth_parallel([work(sch, conv)], PARALLEL_MIN_MACS):
        sch.parallel(fused)
    # The epilogue blocks that stayed separate (relu reads its input twice, so a residual
    # add before it is stored, not inlined) follow the tile one after the other.
    for block in epilogue:
        epilogue_per_tile(sch, block, fused if tile is None else tile)
    sch.vectorize(vector)
    for loop in unrolled:
        sch.unroll(loop)
    sch.decompose_reduction(conv, first_reduction)
    for b in prologue:
        if read_through and READ_THROUGH in sch.get(b).annotations:
            sch.compute_inline(b)
        else:
            schedule_padding(sch, b, lanes)
    return fused


# A padding whose channel block is narrower than a vector (a stem's RGB image, NCHW3c) is
# made as a fill of zeros and a copy of the image's rows in vectors.  As one loop under a
# bounds test it ran one float at a time (TVM scalarizes a vector ``if_then_else`` whose
# condition differs between lanes): 210 of the 309 us of ResNet-18d's stem (3 -> 32, 3x3
# stride 2 at 224 -> 112), which now takes 100 us; DenseNet-121's 7x7 stem 1.10 -> 0.94 ms.
# (One AVX-512 core, the kernels as ``fn.profile()`` times them.)
SPLIT_NARROW_PADDING = True


def schedule_padding(sch, block, lanes: int) -> None:
    """A blocked convolution's zero padding: whole vectors of the channel block over the
    plane (``vectorize_spatial``), or, for a block narrower than a vector, a fill and a
    vectorized copy of each row (``SPLIT_NARROW_PADDING``).  Either writes the same values."""
    loops = list(sch.get_loops(block))
    extents = extents_of(sch, loops)
    if not (SPLIT_NARROW_PADDING and len(loops) == 5 and None not in extents
            and extents[-1] % lanes and sch.can_decompose_padding(block, loops[0])):
        vectorize_spatial(sch, block, lanes)
        return
    fill = sch.decompose_padding(block, loops[0])
    sch.fuse(*sch.get_loops(fill))  # one run of zero stores, which LLVM makes a memset
    n, c, h, w, cb = sch.get_loops(block)
    row = sch.fuse(w, cb)  # one image row: contiguous in the input and in the padded copy
    width = extents_of(sch, [row])[0]  # the image's, inside the padding
    _, vector = sch.split(row, factors=[None, largest_divisor(width, lanes)])
    sch.vectorize(vector)
    if worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(sch.fuse(n, c, h))


# A blocked convolution may read its input through the padding's condition instead of a
# padded copy made first (861 KB written and read back for 64 channels at 56 x 56): the
# column tests are ``likely`` (``grouped_conv.padded_at_border``) and TVM's ``LoopPartition``
# (``partition_const_loop``, ``passes.build_config``) splits the column tiles into the
# first, the interior and the last, so the interior reads its input with no test.  (Left to
# LLVM, the kernels adding a residual kept a test and a branch per input channel in the hot
# loop: 105-122 us slower, section 15.)  Bit-identical, and faster at one thread, whole
# calls A/B in one process: ResNet-18d 0.966x, ResNet-50 0.970x, SqueezeNet 0.980x,
# DenseNet-121 0.980x: ResNet-18d and ResNet-50 at or below ONNX Runtime on one core.  The
# price is compile time: LLVM unrolls the border tiles' short loops (2,026 FMAs in a 3x3
# kernel instead of 84), a 3x3 kernel compiles in 0.1-0.25 s instead of 0.05, ResNet-18d
# 2.9 -> 5.2 s of CPU, once per model with the compile cache (docs/performance.md section
# 15, "The border read in the kernel": rows whose tiles are all at the border, 7 and 14
# wide, gain too, 0.977x at one and two threads, so they are read through as well).
BORDER_IN_KERNEL = True
# The fewest output pixels a tile needs for the read through to pay: SqueezeNet's 3x3
# 32 -> 128 at 27 x 27 (tiles of 4 blocks x 3 pixels) went 199 -> 245 us read through, its
# tiles of 11 and 13 pixels (55 and 13 wide) 0.95-0.97x, ResNet's of 7 0.96-0.99x (one
# core, ``fn.profile()``, best of four, bit-identical).  Where fewer, the copy is kept; so
# it is where the tiles do not divide the row (a prime width in runs, ``TAIL_TILE``):
# SqueezeNet's 13-wide 3x3s in tiles of 7 + 6 made the whole model 1.09x slower read through.
READ_THROUGH_MIN_PIXELS = 5


def schedule_blocked_conv(sch, blocks, lanes: int) -> None:
    """``[n * oc_outer * oh (parallel), ow_outer] x [ic_chunk, ky, kx, ic_block] x
    [oc_inner, ow_inner (unrolled), oc_block (vector)]``: ``ow_inner`` output pixels times
    ``oc_inner`` blocks of output channels accumulate in registers while the whole
    reduction runs -- each step ``oc_inner`` weight vectors and ``ow_inner`` broadcast
    inputs, ``oc_inner * ow_inner`` FMAs -- and the fused epilogue (bias, residual, relu)
    is applied to the tile before it leaves the cache.  A 1x1 convolution is this same
    loop nest with ``ky = kx = 1``: a matmul of pixels by channels, register-tiled the same
    way; a grouped one (``grouped_conv``) only reads its input blocks at an offset.  The
    reduction runs in the order ``ic_chunk, ky, kx, ic_block`` rather than legalization's
    ``ic, ky, kx``: results move by float32 rounding only (~1e-6)."""
    from ..channel_blocks import CONV2D

    conv, prologue, epilogue = one_blocked_reduction(sch, blocks, CONV2D,
                                                     "blocked convolution")
    prologue, ends = inline_join(sch, prologue)
    loops = list(sch.get_loops(conv))
    extents = extents_of(sch, loops)
    if len(loops) != 9 or None in extents:
        raise Declined("not a static blocked convolution")
    n, oc_chunk, oh, ow, oc_block, ic_chunk, ky, kx, ic_block = loops
    depth = extents[5] * extents[6] * extents[7] * extents[8]
    oc_tile, pixels = conv_tile(extents[1], extents[3], lanes, depth)
    ow_outer, ow_inner = sch.split(ow, factors=[None, pixels])
    oc_outer, oc_inner = sch.split(oc_chunk, factors=[None, oc_tile])
    sch.reorder(n, oc_outer, oh, ow_outer, ic_chunk, ky, kx, ic_block, oc_inner, ow_inner,
                oc_block)
    finish_blocked_tile(sch, conv, prologue, epilogue, rows=(n, oc_outer, oh), tile=ow_outer,
                        vector=oc_block, unrolled=(ow_inner, oc_inner),
                        first_reduction=ic_chunk, lanes=lanes,
                        read_through=BORDER_IN_KERNEL and pixels >= READ_THROUGH_MIN_PIXELS
                        and extents[3] % pixels == 0)
    if ends:
        pieces = [b - a for a, b in zip([0, *ends], ends)]
        sch.loop_partition(ic_chunk, [*pieces, None])


def inline_join(sch, prologue):
    """``(prologue, ends)``: a channel join read by the convolution (``join_conv``, its
    block marked ``JOIN_PARTS``) inlined -- each load of the join then picks its part -- and
    the input channel blocks where its parts end, at which the schedule splits the
    convolution's loop over them so each piece reads one part and the choice folds away;
    the other prologue blocks as they were."""
    from ..channel_blocks import JOIN_PARTS

    rest, ends = [], []
    for block in prologue:
        marked = sch.get(block).annotations.get(JOIN_PARTS)
        if marked is None:
            rest.append(block)
            continue
        sch.compute_inline(block)
        ends = [int(e) for e in marked]
    return rest, ends


# Output columns per tile of a layout transform (a divisor of the width, at most this).
TRANSFORM_COLUMNS = 8


def schedule_channel_blocking(sch, block, lanes: int) -> None:
    """NCHW <-> NCHW{x}c is a transpose of each (channel block x width) tile: the loop that
    reads contiguous memory is vectorized and the other one unrolled, so LLVM moves whole
    vectors on both sides.  ResNet-18's 64x56x56, one core: into the blocked layout 150 ->
    18 us, back 56 -> 18 us (the spatial rule vectorized one side and scattered the other)."""
    loops = list(sch.get_loops(block))
    extents = extents_of(sch, loops)
    if None in extents:
        raise ValueError("a symbolic layout transform")
    width = extents[3]
    columns = largest_divisor(width, TRANSFORM_COLUMNS)
    if len(loops) == 4:  # into the blocked layout: loops over the NCHW input
        n, c, h, w = loops
        block_size = static_int(sch.get(block).writes[0].source.shape[4])
        if block_size is None or extents[1] % block_size:
            raise ValueError("not a channel blocking")
        c_outer, c_inner = sch.split(c, factors=[None, block_size])
        w_outer, w_inner = sch.split(w, factors=[None, columns])
        sch.reorder(n, c_outer, h, w_outer, c_inner, w_inner)
        rows, vector, unrolled = (n, c_outer, h), w_inner, c_inner
    elif _planes_alias(extents[2] * extents[3]):  # back to NCHW, planes 4 KiB apart
        n, c_outer, h, w, c_inner = loops
        columns = largest_divisor(width, lanes)
        w_outer, w_inner = sch.split(w, factors=[None, columns])
        sch.reorder(n, c_outer, h, w_outer, c_inner, w_inner)
        rows, vector, unrolled = (n, c_outer, h), w_inner, c_inner
    else:  # back to NCHW: loops over the blocked input
        n, c_outer, h, w, c_inner = loops
        w_outer, w_inner = sch.split(w, factors=[None, columns])
        sch.reorder(n, c_outer, h, w_outer, w_inner, c_inner)
        rows, vector, unrolled = (n, c_outer, h), c_inner, w_inner
    fused = sch.fuse(*rows)
    if worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(fused)
    sch.vectorize(vector)
    sch.unroll(unrolled)


def _planes_alias(plane: int) -> bool:
    """Whether NCHW channel planes of ``plane`` float32s start a multiple of 4 KiB apart:
    the 16 stores of a channel-block vector then all map to one set of the L1 cache.  Back
    to NCHW, such a transform stores along the width instead (whole vectors in each plane,
    the channel block unrolled): MobileViT-XS's 96 x 32 x 32 48 -> 13 us on one core;
    ResNet-18's 56 x 56 planes do not alias, and that orientation took them 16 -> 28 us."""
    return plane * 4 % 4096 == 0


# Output pixels whose windows a pooling walks together (a divisor of the width, at most
# this): each pixel's maximum is a chain of dependent compares, and one chain at a time
# waited on each.
POOL_PIXELS = 8
# Whether a prime width is walked in runs with a short last one (``pool_pixels``) rather
# than one pixel at a time.  SqueezeNet's last pool (13 x 13) 23 -> 14 us at one thread;
# 27 (divisor 3) in runs of 7 took 85 us against 33, so widths with a divisor keep it.
POOL_TAIL = True


# The pooling reads its input through the padding's condition (-inf outside the image)
# instead of a padded copy made first.  The copy was written and read back whole: 64 x 114
# x 114 floats (3.3 MB) for ResNet's stem pool, more than L2 holds.  A window step's bounds
# test is a few scalar compares beside the vector ones, and the maxima are the same values
# compared in the same order.  One AVX-512 core, the kernel alone: 64 ch 112 -> 56 px 3x3/2
# 185 -> 72 us, 64 ch 56 -> 28 px 47 -> 15 us, 256 ch 14 px 3x3/1 16 -> 13 us.
INLINE_POOL_PADDING = True


def pool_pixels(width: int, epilogue: bool) -> int:
    """The output pixels a pooling walks together: the largest divisor of ``width`` up to
    ``POOL_PIXELS``; where that is 1 (a prime width: SqueezeNet's 13) and no epilogue
    follows, the width in equal runs of up to ``POOL_PIXELS``, the last one short (13 -> 7:
    a run of 7 and one of 6, the missing pixel skipped by the split's bounds check)."""
    pixels = largest_divisor(width, POOL_PIXELS)
    if epilogue or not POOL_TAIL or pixels > 1 or width <= POOL_PIXELS:
        return pixels
    runs = -(-width // POOL_PIXELS)
    return -(-width // runs)


def schedule_blocked_pool(sch, blocks, lanes: int) -> None:
    """Pooling in the blocked layout: ``[n * c_chunk * oh (parallel), ow_outer] x [ky, kx]
    x [ow_inner (unrolled), c_block (vector)]`` -- each window step is one vector compare
    (max) or add (average) over a channel block for ``ow_inner`` pixels (the unscheduled
    loop nest compared one float at a time: 4 ms for ResNet-18's pool of 64x112x112,
    against 0.3 ms so).  Blocks after the reduction (the average's scale, a fused
    activation) run per tile while it is in registers."""
    from ..channel_blocks import AVG_POOL2D, MAX_POOL2D

    pools = [b for b in blocks
             if blocked_op(sch.get(b)) in (MAX_POOL2D, AVG_POOL2D) and is_reduction(sch, b)]
    if len(pools) != 1:
        raise ValueError("not one blocked pooling")
    pool = pools[0]
    index = next(i for i, b in enumerate(blocks) if b.same_as(pool))
    padding, after = blocks[:index], blocks[index + 1:]
    if len(padding) > 1 or any(is_reduction(sch, b) for b in after):
        raise ValueError("not one blocked pooling")
    loops = list(sch.get_loops(pool))
    if len(loops) != 7 or None in extents_of(sch, loops):
        raise ValueError("not a static blocked pooling")
    if INLINE_POOL_PADDING:
        for b in padding:
            sch.compute_inline(b)  # read through its condition
        padding = []
    n, c_chunk, oh, ow, c_block, ky, kx = loops
    width = extents_of(sch, [ow])[0]
    pixels = pool_pixels(width, bool(after))
    ow_outer, ow_inner = sch.split(ow, factors=[None, pixels])
    sch.reorder(n, c_chunk, oh, ow_outer, ky, kx, ow_inner, c_block)
    rows = sch.fuse(n, c_chunk, oh)
    if worth_parallel([work(sch, pool)], PARALLEL_MIN_ELEMENTS):
        sch.parallel(rows)
    for block in after:
        epilogue_per_tile(sch, block, ow_outer)
    sch.vectorize(c_block)
    sch.unroll(ow_inner)
    sch.decompose_reduction(pool, ky)
    for b in padding:
        vectorize_spatial(sch, b, lanes)
