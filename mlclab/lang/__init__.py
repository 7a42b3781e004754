"""What a tinynn program is: the annotations, DSLError, sizes, the typed program and its source
spans. The bottom layer: it imports nothing else of mlclab."""
from .annotations import Tensor, f16, f32, f64, i8, i16, i32, i64, u8
from .diagnostics import DSLError

__all__ = ["Tensor", "DSLError", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8"]
