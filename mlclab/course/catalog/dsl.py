"""The exercises whose references are DSL programs (lessons 1, 4, 5, 12, appendix A1): answered
with a DSL function, or (lesson 5) a module built with BlockBuilder."""
import numpy as np

from ..spec import FAILED, Exercise, Misconception, Probe, Unanswered

MSE = Exercise(
    key="01-mse", title="Lesson 1: mean squared error", answer="mse", entry="mse",
    reference="""
def mse(pred: Tensor[("n", "m"), f32], target: Tensor[("n", "m"), f32]):
    d = pred - target
    return mean(d * d)
""",
    misconceptions=[
        Misconception(lambda p, t: np.mean(p - t, dtype=np.float32),
                      "that is the mean error: positive and negative errors cancel. Square each "
                      "difference before averaging."),
        Misconception(lambda p, t: np.sum((p - t) ** 2, dtype=np.float32),
                      "that is the sum of squared errors: the mean also divides by the number of "
                      "elements, n·m."),
        Misconception(lambda p, t: np.mean(np.abs(p - t), dtype=np.float32),
                      "that is the mean absolute error: square the differences instead."),
        Misconception(lambda p, t: np.mean(p * p - t * t, dtype=np.float32),
                      "(a - b)² is not a² - b²: square the difference, not each side."),
    ],
    hints=["The result is one number (a 0-d tensor): which DSL reduction averages over every "
           "element?",
           "Name the difference first (`diff = pred - target`), then square it elementwise.",
           "`mean(...)` with no axis averages over all elements."],
    stub_fingerprints=frozenset({"36c3a6f71f1e3ac3"}),    # the starter cells, see spec.fingerprint
)

SOFTMAX = Exercise(
    key="04-softmax", title="Lesson 4: softmax with one exp", answer="my_softmax", entry="sm",
    reference="""
def sm(x: Tensor[("n",), f32]):
    return softmax(x)
""",
    probes=[Probe(lambda rng: [(rng.standard_normal(7) * 3 + 100).astype("float32")],
                  "your softmax is not shifted by the max: exp overflows float32 for inputs "
                  "above 88. Subtract max(x) first; softmax(x - c) = softmax(x) for any "
                  "constant c.")],
    misconceptions=[Misconception(lambda x: np.exp(x - x.max()).astype("float32"),
                                  "you return the numerators: divide by their sum so the "
                                  "values add up to 1.")],
    structure=[lambda fn: _count_exps(fn)],
    hints=["softmax(x) = softmax(x - c) for any constant c: which c keeps every exponent <= 0?",
           "Bind the exponentials to a name once, then reuse the name in the numerator and the "
           "sum.",
           "Check the let form yourself: `print(my_softmax.text(\"let\"))` and count the exp "
           "calls."],
    stub_fingerprints=frozenset({"cf9d8e2ffbe76d32"}),
)


def _count_exps(fn) -> str:
    try:
        count = fn.text("let").count("exp(")
    except Exception as exc:  # not a compiled DSL function: the value checks already said so
        return f"cannot read the let form of your answer: {exc}"
    if count != 1:
        return (f"the values are right, but the let form computes exp {count} times: bind it once "
                "and reuse the name.")
    return None


NUMBERS_SUM = Exercise(
    key="A1-numbers-sum", title="Appendix A1: the Numbers sum with where", answer="numbers_sum",
    entry="numbers_sum",
    reference="""
def numbers_sum(tag: Tensor[(), i32], x: Tensor[(), i32], y: Tensor[(), i32]):
    zero = x - x
    return where(tag == 0, zero, where(tag == 2, x + y, x))
""",
    ranges={"tag": (0, 3)},
    trials=12,
    probes=[Probe(lambda rng: [np.int32(0), np.int32(5), np.int32(7)],
                  "EMPTY (tag 0) must give 0."),
            Probe(lambda rng: [np.int32(1), np.int32(5), np.int32(7)],
                  "SINGLE (tag 1) must give x."),
            Probe(lambda rng: [np.int32(2), np.int32(5), np.int32(7)],
                  "PAIR (tag 2) must give x + y.")],
    hints=["There are three constructors: handle each tag value with one `where`.",
           "`where(cond, a, b)` nests: the `b` of one can be another `where`.",
           "An int32 zero of the right type: `x - x`."],
    stub_fingerprints=frozenset({"3167eec23770947a"}),
)

def _mlp_module_callables(module, namespace):
    import tvm
    from tvm import relax, tirx
    if not isinstance(module, tvm.IRModule):
        raise Unanswered(f"`mlp_mod` should be the tvm.IRModule your BlockBuilder built "
                         f"(`bb.get()`), not {type(module).__name__}.")
    if "mlp" not in [gv.name_hint for gv in module.get_global_vars()]:
        raise Unanswered("your IRModule has no function named \"mlp\": "
                         "`bb.function(\"mlp\", params)`.")
    if not relax.analysis.check_well_formed(module):
        raise Unanswered("your IRModule is not well formed.", FAILED)
    params = module["mlp"].params
    if len(params) != 5:
        raise Unanswered(f"`mlp` takes {len(params)} parameter(s); the check passes five: "
                         "x, w1, b1, w2, b2.", FAILED)
    shape = getattr(params[0].ty, "shape", None)
    if shape is None or not isinstance(shape.values[0], tirx.Var):
        raise Unanswered(f"`x` has type {params[0].ty}: make its batch dimension a symbolic "
                         "tirx.Var (\"n\"), so one module takes every batch size.", FAILED)
    vm = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    return {"your `mlp_mod`": lambda *a: vm["mlp"](*[tvm.runtime.tensor(v) for v in a]).numpy()}


def _mlp_bindings(module) -> str:
    """What each binding of ``mlp`` is bound to, one "name = what" a line (``what``: an
    operator's name such as relax.call_tir, or "var" for a copy): a graded run carries this out."""
    from tvm import relax
    lines = []
    for block in module["mlp"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            what = "var" if isinstance(value, relax.Var) else \
                value.op.name if isinstance(value, relax.Call) and hasattr(value.op, "name") \
                else type(value).__name__
            lines.append(f"{binding.var.name} = {what}")
    return "\n".join(lines)


def _every_layer_is_te(bindings: str) -> str:
    """Each binding of ``mlp`` is a call_tir: the layers came from emit_te, not R.* operators."""
    for line in bindings.splitlines():
        name, _, what = line.partition(" = ")
        if what in ("var", "relax.call_tir"):   # (a var: emit_output's copy of a call_tir's result)
            continue
        return (f"the values are right, but `{name}` is bound to `{what}`: "
                "build every layer with `bb.emit_te(...)`, so each binding is a call_tir to "
                "a TensorIR function of your own.")
    return None


MLP = Exercise(
    key="05-mlp-blockbuilder", title="Lesson 5: the MLP with BlockBuilder and emit_te",
    answer="mlp_mod", entry="mlp",
    reference="""
def mlp(x: Tensor[("n", 64), f32], w1: Tensor[(32, 64), f32], b1: Tensor[(32,), f32],
        w2: Tensor[(10, 32), f32], b2: Tensor[(10,), f32]):
    return linear(relu(linear(x, w1, b1)), w2, b2)
""",
    adapt=_mlp_module_callables,
    misconceptions=[Misconception(lambda x, w1, b1, w2, b2: (x @ w1.T + b1) @ w2.T + b2,
                                  "the hidden layer has no activation: PyTorch's model applies "
                                  "ReLU between the two Linear layers."),
                    Misconception(lambda x, w1, b1, w2, b2: np.maximum(x @ w1.T, 0) @ w2.T,
                                  "the biases are missing: a Linear layer adds its bias after "
                                  "the matmul.")],
    structure=[_every_layer_is_te], evidence=_mlp_bindings, submit="outputs",
    hints=["A Linear layer is `x @ w.T + b`: in TE, a matmul stage reading `W[j, k]` (a "
           "reduce_axis over k), then a stage that adds `B[j]`; one TE function may return the "
           "last of several stages.",
           "`bb.emit_te(te_linear, x, w1, b1)`, then `bb.emit_te(te_relu, h)` (section 2's), "
           "then the second layer; `bb.emit_output` the last one.",
           "The batch is `n = tirx.Var(\"n\", \"int64\")` in x's type, as in section 2."],
)

def _squared_distances(x, y):
    return np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=2)


PAIRWISE = Exercise(
    key="12-pairwise", title="Lesson 12: pairwise distances for any sizes", answer="pairwise",
    entry="pairwise",
    reference="""
def pairwise(x: Tensor[("n", "d"), f32], y: Tensor[("m", "d"), f32]):
    diff = expand_dims(x, 1) - expand_dims(y, 0)
    return sum(diff * diff, axis=2)
""",
    rtol=1e-4, atol=1e-4,
    misconceptions=[Misconception(lambda x, y: np.sqrt(_squared_distances(x, y)),
                                  "that is the distance itself: the exercise asks for its square "
                                  "(no square root)."),
                    Misconception(lambda x, y: (x * x).sum(1, keepdims=True) - x @ y.T
                                  + (y * y).sum(1, keepdims=True).T,
                                  "|x - y|^2 = |x|^2 - 2 x.y + |y|^2: the cross term counts "
                                  "twice.")],
    hints=["Three sizes: the rows of x (\"n\"), the rows of y (\"m\"), and the length of each row, "
           "which x and y share: the same name in both annotations.",
           "|x - y|^2 = |x|^2 - 2 x.y + |y|^2: the middle term for every pair is x @ transpose(y), "
           "an (n, m) matrix.",
           "sum(x * x, axis=1, keepdims=True) is (n, 1); the same for y, transposed to (1, m), "
           "broadcasts against (n, m)."],
)

EXERCISES = [MSE, SOFTMAX, NUMBERS_SUM, MLP, PAIRWISE]
