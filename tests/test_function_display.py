"""A compiled function as a notebook cell's last expression: the cell's tabs for that function.

``fn`` (a DSL function) or ``mlclab.from_torch(model, x)`` shows a header (signature, target,
validation badge) and a tab per registered graph view and text style, then the validation; the
MIME bundle carries the widget and a static HTML twin. In terminal IPython, which prints only
the text, it is the one-line repr, with nothing computed.
"""
import os
import pathlib
import re

import nbformat
import pytest
from nbclient import NotebookClient

import mlclab
from mlclab.notebook import cell_display
from mlclab.notebook.cell_display import FunctionDisplay, function_tabs, show_tabs
from mlclab.viz.overview import OVERVIEW_NODES

REPO = pathlib.Path(__file__).resolve().parents[1]
WIDGET = "application/vnd.jupyter.widget-view+json"

DSL = '''
def f(x: Tensor[("n", 4), f32], w: Tensor[(4, 3), f32]):
    h = x @ w   # <img src=x onerror=alert(1)>
    return relu(h)
'''


@pytest.fixture
def kernel(monkeypatch):
    """As inside a Jupyter kernel, whose front end draws HTML and widgets (other tests in the
    session may have started a terminal-like IPython shell)."""
    monkeypatch.setattr(cell_display, "draws_html", lambda: True)


@pytest.fixture(scope="module")
def dsl_fn():
    return mlclab.compile(DSL, filename="<display>")["f"]


def summaries(html: str) -> list:
    return re.findall(r"<summary><b>(.*?)</b></summary>", html)


def test_tabs_are_the_registered_views_and_styles_then_validate():
    from mlclab.viz.registry import view_kind

    tabs = show_tabs()
    # ... but not the views of a build step ("fused"): --show fused asks for one
    expected = [k for k, t in tabs.items() if t.kind == "text" or t.kind == "graph"
                and view_kind(t.name).after is None] + ["validate"]
    assert function_tabs() == expected and "fused" in tabs
    assert expected[:1] == ["graph"] and "relax" in expected and "pipeline" not in expected


def test_dsl_function_displays_every_tab_with_a_static_twin(kernel, dsl_fn):
    data, metadata = dsl_fn._repr_mimebundle_()
    assert WIDGET in data
    assert data["text/plain"] == repr(dsl_fn)
    html = data["text/html"]
    assert html.startswith('<div class="mlclab-function">')
    assert summaries(html) == [show_tabs()[k].title for k in function_tabs()]
    header = html[:html.index("<details")]
    assert "&lt;mlclab function f(x: Tensor[(n, 4), f32]" in header
    assert "<code>llvm</code>" in header
    assert "mlclab-badge mlclab-pass" in header and "vs numpy reference of f" in header
    assert "<svg" in html and "random, seed=0" in html             # the graph; the validate view


def test_student_text_is_escaped(kernel, dsl_fn):
    html = dsl_fn._repr_mimebundle_()[0]["text/html"]
    assert "<img" not in html and "<script" not in html.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html            # the graph node quotes its line


def test_chosen_tabs_and_an_unknown_one(kernel, dsl_fn):
    html = FunctionDisplay(dsl_fn, show=["relax"]).static_html()
    assert summaries(html) == ["relax"]
    assert "mlclab-badge" not in html            # not validated: no validate tab was asked for
    with pytest.raises(ValueError, match="show: unknown view 'nope'"):
        FunctionDisplay(dsl_fn, show=["relax", "nope"])


def test_terminal_ipython_gets_only_the_repr(dsl_fn, monkeypatch):
    import IPython

    class TerminalShell:                         # an IPython shell without a kernel
        pass

    def fail(*args, **kwargs):
        raise AssertionError("the display was built for a terminal")

    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalShell())
    monkeypatch.setattr(cell_display, "FunctionDisplay", fail)
    assert not cell_display.draws_html()
    assert dsl_fn._repr_mimebundle_() == ({"text/plain": repr(dsl_fn)}, {})


def test_without_ipython_a_caller_gets_the_html(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert cell_display.draws_html()             # e.g. marimo: it asks, so it draws


def test_imported_pytorch_mlp_displays(kernel):
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    fn = mlclab.from_torch(model, torch.randn(2, 8))
    data, _ = fn._repr_mimebundle_()
    assert WIDGET in data and data["text/plain"] == repr(fn)
    html = data["text/html"]
    assert summaries(html) == [show_tabs()[k].title for k in function_tabs()]
    assert "mlclab-badge mlclab-pass" in html and "vs PyTorch Sequential (eval mode)" in html
    assert "&lt;mlclab model " in html and "<svg" in html


def test_a_large_graph_is_shown_as_its_overview(kernel):
    # Past OVERVIEW_NODES nodes the graph tabs draw the overview (mlclab.viz.overview), so the
    # display of a big program stays quick to build and to load.
    depth = OVERVIEW_NODES + 100
    source = ("def chain(x: Tensor[(8, 8), f32]) -> Tensor[(8, 8), f32]:\n    h = x\n"
              + "    h = h + x\n" * depth + "    return h\n")
    fn = mlclab.compile(source, filename="<chain>")["chain"]
    data, _ = fn._repr_mimebundle_()
    html = data["text/html"]
    assert WIDGET in data and "mlclab-badge mlclab-pass" in html
    notes = re.findall(r"overview: (\d+) of (\d+) nodes", html)
    assert notes and all(int(shown) <= OVERVIEW_NODES < int(total) for shown, total in notes)
    assert "failed:" not in html                 # no view fell over


def test_last_expression_of_a_notebook_cell_shows_the_display(tmp_path):
    """In a real kernel: IPython asks the function for its MIME bundle and gets the tabs."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import mlclab\n"
                                  f"f = mlclab.compile({DSL!r})['f']\n"
                                  "f"),
        nbformat.v4.new_code_cell("print(repr(f))"),
    ])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=env)
    # Two outputs (issue 20: an export with stored widget state shows the widget's output
    # blank offline): the text/html twin, updated in place once validated, with the verdict;
    # then the widget, which hides the twin live.
    twin, live = nb.cells[0].outputs
    assert twin.output_type == live.output_type == "display_data"
    assert set(twin.data) == {"text/html"}
    assert twin.data["text/html"].startswith('<div class="mlclab-fallback" data-mlclab-for=')
    assert '<div class="mlclab-function">' in twin.data["text/html"]
    assert "mlclab-badge mlclab-pass" in twin.data["text/html"]
    assert WIDGET in live.data and "text/html" not in live.data
    assert live.data["text/plain"] == nb.cells[1].outputs[0].text.strip()


def test_the_graph_is_on_screen_before_the_validation_runs(kernel, dsl_fn, monkeypatch):
    # A ResNet's validation took 14.5 s with nothing on screen: now the header and the first
    # graph are displayed first, a progress line says what runs, and the twin is then
    # updated with the badge and the complete static display.
    import IPython.display

    events = []

    class Handle:
        def update(self, data, metadata=None, raw=False):
            events.append(("update", data))

    def display(data, metadata=None, raw=False, display_id=False):
        assert raw
        events.append(("display", data))
        return Handle() if display_id else None

    validation = cell_display.FunctionViews.validation

    def validating(self):
        events.append(("validate", None))
        return validation(self)

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(cell_display.FunctionViews, "validation", validating)
    cell_display.show_function(dsl_fn)
    kinds = [kind for kind, _ in events]
    assert kinds[:2] == ["display", "display"] and kinds[-1] == "update" and "validate" in kinds
    twin, live, last = events[0][1], events[1][1], events[-1][1]
    assert WIDGET in live and "text/html" not in live                 # the widget, at once
    assert "<svg" in twin["text/html"]                                # and the graph's twin
    assert "mlclab-badge" not in twin["text/html"] and "not finished" in twin["text/html"]
    assert "mlclab-badge mlclab-pass" in last["text/html"]
    assert summaries(last["text/html"]) == [show_tabs()[k].title for k in function_tabs()]
    uid = re.compile(r'data-mlclab-for="([0-9a-f]+)"')
    assert uid.search(last["text/html"]).group(1) == uid.search(twin["text/html"]).group(1)
