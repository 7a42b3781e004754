"""Fixture notebooks executed headless (nbclient), their outputs asserted.

tests/notebooks/tinynn.ipynb compiles with %%tinynn, calls the bound functions, validates,
and ends with a rejected program (tagged ``raises-exception``, so nbclient records the error
and goes on). The executed notebook is also converted to HTML without widget state, which is
what nbviewer and GitHub show: the static fallbacks must carry the graph and the report.
"""
import copy
import os
import pathlib
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = pathlib.Path(__file__).parent / "notebooks"


def _execute(name, tmp_path):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    env = dict(os.environ)
    # The kernel imports this checkout whether or not mlclab is pip-installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    # allow_errors: run every cell and keep its error output, so each test below reports on its
    # own cells (test_only_the_tagged_cell_fails checks that nothing else raised).
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return _execute("tinynn.ipynb", tmp_path_factory.mktemp("nb"))


def cell(nb, marker):
    found = [c for c in nb.cells if c.cell_type == "code" and marker in c.source]
    assert len(found) == 1, marker
    return found[0]


def stream(c):
    return "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")


def html_outputs(c):
    return [o.data["text/html"] for o in c.outputs
            if o.output_type in ("display_data", "execute_result") and "text/html" in o.data]


def errors(c):
    return [o for o in c.outputs if o.output_type == "error"]


def test_only_the_tagged_cell_fails(executed):
    failing = {i: f"{errors(c)[0].ename}: {errors(c)[0].evalue}"
               for i, c in enumerate(executed.cells) if c.cell_type == "code" and errors(c)}
    tagged = {i for i, c in enumerate(executed.cells)
              if "raises-exception" in c.metadata.get("tags", [])}
    assert set(failing) == tagged, failing


def test_functions_are_bound_and_compute_the_right_values(executed):
    assert "foo ok (2, 4) float32" in stream(cell(executed, "foo ok"))
    assert "mlp ok (5, 4)" not in stream(cell(executed, "mlp ok"))          # n=5, 3 classes
    assert "mlp ok (5, 3) True" in stream(cell(executed, "mlp ok"))


def test_tinynn_cell_shows_one_widget_with_a_static_svg_twin(executed):
    c = cell(executed, "--show graph let relax validate")
    displays = [o for o in c.outputs if o.output_type == "display_data"]
    # The twin (an export shows it with or without stored widget state), then the widget.
    twin, live = displays
    assert "application/vnd.jupyter.widget-view+json" in live.data
    html = twin.data["text/html"]
    assert "tinynn: compiled <code>foo</code>" in html
    # the dataflow graph, node ids kept
    assert "<svg" in html and 'id="foo:d"' in html
    # the validate view, --seed kept
    assert "mlclab-badge mlclab-pass" in html and "random, seed=0" in html
    for title in ("graph", "let (ANF)", "relax", "validate"):
        assert f"<summary><b>{title}</b></summary>" in html
    assert not [o for o in c.outputs if o.output_type == "error"]


def test_quiet_check_shows_nothing_and_passes(executed):
    c = cell(executed, "--check --quiet")
    assert c.outputs == []


def test_validate_report_displays_pass(executed):
    c = cell(executed, "report = mlclab.validate")
    assert "report True None" in stream(c)
    html = html_outputs(c)          # the twin; the widget's output has no text/html
    assert len(html) == 1 and "mlclab-badge mlclab-pass" in html[0]
    assert 'class="mlclab-state"' in html[0]       # and its marked graph, interactive offline
    assert "random, seed=11, n=" in html[0]
    given = html_outputs(cell(executed, "reference=lambda"))[0]
    assert "mlclab-badge mlclab-pass" in given and "(given)" in given \
        and "&lt;lambda&gt; (numpy)" in given


def test_rejected_program_fails_the_cell_with_only_the_caret(executed):
    c = cell(executed, "def broken")
    errors = [o for o in c.outputs if o.output_type == "error"]
    assert len(errors) == 1
    err = errors[0]
    assert err.ename == "DSLError"
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err.traceback))
    lines = text.splitlines()
    # Line numbers count the %%tinynn line, as the student sees the cell.
    assert lines[0].startswith(f"DSLError: <tinynn cell [{c.execution_count}]>, line 3:")
    assert lines[1].strip() == "return a @ b"
    assert set(lines[2].strip()) == {"^"}
    assert "Traceback" not in text and ".py" not in text and "File " not in text
    # Nothing was bound for the rejected cell, and the notebook went on.
    assert "after the error cell" in stream(cell(executed, "after the error cell"))


def test_student_text_is_escaped_in_every_html_output(executed):
    for c in executed.cells:
        if c.cell_type != "code":
            continue
        for html in html_outputs(c):
            assert "<img" not in html
            # The only scripts are mlclab's own: a twin's front end and its packed state.
            for tag, body in re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S | re.I):
                assert (tag == "" and body.startswith("(function () {\n")) or \
                    tag == (' type="application/octet-stream" class="mlclab-state"'
                            ' data-encoding="zlib+base64"') or \
                    tag == ' type="text/plain" class="mlclab-graphviz"', tag
    # The comment's text is there, escaped (the node's tooltip quotes its source line).
    graph = html_outputs(cell(executed, "--show graph let relax validate"))[0]
    assert "&lt;img src=x onerror=alert(1)&gt;" in graph


def test_nbconvert_without_widget_state_shows_the_static_fallbacks(executed):
    static = copy.deepcopy(executed)
    static.metadata.pop("widgets", None)   # what a saved notebook looks like without a kernel
    body, _ = HTMLExporter().from_notebook_node(static)
    assert body.count('class="mlclab-cell"') == 1
    assert 'id="foo:d"' in body                                    # the graph, as inline SVG
    assert body.count("mlclab-badge mlclab-pass") >= 3             # cell view + two reports
    assert "<img src=x" not in body
