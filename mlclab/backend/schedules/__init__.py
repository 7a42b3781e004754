"""CPU schedules for the PrimFuncs that legalization and fusion produce.

LegalizeOps turns every Relax operator into a naive loop nest: one thread, no vector
instructions, a 512x512 matmul walking B column by column (~100x slower than numpy).
``schedule_cpu`` rewrites each PrimFunc with ``tvm.s_tir.Schedule`` right after FuseTIR
with the first rule of an ordered list (``rules.CPU_RULES``) that applies, and records on
the function which rule that was and why the earlier ones declined (``apply.py``):

* ``blocked_layout_transform``, ``blocked_max_pool2d``, ``blocked_conv2d``,
  ``blocked_depthwise_conv2d``: the functions ``conv_layout`` makes -- NCHW <-> NCHW{x}c
  copies, and convolutions (dense, grouped, depthwise) and max pooling in the blocked layout
  (register tiles of output pixels times channel-block vectors, the fused epilogue per tile,
  rows in parallel; ``blocked.py``, ``depthwise.py``);
* ``pointwise_conv2d``: a 1x1 convolution left in NCHW (``backend/pointwise_conv.py``) as a
  matmul of the weights by the pixels: tiles of output channels by whole vectors of the
  flattened image, or of rows padded to one vector (``pointwise.py``);
* ``outer_axes_reduction``: a reduction that keeps the innermost axis of its input and
  output (the blocked global average pool of squeeze-excite, a column sum): vector
  accumulators along that axis (``outer_reduction.py``);
* ``register_tile_packed``, ``register_tile``: one reduction whose innermost output axis is
  contiguous in memory (matmul, linear, batched matmul, conv2d with unit stride): a register
  tile of ``ROWS x (2 * lanes)`` outputs accumulated in a tile-sized buffer that LLVM keeps
  in vector registers while the whole reduction runs, the fused epilogue (bias, relu, ...)
  applied once per tile, and column blocks of tiles spread over the cores.  As in a BLAS,
  matmul's B is copied one column panel at a time into contiguous memory that every row
  block then streams; for ``x @ w.T`` that copy is also the transpose (``register_tile.py``);
* ``row_chain``: reductions of rows and the element-wise passes over the same rows
  (softmax's max, exponentials, sum and division; a layer norm's mean, variance and
  normalisation): every pass computed under one parallel loop over groups of a vector's rows,
  so that a group stays in cache from the first pass to the last (``row_chain.py``);
* ``parallel_loops``: anything else.  Spatial blocks (elementwise chains, broadcasts,
  transposes, padding) have their loop nest fused, whole SIMD vectors vectorized and the
  rest parallel; above each reduction (softmax, pooling, symbolic or prime widths) the
  spatial loops are fused and parallel, the reduction one serial loop (``loops.py``).

Every rule first inlines the intermediate spatial blocks, so a chain is one pass over memory
-- except a value read more than once per element, which is stored rather than recomputed
at each read, so compile time stays linear in the program's depth (``inline.py``).

Outside the blocked convolution no rule splits or reorders the reduction loops, so every
output is summed in exactly the order of the unscheduled code: results change only where
LLVM contracts ``a*b+c`` into a fused multiply-add on a target that has FMA (about 1e-6
absolute for values near 1).  The blocked convolution sums its input channels block by
block, which moves results by float32 rounding (about 1e-6 relative).  A reduction whose
order cannot change a result (an integer max, min or sum; softmax's row maximum) runs in
vector partials (``row_reductions.reduce_in_vector_partials``), with the same results.
Splits only use factors that divide their loop, so no loop gets a bounds predicate, and a
symbolic or indivisible loop simply stays scalar.

Scheduling is an optimisation, never a requirement: when a rule declines or a schedule
primitive refuses (a symbolic size, a zero-size tensor, an operator no rule was written
for), the next rule starts again from the unscheduled function, and in the end the function
is left exactly as legalization made it -- with the reasons recorded.
"""
from __future__ import annotations

from .apply import (DECLINED_ATTR, SCHEDULE_ATTR, UNSCHEDULED, NotScheduled, schedule_cpu,
                    schedule_decision, schedule_primfunc)
from .rule import CPURule, Declined
from .rules import CPU_RULES
from .tir_util import vector_lanes

__all__ = ["CPU_RULES", "CPURule", "DECLINED_ATTR", "Declined", "NotScheduled",
           "SCHEDULE_ATTR", "UNSCHEDULED", "schedule_cpu", "schedule_decision",
           "schedule_primfunc", "vector_lanes"]
