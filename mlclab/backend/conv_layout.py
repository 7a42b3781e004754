"""Convolutions in a blocked channel layout (NCHW[x]c), as Relay's x86 ``conv2d_NCHWc``.

A CPU convolution in NCHW has no contiguous axis to vectorize over that is shared by the
output and both inputs: each output pixel sums over input channels that lie a whole image
apart.  In ``NCHW[x]c`` the channels are cut into blocks of ``x`` (one SIMD register of
float32) and the block is the innermost axis, so one output pixel's block of output channels
is one vector register, the weight ``OIHW[x]i[y]o`` gives one vector per input channel, and
the inner loop is a broadcast of one input value and one fused multiply-add -- with a row of
output pixels held in registers (see ``schedules.blocked``).

``block_conv_layout`` rewrites the Relax graph before legalization:

* every convolution it can handle (NCHW/OIHW, no dilation, static float32 shapes; grouped
  and depthwise ones as ``grouped_conv`` decides) becomes
  ``R.nn.conv2d(data_layout="NCHW{x}c", kernel_layout="OIHW{x}i{y}o", out_layout="NCHW{y}c")``;
  a constant weight is re-laid out here with numpy, once, and a weight that is a parameter
  gets a ``layout_transform`` of its own;
* the operators between convolutions that do not care about the layout -- activations
  (``ELEMENTWISE``), an add, subtract, multiply or divide of two blocked tensors (a
  residual) or of a per-channel vector (a bias) or a scalar, max pooling (``ceil_mode``
  too), average pooling whose windows tile the image, a concatenation of channels, the
  mean over the image (squeeze-excite's pool) -- stay in the blocked layout, so a ResNet
  is transformed once at its input and once before the classifier; a value a convolution
  needs in another block is re-blocked by one copy;
* every value keeps its NCHW binding (a ``layout_transform`` back) for any other user;
  those no one uses are dead code and removed, so the transforms are only at the edges.

Anything else -- dilated convolutions, depthwise ones with a channel multiplier, symbolic
sizes, other dtypes, channel counts with no block of at least ``min_block``, convolutions
too small to pay for the transforms (``MIN_MACS``) -- is left exactly as it was, for the
general schedules.
``legalize_conv2d`` lowers the blocked convolution to one loop nest whose reduction block
the CPU schedule recognises by its annotation (``BLOCKED_OP``).
"""
from __future__ import annotations

import functools
import math

from .blocked_pool import blocked_pooling
from .channel_blocks import (BLOCKED_OP, CONV2D, MIN_BLOCK,  # noqa: F401
                             channel_block, index_maps, is_blocked, min_block,
                             nchw_part_joins)
from .grouped_conv import (ConvBlocks, blocked_weight_value, blocks_of_grouped, is_depthwise,
                           legalize_depthwise, padded_at_border)
from .padded_layout import PaddedValues, padded_width
from .relax_exprs import dtype_of, is_constant, op_name, static_shape

# The blocks' names (what the TIR view shows).  The schedules recognise the reductions by
# the annotation ``BLOCKED_OP`` instead, which FuseTIR keeps with the block: a name could be
# taken by any other operator.
BLOCK_NAME = "conv2d_NCHWc"
PAD_NAME = "conv2d_NCHWc_pad"
GROUPED_NAME = "group_conv2d_NCHWc"
# The fewest multiply-adds a convolution needs to be worth the blocked layout.  Below, the
# convolution takes well under a microsecond and the layout transforms' kernel launches cost
# more than they save (lesson 3's 1->4 channel 3x3 conv on 8x8, 2,304 multiply-adds: 6.7 us
# a call blocked, 5.9 us not).
MIN_MACS = 1 << 13
# A pooling read only from a blocked concatenation pools each part and joins the pooled
# parts (each channel is pooled on its own: the same values), so the copy is of the smaller
# map: SqueezeNet's joins before its pools, 55 x 55 and 27 x 27.
POOL_PARTS = True
# Element-wise operators of one tensor (activations), which give the same result in any
# layout; the graph stays blocked through them.
ELEMENTWISE = frozenset({
    "relax.nn.relu", "relax.nn.relu6", "relax.clip", "relax.nn.leakyrelu", "relax.nn.silu",
    "relax.nn.gelu", "relax.nn.gelu_tanh", "relax.sigmoid", "relax.tanh"})


def block_conv_layout(lanes: int):
    """A module pass putting the convolutions of every Relax function, and the
    layout-agnostic operators between them, in the ``NCHW[x]c`` layout for ``lanes``-wide
    float32 vectors."""
    import tvm
    from tvm import relax

    from .fold_batchnorm import with_functions

    @tvm.transform.module_pass(opt_level=0, name="mlclab.BlockConvLayout")
    def blocked(mod, _ctx):
        updates = {}
        for gv, func in mod.functions_items():
            if not isinstance(func, relax.Function) or _is_primitive(func):
                continue
            if not _has_blockable_conv(func, lanes):
                continue
            rewriter = _Blocker(mod, lanes)
            rewriter.uses = _uses(func)
            new = rewriter.visit_expr(func)
            if rewriter.changed:
                updates[gv] = relax.analysis.remove_all_unused(new)
        return with_functions(mod, updates)

    return blocked


def _uses(func) -> dict:
    """Var -> how many times ``func``'s expressions read it."""
    from tvm import relax

    counts: dict = {}

    def count(expr):
        if isinstance(expr, relax.Var):
            counts[expr] = counts.get(expr, 0) + 1

    relax.analysis.post_order_visit(func.body, count)
    return counts


def _is_primitive(func) -> bool:
    return func.attrs is not None and bool(func.attrs.get("Primitive", False))


def _has_blockable_conv(func, lanes: int) -> bool:
    from tvm import relax

    from .fold_batchnorm import single_dataflow_block

    block = single_dataflow_block(func)
    return block is not None and any(
        isinstance(b.value, relax.Call) and _conv_blocks(b.value, lanes) is not None
        for b in block.bindings)


def _conv_blocks(call, lanes: int, incoming=None):
    """The ``ConvBlocks`` if ``call`` is a convolution this layout handles, else None.
    ``incoming`` is the channel block its input already has, if it is blocked: a dense
    convolution reads any block, so a value a grouped convolution left in a narrower block
    (``grouped_conv``) is not re-blocked."""
    if op_name(call) != "relax.nn.conv2d":
        return None
    a = call.attrs
    if (a.data_layout, a.kernel_layout, a.out_layout) != ("NCHW", "OIHW", "NCHW"):
        return None
    if any(int(d) != 1 for d in a.dilation):
        return None
    if a.out_dtype is not None and str(a.out_dtype) not in ("", "float32"):
        return None
    x, w = call.args
    xs, ws = static_shape(x), static_shape(w)
    if xs is None or ws is None or len(xs) != 4 or len(ws) != 4:
        return None
    if dtype_of(x) != "float32" or dtype_of(w) != "float32" or 0 in xs or 0 in ws:
        return None
    out = static_shape(call)
    if out is None or math.prod(out) * math.prod(ws[1:]) < MIN_MACS:
        return None
    if int(a.groups) != 1:
        return blocks_of_grouped(xs[1], ws, int(a.groups), lanes, incoming,
                                 strided=any(int(s) != 1 for s in a.strides))
    ob = channel_block(ws[0], lanes)
    if ob < min_block(lanes):
        return None
    ib = incoming if incoming and xs[1] % incoming == 0 else channel_block(xs[1], lanes)
    return ConvBlocks(ib, ib, ob)


def _reblock_map(old: int, new: int):
    """NCHW{old}c -> NCHW{new}c."""
    def reblock(n, c, h, w, b):
        channel = c * old + b
        return n, channel // new, h, w, channel % new

    return reblock


def _blocked_weight(w, blocks):
    """OIHW -> OIHW{ib}i{ob}o: a constant re-laid out now, anything else at run time."""
    from tvm import relax

    if is_constant(w):
        return relax.const(blocked_weight_value(w.value.numpy(), blocks))
    ib, ob = blocks.weight_in, blocks.out

    def kernel_map(o, i, h, w_):
        return o // ob, i // ib, h, w_, i % ib, o % ob

    return relax.op.layout_transform(w, index_map=kernel_map)


def _make_blocker():
    import tvm
    from tvm import relax
    from tvm.relax import op as R

    @relax.expr_functor.mutator
    class Blocker(relax.PyExprMutator):
        """Rewrites bindings whose operator has a blocked form; ``self.blocked`` maps an
        original var to (its blocked value, the channel block)."""

        def __init__(self, mod, lanes: int):
            super().__init__(mod)
            self.lanes = lanes
            self.blocked = {}
            self.tuples = {}  # original var -> the relax.Tuple it was bound to
            self.reblocked = {}  # (original var, block) -> it in that other block
            self.padded = PaddedValues(self)  # values padded to whole vectors
            self.joins = {}  # original var of a blocked concatenation -> its blocked parts
            self.uses = {}   # var -> its reads in the function (``block_conv_layout`` sets)
            self.changed = False

        # -- helpers ------------------------------------------------------------
        def _blocked_input(self, var, block: int):
            """``var`` in NCHW{block}c: its blocked twin if it has one, else a transform."""
            known = self.blocked.get(var)
            if known is not None and known[1] == block:
                return known[0]
            if (var, block) in self.reblocked:
                return self.reblocked[var, block]
            # A name of its own: an unnamed value would be "lv", which the views could take
            # for the model's first binding (they follow values through passes by name).
            if known is not None:
                # Blocked already, by another block (a grouped convolution's narrower one,
                # grouped_conv.py): one copy from block to block, not two through NCHW.
                value = self.builder_.emit(R.layout_transform(
                    known[0], index_map=_reblock_map(known[1], block)), f"{var.name}_reblocked")
                self.reblocked[var, block] = value
                return value
            forward, _ = index_maps(block)
            value = self.builder_.emit(R.layout_transform(self.visit_expr(var),
                                                          index_map=forward),
                                       f"{var.name}_blocked")
            self.blocked[var] = (value, block)
            return value

        def _bind(self, binding, blocked_value, block: int):
            """Bind ``blocked_value`` (under ``binding.var``'s name, so a DSL name
            survives) and keep ``binding.var`` as its NCHW view (dead code unless some
            operator without a blocked form reads it)."""
            if not isinstance(blocked_value, relax.Var):
                name = binding.var.name if isinstance(binding.var, relax.DataflowVar) else ""
                blocked_value = self.builder_.emit(blocked_value, name)
            _, back = index_maps(block)
            nchw = self.builder_.normalize(R.layout_transform(blocked_value, index_map=back))
            self.builder_.emit_normalized(relax.VarBinding(binding.var, nchw))
            self.blocked[binding.var] = (blocked_value, block)
            self.changed = True

        def _channel_operand(self, arg, channels: int, block: int):
            """A broadcast operand in the blocked layout: a blocked tensor of the same
            shape, a per-channel (1, C, 1, 1) vector reshaped, or a scalar; else None."""
            shape = static_shape(arg)
            if shape is None:
                return None
            per_channel = len(shape) in (3, 4) and shape[-3] == channels and \
                all(d == 1 for k, d in enumerate(shape) if k != len(shape) - 3)
            if arg in self.blocked:
                if self.blocked[arg][1] == block and len(shape) == 4 and shape[1] == channels:
                    return self.blocked[arg][0]
                if not per_channel:
                    return None
                # A per-channel vector in another block (squeeze-excite's scale beside a
                # grouped convolution's narrower block): its C values re-read from NCHW.
            if all(d == 1 for d in shape) and len(shape) <= 4:
                return self.visit_expr(arg) if len(shape) == 0 else \
                    self.builder_.emit(R.reshape(self.visit_expr(arg), ()))
            if per_channel:
                if is_constant(arg):  # a folded batch norm's shift: re-laid out now
                    return relax.const(arg.value.numpy().reshape(
                        1, channels // block, 1, 1, block))
                return self.builder_.emit(R.reshape(
                    self.visit_expr(arg), (1, channels // block, 1, 1, block)))
            return None

        # -- rewrites -----------------------------------------------------------
        def visit_var_binding_(self, binding):
            value = binding.value
            if isinstance(value, relax.Tuple):
                self.tuples[binding.var] = value
            rewrite = None
            if isinstance(value, relax.TupleGetItem):
                rewrite = self._tuple_item
            if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
                name = value.op.name
                rewrite = ({
                    "relax.nn.conv2d": self._conv2d,
                    "relax.add": self._binary,
                    "relax.subtract": self._binary,
                    "relax.multiply": self._binary,
                    "relax.divide": self._binary,   # hard-swish's / 6
                    "relax.nn.max_pool2d": self._pool2d,
                    "relax.nn.avg_pool2d": self._pool2d,
                    "relax.concat": self._concat,
                    "relax.mean": self._global_mean,
                }.get(name) or (self._unary if name in ELEMENTWISE else None))
            if rewrite is None or not rewrite(binding, value):
                super().visit_var_binding_(binding)

        def _conv2d(self, binding, call) -> bool:
            x, w = call.args
            known = self.blocked.get(x)
            blocks = _conv_blocks(call, self.lanes, known[1] if known else None)
            if blocks is None:
                return False
            padded = padded_width(call, blocks, self.lanes)
            if padded is not None:
                return self.padded.conv2d(binding, call, blocks, padded)
            xb = self._blocked_input(x, blocks.data)
            wb = _blocked_weight(w if is_constant(w) else self.visit_expr(w), blocks)
            if not is_constant(wb):
                wb = self.builder_.emit(wb)
            a = call.attrs
            data_layout, kernel_layout, out_layout = blocks.layouts()
            out = R.nn.conv2d(
                xb, wb, strides=a.strides, padding=a.padding, dilation=a.dilation,
                groups=a.groups, data_layout=data_layout, kernel_layout=kernel_layout,
                out_layout=out_layout, out_dtype="float32")
            self._bind(binding, out, blocks.out)
            return True

        def _tuple_item(self, binding, item) -> bool:
            """``(y, other)[0]`` is ``y`` (how torch.export's max pooling returns)."""
            fields = self.tuples.get(item.tuple_value)
            field = fields.fields[item.index] if fields is not None else None
            if field is None or field not in self.blocked:
                return False
            self._bind(binding, *self.blocked[field])
            return True

        def _unary(self, binding, call) -> bool:
            """An activation of a blocked tensor; its other arguments (``clip``'s bounds)
            are scalars, which the layout does not touch."""
            x, *rest = call.args
            if x in self.padded and not rest:
                return self.padded.unary(binding, call)
            if x not in self.blocked or any(isinstance(getattr(r, "ty", None),
                                                       relax.TensorType) for r in rest):
                return False
            xb, block = self.blocked[x]
            out = relax.Call(call.op, [xb, *[self.visit_expr(r) for r in rest]], call.attrs)
            self._bind(binding, out, block)
            return True

        def _binary(self, binding, call) -> bool:
            a, b = call.args
            shape = static_shape(binding.var)
            # The blocked operand of the result's shape sets the block; the other may be a
            # blocked per-channel vector (squeeze-excite's scale: ``s * x``, ``s`` first).
            source = next((arg for arg in (a, b) if arg in self.blocked
                           and static_shape(arg) == shape), None)
            if shape is None:
                return False
            if source is None:
                return self.padded.binary(binding, call, shape)
            block = self.blocked[source][1]
            operands = [self._channel_operand(arg, shape[1], block) for arg in (a, b)]
            if any(o is None for o in operands):
                return False
            out = relax.Call(call.op, operands, call.attrs)
            self._bind(binding, out, block)
            return True

        def _concat(self, binding, call) -> bool:
            """Blocked tensors joined along the channels (SqueezeNet's Fire modules): the
            channel blocks are joined along the block axis when every part, and the
            result, use the same block -- then channel ``c`` is where it would be; an NCHW
            part may join, blocked once (``channel_blocks.nchw_part_joins``)."""
            parts = call.args[0]
            parts = self.tuples.get(parts, parts)
            shape = static_shape(binding.var)
            if not isinstance(parts, relax.Tuple) or shape is None or len(shape) != 4 \
                    or int(call.attrs.axis) % 4 != 1:
                return False
            block = channel_block(shape[1], self.lanes)
            known = [self.blocked.get(p) for p in parts.fields]
            if not any(known) or not all(k[1] == block if k else nchw_part_joins(p, block)
                                         for p, k in zip(parts.fields, known)):
                return False
            blocked = relax.Tuple([self._blocked_input(p, block) for p in parts.fields])
            self._bind(binding, R.concat(blocked, axis=1), block)
            self.joins[binding.var] = list(blocked.fields)
            return True

        def _global_mean(self, binding, call) -> bool:
            """The mean over the image (a global average pool: squeeze-excite's first
            step, the pool before a classifier) of a blocked tensor, taken over the
            blocked tensor's ``h, w``: with ``keepdims`` it stays blocked; without, the
            ``(n, C/x, x)`` result is the ``(n, C)`` one in order, a reshape away."""
            (x,) = call.args
            axes = call.attrs.axis
            if axes is None or sorted(int(a) % 4 for a in axes) != [2, 3]:
                return False
            if x in self.padded:
                return self.padded.mean(binding, x)
            if x not in self.blocked:
                return False
            xb, block = self.blocked[x]
            if call.attrs.keepdims:
                self._bind(binding, R.mean(xb, axis=[2, 3], keepdims=True), block)
                return True
            mean = self.builder_.emit(R.mean(xb, axis=[2, 3]))
            flat = self.builder_.normalize(R.reshape(mean, static_shape(binding.var)))
            self.builder_.emit_normalized(relax.VarBinding(binding.var, flat))
            self.changed = True
            return True

        def _pool2d(self, binding, call) -> bool:
            """A max or average pooling over the blocked tensor, where ``blocked_pool``
            keeps it blocked."""
            (x,) = call.args
            if POOL_PARTS and x in self.joins and self.uses.get(x) == 1:
                block = self.blocked[x][1]
                pooled = [blocked_pooling(call, p, block) for p in self.joins[x]]
                if None not in pooled:   # each channel pooled on its own: join after
                    pooled = relax.Tuple([self.builder_.emit(p) for p in pooled])
                    self._bind(binding, R.concat(pooled, axis=1), block)
                    return True
            out = blocked_pooling(call, *self.blocked[x]) if x in self.blocked else None
            if out is None:
                return False
            self._bind(binding, out, self.blocked[x][1])
            return True

    return Blocker


@functools.cache
def _blocker_class():
    """The mutator class, made on first use (defining it imports TVM)."""
    return _make_blocker()


def _Blocker(mod, lanes: int):
    return _blocker_class()(mod, lanes)


# --------------------------------------------------------------------------- lowering
def legalize_conv2d(bb, call):
    """LegalizeOps' rule for ``relax.nn.conv2d``: the blocked convolution as one loop nest
    (padding, then the reduction named ``BLOCK_NAME``), a 1x1 one in NCHW as a matmul
    (``pointwise_conv``), any other TVM's own way."""
    import tvm

    from .pointwise_conv import is_pointwise_nchw, legalize_pointwise

    a = call.attrs
    if not is_blocked(a.data_layout):
        if is_pointwise_nchw(call):
            return legalize_pointwise(bb, call)
        default = tvm.ir.Op.get("relax.nn.conv2d").get_attr("FLegalize")
        return default(bb, call)
    strides = [int(s) for s in a.strides]
    padding = [int(p) for p in a.padding]
    groups = int(a.groups)
    if groups != 1 and is_depthwise(call):
        return legalize_depthwise(bb, call, strides, padding)
    return bb.call_te(_conv2d_nchwc, call.args[0], call.args[1], strides=strides,
                      padding=padding, groups=groups,
                      primfunc_name_hint=BLOCK_NAME if groups == 1 else GROUPED_NAME)


def _conv2d_nchwc(data, kernel, strides, padding, groups=1):
    """``out[n, oc, y, x, o] = sum(pad(data)[n, ic, y*sh+ky, x*sw+kx, i] *
    kernel[oc, ic, ky, kx, i, o])`` over ``ic, ky, kx, i`` in that order.  Grouped
    (``grouped_conv``): output block ``oc`` reads input block ``g(oc) * group_icc + ic`` of
    its own group ``g(oc)``, ``group_icc`` being a group's input blocks (the kernel's)."""
    from tvm import te

    n, _, ih, iw, ib = data.shape
    occ, group_icc, kh, kw, _, ob = kernel.shape
    top, left, bottom, right = padding
    sh, sw = strides
    data = padded_at_border(data, padding, PAD_NAME)
    oh = (ih + top + bottom - kh) // sh + 1
    ow = (iw + left + right - kw) // sw + 1
    out_blocks_per_group = occ // groups

    def chunk(oc, rc):
        return rc if groups == 1 else oc // out_blocks_per_group * group_icc + rc

    rc = te.reduce_axis((0, group_icc), name="ic_chunk")
    ry = te.reduce_axis((0, kh), name="ky")
    rx = te.reduce_axis((0, kw), name="kx")
    ri = te.reduce_axis((0, ib), name="ic_block")
    return te.compute(
        (n, occ, oh, ow, ob),
        lambda b, oc, y, x, o: te.sum(
            data[b, chunk(oc, rc), y * sh + ry, x * sw + rx, ri] * kernel[oc, rc, ry, rx, ri, o],
            axis=[rc, ry, rx, ri]),
        name=BLOCK_NAME if groups == 1 else GROUPED_NAME, attrs={BLOCKED_OP: CONV2D})
