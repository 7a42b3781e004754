"""Relax passes of the user's own, run inside mlclab's pipeline for the programs compiled in a
``with mlclab.extra_passes(...)`` block.

They run right before ``LegalizeOps``, where the program still calls high-level operators
(``R.divide``, ``R.nn.relu``): a graph rewrite sees the operators the student wrote, and
everything after it -- legalization, fusion, the CPU schedules -- sees the rewritten program,
so ``fn.pipeline()``, the pass scrubber and the fused view show the pass by its name like
any other. Each is guarded like mlclab's own passes (``record.own_pass``): one that raises is
skipped, the build goes on and says so with a ``FallbackWarning`` naming the pass and its
error; ``mlclab.validate`` is the judge of one that computes something else.

A program compiled with extra passes bypasses the compile cache both ways: the cache is keyed
by the source text, and the same text built without the pass (or with another) must not be
handed back.
"""
from __future__ import annotations

import contextlib
import contextvars

_EXTRA: contextvars.ContextVar = contextvars.ContextVar("mlclab_extra_passes", default=())


@contextlib.contextmanager
def extra_passes(*passes):
    """Run ``passes`` (``tvm.transform.Pass`` objects on a Relax IRModule, in this order) in
    mlclab's pipeline, right before ``LegalizeOps``, for what is compiled inside the block."""
    import tvm

    for index, p in enumerate(passes):
        if not isinstance(p, tvm.transform.Pass):
            raise TypeError(f"extra_passes(): passes[{index}] should be a tvm.transform.Pass "
                            f"(made with @tvm.transform.module_pass or "
                            f"@relax.transform.function_pass), not {type(p).__name__}")
    names = [p.info.name for p in (*_EXTRA.get(), *passes)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"extra_passes(): two passes are named {', '.join(twice)}; "
                         "fn.pipeline() finds a pass by its name, so give each its own")
    token = _EXTRA.set(_EXTRA.get() + tuple(passes))
    try:
        yield
    finally:
        _EXTRA.reset(token)


def active() -> tuple:
    """The extra passes in force here, outermost block first."""
    return _EXTRA.get()
