"""The tinynn DSL: annotations, diagnostics, the typed program and the parser."""
from .annotations import Tensor, f16, f32, f64, i8, i16, i32, i64, u8
from .diagnostics import DSLError

__all__ = ["Tensor", "DSLError", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8"]
