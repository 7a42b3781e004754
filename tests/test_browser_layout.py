"""Graph layout where no Graphviz ``dot`` program exists (issue 20): the WebAssembly Graphviz
built into the package with its licence, and the kernel sending DOT for the browser to lay
out. The real browser opens such a page in tests/browser/test_browser_layout_browser.py."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from needs import need

from mlclab.notebook.page import carried_graphviz, unpacked_state

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "js"))
import vendor_graphviz  # noqa: E402  (js/ is not a package)

NODE = shutil.which("node")


def path_without_dot(tmp_path) -> str:
    """A PATH with every program of this one except Graphviz's: each directory's programs
    linked into one folder, ``dot`` and its siblings left out."""
    shadow = tmp_path / "bin"
    shadow.mkdir()
    graphviz = {"dot", "neato", "twopi", "circo", "fdp", "sfdp", "patchwork", "osage"}
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = shadow / name
            if name not in graphviz and not target.exists():
                target.symlink_to(os.path.join(folder, name))
    return str(shadow)


def without_dot_env(tmp_path) -> dict:
    """The environment of a process that finds no ``dot`` and imports this checkout."""
    return {**os.environ, "PATH": path_without_dot(tmp_path),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def export_without_dot(notebook: dict, path: Path, store: bool) -> str:
    """``notebook`` written to ``path`` and exported by ``jupyter nbconvert --to html
    --execute`` with no ``dot`` (``store``: store widget state); the export's text."""
    path.write_text(json.dumps(notebook))
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    f"--ExecutePreprocessor.store_widget_state={store}", str(path)],
                   check=True, capture_output=True, timeout=300,
                   env=without_dot_env(path.parent), cwd=path.parent)
    return path.with_suffix(".html").read_text(encoding="utf-8")


@pytest.mark.needs(shutil.which("npm") is not None or vendor_graphviz.is_current(),
                   "npm, to build the WebAssembly Graphviz")
def test_the_vendored_graphviz_is_built_and_carries_its_licence():
    print(vendor_graphviz.build())      # builds it when missing or stale, else keeps it
    assert vendor_graphviz.is_current()
    vendor = vendor_graphviz.VENDOR
    module = (vendor / vendor_graphviz.MODULE).read_text(encoding="utf-8")
    lock = json.loads((ROOT / "js" / "package-lock.json").read_text())
    version = lock["packages"]["node_modules/@hpcc-js/wasm-graphviz"]["version"]
    assert module.startswith(f"/*! mlclab vendored @hpcc-js/wasm-graphviz {version} (Apache-2.0")
    assert "sourceMappingURL" not in module                 # nothing for a page to fetch
    licence = (vendor / vendor_graphviz.LICENCE).read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0" in licence
    notice = (vendor / vendor_graphviz.NOTICE).read_text(encoding="utf-8")
    assert "Eclipse Public License - v 1.0" in notice and "Graphviz" in notice
    # A build product: ignored by git, shipped as package data.
    tracked = subprocess.run(["git", "ls-files", "mlclab/notebook/static/vendor"], cwd=ROOT,
                             capture_output=True, text=True).stdout
    assert tracked == ""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"notebook/static/vendor/*"' in pyproject


@pytest.mark.needs(NODE is not None, "node (>= 18)")
def test_the_vendored_module_lays_a_graph_out_on_its_own(tmp_path):
    from mlclab.notebook.browser_layout import MODULE, available

    need(available(), "the WebAssembly Graphviz (built with npm)")
    probe = ("import(process.argv[1]).then(async (m) => { const g = await m.Graphviz.load(); "
             "console.log(g.dot('digraph { a -> b; a [id=\"x&y\" label=<<b>a&lt;</b>>] }')); })")
    # Copied to a .mjs: node reads the package's static/ folder as CommonJS.
    esm = tmp_path / "graphviz.mjs"
    esm.write_text(MODULE.read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([NODE, "-e", probe, esm.as_uri()], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '<g id="x&amp;y" class="node">' in proc.stdout and "a&lt;" in proc.stdout


NO_DOT_SCRIPT = textwrap.dedent('''
    import json, shutil, sys
    import mlclab
    from mlclab.viz.dot import dot_available
    from mlclab.notebook.browser_layout import IN_BROWSER

    assert shutil.which("dot") is None and not dot_available()
    src = """def g(a: Tensor[(4,), f32]):
        y = log(a)  # </script><b>bold</b> & "q"
        return y

    def main(x: Tensor[(4,), f32], w: Tensor[(4,), f32]):
        y = exp(x) * w
        return relu(g(y))
    """
    fn = mlclab.compile(src)["main"]
    out = {}
    bundle = fn.graph()._repr_mimebundle_()
    out["graph_keys"] = sorted(bundle)
    out["graph_html"] = bundle["text/html"]
    viewer = fn.viewer()
    geometry = viewer.current["geometry"]
    out["geometry"] = {k: geometry.get(k) for k in ("svg", "dot", "note")}
    # The module goes to the widget only when its front end asks (its page had no copy).
    out["sent_before"] = len(viewer.graphviz_wasm)
    viewer._on_front_end(viewer, {"event": "graphviz"}, [])
    out["sent"] = len(viewer.graphviz_wasm)
    out["twin"] = viewer._twin()
    out["static"] = viewer.static_html()
    out["saved"] = open(viewer.save(sys.argv[1]), encoding="utf-8").read()
    out["in_browser"] = IN_BROWSER
    from mlclab.notebook.cell_display import CellDisplay
    out["cell"] = CellDisplay(mlclab.compile(src), ["graph", "tree", "relax"]).static_html()
    # A comparison the same way: its panes' module sent only when a pane asks.
    pair = mlclab.compare(fn, (fn, "FuseOps"))
    out["compare_sent_before"] = len(pair.graphviz_wasm)
    pair._on_front_end(pair, {"event": "graphviz", "side": "left"}, [])
    out["compare_sent"] = len(pair.graphviz_wasm)
    out["compare_twin"] = pair._twin()
    print(json.dumps(out))
''')


def test_without_dot_the_viewer_and_graph_send_dot_for_the_browser(tmp_path):
    """With ``dot`` hidden from PATH (a subprocess), nothing fails: the viewer's views carry
    DOT and the WebAssembly Graphviz, fn.graph()'s HTML lays itself out, and every user text
    stays escaped."""
    from mlclab.notebook.browser_layout import available

    need(available(), "the WebAssembly Graphviz (built with npm)")
    env = {**os.environ, "PATH": path_without_dot(tmp_path),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", NO_DOT_SCRIPT, str(tmp_path / "model.html")],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # fn.graph(): HTML that lays itself out (no SVG image: nothing drew one).
    assert out["graph_keys"] == ["text/html", "text/plain"]
    html = out["graph_html"]
    assert "renderPicture" in html
    # The viewer: DOT instead of SVG, the module sent once a view needs it.
    geometry = out["geometry"]
    assert geometry["svg"] == "" and geometry["dot"].startswith("digraph")
    assert 'id="g:y"' in geometry["dot"] and geometry["note"].startswith(out["in_browser"])
    assert out["sent_before"] == 0 and out["sent"] > 100_000
    # Twin and saved page carry the module once, beside their packed state (packing would
    # make it larger), and the DOT; no user text unescaped.
    for page in (out["twin"], out["saved"], html):
        assert "</script><b>bold" not in page and "<b>bold</b>" not in page
        state = unpacked_state(page)
        assert "graphviz_wasm" not in state
        assert carried_graphviz(page).startswith("/*! mlclab vendored @hpcc-js/wasm-graphviz")
        assert page.count("mlclab vendored @hpcc-js/wasm-graphviz") == 1
        assert "</script><b>bold" in json.dumps(state, ensure_ascii=False)
    assert out["compare_sent_before"] == 0 and out["compare_sent"] == out["sent"]
    assert out["compare_twin"].count("mlclab vendored @hpcc-js/wasm-graphviz") == 1
    assert "graphviz_wasm" not in unpacked_state(out["compare_twin"])
    # A %%tinynn cell's static views: each graph a picture the page lays out (the text
    # inside for no script), one module copy for all of them.
    cell = out["cell"]
    assert cell.count("renderPicture") >= 4 and carried_graphviz(cell)
    assert cell.count("mlclab vendored @hpcc-js/wasm-graphviz") == 1
    assert "Call log" in cell and "<b>bold</b>" not in cell
    # Without script: the graph as text, and why.
    assert "laid out in your browser" in out["static"] and "Call log" in out["static"]
    assert "&lt;/script&gt;" in out["static"] or "</script>" not in out["static"]


def test_without_dot_or_the_vendored_module_the_graph_is_text_saying_why(monkeypatch, tmp_path):
    import mlclab
    import mlclab.notebook.browser_layout as browser_layout
    import mlclab.viz.dot

    monkeypatch.setattr(mlclab.viz.dot, "DOT", "no-such-graphviz-dot")
    monkeypatch.setattr(browser_layout, "MODULE", tmp_path / "missing-graphviz.js")
    fn = mlclab.compile("def f(x: Tensor[(3,), f32]):\n    return exp(x)\n")["f"]
    viewer = fn.viewer()
    geometry = viewer.current["geometry"]
    assert "dot" not in geometry and "Call exp" in geometry["text"]
    assert "apt-get install graphviz" in geometry["note"]
    assert "without its WebAssembly Graphviz" in geometry["note"]
    assert viewer.graphviz_wasm == ""
    bundle = fn.graph()._repr_mimebundle_()
    assert "image/svg+xml" not in bundle and "apt-get install graphviz" in bundle["text/html"]
    with pytest.raises(FileNotFoundError, match="npm is present"):
        browser_layout.graphviz_module.__wrapped__()


def test_with_dot_nothing_is_embedded():
    """The fast path is unchanged: SVG from dot, no WebAssembly in any output."""
    import mlclab
    from mlclab.viz.dot import dot_available

    need(dot_available(), "Graphviz's dot")
    fn = mlclab.compile("def f(x: Tensor[(3,), f32]):\n    return exp(x)\n")["f"]
    viewer = fn.viewer()
    geometry = viewer.current["geometry"]
    assert geometry["svg"].startswith("<svg") and "dot" not in geometry
    assert viewer.graphviz_wasm == ""
    assert "mlclab vendored" not in viewer._twin()
    assert "image/svg+xml" in fn.graph()._repr_mimebundle_()


@pytest.mark.needs(NODE is not None, "node (>= 18)")
def test_the_layout_module_joins_into_the_viewer_and_a_page_script(tmp_path):
    """layout.js is part of the viewer's module and, on its own, fn.graph()'s page script."""
    from mlclab.notebook.bundle import bundle

    assert "function layOutView" in bundle() and "function awaitingLayout" in bundle()
    page = tmp_path / "picture.js"
    page.write_text(bundle(standalone=True, entry="layout.js")
                    + "\nconsole.log(mlclabViewer.render.name, typeof localModel);\n",
                    encoding="utf-8")
    proc = subprocess.run([NODE, str(page)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["renderPicture", "function"]
