"""The exercises answered with something other than a DSL function (lessons 2, 3, 6, 9): an
operator-table entry, a hand-built Relax module, a scheduled TE kernel, generated IR classes.
Each ``adapt`` turns the answer into numpy callables, or says what is missing."""
import numpy as np

from ..spec import FAILED, UNCHANGED, Exercise, Misconception, Probe, Unanswered


def _softplus(x):
    return np.logaddexp(np.float32(0), x).astype(x.dtype)


def _mish_callables(answer, namespace):
    from ... import ops
    from ...api import compile as compile_program
    if "mish" not in ops.OPS:
        raise Unanswered("the operator table has no `mish` yet: register it in the exercise cell "
                         "and run that cell.", UNCHANGED)
    fn = compile_program('def f(x: Tensor[("n",), f32]):\n    return mish(x)\n')["f"]
    return {"your Relax builder (compiled by TVM)": fn, "your numpy function": fn.reference}


MISH = Exercise(
    key="02-mish", title="Lesson 2: a mish operator", answer="ops",
    reference=lambda x: (x * np.tanh(_softplus(x))).astype(x.dtype),
    signature='x: Tensor[("n",), f32]', adapt=_mish_callables, submit="outputs",
    probes=[Probe(lambda rng: [np.array([-100.0, -20.0, 0.0, 20.0, 95.0], "float32")],
                  "log(1 + exp(x)) overflows float32 for x above 88 (exp(89) is inf): use a "
                  "softplus that never forms exp(x) for large x (R.nn.softplus, np.logaddexp(0, x)).")],
    misconceptions=[Misconception(lambda x: (x * np.tanh(x)).astype(x.dtype),
                                  "mish is x · tanh(softplus(x)), not x · tanh(x).")],
    hints=["Look at how `softplus` and `tanh` are registered: `ops.OPS[\"softplus\"]` shows the fields.",
           "`rule=ops.same_as_input(float_only=True)`; the Relax side composes `R.tanh` and `R.nn.softplus`.",
           "numpy's stable softplus is `np.logaddexp(0, x)`."],
)


def _affine_callables(module, namespace):
    import tvm
    from tvm import relax
    if not isinstance(module, tvm.IRModule):
        raise Unanswered(f"`my_module` should be a tvm.IRModule, not {type(module).__name__}.")
    if "affine_relu" not in [gv.name_hint for gv in module.get_global_vars()]:
        raise Unanswered("your IRModule has no function named \"affine_relu\".")
    if not relax.analysis.check_well_formed(module):
        raise Unanswered("your IRModule is not well formed: did you run relax.transform.Normalize()?", FAILED)
    vm = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    return {"your `affine_relu`": lambda *a: vm["affine_relu"](*[tvm.runtime.tensor(x) for x in a]).numpy()}


AFFINE_RELU = Exercise(
    key="03-affine-relu", title="Lesson 3: relu(x @ w + b) from Relax nodes", answer="my_module",
    entry="affine_relu",
    reference="""
def affine_relu(x: Tensor[(4, 8), f32], w: Tensor[(8, 3), f32], b: Tensor[(3,), f32]):
    return relu(x @ w + b)
""",
    adapt=_affine_callables, submit="outputs",
    misconceptions=[Misconception(lambda x, w, b: x @ w + b, "the relu is missing: wrap the add in R.nn.relu."),
                    Misconception(lambda x, w, b: np.maximum(x @ w, 0) + b,
                                  "relu comes last: relu(x @ w + b), not relu(x @ w) + b.")],
    hints=["Make three `relax.Var`s with `relax.TensorType(shape, \"float32\")`.",
           "Nest the calls: `R.nn.relu(R.add(R.matmul(x, w), b))`.",
           "`relax.Function(params, body, ret_ty=...)`, then `tvm.IRModule({\"affine_relu\": f})` and Normalize."],
)

TE_N = 256


def _scheduled_callables(module, namespace):
    import tvm
    if not isinstance(module, tvm.IRModule):
        raise Unanswered(f"`scheduled_mod` should be a tvm.IRModule (`sch2.mod`), not {type(module).__name__}.")
    if "mm_bias_relu" not in [gv.name_hint for gv in module.get_global_vars()]:
        raise Unanswered("your module has no PrimFunc named \"mm_bias_relu\".")
    lib = tvm.compile(module, target="llvm")

    def run(a, b, bias):
        out = tvm.runtime.empty((TE_N, TE_N), "float32", tvm.cpu())
        lib["mm_bias_relu"](*[tvm.runtime.tensor(x) for x in (a, b, bias)], out)
        return out.numpy()

    return {"your `mm_bias_relu`": run}


def _is_scheduled(module):
    text = module.script()
    if "T.vectorized" not in text:
        return "the values are right, but no loop is vectorized: apply sch.vectorize to an inner loop."
    return None


MM_BIAS_RELU = Exercise(
    key="06-mm-bias-relu", title="Lesson 6: a scheduled relu(A @ B + bias) in TE", answer="scheduled_mod",
    entry="mm_bias_relu",
    reference=f"""
def mm_bias_relu(a: Tensor[({TE_N}, {TE_N}), f32], b: Tensor[({TE_N}, {TE_N}), f32], bias: Tensor[({TE_N},), f32]):
    return relu(a @ b + bias)
""",
    adapt=_scheduled_callables, submit="outputs", trials=2, rtol=1e-4, atol=1e-3,
    misconceptions=[Misconception(lambda a, b, bias: np.maximum(a @ b + bias[:, None], 0),
                                  "bias is added along the wrong axis: bias[j] goes to column j "
                                  "(out[i, j] = max(mm[i, j] + bias[j], 0))."),
                    Misconception(lambda a, b, bias: a @ b + bias, "the relu is missing: te.max(..., 0).")],
    structure=[_is_scheduled],
    hints=["Two te.compute stages: the matmul with a te.reduce_axis, then the bias-add and relu.",
           "Name the matmul stage, then `sch.get_sblock(name, func_name=\"mm_bias_relu\")` and get its loops.",
           "split j by 8, reorder so k is outside the 8 lanes, vectorize the innermost loop."],
)


def _tree_callables(nodes, namespace):
    if not isinstance(nodes, dict):
        raise Unanswered(f"`nodes2` should be what generate_python(ir2) returns, not {type(nodes).__name__}.")
    missing = [n for n in ("Var", "Add", "Mul", "Relu") if n not in nodes]
    if missing:
        raise Unanswered(f"`nodes2` has no {', '.join(missing)}: declare them on ir2 with @ir2.node "
                         "and regenerate with generate_python(ir2).")
    evaluator = namespace.get("Evaluate2")
    if evaluator is None:
        raise Unanswered("`Evaluate2` is not defined: write the evaluator class and run its cell.")
    V, A, M, R = (nodes[n] for n in ("Var", "Add", "Mul", "Relu"))
    tree = R(A(M(V("x"), V("w")), V("b")))
    return {"your tree and `Evaluate2`": lambda x, w, b: evaluator({"x": x, "w": w, "b": b}).visit(tree)}


TREE = Exercise(
    key="09-mul-node", title="Lesson 9: a Mul node and its evaluator", answer="nodes2",
    entry="scale_shift_relu",
    reference="""
def scale_shift_relu(x: Tensor[("n",), f32], w: Tensor[("n",), f32], b: Tensor[("n",), f32]):
    return relu(x * w + b)
""",
    adapt=_tree_callables, submit="outputs",
    misconceptions=[Misconception(lambda x, w, b: np.maximum(x + w + b, 0),
                                  "visit_Mul adds: it should multiply its two children.")],
    hints=["A new Registry gets the four old declarations (`ir.decls`) plus `Mul` with lhs and rhs.",
           "generate_python(ir2) returns the classes by name, including a Visitor to subclass.",
           "visit_Mul returns `self.visit(node.lhs) * self.visit(node.rhs)`."],
)

EXERCISES = [MISH, AFFINE_RELU, MM_BIAS_RELU, TREE]
