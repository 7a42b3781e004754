"""The names a DSL program imports: ``Tensor`` and the dtype shorthands.

They exist so that a decorated function in a ``.py`` file is valid, importable Python.
mlclab itself never evaluates them: it reads the annotations from the source's AST.
"""
from __future__ import annotations


class DType(str):
    """A dtype name that prints as its shorthand (``f32``) and compares equal to ``"float32"``."""

    def __new__(cls, name: str, short: str):
        self = super().__new__(cls, name)
        self.short = short
        return self

    def __repr__(self) -> str:
        return self.short


f16 = DType("float16", "f16")
f32 = DType("float32", "f32")
f64 = DType("float64", "f64")
i8 = DType("int8", "i8")
i16 = DType("int16", "i16")
i32 = DType("int32", "i32")
i64 = DType("int64", "i64")
u8 = DType("uint8", "u8")

#: DSL spelling -> dtype name. ``bool`` is Python's own builtin.
DTYPE_NAMES = {d.short: str(d) for d in (f16, f32, f64, i8, i16, i32, i64, u8)}
DTYPE_NAMES["bool"] = "bool"
DTYPES = frozenset(DTYPE_NAMES.values())
SHORT_NAMES = {v: k for k, v in DTYPE_NAMES.items()}


class TensorSpec:
    """What ``Tensor[(2, 3), f32]`` evaluates to in Python (a plain, inert description)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = "bool" if dtype is bool else str(dtype)

    def __repr__(self) -> str:
        dims = ", ".join(repr(d) for d in self.shape)
        comma = "," if len(self.shape) == 1 else ""
        return f"Tensor[({dims}{comma}), {SHORT_NAMES.get(self.dtype, self.dtype)}]"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) \
            and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


class _TensorMeta(type):
    def __getitem__(cls, item):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError("write Tensor[(d0, d1, ...), dtype], e.g. Tensor[(2, 3), f32]")
        shape, dtype = item
        if not isinstance(shape, tuple):
            shape = (shape,)
        return TensorSpec(shape, dtype)


class Tensor(metaclass=_TensorMeta):
    """Annotation of a DSL parameter: ``Tensor[(2, 3), f32]``, ``Tensor[("n", 784), "float32"]``."""

    def __init__(self, *args, **kwargs):
        raise TypeError("Tensor is an annotation (Tensor[(2, 3), f32]), not a constructor")
