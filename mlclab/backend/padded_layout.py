"""Convolutions whose output channels are padded to whole vectors, and the per-channel
operators after them, for the layout pass (``conv_layout``).

When a convolution's channel block is a vector cut in pieces (SqueezeNet's 1000 classes
are blocks of 10 on AVX-512), ``channel_blocks.padded_channels`` computes it with its output
channels padded to whole vectors by zero weights: 1000 -> 1008 in blocks of 16.  The padded
value stays blocked through what reads each channel on its own -- an activation, a bias or a
folded batch norm's shift (a constant padded with zeros), the mean over the image -- and is
sliced to its own channels where it leaves: the mean's ``(n, C')`` result, or the NCHW view
(transformed back, sliced) that any other consumer reads.  Each own channel is the same
expression of the same values as unpadded, so the results are the same bits; the padded
channels (zero weights: 0, or NaN from an infinite input) are never read across channels and
are sliced off.  SqueezeNet's classifier was a transform of the whole 1008 x 13 x 13 map, a
slice with the bias and the ReLU, and the mean in NCHW (82 us at one thread); now the bias and
the ReLU are the convolution's epilogue and the mean is taken blocked (3.4 us).
"""
from __future__ import annotations

import math

from .channel_blocks import index_maps, padded_channels
from .grouped_conv import ConvBlocks, blocked_weight_value
from .relax_exprs import is_constant, op_name, static_shape

# Whether a padded value stays padded through its per-channel consumers (off: every consumer
# reads the NCHW view, transformed back and sliced, as before this switch).
KEEP_PADDED = True


def padded_width(call, blocks, lanes: int):
    """The output channels a convolution is computed with when its channel block is a
    vector cut in pieces (``channel_blocks.padded_channels``) -- with a constant weight
    (padded with zeros here) and no groups; else None."""
    if int(call.attrs.groups) != 1 or not is_constant(call.args[1]):
        return None
    return padded_channels(int(static_shape(call.args[1])[0]), blocks.out, lanes)


class PaddedValues:
    """The layout pass's padded values -- original var -> (its padded blocked value, its
    own channel count) -- and the rewrites that make and keep them, for the pass's
    mutator (``conv_layout``'s ``Blocker``), whose builder they emit into."""

    def __init__(self, mutator):
        self.mutator = mutator
        self.values = {}

    def __contains__(self, var) -> bool:
        """Whether ``var`` has a padded value its consumers may read (``KEEP_PADDED``)."""
        return KEEP_PADDED and var in self.values

    def conv2d(self, binding, call, blocks, padded: int) -> bool:
        """The convolution with its output channels padded to ``padded`` (whole vectors)
        by zero weights (``padded_width`` says when)."""
        import numpy as np
        from tvm import relax
        from tvm.relax import op as R

        x, w = call.args
        a = call.attrs
        weight = w.value.numpy()
        extra = np.zeros((padded - weight.shape[0], *weight.shape[1:]), weight.dtype)
        wide = ConvBlocks(blocks.data, blocks.weight_in, self.mutator.lanes)
        wb = relax.const(blocked_weight_value(np.concatenate([weight, extra]), wide))
        data_layout, kernel_layout, out_layout = wide.layouts()
        out = self.mutator.builder_.emit(R.nn.conv2d(
            self.mutator._blocked_input(x, blocks.data), wb, strides=a.strides,
            padding=a.padding, dilation=a.dilation, groups=a.groups,
            data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
            out_dtype="float32"), f"{binding.var.name}_padded")
        self._bind(binding, out, int(weight.shape[0]))
        return True

    def _bind(self, binding, padded_value, channels: int):
        """Bind ``padded_value`` and keep ``binding.var`` as its NCHW view, sliced to its
        own ``channels`` (dead code unless an operator without a padded form reads it)."""
        from tvm import relax
        from tvm.relax import op as R

        if not isinstance(padded_value, relax.Var):
            padded_value = self.mutator.builder_.emit(padded_value)
        _, back = index_maps(self.mutator.lanes)
        nchw = self.mutator.builder_.emit(R.layout_transform(padded_value, index_map=back))
        own = self.mutator.builder_.normalize(R.strided_slice(
            nchw, axes=[1], begin=[0], end=[channels]))
        self.mutator.builder_.emit_normalized(relax.VarBinding(binding.var, own))
        self.values[binding.var] = (padded_value, channels)
        self.mutator.changed = True

    def unary(self, binding, call) -> bool:
        """An activation (of one tensor, no other operand) of a padded value."""
        from tvm import relax

        xb, channels = self.values[call.args[0]]
        self._bind(binding, relax.Call(call.op, [xb], call.attrs), channels)
        return True

    def binary(self, binding, call, shape) -> bool:
        """A padded value and a scalar or a constant per-channel vector (a bias, a folded
        batch norm's shift), the vector padded with zeros; anything else (another tensor
        of the value's shape, a vector computed at run time) reads the NCHW view."""
        import numpy as np
        from tvm import relax

        source = next((arg for arg in call.args if arg in self
                       and static_shape(arg) == shape), None)
        if source is None:
            return False
        xb, channels = self.values[source]
        wide = int(static_shape(xb)[1]) * self.mutator.lanes
        operands = []
        for arg in call.args:
            arg_shape, value = static_shape(arg), self._constant(arg)
            if arg.same_as(source):
                operands.append(xb)
            elif arg_shape is not None and len(arg_shape) == 0:
                operands.append(self.mutator.visit_expr(arg))
            elif value is not None and len(arg_shape) in (3, 4) and \
                    arg_shape[-3] == channels and math.prod(arg_shape) == channels:
                value = np.concatenate([value.reshape(channels),
                                        np.zeros(wide - channels, value.dtype)])
                operands.append(relax.const(value.reshape(
                    1, wide // self.mutator.lanes, 1, 1, self.mutator.lanes)))
            else:
                return False
        self._bind(binding, relax.Call(call.op, operands, call.attrs), channels)
        return True

    def _constant(self, arg):
        """``arg``'s value if it is a constant or a reshaped one (how the importer gives a
        convolution's bias), else None."""
        from tvm import relax

        if isinstance(arg, relax.Var):
            bound = self.mutator.lookup_binding(arg)
            if bound is not None and op_name(bound) == "relax.reshape":
                arg = bound.args[0]
        return arg.value.numpy() if is_constant(arg) else None

    def mean(self, binding, x) -> bool:
        """The mean over the image of a padded value (SqueezeNet's classifier), taken
        blocked: ``(n, C'/x, x)`` is ``(n, C')`` in order, sliced to its own channels
        there -- 1/(h w) of the map -- instead of the whole map transformed and sliced."""
        from tvm import relax
        from tvm.relax import op as R

        xb, channels = self.values[x]
        n, blocks = static_shape(xb)[:2]
        mean = self.mutator.builder_.emit(R.mean(xb, axis=[2, 3]))
        flat = self.mutator.builder_.emit(R.reshape(mean, (n, blocks * self.mutator.lanes)))
        own = R.strided_slice(flat, axes=[1], begin=[0], end=[channels])
        shape = static_shape(binding.var)
        if len(shape) != 2:
            own = R.reshape(self.mutator.builder_.emit(own), shape)
        self.mutator.builder_.emit_normalized(
            relax.VarBinding(binding.var, self.mutator.builder_.normalize(own)))
        self.mutator.changed = True
        return True
