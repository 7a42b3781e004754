"""The llvm build pipeline mlclab really compiles with, as a list of named passes.

``tvm.compile(mod, "llvm")`` alone does not fuse on CPU; mlclab uses the CPU backend's
fusing pipeline and adds its own schedules after FuseTIR, so the pipeline a lesson shows
(``ir.pipeline``) is exactly the one that built the code that ran.
"""
from __future__ import annotations

import functools


def resolve_target(target="llvm"):
    """The ``tvm.target.Target`` for a user-facing target (``"llvm"``, a JSON dict or a Target).

    Plain ``"llvm"`` means *this* CPU: TVM's default llvm target is generic x86-64 (SSE2,
    4-wide float vectors, no FMA), which leaves most of an AVX2/AVX-512 core unused.
    ``mcpu="native"`` is rejected by this LLVM build, so the host CPU is named explicitly.
    With FMA available LLVM contracts ``a*b+c`` into one rounding, so results may differ from
    numpy's two roundings by about 1e-6 absolute; ``{"kind": "llvm"}`` keeps the generic
    target for anyone who needs bit-for-bit numpy elementwise results.
    """
    import tvm

    if isinstance(target, tvm.target.Target):
        return target
    if isinstance(target, dict):
        return tvm.target.Target(target)
    return _named_target(target)


@functools.lru_cache(maxsize=None)
def _named_target(name: str):
    import tvm

    if name == "llvm":
        cpu = host_cpu()
        return tvm.target.Target({"kind": "llvm", "mcpu": cpu} if cpu else "llvm")
    return tvm.target.Target(name)


@functools.lru_cache(maxsize=None)
def host_cpu():
    """LLVM's name for this machine's CPU (e.g. ``"znver3"``), or None if LLVM can't tell."""
    from tvm.target import codegen

    try:
        cpu = str(codegen.llvm_get_system_cpu())
        triple = str(codegen.llvm_get_system_triple())
        if cpu and cpu != "generic" and codegen.llvm_is_valid_cpu(cpu, triple):
            return cpu
    except Exception:  # an LLVM without these queries: stay generic, which is always valid
        pass
    return None


def build_passes(target="llvm", optimized: bool = True) -> list:
    """The ordered Relax passes of mlclab's build, for ``tvm.compile(relax_pipeline=...)``.

    ``optimized=False`` is TVM's own CPU pipeline, without mlclab's additions (transpose
    folding and CPU schedules): the build falls back to it when the optimized one fails, so
    a bug there costs speed, never a program.
    """
    from tvm import relax
    from tvm.relax.backend import cpu_generic
    from tvm.relax.backend.cpu_generic.pipeline import dataflow_lower_passes

    from .alignment import relax_param_alignment
    from .schedules import schedule_cpu

    tgt = resolve_target(target)
    return [
        # x @ w.T as one matmul kernel (linear's transpose folded in), which the CPU
        # schedules pack panel by panel instead of running a separate transpose.
        *([relax.transform.FuseTransposeMatmul()] if optimized else []),
        *cpu_generic.library_dispatch_passes(tgt),
        *cpu_generic.legalize_passes(tgt),
        *([schedule_cpu(tgt)] if optimized else []),
        *dataflow_lower_passes(tgt),
        *cpu_generic.finalize_passes(tgt),
        # kernels that read numpy's 16-byte-aligned arrays in place (see alignment.py)
        relax_param_alignment(),
    ]
