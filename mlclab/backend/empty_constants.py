"""Zero-element constants, made at run time instead of stored.

TVM 0.27 folds ``zeros((5, 0))`` into a constant, and its VM executable cannot load an empty
constant back ("Invalid DLTensor file format" at the first call): a program returning an
empty tensor compiled and then failed inside TVM.  This pass, run just before the VM's
finalization, replaces every zero-element constant by an allocation of its shape and dtype,
which holds nothing to initialise, so nothing is lost.
"""
from __future__ import annotations

import tvm
from tvm import relax


@relax.expr_functor.mutator
class _EmptyConstants(relax.PyExprMutator):
    # TVM 0.27: constants are ``tvm.ir.GenericConst`` (a tensor in ``.value``, or a scalar)
    def visit_generic_const_(self, op):
        value = op.value
        if not isinstance(value, tvm.runtime.Tensor) or 0 not in value.shape:
            return op
        # runtime_device_index 0: the CPU, the one device mlclab builds for
        return relax.op.builtin.alloc_tensor(relax.ShapeExpr([int(d) for d in value.shape]),
                                             str(value.dtype), 0)


@tvm.transform.module_pass(opt_level=0, name="MakeEmptyConstantsAtRunTime")
def make_empty_constants_at_run_time(mod, _ctx):
    """Every zero-element ``relax.Constant`` of ``mod`` as an allocation of its shape."""
    for gv, func in list(mod.functions.items()):
        if isinstance(func, relax.Function):
            mutator = _EmptyConstants(mod)
            mod[gv] = mutator.visit_expr(func)
    return mod
