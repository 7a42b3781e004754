"""``validate()``: run a compiled function and numpy side by side and say where they part.

The check has two levels. The outputs are compared with the reference (the program's own
numpy evaluation, or a numpy function the student wrote). Then every intermediate binding TVM
computed is compared with the value numpy computed for the same binding, in program order, and
the first one outside tolerance is named: that is where to look, and the notebook display
highlights it in the graph.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Optional, Sequence

import numpy as np

from ..runtime import give_back_memory
from .arguments import detached
from .comparison import Comparison, compare
from .drawn_inputs import fits_of, function_input_ranges, random_inputs
from .errors import boundary, from_user_code
from .timing import time_per_call
from .validation_report import BindingCheck, OutputCheck, ValidationReport

#: The seed of the random inputs when the caller gives none: the same inputs, so the same
#: report, every run (a fresh seed each call made the failing layer change between runs).
DEFAULT_SEED = 0


def _as_list(value) -> list:
    if isinstance(value, (tuple, list)):
        return list(value)
    return [value]


def _copies(args: Sequence[np.ndarray]) -> list[np.ndarray]:
    # Each side gets its own copies: a reference that writes into its inputs must not change
    # what the other side sees.
    return [np.array(a, copy=True) for a in args]


def _time_on_copies(call, args) -> float:
    copies = _copies(args)
    return time_per_call(lambda: call(*copies))


def _binding_checks(fn, args, rtol, atol, notes: list[str]) -> list[BindingCheck]:
    """Every intermediate binding TVM computed compared with the reference's value of it.

    Memory stays bounded by one side: TVM's values come at once (one traced call), and the
    reference's are compared as it computes each (``reference_trace(each=...)``), then dropped
    with TVM's, instead of holding every intermediate of both sides (BERT-base: 6.1 GB).
    The default tolerances grow with each binding's place in the program
    (:func:`~mlclab.api.comparison.depth_scale`)."""
    try:
        tvm_values = fn.trace(*_copies(args))
    except (AttributeError, NotImplementedError) as err:
        notes.append(f"per-binding check unavailable: {err}")
        return []
    infos = {}
    for info in getattr(fn, "bindings", {}).values():
        infos.setdefault(info.name, info)
    order = {name: depth for depth, name in enumerate(tvm_values, 1)}
    checks = []

    def check(name, expected):
        value = tvm_values.pop(name, None)
        if value is None:
            return
        info = infos.get(name)
        parts = list(zip(_as_list(value), _as_list(expected)))
        comps = [compare(a, e, rtol, atol, depth=order[name]) for a, e in parts]
        worst = max(comps, key=lambda c: (not c.ok, c.max_abs_err)) if comps else compare(0, 0)
        worst.tolerance_ratio = None   # (drawn for outputs only; per binding, memory)
        checks.append(BindingCheck(
            name=name,
            dsl_name=getattr(info, "dsl_name", None),
            line=getattr(getattr(info, "span", None), "lineno", None),
            source_line=getattr(info, "source_line", "") or "",
            comparison=worst,
            module=getattr(info, "module", None)))

    try:
        fn.reference_trace(*_copies(args), each=check)
    except (AttributeError, NotImplementedError) as err:
        notes.append(f"per-binding check unavailable: {err}")
        return []
    return sorted(checks, key=lambda c: order[c.name])


def _check_options(f, reference, rtol, atol, seed) -> None:
    if not (hasattr(f, "typed") and hasattr(f, "reference") and callable(f)):
        raise TypeError(f"validate(): f must be a compiled mlclab function (from @mlclab.function "
                        f"or mlclab.compile), got {type(f).__name__}")
    if reference is not None and not callable(reference):
        raise TypeError(f"validate(): reference must be a function taking the same arguments, "
                        f"got {type(reference).__name__}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"validate(): {name} must be a number, got {type(value).__name__} "
                            f"{value!r}")
        if not (math.isfinite(float(value)) and value >= 0):
            raise ValueError(f"validate(): {name} must be a finite number >= 0, got {value!r}")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"validate(): seed must be an int, got {type(seed).__name__} {seed!r}")
        if seed < 0:
            raise ValueError(f"validate(): seed must be >= 0, got {seed}")


def _call_reference(ref, *args):
    try:
        return ref(*args)
    except Exception as exc:  # the student's own function: its error is theirs, unchanged
        raise from_user_code(exc)


@boundary("validating")
def validate(f, *args, reference: Optional[Callable] = None, rtol: Optional[float] = None,
             atol: Optional[float] = None, seed: Optional[int] = None) -> ValidationReport:
    """Run ``f`` (a compiled DSL function) and a numpy reference on the same inputs; compare.

    Without ``args``, inputs are drawn at random from ``f``'s signature, reproducibly: from
    ``seed``, by default :data:`DEFAULT_SEED` (the report records it); a parameter passed
    straight to an operator defined on part of the line only (``log(x)``, ``batch_norm``'s
    variance) is drawn inside that domain (``drawn_inputs.input_ranges``). ``reference`` is a
    numpy function taking the same arguments; by default it is the program's own numpy
    evaluation, ``f.reference``. ``rtol``/``atol`` default per dtype
    (``comparison.default_tolerances``), growing for intermediates with their depth.
    """
    _check_options(f, reference, rtol, atol, seed)
    sizes: dict[str, int] = {}
    used_seed = None
    params = list(f.typed.params)
    if not args:
        used_seed = seed if seed is not None else DEFAULT_SEED
        args, sizes = random_inputs(params, used_seed, fits_of(f), function_input_ranges(f))
    elif hasattr(f, "bind"):
        # What f(...) accepts -- lists, scalars -- converted once, with f's own checks.
        bound = f.bind(args, "validate")
        args, sizes = bound.arrays, dict(bound.sizes)
    args = list(args)

    actual = _as_list(f(*_copies(args)))
    ref = functools.partial(_call_reference, reference) if reference is not None else f.reference
    expected = [detached(e) for e in _as_list(ref(*_copies(args)))]
    notes: list[str] = []
    if len(actual) != len(expected):
        notes.append(f"{f.name} returns {len(actual)} value(s), the reference {len(expected)}")
    outputs = [OutputCheck(i, np.asarray(a), np.asarray(e), compare(a, e, rtol, atol))
               for i, (a, e) in enumerate(zip(actual, expected))]
    if len(actual) != len(expected):
        outputs.append(OutputCheck(len(outputs), np.zeros(0), np.zeros(0),
                                   Comparison((), "", math.inf, math.inf, 1, 1, 0, 0,
                                              note="different number of outputs")))

    bindings = _binding_checks(f, args, rtol, atol, notes)

    # each side timed on copies of its own, made and dropped in turn (one set alive at once)
    compiled_time = _time_on_copies(f, args)
    reference_time = _time_on_copies(ref, args)

    names = ([p.name for p in params] if len(params) == len(args)
             else [f"arg{i}" for i in range(len(args))])
    ref_name = getattr(f, "reference_name", None) if reference is None else \
        f"{getattr(reference, '__name__', 'reference')} (numpy)"
    give_back_memory()      # the traced run's and the comparisons' temporaries
    return ValidationReport(function=f.name, inputs=list(zip(names, args)), outputs=outputs,
                            bindings=bindings, reference_name=ref_name,
                            compiled_time_s=compiled_time, reference_time_s=reference_time,
                            seed=used_seed, sizes=sizes, notes=notes, fn=f)

