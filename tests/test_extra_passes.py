"""mlclab.extra_passes: a user's Relax pass runs inside mlclab's pipeline before LegalizeOps, shows
in fn.pipeline(), bypasses the compile cache, and is skipped with a FallbackWarning when it
raises."""
import numpy as np
import pytest
import tvm
from tvm import relax

import mlclab

SOURCE = '''
def scale(x: Tensor[(8, 8), f32]):
    return relu(x / 4.0)
'''
DIVIDE, MULTIPLY = tvm.ir.Op.get("relax.divide"), tvm.ir.Op.get("relax.multiply")


@relax.expr_functor.mutator
class _ByReciprocal(relax.PyExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        if call.op.same_as(DIVIDE) and isinstance(call.args[1], tvm.ir.expr.Constant):
            c = call.args[1].value
            return relax.op.multiply(call.args[0], relax.const(1.0 / c.numpy(), str(c.dtype)))
        return call


@tvm.transform.module_pass(opt_level=0, name="ByReciprocal")
def by_reciprocal(mod, ctx):
    mutator = _ByReciprocal(mod)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            mutator.builder_.update_func(gv, mutator.visit_expr(func))
    return mutator.builder_.get()


def ops_of(mod, name):
    return [b.value.op for block in mod[name].body.blocks for b in block.bindings
            if isinstance(b.value, relax.Call)]


def test_the_pass_runs_before_legalization_and_shows_in_the_pipeline():
    with mlclab.extra_passes(by_reciprocal):
        fn = mlclab.compile(SOURCE)["scale"]
    names = [s.name for s in fn.pipeline()]
    assert names.index("ByReciprocal") == names.index("LegalizeOps") - 1
    step = fn.pipeline()["ByReciprocal"]
    assert step.changed
    assert any(op.same_as(MULTIPLY) for op in ops_of(step.mod, "scale"))
    assert not any(op.same_as(DIVIDE) for op in ops_of(step.mod, "scale"))
    x = np.random.default_rng(0).standard_normal((8, 8)).astype("float32")
    assert mlclab.validate(fn, x).ok


def test_a_build_with_extra_passes_neither_reads_nor_fills_the_cache():
    plain = mlclab.compile(SOURCE)["scale"]
    with mlclab.extra_passes(by_reciprocal):
        rewritten = mlclab.compile(SOURCE)["scale"]
    assert "ByReciprocal" in [s.name for s in rewritten.pipeline()]
    again = mlclab.compile(SOURCE)["scale"]
    assert "ByReciprocal" not in [s.name for s in again.pipeline()]
    assert again.program is plain.program                # the plain build is still the cached one


def test_a_pass_that_raises_is_skipped_and_named():
    @tvm.transform.module_pass(opt_level=0, name="Unfinished")
    def unfinished(mod, ctx):
        raise ValueError("not written yet")

    with mlclab.extra_passes(unfinished), pytest.warns(mlclab.FallbackWarning, match="Unfinished"):
        fn = mlclab.compile(SOURCE)["scale"]
    (fallback,) = fn.build_record.fallbacks
    assert fallback.stage == "Unfinished" and "not written yet" in fallback.error
    x = np.ones((8, 8), "float32")
    np.testing.assert_allclose(fn(x), np.maximum(x / 4, 0))


def test_bad_arguments_name_the_parameter():
    with pytest.raises(TypeError, match=r"passes\[0\] should be a tvm.transform.Pass"):
        with mlclab.extra_passes(lambda mod: mod):
            pass
    with pytest.raises(ValueError, match="two passes are named ByReciprocal"):
        with mlclab.extra_passes(by_reciprocal, by_reciprocal):
            pass
