"""Small questions asked of a PrimFunc's blocks and loops by every schedule rule: which
blocks, which loops are spatial or reductions, static extents, whether work is worth
spreading over threads, and the target's vector width."""
from __future__ import annotations

import math


# Run a kernel on one thread unless it takes several microseconds there.  Handing work to
# TVM's worker costs a microsecond or two when it is awake (it spins ~0.4 ms after a kernel,
# mlclab.tvm_setup.POOL_SPIN_COUNT) and tens when it must be woken, and when numpy and mlclab
# alternate on 2 cores (validate(), any timing cell) a parallel kernel can wait for a worker
# that can't get a core (the MLP 64x784-128-10 took 0.4-3 ms on two threads against 0.26 ms
# on one, with TVM's workers spinning ~0.1 s).  A spatial element is about a load and a
# store; a multiply-add of a register-tiled reduction is a sixteenth of a vector FMA.  With
# the workers awake through a call, thresholds 8x lower than 2^18 and 2^22 (which were set
# for workers woken per kernel) took MobileNetV2 on 2 threads to 0.89x and RegNetY-400MF to
# 0.93x (one process, both builds interleaved, quiet machine; 16x lower gained no more).
PARALLEL_MIN_ELEMENTS = 1 << 15
PARALLEL_MIN_MACS = 1 << 19

# A matmul of a few rows (a decoding step's one token) does a multiply-add per weight
# element it loads: its time is streaming the weight, not arithmetic, and a second core
# streams half of it.  ONNX Runtime's MLAS gives a GEMM one thread per 64K multiplies
# (``MLAS_SGEMM_THREAD_COMPLEXITY``), so one token's 768x768 runs on every thread there.
# From 1 MiB (this machine's L2 per core): GPT-2's 12-layer decoding step on 2 threads,
# quiet machine, 17.1 -> 15.3 ms (0.88x); under load (6-9) it was 1.09x slower, as every
# parallel kernel is there (docs/performance.md, section 4).
PARALLEL_MIN_STREAM_BYTES = 1 << 20


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


def free_vars(expr):
    from tvm import tirx

    return tirx.analysis.undefined_vars(expr, [])


def balanced(parallel_extent: int) -> bool:
    """Whether ``parallel_extent`` iterations keep every thread of TVM's pool (nearly)
    equally busy: mlclab's thread count, not the host's cores (a container's quota)."""
    from ...threadpool import threads

    count = threads().count
    return parallel_extent > 0 and (parallel_extent % count == 0 or parallel_extent >= 4 * count)


def within_domains(node):
    """An arithmetic analyzer that knows each of ``node``'s iterators stays in its domain,
    so an index a reshape left behind simplifies (GPT-2's keys scaled, transposed and
    reshaped: ``(v // 129 + u) % 64`` with ``v < 129`` and ``u < 64`` is ``u``)."""
    from tvm.sym.analyzer import Analyzer

    analyzer = Analyzer()
    for iv in node.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    return analyzer


def bound_iter(sch, loop, node, bindings):
    """The block iterator variable that ``loop`` drives alone (``v = loop``), or None."""
    var = sch.get(loop).loop_var
    for iv, value in zip(node.iter_vars, bindings):
        if value.same_as(var):
            return iv.var
    return None


def child_blocks(sch):
    return list(sch.get_child_blocks(sch.get_sblock("root")))


def block_name(sch, block) -> str:
    return sch.get(block).name_hint


def is_reduction(sch, block) -> bool:
    from tvm.tirx import IterVar

    return any(int(iv.iter_type) == IterVar.CommReduce for iv in sch.get(block).iter_vars)


def try_inline(sch, block) -> None:
    try:
        sch.compute_inline(block)
    except Exception:  # an output block, or a read pattern inlining can't express: it
        pass           # stays a block of its own, which is always correct


def static_int(extent):
    """The int value of a loop extent, or None when it is symbolic."""
    from tvm import tirx

    return int(extent) if isinstance(extent, tirx.IntImm) else None


def extents_of(sch, loops):
    return [static_int(sch.get(loop).extent) for loop in loops]


def largest_divisor(extent: int, at_most: int) -> int:
    """The largest divisor of ``extent`` no larger than ``at_most`` (a split that needs no
    bounds check): 28, 8 -> 7; 111, 8 -> 3; at least 1."""
    return next(d for d in range(min(extent, at_most), 0, -1) if extent % d == 0)


def worth_parallel(extents, threshold: int) -> bool:
    """Parallel unless the work is known to be below ``threshold`` iterations."""
    if any(e is None for e in extents):
        return True
    return math.prod(extents) >= threshold


def work(sch, block):
    """The iterations of ``block`` (spatial x reduction), or None if any is symbolic."""
    total = 1
    for iv in sch.get(block).iter_vars:
        extent = static_int(iv.dom.extent)
        if extent is None:
            return None
        total *= extent
    return total


def loop_kinds(sch, block, loops):
    """For each loop above ``block``: ``IterVar.DataPar`` if it only feeds spatial block
    iterators, ``IterVar.CommReduce`` if it feeds a reduction iterator, None if it feeds
    none (a unit loop) or an iterator of another kind (opaque, ordered)."""
    from tvm.tirx import IterVar

    node = sch.get(block)
    bindings = block_bindings(sch, block)
    kinds = []
    for loop in loops:
        var = sch.get(loop).loop_var
        kind = None
        for iv, value in zip(node.iter_vars, bindings):
            if not any(v.same_as(var) for v in free_vars(value)):
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


def block_bindings(sch, block):
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
    raise ValueError(f"cannot find the realize of block {block_name(sch, block)}")


def is_copy(stmt) -> bool:
    from tvm.ir.expr import TensorLoad as BufferLoad  # what tirx.BufferLoad(...) builds
    from tvm.tirx import BufferStore

    return isinstance(stmt, BufferStore) and isinstance(stmt.value, BufferLoad)


def is_copy_of_one_value(stmt) -> bool:
    """Whether ``stmt`` stores a function of one loaded element and constants: a copy, or a
    copy scaled by a constant (PyTorch's attention multiplies K^T by a scale of 1.0, which
    strict math keeps behind fences)."""
    from tvm.ir.expr import TensorLoad as BufferLoad
    from tvm.tirx import BufferStore

    if not isinstance(stmt, BufferStore):
        return False
    loads, pending = [], [stmt.value]
    while pending:
        node = pending.pop()
        kind = type(node).__name__
        if isinstance(node, BufferLoad):
            loads.append(node)
        elif kind in ("Var", "Let", "Ramp", "Broadcast", "Shuffle"):
            return False  # an iterator's value (an iota), or forms not walked here
        else:
            for field in ("a", "b", "value", "condition", "true_value", "false_value"):
                if hasattr(node, field):
                    pending.append(getattr(node, field))
            pending.extend(getattr(node, "args", []))
    return len(loads) == 1


def blocks_of(func) -> list:
    """The blocks of ``func`` below its root block, outermost first."""
    from tvm.s_tir import SBlockRealize
    from tvm.tirx import SeqStmt

    found, pending = [], [func.body]
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, SBlockRealize):
            if stmt.block.name_hint != "root":
                found.append(stmt.block)
            pending.append(stmt.block.body)
        elif isinstance(stmt, SeqStmt):
            pending.extend(reversed(list(stmt.seq)))
        elif hasattr(stmt, "body"):
            pending.append(stmt.body)
    return found
