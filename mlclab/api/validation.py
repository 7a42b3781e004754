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
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..lang import dims, typed
from ..ops.params import DOMAINS
from . import displays
from .errors import boundary, from_user_code

# Default tolerances per dtype kind. float32 leaves room for a different summation order in
# reductions and matmul (TVM's schedules vs numpy's BLAS); integers and booleans must match.
_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
}
_SYMBOL_SIZES = (2, 5)          # a symbolic size gets a random size in this closed range
# When a draw does not fit the program (a size smaller than a conv kernel), the range grows
# this many times, doubling its top each time (5, 10, ..., 640).
_SIZE_RETRIES = 8
# Random inputs are for checking, not load: sizes whose inputs, or whose largest operator,
# would need more memory than this are refused up front (allocating it could get the kernel
# killed by the OOM killer).
MAX_RANDOM_INPUT_BYTES = 256 * 2**20


def default_tolerances(dtype) -> tuple[float, float]:
    """(rtol, atol) used for ``dtype`` when the caller gives none."""
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


# --------------------------------------------------------------------------- comparison
@dataclass
class Comparison:
    """One array compared with its expected value."""

    shape: tuple
    dtype: str
    max_abs_err: float
    max_rel_err: float
    mismatches: int          # elements outside tolerance (NaN meeting NaN counts as equal)
    size: int
    rtol: float
    atol: float
    note: str = ""           # set when the arrays cannot be compared element-wise
    tolerance_ratio: Optional[np.ndarray] = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.note and self.mismatches == 0


def compare(actual, expected, rtol: Optional[float] = None, atol: Optional[float] = None) -> Comparison:
    """Compare two arrays element-wise within ``rtol``/``atol`` (numpy's ``isclose`` rule).

    The relative error is taken over the elements whose expected value is non-zero, so a
    single exact zero does not turn the summary into infinity (an expected inf or NaN that is
    missed counts as infinitely off). ``tolerance_ratio`` is
    ``|actual - expected| / (atol + rtol * |expected|)`` per element: below 1 passes.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    d_rtol, d_atol = default_tolerances(e.dtype if e.dtype.kind == "f" else a.dtype)
    rtol = d_rtol if rtol is None else float(rtol)
    if atol is None:
        # A value near zero that ends a long reduction (a matmul's) carries rounding error on
        # the scale of the values it summed, not its own: by default the absolute tolerance
        # grows with the largest expected magnitude.
        finite = np.abs(e[np.isfinite(e)]) if e.dtype.kind == "f" and e.size else np.zeros(0)
        atol = max(d_atol, rtol * float(finite.max())) if finite.size else d_atol
    else:
        atol = float(atol)
    if a.shape != e.shape:
        return Comparison(tuple(a.shape), str(a.dtype), math.inf, math.inf, a.size, a.size, rtol, atol,
                          note=f"shape {tuple(a.shape)} where {tuple(e.shape)} was expected")
    if a.dtype.kind not in "biuf" or e.dtype.kind not in "biuf":
        return Comparison(tuple(a.shape), str(a.dtype), math.inf, math.inf, a.size, a.size, rtol, atol,
                          note=f"cannot compare dtypes {a.dtype} and {e.dtype}")
    af, ef = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        same = (af == ef) | (np.isnan(af) & np.isnan(ef))
        err = np.where(same, 0.0, np.abs(af - ef))
        err = np.where(np.isnan(err), np.inf, err)          # NaN against a number
        close = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True) | same
        # Relative to finite, non-zero expectations; missing an infinite or NaN one is infinitely off.
        scale = (ef != 0) & np.isfinite(ef)
        rel = np.where(scale, err / np.abs(np.where(scale, ef, 1.0)),
                       np.where(np.isfinite(ef), 0.0, np.inf))
        rel = np.where(same, 0.0, rel)
        ratio = err / (atol + rtol * np.abs(np.nan_to_num(ef)))
        ratio = np.where(same, 0.0, np.where(close, np.minimum(ratio, 1.0), np.maximum(ratio, 1.0)))
    return Comparison(tuple(a.shape), str(a.dtype),
                      float(err.max()) if err.size else 0.0,
                      float(rel.max()) if rel.size else 0.0,
                      int((~close).sum()), int(a.size), rtol, atol,
                      tolerance_ratio=ratio)


# --------------------------------------------------------------------------- inputs
class _DomainWalker(typed.Visitor):
    """Which parameters go straight into an operator argument with a domain (``log(x)``).

    Only direct uses count: once a parameter's name is assigned again it is no longer the
    parameter, and a value computed from it (``log(x - 1)``) is the program's business.
    """

    def __init__(self, params):
        self.live = {p.name for p in params}      # names that still mean the parameter
        self.domains: dict[str, set] = {}

    def walk(self, body):
        for stmt in body:
            self.visit(stmt)

    def visit_Ref(self, node):
        pass

    def visit_Const(self, node):
        pass

    def visit_Call(self, node):
        for p, arg in zip(node.op.tensor_params, node.args):
            for a in (arg if isinstance(arg, list) else [arg]):
                if a is None:
                    continue
                if p.domain and isinstance(a, typed.Ref) and a.name in self.live:
                    self.domains.setdefault(a.name, set()).add(p.domain)
                self.visit(a)

    def visit_FuncCall(self, node):
        for a in node.args:
            self.visit(a)

    def visit_TupleExpr(self, node):
        for item in node.items:
            self.visit(item)

    def visit_GetItem(self, node):
        self.visit(node.value)

    def visit_Assign(self, node):
        self.visit(node.value)
        self.live -= set(node.targets)

    def visit_Return(self, node):
        self.visit(node.value)

    def visit_If(self, node):
        self.visit(node.cond)
        live = set(self.live)
        self.walk(node.then_body)
        then_live, self.live = self.live, live
        self.walk(node.else_body)
        self.live &= then_live


def input_ranges(function) -> dict[str, tuple[float, float]]:
    """The (low, high) range to draw each parameter of a typed ``function`` from, for the
    parameters that feed an operator defined on part of the line only (``log``'s, a
    ``batch_norm`` variance): the intersection of those operators' domains."""
    walker = _DomainWalker(function.params)
    walker.walk(getattr(function, "body", ()))     # validate()'s duck type needs only params
    ranges = {}
    for name, domains in walker.domains.items():
        lows, highs = zip(*(DOMAINS[d] for d in domains))
        ranges[name] = (max(lows), min(highs))
    return ranges


def function_input_ranges(f) -> dict[str, tuple[float, float]]:
    """The ranges to draw ``f``'s random inputs from: its program's operator domains
    (:func:`input_ranges`), and what an imported model knows of its own inputs (the indices
    an Embedding accepts)."""
    own = getattr(f, "input_ranges", None)
    return own() if own is not None else input_ranges(f.typed)


def random_inputs(params, seed: Optional[int] = None,
                  fits: Optional[Callable[[dict], int]] = None,
                  ranges: Optional[dict] = None) -> tuple[list[np.ndarray], dict[str, int]]:
    """Random arguments for parameters with ``.name`` and ``.type.shape``/``.type.dtype``.

    Every symbolic size gets one random size shared by all parameters that use it. ``fits``
    (sizes -> bytes the largest operator needs, raising ``ValueError`` when some value's shape
    is not positive for them) makes the draw keep to sizes the program accepts: a draw that
    does not fit is drawn again from a wider range. Floats are standard normal; integers are
    small (so ``//`` and ``%`` meet zero divisors now and then, which the DSL defines as numpy
    does); booleans are fair coins. ``ranges`` (see :func:`input_ranges`) maps a parameter's
    name to a (low, high) it is drawn from uniformly instead (integers: low <= v < high).
    """
    rng = np.random.default_rng(seed)
    sizes = _draw_sizes(params, rng, fits)
    shapes = [tuple(dims.evaluate(d, sizes) for d in p.type.shape) for p in params]
    dtypes = [np.dtype(str(p.type.dtype)) for p in params]
    need = sum(math.prod(s) * d.itemsize for s, d in zip(shapes, dtypes))
    if need > MAX_RANDOM_INPUT_BYTES:
        raise ValueError(f"random inputs for this signature would take {need / 2**20:,.0f} MiB "
                         f"(limit {MAX_RANDOM_INPUT_BYTES // 2**20} MiB); pass your own arguments "
                         "to validate()")
    args = []
    ranges = ranges or {}
    for p, shape, dtype in zip(params, shapes, dtypes):
        if dtype.kind == "f" and p.name in ranges:
            low, high = ranges[p.name]
            value = rng.uniform(low, high, shape).astype(dtype, copy=False)
        elif dtype.kind == "f":
            # Drawn in the target precision where numpy can (no float64 copy of a big input).
            native = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
            value = rng.standard_normal(shape, dtype=native).astype(dtype, copy=False)
        elif dtype.kind in "iu" and p.name in ranges:
            low, high = ranges[p.name]
            value = rng.integers(int(low), int(high), size=shape).astype(dtype)
        elif dtype.kind == "b":
            value = rng.random(shape) < 0.5
        elif dtype.kind == "u":
            value = rng.integers(0, 16, size=shape).astype(dtype)
        else:
            value = rng.integers(-8, 9, size=shape).astype(dtype)
        args.append(np.asarray(value))
    return args, sizes


def _draw_sizes(params, rng, fits) -> dict[str, int]:
    # First-appearance order, as before sizes were checked: a seed keeps giving the same sizes.
    names = list(dict.fromkeys(name for p in params for d in p.type.shape
                               for name in sorted(dims.symbols(d))))
    low, high = _SYMBOL_SIZES
    for _ in range(_SIZE_RETRIES):
        sizes = {name: int(rng.integers(low, high + 1)) for name in names}
        if fits is None:
            return sizes
        try:
            need = fits(sizes)
        except ValueError as exc:          # a value's shape is not positive for these sizes
            if not names:
                raise
            problem = str(exc)
            high *= 2
            continue
        if need > MAX_RANDOM_INPUT_BYTES:
            raise ValueError(f"random inputs{f' of sizes {sizes}' if sizes else ''} would need "
                             f"{need / 2**20:,.0f} MiB for one operator (limit "
                             f"{MAX_RANDOM_INPUT_BYTES // 2**20} MiB); pass your own arguments "
                             "to validate()")
        return sizes
    raise ValueError(f"validate() found no random sizes for {', '.join(names)} that this "
                     f"program accepts (up to {high // 2}): {problem}; pass your own arguments")


# --------------------------------------------------------------------------- timing
def time_per_call(call: Callable[[], Any], budget_s: float = 0.05) -> float:
    """Seconds per call: grow the batch until it takes ``budget_s``, best of three batches.

    Small on purpose: it runs inside a notebook cell. It gives the order of magnitude a
    student compares (microseconds vs milliseconds), not a benchmark.
    """
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= budget_s or n >= 1 << 16:
            break
        # Aim at the budget from what this batch took, growing at most tenfold per step.
        n = min(n * 10, max(n * 2, int(n * budget_s / max(elapsed, 1e-9)) + 1))
    best = elapsed / n
    for _ in range(2):
        start = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - start) / n)
    return best


# --------------------------------------------------------------------------- the report
@dataclass
class OutputCheck:
    index: int
    actual: np.ndarray
    expected: np.ndarray
    comparison: Comparison

    @property
    def ok(self) -> bool:
        return self.comparison.ok


@dataclass
class BindingCheck:
    name: str                     # the IR binding name (the key of ``fn.trace``)
    dsl_name: Optional[str]
    line: Optional[int]
    source_line: str
    comparison: Comparison
    module: Optional[str] = None  # an imported model's layer: its PyTorch module path

    @property
    def ok(self) -> bool:
        return self.comparison.ok


@dataclass
class ValidationReport:
    """What :func:`validate` found. Displays as a widget with a static HTML fallback."""

    function: str
    inputs: list[tuple[str, np.ndarray]]
    outputs: list[OutputCheck]
    bindings: list[BindingCheck]
    reference_name: str
    compiled_time_s: Optional[float]
    reference_time_s: Optional[float]
    seed: Optional[int] = None              # set when the inputs were drawn at random
    sizes: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fn: Any = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """Every output within tolerance of the reference and every binding of numpy's."""
        return all(o.ok for o in self.outputs) and self.first_divergence is None

    @property
    def max_abs_err(self) -> float:
        return max((o.comparison.max_abs_err for o in self.outputs), default=0.0)

    @property
    def max_rel_err(self) -> float:
        return max((o.comparison.max_rel_err for o in self.outputs), default=0.0)

    @property
    def first_divergence(self) -> Optional[str]:
        """The IR name of the first binding whose TVM value differs from numpy's, or None."""
        bad = self.first_divergent_binding
        return bad.name if bad else None

    @property
    def first_divergent_binding(self) -> Optional[BindingCheck]:
        return next((b for b in self.bindings if not b.ok), None)

    def __repr__(self) -> str:
        return (f"<ValidationReport {self.function}: {'pass' if self.ok else 'FAIL'}, "
                f"max_abs_err={self.max_abs_err:.3g}, max_rel_err={self.max_rel_err:.3g}, "
                f"first_divergence={self.first_divergence!r}>")

    def __bool__(self) -> bool:
        return self.ok

    # ----------------------------------------------------------------- displays
    # The notebook layer provides them (registered by the facade, see mlclab.api.displays).
    def _repr_html_(self) -> str:
        return displays.lookup("validation_html")(self)

    def widget(self):
        """The interactive display: the report above the graph, the divergent node marked."""
        return displays.lookup("validation_widget")(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return displays.lookup("widget_bundle")(self.widget(), self._repr_html_())


def _as_list(value) -> list:
    if isinstance(value, (tuple, list)):
        return list(value)
    return [value]


def _fits(f) -> Optional[Callable[[dict], int]]:
    """Sizes -> bytes f's largest operator needs, raising ValueError when they do not fit
    (None for a function that is not a compiled program's)."""
    size_need = getattr(f, "size_need", None)
    if size_need is None:
        return None

    def fits(sizes: dict) -> int:
        return size_need(sizes, {})

    return fits


def _copies(args: Sequence[np.ndarray]) -> list[np.ndarray]:
    # Each side gets its own copies: a reference that writes into its inputs must not change
    # what the other side sees.
    return [np.array(a, copy=True) for a in args]


def _binding_checks(fn, args, rtol, atol, notes: list[str]) -> list[BindingCheck]:
    try:
        tvm_values = fn.trace(*_copies(args))
        np_values = fn.reference_trace(*_copies(args))
    except (AttributeError, NotImplementedError) as err:
        notes.append(f"per-binding check unavailable: {err}")
        return []
    infos = {}
    for info in getattr(fn, "bindings", {}).values():
        infos.setdefault(info.name, info)
    checks = []
    for name, value in tvm_values.items():
        if name not in np_values:
            continue
        info = infos.get(name)
        parts = list(zip(_as_list(value), _as_list(np_values[name])))
        comps = [compare(a, e, rtol, atol) for a, e in parts]
        worst = max(comps, key=lambda c: (not c.ok, c.max_abs_err)) if comps else compare(0, 0)
        checks.append(BindingCheck(
            name=name,
            dsl_name=getattr(info, "dsl_name", None),
            line=getattr(getattr(info, "span", None), "lineno", None),
            source_line=getattr(info, "source_line", "") or "",
            comparison=worst,
            module=getattr(info, "module", None)))
    return checks


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

    Without ``args``, inputs are drawn at random from ``f``'s signature (``seed`` makes them
    reproducible; the report records the seed it used); a parameter passed straight to an
    operator defined on part of the line only (``log(x)``, ``batch_norm``'s variance) is drawn
    inside that domain (:func:`input_ranges`). ``reference`` is a numpy function
    taking the same arguments; by default it is the program's own numpy evaluation,
    ``f.reference``. ``rtol``/``atol`` default per dtype (see :func:`default_tolerances`).
    """
    _check_options(f, reference, rtol, atol, seed)
    sizes: dict[str, int] = {}
    used_seed = None
    params = list(f.typed.params)
    if not args:
        used_seed = seed if seed is not None else int(np.random.SeedSequence().entropy % (2**32))
        args, sizes = random_inputs(params, used_seed, _fits(f), function_input_ranges(f))
    elif hasattr(f, "bind"):
        # What f(...) accepts -- lists, scalars -- converted once, with f's own checks.
        bound = f.bind(args, "validate")
        args, sizes = bound.arrays, dict(bound.sizes)
    args = list(args)

    actual = _as_list(f(*_copies(args)))
    ref = functools.partial(_call_reference, reference) if reference is not None else f.reference
    expected = _as_list(ref(*_copies(args)))
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

    compiled_args, reference_args = _copies(args), _copies(args)
    compiled_time = time_per_call(lambda: f(*compiled_args))
    reference_time = time_per_call(lambda: ref(*reference_args))

    names = [p.name for p in params] if len(params) == len(args) else [f"arg{i}" for i in range(len(args))]
    ref_name = getattr(f, "reference_name", None) if reference is None else \
        f"{getattr(reference, '__name__', 'reference')} (numpy)"
    return ValidationReport(function=f.name, inputs=list(zip(names, args)), outputs=outputs,
                            bindings=bindings, reference_name=ref_name,
                            compiled_time_s=compiled_time, reference_time_s=reference_time,
                            seed=used_seed, sizes=sizes, notes=notes, fn=f)

