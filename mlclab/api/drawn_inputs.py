"""Random inputs for a compiled function, as ``validate`` and ``profile`` draw them: shapes
from the signature (one random size per symbolic size, kept to sizes the program accepts and
to a memory budget), values inside the domain of the operators a parameter feeds."""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from ..lang import dims, typed
from ..ops.params import DOMAINS
from .errors import IndexOutOfBounds

_SYMBOL_SIZES = (2, 5)          # a symbolic size gets a random size in this closed range
# When a draw does not fit the program (a size smaller than a conv kernel), the range grows
# this many times, doubling its top each time (5, 10, ..., 640).
_SIZE_RETRIES = 8
# Random inputs are for checking, not load: sizes whose inputs, or whose largest operator,
# would need more memory than this are refused up front (allocating it could get the kernel
# killed by the OOM killer).
MAX_RANDOM_INPUT_BYTES = 256 * 2**20


class DomainWalker(typed.Visitor):
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
    walker = DomainWalker(function.params)
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
    is not positive for them, ``IndexOutOfBounds`` when an index is outside its axis) makes
    the draw keep to sizes the program accepts: a draw that does not fit is drawn again from a
    wider range. Floats are standard normal; integers are
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
        # A value's shape is not positive for these sizes, or an index (x[3]) is outside them.
        except (ValueError, IndexOutOfBounds) as exc:
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


def fits_of(f) -> Optional[Callable[[dict], int]]:
    """Sizes -> bytes f's largest operator needs, raising ValueError (IndexOutOfBounds for an
    index) when they do not fit (None for a function that is not a compiled program's)."""
    size_need = getattr(f, "size_need", None)
    if size_need is None:
        return None

    def fits(sizes: dict) -> int:
        return size_need(sizes, {})

    return fits
