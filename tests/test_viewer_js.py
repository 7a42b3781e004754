"""The viewer's JavaScript: its ES modules tested by node's own runner (tests/js/*.test.mjs),
and the one module anywidget loads (``mlclab.notebook.bundle``) checked to be valid ESM that
exports ``render``. Skipped, saying why, where node is not installed."""
import shutil
import subprocess
from pathlib import Path

import pytest

from mlclab.notebook.bundle import bundle

NODE = shutil.which("node")
ROOT = Path(__file__).resolve().parent.parent
needs_node = pytest.mark.needs(NODE is not None, "node (>= 18) for the viewer's JS unit tests")


@needs_node
def test_viewer_modules_pass_their_node_tests():
    tests = sorted(str(p) for p in (ROOT / "tests" / "js").glob("*.test.mjs"))
    assert tests
    proc = subprocess.run([NODE, "--test", *tests], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout


def render_of(entry: str, tmp_path) -> str:
    """The name of the ``render`` that the module joined from ``entry`` exports by default,
    as node imports it (an error if it is not valid ESM)."""
    esm = tmp_path / entry.replace(".js", ".mjs")
    esm.write_text(bundle(entry=entry), encoding="utf-8")
    probe = f"import('{esm.as_uri()}').then(m => console.log(m.default.render.name))"
    proc = subprocess.run([NODE, "-e", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@needs_node
def test_the_joined_module_is_valid_esm_exporting_render(tmp_path):
    assert render_of("viewer.js", tmp_path) == "render"
    page = tmp_path / "page.js"
    page.write_text(bundle(standalone=True) + "\nconsole.log(typeof mlclabViewer.render, "
                    "typeof localModel);\n", encoding="utf-8")
    proc = subprocess.run([NODE, str(page)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["function", "function"]


@needs_node
def test_the_twin_guard_module_joins_to_valid_esm_exporting_render(tmp_path):
    """widgets.TwinGuard's front end: twin.js's hideTwin, and nothing drawn."""
    assert render_of("guard.js", tmp_path) == "renderGuard"
    assert "function hideTwin" in bundle(entry="guard.js")


def test_the_join_keeps_no_sibling_imports_and_one_default_export():
    text = bundle()
    assert 'from "./' not in text
    assert text.count("export default") == 1
    assert "export function" not in text and "export const" not in text


@needs_node
def test_the_compare_module_joins_to_valid_esm_and_a_page_script(tmp_path):
    assert render_of("compare.js", tmp_path) == "renderCompare"
    page = tmp_path / "page.js"
    page.write_text(bundle(standalone=True, entry="compare.js") + "\nconsole.log(typeof "
                    "mlclabViewer.render, typeof localModel);\n", encoding="utf-8")
    proc = subprocess.run([NODE, str(page)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "function function"


@needs_node
@pytest.mark.parametrize("entry", ["viewer.js", "compare.js", "layout.js"])
def test_every_page_script_defines_what_its_boot_calls(tmp_path, entry):
    # A page's boot (static/boot.js) checks its twin, unpacks its state and renders over a
    # local model: each entry's page script must carry all of it, whatever the entry imports.
    page = tmp_path / "page.js"
    page.write_text(bundle(standalone=True, entry=entry) + "\nconsole.log(typeof mlclabViewer."
                    "render, typeof bootPage, typeof drawnLive, typeof unpackState, typeof "
                    "localModel);\n", encoding="utf-8")
    proc = subprocess.run([NODE, str(page)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["function"] * 5
