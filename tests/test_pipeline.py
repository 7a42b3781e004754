"""The build pipeline, one pass at a time (mlclab.inspect.pipeline)."""
import pytest

import mlclab
from programs import BRANCHY, LOG_TWICE
from mlclab.backend.passes import build_passes
from mlclab.inspect.pipeline import pipeline

import tvm
import tvm_ffi  # noqa: E402

SRC = '''\
def mlp(x: Tensor[("n", 8), f32], w1: Tensor[(8, 16), f32], b1: Tensor[(16,), f32],
        w2: Tensor[(16, 3), f32]):
    h = relu(x @ w1 + b1)
    return softmax(h @ w2)
'''


@pytest.fixture(scope="module")
def steps():
    return pipeline(mlclab.compile(SRC)["mlp"])


def test_steps_are_exactly_the_build_passes(steps):
    assert steps.names == [p.info.name for p in build_passes("llvm")]
    assert steps.names[:13] == ["mlclab.PackWeights", "FuseTransposeMatmul", "DispatchSampling",
                                "DispatchSortScan",
                                "mlclab.FoldBatchNorm", "mlclab.BlockConvLayout",
                                "mlclab.FuseConcatNormRelu", "mlclab.ReadJoinParts",
                                "LegalizeOps", "AnnotateTIROpPattern", "FoldConstant", "FuseOps",
                                "FuseTIR"]
    # Applying the passes one at a time ends where the whole pipeline in one go does.
    whole = tvm.transform.Sequential(build_passes("llvm"))
    with mlclab.backend.passes.resolve_target("llvm"):
        expected = whole(steps.input)
    assert tvm_ffi.structural_equal(steps.final, expected)


def test_each_step_knows_whether_it_changed_the_module(steps):
    assert not steps["DispatchSampling"].changed
    assert steps["LegalizeOps"].changed and steps["FuseOps"].changed
    assert steps[8] is steps["LegalizeOps"]
    with pytest.raises(KeyError, match="no pass 'Nope'"):
        steps["Nope"]
    assert "(no change)" in repr(steps)
    page = steps._repr_html_()
    assert "5 rewritten" in page and "lv, lv1 merged into h" in page
    assert page.count("<details>") == sum(s.changed for s in steps)
    assert "R.call_tir(cls.matmul" in page
    assert ") -&gt; R.Tensor" in page and ") -> R.Tensor" not in page     # the diff is escaped


def test_fuseops_draws_the_fused_group_as_a_cluster(steps):
    g = steps["FuseOps"].graph().graph
    (fused,) = [c for c in g.clusters.values() if c.kind == "fused"]
    inside = sorted(n.op for n in g.nodes.values() if n.group == fused.id)
    assert fused.label.startswith("fused_matmul_add")
    assert len(inside) == 3 and any(op.startswith("relu") for op in inside)
    folded = steps["FuseOps"].graph(collapse="group").graph
    (box,) = folded.find(kind="collapsed")
    assert box.op == fused.label and box.folded.nodes == 3 and box.folded.kind == "fused"


def test_dsl_lines_survive_lowering_by_identity(steps):
    before = {n.value: n.line for n in steps.diff(0).graph.graph.nodes.values()
              if n.source}
    g = steps["FuseTIR"].graph().graph
    (kernel,) = g.find(kind="fused")
    # FuseTIR's kernel computes what the DSL's ``h = relu(x @ w1 + b1)`` computed.
    assert kernel.value == "mlp:h" and kernel.line == 3
    (soft,) = [n for n in g.nodes.values() if n.op.startswith("softmax")]
    assert soft.value == "mlp:gv" and soft.line == 4
    assert before["mlp:h"] == 3
    # After CallTIRRewrite the buffer a kernel writes into carries the value it holds.
    g2 = steps["CallTIRRewrite"].graph().graph
    assert {"mlp:h", "mlp:lv2", "mlp:gv"} <= {n.value for n in g2.nodes.values()}


def test_diffs_name_added_removed_rewritten_merged(steps):
    legal = steps["LegalizeOps"].diff()
    assert not legal.added and not legal.removed
    assert set(legal.rewritten) == {"mlp:lv", "mlp:lv1", "mlp:h", "mlp:lv2", "mlp:gv"}
    fuse = steps["FuseOps"].diff()
    assert set(fuse.grouped) == {"mlp:lv", "mlp:lv1", "mlp:h"}
    fusetir = steps["FuseTIR"].diff()
    assert fusetir.merged == {"mlp:h": ["mlp:lv", "mlp:lv1"]}
    assert "merged into h: lv, lv1" in fusetir.summary()
    dg = fusetir.graph.graph
    statuses = {n.status for n in dg.nodes.values()}
    assert {"merged"} <= statuses
    ghosts = [n for n in dg.nodes.values() if n.id.startswith("removed:")]
    assert sorted(n.name for n in ghosts) == ["lv", "lv1"]
    assert "merged" in fusetir.graph.source
    rewrite = steps["CallTIRRewrite"].diff()
    assert rewrite.added and all(v.split(":")[1].startswith("_") for v in rewrite.added)


def test_text_diff_and_step_texts(steps):
    d = steps["LegalizeOps"].diff()
    assert d.text.startswith("--- before LegalizeOps")
    assert "+    @T.prim_func" in d.text and "-            lv: " in d.text
    assert steps["DispatchSampling"].diff().text == ""
    assert "R.call_tir(" in steps["LegalizeOps"].text("relax")
    assert "call_tir(@" in steps["LegalizeOps"].text("relay")
    with pytest.raises(ValueError):
        steps["LegalizeOps"].text("tir")


def test_pipeline_of_bare_relax_module():
    from tvm import relax
    from tvm.relax import op as R

    x = relax.Var("x", relax.TensorType((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(R.exp(x))
            z = bb.emit_output(R.add(y, y))
        bb.emit_func_output(z)
    p = pipeline(bb.get())
    assert len(p) == len(build_passes("llvm"))
    g = p["FuseOps"].graph().graph
    assert any(c.kind == "fused" for c in g.clusters.values())


ROBUST = LOG_TWICE + "\n" + BRANCHY.format(name="g") + "\n" + '''\
def main(x: Tensor[(8,), f32]):
    a = f(x)
    return f(a) * 2.0

def cnn(x: Tensor[("n", 1, 8, 8), f32], w: Tensor[(4, 1, 3, 3), f32], s: Tensor[(4,), f32],
        b: Tensor[(4,), f32], m: Tensor[(4,), f32], v: Tensor[(4,), f32]):
    c = conv2d(x, w, padding=(1, 1))
    n = batch_norm(c, s, b, m, v)
    p = max_pool2d(relu(n), (2, 2))
    q = flatten(p)
    return log_softmax(q), sum(q, axis=1)
'''


@pytest.mark.parametrize("name", ["g", "main", "cnn"])
def test_every_step_of_every_shape_of_program_draws_and_diffs(name):
    """if/else, calls between functions, tuples and symbolic sizes through all 19 passes."""
    fn = mlclab.compile(ROBUST)[name]
    steps = pipeline(fn)
    for step in steps:
        for view in ("dataflow", "tree", "let"):
            g = step.graph(view).graph
            assert g.outputs and all(o in g.nodes for o in g.outputs)
        _ = step.diff().graph.source      # the diff's graph builds without raising
    # Every value of the high-level IR keeps its DSL line up to fusion's end.
    g = steps["FuseTIR"].graph().graph
    lines = {n.line for n in g.nodes.values() if n.source and n.kind != "param"}
    body = {n.line for n in fn.graph().graph.nodes.values()
            if n.source and n.kind != "param"}
    assert lines and lines <= body


def test_steps_and_diffs_display_in_notebooks(steps):
    bundle = steps["FuseOps"]._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"] and "fused_matmul_add" in bundle["image/svg+xml"]
    diff = steps["FuseTIR"].diff()._repr_mimebundle_()
    assert diff["text/plain"].startswith("FuseTIR: FuseOps -> FuseTIR")
    assert 'id="removed:' in diff["image/svg+xml"]                 # the merged-away ghosts


def test_value_tracking_reads_the_ir_as_the_dataflow_view_does(steps):
    # The value table and the dataflow view share one walk (viz.dataflow_walk) but build their
    # own records: ids, kinds and data flow must agree at every step, or a drawn step could not
    # be mapped back to the input's values.
    from mlclab.inspect.values import value_table
    from mlclab.viz.parser import DataflowParser

    others = [pipeline(mlclab.compile(src)["f"]) for src in (BRANCHY.format(name="f"), LOG_TWICE)]
    for pipe in [steps] + others:
        for mod in [pipe.input] + [s.mod for s in pipe.steps]:
            subject = pipe._subject(mod)
            table = value_table(subject)
            g = DataflowParser().parse(subject)
            assert list(table.values) == list(g.nodes)
            for nid, v in table.values.items():
                node = g.nodes[nid]
                assert (v.value, v.kind, v.op, v.via) == \
                    (node.value, node.kind, node.op, node.attrs.get("via"))
                assert v.inputs == g.inputs(nid)
            assert table.outputs == g.outputs
            fused = sorted(c.label for c in g.clusters.values()
                           if c.kind == "fused" and c.parent is not None)
            assert sorted(table.groups.values()) == fused


def test_pipeline_does_not_import_a_view_parser():
    import ast
    import pathlib

    for module in ("pipeline", "values", "text"):
        tree = ast.parse(pathlib.Path(mlclab.__file__).parent.joinpath("inspect", f"{module}.py")
                         .read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(m and m.endswith("viz.parser") for m in imported), module


def test_copying_or_pickling_pipeline_objects_is_safe(tmp_path):
    # TVM's JSON serializer segfaults on IR, so this runs in a subprocess: a crash fails the test
    # with its exit status instead of killing pytest.
    import subprocess
    import sys

    script = tmp_path / "copy_pickle.py"
    script.write_text('''
import copy, pickle
import mlclab
fn = mlclab.compile("def f(x: Tensor[(4,), f32]):\\n    return relu(x) + 1.0\\n")["f"]
p = fn.pipeline()
step = p["FuseOps"]
objects = {"pipeline": p, "step": step, "diff": step.diff(), "subject": step.subject(),
           "dict": {"p": p, "steps": list(p)}}
for name, obj in objects.items():
    assert copy.copy(obj) is obj or name == "dict", name
    copied = copy.deepcopy(obj)
    assert copied is obj if name != "dict" else copied["p"] is p, name
    try:
        pickle.dumps(obj)
    except TypeError as err:
        assert "holds TVM IR, which cannot be pickled" in str(err), (name, err)
        print(name, "refused:", str(err)[:70])
    else:
        raise AssertionError(f"{name} pickled")
print("done")
''')
    import os
    from pathlib import Path

    root = str(Path(mlclab.__file__).parents[1])          # this checkout's mlclab
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("refused:") == 5 and result.stdout.strip().endswith("done")


def test_bad_step_and_diff_arguments_name_what_is_wrong(steps):
    with pytest.raises(IndexError, match=f"no step 99: the pipeline has {len(steps)} steps"):
        steps[99]
    with pytest.raises(TypeError, match="by position or pass name, got 1.5"):
        steps[1.5]
    with pytest.raises(ValueError, match="before must be a step before 3"):
        steps.diff(3, 5)
    assert steps.diff("LegalizeOps", -1).before_name == "input"
    assert steps.diff(-1).after_name == steps.names[-1]
    with pytest.raises(ValueError, match="style: a step shows its own module"):
        steps[0].text("tir")


@pytest.mark.parametrize("module", ["mlclab.inspect.values", "mlclab.inspect.pipeline",
                                    "mlclab.inspect.text", "mlclab.inspect.texts",
                                    "mlclab.viz.registry", "mlclab.viz.dataflow_walk",
                                    "mlclab.notebook.cell_display",
                                    "mlclab.cli"])
def test_each_module_imports_first_in_a_fresh_process(module):
    # An import cycle shows up as "partially initialized module" only when the cycle is entered
    # from one particular module: import each one first.
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(mlclab.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-1500:]
