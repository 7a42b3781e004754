"""The register tile for extents it cannot divide: attention's 197 tokens (a prime) in DeiT
and ViT.  ``register_tile`` splits only by divisors, so a prime column count left the whole
batched matmul scalar (Q @ K^T at 0.8 GFLOP/s) and a prime row count made tiles one row
high.  Here columns no tile divides are first padded with ``pad_einsum`` to a multiple of
two vectors -- a zero-filled copy of the input read along them and a padded result that is
cropped into the output -- and rows no tile divides get tiles of ``ROWS`` rows whose last
one is cut short by a predicate (``tile_single_reduction(row_tail=True)``): the rows are
not copied.  The padding adds zeros to sums that are then thrown away, and no reduction
loop is split or reordered, so every kept output is summed in its original order."""
from __future__ import annotations

from .register_tile import ROWS, tile_single_reduction
from .rule import Declined
from .tir_util import block_bindings, bound_iter, is_reduction, static_int, try_inline


def pad_and_tile(sch, blocks, lanes: int) -> None:
    """Pad the function's one reduction to whole register tiles, then tile it; ``Declined``
    when its extents already divide (``register_tile`` takes it) or it has another form."""
    from tvm.tirx import IterVar

    reductions = [b for b in blocks if is_reduction(sch, b)]
    if len(reductions) != 1:
        raise Declined(f"{len(reductions)} reductions, not one")
    red = reductions[0]
    node = sch.get(red)
    loops = list(sch.get_loops(red))
    bindings = block_bindings(sch, red)
    iters = [bound_iter(sch, loop, node, bindings) for loop in loops]
    spatial = [k for k, iv in enumerate(node.iter_vars) if int(iv.iter_type) == IterVar.DataPar]
    if len(spatial) < 2 or None in iters:
        raise Declined("not a plain loop nest over at least two spatial axes")
    columns, rows = spatial[-1], spatial[-2]
    extents = [static_int(iv.dom.extent) for iv in node.iter_vars]
    if extents[columns] is None or extents[rows] is None:
        raise Declined("symbolic rows or columns")
    padding = [1] * len(node.iter_vars)
    if extents[columns] > 2 * lanes and extents[columns] % lanes:
        padding[columns] = 2 * lanes
    elif _between_one_and_two_vectors(extents[columns], lanes):
        # A tile row of half a vector (24 -> 12, 30 -> 15), or a whole prime row that LLVM
        # splits (19): a 32-wide tile holds twice the accumulators.  MobileViT's P @ V,
        # batched 16 x 256x256 @ 256xN on one core, interleaved (load 8): N = 24 1.28 ->
        # 0.72 ms padded to 32, N = 30 1.21 -> 0.63 ms.
        padding[columns] = 2 * lanes
    # Rows no tile divides (197 tokens) were padded to whole tiles too, a copy of the
    # input read along them per call; a predicated last tile reads them in place.  DeiT's
    # P @ V (3 x 197x197 @ 197x64), one AVX-512 core: 117-133 -> 60 us (with a tile row of
    # the whole 64 columns, ``register_tile._tile_width``).
    row_tail = extents[rows] > ROWS and extents[rows] % 2 == 1
    if padding == [1] * len(padding) and not row_tail:
        raise Declined("the extents divide into register tiles: no padding needed")
    if padding != [1] * len(padding):
        sch.pad_einsum(red, padding)
        # The crop back to the output's shape is a copy: inlined into an epilogue that
        # follows (bias, activation), it is the epilogue itself otherwise.
        after = _blocks_after(sch, red)
        if len(after) > 1:
            try_inline(sch, after[0])
    tile_single_reduction(sch, _children(sch), lanes, pack=True, row_tail=True)


def awkward_extents(func) -> bool:
    """Whether the one reduction of ``func`` has static rows or columns that a register
    tile might not divide: more than ``ROWS`` rows and an odd count, more than 32 columns
    and not a multiple of 4, or between one and two vectors of some width (``pad_and_tile``
    decides with the real vector width)."""
    from tvm.tirx import IterVar

    from .tir_util import blocks_of

    for block in blocks_of(func):
        kinds = [int(iv.iter_type) for iv in block.iter_vars]
        if IterVar.CommReduce not in kinds:
            continue
        extents = [static_int(iv.dom.extent) for iv, kind in zip(block.iter_vars, kinds)
                   if kind == IterVar.DataPar]
        if len(extents) < 2 or None in extents[-2:]:
            return False
        rows, columns = extents[-2:]
        if columns == 1:
            # One value per row (the safe softmax's "is any score finite" check in
            # scaled_dot_product_attention): no columns to tile, and padding the rows
            # copied the whole input first (DeiT's 3 x 197 x 197: 90 us, 6 us unpadded).
            return False
        return (rows > ROWS and rows % 2 == 1) or (columns > 32 and columns % 4 != 0) or \
            any(_between_one_and_two_vectors(columns, lanes) for lanes in (4, 8, 16))
    return False


def _between_one_and_two_vectors(columns: int, lanes: int) -> bool:
    """More columns than one vector and fewer than two, not a whole number of vectors:
    a register tile's row would be half a vector, or one LLVM splits."""
    return lanes < columns < 2 * lanes and columns % lanes != 0


def _children(sch):
    return list(sch.get_child_blocks(sch.get_sblock("root")))


def _blocks_after(sch, red):
    blocks = _children(sch)
    index = next(k for k, b in enumerate(blocks) if sch.get(b).same_as(sch.get(red)))
    return blocks[index + 1:]
