"""Constant kernels computed at compile time in batches: FoldConstant's work, one LLVM build
for them all instead of one per call.

After legalization, a ``call_tir`` whose inputs are all constants -- a convolution's bias
reshaped to ``(1, C, 1, 1)``, BERT's position ids sliced and range-checked, an attention mask
built from ones -- is computed once at compile time by TVM's ``FoldConstant``, which builds
each such kernel as a module of its own: TIR lowering, LLVM code generation and JIT for every
call, ~60-110 ms each.  EfficientNet-B0 has 53 of them (3-6 s of its compile), BERT-base 54.

``fold_constant_kernels`` does the same evaluation first: every call whose inputs are
constants, or values of such calls (a chain, BERT's is ten calls deep), has its kernel
compiled into one module, built once, and each call is run once, in order.  The values are the ones
``FoldConstant`` computes -- the same kernels, built for the same target, run the same way --
and ``FoldConstant`` still runs after it, for whatever this pass leaves (a kernel with a
tuple output or a symbolic size).
"""
from __future__ import annotations

def fold_constants():
    """``FoldConstant`` as the pipeline runs it: this module's batched evaluation, then TVM's
    pass for what it leaves.  Named as TVM's, since it does TVM's job with TVM's results."""
    import tvm
    from tvm import relax

    batched = fold_constant_kernels()

    @tvm.transform.module_pass(opt_level=0, name="FoldConstant")
    def fold(mod, _ctx):
        return relax.transform.FoldConstant()(batched(mod))

    return fold


def fold_constant_kernels():
    """A module pass computing every all-constant ``call_tir`` at compile time (module doc)."""
    import tvm

    @tvm.transform.module_pass(opt_level=0, name="mlclab.FoldConstantKernels")
    def fold(mod, _ctx):
        plans = {gv: plan for gv, plan in
                 ((gv, _constant_calls(mod, f)) for gv, f in mod.functions_items()) if plan}
        if not plans:
            return mod
        return _with_values(mod, _evaluate(mod, plans))

    return fold


def _constant_calls(mod, func) -> list:
    """The ``call_tir`` bindings of Relax function ``func`` computable at compile time, in
    order, as ``(var, callee, inputs, output type)``: each input is a constant's tensor or
    the var of an earlier call of the list.  A call without inputs (``full``, ``arange``)
    is left alone, as ``FoldConstant`` leaves it: it would only turn a cheap kernel into a
    large constant."""
    from tvm import relax, tirx
    from tvm.ir.expr import Constant

    if not isinstance(func, relax.Function):
        return []
    call_tir = tvm_op("relax.call_tir")
    values = relax.analysis.get_var2val(func)
    plan, computed = [], set()

    def operand(arg):
        """A constant's tensor, the var of a computed call, or None."""
        if isinstance(arg, relax.Var) and arg in computed:
            return arg
        arg = values.get(arg, arg) if isinstance(arg, relax.Var) else arg
        return arg.value if isinstance(arg, Constant) else None

    for block in func.body.blocks:
        for b in block.bindings:
            call = b.value
            if not (isinstance(b, relax.VarBinding) and isinstance(call, relax.Call)
                    and call.op.same_as(call_tir) and len(call.args) == 2):
                continue
            callee, args = call.args
            fields = list(args.fields) if isinstance(args, relax.Tuple) else [args]
            if not (fields and isinstance(mod[callee], tirx.PrimFunc) and _static(b.var.ty)):
                continue
            inputs = [operand(a) for a in fields]
            if all(i is not None for i in inputs):
                plan.append((b.var, callee, inputs, b.var.ty))
                computed.add(b.var)
    return plan


def _static(ty) -> bool:
    """A tensor type of known shape and dtype: an output this pass can allocate."""
    from tvm import relax

    return (isinstance(ty, relax.TensorType) and ty.shape is not None
            and hasattr(ty.shape, "values")
            and all(getattr(d, "value", None) is not None for d in ty.shape.values))


def _evaluate(mod, plans: dict) -> dict:
    """function's GlobalVar -> {var: its computed value (a TVM tensor)}: every kernel the
    plans call built in one module, for the target the build is for, and run in order."""
    import tvm

    callees = {callee for plan in plans.values() for _, callee, _, _ in plan}
    names = {callee: f"mlclab_fold_{i}" for i, callee in enumerate(callees)}
    kernels = tvm.IRModule({tvm.ir.GlobalVar(name): mod[callee].with_attr("global_symbol", name)
                            for callee, name in names.items()})
    target = tvm.target.Target.current() or tvm.target.Target("llvm")
    library = tvm.tirx.build(kernels, target=target)
    device = tvm.cpu(0)
    values: dict = {}
    for gv, plan in plans.items():
        computed = values.setdefault(gv, {})
        for var, callee, inputs, out in plan:
            shape = [int(d.value) for d in out.shape.values]
            result = tvm.runtime.empty(shape, str(out.dtype), device)
            library[names[callee]](*[computed.get(i, i) if isinstance(i, tvm.relax.Var)
                                     else i for i in inputs], result)
            computed[var] = result
    return values


def _with_values(mod, values: dict):
    """``mod`` with each folded binding bound to its computed constant."""
    from tvm import relax

    from .fold_batchnorm import with_functions

    updates = {}
    for gv, folded in values.items():
        func = mod[gv]
        blocks = []
        for block in func.body.blocks:
            bindings = [relax.VarBinding(b.var, relax.const(folded[b.var]))
                        if b.var in folded else b for b in block.bindings]
            blocks.append(type(block)(bindings))
        body = relax.SeqExpr(blocks, func.body.body)
        updates[gv] = relax.Function(func.params, body, func.ret_ty, func.is_pure, func.attrs)
    return with_functions(mod, updates)


def tvm_op(name: str):
    import tvm

    return tvm.ir.Op.get(name)
