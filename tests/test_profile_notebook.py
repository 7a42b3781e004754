"""The profile fixture notebook (tests/browser/notebooks/profile.ipynb) executed headless with
nbclient: the kernel table, the roofline SVG and the fused view coloured by time come out as
static HTML/SVG with no error (the browser test, tests/browser/test_profile_browser.py, drives
the same notebook in JupyterLab). Issue 15.
"""
import os
import pathlib
import re

import nbformat
from nbclient import NotebookClient

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "tests" / "browser" / "notebooks" / "profile.ipynb"


def test_profile_notebook_shows_table_roofline_and_coloured_fused_view(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=env)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]

    prof_cell = next(c for c in code if "mlp.profile(" in c.source)
    names = "".join(o.get("text", "") for o in prof_cell.outputs if o.output_type == "stream")
    kernels = re.fullmatch(r"kernels: (.+)\n", names).group(1).split(", ")
    assert len(kernels) == 2                   # matmul+bias+relu fused, then the second linear
    (html,) = [o.data["text/html"] for o in prof_cell.outputs if o.output_type == "execute_result"]
    assert "<script" not in html
    table = re.search(r"<table.*?</table>", html, re.S).group(0)
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    assert len(rows) == len(kernels)
    for name in kernels:
        assert f">{name}</code>" in table
    shares = [float(s) for s in re.findall(r"([\d.]+)%</td>", table)[::2]]
    assert len(shares) == len(kernels) and abs(sum(shares) - 100) < 0.5
    svg = re.search(r'<svg[^>]*class="mlclab-roofline".*?</svg>', html, re.S).group(0)
    assert svg.count('class="mlclab-kernel"') == len(kernels)
    assert all(f"<title>{name}:" in svg for name in kernels)

    viewer_cell = next(c for c in code if "mlp.viewer(" in c.source)
    # Two outputs: the interactive text/html twin exports keep, then the widget.
    twin, shown = [o.data for o in viewer_cell.outputs
                   if o.output_type in ("execute_result", "display_data")]
    assert "application/vnd.jupyter.widget-view+json" in shown and "text/html" not in shown
    static = twin["text/html"]                 # the picture nbconvert shows: filled nodes
    assert "<svg" in static and "GFLOP/s" in static and re.search(r'fill="#ff[0-9a-f]{4}"', static)

    hostile_cell = next(c for c in code if "hostile = Profile(" in c.source)
    (hostile,) = [o.data["text/html"] for o in hostile_cell.outputs
                  if o.output_type == "execute_result"]
    assert "<img" not in hostile and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in hostile
