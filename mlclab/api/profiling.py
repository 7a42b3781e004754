"""``fn.profile(...)``, ``mlclab.compare_profiles(a, b)`` and the fused graph with a profile
overlaid: the api side of ``mlclab.inspect.profile``, with its displays attached from the
notebook layer (``mlclab.api.displays``: ``profile_html``, ``profile_compare_html``).
"""
from __future__ import annotations

import numpy as np

from . import displays
from .errors import boundary
from .validation import _fits, function_input_ranges, random_inputs


def _render(kind: str):
    return lambda obj: displays.lookup(kind)(obj)


def profile(fn, args: tuple, repeat: int = 5):
    """Profile one call of ``fn`` (random inputs, as ``validate`` draws them, if no ``args``)."""
    import tvm

    from ..inspect import profile as prof
    from ..inspect.pipeline import pipeline

    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive int, got {repeat!r}")
    if not args:
        args, _ = random_inputs(fn.params, 0, _fits(fn), function_input_ranges(fn))
    arrays = fn.check_args(tuple(args), f"{fn.name}.profile")
    # Own aligned copies: the profiled run must not depend on (or touch) the caller's arrays.
    tensors = [tvm.runtime.tensor(np.ascontiguousarray(a)) for a in arrays]
    # The pipeline mlclab built with, one pass at a time: the kernels' TIR as FuseTIR left it,
    # and the fused view whose nodes say where each kernel came from.
    steps = pipeline(fn)
    tir = prof.tir_functions(steps["FuseTIR"].mod)
    origins = prof.kernel_origins(steps["FuseOps"].graph("dataflow", collapse=None).graph)
    built = fn.program.built
    result = prof.measure(fn.executable, fn.name, tensors, tir, origins, repeat, built.lock)
    result.renderer = _render("profile_html")
    result.compare_renderer = _render("profile_compare_html")
    return result


def fused_graph(fn, profile=None, **opts):
    """The fused view (the dataflow graph after FuseOps), coloured by ``profile`` if given."""
    from ..inspect.pipeline import pipeline
    from ..inspect.profile import Profile, overlay, overlay_folded
    from ..viz.views import check_shape_options, fitted_view

    if profile is not None and not isinstance(profile, Profile):
        raise TypeError(f"profile must be what fn.profile() returns, got {type(profile).__name__}")
    step = pipeline(fn)["FuseOps"]
    if profile is None:
        return step.graph("dataflow", **opts)
    if profile.function != fn.name:
        raise ValueError(f"profile is of {profile.function!r}, not of {fn.name!r}")
    collapse, depth = opts.pop("collapse", "auto"), opts.pop("depth", None)
    check_shape_options(collapse, depth)
    # Coloured whole, then folded as fn.graph() folds: a folded module takes the time of
    # every kernel inside it.
    whole = overlay(step.graph("dataflow", collapse=None, **opts).graph.copy(), profile)
    return fitted_view(whole, collapse, depth,
                       finish=lambda shown: overlay_folded(shown, whole, profile))


@boundary(lambda a, b: "comparing profiles")
def compare_profiles(a, b):
    """Per-kernel and total time ratios of two profiles of one computation (b / a)."""
    from ..inspect.profile import Profile

    for name, p in (("a", a), ("b", b)):
        if not isinstance(p, Profile):
            raise TypeError(f"compare_profiles: {name} must be what fn.profile() returns, got "
                            f"{type(p).__name__}")
    out = a.compare(b)
    out.renderer = _render("profile_compare_html")
    return out
