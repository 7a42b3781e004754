"""The exercise of the chapter on writing a pass: the student's Relax pass, run inside mlclab's
pipeline (``mlclab.extra_passes``) on a program with identity operations, judged on the compiled
program's values against numpy's reference of the source (what ``mlclab.validate`` compares) and
on what the pass left in the program."""
import json
import warnings

import numpy as np

from ..spec import FAILED, Exercise, Misconception, Unanswered

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


def _compiled_with(my_pass):
    """``tidy`` compiled with ``my_pass`` in mlclab's pipeline (once per pass: the values and
    the evidence read the same build)."""
    import tvm
    from ...api import compile as compile_program
    from ...backend.extra_passes import extra_passes
    if not isinstance(my_pass, tvm.transform.Pass):
        raise Unanswered(f"`my_pass` should be a tvm.transform.Pass (a function decorated with "
                         f"@tvm.transform.module_pass), not {type(my_pass).__name__}.")
    if _BUILT.get("pass") is not my_pass:
        with warnings.catch_warnings():
            # A failing pass is said by the check, as the result.
            warnings.simplefilter("ignore")
            with extra_passes(my_pass):
                _BUILT.update({"pass": my_pass, "fn": compile_program(TIDY)["tidy"]})
    return _BUILT["fn"]


_BUILT: dict = {}


def _tidy_callables(my_pass, namespace):
    fn = _compiled_with(my_pass)
    failed = [f for f in fn.build_record.fallbacks if f.stage == my_pass.info.name]
    if failed:
        raise Unanswered("your pass raised while compiling `tidy`, so the build skipped it: "
                         f"{failed[0].error}", FAILED)
    return {"`tidy` compiled with your pass": fn}


def _after_the_pass(my_pass) -> str:
    """What the pass did to ``tidy``, as JSON text (a graded run carries this out): whether it
    changed the program, and the identity operations left right after it."""
    step = _compiled_with(my_pass).pipeline()[my_pass.info.name]
    return json.dumps({"changed": bool(step.changed), "left": identity_calls(step.mod["tidy"])})


def _identities_removed(after: str):
    facts = json.loads(after)
    if not facts["changed"]:
        return ("your pass left `tidy` unchanged: does it find the calls whose constant argument "
                "is the operator's neutral element (x * 1, 0 + x)?")
    if facts["left"]:
        return (f"after your pass, `tidy` still computes {'; '.join(map(str, facts['left']))}: "
                "the constant can be on either side of the operator.")
    return None


IDENTITY_PASS = Exercise(
    key="11-identity-pass", title="Lesson 11: a pass that removes identities", answer="my_pass",
    reference=TIDY, entry="tidy", adapt=_tidy_callables, submit="outputs",
    structure=[_identities_removed], evidence=_after_the_pass,
    misconceptions=[Misconception(lambda x, y: np.maximum(x + y, 0),
                                  "the rewritten `tidy` no longer computes what the program says: "
                                  "a rewrite may remove only operations that change nothing (is "
                                  "`b * 2.0` still there?).")],
    hints=["Start from the lesson's DivideByConstant: a PyExprMutator whose visit_call_ first "
           "visits the arguments (super().visit_call_), then looks at the call.",
           "For R.multiply with a scalar constant 1.0 argument, return the *other* argument; "
           "the same for R.add with 0.0. Check both argument positions.",
           "A scalar constant: isinstance(arg, tvm.ir.expr.Constant) and "
           "arg.value.numpy().ndim == 0; its value is float(arg.value.numpy())."],
)

EXERCISES = [IDENTITY_PASS]
