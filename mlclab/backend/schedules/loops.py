"""The plain loop schedules: spatial blocks fused, vectorized and parallel (copies along
their input's contiguous runs, or in tiles; transposes in square tiles); each reduction is
left to ``row_reductions``."""
from __future__ import annotations

import math

from .inline import inline_elementwise_prologue
from .row_reductions import parallel_reduction
from .tir_util import (PARALLEL_MIN_ELEMENTS, block_bindings, bound_iter, extents_of,
                       free_vars, is_copy_of_one_value, is_reduction, largest_divisor,
                       static_int, within_domains, worth_parallel)


def schedule_each_block(sch, blocks, lanes: int) -> None:
    """The plain rules: parallel spatial loops above each reduction, vectors and threads
    for every spatial block."""
    blocks = inline_elementwise_prologue(sch, blocks)
    for b in blocks:
        if is_reduction(sch, b):
            parallel_reduction(sch, b, lanes)
        else:
            vectorize_spatial(sch, b, lanes)


def vectorize_spatial(sch, block, lanes: int) -> None:
    """Fuse a spatial block's loops, vectorize the innermost whole vectors and run the
    rest in parallel.  Only the static suffix of the nest is split.  A transpose gets
    square tiles instead."""
    loops = list(sch.get_loops(block))
    if not loops:
        return  # a 0-d tensor
    extents = extents_of(sch, loops)
    if _tile_transpose(sch, block, loops, extents, lanes):
        return
    k = len(loops)
    while k > 0 and extents[k - 1] is not None:
        k -= 1
    if _vectorize_below_broadcast(sch, block, loops, extents, k, lanes):
        return
    if _tile_gathered_copy(sch, block, loops, extents, k, lanes):
        return
    if _vectorize_innermost_row(sch, block, loops, extents, k, lanes):
        return
    if _vectorize_contiguous_runs(sch, block, loops, extents, k, lanes):
        return
    symbolic, static = loops[:k], loops[k:]
    outer = list(symbolic)
    parallel = worth_parallel(extents, PARALLEL_MIN_ELEMENTS)
    if static:
        size = math.prod(extents[k:])
        factor = vector_factor(size, lanes)
        if not _fusing_pays(factor, parallel):
            return
        j = k if factor is None else _divisible_suffix(extents, k, factor)
        outer.extend(loops[k:j])
        inner = sch.fuse(*loops[j:]) if len(loops) - j > 1 else loops[j]
        if factor is None:
            outer.append(inner)
        elif math.prod(extents[j:]) > factor:
            rest, vec = sch.split(inner, factors=[None, factor])
            outer.append(rest)
            sch.vectorize(vec)
        else:
            sch.vectorize(inner)
    if outer and parallel:
        sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])


def _divisible_suffix(extents, k: int, factor: int) -> int:
    """The first loop of the shortest suffix of the static loops (from ``k``) whose size
    ``factor`` divides: only those are fused and split into vectors.  Fused over the whole
    nest, a vector that straddles rows (56 x 56 planes in vectors of 32) left TVM's
    simplifier two forms of the flat index, ``(f % 98 * 32 + v) // 56 * 56`` beside
    ``(f * 32 + v) % 56``, that it never merged: every lane's address was computed and the
    loads gathered (ReLU of 1 x 96 x 56 x 56 on one Zen 4 core: 337 us, 7 GB/s).  Within the
    suffix both forms come from one index, which it folds back to a ``Ramp``."""
    j = len(extents) - 1
    while j > k and math.prod(extents[j:]) % factor:
        j -= 1
    return j


# The widest row, in vectors, that a block reading a broadcast input takes as one vector when
# no vector divides it: DeiT's softmax rows of 197 (12 vectors and 5 lanes) run as fast so
# as in whole vectors and a split-off rest (62 against 65 us, one core).
MAX_ROW_VECTORS = 16


def _fusing_pays(factor, parallel: bool) -> bool:
    """Whether fusing a spatial nest gains anything: whole vectors (``factor``) or work for
    several threads.  Else it only costs a division and a remainder per element to recover
    each index (the stem's 258 x 258 x 3 padding, one core: its convolution 208 -> 147 us
    with the nest left alone)."""
    return factor is not None or parallel


def _vectorize_below_broadcast(sch, block, loops, extents, k: int, lanes: int) -> bool:
    """For a block reading some input broadcast over its inner loops (squeeze-excite's
    ``x * gate`` in NCHW: the gate ``(1, C, 1, 1)`` against ``x`` of ``(1, C, H, W)``):
    vectors along the inner loops only.  Vectors across the whole fused nest would index
    the gate by ``fused // (H * W)``, a vector of 64-bit divisions that LLVM does one lane
    at a time (MobileNetV3's 240x14x14 scale took 0.28 ms, ~6 ns an element).  False, with
    nothing changed, when no input is broadcast so."""
    start = _plain_suffix_start(sch, block, loops)
    if not k < start < len(loops):
        return False
    inner = loops[start:]
    size = math.prod(extents[start:])
    factor = vector_factor(size, lanes)
    if factor is None and extents[-1] > MAX_ROW_VECTORS * lanes:
        # A long row no vector divides (a softmax over GPT-2's 50,257 logits): one vector
        # of the whole row failed code generation (TVM reads a width of 32,768 or more as a
        # scalable vector, and the build fell back to TVM's plain pipeline), so whole
        # vectors, and the rest of the row split off as a short vector of its own.
        whole = extents[-1] // lanes * lanes
        main, rest = sch.loop_partition(loops[-1], [whole, None])
        sch.vectorize(sch.split(main, factors=[None, lanes])[1])
        if extents[-1] - whole > 1:
            sch.vectorize(rest)
    elif factor is None:  # vectors of the innermost loop alone (14 pixels: one masked vector)
        if extents[-1] < 4:
            return False
        sch.vectorize(loops[-1])
    else:
        fused = sch.fuse(*inner) if len(inner) > 1 else inner[0]
        sch.vectorize(sch.split(fused, factors=[None, factor])[1] if size > factor else fused)
    if worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        rows = loops[:start]
        sch.parallel(sch.fuse(*rows) if len(rows) > 1 else rows[0])
    return True


def _vectorize_innermost_row(sch, block, loops, extents, k: int, lanes: int) -> bool:
    """For a copy that reads some input at a position computed from the output's (a
    reshape into heads, a split of q, k and v): vectors along the innermost loop only,
    when vectors across the fused nest would straddle its rows.  Such a vector indexes the
    input with a division and a remainder per lane, which LLVM does one lane at a time
    (MobileViT's qkv of 1024 x 288 into 3 x 4 x 4 x 256 x 24, one core: 208 us, and 30 us
    in vectors of 12 along its rows of 24).  False, with nothing changed, when every input
    is read at the output's position or the rows divide into the fused vectors."""
    if k == len(loops) or extents[-1] < 4:
        return False
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    inner = bound_iter(sch, loops[-1], node, bindings)
    if inner is None or all(_plain_or_broadcast(r, [inner]) for r in node.reads):
        return False
    fused = vector_factor(math.prod(extents[k:]), lanes)
    if fused is not None and extents[-1] % fused == 0:
        return False
    width = vector_factor(extents[-1], lanes) or (extents[-1] if extents[-1] <= lanes else next(
        (d for d in range(lanes, 3, -1) if extents[-1] % d == 0), None))
    if width is None:
        return False
    _vectors_along_innermost(sch, loops, extents, width)
    return True


def _vectorize_contiguous_runs(sch, block, loops, extents, k: int, lanes: int) -> bool:
    """For a copy made of reshapes and transposes inlined into one another (MobileViT's
    unfolding of patches into tokens and back): vectors along the innermost loop only as
    wide as the input is contiguous there, or none.  Vectors across the fused nest that
    straddle the input's runs read it one lane at a time, each lane with its own 64-bit
    divisions (the unfolding of 96 x 32 x 32 into 4 x 256 x 96 took 2 ms at load 9).
    False, with nothing changed, when the fused vectors read contiguous runs."""
    if k == len(loops) or extents[-1] < 4:
        return False
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    inner = bound_iter(sch, loops[-1], node, bindings)
    if inner is None:
        return False
    irregular = [r for r in node.reads if not _plain_or_broadcast(r, [inner])]
    if not irregular:
        return False
    domains = {iv.var: static_int(iv.dom.extent) for iv in node.iter_vars}
    if None in domains.values():
        return False
    fused = vector_factor(math.prod(extents[k:]), lanes)
    widths = [w for w in (2 * lanes, lanes, *range(lanes - 1, 3, -1)) if extents[-1] % w == 0]
    width = next((w for w in widths if all(_contiguous_run(r, inner, w, domains)
                                           for r in irregular)), None)
    if width is not None and width == fused:
        return False  # whole runs of the fused vector's width: the usual fused vectors
    # no run of 4: scalar copies, which at least divide once per element, not per lane
    _vectors_along_innermost(sch, loops, extents, width)
    return True


def _tile_gathered_copy(sch, block, loops, extents, k: int, lanes: int) -> bool:
    """For a copy (or a copy scaled by a constant, a cast: one loaded value) whose input
    is not contiguous along the output's innermost loop (no run of 4), but along some other
    loop (nearly): a transpose in tiles.  MobileViT unfolds
    2 x 2 patches, 96 x 32 x 32 into 4 x 256 x 96: the output's channels are 1024 floats
    apart in the input, its tokens 2 apart within each row of 16.  A tile of ``rows``
    consecutive values of that loop (unrolled) by a vector of the innermost loop: each
    vector is a gather, but the ``rows`` vectors of a tile read the same few cache lines
    while they are hot (one core: 183 us scalar, 29 us in 16 x 16 tiles).  The splits
    divide their loops, so nothing is read that the copy did not read.  False, with
    nothing changed, for any other block: a symbolic extent, more than one input read
    otherwise than at the output's position, no vector width dividing the innermost loop,
    or no loop moving the input by at most ``MAX_TILE_STEP`` elements."""
    node = sch.get(block)
    if k != 0 or extents[-1] < 4 or not is_copy_of_one_value(node.body):
        return False
    bindings = block_bindings(sch, block)
    iters = [bound_iter(sch, loop, node, bindings) for loop in loops]
    domains = {iv.var: static_int(iv.dom.extent) for iv in node.iter_vars}
    if None in iters or None in domains.values():
        return False
    irregular = [r for r in node.reads if not _plain_or_broadcast(r, [iters[-1]])]
    if len(irregular) != 1 or _contiguous_run(irregular[0], iters[-1], 4, domains):
        return False
    width = largest_divisor(extents[-1], lanes)
    if width < 4:
        return False
    flat = _flat_index(irregular[0])
    best = None
    for axis in range(len(loops) - 1):
        for rows in range(lanes, 1, -1):
            if extents[axis] % rows:
                continue
            step = _constant_step(flat, iters[axis], rows, domains)
            if step is not None and 0 < abs(step) <= MAX_TILE_STEP:
                if best is None or (-rows, abs(step)) < (-best[1], abs(best[2])):
                    best = (axis, rows, step)
                break
    if best is None:
        return False
    axis, rows = best[:2]
    tiled = loops[axis]
    if rows < extents[axis]:
        outer, tiled = sch.split(tiled, factors=[None, rows])
    else:
        outer = None
    vec = loops[-1]
    column = None
    if width < extents[-1]:
        column, vec = sch.split(vec, factors=[None, width])
    above = [outer if index == axis else lp for index, lp in enumerate(loops[:-1])]
    above = [lp for lp in above if lp is not None] + ([column] if column is not None else [])
    sch.reorder(*above, tiled, vec)
    sch.unroll(tiled)
    sch.vectorize(vec)
    if above and worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(sch.fuse(*above) if len(above) > 1 else above[0])
    return True


# The largest step (in elements) by which consecutive values of a tile's loop may move the
# input: a tile of 16 rows then reads 16 x 4 floats of each input line it touches.
MAX_TILE_STEP = 4


def _flat_index(region):
    """``env -> int``: the element offset an input region's indices reach at ``env`` ({Var:
    int}) in its row-major buffer; None from it where an index is not evaluable."""
    indices = [r.min for r in region.region]
    shape = [static_int(d) for d in region.source.shape]

    def flat(env):
        total = 0
        for index, extent in zip(indices, shape):
            value = _evaluate(index, env)
            if value is None or extent is None:
                return None
            total = total * extent + value
        return total
    return flat


def _constant_step(flat, var, rows: int, domains: dict):
    """The step by which each of ``rows`` consecutive values of ``var`` from a multiple of
    ``rows`` moves ``flat``, when it is one constant at the start, middle and end of every
    other iterator's range (evaluated, not proved: a wrong guess costs speed only); else
    None."""
    others = [v for v in domains if not v.same_as(var)]
    step = None
    for pick in (0, 1, 2):
        env = {v: (0, domains[v] // 2, domains[v] - 1)[pick] for v in others}
        for start in sorted({0, rows, domains[var] - rows}):
            base = flat({**env, var: start})
            for offset in sorted({1, rows // 2, rows - 1}):
                moved = flat({**env, var: start + offset})
                if base is None or moved is None:
                    return None
                if step is None:
                    step = moved - base
                if moved - base != step * offset:
                    return None
    return step


def _vectors_along_innermost(sch, loops, extents, width) -> None:
    """Vectors of ``width`` along the innermost loop (none if ``width`` is None), the loops
    above fused and parallel when the work is worth it."""
    rows = loops[:-1]
    if width is None:
        rows = loops
    elif width < extents[-1]:
        outer, vec = sch.split(loops[-1], factors=[None, width])
        rows = rows + [outer]
        sch.vectorize(vec)
    else:
        sch.vectorize(loops[-1])
    if rows and worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(sch.fuse(*rows) if len(rows) > 1 else rows[0])


def _contiguous_run(region, inner, width: int, domains: dict) -> bool:
    """Whether ``width`` consecutive values of ``inner`` from a multiple of ``width`` read
    consecutive elements of the region's last axis (the other indices fixed), checked at
    the start, middle and end of every other iterator's range (a copy's indices are sums,
    products, divisions and remainders of iterators: evaluated here, not proved)."""
    indices = [r.min for r in region.region]
    others = [v for v in domains if not v.same_as(inner)]
    for pick in (0, 1, 2):
        env = {v: (0, domains[v] // 2, domains[v] - 1)[pick] for v in others}
        for start in sorted({0, width, domains[inner] - width}):
            base = [_evaluate(i, {**env, inner: start}) for i in indices]
            for step in sorted({1, width // 2, width - 1}):
                moved = [_evaluate(i, {**env, inner: start + step}) for i in indices]
                if None in base or None in moved or moved[:-1] != base[:-1] \
                        or moved[-1] != base[-1] + step:
                    return False
    return True


def _evaluate(expr, env: dict):
    """The integer value of an index expression at ``env`` ({Var: int}), or None when it
    has a node other than a constant, a bound variable, + - * // % min max or a cast."""
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind == "Var":
        return next((value for var, value in env.items() if var.same_as(expr)), None)
    if kind == "Cast":
        return _evaluate(expr.value, env)
    ops = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
           "FloorDiv": lambda a, b: a // b if b else None,
           "FloorMod": lambda a, b: a % b if b else None, "Min": min, "Max": max}
    if kind not in ops:
        return None
    a, b = _evaluate(expr.a, env), _evaluate(expr.b, env)
    return None if a is None or b is None else ops[kind](a, b)


def _plain_suffix_start(sch, block, loops) -> int:
    """The first loop of the longest suffix of ``loops`` over which every input is either
    read at the output's position (its last indices are those loops' iterators, in order)
    or not moved at all (broadcast), when an input read otherwise stops it from growing;
    ``len(loops)`` when none does (every input is read at the output's position)."""
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    iters = [bound_iter(sch, loop, node, bindings) for loop in loops]
    start = len(loops)
    while start > 0 and iters[start - 1] is not None:
        suffix = iters[start - 1:]
        if not all(_plain_or_broadcast(region, suffix) for region in node.reads):
            return start
        start -= 1
    return len(loops)


def _plain_or_broadcast(region, suffix) -> bool:
    indices = [r.min for r in region.region]
    uses = [any(v.same_as(s) for s in suffix for v in free_vars(i)) for i in indices]
    if not any(uses):
        return True
    n = len(suffix)
    return len(indices) >= n and not any(uses[:-n]) and \
        all(i.same_as(s) for i, s in zip(indices[-n:], suffix))


def _tile_transpose(sch, block, loops, extents, lanes: int) -> bool:
    """For a block that reads some input along a different loop than the one its output
    is contiguous in (a transpose, ``permute_dims``): ``lanes x lanes`` tiles, one row of
    the tile unrolled per input row and vectors along the output, so each cache line read
    is used ``lanes`` times while it is hot.  (128x784 on one AVX2 core: 45 us as a fused
    vector loop, 24 us tiled; numpy's ``w.T.copy()`` takes 50.)  An output row that no
    vector divides is split into whole tiles and the rest (``_tile_transpose_rows``).
    False if not a transpose."""
    node = sch.get(block)
    bindings = block_bindings(sch, block)
    inner = len(loops) - 1
    iters = [bound_iter(sch, loop, node, bindings) for loop in loops]
    if iters[inner] is None or extents[inner] is None:
        return False
    analyzer = within_domains(node)
    for region in node.reads:
        if not region.region:
            continue  # a 0-d input (a scalar) is read at no position: a broadcast
        last = analyzer.simplify(region.region[-1].min)
        along = next((k for k, v in enumerate(iters[:inner]) if v is not None and last.same_as(v)),
                     None)
        if along is None or extents[along] is None:
            continue
        if extents[along] % lanes or extents[inner] < lanes:
            return False
        others = [lp for k, lp in enumerate(loops) if k not in (along, inner)]
        parallel = worth_parallel(extents, PARALLEL_MIN_ELEMENTS)
        if extents[inner] % lanes:
            rows = [e for k, e in enumerate(extents) if k not in (along, inner)]
            several = None in rows or math.prod(rows) > 1
            _tile_transpose_rows(sch, loops[along], loops[inner], others, extents[inner],
                                 lanes, parallel and several, parallel and not several)
            return True
        ko, ki = sch.split(loops[along], factors=[None, lanes])
        jo, ji = sch.split(loops[inner], factors=[None, lanes])
        sch.reorder(*others, ko, jo, ki, ji)
        sch.unroll(ki)
        sch.vectorize(ji)
        if parallel:
            sch.parallel(sch.fuse(*others, ko) if others else ko)
        return True
    return False


def _tile_transpose_rows(sch, along, inner, others, width: int, lanes: int,
                         parallel_rows: bool, parallel_tiles: bool) -> None:
    """The transpose tiles for output rows of a ``width`` no vector divides (GPT-2's keys
    after 129 tokens, ``(12, 129, 64) -> (12, 64, 129)``): the whole tiles of each row as
    above, the last ``width % lanes`` columns a loop of their own (a predicate in every
    tile would keep them from being vectorized).  On one core: 159 us as one fused loop
    with a division per element, 15.6 us in tiles.  Threads share the outer loops (those
    of several rows, else the row's tiles)."""
    sch.reorder(*others, inner, along)
    outer = sch.fuse(*others) if len(others) > 1 else (others[0] if others else None)
    main, _rest = sch.loop_partition(inner, [width // lanes * lanes, None])
    (tiles,) = sch.get_child_blocks(main)
    j, k = sch.get_loops(tiles)[-2:]
    ko, ki = sch.split(k, factors=[None, lanes])
    jo, ji = sch.split(j, factors=[None, lanes])
    sch.reorder(ko, jo, ki, ji)
    sch.unroll(ki)
    sch.vectorize(ji)
    if parallel_rows and outer is not None:
        sch.parallel(outer)
    elif parallel_tiles:
        sch.parallel(ko)


def vector_factor(extent, lanes: int):
    """The widest whole number of vectors (one or two) that divides ``extent``; None for a
    symbolic or empty loop (LLVM's codegen refuses to vectorize a loop of extent 0)."""
    if not extent:
        return None
    for factor in (2 * lanes, lanes):
        if extent % factor == 0:
            return factor
    return None
