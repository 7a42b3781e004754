"""The build record (mlclab.backend.record): each pass of the real compile recorded once, read by
every view; a pass of mlclab's own that fails is skipped (or replaced) and said, never silent
(issues 19 and 21).

Forced failures replace a pass of the pipeline and compile in a subprocess, so the patched
pipeline (and whatever a broken pass might do to TVM) stays out of this test process."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mlclab
from mlclab.backend.passes import build_passes

import tvm
import tvm_ffi  # noqa: E402

SRC = '''\
def mm(a: Tensor[(64, 64), f32], b: Tensor[(64, 64), f32]):
    return relu(a @ b)
'''


@pytest.fixture(scope="module")
def fn():
    return mlclab.compile(SRC)["mm"]


def test_the_record_is_the_compile_s_own_passes(fn):
    record = fn.build_record
    assert record is fn.program.built.record
    assert record.names == [p.info.name for p in build_passes("llvm")]
    assert record.optimized and not record.fallbacks and fn.program.optimized
    assert record.input.same_as(fn.mod)
    assert all(r.seconds >= 0 for r in record) and record.seconds > 0
    assert record["LegalizeOps"].changed and record["FuseOps"].changed
    # A pass that changed nothing keeps the module before it: one object, not a copy.
    for before, run in zip([record.input, *[r.mod for r in record]], record):
        assert run.changed or run.mod.same_as(before), run.name
    assert record.final.same_as(record.runs[-1].mod)
    with pytest.raises(ValueError, match="no pass 'Nope'.*FuseOps"):
        record.find("Nope")


def test_a_pass_that_updates_its_module_in_place_does_not_rewrite_the_record(fn):
    # mlclab.RelaxParamAlignment sets PrimFunc attributes with ``mod[gv] = ...``: the record
    # must still see the module before it unchanged, and the change in the pass's own step.
    record = fn.build_record
    alignment = record["mlclab.RelaxParamAlignment"]
    assert alignment.changed
    before = record.runs[alignment.index - 1].mod
    assert any(isinstance(f, tvm.tirx.PrimFunc) for f in before.functions.values())
    assert not tvm_ffi.structural_equal(before, alignment.mod)


def test_views_read_the_record_and_never_run_a_pass_again(fn, monkeypatch):
    import mlclab.backend.passes as passes

    def no_pipeline(*args, **kwargs):
        raise AssertionError("a view ran the build pipeline again")

    monkeypatch.setattr(passes, "build_passes", no_pipeline)
    p = fn.pipeline()
    assert p.names == fn.build_record.names
    assert p["FuseOps"].mod.same_as(fn.build_record["FuseOps"].mod)
    assert "def fused_matmul_relu" in fn.text("tir")
    assert fn.graph("fused").graph.clusters
    prof = fn.profile(repeat=1)
    assert [k.name for k in prof.kernels] == ["fused_matmul_relu"]


def test_fused_is_a_step_of_the_pipeline(fn):
    from mlclab.viz.registry import view_kind

    assert view_kind("fused").after == "FuseOps"
    fused, after = fn.graph("fused"), fn.graph("dataflow", after="FuseOps")
    assert fused.graph.to_dict() == after.graph.to_dict()
    legal = fn.graph("dataflow", after="LegalizeOps").graph
    assert not any(c.kind == "fused" for c in legal.clusters.values())
    with pytest.raises(ValueError, match="no pass 'Fusion'.*LegalizeOps, AnnotateTIROpPattern"):
        fn.graph("dataflow", after="Fusion")
    with pytest.raises(TypeError, match="after"):
        fn.graph("dataflow", after=3)
    # Drawing it without the function's record is refused with the way to do it.
    from mlclab.viz.views import graph

    with pytest.raises(ValueError, match="fn.graph\\('fused'\\)"):
        graph(fn.mod, "fused")


def test_fused_is_in_every_list_of_views():
    from mlclab.cli import build_parser
    from mlclab.notebook.cell_display import function_tabs, show_choices
    from mlclab.notebook.graphs import viewer_views

    assert "fused" in viewer_views() and "fused" in show_choices()
    assert "fused" in build_parser().format_help() or any(
        "fused" in (a.choices or []) for sub in build_parser()._subparsers._group_actions
        for p in sub.choices.values() for a in p._actions)
    assert "fused" not in function_tabs()       # asked for with --show fused, not by default


def test_the_target_s_device_is_used(fn):
    from mlclab.backend.targets import backend_for, device_for

    target = mlclab.backend.passes.resolve_target("llvm")
    assert device_for("llvm") == backend_for(target).device()
    assert fn.program.built.device == device_for(fn.target)
    assert fn._marshaller.device == fn.program.built.device


def test_kernels_carry_no_argument_checks_and_the_function_still_checks_its_inputs(fn):
    # The kernels' own argument checks (half of LLVM's work on DenseNet-121) are left out of the
    # build: only the VM calls kernels, with tensors the function's entry checks already verified.
    (library,) = fn.program.built.executable.mod.imports
    code = library.inspect_source("ll")
    assert "define" in code and 'c"Expected ' not in code and 'c"TypeError' not in code
    a = np.ones((64, 64), "float32")
    with pytest.raises(ValueError, match="argument a must have shape .64, 64., got .3, 3."):
        fn(np.ones((3, 3), "float32"), a)
    np.testing.assert_allclose(fn(a, a), np.maximum(a @ a, 0))


def _schedule_then(change):
    """The real schedule pass, then ``change(name, primfunc)`` applied to each PrimFunc."""
    import mlclab.backend.schedules as schedules

    real = schedules.schedule_cpu

    def schedule_cpu(target):
        inner = real(target)

        @tvm.transform.module_pass(opt_level=0, name=inner.info.name)
        def changed(mod, ctx):
            mod = inner(mod)
            funcs = {gv: (change(gv.name_hint, f) if isinstance(f, tvm.tirx.PrimFunc) else f)
                     for gv, f in mod.functions_items()}
            return tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)

        return changed

    return schedule_cpu


def _schedule_recorder(rule_of):
    """Each PrimFunc marked as the ordered-rule schedule pass marks it, with a stand-in rule."""
    return _schedule_then(lambda name, f: f.with_attr("mlclab.schedule", rule_of(name))
                          .with_attr("mlclab.declined", ["elementwise: has a reduction"]))


def test_schedule_decisions_show_in_the_tir_text_and_the_profile(monkeypatch):
    import mlclab.backend.schedules as schedules
    from mlclab.notebook.profile_html import profile_html

    monkeypatch.setattr(schedules, "schedule_cpu", _schedule_recorder(lambda name: "matmul"))
    fn = mlclab.compile(SRC.replace("mm", "mm_rules"), force=True)["mm_rules"]
    text = fn.text("tir")
    assert "# scheduled by rule 'matmul'\n" in text
    assert "#   declined by elementwise: has a reduction\n" in text
    lines = text.splitlines()
    at = lines.index("    # scheduled by rule 'matmul'")
    assert lines[at + 2].lstrip().startswith("@T.prim_func")
    assert fn.build_record.schedule_decisions() == {
        "fused_matmul_relu": ("matmul", ("elementwise: has a reduction",))}
    (kernel,) = fn.profile(repeat=1).kernels
    assert kernel.rule == "matmul" and kernel.declined == ("elementwise: has a reduction",)
    page = profile_html(fn.profile(repeat=1))
    assert "<th" in page and "schedule rule" in page and ">matmul</span>" in page


def test_the_real_rules_record_their_decision(fn):
    (kernel,) = fn.profile(repeat=1).kernels
    assert kernel.rule == fn.build_record.schedule_decisions()[kernel.name][0]
    assert f"# scheduled by rule '{kernel.rule}'" in fn.text("tir")


def _schedule_unrecorded():
    """The real schedule pass with its decisions stripped: what a pass that records none builds."""
    return _schedule_then(lambda name, f: f.without_attr("mlclab.schedule")
                          .without_attr("mlclab.declined"))


def test_without_recorded_decisions_nothing_is_claimed(monkeypatch):
    import mlclab.backend.schedules as schedules

    monkeypatch.setattr(schedules, "schedule_cpu", _schedule_unrecorded())
    fn = mlclab.compile(SRC.replace("mm", "mm_bare"), force=True)["mm_bare"]
    assert "scheduled by rule" not in fn.text("tir")
    assert fn.build_record.schedule_decisions() == {}
    (kernel,) = fn.profile(repeat=1).kernels
    assert kernel.rule is None and kernel.declined == ()


def test_a_pass_that_raises_inside_a_pass_and_is_caught_there_leaves_the_record_whole(
        monkeypatch):
    # A schedule rule may run a TVM pass as a probe and catch its failure (inline.py asks
    # LowerIntrin how an intrinsic lowers): TVM calls no run_after_pass for that pass, and
    # the passes after the schedule step must still be recorded, at the pipeline's level.
    import mlclab.backend.schedules as schedules

    def raising(mod, ctx):
        raise RuntimeError("probe refused")

    def probe(name, func):
        try:
            tvm.transform.module_pass(raising, opt_level=0, name="Probe")(
                tvm.IRModule({"probe": func}))
        except RuntimeError:
            pass
        return func

    monkeypatch.setattr(schedules, "schedule_cpu", _schedule_then(probe))
    fn = mlclab.compile(SRC.replace("mm", "mm_probed"), force=True)["mm_probed"]
    record = fn.build_record
    assert record.names == [p.info.name for p in build_passes("llvm")]
    assert record.optimized and "Probe" not in record.names


# ------------------------------------------------------------------ forced failures
def _run(code: str) -> dict:
    """Run ``code`` (which prints one JSON line last) in a fresh interpreter on this checkout."""
    root = str(Path(mlclab.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    prelude = textwrap.dedent(f'''
        import json, warnings
        import numpy as np
        import tvm
        import mlclab
        SRC = {SRC!r}
        A = np.random.default_rng(0).standard_normal((64, 64)).astype("float32")

        def fail(mod, ctx):
            raise RuntimeError("forced failure")

        def failing(name):
            """A pass called ``name`` that raises."""
            return tvm.transform.module_pass(fail, opt_level=0, name=name)

        def build(force=False):
            with warnings.catch_warnings(record=True) as caught:   # (mlclab's filters kept)
                fn = mlclab.compile(SRC, force=force)["mm"]
            said = [str(w.message) for w in caught
                    if issubclass(w.category, mlclab.FallbackWarning)]
            right = bool(np.allclose(fn(A, A), np.maximum(A @ A, 0), rtol=1e-4, atol=1e-4))
            return fn, said, right
    ''')
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_failing_pass_of_mlclab_s_own_is_skipped_and_said():
    out = _run('''
        import mlclab.backend.schedules as schedules
        schedules.schedule_cpu = lambda target: failing("mlclab.ScheduleCPU")
        fn, said, right = build()
        said += build(force=True)[1]           # said again: every fallback is said
        p = fn.pipeline()
        prof = fn.profile(repeat=1)
        from mlclab.notebook.profile_html import profile_html
        print(json.dumps({"said": said, "right": right, "names": p.names,
                          "failed": [s.name for s in p if s.fallback],
                          "instead": [s.fallback.instead for s in p if s.fallback],
                          "repr": repr(p), "html": p._repr_html_(),
                          "record": [str(f) for f in fn.build_record.fallbacks],
                          "optimized": fn.program.optimized, "tir": fn.text("tir"),
                          "profile": [str(f) for f in prof.fallbacks],
                          "profile_html": profile_html(prof),
                          "summary": repr(fn.build_record)}))
    ''')
    assert out["right"]
    said, again = out["said"]
    assert "mlclab.ScheduleCPU failed (forced failure)" in said and "fn.pipeline()" in said
    assert again == said
    assert out["names"] == [p.info.name for p in build_passes("llvm")]   # the rest still ran
    assert out["failed"] == ["mlclab.ScheduleCPU"] and out["instead"] == ["nothing (skipped)"]
    assert "FAILED (forced failure)" in out["repr"]
    assert "mlclab-fallback" in out["html"] and "forced failure" in out["html"]
    assert out["record"] == ["mlclab.ScheduleCPU failed (forced failure); ran nothing "
                             "(skipped) instead"]
    assert "mlclab's pipeline, with fallbacks" in out["summary"]
    assert out["optimized"] is False
    assert out["profile"] == out["record"] and "forced failure" in out["profile_html"]
    # The tir tab shows the code that ran: unscheduled, and says why.
    assert out["tir"].startswith("# mlclab.ScheduleCPU failed")
    assert "def fused_matmul_relu" in out["tir"] and "T.vectorized" not in out["tir"]


def test_a_failing_pass_with_a_tvm_counterpart_is_replaced_by_it():
    out = _run('''
        import mlclab.backend.targets as targets
        targets._bounded_fuse_ops = lambda: failing("FuseOps")
        fn, said, right = build()
        step = fn.pipeline().step("FuseOps")
        print(json.dumps({"said": said, "right": right, "changed": step.changed,
                          "instead": step.fallback.instead,
                          "clusters": [c.kind for c in fn.graph("fused").graph.clusters.values()]}))
    ''')
    assert out["right"] and len(out["said"]) == 1 and "FuseOps failed" in out["said"][0]
    assert out["instead"] == "TVM's FuseOps" and out["changed"]      # TVM's FuseOps fused it
    assert "fused" in out["clusters"]


def test_a_build_that_still_fails_falls_back_to_tvm_s_pipeline_and_says_so():
    # FuseTIR is TVM's and has no guard: failing in mlclab's pipeline only, it takes the whole
    # build to TVM's plain pipeline, whose passes the record and every view then show.
    out = _run('''
        import mlclab.backend.targets as targets
        real = targets._legalize_passes
        def legalize(target, optimized=False, fast_math=False):
            passes = real(target, optimized, fast_math)
            return [failing("FuseTIR") if optimized and p.info.name == "FuseTIR" else p
                    for p in passes]
        targets._legalize_passes = legalize
        fn, said, right = build()
        prof = fn.profile(repeat=1)
        from mlclab.backend.passes import build_passes
        print(json.dumps({"said": said, "right": right, "names": fn.pipeline().names,
                          "plain": [p.info.name for p in build_passes("llvm", optimized=False)],
                          "record": [str(f) for f in fn.build_record.fallbacks],
                          "repr": repr(fn.pipeline()), "tir": fn.text("tir"),
                          "optimized": fn.program.optimized, "summary": repr(fn.build_record),
                          "profile": [str(f) for f in prof.fallbacks],
                          "kernels": [k.name for k in prof.kernels]}))
    ''')
    assert out["right"] and out["optimized"] is False
    assert "TVM's plain pipeline (mlclab's failed)" in out["summary"]
    (said,) = out["said"]
    assert "FuseTIR failed (forced failure); ran TVM's plain pipeline" in said
    assert out["names"] == out["plain"] and "mlclab.ScheduleCPU" not in out["names"]
    assert "fallback: FuseTIR failed" in out["repr"]
    assert out["tir"].startswith("# FuseTIR failed") and "T.vectorized" not in out["tir"]
    assert out["profile"] == out["record"] and out["kernels"] == ["fused_matmul_relu"]


def test_a_cell_shows_the_fused_step_when_asked(fn):
    from mlclab.notebook.cell_display import FunctionDisplay

    data, _ = FunctionDisplay(fn, show=["fused", "tir"])._repr_mimebundle_()
    html = data["text/html"]
    assert "<summary><b>fused</b></summary>" in html and "fused_matmul_relu" in html
    assert "the fused view failed" not in html
