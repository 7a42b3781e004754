"""The exercise of the chapter on writing a pass: the student's Relax pass, run inside mlclab's
pipeline (``mlclab.extra_passes``) on a program with identity operations, judged on what it left
in the program and on ``mlclab.validate``."""
import warnings

import numpy as np

from ..spec import FAILED, Exercise, Unanswered

TIDY = """
def tidy(x: Tensor[(16, 16), f32], y: Tensor[(16, 16), f32]):
    a = x * 1.0
    b = 0.0 + a
    return relu(b * 2.0 + y)
"""
IDENTITIES = {"relax.multiply": 1.0, "relax.add": 0.0}


def identity_calls(func) -> list:
    """The calls in ``func`` that multiply by a scalar 1 or add a scalar 0, as text."""
    import tvm
    from tvm import relax
    found = []
    for block in func.body.blocks:
        for binding in block.bindings:
            call = binding.value
            if not isinstance(call, relax.Call) or not isinstance(call.op, tvm.ir.Op):
                continue
            neutral = IDENTITIES.get(call.op.name)
            for arg in call.args:
                if neutral is not None and isinstance(arg, tvm.ir.expr.Constant) and \
                        arg.value.numpy().ndim == 0 and float(arg.value.numpy()) == neutral:
                    op = call.op.name.split(".")[-1]
                    found.append(f"{binding.var.name} = {op}(..., {neutral})")
    return found


def _judge_pass(my_pass, namespace):
    import tvm
    from ...api import compile as compile_program
    from ...api.validation import validate
    from ...backend.extra_passes import extra_passes
    if not isinstance(my_pass, tvm.transform.Pass):
        raise Unanswered(f"`my_pass` should be a tvm.transform.Pass (a function decorated with "
                         f"@tvm.transform.module_pass), not {type(my_pass).__name__}.")
    name = my_pass.info.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # a failing pass is said below, as the result
        with extra_passes(my_pass):
            fn = compile_program(TIDY)["tidy"]
    failed = [f for f in fn.build_record.fallbacks if f.stage == name]
    if failed:
        return ("your pass raised while compiling `tidy`, so the build skipped it: "
                f"{failed[0].error}")
    step = fn.pipeline()[name]
    if not step.changed:
        return ("your pass left `tidy` unchanged: does it find the calls whose constant argument "
                "is the operator's neutral element (x * 1, 0 + x)?")
    left = identity_calls(step.mod["tidy"])
    if left:
        return (f"after your pass, `tidy` still computes {'; '.join(left)}: the constant can be "
                "on either side of the operator.")
    rng = np.random.default_rng(14)
    x, y = (rng.standard_normal((16, 16)).astype("float32") for _ in range(2))
    report = validate(fn, x, y)
    if not report.ok:
        return ("the rewritten `tidy` no longer computes what the program says: a rewrite may "
                "remove only operations that change nothing (is `b * 2.0` still there?).")
    return None


IDENTITY_PASS = Exercise(
    key="14-identity-pass", title="Lesson 14: a pass that removes identities", answer="my_pass",
    reference=None, judge=_judge_pass,
    hints=["Start from the lesson's DivideByConstant: a PyExprMutator whose visit_call_ first "
           "visits the arguments (super().visit_call_), then looks at the call.",
           "For R.multiply with a scalar constant 1.0 argument, return the *other* argument; "
           "the same for R.add with 0.0. Check both argument positions.",
           "A scalar constant: isinstance(arg, tvm.ir.expr.Constant) and "
           "arg.value.numpy().ndim == 0; its value is float(arg.value.numpy())."],
)

EXERCISES = [IDENTITY_PASS]
