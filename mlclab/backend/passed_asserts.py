"""In-graph checks that constant folding has already decided, removed.

An imported model's computed indices are checked in the graph by a Relax ``assert_op``
(``frontend/torch_indices.py``), and TVM's VM runs every ``assert_op`` by calling back into
Python: the GIL, the condition converted to numpy, tens of microseconds a call.  Many such
indices are computed from constants only -- GPT-2's and BERT's position ids, ``arange``
plus the cache's fixed length -- and once ``FoldConstant`` has run the check's condition is
itself a constant.  A constant true condition can never fail, so its check is dropped (the
binding kept, bound to the empty tuple ``assert_op`` returns); a constant false one stays,
and fails at every call with its located message, as before.
"""
from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from .relax_exprs import is_constant

# What LegalizeOps makes of ``relax.assert_op`` (this pass runs after it): a call of this
# packed function, the condition first.
_PACKED_ASSERT = "relax.run.assert_op"


def _passed(call) -> bool:
    """Whether ``call`` is an ``assert_op`` whose condition is a constant, every element
    true."""
    if not (isinstance(call, relax.Call) and isinstance(call.op, relax.ExternFunc)
            and call.op.global_symbol == _PACKED_ASSERT and call.args):
        return False
    condition = call.args[0]
    if not is_constant(condition) or not isinstance(condition.value, tvm.runtime.Tensor):
        return False
    value = condition.value.numpy()
    return value.size > 0 and bool(np.all(value))


@relax.expr_functor.mutator
class _PassedAsserts(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.removed = 0

    def visit_var_binding_(self, binding):
        if _passed(binding.value):
            self.removed += 1
            self.builder_.emit_normalized(relax.VarBinding(binding.var, relax.Tuple([])))
            return
        super().visit_var_binding_(binding)


@tvm.transform.module_pass(opt_level=0, name="mlclab.DropPassedAsserts")
def drop_passed_asserts(mod, _ctx):
    """``mod`` without the ``assert_op`` calls whose condition is a constant true."""
    for gv, func in list(mod.functions_items()):
        if not isinstance(func, relax.Function):
            continue
        mutator = _PassedAsserts(mod)
        new = mutator.visit_expr(func)
        if mutator.removed:
            mod[gv] = new
    return mod
