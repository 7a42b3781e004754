"""The viewer's data travels packed (issue 20, as treescope does): zlib + base64 inside the page,
inflated by Chromium's DecompressionStream, in a saved file and in an ``nbconvert --to html``
export; a browser without DecompressionStream keeps the static drawing and says why."""
import json
import os
import subprocess
import sys

import pytest

import mlclab
from test_saved_viewer_browser import NOTEBOOK, SOURCE, offline

pytestmark = pytest.mark.browser

PACKED = 'script.mlclab-state[data-encoding="zlib+base64"]'


def assert_packed(html_text: str) -> None:
    # The view model is not in the page as readable JSON: only the packed state carries it.
    assert 'data-encoding="zlib+base64"' in html_text
    assert '"schema":' not in html_text and '"nodes":{' not in html_text


def check_interactive(page):
    viewer = page.locator(".mlclab-viewer").first
    viewer.locator("svg.mlclab-graph g.node").first.wait_for()
    viewer.locator('g.node[id="main:y"]').click()
    assert "main:y" in viewer.locator(".mlclab-details").text_content()
    assert page.locator(".mlclab-unpack-error").count() == 0


def test_a_saved_file_carries_its_data_packed_and_opens_interactive(page, tmp_path):
    path = mlclab.compile(SOURCE)["main"].viewer().save(tmp_path / "model.html")
    text = open(path, encoding="utf-8").read()
    assert_packed(text)
    asked = offline(page)
    page.goto(f"file://{path}")
    check_interactive(page)
    assert page.locator(PACKED).count() == 1 and asked == []


def test_a_static_nbconvert_export_unpacks_in_chromium(page, tmp_path):
    nb = tmp_path / "viewer.ipynb"
    nb.write_text(json.dumps(NOTEBOOK))
    pythonpath = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    "--ExecutePreprocessor.store_widget_state=False", str(nb)],
                   check=True, capture_output=True, timeout=300, env=env)
    out = tmp_path / "viewer.html"
    assert_packed(out.read_text(encoding="utf-8"))
    offline(page)
    page.goto(f"file://{out}")
    check_interactive(page)


def test_without_decompression_stream_the_static_drawing_stays_with_a_note(page, tmp_path,
                                                                            screenshot):
    path = mlclab.compile(SOURCE)["main"].viewer().save(tmp_path / "model.html")
    page.add_init_script("delete window.DecompressionStream;")
    page.set_viewport_size({"width": 1100, "height": 800})
    page.goto(f"file://{path}")
    note = page.locator(".mlclab-unpack-error")
    note.wait_for()
    assert "no DecompressionStream" in note.text_content()
    assert "static drawing is shown" in note.text_content()
    # The drawing without script is still there, and no half-made viewer.
    assert page.locator(".mlclab-mount svg g.node").count() >= 5
    assert page.locator(".mlclab-viewer").count() == 0
    screenshot("packed-no-decompression")
