"""``fn.profile(...)``, ``mlclab.compare_profiles(a, b)`` and graphs of a step of the build
(``fn.graph(view, after="FuseOps")``, the ``"fused"`` view) with a profile overlaid: the api
side of ``mlclab.inspect.profile``, with its displays attached from the notebook layer
(``mlclab.api.displays``: ``profile_html``, ``profile_compare_html``). Everything here reads
the build record (``fn.build_record``): the kernels profiled are the ones that ran.
"""
from __future__ import annotations

import numpy as np

from ..runtime import give_back_memory
from . import displays
from .errors import boundary
from .drawn_inputs import fits_of, function_input_ranges, random_inputs


#: Repeats a profile may ask for: a notebook cell must finish (10**9 would run for days).
MAX_REPEAT = 1000


class _Render:
    """A display looked up when shown; a class, not a closure, so a profile pickles."""

    def __init__(self, kind: str):
        self.kind = kind

    def __call__(self, obj):
        return displays.lookup(self.kind)(obj)


_render = _Render


# The pass whose graph a profile's kernels are placed on: FuseOps' groups are the kernels.
PROFILED_STEP = "FuseOps"


def profile(fn, args: tuple, repeat: int = 5):
    """Profile one call of ``fn`` (random inputs, as ``validate`` draws them, if no ``args``)."""
    import tvm

    from ..inspect import profile as prof
    from ..inspect.pipeline import pipeline

    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise ValueError(f"repeat must be an int from 1 to {MAX_REPEAT} (each repeat runs "
                         f"every kernel once more; the median needs few), got {repeat!r}")
    if not args:
        args, _ = random_inputs(fn.params, 0, fits_of(fn), function_input_ranges(fn))
    arrays = list(fn.check_args(tuple(args), f"{fn.name}.profile"))
    del args
    built = fn.program.built
    # Own aligned copies: the profiled run must not depend on (or touch) the caller's arrays.
    # (np.asarray, not np.ascontiguousarray, which makes a 0-d input 1-d.) Drawn inputs are
    # let go one by one as they are copied: only the tensors are alive while it runs.
    tensors = []
    while arrays:
        tensors.append(tvm.runtime.tensor(np.asarray(arrays.pop(0), order="C"),
                                          device=built.device))
    # The build's record: the kernels' TIR as FuseTIR left it, the fused view whose nodes say
    # where each kernel came from, and the schedule rule of each kernel.
    steps = pipeline(fn)
    tir = prof.tir_functions(steps.step("FuseTIR").mod)
    # Unfolded: every node of every kernel, whatever the picture would fold.
    origins = prof.kernel_origins(
        steps.step(PROFILED_STEP).graph("dataflow", collapse=None).graph)
    result = prof.measure(fn.executable, fn.name, tensors, tir, origins, repeat, built.lock,
                          device=built.device, decisions=steps.record.schedule_decisions(),
                          fallbacks=steps.fallbacks, plain_vm=built.vm)
    result.renderer = _render("profile_html")
    result.compare_renderer = _render("profile_compare_html")
    del tensors
    give_back_memory()      # the instrumented VM's buffers, the inputs
    return result


def step_graph(fn, view: str, after: str, profile=None, **opts):
    """``view`` of ``fn``'s module after pass ``after`` of its build (any recorded pass, found by
    name: a ValueError lists them otherwise), coloured by ``profile`` if given (which places
    its kernels on the graph after ``PROFILED_STEP``)."""
    from ..inspect.pipeline import pipeline
    from ..inspect.profile import Profile, overlay, overlay_entries, overlay_folded
    from ..viz.views import check_shape_options, fitted_view

    if profile is not None:
        if not isinstance(profile, Profile):
            raise TypeError(f"profile must be what fn.profile() returns, got "
                            f"{type(profile).__name__}")
        if after != PROFILED_STEP:
            raise ValueError(f"profile= overlays the graph after {PROFILED_STEP} (the \"fused\" "
                             f"view), not after {after!r}")
        if profile.function != fn.name:
            raise ValueError(f"profile is of {profile.function!r}, not of {fn.name!r}")
    try:
        step = pipeline(fn).step(after)
    except ValueError as err:
        raise ValueError(f"after: {err}") from None
    if profile is None:
        return step.graph(view, **opts)
    collapse, depth = opts.pop("collapse", "auto"), opts.pop("depth", None)
    check_shape_options(collapse, depth)
    # Coloured whole, then folded as fn.graph() folds: a folded module takes the time of
    # every kernel inside it.
    whole = overlay(step.graph(view, collapse=None, **opts).graph.copy(), profile)
    return fitted_view(whole, collapse, depth,
                       finish=lambda shown: overlay_folded(shown, profile),
                       overlays={"profile": overlay_entries(profile)})


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
