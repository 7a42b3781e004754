"""The llvm build pipeline mlclab really compiles with, as a list of named passes.

``tvm.compile(mod, "llvm")`` alone does not fuse on CPU; mlclab uses the CPU backend's
fusing pipeline and adds its own schedules after FuseTIR, so the pipeline a lesson shows
(``ir.pipeline``) is exactly the one that built the code that ran.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def resolve_target(target="llvm"):
    """The ``tvm.target.Target`` for a user-facing target name (``"llvm"`` or a JSON dict)."""
    import tvm

    if isinstance(target, tvm.target.Target):
        return target
    if target == "llvm":
        return tvm.target.Target("llvm")
    return tvm.target.Target(target)


def build_passes(target="llvm") -> list:
    """The ordered Relax passes of mlclab's build, for ``tvm.compile(relax_pipeline=...)``."""
    from tvm.relax.backend import cpu_generic
    from tvm.relax.backend.cpu_generic.pipeline import dataflow_lower_passes

    from .schedules import schedule_cpu

    tgt = resolve_target(target)
    return [
        *cpu_generic.library_dispatch_passes(tgt),
        *cpu_generic.legalize_passes(tgt),
        schedule_cpu(tgt),
        *dataflow_lower_passes(tgt),
        *cpu_generic.finalize_passes(tgt),
    ]
