"""A function rewritten to also return every top-level binding: validation's view inside a
model that was not built from a typed program (an imported PyTorch model).

The result is ``(original result, (binding, binding, ...))``, the shape the DSL builder's
traced build has, so one reader (``CompiledFunction.trace``) serves both.
"""
from __future__ import annotations

from ..tvm_setup import tvm


def traced_module(mod, name: str):
    """``mod`` with function ``name`` also returning its top-level tensor bindings."""
    from tvm import relax

    tvm()
    # Dataflow variables cannot leave their block; plain variables can. The other functions
    # stay: torch.cond's branches are called from ``name``.
    func = relax.transform.ToNonDataflow()(tvm().IRModule({name: mod[name]}))[name]
    seq = func.body
    values = [b.var for block in seq.blocks for b in block.bindings
              if isinstance(b.var.ty, relax.TensorType)]
    body = relax.SeqExpr(seq.blocks, relax.Tuple([seq.body, relax.Tuple(values)]))
    ret = relax.TupleType([func.ret_ty, relax.TupleType([v.ty for v in values])])
    traced = relax.Function(func.params, body, ret, func.is_pure, func.attrs)
    funcs = {gv: (traced if gv.name_hint == name else f) for gv, f in mod.functions_items()}
    return relax.transform.Normalize()(tvm().IRModule(funcs, attrs=mod.attrs))
