"""mlclab's Relax build pipeline, one pass at a time (what the tir text and the pipeline view run).

Its own module so that the texts and the pipeline both read it without importing each other.
"""
from __future__ import annotations


def run_passes(mod, target="llvm", optimized: bool = True):
    """``mod`` after the whole Relax build pipeline (what goes to TIR lowering and codegen)."""
    for _, after in pass_steps(mod, target, optimized):
        mod = after
    return mod


def pass_steps(mod, target, optimized: bool = True):
    """Yield ``(pass, module after it)`` for each pass of ``build_passes(target)``."""
    from ..backend.passes import build_passes, resolve_target

    tgt = resolve_target(target)
    # tvm.compile applies the Relax pipeline inside ``with target:``; so do we, pass by pass.
    with tgt:
        for p in build_passes(target, optimized=optimized):
            after = p(mod)
            yield p, after
            mod = after
