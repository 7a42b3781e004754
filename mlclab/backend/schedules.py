"""CPU schedules for the PrimFuncs that legalization and fusion produce.

LegalizeOps turns every Relax operator into a naive loop nest: one thread, no vector
instructions, a 512x512 matmul walking B column by column (~100x slower than numpy).
``schedule_cpu`` rewrites each PrimFunc with ``tvm.s_tir.Schedule`` right after FuseTIR,
choosing a rule by the function's blocks:

* **only spatial blocks** (elementwise chains, broadcasts, transposes, padding): the
  intermediate blocks are inlined so a chain is one pass over memory -- except a value
  read more than once per element, which is stored rather than recomputed at each read
  (so compile time stays linear in the program's depth); each loop nest is fused, its
  innermost whole SIMD vectors are vectorized and the rest runs in parallel;
* **one reduction whose innermost output axis is contiguous in memory** (matmul, linear,
  batched matmul, conv2d with unit stride): a register tile of ``ROWS x (2 * lanes)``
  outputs is accumulated in a tile-sized buffer that LLVM keeps in vector registers while
  the whole reduction runs, the fused epilogue (bias, relu, ...) is applied once per tile,
  and column blocks of tiles are spread over the cores.  As in a BLAS, matmul's B is
  copied one column panel at a time into contiguous memory that every row block then
  streams; for ``x @ w.T`` that copy is also the transpose;
* **any other reduction** (softmax, pooling, reductions over the last axis, symbolic or
  prime widths): the spatial loops above each reduction are fused and run in parallel;
  the reduction itself stays one serial loop;
* **a convolution or max pooling in the blocked NCHW[x]c layout** (made by
  ``conv_layout``, recognised by its block names): a register tile of output pixels times
  one or two channel-block vectors, the fused epilogue per tile, rows in parallel (see
  ``_schedule_blocked_conv``).

Outside that last rule no rule splits or reorders the reduction loops, so every output is
summed in exactly the order of the unscheduled code: results change only where LLVM
contracts ``a*b+c`` into a fused multiply-add on a target that has FMA (about 1e-6 absolute
for values near 1).  The blocked convolution sums its input channels block by block, which
moves results by float32 rounding (about 1e-6 relative).
Splits only use factors that divide their loop, so no loop gets a bounds predicate, and a
symbolic or indivisible loop simply stays scalar.

Scheduling is an optimisation, never a requirement: when a schedule primitive refuses (a
symbolic size, a zero-size tensor, an operator no rule was written for), the function is
scheduled again with less ambitious rules, and in the end left exactly as legalization
made it.
"""
from __future__ import annotations

import functools
import math
import os

# Rows of the register tile.  ROWS x 2 vector accumulators plus two B vectors and one
# broadcast A value fit the 16 vector registers of AVX2 and AVX-512.  Measured at 512^3 on
# AVX2, 2 threads: 4 x 16 at 2.4 ms beat 8 x 16 (3.4 ms, spills) and 4 x 32 (3.0 ms).
ROWS = 4
# Run a kernel on one thread unless it takes tens of microseconds there.  Waking TVM's
# workers costs microseconds, and when numpy and mlclab alternate on 2 cores (validate(),
# any timing cell) a parallel kernel can wait for a worker that can't get a core: with
# OpenBLAS busy-waiting and TVM's spinning pool, the MLP 64x784-128-10 took 0.4-3 ms on two
# threads against 0.26 ms on one.  With TVM's pool not spinning (mlclab.tvm_setup) that cost
# is gone: interleaved with numpy on 2 threads the MLP's first layer (6.4 M multiply-adds)
# takes 0.066 ms in parallel against 0.085 ms on one thread.  A spatial element is about a
# load and a store; a multiply-add of a register-tiled reduction is a sixteenth of a vector FMA.
PARALLEL_MIN_ELEMENTS = 1 << 18
PARALLEL_MIN_MACS = 1 << 22


def vector_lanes(target, dtype_bits: int = 32) -> int:
    """How many ``dtype_bits``-wide values one SIMD register of ``target`` holds."""
    from tvm.target import codegen

    bits = 128  # SSE2 is the x86-64 baseline, and NEON is 128 bits wide as well
    try:
        if codegen.llvm_cpu_has_features("avx512f", target):
            bits = 512
        elif codegen.llvm_cpu_has_features("avx2", target):
            bits = 256
    except Exception:  # a non-x86 triple or an LLVM without the query: stay at 128
        pass
    return max(1, bits // dtype_bits)


def schedule_cpu(target):
    """A module pass that schedules every not-yet-scheduled PrimFunc for the CPU ``target``.

    Functions already marked ``tirx.is_scheduled`` are left alone; every function this pass
    schedules gets that mark, so running it twice changes nothing.
    """
    import tvm
    from tvm import tirx

    lanes = vector_lanes(target)

    @tvm.transform.module_pass(opt_level=0, name="mlclab.ScheduleCPU")
    def _schedule(mod, ctx):
        updates = {}
        for gv, func in mod.functions_items():
            if not isinstance(func, tirx.PrimFunc) or _is_scheduled(func):
                continue
            scheduled = schedule_primfunc(func, lanes)
            if scheduled is not func:
                updates[gv] = scheduled
        if not updates:
            return mod
        # A new module rather than an in-place update: the input may still be on show in
        # a pipeline view.
        funcs = {gv: updates.get(gv, func) for gv, func in mod.functions_items()}
        return tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)

    return _schedule


def schedule_primfunc(func, lanes: int, strict: bool = False):
    """``func`` scheduled for a CPU whose vectors hold ``lanes`` float32 values, or
    ``func`` itself when a schedule primitive refuses.  ``strict=True`` raises instead, so
    tests can tell a schedule that applied from one that quietly fell back."""
    import tvm
    from tvm import s_tir

    error = None
    # From the most to the least ambitious rules; a schedule refused half-way is dropped
    # whole and the next one starts from the unscheduled function.
    ambitions = (TILE_AND_PACK, TILE, PARALLEL)
    if _has_blocked_conv(func):
        ambitions = (BLOCKED_CONV,) + ambitions
    for ambition in ambitions:
        try:
            sch = s_tir.Schedule(tvm.IRModule({"main": func}))
            _schedule_function(sch, lanes, ambition)
            return sch.mod["main"].with_attr("tirx.is_scheduled", True)
        except Exception as exc:  # a refusal from the scheduler: try a simpler rule
            error = exc
    if strict:
        raise error
    return func  # the correct, naive function


# Rule sets, most ambitious first: the blocked-layout convolution (only for functions that
# hold one), register tiles with packed panels, register tiles with only the packing a
# transposed input needs, and plain parallel/vector loops.
BLOCKED_CONV, TILE_AND_PACK, TILE, PARALLEL = 3, 2, 1, 0


def _is_scheduled(func) -> bool:
    return func.attrs is not None and bool(func.attrs.get("tirx.is_scheduled", False))


# ---------------------------------------------------------------------------------------
# function-level rules


def _schedule_function(sch, lanes: int, ambition: int = TILE_AND_PACK) -> None:
    """Inline what is free to inline, then register-tile the one reduction if the function
    has that form and ``ambition`` allows, else schedule block by block."""
    blocks = _blocks(sch)
    if not blocks:
        raise ValueError("no blocks to schedule")
    _inline_producers(sch, blocks)
    blocks = _blocks(sch)
    if ambition >= BLOCKED_CONV:
        _schedule_blocked(sch, blocks, lanes)
        return
    if ambition >= TILE and _tile_single_reduction(sch, blocks, lanes,
                                                   pack=ambition >= TILE_AND_PACK):
        return
    _schedule_each_block(sch, blocks, lanes)


def _inline_producers(sch, blocks) -> None:
    """Inline the spatial blocks that feed later blocks (an elementwise chain, an
    epilogue) so each is computed where it is used -- where that duplicates no work.
    Blocks before the first reduction stay: an inlined padding block would put a bounds
    check in the innermost reduction loop."""
    first_reduction = next((k for k, b in enumerate(blocks) if _is_reduction(sch, b)), None)
    start = 0 if first_reduction is None else first_reduction + 1
    for b in blocks[start:-1]:  # the last block writes the output: it can't be inlined
        if not _is_reduction(sch, b) and _inlining_is_free(sch, b):
            _try_inline(sch, b)


def _tile_single_reduction(sch, blocks, lanes: int, pack: bool) -> bool:
    """Register-tile the function's only reduction (and its one epilogue block, if any);
    False, with nothing changed, when the function does not have that form."""
    reductions = [k for k, b in enumerate(blocks) if _is_reduction(sch, b)]
    if len(reductions) != 1:
        return False
    index = reductions[0]
    red, prologue, epilogue = blocks[index], blocks[:index], blocks[index + 1:]
    if len(epilogue) > 1:
        return False
    transposed = _tileable(sch, red, lanes)
    if transposed is None:
        return False
    for b in prologue:
        _vectorize_spatial(sch, b, lanes)
    _tile_reduction(sch, red, epilogue[0] if epilogue else None, lanes, transposed, pack)
    return True


def _schedule_each_block(sch, blocks, lanes: int) -> None:
    """The plain rules: parallel spatial loops above each reduction, vectors and threads
    for every spatial block."""
    for b in blocks:
        if _is_reduction(sch, b):
            _parallel_reduction(sch, b)
        else:
            _vectorize_spatial(sch, b, lanes)


# ---------------------------------------------------------------------------------------
# inlining without duplicated work
#
# Inlining a producer copies its expression into every place a consumer reads it.  Read
# once per element, that saves a round trip through memory; read twice (``y = y + y``,
# ``h * sigmoid(h)``, or once under ``tanh``, whose LLVM lowering uses its argument 5
# times), the work doubles -- and along a chain it compounds: inlining every link of
# ``h = tanh(h)`` made 8 links take 81 s to compile and 30 links of ``y = y + y`` abort
# with std::bad_alloc.  So a producer is inlined only when that evaluates it at most once
# per element, or when it is so small (one operation on loads and constants) that
# recomputing it is cheaper than storing it; once inlined it is no longer that small, so
# the copies cannot compound.  Everything else stays materialised in its own buffer, as
# TVM's unscheduled code has it, and every expression stays linear in the program's size.

# The most expression nodes (operations, loads, constants; not index arithmetic) a producer
# may have and still be recomputed at each read: ``x * 0.5`` is 3.
CHEAP_NODES = 3


def _inlining_is_free(sch, block) -> bool:
    """Whether inlining ``block`` into its consumers evaluates nothing more than once per
    element (or only something cheaper than a store and a load)."""
    store = sch.get(block).body
    if not _is_store(store):
        return False
    if _size(store.value) <= CHEAP_NODES:
        return True
    buffer = sch.get(block).writes[0].source
    reads = 0
    for consumer in sch.get_consumers(block):
        body = sch.get(consumer).body
        if not _is_store(body):
            return False
        reads += _evaluations(body.value, lambda node: _is_load_of(node, buffer))
    return reads <= 1


def _is_store(stmt) -> bool:
    from tvm.tirx import BufferStore

    return isinstance(stmt, BufferStore)


def _is_load_of(node, buffer) -> bool:
    from tvm.ir.expr import TensorLoad as BufferLoad  # what tirx.BufferLoad(...) builds

    return isinstance(node, BufferLoad) and node.source.same_as(buffer)  # source: the buffer


def _size(expr) -> int:
    """The nodes of ``expr`` outside index arithmetic; a call to an intrinsic counts as
    more than cheap."""
    from tvm.ir import Call

    return _evaluations(expr, lambda node: CHEAP_NODES + 1 if isinstance(node, Call) else 1,
                        indices=False)


def _evaluations(expr, count, indices: bool = True) -> int:
    """The sum of ``count(node)`` over ``expr`` read as a tree -- each shared node counted as
    often as it is reached, and each intrinsic's argument as often as its lowering uses it
    -- computed over the DAG in linear time."""
    from tvm.ir import Call
    from tvm.ir.expr import TensorLoad as BufferLoad  # what tirx.BufferLoad(...) builds

    memo = {}
    # An explicit stack, not recursion: a chain of a few hundred inlined links nests deeper
    # than Python's recursion limit.
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        key = node.__chandle__()
        if key in memo:
            continue
        children = list(_operands(node, indices or not isinstance(node, BufferLoad)))
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        uses = (_argument_uses(node.op.name)
                if isinstance(node, Call) and hasattr(node.op, "name") else 1)
        memo[key] = int(count(node)) + uses * sum(memo[c.__chandle__()] for c in children)
    return memo[expr.__chandle__()]


# The fields of a TIR expression that hold its operands.
_OPERAND_FIELDS = ("a", "b", "value", "condition", "true_value", "false_value", "args",
                   "base", "stride", "body")


def _operands(node, with_indices: bool):
    from tvm.ir.expr import Expr

    fields = _OPERAND_FIELDS + (("indices",) if with_indices else ())
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, Expr):
            yield value
        elif value is not None and type(value).__name__ == "Array":
            yield from (item for item in value if isinstance(item, Expr))


@functools.lru_cache(maxsize=None)
def _argument_uses(op_name: str) -> int:
    """How many times LLVM's lowering of the intrinsic ``op_name`` evaluates its argument:
    1 for ``exp`` (one LLVM intrinsic), 5 for ``tanh`` (a select over two exp formulas).
    Asked of TVM's own lowering rather than listed, so a new operator can't be missed."""
    import tvm
    from tvm import tirx

    x = tirx.Var("x", "float32")
    try:
        call = tirx.call_intrin("float32", op_name, x)
        func = tirx.PrimFunc([x], tirx.Evaluate(call)).with_attrs(
            {"target": tvm.target.Target("llvm"), "global_symbol": "probe"})
        lowered = tirx.transform.LowerIntrin()(tvm.IRModule({"probe": func}))["probe"]
        return max(1, _evaluations(lowered.body.value,
                                   lambda node: isinstance(node, tirx.Var) and node.same_as(x)))
    except Exception:  # not a unary float intrinsic (if_then_else, a cast, ...): read once
        return 1


# ---------------------------------------------------------------------------------------
# spatial blocks


def _vectorize_spatial(sch, block, lanes: int) -> None:
    """Fuse a spatial block's loops, vectorize the innermost whole vectors and run the
    rest in parallel.  Only the static suffix of the nest is split.  A transpose gets
    square tiles instead."""
    loops = list(sch.get_loops(block))
    if not loops:
        return  # a 0-d tensor
    extents = _extents(sch, loops)
    if _tile_transpose(sch, block, loops, extents, lanes):
        return
    k = len(loops)
    while k > 0 and extents[k - 1] is not None:
        k -= 1
    symbolic, static = loops[:k], loops[k:]
    outer = list(symbolic)
    if static:
        size = math.prod(extents[k:])
        inner = sch.fuse(*static) if len(static) > 1 else static[0]
        factor = _vector_factor(size, lanes)
        if factor is None:
            outer.append(inner)
        elif size > factor:
            rest, vec = sch.split(inner, factors=[None, factor])
            outer.append(rest)
            sch.vectorize(vec)
        else:
            sch.vectorize(inner)
    if outer and _worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])


def _tile_transpose(sch, block, loops, extents, lanes: int) -> bool:
    """For a block that reads some input along a different loop than the one its output
    is contiguous in (a transpose, ``permute_dims``): ``lanes x lanes`` tiles, one row of
    the tile unrolled per input row and vectors along the output, so each cache line read
    is used ``lanes`` times while it is hot.  (128x784 on one AVX2 core: 45 us as a fused
    vector loop, 24 us tiled; numpy's ``w.T.copy()`` takes 50.)  False if not a transpose."""
    node = sch.get(block)
    bindings = _block_bindings(sch, block)
    inner = len(loops) - 1
    iters = [_bound_iter(sch, loop, node, bindings) for loop in loops]
    if iters[inner] is None or extents[inner] is None:
        return False
    for region in node.reads:
        last = region.region[-1].min
        along = next((k for k, v in enumerate(iters[:inner]) if v is not None and last.same_as(v)),
                     None)
        if along is None or extents[along] is None:
            continue
        if extents[along] % lanes or extents[inner] % lanes:
            return False
        ko, ki = sch.split(loops[along], factors=[None, lanes])
        jo, ji = sch.split(loops[inner], factors=[None, lanes])
        others = [lp for k, lp in enumerate(loops) if k not in (along, inner)]
        sch.reorder(*others, ko, jo, ki, ji)
        sch.unroll(ki)
        sch.vectorize(ji)
        if _worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
            sch.parallel(sch.fuse(*others, ko) if others else ko)
        return True
    return False


def _vector_factor(extent, lanes: int):
    """The widest whole number of vectors (one or two) that divides ``extent``."""
    if extent is None:
        return None
    for factor in (2 * lanes, lanes):
        if extent % factor == 0:
            return factor
    return None


# ---------------------------------------------------------------------------------------
# reductions


def _parallel_reduction(sch, block) -> None:
    """Fuse the spatial loops above a reduction and make them parallel; the reduction
    loops below keep their order."""
    from tvm.tirx import IterVar

    loops = list(sch.get_loops(block))
    kinds = _loop_kinds(sch, block, loops)
    spatial = []
    for loop, kind in zip(loops, kinds):
        if kind != IterVar.DataPar:
            break
        spatial.append(loop)
    if spatial and _worth_parallel(_extents(sch, loops), PARALLEL_MIN_ELEMENTS):
        sch.parallel(sch.fuse(*spatial) if len(spatial) > 1 else spatial[0])


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
    kinds = _loop_kinds(sch, block, loops)
    if any(k not in (IterVar.DataPar, IterVar.CommReduce) for k in kinds):
        return None
    n_spatial = kinds.count(IterVar.DataPar)
    if n_spatial < 2 or kinds[:n_spatial] != [IterVar.DataPar] * n_spatial:
        return None
    if _inner_factor(_static(sch.get(loops[n_spatial - 1]).extent), lanes) is None:
        return None

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


def _column_axis(region, vj):
    """The one axis of a buffer access that ``vj`` moves by exactly one element, None if
    ``vj`` moves none; ValueError for any other pattern (a stride, several axes, a
    non-point access)."""
    from tvm import sym

    found = None
    for axis, rng in enumerate(region.region):
        if _static(rng.extent) != 1:
            raise ValueError("not a point access")
        coeff = sym.detect_linear_equation(rng.min, [vj])
        step = _static(coeff[0]) if len(coeff) else None
        if step is None or step not in (0, 1) or (step == 1 and found is not None):
            raise ValueError("not a unit-stride access along one axis")
        if step == 1:
            found = axis
    return found


def _inner_factor(extent, lanes: int):
    """The width of a register tile's row for an output axis of ``extent``: the whole
    axis when it fits two vectors (10 classes), else whole vectors, else the largest
    divisor of at least half a vector (28 -> 14); None when nothing fits (a prime)."""
    if extent is None:
        return None
    if extent <= 2 * lanes:
        return extent
    factor = _vector_factor(extent, lanes)
    if factor is not None:
        return factor
    return next((d for d in range(2 * lanes, max(lanes // 2, 2) - 1, -1) if extent % d == 0),
                None)


def _tile_reduction(sch, red, epilogue, lanes: int, transposed=(), pack: bool = True) -> None:
    """``[batch..., jo, io] x [reduction...] x [ii (unrolled), ji (vector)]``, with the
    epilogue computed per tile.  Each input in ``transposed`` (indices into the block's
    reads) is first copied, per column block, into a panel whose columns are contiguous."""
    spatial, reduction = _spatial_and_reduction_loops(sch, red)
    j, i = spatial[-1], _row_loop(sch, red, spatial)
    panels = _panels(sch, red, transposed, j, i,
                     optional=pack and _panels_are_reused(sch, i, j, lanes))
    if epilogue is None:
        # Accumulate into a tile-sized buffer, not into the output itself, so the
        # accumulators can live in registers for the whole reduction.
        epilogue = sch.cache_write(red, 0, "global")
    columns, io, ii, ji = _split_tile(sch, spatial, i, j, lanes)
    sch.reorder(*columns, *[lp for lp in (io,) if lp is not None], *reduction,
                *[lp for lp in (ii, ji) if lp is not None])
    # Loop kinds are set before the init is split off the reduction: the schedule checks
    # them against a complete reduction block, and decompose_reduction copies them onto
    # the init's own loops.
    parallel = _worth_parallel([_work(sch, red)], PARALLEL_MIN_MACS)
    if panels:
        tile = _pack_per_column_block(sch, red, panels, columns, io, parallel)
    else:
        tile = _fuse_tiles(sch, columns + [lp for lp in (io,) if lp is not None], parallel)
    if tile is not None:
        _epilogue_per_tile(sch, epilogue, tile)
    sch.vectorize(ji)
    if ii is not None:
        sch.unroll(ii)
    sch.decompose_reduction(red, reduction[0])


def _spatial_and_reduction_loops(sch, block):
    from tvm.tirx import IterVar

    loops = list(sch.get_loops(block))
    kinds = _loop_kinds(sch, block, loops)
    return ([lp for lp, k in zip(loops, kinds) if k == IterVar.DataPar],
            [lp for lp, k in zip(loops, kinds) if k == IterVar.CommReduce])


def _panels_are_reused(sch, i, j, lanes: int) -> bool:
    """Packing an input that could be read in place pays for itself only if each panel is
    reused by several row blocks and there are several column blocks (else it is one more
    copy of B).  A transposed input is packed regardless: that is the only way to
    vectorize it."""
    i_extent, j_extent = _static(sch.get(i).extent), _static(sch.get(j).extent)
    return j_extent > _inner_factor(j_extent, lanes) and (i_extent is None or i_extent > ROWS)


def _split_tile(sch, spatial, i, j, lanes: int):
    """Split the row loop ``i`` into ``io x ii`` (``ROWS`` rows per tile) and the column
    loop ``j`` into ``jo x ji`` (a row of the tile); returns the column-block loops (the
    batch loops and ``jo``), ``io``, ``ii`` and ``ji``, any of ``io``/``ii`` None when the
    split is not needed or not possible."""
    i_extent, j_extent = _static(sch.get(i).extent), _static(sch.get(j).extent)
    j_factor = _inner_factor(j_extent, lanes)
    jo, ji = sch.split(j, factors=[None, j_factor]) if j_extent > j_factor else (None, j)
    rows = next((r for r in (ROWS, 2) if i_extent is not None and i_extent % r == 0), None)
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
    if parallel and column is not None and _balanced(_static(sch.get(column).extent) or 0):
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


def _epilogue_per_tile(sch, epilogue, tile) -> None:
    """Apply the epilogue (bias, relu, the copy out of the accumulators) once per tile,
    while the tile is still in registers, vectorized along its rows."""
    sch.reverse_compute_at(epilogue, tile, preserve_unit_loops=True)
    epilogue_loops = list(sch.get_loops(epilogue))
    width = _static(sch.get(epilogue_loops[-1]).extent)
    if not epilogue_loops[-1].same_as(tile) and width is not None and width > 1:
        sch.vectorize(epilogue_loops[-1])


def _panels(sch, block, transposed, j, i, optional: bool):
    """The inputs to pack per column block, as (read index, column axis, rank): those the
    columns walk along a leading axis (they must be transposed to vectorize), and those
    indexed by the column iterator itself on their last axis but not by the row iterator
    (matmul's B; not conv2d's input, indexed by ``x + rx``, nor anything re-read per row)."""
    node = sch.get(block)
    bindings = _block_bindings(sch, block)
    vj, vi = _bound_iter(sch, j, node, bindings), _bound_iter(sch, i, node, bindings)
    out = []
    for index, region in enumerate(node.reads):
        axis = _column_axis(region, vj)
        if axis is None:
            continue
        ranges = list(region.region)
        plain = ranges[axis].min.same_as(vj)
        by_row = vi is not None and any(
            v.same_as(vi) for r in ranges for v in _free_vars(r.min))
        if index in transposed or (optional and axis == len(ranges) - 1 and plain and not by_row):
            out.append((index, axis, len(ranges)))
    return out


def _free_vars(expr):
    from tvm import tirx

    return tirx.analysis.undefined_vars(expr, [])


def _move_axis_last(axis: int, ndim: int):
    """The index map that moves buffer axis ``axis`` to the end."""
    from tvm.tirx import IndexMap

    return IndexMap.from_func(lambda *idx: [*idx[:axis], *idx[axis + 1:], idx[axis]], ndim=ndim)


def _balanced(parallel_extent: int) -> bool:
    """Whether ``parallel_extent`` iterations keep every core (nearly) equally busy."""
    cores = os.cpu_count() or 1
    return parallel_extent > 0 and (parallel_extent % cores == 0 or parallel_extent >= 4 * cores)


def _row_loop(sch, block, spatial):
    """The spatial loop that becomes the tile's rows: the innermost one that the vector
    operands (those read along the columns) do not depend on, so each vector loaded is
    reused by every row -- matmul's rows of A, conv2d's output channels (not its output
    rows, which would load a different input vector per row).  Falls back to the loop
    just outside the columns."""
    node = sch.get(block)
    bindings = _block_bindings(sch, block)
    vj = _bound_iter(sch, spatial[-1], node, bindings)
    vector_vars = []
    for region in node.reads:
        if _column_axis(region, vj) is not None:
            for rng in region.region:
                vector_vars.extend(_free_vars(rng.min))
    for loop in reversed(spatial[:-1]):
        vi = _bound_iter(sch, loop, node, bindings)
        if (vi is not None and _static(sch.get(loop).extent) is not None
                and not any(v.same_as(vi) for v in vector_vars)):
            return loop
    return spatial[-2]


def _bound_iter(sch, loop, node, bindings):
    """The block iterator variable that ``loop`` drives alone (``v = loop``), or None."""
    var = sch.get(loop).loop_var
    for iv, value in zip(node.iter_vars, bindings):
        if value.same_as(var):
            return iv.var
    return None


# ---------------------------------------------------------------------------------------
# convolutions in the blocked layout (backend/conv_layout.py)

# The most vector accumulators a convolution's register tile holds.  Two limits: the
# registers (AVX-512 has 32, AVX2 and SSE 16; four stay free for the weight vectors and the
# broadcast input), and the stack -- TVM places a kernel's buffers smaller than 1 KiB
# (``kMaxStackAlloca``) on the stack, where LLVM promotes them to registers, and takes
# larger ones from ``TVMBackendAllocWorkspace``, where every FMA loads and stores its
# accumulator.  Measured on one AVX-512 core, ResNet-18's 3x3 64->64 at 56x56: 28
# accumulators (1.75 KiB) 1.8 ms, 14 (896 B) 0.95 ms.
STACK_BYTES = 1024


def _accumulators(lanes: int) -> int:
    registers = 32 if lanes >= 16 else 16
    return min(registers - 4, (STACK_BYTES - 1) // (lanes * 4))


# Output-channel blocks per register tile: each broadcast input value then feeds two FMAs
# instead of one, which halves the broadcast loads per FMA.  ResNet-18 on one AVX-512 core,
# 2 x 7 against 1 x 14 accumulators: 3x3 at 56x56 1.00 vs 1.09 ms, at 14x14 0.98 vs
# 1.06 ms, at 7x7 1.04 vs 1.31 ms.
OC_TILE = 2


def _conv_tile(out_chunks: int, width: int, lanes: int):
    """(output-channel blocks, output pixels) of a register tile: the most accumulators
    within the budget, each count dividing its loop; two channel blocks on a tie."""
    budget = _accumulators(lanes)
    best = None
    for oc_tile in (OC_TILE, 1):
        if out_chunks % oc_tile:
            continue
        pixels = next(p for p in range(min(width, budget // oc_tile), 0, -1) if width % p == 0)
        if best is None or oc_tile * pixels > best[0] * best[1]:
            best = (oc_tile, pixels)
    return best


def _has_blocked_conv(func) -> bool:
    """Whether ``func`` holds the reduction of a blocked-layout convolution or pooling (a
    walk over the statements: a Schedule of every function would cost 10 % of scheduling)."""
    from tvm.s_tir import SBlockRealize
    from tvm.tirx import IterVar, SeqStmt

    from .conv_layout import BLOCK_NAME, POOL_NAME

    pending = [func.body]
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, SBlockRealize):
            block = stmt.block
            if block.name_hint.startswith((BLOCK_NAME, POOL_NAME)) and any(
                    int(iv.iter_type) == IterVar.CommReduce for iv in block.iter_vars):
                return True
            if block.name_hint.startswith(TRANSFORM_NAME) and _is_channel_blocking(block):
                return True
            pending.append(block.body)
        elif isinstance(stmt, SeqStmt):
            pending.extend(stmt.seq)
        elif hasattr(stmt, "body"):
            pending.append(stmt.body)
    return False


# LegalizeOps' name for the block of ``R.layout_transform``.
TRANSFORM_NAME = "te_layout_transform"


def _is_channel_blocking(block) -> bool:
    """Whether ``block`` is one of ``conv_layout``'s transforms at the graph's edges:
    NCHW -> NCHW{x}c (4-d read, 5-d write) or back (5-d read, 4-d write)."""
    if len(block.reads) != 1 or len(block.writes) != 1:
        return False
    ranks = (len(block.reads[0].region), len(block.writes[0].region))
    return ranks in ((4, 5), (5, 4))


def _schedule_blocked(sch, blocks, lanes: int) -> None:
    """The schedule of a function made by ``conv_layout``'s lowerings: a blocked pooling,
    a transform into or out of the blocked layout, or a blocked convolution with its fused
    epilogue."""
    from .conv_layout import POOL_NAME

    if len(blocks) == 1 and _name(sch, blocks[0]).startswith(TRANSFORM_NAME):
        _schedule_channel_blocking(sch, blocks[0], lanes)
        return
    pools = [b for b in blocks if _name(sch, b).startswith(POOL_NAME) and _is_reduction(sch, b)]
    if pools:
        _schedule_blocked_pool(sch, blocks, pools, lanes)
    else:
        _schedule_blocked_conv(sch, blocks, lanes)


def _schedule_blocked_conv(sch, blocks, lanes: int) -> None:
    """``[n * oc_outer * oh (parallel), ow_outer] x [ic_chunk, ky, kx, ic_block] x
    [oc_inner, ow_inner (unrolled), oc_block (vector)]``: ``ow_inner`` output pixels times
    ``oc_inner`` blocks of output channels accumulate in registers while the whole
    reduction runs -- each step ``oc_inner`` weight vectors and ``ow_inner`` broadcast
    inputs, ``oc_inner * ow_inner`` FMAs -- and the fused epilogue (bias, residual, relu)
    is applied to the tile before it leaves the cache.  A 1x1 convolution is this same
    loop nest with ``ky = kx = 1``: a matmul of pixels by channels, register-tiled the same
    way.  The reduction runs in the order ``ic_chunk, ky, kx, ic_block`` rather than
    legalization's ``ic, ky, kx``: results move by float32 rounding only (~1e-6)."""
    from .conv_layout import BLOCK_NAME

    conv = [b for b in blocks if _name(sch, b).startswith(BLOCK_NAME) and _is_reduction(sch, b)]
    if len(conv) != 1:
        raise ValueError("not one blocked convolution")
    conv = conv[0]
    index = blocks.index(conv)
    prologue, epilogue = blocks[:index], blocks[index + 1:]
    if any(_is_reduction(sch, b) for b in prologue + epilogue):
        raise ValueError("a blocked convolution fused with another reduction")
    loops = list(sch.get_loops(conv))
    extents = _extents(sch, loops)
    if len(loops) != 9 or None in extents:
        raise ValueError("not a static blocked convolution")
    n, oc_chunk, oh, ow, oc_block, ic_chunk, ky, kx, ic_block = loops
    oc_tile, pixels = _conv_tile(extents[1], extents[3], lanes)
    ow_outer, ow_inner = sch.split(ow, factors=[None, pixels])
    oc_outer, oc_inner = sch.split(oc_chunk, factors=[None, oc_tile])
    sch.reorder(n, oc_outer, oh, ow_outer, ic_chunk, ky, kx, ic_block, oc_inner, ow_inner,
                oc_block)
    if not epilogue:
        # Accumulate into a tile-sized buffer that LLVM keeps in registers.
        epilogue = [sch.cache_write(conv, 0, "global")]
    rows = sch.fuse(n, oc_outer, oh)
    if _worth_parallel([_work(sch, conv)], PARALLEL_MIN_MACS):
        sch.parallel(rows)
    # The epilogue blocks that stayed separate (relu reads its input twice, so a residual
    # add before it is stored, not inlined) follow the tile one after the other.
    for block in epilogue:
        _epilogue_per_tile(sch, block, ow_outer)
    sch.vectorize(oc_block)
    sch.unroll(ow_inner)
    sch.unroll(oc_inner)
    sch.decompose_reduction(conv, ic_chunk)
    for b in prologue:  # the padding: a copy, vectorized along the channel block
        _vectorize_spatial(sch, b, lanes)


# Output columns per tile of a layout transform (a divisor of the width, at most this).
TRANSFORM_COLUMNS = 8


def _schedule_channel_blocking(sch, block, lanes: int) -> None:
    """NCHW <-> NCHW{x}c is a transpose of each (channel block x width) tile: the loop that
    reads contiguous memory is vectorized and the other one unrolled, so LLVM moves whole
    vectors on both sides.  ResNet-18's 64x56x56, one core: into the blocked layout 150 ->
    18 us, back 56 -> 18 us (the spatial rule vectorized one side and scattered the other)."""
    loops = list(sch.get_loops(block))
    extents = _extents(sch, loops)
    if None in extents:
        raise ValueError("a symbolic layout transform")
    width = extents[3]
    columns = next(c for c in range(min(width, TRANSFORM_COLUMNS), 0, -1) if width % c == 0)
    if len(loops) == 4:  # into the blocked layout: loops over the NCHW input
        n, c, h, w = loops
        block_size = _static(sch.get(block).writes[0].source.shape[4])
        if block_size is None or extents[1] % block_size:
            raise ValueError("not a channel blocking")
        c_outer, c_inner = sch.split(c, factors=[None, block_size])
        w_outer, w_inner = sch.split(w, factors=[None, columns])
        sch.reorder(n, c_outer, h, w_outer, c_inner, w_inner)
        rows, vector, unrolled = (n, c_outer, h), w_inner, c_inner
    else:  # back to NCHW: loops over the blocked input
        n, c_outer, h, w, c_inner = loops
        w_outer, w_inner = sch.split(w, factors=[None, columns])
        sch.reorder(n, c_outer, h, w_outer, w_inner, c_inner)
        rows, vector, unrolled = (n, c_outer, h), c_inner, w_inner
    fused = sch.fuse(*rows)
    if _worth_parallel(extents, PARALLEL_MIN_ELEMENTS):
        sch.parallel(fused)
    sch.vectorize(vector)
    sch.unroll(unrolled)


def _schedule_blocked_pool(sch, blocks, pools, lanes: int) -> None:
    """Pooling in the blocked layout: ``[n * c_chunk * oh (parallel), ow] x [ky, kx] x
    [c_block (vector)]`` -- each window step is one vector compare over a channel block
    (the unscheduled loop nest compared one float at a time: 4 ms for ResNet-18's pool of
    64x112x112, against 0.3 ms so)."""
    if len(pools) != 1 or len(blocks) > 2:
        raise ValueError("not one blocked pooling")
    pool = pools[0]
    loops = list(sch.get_loops(pool))
    if len(loops) != 7 or None in _extents(sch, loops):
        raise ValueError("not a static blocked pooling")
    n, c_chunk, oh, ow, c_block, ky, kx = loops
    sch.reorder(n, c_chunk, oh, ow, ky, kx, c_block)
    rows = sch.fuse(n, c_chunk, oh)
    if _worth_parallel([_work(sch, pool)], PARALLEL_MIN_ELEMENTS):
        sch.parallel(rows)
    sch.vectorize(c_block)
    sch.decompose_reduction(pool, ky)
    for b in blocks:
        if not b.same_as(pool):  # the padding
            _vectorize_spatial(sch, b, lanes)


# ---------------------------------------------------------------------------------------
# small helpers


def _blocks(sch):
    return list(sch.get_child_blocks(sch.get_sblock("root")))


def _name(sch, block) -> str:
    return sch.get(block).name_hint


def _is_reduction(sch, block) -> bool:
    from tvm.tirx import IterVar

    return any(int(iv.iter_type) == IterVar.CommReduce for iv in sch.get(block).iter_vars)


def _try_inline(sch, block) -> None:
    try:
        sch.compute_inline(block)
    except Exception:  # an output block, or a read pattern inlining can't express: it
        pass           # stays a block of its own, which is always correct


def _static(extent):
    """The int value of a loop extent, or None when it is symbolic."""
    from tvm import tirx

    return int(extent) if isinstance(extent, tirx.IntImm) else None


def _extents(sch, loops):
    return [_static(sch.get(loop).extent) for loop in loops]


def _worth_parallel(extents, threshold: int) -> bool:
    """Parallel unless the work is known to be below ``threshold`` iterations."""
    if any(e is None for e in extents):
        return True
    return math.prod(extents) >= threshold


def _work(sch, block):
    """The iterations of ``block`` (spatial x reduction), or None if any is symbolic."""
    total = 1
    for iv in sch.get(block).iter_vars:
        extent = _static(iv.dom.extent)
        if extent is None:
            return None
        total *= extent
    return total


def _loop_kinds(sch, block, loops):
    """For each loop above ``block``: ``IterVar.DataPar`` if it only feeds spatial block
    iterators, ``IterVar.CommReduce`` if it feeds a reduction iterator, None if it feeds
    none (a unit loop) or an iterator of another kind (opaque, ordered)."""
    from tvm.tirx import IterVar

    node = sch.get(block)
    bindings = _block_bindings(sch, block)
    kinds = []
    for loop in loops:
        var = sch.get(loop).loop_var
        kind = None
        for iv, value in zip(node.iter_vars, bindings):
            if not any(v.same_as(var) for v in _free_vars(value)):
                continue
            iter_type = int(iv.iter_type)
            if iter_type not in (IterVar.DataPar, IterVar.CommReduce):
                kind = None
                break
            kind = iter_type
            if iter_type == IterVar.CommReduce:
                break
        kinds.append(kind)
    return kinds


def _block_bindings(sch, block):
    """The expressions that bind ``block``'s iterators to the loop variables."""
    from tvm.s_tir import SBlockRealize
    from tvm.tirx import SeqStmt

    target = sch.get(block)
    pending = [sch.get_sref(block).parent.stmt]
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, SBlockRealize) and stmt.block.same_as(target):
            return list(stmt.iter_values)
        if isinstance(stmt, SeqStmt):
            pending.extend(stmt.seq)
        elif not isinstance(stmt, SBlockRealize) and hasattr(stmt, "body"):
            pending.append(stmt.body)
    raise ValueError(f"cannot find the realize of block {_name(sch, block)}")
