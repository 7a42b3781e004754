"""The build pipeline mlclab really compiles with, as a list of named passes, and the build
that records it.

The passes come from the target's registration (mlclab.backend.targets). ``recorded_build``
runs them inside TVM's compile with ``mlclab.backend.record``'s instrument on, so every view
(``fn.pipeline()``, the tir text, the fused view, the profile) reads the passes that built the
code that ran, fallbacks included, instead of running them again.
"""
from __future__ import annotations

from typing import Callable

from .record import PIPELINE, BuildRecord, Fallback, recording
from .targets import backend_for, device_for, resolve_target  # noqa: F401  (public here)


def build_passes(target="llvm", optimized: bool = True, fast_math: bool = False) -> list:
    """The ordered Relax passes of mlclab's build for ``target``, for
    ``tvm.compile(relax_pipeline=...)``.

    ``fast_math=False`` (the default, strict) computes numpy's answers (ops/strict.py);
    ``True`` lets TVM's simplifier and LLVM rewrite float arithmetic as if it were exact.

    ``optimized=False`` is TVM's own pipeline for the target, without mlclab's additions
    (for the CPU: transpose and batch-norm folding, blocked convolutions, schedules): the
    build falls back to it when the optimized one fails even with its failing passes skipped,
    so a bug there costs speed, never a program.
    """
    tgt = resolve_target(target)
    return backend_for(tgt).passes(tgt, optimized, fast_math)


# The build's PassContext config.  ``tirx.disable_assert``: no argument checks in the kernels'
# entry points (each checks every tensor's dtype, rank, shape, strides, alignment and device,
# one branch and message each).  Only the Relax VM calls them, with tensors whose shapes and
# dtypes the compiled function's own entry checks (and mlclab's marshaller) already verified;
# the checks were half of LLVM's work on DenseNet-121 (8.5 s of 19: its concatenations take
# up to 45 tensors) and most of the JIT at the first call.  Index checks are Relax
# ``assert_op`` calls, not kernel asserts, and stay.
BUILD_CONFIG = {"tirx.disable_assert": True}


def build_config() -> dict:
    """``BUILD_CONFIG``, and with ``schedules.blocked.BORDER_IN_KERNEL`` TVM's
    ``LoopPartition`` splitting constant loops too at a ``likely`` test (the blocked
    convolutions' column tiles at the image's border).  A config rather than the per-loop
    hint ``pragma_loop_partition_hint``: ``NarrowDataType`` gives the loops new int32
    variables and leaves the hint on the old int64 one, so the hint never applies."""
    from .schedules.blocked import BORDER_IN_KERNEL

    if not BORDER_IN_KERNEL:
        return dict(BUILD_CONFIG)
    return {**BUILD_CONFIG, "s_tir.LoopPartition": {"partition_const_loop": True}}


def recorded_build(mod, target, run: Callable, fast_math: bool = False):
    """``run(pipeline)`` -- a ``tvm.transform.Sequential`` named ``PIPELINE`` -- with the passes
    recorded: mlclab's pipeline first, where a failing pass of mlclab's own is skipped or
    replaced (``record.own_pass``), then, if the build still fails, TVM's plain pipeline.
    Returns ``run``'s result and the ``BuildRecord`` of the build that succeeded; raises the
    first error if neither does."""
    import tvm

    from .builder import clean_tvm_message
    from .tvm_log import quiet

    fallbacks, error = [], None
    for optimized in (True, False):
        pipeline = tvm.transform.Sequential(
            build_passes(target, optimized=optimized, fast_math=fast_math), name=PIPELINE)
        with recording(build_config()) as recorder:
            try:
                with quiet():        # TVM's C++ warnings would reach the notebook cell
                    result = run(pipeline)
            except Exception as exc:
                error = error or exc
                fallbacks.append(Fallback(recorder.failing_stage(), clean_tvm_message(exc),
                                          "TVM's plain pipeline (none of mlclab's passes)"))
                continue
        fallbacks.extend(recorder.fallbacks())
        start = mod if recorder.input is None else recorder.input
        return result, BuildRecord(start, recorder.runs, target, optimized, tuple(fallbacks),
                                   fast_math)
    raise error


def record_pipeline(mod, target="llvm", fast_math: bool = False) -> BuildRecord:
    """The record of the Relax pipeline on ``mod`` alone, for IR that mlclab did not build
    (a ``relax.Function`` or ``IRModule`` handed to a view): the same passes, recorded the
    same way, without code generation."""
    tgt = resolve_target(target)

    def run(pipeline):
        with tgt:            # tvm.compile applies the Relax pipeline inside ``with target:``
            return pipeline(mod)

    return recorded_build(mod, tgt, run, fast_math)[1]
