"""What the views need to know about Relax IR: which function to show, and how to name things.

Everything that reads Relax for display goes through here, so the graph views, the Relay-style
texts and the pipeline agree on the same names, types and node identities:

- ``Subject`` resolves what a caller passes (an mlclab ``CompiledFunction``, a bare
  ``relax.Function`` or an ``IRModule``) into a module, a function name and the DSL bindings.
- ``value_ids`` gives every value of a function a stable id (``"main:lv1"``) used by every view.
- ``format_type``, ``op_name``, ``call_attrs`` and ``literal`` turn IR objects into short text.
- ``describe`` reduces a bound value to what every view and the value tracking read: a kind,
  a headline and its arguments.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..lang.source import Span, line_at
from ..lang.typed import BindingInfo
from ..tvm_setup import HoldsIR
from .relax_attrs import call_attrs, format_tvm_dim, format_value  # noqa: F401 (public here)


@dataclass
class Subject(HoldsIR):
    """One function to show, with the module it lives in and what the DSL knows about it."""

    pickle_instead = "save its text (mlclab.inspect.text.text) instead"

    def _held_name(self) -> str:
        return f"the Subject of {self.name!r}"

    mod: Any                                    # tvm.IRModule
    name: str                                   # the function's name in ``mod``
    # relax.Var -> BindingInfo for every DSL function of the program (empty for plain IR);
    # Vars are unique to one function, so one dict serves the function and its callees.
    bindings: dict = field(default_factory=dict)
    source: Optional[str] = None
    target: Any = "llvm"
    # Other functions to draw after ``name`` and what it calls: set when a whole module (or a
    # whole mlclab program) is shown rather than one function of it.
    also: list = field(default_factory=list)
    # The build record of ``mod`` (mlclab.backend.record.BuildRecord) when mlclab compiled
    # it: the views that show later stages read it; None for IR nobody built.
    record: Any = None
    _param_vars: Optional[set] = field(default=None, init=False, repr=False)

    @property
    def function(self):
        return self.mod[self.name]

    def source_of(self, var, value=None) -> Optional[BindingInfo]:
        """The DSL origin of a binding var: mlclab's BindingInfo first, else a TVM span (plain
        IR parsed from TVMScript carries them), its line looked up in ``source``."""
        info = self.bindings.get(var) if self.bindings else None
        if info is not None:
            return info
        for obj in (var, value):
            span = getattr(obj, "span", None) if obj is not None else None
            if span is not None and getattr(span, "line", 0):
                kind = "param" if var in self._params() else "binding"
                return BindingInfo(var.name, None, Span.from_tvm(span),
                                   line_at(self.source or "", int(span.line)), kind)
        return None

    def _params(self) -> set:
        if self._param_vars is None:
            self._param_vars = {p for n in relax_function_names(self.mod)
                                for p in self.mod[n].params}
        return self._param_vars


def resolve(obj, function: Optional[str] = None) -> Subject:
    """Accept what a student or a lesson has and pick the function to show.

    - an mlclab ``CompiledFunction``: that function (and what it calls), with its DSL lines;
    - an mlclab ``Program`` or an ``IRModule``: ``main`` (else the first function) and then
      every other function of it; ``main`` is where imported models (PyTorch) put their entry;
    - a ``relax.Function``: that function alone.
    ``function`` picks another function of the module or program.
    """
    import tvm
    from tvm import relax

    if function is not None and not isinstance(function, str):
        raise TypeError(f"function must be a function's name (a str), got {function!r}")
    if isinstance(obj, Subject):
        if function is None:
            return obj
        return Subject(obj.mod, function, obj.bindings, obj.source, obj.target,
                       record=obj.record)
    if hasattr(obj, "relax_function") and hasattr(obj, "mod"):   # mlclab CompiledFunction
        name = _pick(obj.mod, function or obj.name)
        return Subject(obj.mod, name, _program_bindings(obj),
                       getattr(obj, "source", None), getattr(obj, "target", "llvm"),
                       record=getattr(obj, "build_record", None))
    if isinstance(obj, relax.Function):
        symbol = obj.attrs.get("global_symbol") if obj.attrs is not None else None
        name = function or (str(symbol) if symbol else "main")
        return Subject(tvm.IRModule({name: obj}), name)
    if isinstance(obj, tvm.IRModule) or isinstance(getattr(obj, "mod", None), tvm.IRModule):
        mod = obj if isinstance(obj, tvm.IRModule) else obj.mod          # mlclab Program
        # A program lists its functions in source order; a module in its own order.
        order = [n for n in relax_function_names(mod) if not is_primitive(mod[n])]
        bindings, source, target = {}, None, "llvm"
        if mod is not obj:
            order = sorted(order, key=lambda n: (n != "main", list(obj).index(n)
                                                 if n in obj else len(order)))
            for fn in obj.values():
                bindings.update(getattr(fn, "bindings", None) or {})
            source, target = getattr(obj, "source", None), getattr(obj, "target", "llvm")
        name = _pick(mod, function if function is not None else (order or [None])[0])
        also = [] if function is not None else [n for n in order if n != name]
        record = getattr(obj, "build_record", None) if mod is not obj else None
        return Subject(mod, name, bindings, source, target, also=also, record=record)
    raise TypeError(f"expected an mlclab compiled function or program, a relax.Function or an "
                    f"IRModule, got {type(obj).__name__}")


def _pick(mod, function: Optional[str]) -> str:
    names = relax_function_names(mod)
    if not names:
        raise ValueError("the IRModule holds no Relax function to show")
    if function is None:
        return "main" if "main" in names else names[0]
    if function not in names:
        raise ValueError(f"function: no Relax function {function!r} in the module; it has "
                         f"{', '.join(names)}")
    return function


def _program_bindings(fn) -> dict:
    """Bindings of every function of ``fn``'s program, so views that follow calls keep lines."""
    merged = dict(getattr(fn, "bindings", None) or {})
    program = getattr(fn, "program", None)
    if program is not None:
        for other in program.values():
            merged.update(getattr(other, "bindings", None) or {})
    return merged


def relax_function_names(mod) -> list[str]:
    """Relax functions of a module, ``main`` first, then in the module's order."""
    from tvm import relax

    names = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, relax.Function)]
    return sorted(names, key=lambda n: (n != "main",))


def all_bindings(func) -> list:
    """Every binding of ``func`` in order, those of an ``if``'s branches right after it."""
    from tvm import relax

    out = []

    def walk(seq):
        if not isinstance(seq, relax.SeqExpr):
            return
        for block in seq.blocks:
            for b in block.bindings:
                out.append(b)
                if isinstance(b.value, relax.If):
                    walk(b.value.true_branch)
                    walk(b.value.false_branch)

    walk(func.body)
    return out


# --------------------------------------------------------------------------- identities
def value_ids(func, fname: str) -> dict:
    """A stable id for every parameter and binding var of ``func``, keyed by the Var.

    Ids are ``"<function>:<name>"``. Relax allows two vars with the same name (a binding may
    even reuse a parameter's name, and lowering emits many ``_``), so repeats get ``#2``, ``#3``
    in definition order: the id is a function of the IR alone, and every view computes the same.
    """
    from tvm import relax

    ids: dict = {}
    seen: dict[str, int] = {}

    def add(var):
        if var in ids:
            return
        base = f"{fname}:{var.name}"
        seen[base] = seen.get(base, 0) + 1
        ids[var] = base if seen[base] == 1 else f"{base}#{seen[base]}"

    def walk_seq(seq):
        for block in seq.blocks:
            for binding in block.bindings:
                add(binding.var)
                walk_value(binding.value)

    def walk_value(value):
        if isinstance(value, relax.If):
            for branch in (value.true_branch, value.false_branch):
                if isinstance(branch, relax.SeqExpr):
                    walk_seq(branch)
        elif isinstance(value, relax.Function):      # a closure: its own params and bindings
            for p in value.params:
                add(p)
            if isinstance(value.body, relax.SeqExpr):
                walk_seq(value.body)

    for p in func.params:
        add(p)
    if isinstance(func.body, relax.SeqExpr):
        walk_seq(func.body)
    return ids


# --------------------------------------------------------------------------- short texts
def format_type(ty) -> str:
    """A Relax type in Relay's spelling: ``Tensor[(n, 10), float32]``, ``(T1, T2)`` for tuples."""
    from tvm import relax

    if ty is None:
        return ""
    if isinstance(ty, relax.TensorType):
        dtype = str(ty.dtype) or "?"
        if ty.shape is None or not isinstance(ty.shape, relax.ShapeExpr):
            rank = "" if ty.ndim < 0 else f", ndim={ty.ndim}"
            return f"Tensor[?, {dtype}{rank}]"
        dims = ", ".join(format_tvm_dim(d) for d in ty.shape.values)
        return f"Tensor[({dims}), {dtype}]"
    if isinstance(ty, relax.TupleType):
        return "(" + ", ".join(format_type(f) for f in ty.fields) + ")"
    if isinstance(ty, relax.ShapeType):
        return "Shape" if ty.ndim < 0 else f"Shape[ndim={ty.ndim}]"
    if isinstance(ty, relax.FuncType):
        return "fn"
    name = type(ty).__name__
    return {"AnyType": "Object", "ObjectType": "Object"}.get(name, name.replace("Type", "") or "?")


def op_name(call) -> str:
    """What a call calls, in Relay's words: ``nn.conv2d``, ``add``, a function or PrimFunc name."""
    import tvm
    from tvm import relax

    op = call.op
    if isinstance(op, tvm.ir.Op):
        name = op.name
        return name[len("relax."):] if name.startswith("relax.") else name
    if isinstance(op, relax.GlobalVar):
        return op.name_hint
    if isinstance(op, relax.ExternFunc):
        return str(op.global_symbol)
    if isinstance(op, relax.Var):
        return "%" + op.name
    return type(op).__name__


def call_tir_callee(call) -> Optional[str]:
    """For ``call_tir``-like calls, the PrimFunc it runs; else None."""
    import tvm
    from tvm import relax

    if isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("relax.call_tir") \
            and call.args and isinstance(call.args[0], relax.GlobalVar):
        return call.args[0].name_hint
    return None


def is_tensor_const(expr) -> bool:
    """A tensor constant (``relax.const``): drawn as a node. Other literals are inline text."""
    import tvm

    return isinstance(expr, tvm.ir.expr.GenericConst) and isinstance(expr.value, tvm.runtime.Tensor)


_RELAY_SUFFIX = {"float32": "f", "float64": "f64", "float16": "f16", "int32": "",
                 "int64": "i64", "int8": "i8", "int16": "i16", "uint8": "u8", "bool": ""}


def const_value_id(const) -> str:
    """A tensor constant's value id: the constant object itself, not where a walk meets it
    (a pass that fuses or moves operators changes the order; the object is passed on), so
    every view and every step of the pipeline calls one constant the same."""
    return f"const@{hash(const):x}"


def const_text(const) -> Optional[str]:
    """A scalar constant the way Relay printed it (``2f``, ``3i64``); None for larger tensors."""
    arr = const.value
    if len(arr.shape) != 0:
        return None
    value = arr.numpy().item()
    dtype = str(arr.dtype)
    if dtype == "bool":
        return str(bool(value))
    if isinstance(value, float):
        text = repr(value)
        if text.endswith(".0"):
            text = text[:-2]
    else:
        text = str(value)
    return text + _RELAY_SUFFIX.get(dtype, dtype)


def literal(expr) -> Optional[str]:
    """Non-tensor leaf arguments (shapes, dtypes, strings, ints) as inline text; None otherwise."""
    import tvm
    from tvm import relax

    if isinstance(expr, relax.ShapeExpr):
        return "(" + ", ".join(format_tvm_dim(v) for v in expr.values) + ")"
    if isinstance(expr, tvm.ir.expr.StringImm):
        return repr(str(expr.value))
    if isinstance(expr, tvm.ir.expr.GenericConst) \
            and not isinstance(expr.value, tvm.runtime.Tensor):
        return str(expr.value)
    if isinstance(expr, tvm.ir.expr.Constant) and hasattr(expr, "value"):
        return format_value(expr.value)
    if isinstance(expr, relax.GlobalVar):
        return "@" + expr.name_hint
    if isinstance(expr, relax.ExternFunc):
        return f'"{expr.global_symbol}"'
    return None


def is_primitive(func) -> bool:
    """A function FuseOps made for one fused group (``Primitive`` attribute)."""
    attrs = getattr(func, "attrs", None)
    if attrs is None:
        return False
    try:
        value = attrs.get("Primitive")
    except Exception:
        return False
    return bool(value) if value is not None else False


# --------------------------------------------------------------------------- bound values
@dataclass
class Described:
    """A binding value reduced to what every view shows: a kind, a headline and its arguments."""

    kind: str
    op: str
    attrs: dict
    args: list = field(default_factory=list)   # each: ("expr", relax expr) or ("lit", text)


def describe(value, mod=None) -> Described:
    """Classify one bound value. Non-tensor leaves (shapes, dtypes, strings) become literals."""
    from tvm import relax, tirx

    if isinstance(value, relax.Call):
        callee = call_tir_callee(value)
        if callee is not None:
            args = value.args[1]
            fields = list(args.fields) if isinstance(args, relax.Tuple) else [args]
            attrs = {"via": op_name(value)}
            attrs.update(call_attrs(value))
            extra = [arg(a) for a in value.args[2:]]
            kind = "fused" if callee.startswith("fused_") else "op"
            return Described(kind, callee, attrs, [arg(f) for f in fields] + extra)
        kind = "op"
        if isinstance(value.op, relax.GlobalVar):
            target = lookup(mod, value.op)
            if isinstance(target, relax.Function):
                kind = "fused" if is_primitive(target) else "call"
            elif isinstance(target, tirx.PrimFunc) and value.op.name_hint.startswith("fused_"):
                kind = "fused"
        return Described(kind, op_name(value), call_attrs(value), [arg(a) for a in value.args])
    if isinstance(value, relax.Tuple):
        return Described("tuple", "Tuple", {}, [arg(f) for f in value.fields])
    if isinstance(value, relax.TupleGetItem):
        return Described("getitem", "TupleGetItem", {"index": str(value.index)},
                         [arg(value.tuple_value)])
    if isinstance(value, relax.If):
        return Described("if", "if", {}, [arg(value.cond)])
    if isinstance(value, relax.Function):
        return Described("closure", "fn", {}, [])
    if isinstance(value, relax.Var):
        return Described("alias", "=", {}, [arg(value)])
    if is_tensor_const(value):
        return Described("const", const_text(value) or "const", {}, [])
    text = literal(value)
    return Described("const", text if text is not None else type(value).__name__, {}, [])


def arg(expr):
    """An argument as a view shows it: ``("expr", relax expr)`` or ``("lit", text)``."""
    import tvm
    from tvm import relax

    if isinstance(expr, relax.Tuple) and expr.fields \
            and all(isinstance(getattr(f, "ty", None), tvm.ir.PrimType) for f in expr.fields):
        # strided_slice's axes/begin/end/strides: inline "(0, 1)", not a leaf node per int
        inner = ", ".join(format_tvm_dim(f) for f in expr.fields)
        return ("lit", f"({inner},)" if len(expr.fields) == 1 else f"({inner})")
    if isinstance(expr, relax.Var) or is_tensor_const(expr) or isinstance(expr, relax.Tuple):
        return ("expr", expr)
    text = literal(expr)
    return ("lit", text if text is not None else type(expr).__name__)


def lookup(mod, gv):
    """The function ``gv`` names in ``mod``, or None."""
    if mod is None:
        return None
    try:
        return mod[gv]
    except Exception:    # a GlobalVar from another module: nothing to look up
        return None
