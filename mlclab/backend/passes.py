"""The build pipeline mlclab really compiles with, as a list of named passes.

The passes come from the target's registration (mlclab.backend.targets); the pipeline a lesson
shows (``ir.pipeline``) runs this same list, so it is exactly the one that built the code
that ran.
"""
from __future__ import annotations

from .targets import backend_for, resolve_target  # noqa: F401  (resolve_target is public here)


def build_passes(target="llvm", optimized: bool = True) -> list:
    """The ordered Relax passes of mlclab's build for ``target``, for
    ``tvm.compile(relax_pipeline=...)``.

    ``optimized=False`` is TVM's own pipeline for the target, without mlclab's additions
    (for the CPU: transpose and batch-norm folding, blocked convolutions, schedules): the
    build falls back to it when the optimized one fails, so a bug there costs speed, never
    a program.
    """
    tgt = resolve_target(target)
    return backend_for(tgt).passes(tgt, optimized)
