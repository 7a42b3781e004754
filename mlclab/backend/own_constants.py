"""The last Relax pass of every pipeline: constants that read a PyTorch module's memory
(weights lent by the importer, ``frontend.borrowed``) replaced by copies, so that the
executable owns everything it keeps -- training or freeing the module afterwards cannot
change it -- while what the passes before re-laid out (packed panels, blocked or folded
weights: new memory already) is never copied first. Outside the program's own build of an
imported model (a DSL program; a traced build, which reads the weights in place and checks
them at every use) nothing is lent and the pass returns the module as it is.
"""
from __future__ import annotations

import tvm
from tvm import relax

from ..frontend import borrowed


@relax.expr_functor.mutator
class _Owner(relax.PyExprMutator):
    def __init__(self, mod, loans):
        super().__init__(mod)
        self.loans = loans

    # TVM 0.27: constants are ``tvm.ir.GenericConst`` (a tensor in ``.value``, or a scalar)
    def visit_generic_const_(self, op):
        value = op.value
        if not isinstance(value, tvm.runtime.Tensor):
            return op
        owned = self.loans.owned(value)
        return op if owned.same_as(value) else relax.const(owned)


@tvm.transform.module_pass(opt_level=0, name="mlclab.OwnConstants")
def own_constants(mod, _ctx):
    """Every constant of ``mod`` reading lent memory, as the model's copy of it."""
    loans = borrowed.active()
    if not loans:
        return mod
    for gv, func in list(mod.functions.items()):
        if isinstance(func, relax.Function):
            mod[gv] = _Owner(mod, loans).visit_expr(func)
    return mod
