"""A real JupyterLab driven by Debian's Chromium through Playwright.

Follows ../shared/BROWSER-TESTING.md: an isolated server on 127.0.0.1 with a token, the
announcements popup disabled, the page driven through ``window.jupyterapp`` (exposed with
``expose_app_in_browser``). Without /usr/bin/chromium these tests fail saying so (./dev.sh
setup installs it); they never skip.
"""
from __future__ import annotations

import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

CHROMIUM = pathlib.Path("/usr/bin/chromium")
REPO = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = pathlib.Path(__file__).parent / "notebooks"
ARTIFACTS = REPO / "test-artifacts"


def pytest_configure(config):
    config.addinivalue_line("markers", "known_page_errors(*messages): uncaught page errors a "
                            "front end (not mlclab) is known to raise; any other still fails")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.needs(CHROMIUM.exists(),
                                              f"{CHROMIUM} (apt-get install chromium)"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running Jupyter server (JupyterLab or Notebook 7) serving a private copy of the fixture
    notebooks; ``tree`` is where the front end opens a notebook (``lab/tree`` or ``notebooks``)."""

    def __init__(self, root: pathlib.Path, port: int, token: str, proc: subprocess.Popen,
                 tree: str = "lab/tree"):
        self.root, self.port, self.token, self.proc, self.tree = root, port, token, proc, tree

    def api(self, path: str, method: str = "GET") -> bytes:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.read()

    def url(self, notebook: str) -> str:
        return f"http://127.0.0.1:{self.port}/{self.tree}/{notebook}?token={self.token}&reset"


def _serve(base: pathlib.Path, module: str, app: str, tree: str, *options: str):
    """Start ``python -m <module>`` (its application class ``app``) isolated under ``base``;
    yields the server once it answers, and stops it (kernels included) afterwards."""
    root = base / "root"
    shutil.copytree(NOTEBOOKS, root)
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        path = base / var.lower()
        path.mkdir()
        env[var] = str(path)
    if module == "jupyterlab":
        # The "Jupyter news?" popup covers screenshots. (Notebook 7 has no such popup, and
        # disabling this plugin there breaks its settings loading.)
        labconfig = base / "jupyter_config_dir" / "labconfig"
        labconfig.mkdir(parents=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    # The kernel must import this checkout of mlclab whether or not it is pip-installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    port, token = _free_port(), secrets.token_hex(16)
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--port-retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--ServerApp.allow_root=True", f"--{app}.expose_app_in_browser=True", *options],
        env=env, cwd=root, stdout=open(base / "server.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True)
    server = Lab(root, port, token, proc, tree)
    deadline = time.monotonic() + 60
    while True:
        try:
            server.api("/api/status")
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log = (base / "server.log").read_text()
                pytest.fail(f"{module} did not start:\n{log[-3000:]}")
            time.sleep(0.25)
    yield server
    try:
        server.api("/api/shutdown", method="POST")
        proc.wait(timeout=10)
    except Exception:
        pass
    # Anything the server left behind (kernels) shares its session: end that group, by id.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    yield from _serve(tmp_path_factory.mktemp("lab"), "jupyterlab", "LabApp", "lab/tree",
                      "--LabApp.news_url=None",
                      "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate")


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory):
    """A Notebook 7 server (the ``notebook`` package: JupyterLab's components, one document
    per tab), started as the lab is."""
    yield from _serve(tmp_path_factory.mktemp("nb7"), "notebook", "JupyterNotebookApp", "notebooks")


@pytest.fixture(scope="session")
def browser():
    # Playwright is a dev dependency: its absence is an error, not a reason to skip.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    # Uncaught exceptions in the page (the widget's JavaScript included) fail the test.
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    # A failing test leaves a picture of what the browser showed.
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / f"{request.node.name}-failure.png"
        try:
            pg.screenshot(path=str(shot), full_page=True)
            print(f"\nfailure screenshot: {shot}")
        except Exception:
            pass
    context.close()
    known = request.node.get_closest_marker("known_page_errors")
    errors = [e for e in errors if known is None or e not in known.args]
    assert not errors, f"errors in the page: {errors}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def _run_all(page, lab: Lab, notebook: str, timeout_s: float = 180, stops: bool = False) -> None:
    """Open ``notebook`` in JupyterLab, run every cell and wait until widgets have drawn.

    ``stops``: a cell is expected to fail, so the cells after it never run; wait only until
    nothing is running.
    """
    page.goto(lab.url(notebook))
    page.wait_for_function(
        """() => {
            const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            const k = w && w.sessionContext && w.sessionContext.session
                      && w.sessionContext.session.kernel;
            return k && k.status === 'idle';
        }""", timeout=timeout_s * 1000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """(stops) => {
            const w = window.jupyterapp.shell.currentWidget;
            const cells = [...document.querySelectorAll('.jp-CodeCell')];
            const done = cells.every((c) => {
                const src = c.querySelector('.jp-InputArea-editor').textContent.trim();
                const prompt = c.querySelector('.jp-InputPrompt').textContent;
                return src === '' || (/\\[\\d+\\]/.test(prompt) && !prompt.includes('*'));
            });
            const running = cells.some(
                (c) => c.querySelector('.jp-InputPrompt').textContent.includes('*'));
            return (stops ? !running : done) && w.sessionContext.session.kernel.status === 'idle';
        }""", arg=stops, timeout=timeout_s * 1000)
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-OutputArea-output')]"
        ".some(o => o.textContent.includes('Loading widget'))",
        timeout=60_000)
    assert page.locator(".jupyter-widgets-error-widget").count() == 0, "a widget failed to load"


def _screenshot(page, name: str) -> pathlib.Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"\nscreenshot: {path}")
    return path


@pytest.fixture
def run_all_nb7(page, notebook7):
    """``run_all_nb7("nb.ipynb")``: as ``run_all``, in Notebook 7."""
    return lambda notebook, stops=False: _run_all(page, notebook7, notebook, stops=stops)


@pytest.fixture
def run_all(page, lab):
    """``run_all("nb.ipynb", stops=False)``: open the notebook in the page, run all cells, wait
    for widgets."""
    return lambda notebook, stops=False: _run_all(page, lab, notebook, stops=stops)


# In the page: run cell `index` of the open notebook; resolve with its output text once it
# has finished.
RUN_CELL = """async (index) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
  const cell = nb.widgets[index];
  while (cell.model.executionCount === null || cell.promptNode.textContent.includes('*'))
    await new Promise((r) => setTimeout(r, 20));
  return cell.outputArea.node.textContent;
}"""


@pytest.fixture
def run_cell(page):
    """``run_cell(index)``: run that cell of the open notebook, return its output text."""
    return lambda index: page.evaluate(RUN_CELL, index)


@pytest.fixture
def screenshot(page):
    """``screenshot("name")``: save test-artifacts/name.png and print its path."""
    return lambda name: _screenshot(page, name)
