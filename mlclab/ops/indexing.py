"""Basic slicing with static bounds: ``x[1:, ::-2]`` is ``strided_slice(x, (1, None), (None,
None), (1, -2))``.

The front end turns a subscript into this entry (plus ``squeeze`` for the axes an integer index
removes), so every walker of the typed program (the Relax builder, the numpy reference, the
size check, the views) handles slicing as one more call of the table. The bounds follow
numpy: negative ones count from the end, out-of-range ones are clipped, ``None`` is the whole
axis in the step's direction. ``begin``/``end``/``strides`` cover the leading axes.

On a symbolic size (``n``) the step must be positive and the result's size is written from the
bounds (``x[1:]`` on ``n`` rows has ``n - 1``, ``x[0:2]`` has 2), assuming the size covers
them: each call checks that it does (``api.shapes``) before anything runs, so the Relax slice
takes in-range bounds and TVM infers exactly the size the type says (a size it had to clip,
``min(2, n)``, could not broadcast against anything, and the build failed).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..lang import dims as D
from ..lang.typed import TensorType
from .entry import Args, Example, Op
from .params import Kind, OpTypeError, Param, tensor
from .rules import R


@dataclass(frozen=True, repr=False)
class Bounds(Kind):
    """A tuple with one int or None per leading axis (a slice's starts or stops)."""

    name = "bounds"
    accepts = "a tuple of ints or None, one per leading axis"

    def parse(self, value, op, param, symbols=frozenset()):
        items = value if isinstance(value, tuple) else (value,)
        for i, v in enumerate(items):
            if v is not None and type(v) is not int:
                raise OpTypeError(f"{op}'s {param} must hold int literals or None", param=param,
                                  item=i if isinstance(value, tuple) else None)
        return tuple(items)

    def check(self, value, args, op, param):
        ndim = args["x"].ndim
        if len(value) > ndim:
            raise OpTypeError(f"{op}: {len(value)} {param} values for a tensor of rank {ndim}",
                              param=param)
        return value


@dataclass(frozen=True, repr=False)
class Strides(Bounds):
    """A tuple of non-zero ints (None: step 1 on every sliced axis)."""

    name = "strides"
    accepts = "a tuple of non-zero ints, one per leading axis"

    def parse(self, value, op, param, symbols=frozenset()):
        items = super().parse(value, op, param)
        for i, v in enumerate(items):
            if not v:
                raise OpTypeError("a slice step cannot be zero" if v == 0 else
                                  f"{op}'s {param} must hold non-zero ints", param=param,
                                  item=i if isinstance(value, tuple) else None)
        return items


def axis_slices(a: Args) -> list:
    """One (begin, end, step) per sliced axis, as the student wrote them (None: omitted)."""
    begin, end = a.begin, a.end
    if len(begin) != len(end):
        raise OpTypeError(f"{a.op}: {len(begin)} begin values but {len(end)} end values",
                          param="end")
    strides = a.strides if a.strides is not None else (1,) * len(begin)
    if len(strides) != len(begin):
        raise OpTypeError(f"{a.op}: {len(begin)} begin values but {len(strides)} strides",
                          param="strides")
    return list(zip(begin, end, strides))


def static_range(size: int, b, e, s) -> range:
    """The indices numpy's ``[b:e:s]`` takes from an axis of ``size``."""
    return range(*slice(b, e, s).indices(size))


#: A larger step on a symbolic axis takes at most one element from any axis that fits in
#: memory; TVM's size arithmetic (``end - begin + step - 1``) would overflow int64 with it.
SYMBOLIC_STEP_CAP = 2 ** 32


def symbolic_size(size: str, b, e, s, axis: int):
    """The length of ``[b:e:s]`` on an axis of symbolic ``size``, or an OpTypeError when it
    cannot be written from ``size``. A bound counts from the start (``2``) or from the end
    (``-2``, or an omitted stop): two bounds from the same end give a static length."""
    where = f"axis {axis} has the symbolic size {size}"
    if s < 0:
        raise OpTypeError(f"a negative step needs a static size, but {where}", param="strides",
                          item=axis, hint="reverse an axis of static size, or slice forward")
    begin = (False, 0) if b is None else (b < 0, abs(b))
    stop = (True, 0) if e is None else (e < 0, abs(e))
    if begin[0] == stop[0]:
        length = (stop[1] - begin[1]) * (1 if not begin[0] else -1)
        return max(0, -(-length // s))
    if begin[0]:
        raise OpTypeError(f"the slice {_text(b, e, s)} counts its start from the end and its "
                          f"stop from the start, so its size depends on {size}; {where}",
                          param="begin", item=axis, hint="write both from the same end, "
                          "e.g. [-3:] or [2:5]")
    length = D.sub(size, stop[1] + begin[1])
    s = min(s, SYMBOLIC_STEP_CAP)
    return length if s == 1 else D.floordiv(D.add(length, s - 1), s)


def _text(b, e, s) -> str:
    text = f"{'' if b is None else b}:{'' if e is None else e}"
    return text + ("" if s == 1 else f":{s}")


def _rule(a: Args) -> TensorType:
    x = a.x
    shape = list(x.shape)
    for axis, (b, e, s) in enumerate(axis_slices(a)):
        size = x.shape[axis]
        if isinstance(size, int):
            shape[axis] = len(static_range(size, b, e, s))
        else:
            shape[axis] = symbolic_size(size, b, e, s, axis)
    return TensorType(tuple(shape), x.dtype)


def _relax(a: Args):
    """Bounds normalised in range, so ``assume_inbound`` is safe and the type TVM infers is the
    rule's: static axes here, symbolic ones by the call-time check that the size covers them.
    A negative step that runs past index 0 needs TVM's own end normalisation (end -size-1),
    which only ``assume_inbound=False`` applies: those axes go to a second strided_slice."""
    shape = a.x.ty.shape.values
    forward, backward = ([], [], [], []), ([], [], [], [])
    for axis, (b, e, s) in enumerate(axis_slices(a)):
        size = shape[axis]
        if hasattr(size, "value"):
            r = static_range(int(size.value), b, e, s)
            if len(r) == int(size.value) and s == 1:
                continue                # the whole axis: nothing to show or to do
            if len(r) <= 1:             # also a step past the end: x[::2**63-1] is x[0:1]
                parts, bounds = forward, (r.start, r.start + len(r), 1)
            elif s > 0:
                parts, bounds = forward, (r.start, r.stop, s)
            else:
                parts, bounds = backward, (r.start, r.stop if r.stop >= 0 else -int(size) - 1, s)
        else:
            if (b, e, s) == (None, None, 1):
                continue
            parts, bounds = forward, _symbolic_bounds(a.out_shape[axis], size, b, e, s)
        for part, value in zip(parts, (axis, *bounds)):
            part.append(value)
    out = a.x
    if not (forward[0] or backward[0]):
        return R().strided_slice(out, axes=[0], begin=[0], end=[shape[0]], strides=[1],
                                 assume_inbound=True)   # x[:]: still one binding
    for (axes, begin, end, steps), inbound in ((forward, True), (backward, False)):
        if axes:
            out = R().strided_slice(out, axes=axes, begin=begin, end=end, strides=steps,
                                    assume_inbound=inbound)
    return out


def _symbolic_bounds(length, size, b, e, s) -> tuple:
    """(begin, end, step) in range on an axis of symbolic ``size`` that covers the slice,
    negative bounds counted from the end as TIR expressions; an empty slice is (0, 0, 1)."""
    if hasattr(length, "value") and int(length.value) == 0:
        return 0, 0, 1
    begin = 0 if b is None else b if b >= 0 else size + b
    end = size if e is None else e if e >= 0 else size + e
    return begin, end, min(s, SYMBOLIC_STEP_CAP)


def _numpy(a: Args):
    return a.x[tuple(slice(b, e, s) for b, e, s in axis_slices(a))]


ENTRIES = [
    Op(name="strided_slice",
       params=[tensor("x"), Param("begin", Bounds()), Param("end", Bounds()),
               Param("strides", Strides(), None)],
       rule=_rule, relax=_relax, numpy=_numpy,
       doc="numpy's x[b0:e0:s0, b1:e1:s1, ...] with static bounds; written x[...], where an "
           "int index also drops its axis", category="shape",
       example=Example("strided_slice(x, (1, None), (None, 0), (1, -2)) + x[1:, :0:-2]",
                       x=((3, 5), "f32"))),
]

__all__ = ["ENTRIES", "Bounds", "Strides", "axis_slices", "static_range", "symbolic_size",
           "SYMBOLIC_STEP_CAP"]
