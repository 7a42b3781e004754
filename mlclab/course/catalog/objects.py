"""The exercises answered with something other than a DSL function (lessons 2, 3, 6 and
appendix A2): a frontend class, a hand-built Relax module, a scheduled TE kernel, generated IR
classes.
Each ``adapt`` turns the answer into numpy callables, or says what is missing."""
import numpy as np

from ..spec import FAILED, Exercise, Misconception, Unanswered


# Lesson 2: the student extends the lesson's MiniFrontend; the check lowers these two programs.
FRONTEND_PROGRAM = """def squash(x: Tensor[(8,), f32], y: Tensor[(8,), f32]):
    e = exp(x) + exp(y)
    return tanh(x * y) / e
"""
UNKNOWN_CALL = """def bad(x: Tensor[(8,), f32]):
    y = x + x
    return sigmoid(y)
"""
UNKNOWN_CALL_LINE = 3


def _lowered(frontend, source: str):
    import ast
    return frontend().lower(ast.parse(source).body[0])


def _frontend_callables(frontend, namespace):
    import tvm
    from tvm import relax
    if not isinstance(frontend, type) or not callable(getattr(frontend, "lower", None)):
        raise Unanswered(f"`MyFrontend` should be a class with a `lower` method (a subclass of "
                         f"MiniFrontend), not {type(frontend).__name__}.")
    try:
        module = _lowered(frontend, FRONTEND_PROGRAM)
    except Exception as exc:  # the student's frontend failing is the answer's problem, said plainly
        message = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise Unanswered(f"your frontend cannot lower `squash` (printed above the exercise): "
                         f"{type(exc).__name__}: {message}", FAILED)
    vm = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    return {"`squash` lowered by your frontend": lambda x, y: vm["squash"](
        tvm.runtime.tensor(x), tvm.runtime.tensor(y)).numpy()}


LOWERED = "lowered"


def _unknown_call_outcome(frontend) -> str:
    """What the frontend does with `bad` (a call to an unknown function), as text: "lowered",
    or the exception it raised ("SyntaxError: line 3: ..."). A graded run carries this text out."""
    try:
        _lowered(frontend, UNKNOWN_CALL)
    except Exception as exc:   # (a SyntaxError subclass is a SyntaxError, as `except` sees it)
        kind = "SyntaxError" if isinstance(exc, SyntaxError) else type(exc).__name__
        text = str(exc).strip().splitlines()
        return f"{kind}: {text[0][:300] if text else ''}"
    return LOWERED


def _unknown_call_is_located(outcome: str):
    if outcome == LOWERED:
        return ("your frontend lowered `bad`, which calls `sigmoid`, a function it has no "
                "builder for.")
    kind, _, text = outcome.partition(": ")
    if kind == "SyntaxError":
        if f"line {UNKNOWN_CALL_LINE}" not in text or "sigmoid" not in text:
            return (f"`bad` now raises SyntaxError, but its message ({text!r}) should name the "
                    f"line (`line {UNKNOWN_CALL_LINE}`, as generic_visit does) and the unknown "
                    "function.")
        return None
    return (f"the values are right, but a call to an unknown function (`bad` above) raises "
            f"{kind}: {text}: no line, no explanation. Raise a SyntaxError that names the line "
            "and the function, as generic_visit does.")


MINI_FRONTEND = Exercise(
    key="02-frontend", title="Lesson 2: extend the mini frontend", answer="MyFrontend",
    reference=lambda x, y: (np.tanh(x * y) / (np.exp(x) + np.exp(y))).astype(x.dtype),
    signature="x: Tensor[(8,), f32], y: Tensor[(8,), f32]", adapt=_frontend_callables,
    submit="outputs",
    misconceptions=[Misconception(lambda x, y: np.tanh(x * y) * (np.exp(x) + np.exp(y)),
                                  "`/` multiplies in your frontend: ast.Div should build "
                                  "R.divide."),
                    Misconception(lambda x, y: np.tanh(x * y) / (np.exp(x) * np.exp(y)),
                                  "`+` multiplies in your frontend: keep MiniFrontend's BINOPS.")],
    structure=[_unknown_call_is_located], evidence=_unknown_call_outcome,
    hints=["`/` parses as a BinOp whose op is `ast.Div`; BINOPS maps operator classes to builders "
           "(`R.divide`), CALLS maps names to builders (`R.exp`, `R.tanh`).",
           "A subclass can extend a class attribute: `CALLS = {**MiniFrontend.CALLS, ...}`.",
           "In `visit_Call`, check `node.func.id in self.CALLS` before looking it up, and raise "
           "`SyntaxError(f\"line {node.lineno}: ...\")` otherwise."],
)


def _affine_callables(module, namespace):
    import tvm
    from tvm import relax, tirx
    if not isinstance(module, tvm.IRModule):
        raise Unanswered(f"`my_module` should be a tvm.IRModule, not {type(module).__name__}.")
    if "affine_relu" not in [gv.name_hint for gv in module.get_global_vars()]:
        raise Unanswered("your IRModule has no function named \"affine_relu\".")
    if not relax.analysis.check_well_formed(module):
        raise Unanswered("your IRModule is not well formed: did you run "
                         "relax.transform.Normalize()?", FAILED)
    problem = _relax_params_problem(module["affine_relu"], AFFINE_RELU.params)
    if problem:
        raise Unanswered(problem, FAILED)
    x_type = module["affine_relu"].params[0].ty
    shape = getattr(x_type, "shape", None)
    rows = shape.values[0] if shape is not None and len(shape.values) == 2 else None
    if not isinstance(rows, tirx.Var):
        raise Unanswered(f"the first parameter of your `affine_relu` has type {x_type}: its batch "
                         "dimension should be a symbolic size (a tirx.Var), so one function takes "
                         "every batch size; the check calls it with several.", FAILED)
    vm = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    def run(*arrays):
        return vm["affine_relu"](*[tvm.runtime.tensor(x) for x in arrays]).numpy()

    return {"your `affine_relu`": run}


def _relax_params_problem(func, params) -> str:
    """A Relax function's parameters against what the exercise passes, as a sentence (else
    TVM's argument check at call time says it in C++: "Check failed: ... match_cast")."""
    from tvm import relax
    if not isinstance(func, relax.Function):
        return f"`{_name(func)}` should be a Relax function, not {type(func).__name__}."
    if len(func.params) != len(params):
        return (f"your function takes {len(func.params)} parameter(s); the exercise passes "
                f"{len(params)}: {_listed(params)}.")
    for var, want in zip(func.params, params):
        ty = var.ty
        if not isinstance(ty, relax.TensorType):
            return f"parameter `{var.name}` should be a tensor ({want.type}), not {ty}."
        shape = None if ty.shape is None else [_dim(d) for d in ty.shape.values]
        if (str(ty.dtype) != str(want.type.dtype) or ty.ndim not in (-1, len(want.type.shape))
                or (shape is not None and any(isinstance(d, int) and isinstance(w, int) and d != w
                                              for d, w in zip(shape, want.type.shape)))):
            return (f"parameter `{var.name}` is declared {ty}; the exercise passes "
                    f"{want.name}: {want.type}: declare it relax.TensorType("
                    f"{tuple(want.type.shape)}, \"{want.type.dtype}\").")
    return ""


def _prim_params_problem(func, buffers) -> str:
    """A PrimFunc's buffers against ``buffers`` (``(name, shape, dtype)``: the exercise's
    inputs and the output), as a sentence (else TVM's argument check says it in C++)."""
    import tvm
    if not isinstance(func, tvm.tirx.PrimFunc):
        return f"`{_name(func)}` should be a PrimFunc, not {type(func).__name__}."
    listed = ", ".join(f"{name} {shape} {dtype}" for name, shape, dtype in buffers)
    if len(func.params) != len(buffers):
        return (f"your PrimFunc takes {len(func.params)} buffer(s); the check passes "
                f"{len(buffers)}: {listed}.")
    for buf, (name, shape, dtype) in zip(func.params, buffers):   # (parameters are buffers)
        if getattr(buf, "shape", None) is None:
            return f"parameter `{buf.name}` should be a buffer ({name} {shape} {dtype})."
        have = tuple(_dim(d) for d in buf.shape)
        if str(buf.dtype) != dtype or have != shape:
            return (f"buffer `{buf.name}` is {have} {buf.dtype}; the check passes {name} "
                    f"{shape} {dtype} there (the buffers in order: {listed}).")
    return ""


def _dim(d):
    return int(d) if hasattr(d, "value") else str(d)


def _name(func) -> str:
    return getattr(func, "name_hint", None) or type(func).__name__


def _listed(params) -> str:
    return ", ".join(f"{p.name}: {p.type}" for p in params)


AFFINE_RELU = Exercise(
    key="03-affine-relu", title="Lesson 3: relu(x @ w + b) from Relax nodes, any batch size",
    answer="my_module", entry="affine_relu",
    reference="""
def affine_relu(x: Tensor[("n", 8), f32], w: Tensor[(8, 3), f32], b: Tensor[(3,), f32]):
    return relu(x @ w + b)
""",
    adapt=_affine_callables, submit="outputs",
    misconceptions=[Misconception(lambda x, w, b: x @ w + b,
                                  "the relu is missing: wrap the add in R.nn.relu."),
                    Misconception(lambda x, w, b: np.maximum(x @ w, 0) + b,
                                  "relu comes last: relu(x @ w + b), not relu(x @ w) + b.")],
    hints=["A symbolic size is a `tirx.Var(\"n\", \"int64\")`; use it in the shape of `x` "
           "and of the result type.",
           "Nest the calls: `R.nn.relu(R.add(R.matmul(x, w), b))`.",
           "`relax.Function(params, body, ret_ty=...)`, then "
           "`tvm.IRModule({\"affine_relu\": f})` and Normalize."],
)

TE_N = 256


def _scheduled_callables(module, namespace):
    import tvm
    if not isinstance(module, tvm.IRModule):
        raise Unanswered("`scheduled_mod` should be a tvm.IRModule (`sch2.mod`), "
                         f"not {type(module).__name__}.")
    if "mm_bias_relu" not in [gv.name_hint for gv in module.get_global_vars()]:
        raise Unanswered("your module has no PrimFunc named \"mm_bias_relu\".")
    buffers = [(p.name, tuple(p.type.shape), str(p.type.dtype)) for p in MM_BIAS_RELU.params]
    problem = _prim_params_problem(module["mm_bias_relu"],
                                   [*buffers, ("the result", (TE_N, TE_N), "float32")])
    symbol = (module["mm_bias_relu"].attrs or {}).get("global_symbol")
    if not problem and symbol is not None and str(symbol) != "mm_bias_relu":
        problem = (f"your PrimFunc is compiled under the name \"{symbol}\" (create_prim_func "
                   f"calls it \"main\"): add .with_attr(\"global_symbol\", \"mm_bias_relu\").")
    if problem:
        raise Unanswered(problem, FAILED)
    lib = tvm.compile(module, target="llvm")

    def run(a, b, bias):
        out = tvm.runtime.empty((TE_N, TE_N), "float32", tvm.cpu())
        lib["mm_bias_relu"](*[tvm.runtime.tensor(x) for x in (a, b, bias)], out)
        return out.numpy()

    return {"your `mm_bias_relu`": run}


def _is_scheduled(text: str):
    if "T.vectorized" not in text:
        return ("the values are right, but no loop is vectorized: apply sch.vectorize to an "
                "inner loop.")
    return None


MM_BIAS_RELU = Exercise(
    key="06-mm-bias-relu", title="Lesson 6: a scheduled relu(A @ B + bias) in TE",
    answer="scheduled_mod", entry="mm_bias_relu",
    reference=f"""
def mm_bias_relu(a: Tensor[({TE_N}, {TE_N}), f32], b: Tensor[({TE_N}, {TE_N}), f32],
                 bias: Tensor[({TE_N},), f32]):
    return relu(a @ b + bias)
""",
    adapt=_scheduled_callables, submit="outputs", trials=2, rtol=1e-4, atol=1e-3,
    misconceptions=[Misconception(lambda a, b, bias: np.maximum(a @ b + bias[:, None], 0),
                                  "bias is added along the wrong axis: bias[j] goes to column j "
                                  "(out[i, j] = max(mm[i, j] + bias[j], 0))."),
                    Misconception(lambda a, b, bias: a @ b + bias,
                                  "the relu is missing: te.max(..., 0).")],
    structure=[_is_scheduled], evidence=lambda module: module.script(),
    hints=["Two te.compute stages: the matmul with a te.reduce_axis, then the bias-add and relu.",
           "Name the matmul stage, then `sch.get_sblock(name, func_name=\"mm_bias_relu\")` and "
           "get its loops.",
           "split j by 8, reorder so k is outside the 8 lanes, vectorize the innermost loop."],
)


CLIP_LO, CLIP_HI = -0.5, 0.5


def _clip_tree_callables(nodes, namespace):
    if not isinstance(nodes, dict):
        raise Unanswered("`nodes2` should be what generate_python(ir2) returns, "
                         f"not {type(nodes).__name__}.")
    missing = [n for n in ("Var", "Add", "Relu", "Clip") if n not in nodes]
    if missing:
        raise Unanswered(f"`nodes2` has no {', '.join(missing)}: declare them on ir2 with "
                         "@ir2.node and regenerate with generate_python(ir2).")
    fields = dict(getattr(nodes["Clip"], "_field_types", {}))
    roots = [name for name, tp in fields.items() if tp == "Expr"]
    attributes = [name for name, tp in fields.items() if tp == "float"]
    if roots != ["x"] or sorted(attributes) != ["hi", "lo"]:
        raise Unanswered(f"Clip's fields are {fields}: it should have one child expression `x` "
                         "(type \"Expr\") and two attributes `lo` and `hi` of type float, which "
                         "are numbers, not children to visit.", FAILED)
    header = namespace.get("header2")
    if not isinstance(header, str):
        raise Unanswered("`header2` is not defined: set header2 = generate_header(ir2).", FAILED)
    if "double lo;" not in header or "double hi;" not in header:
        raise Unanswered("`header2` does not declare `double lo;` and `double hi;` in ClipNode: "
                         "map the Python type float to C++'s double in CPP_TYPES.", FAILED)
    evaluator = namespace.get("Evaluate2")
    if evaluator is None:
        raise Unanswered("`Evaluate2` is not defined: write the evaluator class and run its cell.")
    V, A, C = (nodes[n] for n in ("Var", "Add", "Clip"))
    tree = C(A(V("x"), V("b")), CLIP_LO, CLIP_HI)
    return {"your tree and `Evaluate2`": lambda x, b: evaluator({"x": x, "b": b}).visit(tree)}


CLIP_TREE = Exercise(
    key="A2-clip-node", title="Appendix A2: a node with attributes", answer="nodes2",
    reference=lambda x, b: np.clip(x + b, CLIP_LO, CLIP_HI).astype(x.dtype),
    signature='x: Tensor[("n",), f32], b: Tensor[("n",), f32]', adapt=_clip_tree_callables,
    submit="outputs",
    misconceptions=[Misconception(lambda x, b: np.maximum(x + b, CLIP_LO).astype(x.dtype),
                                  "only the lower bound is applied: clip to both lo and hi."),
                    Misconception(lambda x, b: np.clip(x + b, CLIP_HI, CLIP_LO).astype(x.dtype),
                                  "lo and hi are swapped in visit_Clip.")],
    hints=["Declare `Clip` with `x: \"Expr\"` and `lo: float`, `hi: float`: the generator's "
           "visitor walks only the fields whose type is the root, Expr.",
           "generate_header looks every field type up in CPP_TYPES: add float -> \"double\", then "
           "header2 = generate_header(ir2).",
           "visit_Clip returns `np.clip(self.visit(node.x), node.lo, node.hi)`."],
)


EXERCISES = [MINI_FRONTEND, AFFINE_RELU, MM_BIAS_RELU, CLIP_TREE]
