"""Every index that reaches a kernel in an imported model, checked with PyTorch's rule.

TVM's indexing kernels (take, gather, scatter, index_put, one_hot) read and write wherever an
index points: a bad one returns garbage or kills the process. PyTorch raises ``IndexError``.
So each index operand of those operators is, by what can be known about it:

- an **input reaching it unchanged** (``self.embed(ids)``): checked in Python before every
  call (:class:`IndexCheck`, run as the function's value check), naming the argument;
- a **constant**: checked once, here;
- **computed** (``self.embed(ids + 1)``, ``out[idx] = x`` inside the model): checked in the
  graph, by a Relax ``assert_op`` placed before the operator, whose failure the api layer
  turns into :class:`IndexOutOfRange` naming the ATen operator and the module.

Where PyTorch wraps negative indices (``x[idx]``, ``out[idx] = v``, ``index_fill``, ``take``)
the graph wraps them first, as PyTorch does; elsewhere (``embedding``, ``gather``,
``scatter``, ``index_select``, ``index_copy``, ``index_add``, ``one_hot``) a negative index is
refused, as PyTorch refuses it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..tvm_setup import tvm

# How a failing in-graph check announces itself: the api layer makes the AssertionError TVM
# raises at run time into an IndexOutOfRange with the rest of the message.
INDEX_ERROR = "mlclab.IndexError: "
# ATen operators (as the model's code called them) that wrap negative indices.
WRAPS_NEGATIVE = {"aten.index", "aten.index_put", "aten.index_put_", "aten.index_fill",
                  "aten.index_fill_", "aten.take", "aten._unsafe_index", "aten._unsafe_index_put"}
# Relax operators that carry their input's values through unchanged.
_VALUE_PRESERVING = {"relax.astype", "relax.reshape", "relax.permute_dims", "relax.expand_dims",
                     "relax.squeeze", "relax.flatten"}


class IndexOutOfRange(IndexError, ValueError):
    """An index outside its dimension, as PyTorch refuses it (also a ``ValueError``: a bad
    argument, as mlclab's other argument errors are)."""


@dataclass(frozen=True)
class IndexCheck:
    """An integer input that reaches an operator's indices unchanged."""

    param: int          # which input
    low: int            # indices must lie in [low, size): low is -size where PyTorch wraps
    size: int
    operator: str       # the ATen operator as the model called it ("aten.embedding")
    where: str          # "in e (e: Embedding(4, 3))"
    # Computed from the input (checked in the graph, not here): only validate's random draw
    # reads it, keeping the input in the lower half so that small offsets stay inside.
    computed: bool = False

    def refuse(self, values: np.ndarray, name: str, caller: str) -> None:
        """``IndexOutOfRange`` if ``values`` hold an index outside [low, size)."""
        if not values.size:
            return
        low, high = values.min(), values.max()
        if low < self.low or high >= self.size:
            bad = low if low < self.low else high
            raise IndexOutOfRange(
                f"{caller}(): argument {name} holds index {bad}, outside {self.low}.."
                f"{self.size - 1} for {self.operator} {self.where} (PyTorch refuses it "
                f"too)")


def _index_operands(call) -> list:
    """(argument position, field or None, axis) for each index operand of ``call``;
    ``axis`` None means the data is read flattened."""
    from tvm import relax

    op = call.op.name
    if op in ("relax.take", "relax.gather_elements", "relax.scatter_elements"):
        axis = call.attrs.axis
        return [(1, None, None if axis is None else int(axis))]
    if op in ("relax.index_put", "relax.index_tensor") and isinstance(call.args[1], relax.Tuple):
        return [(1, i, i) for i in range(len(call.args[1].fields))]
    if op == "relax.one_hot":
        return [(0, None, "depth")]
    return []


def _dim(call, axis):
    """The size an index into ``axis`` of ``call``'s data must stay below (an int, or a
    TIR expression for a symbolic size)."""
    if axis == "depth":
        return int(call.attrs.depth)
    shape = call.args[0].ty.shape.values
    if axis is None:
        size = 1
        for d in shape:
            size = size * d
        dims = [size]
    else:
        dims = [shape[axis % len(shape)]]
    value = getattr(dims[0], "value", None)
    return int(value) if value is not None else dims[0]


class _Guard:
    """Rebuilds one function's bindings with the checks, as one flat list (dataflow blocks
    are recovered afterwards by ``ConvertToDataflow``)."""

    def __init__(self, func, params):
        self.func = func
        self.out: list = []          # (binding, the old var it replaces or the info it shares)
        self.checks: list = []       # IndexCheck
        self.asserts = 0
        self.origin = {p: i for i, p in enumerate(params) if _is_int(p.ty)}
        self.depends = {p: {i} for p, i in self.origin.items()}   # var -> int inputs it reads
        self.count = 0

    def emit(self, expr, name: str, info=None):
        from tvm import relax

        expr = relax.BlockBuilder().normalize(expr)
        self.count += 1
        var = relax.Var(f"{name}{self.count}", expr.ty if expr.ty is not None
                        else relax.TupleType([]))
        self.out.append((relax.VarBinding(var, expr), info))
        return var

    def guard(self, index, size, low: int, info, operator: str, where: str, what: str):
        """``index`` wrapped where PyTorch wraps and checked; the expression to use instead."""
        from tvm import relax

        if isinstance(index, tvm().ir.GenericConst):
            values = index.value.numpy()
            if values.size and isinstance(size, int) \
                    and (values.min() < low or values.max() >= size):
                from .torch_export import UnsupportedModel

                raise UnsupportedModel(f"{operator} {where} indexes with the constant "
                                       f"{values.tolist()!r}, outside {low}..{size - 1}")
            if isinstance(size, int):
                return self.wrapped(index, size, low, info) if values.size and values.min() < 0 \
                    else index
        if index in self.origin and isinstance(size, int):
            self.checks.append(IndexCheck(self.origin[index], low, size, operator, where))
            return self.wrapped(index, size, low, info)
        for param in self._reads(index) if isinstance(size, int) else ():
            self.checks.append(IndexCheck(param, low, size, operator, where, computed=True))
        dtype = str(index.ty.dtype)
        emit = functools.partial(self.emit, info=info)
        if isinstance(size, int):
            bound = relax.const(size, dtype)
        else:
            shape = emit(relax.op.shape_to_tensor(emit(relax.op.shape_of(self._data), "shape")),
                         "shape")
            axis = self._axis
            bound = emit(relax.op.prod(shape) if axis is None else
                         relax.op.take(shape, relax.const(axis, "int64")), "index_size")
            bound = emit(relax.op.astype(bound, dtype), "index_size")
        index = self.wrapped(index, bound, low, info)
        flat = emit(relax.op.reshape(index, [-1]), "index_flat")
        flat = emit(relax.op.concat([flat, relax.const(np.zeros(1, dtype), dtype)]), "index_all")
        below = emit(relax.op.less(flat, relax.const(0, dtype)), "index_below")
        above = emit(relax.op.greater_equal(flat, bound), "index_above")
        bad = emit(relax.op.logical_or(below, above), "index_bad")
        bad = emit(relax.op.max(emit(relax.op.astype(bad, "int8"), "index_bad")), "index_bad")
        ok = emit(relax.op.equal(bad, relax.const(0, "int8")), "index_ok")
        high = size - 1 if isinstance(size, int) else f"{size} - 1"
        message = (f"{INDEX_ERROR}{operator} {where}: an index of {what} is outside "
                   f"{low if isinstance(size, int) else '-' + str(size) if low else 0}..{high} "
                   f"(PyTorch refuses it too)")
        emit(relax.op.assert_op(ok, [tvm().ir.StringImm(message)], format="{}"), "index_check")
        self.asserts += 1
        return index

    def _reads(self, expr) -> set:
        from tvm import relax

        if isinstance(expr, relax.Tuple):
            return set().union(*(self._reads(f) for f in expr.fields))
        return self.depends.get(expr, set())

    def wrapped(self, index, size, low, info):
        from tvm import relax

        if not low:
            return index
        dtype = str(index.ty.dtype)
        bound = relax.const(size, dtype) if isinstance(size, int) else size
        negative = self.emit(relax.op.less(index, relax.const(0, dtype)), "index_negative", info)
        shifted = self.emit(relax.op.add(index, bound), "index_shifted", info)
        return self.emit(relax.op.where(negative, shifted, index), "index_wrapped", info)

    def binding(self, b, old, info, operator: str, where: str):
        from tvm import relax

        value = b.value
        if not isinstance(value, relax.Call) or not isinstance(value.op, tvm().ir.Op):
            self.out.append((b, old))
            return
        op = value.op.name
        self.depends[b.var] = set().union(*(self._reads(a) for a in value.args))
        if op in _VALUE_PRESERVING and value.args[0] in self.origin:
            self.origin[b.var] = self.origin[value.args[0]]
        if op == "relax.assert_op":       # the model's own (torch's one_hot asks for two)
            message = tvm().ir.StringImm(f"{INDEX_ERROR}{operator} {where}: ")
            value = relax.op.assert_op(value.args[0], [message, *value.args[2:]],
                                       format="{}" + value.args[1].value)
            self.asserts += 1
        operands = _index_operands(value)
        if operands:
            args = list(value.args)
            low_wraps = operator in WRAPS_NEGATIVE
            for position, field, axis in operands:
                self._data = value.args[0]
                self._axis = axis % len(self._data.ty.shape.values) if isinstance(axis, int) \
                    else axis
                index = args[position] if field is None else args[position].fields[field]
                size = _dim(value, axis)
                what = "the table" if axis is None else (
                    f"dimension {axis}" if axis != "depth" else "the classes")
                guarded = self.guard(index, size, -size if low_wraps and isinstance(size, int)
                                     else (-1 if low_wraps else 0), info, operator, where, what)
                if field is None:
                    args[position] = guarded
                else:
                    fields = list(args[position].fields)
                    fields[field] = guarded
                    args[position] = relax.Tuple(fields)
            if op == "relax.take":
                value = relax.op.take(args[0], args[1], value.attrs.axis, "clip")
            else:
                value = relax.Call(value.op, args, value.attrs, value.ty_args)
        if not value.same_as(b.value):
            b = relax.VarBinding(b.var, value)
        self.out.append((b, old))


def _is_int(ty) -> bool:
    from tvm import relax

    return isinstance(ty, relax.TensorType) and str(ty.dtype).startswith(("int", "uint"))


def guard_indices(mod, name: str, bindings: dict, operators: dict, where):
    """``mod`` with every index operand of function ``name`` checked; its bindings' infos
    carried over (the checks share their operator's), and the inputs checked in Python.

    ``operators``: binding var -> the ATen operator the model called; ``where(info)``: how a
    message names the module of a binding's ``BindingInfo``."""
    from tvm import relax

    from ..lang.typed import BindingInfo

    func = mod[name]
    old_vars = [b.var for block in func.body.blocks for b in block.bindings]
    plain = relax.transform.ToNonDataflow()(tvm().IRModule({name: func}))[name]
    new = [b for block in plain.body.blocks for b in block.bindings]
    guard = _Guard(plain, plain.params)
    for b, old in zip(new, old_vars):
        info = bindings.get(old)
        operator = operators.get(old) or (info.origin if info else None) or "an indexing operator"
        guard.binding(b, old, info, operator, where(info))
    if not guard.asserts and all(b.same_as(n) for (b, _), n in zip(guard.out, new)):
        return mod, bindings, guard.checks
    body = relax.SeqExpr([relax.BindingBlock([b for b, _ in guard.out])], plain.body.body)
    rebuilt = relax.Function(plain.params, body, plain.ret_ty,
                             plain.is_pure and not guard.asserts, plain.attrs)
    funcs = {gv: (rebuilt if gv.name_hint == name else f) for gv, f in mod.functions_items()}
    out = tvm().IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)
    out = relax.transform.Normalize()(relax.transform.ConvertToDataflow(min_size=1)(out))
    final = out[name]
    infos = {p: bindings[q] for p, q in zip(final.params, func.params) if q in bindings}
    final_vars = [b.var for block in final.body.blocks for b in block.bindings]
    for var, (_, came) in zip(final_vars, guard.out):
        if isinstance(came, BindingInfo):        # a check: it belongs to its operator
            infos[var] = BindingInfo(var.name, None, came.span, came.source_line, "binding",
                                     module=came.module, origin=came.origin)
        elif came is not None and came in bindings:
            infos[var] = bindings[came]
    return out, infos, guard.checks
