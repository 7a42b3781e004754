"""One operator entry (``Op``), the typed input its functions receive (``Args``), and the
example every entry carries (``Example``)."""
from __future__ import annotations

import importlib
import keyword
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ..lang.annotations import SHORT_NAMES
from ..lang.typed import TensorType, TupleType
from .params import REQUIRED, OpTypeError, Param, Tensor


@dataclass(frozen=True)
class Args:
    """What an entry's ``rule``, ``relax`` and ``numpy`` functions receive.

    ``a.x`` (or ``a["x"]``) is parameter ``x``'s value: for a tensor parameter its
    ``TensorType`` (rule), Relax expression (relax) or numpy array (numpy); ``None`` for an
    omitted optional tensor; a list for a tuple of tensors. Attributes arrive normalised by
    their parameter's kind (``strides`` is always a pair, ``axes`` a tuple or None...).
    ``op`` is the operator's name; ``written`` holds how the student wrote each argument, for
    messages. ``out`` is the result's type and ``out_shape`` its shape in the stage's terms
    (TIR expressions in the builder, ints in the reference); both are None in the rule, which
    computes them.
    """

    values: Mapping[str, object]
    op: str = ""                      # the operator's name, for messages
    written: Mapping[str, str] = field(default_factory=dict)
    out: Optional[TensorType] = None
    out_shape: Optional[tuple] = None

    def __getattr__(self, name: str):
        # Only called for names that are not fields; copy/pickle probe before ``values`` exists.
        values = self.__dict__.get("values")
        if values is None or name.startswith("_") or name not in values:
            raise AttributeError(f"no parameter {name!r}"
                                 + (f" (have: {', '.join(values)})" if values else ""))
        return values[name]

    def __getitem__(self, name: str):
        return self.values[name]

    def source(self, name: str) -> str:
        """How the student wrote the argument of parameter ``name`` (its name if omitted)."""
        return self.written.get(name, name)


@dataclass(frozen=True, eq=False)
class Example:
    """A call of the entry on small random inputs, e.g.
    ``Example("conv2d(x, w, padding=1)", x=((1, 2, 5, 5), "f32"), w=((3, 2, 3, 3), "f32"))``.

    The tests compile every entry's example and compare it with the numpy reference; the docs
    show it. ``low``/``high`` bound the random floats (``log`` wants positive inputs).
    """

    call: str
    inputs: Mapping[str, tuple]
    low: float = -2.0
    high: float = 2.0

    def __init__(self, call: str, low: float = -2.0, high: float = 2.0, **inputs):
        object.__setattr__(self, "call", call)
        object.__setattr__(self, "inputs",
                           {n: (tuple(s), _long(d)) for n, (s, d) in inputs.items()})
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def source(self) -> str:
        params = []
        for name, (shape, dtype) in self.inputs.items():
            dims = ", ".join(repr(d) for d in shape) + ("," if len(shape) == 1 else "")
            params.append(f"{name}: Tensor[({dims}), {SHORT_NAMES.get(dtype, repr(dtype))}]")
        return f"def example({', '.join(params)}):\n    return {self.call}\n"


def _long(dtype: str) -> str:
    from ..lang.annotations import DTYPE_NAMES

    return DTYPE_NAMES.get(dtype, dtype)


_ARGS_FIELDS = {"values", "op", "written", "out", "out_shape", "source"}


#: mlclab's own entries by name (``mark_built_in``, called by ``ops`` at import).
_BUILT_IN: dict = {}


def mark_built_in(op: "Op") -> None:
    """``op`` is mlclab's: a failure inside it is mlclab's bug, and it pickles by name."""
    _BUILT_IN[op.name] = op


def built_in_entry(name: str) -> "Op":
    """mlclab's own entry ``name`` (a pickled entry is read back through this)."""
    if name not in _BUILT_IN:
        importlib.import_module("mlclab.ops")      # its import marks the built-in entries
    return _BUILT_IN[name]


class EntryError(ValueError):
    """An entry registered after import (``ops.register``: a student's own operator) whose
    ``rule``, ``relax`` or ``numpy`` function raised or returned what the table cannot use.
    That is its author's code, not mlclab's: the message names the entry, the function and
    where it was defined. (A built-in entry failing so is an mlclab bug and raises as it is.)"""

    def __init__(self, op: "Op", part: str, problem: str):
        code = getattr(getattr(op, part, None), "__code__", None)
        where = f" (defined at {code.co_filename}, line {code.co_firstlineno})" if code else ""
        self.message = f"operator {op.name!r}: its {part} function{where} {problem}"
        self.hint = f"fix the entry's {part} and register it again"
        super().__init__(self.message)


def _raised(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"raised {type(exc).__name__}" + (f": {first}" if first else "")


@dataclass(frozen=True, kw_only=True, eq=False)
class Op:
    """One operator, declared once.

    ``rule(a)`` returns the result's ``TensorType`` (or raises ``OpTypeError``), ``relax(a)``
    the Relax expression, ``numpy(a)`` the reference result; each gets an ``Args``.
    ``symbol`` is the Python spelling (``"+"``; for a one-tensor entry, the unary ``"-"``);
    ``folds``: two number literals joined by the symbol are computed at parse time, as Python
    computes them (``2 * 3``, ``2 ** -1`` is 0.5).
    """

    name: str
    params: tuple
    rule: Callable[[Args], TensorType]
    relax: Callable[[Args], object]
    numpy: Callable[[Args], object]
    doc: str
    category: str
    example: Example
    symbol: Optional[str] = None
    folds: bool = False

    def __post_init__(self):
        # Checked here, where the entry is made: a student's entry that is wrong is said now,
        # naming the field, not later as a failure inside the compiler.
        if not isinstance(self.name, str) or not self.name.isidentifier() \
                or keyword.iskeyword(self.name):
            raise ValueError(f"Op: name must be a Python identifier (the DSL calls it as "
                             f"name(x)), got {self.name!r}")
        if not isinstance(self.params, (list, tuple)) \
                or not all(isinstance(p, Param) for p in self.params):
            raise TypeError(f"{self.name}: params must be a list of Param objects "
                            f"(ops.tensor(\"x\"), ops.Param(...)), got {self.params!r}")
        object.__setattr__(self, "params", tuple(self.params))
        clash = {p.name for p in self.params} & _ARGS_FIELDS
        if clash:
            raise ValueError(f"{self.name}: parameter name {clash.pop()!r} is taken by Args")
        for part in ("rule", "relax", "numpy"):
            if not callable(getattr(self, part)):
                raise TypeError(f"{self.name}: {part} must be a function of an Args, got "
                                f"{type(getattr(self, part)).__name__}")
        for part in ("doc", "category"):
            if not isinstance(getattr(self, part), str):
                raise TypeError(f"{self.name}: {part} must be a str, got "
                                f"{type(getattr(self, part)).__name__}")
        if not isinstance(self.example, Example):
            raise TypeError(f"{self.name}: example must be an ops.Example (the call the tests "
                            f"and docs run), got {type(self.example).__name__}")
        if self.symbol is not None and not isinstance(self.symbol, str):
            raise TypeError(f"{self.name}: symbol must be a str such as \"+\" or None")

    # ------------------------------------------------------------------ reading
    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(p.name if p.default is REQUIRED else f"{p.name}={p.default!r}")
        return f"{self.name}({', '.join(parts)})"

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    @property
    def tensor_params(self) -> list:
        return [p for p in self.params if p.is_tensor]

    @property
    def arity(self) -> int:
        """How many tensors the operator takes (1 for ``-x``, 2 for ``x1 + x2``)."""
        return sum(1 for p in self.params if isinstance(p.kind, Tensor))

    # ------------------------------------------------------------------ using
    def check(self, values: Mapping, written: Optional[Mapping] = None,
              symbols=frozenset()) -> tuple:
        """Type-check one call: ``values`` maps each parameter to its ``TensorType`` (a list
        for a tuple of tensors, None when an optional one is omitted) or its attribute's
        literal (defaults filled in). Normalises the attributes through their kinds, runs the
        rule, and returns ``(result type, normalised attributes)``."""
        values = dict(values)
        attrs = {}
        for p in self.params:
            if p.is_tensor:
                continue
            value = values.get(p.name, p.default)
            if value is REQUIRED:
                raise OpTypeError(f"{self.name} is missing its argument {p.name!r}")
            value = p.parse(value, self.name, symbols)
            values[p.name] = attrs[p.name] = p.kind.check(value, values, self.name, p.name)
        out = self._own("rule", Args(values, self.name, {} if written is None else written))
        if not isinstance(out, (TensorType, TupleType)) and not self.built_in:
            raise EntryError(self, "rule", f"returned {type(out).__name__}, not the result's "
                                           f"TensorType (e.g. ops.same_as_input())")
        return out, attrs

    def infer(self, values: Mapping, written: Optional[Mapping] = None) -> TensorType:
        """The result type of a call (``check`` without the attributes)."""
        return self.check(values, written)[0]

    def build(self, args: Args):
        """The Relax expression of a call, from ``Args`` of Relax expressions."""
        from tvm import relax

        expr = self._own("relax", args)
        if not isinstance(expr, relax.Expr) and not self.built_in:
            raise EntryError(self, "relax", f"returned {type(expr).__name__}, not a Relax "
                                            f"expression (e.g. R.tanh(a.x))")
        return expr

    def compute(self, args: Args):
        """The numpy result of a call (the reference), from ``Args`` of arrays."""
        return self._own("numpy", args)

    @property
    def built_in(self) -> bool:
        """Whether mlclab's own table holds this entry (``ops`` marks them at import)."""
        return _BUILT_IN.get(self.name) is self

    def __copy__(self):
        return self          # an entry is immutable: a copy of a program shares it

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # A built-in entry is read back as the one of its name where it is unpickled (its
        # functions are closures); a registered entry's functions are its author's code.
        if not self.built_in:
            raise TypeError(f"operator {self.name!r} was registered by your code: its "
                            f"functions cannot be pickled; pickle the program's source and "
                            f"register the entry again where it is read")
        return built_in_entry, (self.name,)

    def _own(self, part: str, args: Args):
        """``rule``/``relax``/``numpy`` called; a registered entry's failure is its own."""
        try:
            return getattr(self, part)(args)
        except OpTypeError:
            raise
        except Exception as exc:
            if self.built_in:
                raise
            raise EntryError(self, part, _raised(exc)) from exc


def arguments(call, value: Callable, group: Callable = list, out_shape=None) -> Args:
    """The ``Args`` an entry's ``relax`` or ``numpy`` receives for a typed ``Call``.

    ``value`` turns one typed argument into what that stage computes with (a Relax var, a
    numpy array); ``group`` packs a tuple-of-tensors argument (``concat``'s); ``out_shape``
    is the result's shape in that stage's terms.
    """
    values = dict(call.attrs)
    for p, arg in zip(call.op.tensor_params, call.args):
        if arg is None:
            values[p.name] = None
        elif isinstance(arg, list):
            values[p.name] = group([value(a) for a in arg])
        else:
            values[p.name] = value(arg)
    return Args(values, call.op.name, out=call.type, out_shape=out_shape)


__all__ = ["Args", "EntryError", "Example", "Op", "arguments"]
