"""One exception policy at the api boundary: a student's mistake is a DSLError, TypeError,
ValueError or MemoryError naming the parameter; anything else is a short mlclab.InternalError
with the original chained, never TVM's traceback as the message."""
import numpy as np
import pytest

import mlclab
from mlclab.api import displays
from mlclab.api.errors import translate

SRC = "def two(a: Tensor[(2,), f32], b: Tensor[(2,), f32]):\n    return a * b\n"


@pytest.fixture(scope="module")
def two():
    return mlclab.compile(SRC)["two"]


def test_validate_accepts_what_a_call_accepts(two):
    report = mlclab.validate(two, [1.0, 2.0], [3, 4])
    assert report.ok and report.inputs[0][1].dtype == np.float32
    scalar = mlclab.compile("def s(a: Tensor[(), f32]):\n    return a + 1.0\n")["s"]
    assert mlclab.validate(scalar, 5).ok
    sym = mlclab.compile("def sym(a: Tensor[(\"n\",), f32]):\n    return a * 2.0\n")["sym"]
    assert mlclab.validate(sym, [1.0, 2.0, 3.0]).sizes == {"n": 3}


@pytest.mark.parametrize("call, error, message", [
    (lambda f: mlclab.validate(f, seed=-1), ValueError, "seed must be >= 0"),
    (lambda f: mlclab.validate(f, seed="x"), TypeError, "seed must be an int"),
    (lambda f: mlclab.validate(f, rtol="abc"), TypeError, "rtol must be a number"),
    (lambda f: mlclab.validate(f, atol=-1.0), ValueError, "atol must be a finite number >= 0"),
    (lambda f: mlclab.validate(f, atol=float("nan")), ValueError, "atol must be a finite"),
    (lambda f: mlclab.validate(f, 5, 6, 7), TypeError, r"validate\(\) takes 2 arguments \(a, b\)"),
    (lambda f: mlclab.validate(f, [[1.0, 2.0]], [1.0, 2.0]), ValueError,
     "argument a must have shape"),
    (lambda f: mlclab.validate(f, ["x", "y"], [1.0, 2.0]), TypeError,
     "argument a must hold numbers"),
    (lambda f: mlclab.validate(f, reference=3), TypeError, "reference must be a function"),
    (lambda f: mlclab.validate(print), TypeError, "f must be a compiled mlclab function"),
])
def test_bad_validate_parameters_are_named(two, call, error, message):
    with pytest.raises(error, match=message):
        call(two)


def test_a_students_reference_raises_its_own_error(two):
    def reference(a, b):
        raise ZeroDivisionError("my bug")

    with pytest.raises(ZeroDivisionError, match="my bug"):
        mlclab.validate(two, reference=reference, seed=0)


def test_unexpected_failures_are_short_internal_errors():
    original = RuntimeError("Check failed: (x) is false\n  File \"/tvm/src/a.cc\", line 3\n" * 20)
    err = translate(original, "calling f")
    assert isinstance(err, mlclab.InternalError)
    assert str(err).startswith("mlclab bug while calling f: RuntimeError: Check failed")
    assert "\n" not in str(err) and "a.cc" not in str(err)
    assert translate(ValueError("x"), "calling f").args == ("x",)
    assert isinstance(translate(RuntimeError("std::bad_alloc"), "calling f"), MemoryError)


def test_a_failure_inside_a_call_leaves_as_internal_error(two, monkeypatch):
    def broken(*args):
        raise RuntimeError("InternalError: something deep in TVM\nStack trace: ...")

    monkeypatch.setattr(two, "_vm_fn", broken)
    with pytest.raises(mlclab.InternalError, match="mlclab bug while calling two") as info:
        two([1.0, 2.0], [3.0, 4.0])
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize("target, message", [
    ("cuda", "a GPU target"),
    ("c", "C source for another toolchain"),
    ({"kind": "llvm", "mtriple": "aarch64-linux-gnu"}, "builds for aarch64.*can't run"),
    ("no-such-target", "not a target mlclab knows"),
])
def test_targets_other_than_this_cpu_are_refused_up_front(target, message):
    with pytest.raises(ValueError, match=f"target: .*{message}"):
        mlclab.compile(SRC, target=target)


def test_displays_come_from_the_registry():
    assert displays.lookup("viewer").__module__ == "mlclab.notebook.graphs"
    with pytest.raises(LookupError, match="no display 'nope'"):
        displays.lookup("nope")
    with pytest.raises(ValueError, match="module:attribute"):
        displays.register("x", "no_colon")


def _imports(path):
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_imports_only_go_down_from_the_api_and_runtime_layers():
    import pathlib

    root = pathlib.Path(mlclab.__file__).parent
    for path in (root / "api").glob("*.py"):
        for module in _imports(path):
            assert "notebook" not in module and "cli" not in module, f"{path.name} imports {module}"
    for name in ("runtime.py", "kernel_plan.py", "tvm_setup.py"):
        for module in _imports(root / name):
            # only its own layer and the base (tests/test_layers.py): the kernels-only call
            # plan, TVM's set-up and the thread count
            assert not module.startswith(".") or module in (
                ".kernel_plan", ".tvm_setup", ".threadpool"), f"{name} imports {module}"


def test_keyword_arguments_to_a_call_are_a_type_error(two):
    with pytest.raises(TypeError,
                       match=r"two\(\) takes its arguments by position \(a, b\), got keyword b"):
        two([1.0, 2.0], b=[3.0, 4.0])


# ------------------------------------------------------------------ what a notebook shows
def _cell_output(shell, code: str) -> list:
    """The non-blank lines IPython prints for ``code``, without colours."""
    import contextlib
    import io
    import re

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        shell.run_cell(code)
    return [line for line in re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()
            if line.strip()]


@pytest.mark.parametrize("code, last", [
    ("two(np.zeros(3, 'f4'), np.zeros(2, 'f4'))",
     "ValueError: two(): argument a must have shape (2,), got (3,)"),
    ("two(np.zeros(2, 'f4'))", "TypeError: two() takes 2 arguments (a, b) but 1 was given"),
    ("two(np.zeros(2, 'f8'), np.zeros(2, 'f4'))", "TypeError: two(): argument a must be a float32"),
    ("two.reference(np.zeros(3, 'f4'), np.zeros(2, 'f4'))",
     "ValueError: two.reference(): argument a"),
    ("mlclab.validate(two, np.zeros(3, 'f4'), np.zeros(2, 'f4'))",
     "ValueError: validate(): argument a"),
    ("mlclab.validate(two, rtol=-1)", "ValueError: validate(): rtol must be"),
    ("two.profile(np.zeros(3, 'f4'), np.zeros(2, 'f4'))", "ValueError: two.profile(): argument a"),
    ("mlclab.from_torch(object(), 1)", "TypeError: from_torch(): module must be a torch.nn.Module"),
    ("mlclab.compile(3)", "TypeError: compile(): source must be a str"),
])
def test_an_error_in_a_notebook_is_its_message_not_mlclab_internals(ipython_shell, two, code, last):
    # Before: 36-54 lines of mlclab's frames above the message. Now the message alone, as a
    # DSL error in a %%tinynn cell shows (the exception's _render_traceback_).
    ipython_shell.user_ns.update(np=np, mlclab=mlclab, two=two)
    lines = _cell_output(ipython_shell, code)
    assert lines[-1].startswith(last), lines
    assert len(lines) <= 3, "\n".join(lines)
    assert not any("validation.py" in line or "arguments.py" in line for line in lines), lines


def test_an_error_in_the_students_reference_keeps_the_students_frames(ipython_shell, two):
    ipython_shell.user_ns.update(np=np, mlclab=mlclab, two=two)
    code = "def mine(a, b):\n    return a @ b.reshape(3, 1)\nmlclab.validate(two, reference=mine)"
    lines = _cell_output(ipython_shell, code)
    assert lines[-1].startswith("ValueError: cannot reshape array of size 2"), lines
    assert any("return a @ b.reshape(3, 1)" in line for line in lines), lines
    assert not any("mlclab/api" in line for line in lines), lines


def test_a_profile_and_a_profile_comparison_pickle(two):
    import pickle

    profile = two.profile()
    again = pickle.loads(pickle.dumps(profile))
    assert "two" in again._repr_html_()
    assert pickle.loads(pickle.dumps(mlclab.compare_profiles(profile, again)))._repr_html_()
