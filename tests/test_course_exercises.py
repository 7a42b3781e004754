"""The exercises of lessons 2, 3, 5 and appendix A2 check the lesson's own idea: each accepts a
right answer and names what a partly right one misses (the located error, the symbolic batch,
emit_te, the attributes)."""
import ast

import numpy as np
import tvm
from tvm import relax, tirx
from tvm.relax import op as R

from mlclab.course import EXERCISES, ExerciseHandle


def check(key, answer, namespace=None):
    """The live check's result; the graded path (export in this process, the checker's judge on
    the JSON) must agree with it on the verdict, and on a failure's message when a structure
    check or the answer's form decides (the values are drawn from another salt)."""
    live = ExerciseHandle(EXERCISES[key]).check(answer, namespace=namespace or {})
    graded = grade(key, answer, namespace)
    assert graded.status == live.status, (key, live.message, graded.message)
    if live.status == "failed" and " is wrong on " not in live.message \
            and " raised " not in live.message:
        assert graded.message == live.message, (key, live.message, graded.message)
    return live


def grade(key, answer, namespace=None):
    import json
    from mlclab.course import checker, export
    exercise = EXERCISES[key]
    record = export.answers([key], 5, {**(namespace or {}), exercise.answer: answer})
    return checker.judge(exercise, json.loads(json.dumps(record[key])), 5)


# ------------------------------------------------------------------ lesson 2: the mini frontend
class MiniFrontend(ast.NodeVisitor):
    """Lesson 2's frontend, as the lesson builds it."""
    BINOPS = {ast.MatMult: R.matmul, ast.Add: R.add, ast.Mult: R.multiply, ast.Sub: R.subtract}
    CALLS = {"relu": R.nn.relu}

    def __init__(self):
        self.bb = relax.BlockBuilder()
        self.env = {}

    def lower(self, fn):
        params = []
        for arg in fn.args.args:
            shape_node, _ = arg.annotation.slice.elts
            shape = tuple(e.value for e in shape_node.elts)
            self.env[arg.arg] = relax.Var(arg.arg, relax.TensorType(shape, "float32"))
            params.append(self.env[arg.arg])
        with self.bb.function(fn.name, params):
            with self.bb.dataflow():
                for stmt in fn.body[:-1]:
                    self.visit(stmt)
                out = self.bb.emit_output(self.visit(fn.body[-1].value))
            self.bb.emit_func_output(out)
        return self.bb.get()

    def visit_Assign(self, node):
        name = node.targets[0].id
        self.env[name] = self.bb.emit(self.visit(node.value), name_hint=name)

    def generic_visit(self, node):
        raise SyntaxError(f"line {node.lineno}: {type(node).__name__} is not supported")

    def visit_Name(self, node):
        return self.env[node.id]

    def visit_BinOp(self, node):
        return self.BINOPS[type(node.op)](self.visit(node.left), self.visit(node.right))

    def visit_Call(self, node):
        return self.CALLS[node.func.id](*[self.visit(a) for a in node.args])


class Extended(MiniFrontend):
    BINOPS = {**MiniFrontend.BINOPS, ast.Div: R.divide}
    CALLS = {**MiniFrontend.CALLS, "exp": R.exp, "tanh": R.tanh}


class Located(Extended):
    def visit_Call(self, node):
        if node.func.id not in self.CALLS:
            raise SyntaxError(f"line {node.lineno}: unknown function {node.func.id}()")
        return super().visit_Call(node)


class DividesByMultiplying(Located):
    BINOPS = {**Extended.BINOPS, ast.Div: R.multiply}


def test_the_frontend_exercise_wants_new_operators_and_a_located_error():
    assert not check("02-frontend", MiniFrontend).passed            # cannot lower exp
    assert "KeyError" in check("02-frontend", MiniFrontend).message
    unlocated = check("02-frontend", Extended)
    assert unlocated.status == "failed" and "names the line" in unlocated.message
    assert "R.divide" in check("02-frontend", DividesByMultiplying).message
    assert check("02-frontend", Located).passed
    assert check("02-frontend", 3).status == "not run"


# ------------------------------------------------------------------ lesson 3: any batch size
def affine_module(batch):
    x = relax.Var("x", relax.TensorType((batch, 8), "float32"))
    w = relax.Var("w", relax.TensorType((8, 3), "float32"))
    b = relax.Var("b", relax.TensorType((3,), "float32"))
    fn = relax.Function([x, w, b], R.nn.relu(R.add(R.matmul(x, w), b)),
                        ret_ty=relax.TensorType((batch, 3), "float32"))
    return relax.transform.Normalize()(tvm.IRModule({"affine_relu": fn}))


def test_the_node_exercise_wants_a_symbolic_batch():
    fixed = check("03-affine-relu", affine_module(4))
    assert fixed.status == "failed" and "symbolic size" in fixed.message
    assert check("03-affine-relu", affine_module(tirx.Var("n", "int64"))).passed


# ------------------------------------------------------------- lesson 5: BlockBuilder + emit_te
def te_linear(X, W, B):
    from tvm import te
    k = te.reduce_axis((0, X.shape[1]), name="k")
    XW = te.compute((X.shape[0], W.shape[0]),
                    lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="xw")
    return te.compute(XW.shape, lambda i, j: XW[i, j] + B[j], name="linear")


def mlp_module(with_te: bool):
    from tvm import topi
    n = tirx.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((n, 64), "float32"))
    w1, b1, w2, b2 = (relax.Var(name, relax.TensorType(shape, "float32")) for name, shape in
                      (("w1", (32, 64)), ("b1", (32,)), ("w2", (10, 32)), ("b2", (10,))))
    with bb.function("mlp", [x, w1, b1, w2, b2]):
        with bb.dataflow():
            if with_te:
                h = bb.emit_te(topi.nn.relu, bb.emit_te(te_linear, x, w1, b1))
                out = bb.emit_output(bb.emit_te(te_linear, h, w2, b2))
            else:
                h = bb.emit(R.nn.relu(R.add(R.matmul(x, R.permute_dims(w1)), b1)))
                out = bb.emit_output(R.add(R.matmul(h, R.permute_dims(w2)), b2))
        bb.emit_func_output(out)
    return bb.get()


def test_the_mlp_exercise_wants_every_layer_from_emit_te():
    operators = check("05-mlp-blockbuilder", mlp_module(with_te=False))
    assert operators.status == "failed" and "emit_te" in operators.message
    assert check("05-mlp-blockbuilder", mlp_module(with_te=True)).passed
    assert check("05-mlp-blockbuilder", None).status == "unchanged"


# ------------------------------------------------------- appendix A2: a node with attributes
def clip_nodes(attribute_type):
    """What appendix A2's generate_python makes, reduced to what the check reads."""
    class Node:
        def __init__(self, *fields):
            self.fields = fields

    kinds = {"Var": {"name": "str"}, "Add": {"lhs": "Expr", "rhs": "Expr"}, "Relu": {"x": "Expr"},
             "Clip": {"x": "Expr", "lo": attribute_type, "hi": attribute_type}}
    return {name: type(name, (Node,), {"_field_types": fields}) for name, fields in kinds.items()}


class Evaluate:
    def __init__(self, env):
        self.env = env

    def visit(self, node):
        kind = type(node).__name__
        if kind == "Var":
            return self.env[node.fields[0]]
        if kind == "Add":
            return self.visit(node.fields[0]) + self.visit(node.fields[1])
        x, lo, hi = node.fields
        return np.clip(self.visit(x), lo, hi)


def test_the_generator_exercise_wants_attributes_typed_and_in_the_header():
    header = "class ClipNode : public ExprNode {\n  Expr x;\n  double lo;\n  double hi;\n"
    namespace = {"header2": header, "Evaluate2": Evaluate}
    as_children = check("A2-clip-node", clip_nodes("Expr"), namespace)
    assert as_children.status == "failed" and "attributes" in as_children.message
    no_header = check("A2-clip-node", clip_nodes("float"), {"Evaluate2": Evaluate})
    assert "header2" in no_header.message
    right = check("A2-clip-node", clip_nodes("float"), namespace)
    assert right.passed, right.message


# ------------------------------------------------------------- lesson 11: a pass of your own
def test_the_pass_exercise_wants_the_identities_gone_and_the_meaning_kept():
    from tvm import relax as rx

    def pass_of(name, rewrite):
        @rx.expr_functor.mutator
        class Rewrite(rx.PyExprMutator):
            def visit_call_(self, call):
                return rewrite(super().visit_call_(call))

        @tvm.transform.module_pass(opt_level=0, name=name)
        def run(mod, ctx):
            mutator = Rewrite(mod)
            for gv, func in mod.functions_items():
                if isinstance(func, rx.Function):
                    mutator.builder_.update_func(gv, mutator.visit_expr(func))
            return mutator.builder_.get()
        return run

    def scalar(expr, value):
        return isinstance(expr, tvm.ir.expr.Constant) and expr.value.numpy().ndim == 0 \
            and float(expr.value.numpy()) == value

    def right_side_only(call):        # removes x * 1.0, misses 0.0 + a
        if call.op.same_as(tvm.ir.Op.get("relax.multiply")) and scalar(call.args[1], 1.0):
            return call.args[0]
        return call

    def every_scalar(call):           # removes b * 2.0 too: another program
        if call.op.name in ("relax.multiply", "relax.add") and \
                isinstance(call.args[1], tvm.ir.expr.Constant):
            return call.args[0]
        if call.op.name == "relax.add" and isinstance(call.args[0], tvm.ir.expr.Constant):
            return call.args[1]
        return call

    def raises(call):
        raise RuntimeError("my pass broke")

    unchanged = check("11-identity-pass", pass_of("Nothing", lambda call: call))
    assert unchanged.status == "failed" and "unchanged" in unchanged.message
    half = check("11-identity-pass", pass_of("Half", right_side_only))
    assert half.status == "failed" and "add(..., 0.0)" in half.message
    wrong = check("11-identity-pass", pass_of("TooMuch", every_scalar))
    assert wrong.status == "failed" and "`b * 2.0`" in wrong.message
    broken = check("11-identity-pass", pass_of("Broken", raises))
    assert broken.status == "failed" and "my pass broke" in broken.message
    assert check("11-identity-pass", "not a pass").status == "not run"
    assert check("11-identity-pass", None).status == "unchanged"
