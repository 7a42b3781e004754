"""The exercises about the compiler and imported models (lessons 8 and 9)."""
import numpy as np

from ..spec import GRADED_EXTRAS, Exercise, Unanswered

NORM = """
def norm(x: Tensor[(64, 32), f32], g: Tensor[(32,), f32]):
    centered = x - mean(x, axis=1, keepdims=True)
    scaled = centered * g
    return relu(scaled) + 1.0
"""


def fused_group_count(source: str, name: str) -> int:
    """How many functions FuseOps makes for ``name`` (each is one kernel after FuseTIR)."""
    from tvm import relax
    from ...api import compile as compile_program
    mod = compile_program(source)[name].pipeline()["FuseOps"].mod
    return sum(1 for func in mod.functions.values()
               if isinstance(func, relax.Function) and func.attrs is not None
               and "Primitive" in func.attrs)


def _judge_groups(predicted, namespace):
    if isinstance(predicted, bool) or not isinstance(predicted, (int, np.integer)):
        raise Unanswered("`predicted_groups` should be a whole number, "
                         f"not {type(predicted).__name__}.")
    actual = fused_group_count(NORM, "norm")
    if predicted == actual:
        return None
    # Never the number itself: only which way to think.
    if predicted > actual:
        return (f"FuseOps makes fewer groups than {predicted}: elementwise and broadcast "
                "operators after a matmul-like anchor (pattern 4) join its group as an epilogue; "
                "how is `mean` legalized, and what pattern does that PrimFunc get?")
    return (f"FuseOps makes more groups than {predicted}: look for an operator that cannot join "
            "its neighbour's group.")


FUSED_GROUPS = Exercise(
    key="08-fused-groups", title="Lesson 8: predict where fusion stops", answer="predicted_groups",
    reference=None, judge=_judge_groups,
    hints=["Label each PrimFunc with its pattern: elementwise, broadcast, injective, reduction, "
           "out-elementwise-fusable. `mean` is legalized as one PrimFunc: what does it compute?",
           "A pure reduction ends its group; a PrimFunc that reduces and then computes "
           "elementwise is labelled out-elementwise-fusable, and elementwise work after it "
           "attaches as an epilogue.",
           "Does anything in `norm` force a second anchor?"],
)


def _gate_callables(gate_fixed, namespace):
    import torch
    from ...api.torch_model import from_torch
    if not isinstance(gate_fixed, type) or not issubclass(gate_fixed, torch.nn.Module):
        raise Unanswered("`GateFixed` should be an nn.Module class.")
    gate = namespace.get("Gate")
    if gate is None:
        raise Unanswered("`Gate` is not defined: run the lesson's cells above the exercise "
                         "first.")
    original = gate()
    fixed = gate_fixed()
    # A graded run draws the weights itself (the reference is then computed outside the notebook).
    graded = namespace.get(GRADED_EXTRAS)
    if graded:
        state = {"fc.weight": torch.from_numpy(graded["weight"]),
                 "fc.bias": torch.from_numpy(graded["bias"])}
    else:
        state = original.state_dict()
    try:
        fixed.load_state_dict(state)
    except Exception as exc:
        raise Unanswered("GateFixed must keep Gate's layers (the check copies Gate's weights): "
                         f"{exc}")
    compiled = from_torch(fixed, torch.randn(2, 4))
    weight, bias = (fixed.fc.weight.detach().numpy(), fixed.fc.bias.detach().numpy())
    return {"your compiled `GateFixed`": (compiled, lambda x: _gate_reference(x, weight, bias))}


def _gate_weights(rng):
    return {"weight": rng.uniform(-0.5, 0.5, (4, 4)).astype("float32"),
            "bias": rng.uniform(-0.5, 0.5, (4,)).astype("float32")}


def _gate_reference(x, weight, bias):
    """Gate's forward in numpy, for one draw of Gate's weights."""
    h = x @ weight.T + bias
    return np.maximum(h, 0) if h.sum() > 0 else -h


GATE = Exercise(
    key="09-gate", title="Lesson 9: make the gate compile", answer="GateFixed",
    reference=None, signature="x: Tensor[(2, 4), f32]", adapt=_gate_callables,
    trials=12, rtol=1e-5, atol=1e-5, submit="outputs", graded_extras=_gate_weights,
    graded_reference=lambda w: lambda x: _gate_reference(x, w["weight"], w["bias"]),
    hints=["`torch.where(cond, a, b)` computes both branches and keeps one per element.",
           "A 0-d condition (`h.sum() > 0`) broadcasts over every element.",
           "Keep `self.fc` exactly as in Gate: the check copies Gate's weights into yours."],
)

EXERCISES = [FUSED_GROUPS, GATE]
