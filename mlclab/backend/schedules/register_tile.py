"""The register-tiled reduction (matmul, linear, batched matmul, conv2d with unit stride
in NCHW): a tile of ``ROWS x (2 * lanes)`` outputs accumulated in registers over the whole
reduction, the fused epilogue applied per tile, and inputs read along a leading axis (or
reused by many row blocks) packed one column panel at a time."""
from __future__ import annotations

from .loops import vector_factor, vectorize_spatial
from .rule import Declined
from .tir_util import (PARALLEL_MIN_MACS, balanced, block_bindings, bound_iter, free_vars,
                       is_reduction, loop_kinds, static_int, work, worth_parallel)


# Rows of the register tile.  ROWS x 2 vector accumulators plus two B vectors and one
# broadcast A value fit the 16 vector registers of AVX2 and AVX-512.  Measured at 512^3 on
# AVX2, 2 threads: 4 x 16 at 2.4 ms beat 8 x 16 (3.4 ms, spills) and 4 x 32 (3.0 ms).
ROWS = 4


def accumulators(lanes: int) -> int:
    """Vector accumulators a tile may hold: half of AVX-512's 32 registers, and 8 of AVX2's
    or SSE's 16 (the rest hold the column vectors and the broadcast)."""
    return 16 if lanes >= 16 else 8


def tile_single_reduction(sch, blocks, lanes: int, pack: bool,
                          row_tail: bool = False) -> None:
    """Register-tile the function's only reduction (and its one epilogue block, if any);
    ``Declined``, with nothing changed, when the function does not have that form.

    ``row_tail``: rows that no tile divides (197 tokens) still get tiles of ``ROWS`` rows,
    the last one cut short by a predicate on its unrolled row loop (outside the vector
    loop, so the rows that exist stay vectorized and nothing past the last row is read);
    and an output row of up to ``accumulators(lanes) / ROWS`` whole vectors is one tile
    row, so the tile has no column blocks and reads its vector operand in place."""
    reductions = [k for k, b in enumerate(blocks) if is_reduction(sch, b)]
    if len(reductions) != 1:
        raise Declined(f"{len(reductions)} reductions, not one")
    index = reductions[0]
    red, prologue, epilogue = blocks[index], blocks[:index], blocks[index + 1:]
    if len(epilogue) > 1:
        raise Declined(f"{len(epilogue)} epilogue blocks after the reduction, not one")
    transposed = _tileable(sch, red, lanes)
    if transposed is None:
        raise Declined("the reduction's loops or accesses do not fit a register tile")
    for b in prologue:
        vectorize_spatial(sch, b, lanes)
    _tile_reduction(sch, red, epilogue[0] if epilogue else None, lanes, transposed, pack,
                    row_tail)


def _tileable(sch, block, lanes: int):
    """The register-tiled schedule applies when every loop feeds either spatial or
    reduction iterators, all spatial loops are outside the reductions, and the innermost
    spatial iterator ``vj`` walks the output's last axis with unit stride and moves every
    input by 0 or 1 element along a single axis.  Inputs it moves along their last axis
    (matmul's B, conv2d's input with unit stride) are loaded as vectors in place; inputs it
    moves along another axis (the weight of an NT matmul, ``x @ w.T``) are transposed into
    a packed panel first.  Returns the indices in ``block.reads`` of those to pack, or None
    when the schedule does not apply."""
    from tvm.tirx import IterVar

    loops = list(sch.get_loops(block))
    kinds = loop_kinds(sch, block, loops)
    if any(k not in (IterVar.DataPar, IterVar.CommReduce) for k in kinds):
        return None
    n_spatial = kinds.count(IterVar.DataPar)
    if n_spatial < 2 or kinds[:n_spatial] != [IterVar.DataPar] * n_spatial:
        return None
    columns = static_int(sch.get(loops[n_spatial - 1]).extent)
    if _inner_factor(columns, lanes) is None:
        return None
    if columns == 1 and _reads_along_rows(sch, block, loops[n_spatial:]):
        return None  # one value per row of its input (a row max): rows, not tiles

    node = sch.get(block)
    spatial = [iv for iv in node.iter_vars if int(iv.iter_type) == IterVar.DataPar]
    vj = spatial[-1].var
    try:
        if _column_axis(node.writes[0], vj) != len(node.writes[0].region) - 1:
            return None
        axes = [_column_axis(region, vj) for region in node.reads]
    except ValueError:
        return None
    return [index for index, (axis, region) in enumerate(zip(axes, node.reads))
            if axis is not None and axis != len(region.region) - 1]


def _reads_along_rows(sch, block, reduction) -> bool:
    """Whether every input is read along its last axis by the innermost reduction loop:
    a reduction of rows, which ``parallel_loops`` runs several rows at a time."""
    node = sch.get(block)
    inner = bound_iter(sch, reduction[-1], node, block_bindings(sch, block)) \
        if reduction else None
    return inner is not None and all(
        len(r.region) and r.region[-1].min.same_as(inner) for r in node.reads)


def _column_axis(region, vj):
    """The one axis of a buffer access that ``vj`` moves by exactly one element, None if
    ``vj`` moves none; ValueError for any other pattern (a stride, several axes, a
    non-point access)."""
    from tvm import sym

    found = None
    for axis, rng in enumerate(region.region):
        if static_int(rng.extent) != 1:
            raise ValueError("not a point access")
        coeff = sym.detect_linear_equation(rng.min, [vj])
        step = static_int(coeff[0]) if len(coeff) else None
        if step is None or step not in (0, 1) or (step == 1 and found is not None):
            raise ValueError("not a unit-stride access along one axis")
        if step == 1:
            found = axis
    return found


def _inner_factor(extent, lanes: int):
    """The width of a register tile's row for an output axis of ``extent``: whole vectors
    (one or two), else the whole axis when it fits one vector (10 classes), else the
    largest divisor of at least half a vector and at most one (28 -> 14, 24 -> 12), else
    the whole axis if it fits two vectors (a prime such as 19: slow, but vectorized); None
    when nothing fits (a larger prime).  A width between one and two vectors is the last
    resort: LLVM splits a 24-float vector into pieces it no longer keeps in registers, and
    attention's ``P @ V`` with heads of 24, 30 or 36 (MobileViT) ran 100x slower than with
    heads of 32 (batched 256x256 @ 256xN on one AVX-512 core: N = 24 34 ms, 32 0.34 ms,
    12 0.27 ms)."""
    if extent is None:
        return None
    factor = vector_factor(extent, lanes)
    if factor is not None:
        return factor
    if extent <= lanes:
        return extent
    divisor = next((d for d in range(lanes, max(lanes // 2, 2) - 1, -1) if extent % d == 0),
                   None)
    return extent if divisor is None and extent <= 2 * lanes else divisor


def _tile_reduction(sch, red, epilogue, lanes: int, transposed=(), pack: bool = True,
                    row_tail: bool = False) -> None:
    """``[batch..., jo, io] x [reduction...] x [ii (unrolled), jp (unrolled), ji (vector)]``,
    with the epilogue computed per tile.  Each input in ``transposed`` (indices into the
    block's reads) is first copied, per column block, into a panel whose columns are
    contiguous."""
    spatial, reduction = _spatial_and_reduction_loops(sch, red)
    j, i = spatial[-1], _row_loop(sch, red, spatial)
    width = _tile_width(static_int(sch.get(j).extent), lanes, row_tail)
    panels = _panels(sch, red, transposed, j, i,
                     optional=pack and _panels_are_reused(sch, i, j, width))
    if epilogue is None:
        # Accumulate into a tile-sized buffer, not into the output itself, so the
        # accumulators can live in registers for the whole reduction.
        epilogue = sch.cache_write(red, 0, "global")
    columns, io, ii, ji = _split_tile(sch, spatial, i, j, width,
                                      _tail_rows(width, lanes) if row_tail else None)
    jp = None
    if static_int(sch.get(ji).extent) > 2 * lanes:
        jp, ji = sch.split(ji, factors=[None, lanes])  # a row of 3 or 4 vectors, unrolled
    sch.reorder(*columns, *[lp for lp in (io,) if lp is not None], *reduction,
                *[lp for lp in (ii, jp, ji) if lp is not None])
    # Loop kinds are set before the init is split off the reduction: the schedule checks
    # them against a complete reduction block, and decompose_reduction copies them onto
    # the init's own loops.
    parallel = worth_parallel([work(sch, red)], PARALLEL_MIN_MACS)
    if panels:
        tile = _pack_per_column_block(sch, red, panels, columns, io, parallel)
    else:
        tile = _fuse_tiles(sch, columns + [lp for lp in (io,) if lp is not None], parallel)
    if tile is not None:
        epilogue_per_tile(sch, epilogue, tile)
    sch.vectorize(ji)
    if jp is not None:
        sch.unroll(jp)
    if ii is not None:
        sch.unroll(ii)
    sch.decompose_reduction(red, reduction[0])


def _tile_width(extent, lanes: int, whole_rows: bool):
    """The columns of a tile row: ``_inner_factor``'s, or with ``whole_rows`` the whole
    output row when it is at most ``accumulators(lanes) / ROWS`` whole vectors (3 or 4 on
    AVX-512: attention's ``P @ V`` with heads of 64 in one 4 x 4-vector tile, as the
    packed weights' tile; its V is then read in place, no panel copied per call).  DeiT's
    3 x 197x197 @ 197x64, one AVX-512 core, interleaved (load 2): 117-133 us with its rows
    padded to 200 and V packed in 4 x 2-vector tiles, 60 us in 4 x 4 with a row tail."""
    factor = _inner_factor(extent, lanes)
    if whole_rows and extent is not None and extent % lanes == 0 \
            and factor < extent <= accumulators(lanes) // ROWS * lanes:
        return extent
    return factor


def _spatial_and_reduction_loops(sch, block):
    from tvm.tirx import IterVar

    loops = list(sch.get_loops(block))
    kinds = loop_kinds(sch, block, loops)
    return ([lp for lp, k in zip(loops, kinds) if k == IterVar.DataPar],
            [lp for lp, k in zip(loops, kinds) if k == IterVar.CommReduce])


def _panels_are_reused(sch, i, j, width: int) -> bool:
    """Packing an input that could be read in place pays for itself only if each panel is
    reused by several row blocks and there are several column blocks (``width``, a tile
    row, less than the columns; else it is one more copy of B).  A transposed input is
    packed regardless: that is the only way to vectorize it."""
    i_extent, j_extent = static_int(sch.get(i).extent), static_int(sch.get(j).extent)
    return j_extent > width and (i_extent is None or i_extent > ROWS)


def _tail_rows(width: int, lanes: int) -> int:
    """Rows of a tile whose last one is cut short anyway (``row_tail``): as many as the
    accumulators hold beside a row of ``width`` columns, at most ``TAIL_ROWS``."""
    return max(ROWS, min(TAIL_ROWS, accumulators(lanes) // max(1, width // lanes)))


# The most rows of a predicated tile.  DeiT's Q @ K^T (3 x 197x64 @ 64x197, columns padded
# to 224, tiles of 2 vectors) on one AVX-512 core, interleaved (load 1.6): 4 rows 81 us,
# 5 rows 75, 6 rows 72, 7 rows 72, 8 rows 133 (16 accumulators and 8 predicated rows).
TAIL_ROWS = 6


def _split_tile(sch, spatial, i, j, width: int, tail_rows=None):
    """Split the row loop ``i`` into ``io x ii`` (``ROWS`` rows per tile) and the column
    loop ``j`` into ``jo x ji`` (a row of the tile, ``width`` columns); returns the
    column-block loops (the batch loops and ``jo``), ``io``, ``ii`` and ``ji``, any of
    ``io``/``ii`` None when the split is not needed or not possible.  With ``tail_rows``
    a static row count that neither ``ROWS`` nor 2 divides is split by ``tail_rows`` all
    the same: the split's predicate skips the last tile's rows past the end."""
    i_extent, j_extent = static_int(sch.get(i).extent), static_int(sch.get(j).extent)
    jo, ji = sch.split(j, factors=[None, width]) if j_extent > width else (None, j)
    rows = next((r for r in (ROWS, 2) if i_extent is not None and i_extent % r == 0), None)
    if rows is None and tail_rows and i_extent is not None:
        rows = min(tail_rows, i_extent)
    if rows is None:
        io, ii = i, None  # a symbolic or odd row count: one row per tile
    elif i_extent > rows:
        io, ii = sch.split(i, factors=[None, rows])
    else:
        io, ii = None, i
    # Column blocks outside row blocks: a K x (2 * lanes) panel of B stays in cache while
    # every row block streams past it (512^3 on AVX2: 4.1 ms -> 2.4 ms).
    columns = [lp for lp in spatial[:-1] if not lp.same_as(i)] + ([jo] if jo is not None else [])
    return columns, io, ii, ji


def _pack_per_column_block(sch, red, panels, columns, io, parallel: bool):
    """Threads take whole column blocks and each packs its own panels once, then runs
    every row block past them: the K x (2 * lanes) panel is read contiguously and stays in
    L1/L2.  Measured on one AVX2 core: 512^3 4.2 -> 2.9 ms (OpenBLAS 3.3); x @ w.T at
    64x784x128, transpose + matmul kernels 0.16 ms -> one kernel 0.095.  Returns the loop
    each tile's epilogue goes under."""
    column = sch.fuse(*columns) if len(columns) > 1 else (columns[0] if columns else None)
    if parallel and column is not None and balanced(static_int(sch.get(column).extent) or 0):
        sch.parallel(column)
    elif parallel and io is not None:
        sch.parallel(io)
    for index, axis, ndim in panels:
        _pack_panel(sch, red, index, axis, ndim, column)
    return io if io is not None else column


def _pack_panel(sch, red, index: int, axis: int, ndim: int, column) -> None:
    """Copy input ``index`` of ``red`` into a buffer, per column block, with the column
    axis ``axis`` moved last so that the tile's vectors load contiguous memory."""
    packed = sch.cache_read(red, index, "global")
    if column is not None:
        sch.compute_at(packed, column, preserve_unit_loops=True)
    pack_loops = list(sch.get_loops(packed))[1 if column is not None else 0:]
    if axis != ndim - 1:
        sch.transform_layout(packed, ("write", 0), _move_axis_last(axis, ndim))
        sch.reorder(*[lp for k, lp in enumerate(pack_loops) if k != axis], pack_loops[axis])
    sch.vectorize(pack_loops[axis])


def _fuse_tiles(sch, outer, parallel: bool):
    """The loops over tiles fused into one (parallel if worth it), or None if there is only
    one tile."""
    if not outer:
        return None
    tile = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    if parallel:
        sch.parallel(tile)
    return tile


def epilogue_per_tile(sch, epilogue, tile) -> None:
    """Apply the epilogue (bias, relu, the copy out of the accumulators) once per tile,
    while the tile is still in registers, vectorized along its rows."""
    sch.reverse_compute_at(epilogue, tile, preserve_unit_loops=True)
    epilogue_loops = list(sch.get_loops(epilogue))
    width = static_int(sch.get(epilogue_loops[-1]).extent)
    if not epilogue_loops[-1].same_as(tile) and width is not None and width > 1:
        sch.vectorize(epilogue_loops[-1])


def _panels(sch, block, transposed, j, i, optional: bool):
    """The inputs to pack per column block, as (read index, column axis, rank): those the
    columns walk along a leading axis (they must be transposed to vectorize), and those
    indexed by the column iterator itself on their last axis but not by the row iterator
    (matmul's B; not conv2d's input, indexed by ``x + rx``, nor anything re-read per row)."""
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    vj, vi = bound_iter(sch, j, node, bindings), bound_iter(sch, i, node, bindings)
    out = []
    for index, region in enumerate(node.reads):
        axis = _column_axis(region, vj)
        if axis is None:
            continue
        ranges = list(region.region)
        plain = ranges[axis].min.same_as(vj)
        by_row = vi is not None and any(
            v.same_as(vi) for r in ranges for v in free_vars(r.min))
        if index in transposed or (optional and axis == len(ranges) - 1 and plain and not by_row):
            out.append((index, axis, len(ranges)))
    return out


def _move_axis_last(axis: int, ndim: int):
    """The index map that moves buffer axis ``axis`` to the end."""
    from tvm.tirx import IndexMap

    return IndexMap.from_func(lambda *idx: [*idx[:axis], *idx[axis + 1:], idx[axis]], ndim=ndim)


def _row_loop(sch, block, spatial):
    """The spatial loop that becomes the tile's rows: the innermost one that the vector
    operands (those read along the columns) do not depend on, so each vector loaded is
    reused by every row -- matmul's rows of A, conv2d's output channels (not its output
    rows, which would load a different input vector per row).  Falls back to the loop
    just outside the columns."""
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    vj = bound_iter(sch, spatial[-1], node, bindings)
    vector_vars = []
    for region in node.reads:
        if _column_axis(region, vj) is not None:
            for rng in region.region:
                vector_vars.extend(free_vars(rng.min))
    for loop in reversed(spatial[:-1]):
        vi = bound_iter(sch, loop, node, bindings)
        if (vi is not None and static_int(sch.get(loop).extent) is not None
                and not any(v.same_as(vi) for v in vector_vars)):
            return loop
    return spatial[-2]

