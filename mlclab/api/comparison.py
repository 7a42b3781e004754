"""Comparing a computed array with its expected value: numpy's ``isclose`` rule with
per-dtype default tolerances that grow with the value's depth in the program, and a summary
(largest errors, elements outside tolerance, the per-element error/tolerance ratio)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

# Default tolerances per dtype kind. float32 leaves room for a different summation order in
# reductions and matmul (TVM's schedules vs numpy's BLAS); integers and booleans must match.
_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
}


def default_tolerances(dtype) -> tuple[float, float]:
    """(rtol, atol) used for ``dtype`` when the caller gives none."""
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def depth_scale(depth: int) -> float:
    """How much the default tolerances grow for a value ``depth`` operations deep.

    Each float operation rounds, and TVM and numpy (or PyTorch) round differently (summation
    order, fused multiply-adds, a folded batch norm); independent rounding errors of ``depth``
    successive operations add like a random walk, so their sum grows as ``sqrt(depth)``. A
    fixed tolerance flagged ResNet-50's ``layer4.2.relu`` (8 of 25,088 elements off by 5.2e-4
    against 4.1e-4, 1.3x) while its output matched to 2.6e-5. A real bug is far larger.
    """
    return math.sqrt(max(int(depth), 1))


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


def compare(actual, expected, rtol: Optional[float] = None, atol: Optional[float] = None,
            depth: int = 1) -> Comparison:
    """Compare two arrays element-wise within ``rtol``/``atol`` (numpy's ``isclose`` rule).

    ``depth``: how many operations may have rounded the value on the way (an intermediate's
    place in the program): the default tolerances grow with its square root, as independent
    rounding errors add (see :func:`depth_scale`). Tolerances the caller gives are used as given.

    The relative error is taken over the elements whose expected value is non-zero, so a
    single exact zero does not turn the summary into infinity (an expected inf or NaN that is
    missed counts as infinitely off). ``tolerance_ratio`` is
    ``|actual - expected| / (atol + rtol * |expected|)`` per element: below 1 passes.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    d_rtol, d_atol = default_tolerances(e.dtype if e.dtype.kind == "f" else a.dtype)
    d_rtol, d_atol = d_rtol * depth_scale(depth), d_atol * depth_scale(depth)
    rtol = d_rtol if rtol is None else float(rtol)
    if atol is None:
        # A value near zero that ends a long reduction (a matmul's) carries rounding error on
        # the scale of the values it summed, not its own: by default the absolute tolerance
        # grows with the largest expected magnitude.
        largest = _largest_finite(e) if e.dtype.kind == "f" else None
        atol = max(d_atol, rtol * largest) if largest is not None else d_atol
    else:
        atol = float(atol)
    if a.shape != e.shape:
        return Comparison(tuple(a.shape), str(a.dtype), math.inf, math.inf, a.size, a.size,
                          rtol, atol,
                          note=f"shape {tuple(a.shape)} where {tuple(e.shape)} was expected")
    if a.dtype.kind not in "biuf" or e.dtype.kind not in "biuf":
        return Comparison(tuple(a.shape), str(a.dtype), math.inf, math.inf, a.size, a.size,
                          rtol, atol, note=f"cannot compare dtypes {a.dtype} and {e.dtype}")
    # In blocks: the float64 temporaries of one comparison (about ten of them) stay a few MB
    # instead of ten times a 2048x2048 array (lesson 01's validate peaked 380 MB over its inputs).
    flat_a, flat_e = a.reshape(-1), e.reshape(-1)
    ratio = np.empty(a.size, np.float64)
    max_err = max_rel = 0.0
    failing = 0
    for start in range(0, a.size, BLOCK):
        af = flat_a[start:start + BLOCK].astype(np.float64)
        ef = flat_e[start:start + BLOCK].astype(np.float64)
        err, rel, close, ratio[start:start + BLOCK] = _compare_block(af, ef, rtol, atol)
        max_err, max_rel = max(max_err, float(err.max())), max(max_rel, float(rel.max()))
        failing += int((~close).sum())
    return Comparison(tuple(a.shape), str(a.dtype), max_err, max_rel, failing, int(a.size),
                      rtol, atol, tolerance_ratio=ratio.reshape(a.shape))


#: elements compared at once (2 MB of each float64 temporary)
BLOCK = 1 << 18


def _largest_finite(e) -> float | None:
    """The largest finite magnitude in ``e``, or None if it has no finite element."""
    largest = None
    flat = e.reshape(-1)
    for start in range(0, flat.size, BLOCK):
        block = flat[start:start + BLOCK]
        finite = block[np.isfinite(block)]
        if finite.size:
            top = float(np.abs(finite).max())
            largest = top if largest is None else max(largest, top)
    return largest


def _compare_block(af, ef, rtol: float, atol: float):
    """numpy's ``isclose`` rule on one block: the error, the relative error, which elements are
    close, and the error over the tolerance (below 1 passes)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        same = (af == ef) | (np.isnan(af) & np.isnan(ef))
        err = np.where(same, 0.0, np.abs(af - ef))
        err = np.where(np.isnan(err), np.inf, err)          # NaN against a number
        close = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True) | same
        # Relative to finite, non-zero expectations; missing an infinite or NaN one is infinitely
        # off.
        scale = (ef != 0) & np.isfinite(ef)
        rel = np.where(scale, err / np.abs(np.where(scale, ef, 1.0)),
                       np.where(np.isfinite(ef), 0.0, np.inf))
        rel = np.where(same, 0.0, rel)
        ratio = err / (atol + rtol * np.abs(np.nan_to_num(ef)))
        ratio = np.where(same, 0.0, np.where(close, np.minimum(ratio, 1.0), np.maximum(ratio, 1.0)))
    return err, rel, close, ratio
