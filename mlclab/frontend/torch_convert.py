"""Translating an exported ATen graph to Relax: TVM's importer, with mlclab's own converter
table merged over TVM's (and a student's ``convert_map`` over both), every translation wrapped
to record which Relax value each ATen node produced and to name the node when it fails.

mlclab's converters fix what TVM 0.27 translates wrongly:

- ``selu`` (which export decomposes to ``elu``): TVM's ``elu`` drops ``scale`` (1.0507...)
  and ``input_scale``.
- ``grid_sampler_2d``: Relax's kernel reads the grid as (N, 2, H, W); PyTorch's is (N, H, W, 2).
- ``squeeze`` with no dimension, on a symbolic batch: TVM squeezes every dimension it cannot
  prove is not 1, the batch included; PyTorch squeezes the dimensions that are 1, and
  ``torch.export`` has proved a dynamic batch is not (it is at least 2).
- ``add`` of two bool tensors (PyTorch: logical or; TVM's kernel refuses to compile it).
- ``cat`` with a 1-d empty tensor beside higher-rank ones (PyTorch skips it; GPT-2's cache).
- ``index_put`` with fewer index tensors than dimensions, or ``None`` among them (what
  ``cache[:, :, pos] = k`` and ``cache.index_copy_(2, pos, k)`` become): TVM's kernel wants one
  index tensor per dimension and a value for each indexed element.
- ``select`` with a negative index (``logits[:, -1, :]``): TVM takes the index as it is.

How to add one: a function ``(importer, node) -> relax.Expr`` and its entry in ``CONVERTERS``,
keyed by the ATen overload's name as ``node.target.__name__`` spells it (``"selu.default"``).
"""
from __future__ import annotations

import numpy as np

from .borrowed import Loans
from .module_tree import ModuleListing, operator_name
from .torch_export import UnsupportedModel, first_line
from ..tvm_setup import tvm

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu(importer, node, alpha=None, scale=None, input_scale=None):
    """PyTorch's ``elu(x, alpha, scale, input_scale)``: ``scale * x`` above 0, else
    ``scale * alpha * (exp(input_scale * x) - 1)``. (``selu`` decomposes to it.)"""
    from tvm import relax

    x = importer.env[node.args[0]]
    args = list(node.args) + [None] * 3
    alpha = alpha if alpha is not None else args[1] if args[1] is not None else \
        node.kwargs.get("alpha", 1.0)
    scale = scale if scale is not None else args[2] if args[2] is not None else \
        node.kwargs.get("scale", 1.0)
    input_scale = input_scale if input_scale is not None else args[3] if args[3] is not None \
        else node.kwargs.get("input_scale", 1.0)
    dtype = x.ty.dtype
    emit = importer.block_builder.emit
    exp = emit(relax.op.exp(relax.op.multiply(x, relax.const(input_scale, dtype))))
    negative = emit(relax.op.multiply(relax.const(alpha * scale, dtype),
                                      relax.op.subtract(exp, relax.const(1, dtype))))
    positive = emit(relax.op.multiply(x, relax.const(scale, dtype)))
    return emit(relax.op.where(relax.op.greater(x, relax.const(0, dtype)), positive, negative))


def _selu(importer, node):
    return _elu(importer, node, _SELU_ALPHA, _SELU_SCALE, 1.0)


def _grid_sampler_2d(importer, node):
    from tvm import relax

    args = importer.retrieve_args(node)
    data, grid = args[0], args[1]
    interpolation = {0: "bilinear", 1: "nearest", 2: "bicubic"}.get(_arg(args, 2, 0), "bilinear")
    padding = {0: "zeros", 1: "border", 2: "reflection"}.get(_arg(args, 3, 0), "zeros")
    # PyTorch's grid is (N, H_out, W_out, 2); the Relax kernel reads (N, 2, H_out, W_out).
    grid = importer.block_builder.emit(relax.op.permute_dims(grid, [0, 3, 1, 2]))
    return importer.block_builder.emit(relax.op.image.grid_sample(
        data, grid, method=interpolation, layout="NCHW", padding_mode=padding,
        align_corners=bool(_arg(args, 4, False))))


def _squeeze(importer, node):
    from tvm import relax

    x = importer.env[node.args[0]]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", node.kwargs.get("dims"))
    shape = x.ty.shape.values
    rank = len(shape)
    wanted = range(rank) if dims is None else [dims] if isinstance(dims, int) else dims
    # Only the dimensions known to be 1: a symbolic size is not (export proved it >= 2).
    axes = sorted({d % rank for d in wanted
                   if rank and getattr(shape[d % rank], "value", None) == 1})
    if not axes:
        return x
    return importer.block_builder.emit(relax.op.squeeze(x, axes))


def _add(tvm_add):
    promoted = _promoting(tvm_add)

    def add(importer, node):
        from tvm import relax

        args = importer.retrieve_args(node)
        if len(args) == 2 and all(isinstance(a, relax.Expr) and _is_bool(a) for a in args):
            return importer.block_builder.emit(relax.op.logical_or(args[0], args[1]))
        return promoted(importer, node)
    return add


def _promoting(tvm_op):
    """``tvm_op`` with integer tensor operands first cast to the floating dtype PyTorch's
    result has: TVM gives ``int_tensor + 0.5`` the tensor's dtype and truncates the scalar to
    0 (torchvision's roi_align decomposition does that), where PyTorch promotes to float."""
    def convert(importer, node):
        from torch import fx
        from tvm import relax

        want = _result_dtype(node)
        cast = {}
        if want is not None and want.startswith(("float", "bfloat")):
            for arg in node.args:
                value = importer.env.get(arg) if isinstance(arg, fx.Node) else None
                dtype = str(getattr(getattr(value, "ty", None), "dtype", ""))
                if value is not None and dtype and not dtype.startswith(("float", "bfloat")):
                    cast[arg] = value
                    importer.env[arg] = importer.block_builder.emit(relax.op.astype(value, want))
        try:
            return tvm_op(node)
        finally:
            importer.env.update(cast)
    return convert


def _result_dtype(node):
    import torch

    value = node.meta.get("val")
    return str(value.dtype).replace("torch.", "") if isinstance(value, torch.Tensor) else None


def _cat(tvm_cat):
    def cat(importer, node):
        from tvm import relax

        tensors = [importer.env[t] for t in node.args[0]]
        # PyTorch's cat skips 1-d empty tensors beside higher-rank ones (the legacy way to
        # start an empty cache: a DynamicCache's first keys); Relax's concat refuses them.
        kept = [t for t in tensors if not _legacy_empty(t) or
                all(_legacy_empty(o) for o in tensors)]
        if len(kept) == len(tensors):
            return tvm_cat(node)
        if len(kept) == 1:
            return kept[0]
        axis = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
        return importer.block_builder.emit(relax.op.concat(kept, axis=axis))
    return cat


def _legacy_empty(expr) -> bool:
    shape = getattr(expr.ty, "shape", None)
    values = getattr(shape, "values", None)
    return values is not None and len(values) == 1 and getattr(values[0], "value", None) == 0


def _index_put(importer, node):
    """``data[indices] = values`` (or ``+=`` with ``accumulate``) in PyTorch's terms: an
    index tensor or ``None`` (the whole dimension) per leading dimension, the rest whole.
    Relax's ``index_put`` wants one index tensor per dimension, all broadcasting to the
    shape of the indexed elements, and exactly one value per element, so the whole
    dimensions become ``arange`` constants placed where PyTorch puts them in that shape."""
    from tvm import relax

    args = importer.retrieve_args(node)
    data, indices, values = args[0], list(args[1]), args[2]
    accumulate = bool(_arg(args, 3, node.kwargs.get("accumulate", False)))
    shape = data.ty.shape.values
    rank = len(shape)
    indices += [None] * (rank - len(indices))
    given = [d for d, index in enumerate(indices) if index is not None]
    if len(given) == rank and all(i.ty.ndim == 1 for i in indices):
        return importer.block_builder.emit(
            relax.op.index_put(data, relax.Tuple(indices), values, accumulate))
    sizes = [getattr(d, "value", None) for d in shape]
    if len(given) == 1 and not accumulate:
        written = _write_along(importer, data, indices[given[0]], values, given[0], sizes)
        if written is not None:
            return written
    if any(sizes[d] is None for d in range(rank) if indices[d] is None):
        raise ValueError("index_put over a whole dimension of symbolic size is not supported; "
                         "index every dimension of a symbolic size with a tensor")
    emit = importer.block_builder.emit
    broadcast = _broadcast_shape([_static_shape(indices[d]) for d in given])
    whole = [d for d in range(rank) if indices[d] is None]
    # PyTorch: adjacent index tensors put their shape where they stand, others put it first.
    adjacent = given == list(range(given[0], given[-1] + 1))
    first = given[0] if adjacent else 0
    before = [d for d in whole if d < first] if adjacent else []
    after = [d for d in whole if d not in before]
    out_rank = len(before) + len(broadcast) + len(after)
    placed = {d: i for i, d in enumerate(before)}
    placed.update({d: len(before) + len(broadcast) + i for i, d in enumerate(after)})
    full = []
    for d in range(rank):
        if indices[d] is None:
            at = [1] * out_rank
            at[placed[d]] = sizes[d]
            full.append(relax.const(np.arange(sizes[d], dtype="int64").reshape(at), "int64"))
        else:
            index = indices[d]
            lead = len(before) + len(broadcast) - index.ty.ndim
            full.append(emit(relax.op.reshape(
                index, [1] * lead + list(index.ty.shape.values) + [1] * len(after))))
    result = [sizes[d] for d in before] + broadcast + [sizes[d] for d in after]
    values = emit(relax.op.broadcast_to(values, result))
    return emit(relax.op.index_put(data, relax.Tuple(full), values, accumulate))


def _write_along(importer, data, index, values, axis: int, sizes: list):
    """``data`` with the slices at ``index`` (1-d) along ``axis`` replaced by ``values``, as
    elementwise operators (a static cache's update: ``cache.index_copy_(2, pos, k)``): slot
    ``l`` keeps ``data`` unless some position names it, and then takes the last such row of
    ``values``. Relax's ``index_put`` is an external kernel copying ``data`` one scalar at a
    time; this fuses into one vectorised pass. The index reaches the graph through a
    ``take`` from ``arange``, an identity the index guard checks as any other index.
    None when the shapes are not static."""
    from tvm import relax

    if None in sizes or index.ty.ndim != 1:
        return None
    count = getattr(index.ty.shape.values[0], "value", None)
    if not count:
        return None
    emit = importer.block_builder.emit
    length, rank = sizes[axis], len(sizes)
    slots = np.arange(length, dtype="int64")
    index = emit(relax.op.astype(index, "int64")) if str(index.ty.dtype) != "int64" else index
    positions = emit(relax.op.take(relax.const(slots, "int64"), index, axis=0))
    result = list(sizes)
    result[axis] = count
    values = emit(relax.op.broadcast_to(values, result))
    along = [1] * rank
    along[axis] = length
    if count == 1:
        hit = emit(relax.op.equal(relax.const(slots.reshape(along), "int64"),
                                  emit(relax.op.reshape(positions, [1] * rank))))
        return emit(relax.op.where(hit, values, data))
    # (length, count): which positions name each slot; the last one wins, as in PyTorch's loop
    names = emit(relax.op.equal(relax.const(slots.reshape(length, 1), "int64"),
                                emit(relax.op.reshape(positions, [1, count]))))
    order = relax.const(np.arange(1, count + 1, dtype="int64").reshape(1, count), "int64")
    last = emit(relax.op.max(emit(relax.op.where(names, order, relax.const(0, "int64"))),
                             axis=1))
    source = emit(relax.op.subtract(emit(relax.op.maximum(last, relax.const(1, "int64"))),
                                    relax.const(1, "int64")))
    gathered = emit(relax.op.take(values, source, axis=axis))
    hit = emit(relax.op.reshape(emit(relax.op.greater(last, relax.const(0, "int64"))), along))
    return emit(relax.op.where(hit, gathered, data))


def _static_shape(expr) -> list:
    shape = [getattr(d, "value", None) for d in expr.ty.shape.values]
    if None in shape:
        raise ValueError("index_put with an index tensor of symbolic shape is not supported")
    return shape


def _broadcast_shape(shapes: list) -> list:
    return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _select(importer, node):
    """``x.select(dim, i)`` with PyTorch's negative ``i`` counted from the end."""
    from tvm import relax

    x = importer.env[node.args[0]]
    dim, index = node.args[1], node.args[2]
    size = getattr(x.ty.shape.values[dim], "value", None)
    if index < 0 and size is None:
        sliced = importer.block_builder.emit(relax.op.strided_slice(
            x, [dim], [index], [index + 1 if index + 1 else 2**62]))
        return importer.block_builder.emit(relax.op.squeeze(sliced, [dim]))
    if index < 0 and index >= -size:
        index += size
    return importer.block_builder.emit(relax.op.take(x, relax.const(index, "int64"), dim))


def _is_bool(expr) -> bool:
    return str(getattr(getattr(expr, "ty", None), "dtype", None)) == "bool"


def _arg(args, i, default):
    return args[i] if len(args) > i else default


CONVERTERS = {
    "selu.default": _selu,
    "elu.default": _elu,
    "grid_sampler_2d.default": _grid_sampler_2d,
    "squeeze.default": _squeeze,
    "squeeze.dim": _squeeze,
    "squeeze.dims": _squeeze,
    "index_put.default": _index_put,
    "index_put_.default": _index_put,
    "select.int": _select,
}
# Converters that fall back to TVM's own for the cases they do not handle.
_WRAPPING = {"add.Tensor": _add, "add_.Tensor": _add,
             "sub.Tensor": _promoting, "mul.Tensor": _promoting, "rsub.Scalar": _promoting,
             "cat.default": _cat}


def check_convert_map(convert_map) -> dict:
    """A student's ``convert_map`` (ATen overload name -> ``f(node, importer)``, TVM's
    ``custom_convert_map`` convention), checked."""
    if convert_map is None:
        return {}
    if not isinstance(convert_map, dict):
        raise TypeError(f"from_torch(): convert_map must be a dict of ATen operator name -> "
                        f"function(node, importer), got {type(convert_map).__name__}")
    for key, convert in convert_map.items():
        if not isinstance(key, str) or not callable(convert):
            raise TypeError(f"from_torch(): convert_map maps ATen operator names such as "
                            f"\"selu.default\" to functions(node, importer); got {key!r}: "
                            f"{type(convert).__name__}")
    return dict(convert_map)


class RecordingImporter:
    """TVM's importer with mlclab's converters and the student's merged in, and every node
    translation wrapped: which Relax value each ATen node produced, in order, and the node
    named when a translation fails."""

    def __init__(self, listing: ModuleListing, convert_map: dict, loans: Loans):
        from tvm.relax.frontend.torch.exported_program_translator import ExportedProgramImporter

        self.listing = listing
        self.importer = ExportedProgramImporter()
        self.results: list = []          # (fx node, the Relax expression it produced)
        table = dict(self.importer.convert_map)
        for name, make in _WRAPPING.items():
            if name in table:
                table[name] = self._bound(make(table[name]))
        table.update({name: self._bound(f) for name, f in CONVERTERS.items()})
        table.update({name: self._students(f) for name, f in convert_map.items()})
        self.importer.convert_map = {k: self._wrap(f) for k, f in table.items()}
        # TVM hands the weights over through DLPack, sharing the module's memory: an
        # optimizer step would then change the compiled model, and ``resize_`` free what it
        # reads. Large weights are lent to the build, which owns what it keeps; the rest is
        # copied (frontend.borrowed).
        self.importer._convert_pytorch_tensor_to_tvm = loans.lend

    def _bound(self, convert):
        return lambda node: convert(self.importer, node)

    def _students(self, convert):
        return lambda node: convert(node, self.importer)

    def _wrap(self, convert):
        def translate(node, *rest):
            try:
                out = convert(node, *rest)
            except Exception as exc:
                raise UnsupportedModel(
                    f"TVM could not translate PyTorch operator {operator_name(node)} "
                    f"{where(node, self.listing)}: {first_line(exc)}") from None
            self.results.append((node, out))
            return out
        return translate

    def check_supported(self, exported) -> None:
        """Every ATen operator of ``exported`` has a translation, or the error names the
        first that does not, with its module."""
        known = self.importer.convert_map
        missing = [n for n in exported.graph.nodes
                   if n.op == "call_function" and n.target.__name__ not in known]
        if missing:
            node = missing[0]
            others = sorted({operator_name(n) for n in missing[1:]} - {operator_name(node)})
            also = f" (also unsupported: {', '.join(others)})" if others else ""
            raise UnsupportedModel(
                f"PyTorch operator {operator_name(node)} {where(node, self.listing)} has no "
                f"translation to Relax in TVM {tvm().__version__}{also}; replace that layer, "
                f"write it with supported operations, or pass a converter for it in "
                f"from_torch(..., convert_map={{{node.target.__name__!r}: f}})")

    def translate(self, exported, params_as_inputs: bool):
        """The Relax module (one function, ``main``)."""
        self.check_supported(exported)
        try:
            mod = self.importer.from_exported_program(
                exported, keep_params_as_input=params_as_inputs, unwrap_unit_return_tuple=True,
                no_bind_return_tuple=False, custom_convert_map=None)
        except UnsupportedModel:
            self._abandon_function()
            raise
        except Exception as exc:
            self._abandon_function()
            raise UnsupportedModel(
                f"TVM could not translate this model: {first_line(exc)}") from None
        return _bool_arithmetic(mod)

    def _abandon_function(self) -> None:
        """Close the block and scope TVM's ``with bb.function`` leaves open when a translation
        raises inside it (its C++ side would print "BlockBuilder destroyed with remaining
        blocks!" when collected)."""
        builder = getattr(self.importer, "block_builder", None)
        if builder is None:
            return
        try:
            builder._end_block()
            builder.end_scope()
        except Exception:     # nothing was open: the failure came before the function
            pass


_BOOL_ARITHMETIC = {"relax.add": "logical_or", "relax.multiply": "logical_and"}


def _bool_arithmetic(mod):
    """``mod`` with ``add``/``multiply`` of two bool tensors written as ``logical_or``/
    ``logical_and`` (what they are in PyTorch): TVM's own converters emit them (``isfinite``
    multiplies two masks), and its kernels refuse bool arithmetic unless fusion hides it.
    The bindings keep their variables."""
    from tvm import relax

    def rewrite(func):
        blocks, changed = [], False
        for block in func.body.blocks:
            bindings = []
            for b in block.bindings:
                value = b.value
                if (isinstance(value, relax.Call) and isinstance(value.op, tvm().ir.Op)
                        and value.op.name in _BOOL_ARITHMETIC and len(value.args) == 2
                        and all(_is_bool(a) for a in value.args)):
                    logical = getattr(relax.op, _BOOL_ARITHMETIC[value.op.name])
                    b = relax.VarBinding(b.var, logical(*value.args))
                    changed = True
                bindings.append(b)
            make = relax.DataflowBlock if isinstance(block, relax.DataflowBlock) \
                else relax.BindingBlock
            blocks.append(make(bindings))
        if not changed:
            return func
        return relax.Function(func.params, relax.SeqExpr(blocks, func.body.body), func.ret_ty,
                              func.is_pure, func.attrs)

    funcs = {gv: rewrite(f) if isinstance(f, relax.Function) else f
             for gv, f in mod.functions_items()}
    return relax.transform.Normalize()(tvm().IRModule(funcs, attrs=mod.attrs))


def where(node, listing: ModuleListing) -> str:
    from .module_tree import module_path

    return listing.where(module_path(node))
