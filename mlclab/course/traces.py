"""A TensorIR schedule's trace as JSON text and back: how a graded schedule leaves the sandbox
(mlclab.course.export) and is replayed by the checker, and how the reference's trace is compared."""
from __future__ import annotations

import json


def trace_json(trace) -> str:
    """A schedule's trace as JSON text (its IntImm/FloatImm attributes as tagged numbers)."""
    from tvm.ir.prim.expr import FloatImm, IntImm

    def plain(x):
        if isinstance(x, IntImm):
            return {"int": int(x.value), "dtype": str(x.ty)}
        if isinstance(x, FloatImm):
            return {"float": float(x.value), "dtype": str(x.ty)}
        if isinstance(x, (bool, int, float)) or x is None:
            return x
        if isinstance(x, str):
            return str(x)
        return [plain(v) for v in x]

    return json.dumps(plain(trace.as_json()))


def trace_from_json(text: str):
    """The structure ``Trace.apply_json_to_schedule`` replays, from :func:`trace_json`'s text."""
    from tvm.ir.prim.expr import FloatImm, IntImm

    def back(x):
        if isinstance(x, list):
            return [back(v) for v in x]
        if isinstance(x, dict) and set(x) == {"int", "dtype"}:
            return IntImm(str(x["dtype"]), int(x["int"]))
        if isinstance(x, dict) and set(x) == {"float", "dtype"}:
            return FloatImm(str(x["dtype"]), float(x["float"]))
        if isinstance(x, (bool, int, float, str)) or x is None:
            return x
        raise ValueError(f"not a schedule trace: {type(x).__name__}")

    return back(json.loads(text))
