"""Inference batch norm folded away at compile time.

``torch.export`` + ``from_exported_program`` turn an eval-mode ``nn.BatchNorm2d`` into
``R.nn.batch_norm(x, gamma, beta, mean, var, axis=1, training=False)`` -- a tuple -- and an
item ``[0]``, with the four statistics as constants.  In inference that is a per-channel
affine map ``x * s + t`` with ``s = gamma / sqrt(var + eps)`` and ``t = beta - mean * s``,
and when ``x`` is a convolution with a constant weight used by nothing else, the scale goes
into the weight (``w[o] * s[o]``) and only a bias add is left, which the convolution's
kernel applies in its epilogue: ResNet-18's 20 batch norms cost nothing at run time.

``fold_batchnorm`` does exactly that, computing ``s`` and ``t`` with numpy in float64;
a batch norm whose statistics are not constants, that is in training mode, or whose other
tuple items are read, is left as it was.
"""
from __future__ import annotations

import functools

from .relax_exprs import is_constant, op_name


def fold_batchnorm():
    """A module pass folding every foldable inference batch norm (see the module doc)."""
    import tvm
    from tvm import relax

    @tvm.transform.module_pass(opt_level=0, name="mlclab.FoldBatchNorm")
    def fold(mod, _ctx):
        updates = {}
        for gv, func in mod.functions_items():
            block = (single_dataflow_block(func) if isinstance(func, relax.Function)
                     else None)
            if block is None or not any(op_name(b.value) == "relax.nn.batch_norm"
                                        for b in block.bindings):
                continue
            uses = _uses(func)
            plans = {var: plan for var, plan in _plans(func, uses).items() if plan is not None}
            if not plans:
                continue
            new = _folder_class()(mod, plans).visit_expr(func)
            updates[gv] = relax.analysis.remove_all_unused(new)
        return with_functions(mod, updates)

    return fold


def with_functions(mod, updates: dict):
    """``mod`` with the functions in ``updates`` (global var -> function) replaced: what the
    graph rewrites here and in ``conv_layout`` return."""
    import tvm

    if not updates:
        return mod
    funcs = {gv: updates.get(gv, f) for gv, f in mod.functions_items()}
    return tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)


def rewrite_matched_bindings(mod, find, kernel_call):
    """``mod`` with each binding ``find(block)`` matches (``{var: match}`` over a function's
    single dataflow block) rebound to one kernel: ``kernel_call(match)`` gives ``(prim_func,
    name, args)``, and the binding becomes ``call_tir`` of that PrimFunc (added to the module
    under a name unique in it) on ``args``.  What the rewrite leaves unused is removed.
    ``mod`` itself where nothing matches."""
    from tvm import relax

    found = {}
    for gv, func in mod.functions_items():
        block = single_dataflow_block(func) if isinstance(func, relax.Function) else None
        matches = find(block) if block is not None else None
        if matches:
            found[gv] = matches
    if not found:
        return mod
    # one mutator for the module: the kernels it adds get names unique in it
    mutator = _rebinder_class()(mod, {v: m for ms in found.values() for v, m in ms.items()},
                                kernel_call)
    updates = {gv: relax.analysis.remove_all_unused(mutator.visit_expr(mod[gv]))
               for gv in found}
    out = with_functions(mod, updates)
    for gv, func in mutator.builder_.get().functions_items():
        if gv not in out:   # the kernels added
            out[gv] = func
    return out


def _make_rebinder():
    from tvm import relax

    @relax.expr_functor.mutator
    class Rebinder(relax.PyExprMutator):
        """Binds each matched var to its kernel's call (what it was computed from left
        dead), every other binding as it was."""

        def __init__(self, mod, matches: dict, kernel_call):
            super().__init__(mod)
            self.matches, self.kernel_call = matches, kernel_call

        def visit_var_binding_(self, binding):
            match = self.matches.get(binding.var)
            if match is None:
                super().visit_var_binding_(binding)
                return
            func, name, args = self.kernel_call(match)
            gv = self.builder_.add_func(func, name)
            call = relax.call_tir(gv, [self.visit_expr(a) for a in args], binding.var.ty)
            self.builder_.emit_normalized(relax.VarBinding(binding.var,
                                                           self.builder_.normalize(call)))

    return Rebinder


@functools.cache
def _rebinder_class():
    """The mutator class, made on first use (defining it imports TVM)."""
    return _make_rebinder()


def binding_uses(block) -> dict:
    """var -> how many bindings of the dataflow ``block`` read it."""
    from tvm import relax

    uses: dict = {}
    for b in block.bindings:
        for var in relax.analysis.free_vars(b.value):
            uses[var] = uses.get(var, 0) + 1
    return uses


def single_dataflow_block(func):
    """The one dataflow block of ``func``'s body (as torch.export's and most DSL functions
    have), or None.  The graph rewrites here and in ``conv_layout`` only touch such
    functions: every value they move is then in scope wherever they use it."""
    from tvm import relax

    body = func.body
    if not isinstance(body, relax.SeqExpr) or len(body.blocks) != 1:
        return None
    block = body.blocks[0]
    if not isinstance(block, relax.DataflowBlock):
        return None
    if any(isinstance(b.value, (relax.If, relax.SeqExpr, relax.Function)) for b in block.bindings):
        return None
    return block


def _uses(func) -> dict:
    """var -> the values (bindings' right-hand sides, or the function's result) reading it."""
    from tvm import relax

    uses: dict = {}
    for value in [b.value for b in single_dataflow_block(func).bindings] + [func.body.body]:
        seen = set()

        def record(node, value=value, seen=seen):
            if isinstance(node, relax.Var) and node not in seen:
                seen.add(node)
                uses.setdefault(node, []).append(value)

        relax.analysis.post_order_visit(value, record)
    return uses


def _plans(func, uses) -> dict:
    """For each batch-norm var that folds: (its input, scale, shift, the conv folded into
    or None)."""
    from tvm import relax

    values = relax.analysis.get_var2val(func)
    plans = {}
    for var, value in values.items():
        if op_name(value) != "relax.nn.batch_norm":
            continue
        plans[var] = _plan(value, values, uses, var)
    return plans


def _plan(call, values, uses, var):
    import numpy as np
    from tvm import relax

    a = call.attrs
    x, *stats = call.args
    ty = x.ty
    if bool(a.training) or not isinstance(ty, relax.TensorType) or ty.ndim != 4 \
            or int(a.axis) not in (1, -3) or str(ty.dtype) != "float32":
        return None
    if not all(is_constant(s) for s in stats):
        return None
    users = uses.get(var, [])
    if len(users) != 1 or not (isinstance(users[0], relax.TupleGetItem)
                               and int(users[0].index) == 0):
        return None
    gamma, beta, mean, variance = (s.value.numpy().astype(np.float64) for s in stats)
    if not a.scale:
        gamma = np.ones_like(gamma)
    if not a.center:
        beta = np.zeros_like(beta)
    scale = gamma / np.sqrt(variance + float(a.epsilon))
    shift = beta - mean * scale
    conv = values.get(x) if isinstance(x, relax.Var) else None
    if not (_foldable_conv(conv) and len(uses.get(x, [])) == 1
            and int(conv.args[1].ty.shape.values[0]) == scale.shape[0]):
        conv = None
    return x, scale, shift, conv


def _foldable_conv(value) -> bool:
    """A convolution whose output channels are axis 1 and whose weight is a constant with
    output channels first (so a per-channel scale is a per-filter scale)."""
    if op_name(value) != "relax.nn.conv2d":
        return False
    a = value.attrs
    return (a.out_layout == "NCHW" and a.kernel_layout == "OIHW" and is_constant(value.args[1])
            and str(value.args[1].ty.dtype) == "float32")




@functools.cache
def _folder_class():
    from tvm import relax
    from tvm.relax import op as R

    @relax.expr_functor.mutator
    class Folder(relax.PyExprMutator):
        """Replaces ``bn[0]`` by ``conv(x, w * s) + t`` or ``x * s + t``; the batch norm
        and the old convolution become dead code."""

        def __init__(self, mod, plans):
            super().__init__(mod)
            self.plans = plans

        def visit_var_binding_(self, binding):
            value = binding.value
            plan = (self.plans.get(value.tuple_value)
                    if isinstance(value, relax.TupleGetItem) else None)
            if plan is None:
                super().visit_var_binding_(binding)
                return
            x, scale, shift, conv = plan
            channels = (1, scale.shape[0], 1, 1)
            if conv is not None:
                weight = conv.args[1].value.numpy()
                folded = (weight * scale.reshape(-1, 1, 1, 1)).astype(weight.dtype)
                a = conv.attrs
                # Under the old convolution's name: the views follow a value through the
                # pipeline by name, so the folded conv keeps its line (its PyTorch module).
                y = self.builder_.emit(R.nn.conv2d(
                    self.visit_expr(conv.args[0]), relax.const(folded), strides=a.strides,
                    padding=a.padding, dilation=a.dilation, groups=a.groups,
                    data_layout=a.data_layout, kernel_layout=a.kernel_layout,
                    out_layout=a.out_layout, out_dtype=a.out_dtype), x.name)
            else:
                y = self.builder_.emit(R.multiply(
                    self.visit_expr(x), relax.const(scale.reshape(channels).astype("float32"))))
            out = self.builder_.normalize(
                R.add(y, relax.const(shift.reshape(channels).astype("float32"))))
            self.builder_.emit_normalized(relax.VarBinding(binding.var, out))

    return Folder
