"""Parameter kinds: what an operator's argument may be, parsed and normalised in one place.

A ``Param`` pairs a name with a kind. Tensor kinds say how the front end resolves the argument
(a tensor expression, maybe a number literal, maybe ``None``, or a tuple of tensors). Attribute
kinds turn the literal the student wrote into the one normalised value that the type rule, the
Relax builder and the numpy reference all receive:

========  ===========================  =================================================
kind      accepts                      normalised to
========  ===========================  =================================================
int       ``3``                        ``3``
float     ``1e-5``, ``1``              ``1e-05`` (a float)
bool      ``True``                     ``True``
dtype     ``f32``, ``"float32"``       ``"float32"``
axis      ``-1``                       ``-1``, checked against the tensor's rank
axes      ``1``, ``(0, 2)``            ``(1,)``, ``(0, 2)``, checked against the rank
pair      ``2``, ``(2, 1)``            ``(2, 2)``, ``(2, 1)``
padding   ``1``, ``(1, 2)``, 4-tuple   ``(top, left, bottom, right)``
shape     ``(4, -1)``, ``("n", 3)``    a tuple of ints and symbolic sizes
number    ``1.5``, ``7``, ``True``     as written; the rule checks it fits the dtype
string    ``"ij,jk->ik"``              the string
counts    ``2``, ``(2, 1)``            ``(2,)``, ``(2, 1)``
pad_width ``1``, ``(1, 2)``, pairs     one ``(before, after)`` pair per axis (numpy's)
sections  ``3``, ``(2, 5)``            ``3`` (equal parts) or the split points
========  ===========================  =================================================

Axes keep the sign the student wrote (``axis=-1`` stays ``-1``) so the Relax text shows the
program as written; ``axis_index`` gives the non-negative position when a rule needs it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..lang.annotations import DTYPE_NAMES, DTYPES

REQUIRED = object()


class OpTypeError(Exception):
    """A rule's (or a kind's) objection.

    ``param`` names the argument to put the caret under; ``item`` an element of a tuple
    argument, when the fault is one element (``reshape(x, (2, "k"))``).
    """

    def __init__(self, message: str, param: Optional[str] = None, hint: Optional[str] = None,
                 item: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.hint = hint
        self.item = item


class Word(str):
    """A bare name the student wrote (``f32`` in ``astype(x, f32)``), as opposed to a string."""


class NotALiteral:
    """What the front end passes for an argument that is no literal at all (``axis=a + 1``)."""

    def __repr__(self) -> str:
        return "<not a literal>"


NOT_A_LITERAL = NotALiteral()


def axis_index(axis: int, ndim: int) -> int:
    """The non-negative position of a (validated) axis."""
    return axis % ndim if ndim else 0


def check_axis(axis: int, ndim: int, what: str, param: str) -> int:
    if not -ndim <= axis < ndim:
        raise OpTypeError(f"{what}: axis {axis} is out of range for a tensor of rank {ndim} "
                          f"(valid: {-ndim} .. {ndim - 1})", param=param)
    return axis


def _is_int(v) -> bool:
    return type(v) is int


# --------------------------------------------------------------------------- domains
# Where an operator argument is defined, as the (low, high) range random inputs for it are
# drawn from: inside the domain and away from its edge, where a float32 result (log near 0)
# would be too steep to compare.
DOMAINS = {
    "positive": (0.1, 3.0),
    "> -1": (-0.9, 2.0),
}


# --------------------------------------------------------------------------- kinds
class Kind:
    """How one parameter's argument is read. Subclasses set ``name`` (the docs' word for it)."""

    name = "?"
    accepts = "?"            # what the student may write, for the docs
    tensor = False           # resolved by the front end as tensor expressions

    def parse(self, value, op: str, param: str, symbols=frozenset()):
        """The normalised value of the literal ``value`` (not None) passed for ``param`` of
        operator ``op``, or an OpTypeError."""
        return value

    def check(self, value, args: dict, op: str, param: str):
        """Normalisation that needs the tensors' types (an axis against a rank); ``args`` maps
        the other parameters to their types and normalised values. Default: nothing to do."""
        return value

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, repr=False)
class Tensor(Kind):
    """A tensor expression; ``scalar_ok``: a number literal may stand for it (``x * 2.0``)
    and takes the tensor operands' dtype; ``optional``: ``None`` is accepted."""

    scalar_ok: bool = False
    optional: bool = False
    # a literal 0.0 here is refused: TVM's constant folder aborts on float division by zero
    nonzero_literal: bool = False
    # where the operator is defined for this argument (a key of DOMAINS), or None for
    # everywhere: validate() draws a parameter passed here straight from that range
    domain: Optional[str] = None
    tensor = True

    def __post_init__(self):
        if self.domain is not None and self.domain not in DOMAINS:
            raise ValueError(f"unknown domain {self.domain!r} (known: {', '.join(DOMAINS)})")

    @property
    def name(self) -> str:
        return "tensor?" if self.optional else "tensor"

    @property
    def accepts(self) -> str:
        return "a tensor" + (" or None" if self.optional else "") \
            + (" or a number (which takes the tensors' dtype)" if self.scalar_ok else "")


@dataclass(frozen=True, repr=False)
class Tensors(Kind):
    """A tuple of tensor expressions (``concat((a, b))``)."""

    name = "tensors"
    accepts = "a tuple of tensors, (a, b, ...)"
    tensor = True


@dataclass(frozen=True, repr=False)
class Int(Kind):
    name = "int"
    accepts = "an int literal"

    def parse(self, value, op, param, symbols=frozenset()):
        if not _is_int(value):
            raise OpTypeError(f"{op}'s {param} must be an int literal", param=param)
        return value


@dataclass(frozen=True, repr=False)
class Float(Kind):
    name = "float"
    accepts = "a number literal"

    def parse(self, value, op, param, symbols=frozenset()):
        if type(value) not in (int, float):
            raise OpTypeError(f"{op}'s {param} must be a number literal", param=param)
        return float(value)


@dataclass(frozen=True, repr=False)
class Bool(Kind):
    name = "bool"
    accepts = "True or False"

    def parse(self, value, op, param, symbols=frozenset()):
        if type(value) is not bool:
            raise OpTypeError(f"{op}'s {param} must be True or False", param=param)
        return value


@dataclass(frozen=True, repr=False)
class DType(Kind):
    name = "dtype"
    accepts = "a dtype: f16, f32, f64, i8, i16, i32, i64, u8, bool (or \"float32\"...)"

    def parse(self, value, op, param, symbols=frozenset()):
        if isinstance(value, Word) and value in DTYPE_NAMES:
            return DTYPE_NAMES[value]
        if isinstance(value, str) and value in DTYPES:
            return str(value)
        raise OpTypeError("unknown dtype", param=param,
                          hint="use one of " + ", ".join(DTYPE_NAMES)
                               + " or a name such as \"float32\"")


def _int_tuple(value, op: str, param: str) -> tuple:
    """An int or a tuple of ints, as a tuple."""
    if _is_int(value):
        return (value,)
    if not isinstance(value, tuple):
        raise OpTypeError(f"{op}'s {param} must be an int literal or a tuple of them", param=param)
    for i, v in enumerate(value):
        if not _is_int(v):
            raise OpTypeError(f"{op}'s {param} must hold int literals", param=param, item=i)
    return value


@dataclass(frozen=True, repr=False)
class Axis(Kind):
    """One axis of tensor parameter ``of`` (the first tensor of a tuple parameter)."""

    of: str = "x"
    name = "axis"
    accepts = "an int; a negative axis counts from the end"

    def parse(self, value, op, param, symbols=frozenset()):
        return Int().parse(value, op, param)

    def check(self, value, args, op, param):
        if value is None:
            return None
        t = args[self.of]
        t = t[0] if isinstance(t, list) and t else t
        if t is None or isinstance(t, list):
            return value             # no tensor to measure: the rule says what is missing
        if t.ndim == 0:
            raise OpTypeError(f"{op} needs a tensor of rank 1 or more", param=self.of)
        return check_axis(value, t.ndim, op, param)


@dataclass(frozen=True, repr=False)
class Axes(Kind):
    """One or more axes of tensor parameter ``of``, normalised to a tuple.

    ``inserted``: the axes are positions in the result, which has one more axis per entry
    (``expand_dims``). ``distinct``: naming an axis twice is an error here (a permutation
    checks its own completeness instead).
    """

    of: str = "x"
    inserted: bool = False
    distinct: bool = True
    name = "axes"
    accepts = "an int or a tuple of ints; negative axes count from the end"

    def parse(self, value, op, param, symbols=frozenset()):
        return _int_tuple(value, op, param)

    def check(self, value, args, op, param):
        if value is None:
            return None
        ndim = args[self.of].ndim + (len(value) if self.inserted else 0)
        for a in value:
            check_axis(a, ndim, op, param)
        written = value[0] if len(value) == 1 else value
        if self.distinct and len({axis_index(a, ndim) for a in value}) != len(value):
            raise OpTypeError(f"{op}: {param} {written} names the same axis twice", param=param)
        return value


@dataclass(frozen=True, repr=False)
class Pair(Kind):
    """A positive int or a pair of them: one value per spatial axis (height, width).
    ``default_to``: when the argument is None, use that parameter's value (pooling strides)."""

    default_to: Optional[str] = None
    name = "pair"
    accepts = "a positive int, or one per spatial axis: (height, width)"

    def parse(self, value, op, param, symbols=frozenset()):
        pair = (value, value) if _is_int(value) else value
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(_is_int(p) and p >= 1
                                                                   for p in pair)):
            raise OpTypeError(f"{op}: {param} must be a positive int or a "
                              f"pair of them, got {value!r}", param=param)
        return pair

    def check(self, value, args, op, param):
        return args[self.default_to] if value is None and self.default_to else value


@dataclass(frozen=True, repr=False)
class Padding(Kind):
    """(top, left, bottom, right) from an int, (h, w) or a 4-tuple of non-negative ints."""

    name = "padding"
    accepts = "an int, (h, w) or (top, left, bottom, right)"

    def parse(self, value, op, param, symbols=frozenset()):
        pad = (value,) * 4 if _is_int(value) else value
        if isinstance(pad, tuple) and len(pad) == 2:
            pad = (pad[0], pad[1], pad[0], pad[1])
        if not (isinstance(pad, tuple) and len(pad) == 4 and all(_is_int(p) and p >= 0
                                                                 for p in pad)):
            raise OpTypeError(f"{op}: padding must be an int, (h, w) or "
                              f"(top, left, bottom, right) of non-negative ints, got {value!r}",
                              param=param)
        return pad


@dataclass(frozen=True, repr=False)
class Shape(Kind):
    """A tuple of sizes: ints (one may be -1) and the function's symbolic sizes."""

    name = "shape"
    accepts = "a tuple of sizes: ints (one may be -1) and the parameters' symbolic sizes (\"n\")"

    def parse(self, value, op, param, symbols=frozenset()):
        items = value if isinstance(value, tuple) else (value,)
        if not isinstance(value, tuple) and not (_is_int(value) or type(value) is str):
            raise OpTypeError(f"{op}'s {param} must be an int literal or a tuple of them",
                              param=param)
        for i, d in enumerate(items):
            if type(d) is str:
                if d not in symbols:
                    raise OpTypeError(f"{d!r} is not a symbolic size of this function",
                                      param=param, item=i if isinstance(value, tuple) else None,
                                      hint="symbolic sizes come from the parameters' shapes")
            elif not _is_int(d):
                raise OpTypeError(f"{op}'s {param} must hold int literals", param=param,
                                  item=i if isinstance(value, tuple) else None)
        return tuple(items)


# --------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    default: object = REQUIRED

    @property
    def is_tensor(self) -> bool:
        return self.kind.tensor

    @property
    def is_tensor_tuple(self) -> bool:
        return isinstance(self.kind, Tensors)

    @property
    def optional(self) -> bool:
        return getattr(self.kind, "optional", False)

    @property
    def scalar_ok(self) -> bool:
        return getattr(self.kind, "scalar_ok", False)

    @property
    def nonzero_literal(self) -> bool:
        return getattr(self.kind, "nonzero_literal", False)

    @property
    def domain(self) -> Optional[str]:
        return getattr(self.kind, "domain", None)

    def parse(self, value, op: str, symbols=frozenset()):
        """The normalised value of the literal ``value`` passed for this parameter of ``op``."""
        if value is None:
            if self.default is None:
                return None
            raise OpTypeError(f"{op}'s {self.name} cannot be None", param=self.name)
        if isinstance(value, list):
            value = tuple(value)
        return self.kind.parse(value, op, self.name, symbols)


def tensor(name: str, scalar_ok: bool = False, nonzero_literal: bool = False,
           domain: Optional[str] = None) -> Param:
    return Param(name, Tensor(scalar_ok=scalar_ok, nonzero_literal=nonzero_literal, domain=domain))


def optional_tensor(name: str) -> Param:
    return Param(name, Tensor(optional=True), None)


@dataclass(frozen=True, repr=False)
class Number(Kind):
    """A number literal kept as written (an int stays an int): the rule checks it against
    the dtype it fills (``full(..., 1.5, i32)`` is refused, not truncated)."""

    name = "number"
    accepts = "a number literal (True/False for bool tensors)"

    def parse(self, value, op, param, symbols=frozenset()):
        if type(value) not in (int, float, bool):
            raise OpTypeError(f"{op}'s {param} must be a number literal", param=param)
        return value


@dataclass(frozen=True, repr=False)
class Text(Kind):
    """A string literal (``einsum``'s subscripts)."""

    name = "string"
    accepts = "a string literal, \"ij,jk->ik\""

    def parse(self, value, op, param, symbols=frozenset()):
        if type(value) is not str or isinstance(value, Word):
            raise OpTypeError(f"{op}'s {param} must be a string literal in quotes", param=param)
        return str(value)


@dataclass(frozen=True, repr=False)
class Counts(Kind):
    """How many times: an int or a tuple of ints (``tile``'s reps), kept as written; the
    rule checks they are non-negative."""

    name = "counts"
    accepts = "a non-negative int, or a tuple of them"

    def parse(self, value, op, param, symbols=frozenset()):
        return _int_tuple(value, op, param)


@dataclass(frozen=True, repr=False)
class PadWidth(Kind):
    """numpy's ``pad_width`` forms, normalised to one (before, after) pair per axis of ``of``:
    ``n`` (everywhere), ``(before, after)`` (every axis), or one pair per axis."""

    of: str = "x"
    name = "pad_width"
    accepts = "n, (before, after) for every axis, or ((before, after), ...) one per axis"

    def parse(self, value, op, param, symbols=frozenset()):
        items = value if isinstance(value, tuple) else (value,)
        for i, item in enumerate(items):
            pair = item if isinstance(item, tuple) else (item,)
            if not (1 <= len(pair) <= 2 and all(_is_int(p) and p >= 0 for p in pair)):
                raise OpTypeError(f"{op}: {param} holds non-negative ints or (before, after) "
                                  f"pairs, got {item!r}", param=param,
                                  item=i if isinstance(value, tuple) else None)
        return value

    def check(self, value, args, op, param):
        import numpy as np

        ndim = args[self.of].ndim
        try:          # numpy's own reading: broadcast to one (before, after) row per axis
            rows = np.broadcast_to(np.asarray(value, dtype=np.int64), (ndim, 2))
        except ValueError:
            raise OpTypeError(f"{op}: {param} {value!r} does not fit a tensor of rank {ndim}",
                              param=param, hint="n, (before, after), or one (before, after) "
                                                "pair per axis") from None
        return tuple((int(b), int(e)) for b, e in rows)


@dataclass(frozen=True, repr=False)
class Sections(Kind):
    """``split``'s: a number of equal parts, or a tuple of split points (numpy's forms)."""

    name = "sections"
    accepts = "a positive int (equal parts) or a tuple of split points"

    def parse(self, value, op, param, symbols=frozenset()):
        return value if _is_int(value) else _int_tuple(value, op, param)
