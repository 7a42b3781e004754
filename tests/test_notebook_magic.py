"""%%tinynn in an in-process IPython shell: flags, binding, errors, --check."""
import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import mlclab.api.validation as validate_module
from mlclab.lang.diagnostics import DSLError
from mlclab.notebook.magic import CheckFailed, TinyNNMagics

PROGRAM = """def double(a: Tensor[("n",), f32]):
    return a + a

def square(a: Tensor[(2, 2), f32]):
    b = a @ a
    return b
"""


@pytest.fixture(scope="module")
def ip(ipython_shell):
    shell = ipython_shell
    shell.run_line_magic("load_ext", "mlclab")
    return shell


def test_every_function_is_bound_under_its_name(ip):
    with capture_output() as cap:
        assert ip.run_cell_magic("tinynn", "--show relax", PROGRAM) is None
    double, square = ip.user_ns["double"], ip.user_ns["square"]
    np.testing.assert_array_equal(double(np.arange(3, dtype="float32")), [0, 2, 4])
    a = np.array([[1, 2], [3, 4]], dtype="float32")
    np.testing.assert_allclose(square(a), a @ a)
    # One display for the whole cell (its twin, then its widget); the twin holds both functions.
    assert len(cap.outputs) == 2
    html = cap.outputs[0].data["text/html"]
    assert "<code>double</code>, <code>square</code>" in html and html.count("<summary><b>relax</b>") == 2


def test_quiet_shows_nothing(ip):
    with capture_output() as cap:
        ip.run_cell_magic("tinynn", "--quiet", "def one(a: Tensor[(1,), f32]):\n    return a\n")
    assert cap.outputs == [] and "one" in ip.user_ns


@pytest.mark.parametrize("line, message", [
    ("--show graph nonsense", "unknown view 'nonsense'"),
    ("--target {oops", "--target: not valid JSON"),
    ("--bogus", "unrecognized arguments"),
    ("--show 'graph", "cannot read the arguments .*no closing quotation"),
    ('--target "llvm', "no closing quotation"),
    ("--seed -1", "--seed must be 0 or more, got -1"),
    ("--seed abc", "invalid int value"),
    ("--target nonsense", "--target: 'nonsense' is not a target"),
    ("--target '{\"kind\": 3}'", "--target: {'kind': 3} is not a target"),
    ("--show", "expected at least one argument"),
])
def test_bad_flags_are_usage_errors(ip, line, message):
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("tinynn", line, "def f(a: Tensor[(1,), f32]):\n    return a\n")


def test_show_accepts_commas_and_the_configured_default(ip):
    magics = ip.magics_manager.registry["TinyNNMagics"]
    assert isinstance(magics, TinyNNMagics)
    old = magics.show
    try:
        ip.run_line_magic("config", "TinyNNMagics.show = ['relay']")
        with capture_output() as cap:
            ip.run_cell_magic("tinynn", "", "def g1(a: Tensor[(1,), f32]):\n    return a\n")
        assert "<summary><b>relay</b>" in cap.outputs[0].data["text/html"]
        with capture_output() as cap:
            ip.run_cell_magic("tinynn", "--show tir,let", "def g2(a: Tensor[(1,), f32]):\n    return a\n")
        html = cap.outputs[0].data["text/html"]
        assert html.index("<b>tir</b>") < html.index("<b>let (ANF)</b>") and "<b>relay</b>" not in html
    finally:
        magics.show = old


def test_dsl_error_keeps_its_type_and_renders_without_traceback(ip):
    cell = "def bad(a: Tensor[(2, 3), f32]):\n    return a @ a\n"
    with pytest.raises(DSLError) as info:
        ip.run_cell_magic("tinynn", "", cell)
    err = info.value
    assert err.lineno == 3                       # the %%tinynn line is line 1 of the cell
    rendered = err._render_traceback_()
    assert "DSLError" in rendered[0] and "line 3" in rendered[0]
    assert rendered[1].strip() == "return a @ a" and "^" in rendered[2]
    assert "bad" not in ip.user_ns


def test_shell_shows_the_compact_error_only(ip, capsys):
    # What the student sees: IPython's own error display, through _render_traceback_.
    result = ip.run_cell("%%tinynn\ndef bad2(a: Tensor[(2, 3), f32]):\n    return a @ a\n")
    assert isinstance(result.error_in_exec, DSLError)
    out = capsys.readouterr()
    shown = out.out + out.err
    assert "return a @ a" in shown and "Traceback" not in shown and "magic.py" not in shown


def test_check_fails_the_cell_when_validation_disagrees(ip, monkeypatch):
    real = validate_module.validate
    seen = {}

    def failing(fn, *args, **kwargs):
        seen.update(kwargs)
        report = real(fn, *args, **kwargs)
        report.outputs[0].comparison.mismatches = 1          # pretend TVM got one element wrong
        return report

    monkeypatch.setattr(validate_module, "validate", failing)
    with capture_output() as cap, pytest.raises(CheckFailed, match="chk disagrees with numpy"):
        ip.run_cell_magic("tinynn", "--check --seed 5", "def chk(a: Tensor[(2,), f32]):\n    return a * 2.0\n")
    assert seen["seed"] == 5
    # The display came first, so the student sees the failing report above the error.
    assert "mlclab-badge mlclab-fail" in cap.outputs[0].data["text/html"]
    assert "chk" in ip.user_ns
    assert CheckFailed("x")._render_traceback_()[0].endswith("x")


def test_check_of_a_function_too_large_to_draw_inputs_for_says_so_in_one_line(ip, capsys):
    cell = "%%tinynn --check -q\ndef big(a: Tensor[(100000, 100000), f32]):\n    return a + 1.0\n"
    result = ip.run_cell(cell)
    assert isinstance(result.error_in_exec, ValueError)
    out = capsys.readouterr()
    shown = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert len(shown) == 1, shown
    assert "--check cannot check big: random inputs would need" in shown[0]
    assert "pass your own arguments" in shown[0]


def test_cell_code_is_never_executed(ip, tmp_path):
    marker = tmp_path / "ran"
    cell = f"import os\nos.system('touch {marker}')\ndef f(a: Tensor[(1,), f32]):\n    return a\n"
    with pytest.raises(DSLError) as info:
        ip.run_cell_magic("tinynn", "", cell)
    assert info.value.lineno == 3 and not marker.exists()      # the os.system line
    with pytest.raises(DSLError):
        ip.run_cell_magic("tinynn", "", f"def g(a: Tensor[(1,), f32]):\n    open('{marker}', 'w')\n    return a\n")
    assert not marker.exists()


def test_several_functions_get_a_picker_over_their_tabs(ip):
    from mlclab.notebook.cell_display import CellDisplay
    import ipywidgets as W

    prog = {"double": ip.user_ns["double"], "square": ip.user_ns["square"]}
    box = CellDisplay(prog, ["graph", "relax"]).widget()
    header, picker, stack = box.children
    assert isinstance(picker, W.ToggleButtons) and picker.options == ("double", "square")
    assert isinstance(stack, W.Stack) and len(stack.children) == 2
    assert all(tab.titles == ("graph", "relax") for tab in stack.children)
    assert stack.children[1].children[0].view == "dataflow"       # a GraphViewer


def test_a_cell_is_its_static_twin_then_the_widget_that_hides_it(ip):
    """As a viewer's display (issue 20): an export keeps the twin whether or not it stores
    widget state, and the live widget's guard (whatever its tabs hold) hides it: it carries
    the twin's uid."""
    import re

    from mlclab.notebook.cell_display import CellDisplay
    from mlclab.notebook.widgets import TwinGuard

    prog = {"double": ip.user_ns["double"], "square": ip.user_ns["square"]}
    for show in (["graph", "relax"], ["relax"]):      # with a graph viewer and with none
        with capture_output() as cap:
            CellDisplay(prog, show)._ipython_display_()
        twin, live = cap.outputs
        assert set(twin.data) == {"text/html"}
        html = twin.data["text/html"]
        uid = re.match(r'<div class="mlclab-fallback" data-mlclab-for="([0-9a-f]+)">', html).group(1)
        assert "drawnLive(root)" in html and f"<summary><b>{show[0]}</b>" in html
        assert "application/vnd.jupyter.widget-view+json" in live.data and "text/html" not in live.data
        box = live.data["application/vnd.jupyter.widget-view+json"]["model_id"]
        from ipywidgets.widgets.widget import _instances

        guard = _instances[box].children[0]
        assert isinstance(guard, TwinGuard) and guard.uid == uid and guard.live


def test_a_failing_view_is_reported_in_place_not_raised(ip):
    from mlclab.notebook.cell_display import CellDisplay

    class Broken:
        def __init__(self, fn):
            self.fn = fn

        def __getattr__(self, name):
            return getattr(self.fn, name)

        def text(self, style):
            raise RuntimeError("printer <bug>")

    html = CellDisplay({"double": Broken(ip.user_ns["double"])}, ["relax"]).static_html()
    assert "the relax view failed: RuntimeError: printer &lt;bug&gt;" in html


def test_target_and_force_reach_compile(ip, monkeypatch):
    import mlclab

    calls = []
    real = mlclab.api.compile

    def spy(source, **kwargs):
        calls.append(kwargs)
        return real(source, **kwargs)

    monkeypatch.setattr(mlclab.api, "compile", spy)
    cell = "def tgt(a: Tensor[(1,), f32]):\n    return a\n"
    ip.run_cell_magic("tinynn", "--quiet", cell)
    ip.run_cell_magic("tinynn", '--quiet -f --target {"kind":"llvm"}', cell)
    assert calls[0]["force"] is False and "target" not in calls[0]
    assert calls[1]["force"] is True and calls[1]["target"] == {"kind": "llvm"}
    assert calls[0]["filename"].startswith("<tinynn cell [")


# ------------------------------------------------------------------ registering a view and a style
@pytest.fixture
def toys():
    """A toy graph view and a toy text style, registered as a user's module would."""
    from mlclab.inspect.texts import IRText, register_style, unregister_style
    from mlclab.viz.parser import RelaxParser
    from mlclab.viz.registry import register_view, unregister_view

    class ParamsParser(RelaxParser):
        view, layout = "params", "dataflow"

        def _build(self):
            fname = self.subject.name
            cid = self._function_cluster(fname)
            for p in self.mod[fname].params:
                node = self._param_node(fname, p, self._ids_of(fname)[p], cid)
                self.graph.outputs.append(node.id)     # what plotters start from

    def signature(subject):
        names = ", ".join(p.name for p in subject.function.params)
        return IRText("sig", f"{subject.name} takes {names}\n")

    register_view("params", ParamsParser, title="params only", show="params",
                  description="the parameters only")
    register_style("sig", signature, title="signature", description="who takes what")
    try:
        yield
    finally:
        unregister_view("params")
        unregister_style("sig")


def test_a_registered_view_and_style_appear_in_cli_magic_and_cell_display(ip, toys, tmp_path,
                                                                           capsys):
    from mlclab.cli import build_parser, main
    from mlclab.notebook.cell_display import show_choices

    # The CLI's choices.
    args = build_parser().parse_args(["viz", "m.py", "--view", "params"])
    assert args.view == "params"
    assert build_parser().parse_args(["text", "m.py", "--style", "sig"]).style == "sig"
    model = tmp_path / "m.py"
    model.write_text("def h(x: Tensor[(2,), f32], w: Tensor[(2,), f32]):\n    return x * w\n")
    assert main(["text", str(model), "--style", "sig"]) == 0
    assert capsys.readouterr().out == "h takes x, w\n"
    assert main(["viz", str(model), "--view", "params", "--format", "txt"]) == 0
    out = capsys.readouterr().out
    assert "Param %x" in out and "Param %w" in out and "Call" not in out
    # The magic's --show and the cell display's tabs, with their titles.
    assert {"params", "sig"} <= set(show_choices())
    with capture_output() as cap:
        ip.run_cell_magic("tinynn", "--show params sig",
                          "def h2(x: Tensor[(2,), f32], w: Tensor[(2,), f32]):\n    return x * w\n")
    html = cap.outputs[0].data["text/html"]
    assert "<b>params only</b>" in html and "<b>signature</b>" in html
    assert "h2 takes x, w" in html and 'id="h2:w"' in html
    assert "failed" not in html


def test_unregistered_views_are_gone_everywhere(ip):
    from mlclab.notebook.cell_display import show_choices

    assert "params" not in show_choices()
    with pytest.raises(UsageError, match="unknown view 'params'"):
        ip.run_cell_magic("tinynn", "--show params", "def f(a: Tensor[(1,), f32]):\n    return a\n")


def test_fast_math_flag_compiles_with_fast_math_and_says_so(ip):
    cell = "def shift(a: Tensor[(1,), f32]):\n    return (a + 1e30) - 1e30\n"
    with capture_output() as cap:
        ip.run_cell_magic("tinynn", "--fast-math --show relax", cell)
    fast = ip.user_ns["shift"]
    assert fast.program.fast_math and fast(np.ones(1, np.float32))[0] == 1.0
    html = "".join(o.data.get("text/html", "") for o in cap.outputs)
    assert "fast-math" in html
    with capture_output():
        ip.run_cell_magic("tinynn", "--quiet", cell)      # the same cell, strict: numpy's 0
    strict = ip.user_ns["shift"]
    assert not strict.program.fast_math and strict(np.ones(1, np.float32))[0] == 0.0
