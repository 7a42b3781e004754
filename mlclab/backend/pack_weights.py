"""Matmul weights packed into column panels once, at compile time, as a BLAS packs B.

A transformer's linear layers are ``x @ w.T`` with ``w`` a constant (N, K) weight.  The
register tile (``schedules.register_tile``) reads B one vector of columns at a time, and for
``x @ w.T`` the columns of B are a *row* of ``w``: the kernel used to transpose ``w`` into
contiguous ``K x (2 * lanes)`` panels on every call.  Here the panels are made once, with
numpy, while the model is built:

    wp[p, k, c] = w[p * width + c, k]          # (N / width, K, width), width = one vector

and the matmul becomes a kernel of its own (``packed_matmul``) that reads them directly:
``out[..., i, j] = sum_k x[..., i, k] * wp[j // width, k, j % width]``.  Its reduction block
carries the annotation ``PACKED_MATMUL`` (the panel width), by which the schedule rule
``register_tile_prepacked`` (``schedules.packed_matmul``) knows it.  The original weight is
no longer read by the built code, so only the packed one is kept in the executable.

A column count with no power-of-two divisor of at least ``MIN_WIDTH`` (GPT-2's 50,257-word
head, a prime such as 97) is packed in full-vector panels with zero columns added up to a
multiple of ``PAD_PANELS`` panels: the kernel computes the padded width, tiled as any other,
and a crop (its own small copy kernel) keeps the real columns. The added columns are
multiplied by zeros and thrown away, so every kept output is summed as before. Fewer
columns than ``MIN_PADDED_COLUMNS`` are left to the general rule (the copy would cost more
than the tile saves). Columns that only a panel narrower than a vector divides (MobileViT's
120 and 360 on AVX-512: panels of 8) are padded the same way when the padding is small
(``_pad_narrow``): half-vector panels did half the work per instruction.

A constant that something else also reads is packed all the same: left unpacked, the
register tile would copy it into panels of its own on every call -- the same bytes again, in
the VM's pool, at a quarter of the speed (lesson 13's tied 50,257-word head: 57 ms a token
unpacked, 14 ms packed). Two matmuls reading one weight share one packed copy. A ``take`` of
its rows (GPT-2's head tied to its token embedding) reads the panels too (``packed_take``:
row ``r`` is ``wp[r // width, :, r % width]``), so the executable holds the weight once, in
panels, instead of both layouts (154 MB more for lesson 13); any other reader keeps the
original for itself.

Left alone: a weight that is a parameter (a tinynn ``linear(x, w)``; packing it would cost a
kernel per call, which is what the register tile's in-kernel panels already do), and other
dtypes.
"""
from __future__ import annotations

import functools

from .relax_exprs import op_name

# The block annotation the schedule recognises the packed matmul's reduction by (its value
# is the panel width); FuseTIR keeps it with the block.
PACKED_MATMUL = "mlclab.packed_matmul"
BLOCK_NAME = "packed_matmul"
# The narrowest panel worth packing: a panel is a whole number of SIMD lanes.
MIN_WIDTH = 4
# Padded columns are rounded up to this many panels, so that tiles of several panels divide.
PAD_PANELS = 4
MIN_PADDED_COLUMNS = 256
# Columns that only a narrower panel than a vector divides are padded to full vectors when
# that adds at most 1/NARROW_PAD_WASTE columns.
NARROW_PAD_WASTE = 8


def panel_width(columns: int, lanes: int):
    """The panel width for a weight of ``columns`` output columns: the widest power of two
    no wider than one vector that divides them (768 -> 16 on AVX-512, 120 -> 8), or None
    when there is none of at least ``MIN_WIDTH``.  A power of two, so that ``j // width``
    and ``j % width`` become shifts and masks the vectorizer sees through."""
    width = 1
    while width * 2 <= lanes and columns % (width * 2) == 0:
        width *= 2
    return width if width >= MIN_WIDTH else None


def padded_columns(columns: int, lanes: int):
    """(panel width, columns the kernel computes) for ``columns`` output columns: a divisor
    panel and no padding when a whole vector divides them, or a narrower panel and padding
    would add too much; else full vectors and zero columns up to whole groups of
    ``PAD_PANELS`` panels; None when neither applies."""
    width = panel_width(columns, lanes)
    if width is not None and (width == lanes or not _pad_narrow(columns, lanes)):
        return width, columns
    if width is None and (columns < MIN_PADDED_COLUMNS or lanes < MIN_WIDTH):
        return None
    group = lanes * PAD_PANELS
    return lanes, -(-columns // group) * group


def _pad_narrow(columns: int, lanes: int) -> bool:
    """Whether ``columns`` that only a panel narrower than a vector divides (120 or 360 on
    AVX-512: panels of 8) are padded to full vectors: at most ``1 / NARROW_PAD_WASTE`` more
    columns.  A narrow panel fills half a register or less: MobileViT's 256 x 120 -> 360 ran
    at 132 GFLOP/s against 260 for the full-vector layers beside it, and one row of
    384 -> 1000 (its classifier) took 118 us in 25 panels of 8 against 19 padded."""
    group = lanes * PAD_PANELS
    padded = -(-columns // group) * group
    return (padded - columns) * NARROW_PAD_WASTE <= columns


def pack_panels(weight_nk, width: int, columns=None, out=None):
    """``weight_nk`` (N, K) as (columns / width, K, width) panels (numpy, contiguous), the
    rows past N zero (``columns`` defaults to N); written into ``out`` when given (the
    packed constant's own memory: a large head is then never copied twice)."""
    import numpy as np

    n, k = weight_nk.shape
    columns = n if columns is None else columns
    if out is None:
        out = np.empty((columns // width, k, width), weight_nk.dtype)
    full = n // width                            # panels of real rows only
    out[:full] = weight_nk[:full * width].reshape(full, width, k).transpose(0, 2, 1)
    out[full:] = 0
    if n > full * width:                         # the last real rows, then zero columns
        out[full, :, :n - full * width] = weight_nk[full * width:].T
    return out


def pack_weights(lanes: int):
    """A module pass replacing every ``matmul(x, permute_dims(w))`` and ``matmul(x, w)``
    with a constant 2-D float32 ``w`` by ``packed_matmul`` on ``w``'s panels for
    ``lanes``-wide vectors (``w`` stays only where something else reads it)."""
    import tvm
    from tvm import relax

    from .fold_batchnorm import with_functions

    @tvm.transform.module_pass(opt_level=0, name="mlclab.PackWeights")
    def pack(mod, _ctx):
        # Any Relax function: the rewrite replaces one binding by a call on the same values,
        # so it holds in functions of several blocks (an imported model's index checks).
        plans = {gv: _plans(func, lanes) for gv, func in mod.functions_items()
                 if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr)}
        plans = {gv: plan for gv, plan in plans.items() if plan}
        if not plans:
            return mod
        every = {var: p for plan in plans.values() for var, p in plan.items()}
        packer = _packer_class()(mod, every)
        updates = {gv: relax.analysis.remove_all_unused(packer.visit_expr(mod[gv]))
                   for gv in plans}
        # The builder's module holds the new packed_matmul kernels beside the old functions.
        return with_functions(packer.builder_.get(), updates)

    return pack


def _plans(func, lanes: int) -> dict:
    """matmul var -> (x, the (N, K) weight as numpy, panel width, padded column count, the
    weight's constant) for every matmul to pack."""
    from tvm import relax

    values = relax.analysis.get_var2val(func)
    var_uses = _var_uses(func)
    plans = {}
    for var, value in values.items():
        if op_name(value) != "relax.matmul" or not _float32(var):
            continue
        x, b = value.args
        # x of rank 2 or more (a vector times a matrix is left to the general rules)
        if not (_float32(x) and x.ty.ndim >= 2) \
                or str(value.attrs.out_dtype) not in ("", "float32"):
            continue
        b = _unbroadcast(b, x, values, var_uses)
        found = _constant_nk(b, values, var_uses)
        if found is None:
            continue
        constant, transposed = found
        n = _ints(constant.ty)[1 if transposed else 0]
        layout = padded_columns(n, lanes)
        if layout is not None:
            plans[var] = (x, constant, transposed, n, *layout)
    # rows taken from a packed weight (an embedding tied to the head): read from its panels
    packed = {plan[1]: plan[1:] for plan in plans.values()}
    for var, value in values.items():
        if op_name(value) == "relax.take" and value.args[0] in packed \
                and _take_rows(value) is not None:
            plans[var] = (TAKE, *packed[value.args[0]], value.args[1], _take_rows(value))
    return plans


# A plan's first field for a ``take`` of rows (a matmul plan's is its ``x``).
TAKE = "take"


def _take_rows(value):
    """The mode of a ``take`` of whole rows (``axis=0``) of a 2-D constant, or None."""
    axis = value.attrs.axis
    mode = str(value.attrs.mode)
    if axis is None or int(axis) not in (0, -2) or mode not in ("fast", "clip", "wrap"):
        return None
    return mode


def _unbroadcast(b, x, values, var_uses):
    """A 2-D B that the importer broadcast over ``x``'s own batch axes (a linear layer on a
    transposed 4-D input, as in MobileViT, becomes a batched matmul by the weight expanded
    with ``broadcast_to`` and reshaped): the 2-D value itself, since ``x @ b`` is then the
    same; any other ``b`` as it is."""
    from tvm import relax

    shape, x_shape = _ints(b.ty), _ints(x.ty)
    if shape is None or x_shape is None or len(shape) != len(x_shape) or len(shape) < 3 \
            or shape[:-2] != x_shape[:-2]:
        return b
    inner = b
    # through broadcasts and reshapes that keep the last two axes, each read only here
    while isinstance(inner, relax.Var) and var_uses.get(inner) == 1:
        value = values.get(inner)
        if op_name(value) not in ("relax.broadcast_to", "relax.reshape"):
            break
        source = _ints(value.args[0].ty)
        if source is None or source[-2:] != shape[-2:]:
            break
        inner = value.args[0]
        if len(source) == 2:
            return inner
    return b


def _ints(ty):
    """The static int shape of a tensor type, or None."""
    from tvm import tirx

    values = getattr(getattr(ty, "shape", None), "values", None)
    if values is None or not all(isinstance(v, tirx.IntImm) for v in values):
        return None
    return [int(v) for v in values]


def _constant_nk(b, values, var_uses):
    """``(constant, transposed)`` when B of a matmul is a 2-D constant (K, N) (transposed:
    its (N, K) weight is ``constant.T``), or the transpose (read by this matmul only) of a
    2-D constant (N, K); else None. The constant may have other readers: they keep it, the
    matmul reads the panels."""
    from tvm import relax
    from tvm.ir.expr import Constant

    if isinstance(b, Constant):
        return (b, True) if b.ty.ndim == 2 and _ints(b.ty) is not None else None
    if not isinstance(b, relax.Var) or var_uses.get(b) != 1:
        return None
    value = values.get(b)
    if op_name(value) != "relax.permute_dims":
        return None
    (w,) = value.args
    axes = value.attrs.axes
    if not (isinstance(w, Constant) and w.ty.ndim == 2 and _ints(w.ty) is not None
            and (axes is None or [int(a) for a in axes] == [1, 0])):
        return None
    return w, False


def _var_uses(func) -> dict:
    """var -> how many bindings (and the result) read it."""
    from tvm import relax

    counts: dict = {}
    body = func.body
    values = [b.value for block in body.blocks for b in block.bindings] + [body.body]
    for value in values:
        seen = set()

        def record(node, seen=seen):
            if isinstance(node, relax.Var) and node not in seen:
                seen.add(node)
                counts[node] = counts.get(node, 0) + 1

        relax.analysis.post_order_visit(value, record)
    return counts


def _float32(expr) -> bool:
    from tvm import relax

    ty = expr.ty
    return isinstance(ty, relax.TensorType) and str(ty.dtype) == "float32" and ty.ndim >= 1


def packed_matmul(x, panels, columns: int):
    """The TE compute of ``x @ w.T`` from ``w``'s panels: ``x`` (..., M, K), ``panels``
    (N / width, K, width), the result (..., M, ``columns``)."""
    from tvm import te

    width = int(panels.shape[2])
    k = te.reduce_axis((0, x.shape[-1]), name="k")

    def compute(*index):
        *batch, i, j = index
        return te.sum(x[(*batch, i, k)] * panels[j // width, k, j % width], axis=k)

    return te.compute((*x.shape[:-1], columns), compute, name=BLOCK_NAME,
                      attrs={PACKED_MATMUL: width})


def packed_take(ids, panels, shape, transposed: bool, mode: str):
    """The TE compute of ``take(c, ids, axis=0)`` for the 2-D constant ``c`` of ``shape``
    packed into ``panels`` (its (N, K) weight is ``c``, or ``c.T`` when ``transposed``):
    ``c[r, s]`` is the weight's ``[n, k] = (r, s)`` (or ``(s, r)``), at
    ``panels[n // width, k, n % width]``. ``mode``: the take's handling of an index out of
    range (``clip``: to the nearest row; ``wrap``: modulo; ``fast``: none), as TVM's."""
    from tvm import te, tirx

    width = int(panels.shape[2])
    rows, cols = shape

    def compute(*index):
        *where, s = index
        r = ids[tuple(where)].astype("int64")
        if mode == "clip":
            r = te.max(te.min(r, rows - 1), 0)
        elif mode == "wrap":
            r = tirx.floormod(r, rows)
        n, k = (s, r) if transposed else (r, s)
        return panels[n // width, k, n % width]

    return te.compute((*ids.shape, cols), compute, name="packed_take")


@functools.cache
def _packer_class():
    from tvm import relax

    @relax.expr_functor.mutator
    class Packer(relax.PyExprMutator):
        """Replaces each planned matmul by ``packed_matmul`` on a packed constant; the old
        weight and its transpose become dead code."""

        def __init__(self, mod, plans):
            super().__init__(mod)
            self.plans = plans
            # (weight constant, panel width, columns) -> its panels: packed once however
            # many matmuls read the weight
            self.packed: dict = {}

        def visit_var_binding_(self, binding):
            plan = self.plans.get(binding.var)
            if plan is None:
                super().visit_var_binding_(binding)
                return
            x, constant, transposed, n, width, columns, *take = plan
            key = (constant, width, columns)
            if key not in self.packed:
                self.packed[key] = relax.const(_packed(constant, transposed, width, columns))
            panels = self.packed[key]
            if x is TAKE:         # rows of the weight: read from the panels (packed_take)
                call = self.builder_.call_te(packed_take, self.visit_expr(take[0]), panels,
                                             shape=_ints(constant.ty), transposed=transposed,
                                             mode=take[1], primfunc_name_hint="packed_take")
                self.builder_.emit_normalized(relax.VarBinding(binding.var,
                                                               self.builder_.normalize(call)))
                return
            call = self.builder_.call_te(packed_matmul, self.visit_expr(x), panels,
                                         columns=columns, primfunc_name_hint=BLOCK_NAME)
            if columns != n:      # padded: the real columns are cropped out
                padded = self.builder_.emit(call, "padded")
                call = relax.op.strided_slice(padded, axes=[padded.ty.ndim - 1], begin=[0],
                                              end=[n])
            # Under the matmul's own var: the views follow a value through the pipeline by
            # name, so the packed matmul keeps its line (its PyTorch module).
            self.builder_.emit_normalized(relax.VarBinding(binding.var,
                                                           self.builder_.normalize(call)))

    return Packer


def _packed(constant, transposed: bool, width: int, columns: int):
    """The panels of ``constant`` as a TVM tensor, written in place: the weight is read
    through a view of the constant and the panels go straight into TVM's (aligned) memory,
    so packing a 154 MB head costs the 154 MB it keeps, not three copies on the way."""
    import numpy as np
    import tvm

    weight = np.from_dlpack(constant.value)
    weight = weight.T if transposed else weight
    k = weight.shape[1]
    tensor = tvm.runtime.empty((columns // width, k, width), str(weight.dtype))
    pack_panels(weight, width, columns, out=np.from_dlpack(tensor))
    return tensor
