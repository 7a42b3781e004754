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

from .fold_kernels import tvm_op

# What LegalizeOps makes of ``relax.assert_op``: a call of this packed function, the condition
# first.
_PACKED_ASSERT = "relax.run.assert_op"


def _is_assert(call) -> bool:
    op = call.op
    if isinstance(op, relax.ExternFunc):
        return op.global_symbol == _PACKED_ASSERT
    return op.same_as(tvm_op("relax.assert_op"))


def _always_true(condition, values: dict) -> bool:
    """Whether ``condition`` (an ``assert_op``'s first argument) is a constant whose every
    element is true."""
    from tvm.ir.expr import Constant

    if isinstance(condition, relax.Var):
        condition = values.get(condition, condition)
    if not isinstance(condition, Constant) or not isinstance(condition.value,
                                                              tvm.runtime.Tensor):
        return False
    value = condition.value.numpy()
    return value.size > 0 and bool(np.all(value))


@relax.expr_functor.mutator
class _PassedAsserts(relax.PyExprMutator):
    def __init__(self, mod, values: dict):
        super().__init__(mod)
        self.values = values
        self.removed = 0

    def visit_var_binding_(self, binding):
        call = binding.value
        if (isinstance(call, relax.Call) and _is_assert(call) and call.args
                and _always_true(call.args[0], self.values)):
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
        mutator = _PassedAsserts(mod, relax.analysis.get_var2val(func))
        new = mutator.visit_expr(func)
        if mutator.removed:
            mod[gv] = new
    return mod
