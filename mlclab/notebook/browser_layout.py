"""Graph layout in the browser, where no Graphviz ``dot`` program is installed.

Where ``dot`` exists (``viz.dot.dot_available``) nothing here runs: the kernel lays every graph
out and sends SVG. Where it does not, the kernel sends the DOT source instead (a view model's
``geometry.dot``, with the graph as text for renderers without script) and the page lays it out
with Graphviz compiled to WebAssembly (``static/layout.js``). That module, the npm package
``@hpcc-js/wasm-graphviz`` (one ES module, the wasm inlined), is built into the package at
install time (``js/vendor_graphviz.py``: ``static/vendor/graphviz.js`` beside its licence and
Graphviz's notice) and embedded only in displays that need it: a viewer sends it as its
``graphviz_wasm`` trait once a view needs it, a saved page or twin carries it in its state,
``fn.graph()``'s HTML inline. Nothing is fetched, so saved files still open offline.

A source checkout installed without npm has no vendored module: the displays then show the
graph as text and say what is missing (:data:`MISSING`), they do not fail.
"""
from __future__ import annotations

import functools
import html
from typing import Mapping, Optional

from ..viz.dot import INSTALL_HINT
from .bundle import STATIC

VENDOR = STATIC / "vendor"
MODULE = VENDOR / "graphviz.js"

IN_BROWSER = ("Graphviz's `dot` program is not installed where this ran, so this graph is laid "
              "out in your browser by Graphviz compiled to WebAssembly (slower for big graphs, "
              "and not refolded to fit the column; installing Graphviz makes it fast again).")
# Said too where the graph may be shown without script (GitHub, nbviewer): as text.
WITHOUT_SCRIPT = "Where scripts do not run, the graph is shown as text."
MISSING = ("This mlclab was installed without its WebAssembly Graphviz (mlclab/notebook/static/"
           "vendor/graphviz.js is built when npm is present: `./dev.sh setup`, or "
           "`pip install .` with Node.js installed), so without `dot` the graph is shown as text.")


def available() -> bool:
    """Whether the vendored WebAssembly Graphviz is installed."""
    return MODULE.is_file()


@functools.lru_cache(maxsize=1)
def graphviz_module() -> str:
    """The WebAssembly Graphviz as one ES module's source; ``FileNotFoundError`` saying how to
    build it when this install has none."""
    if not available():
        raise FileNotFoundError(f"{MODULE}: {MISSING}")
    return MODULE.read_text(encoding="utf-8")


def needs_module(views: Mapping) -> bool:
    """Whether any of ``views`` (name -> view model) is laid out in the browser."""
    return any(((v or {}).get("geometry") or {}).get("dot") for v in views.values())


def dot_geometry(view) -> dict:
    """A view model's ``geometry`` for ``view`` (a ``viz.views.GraphView``) where no ``dot``
    program exists: its DOT for the browser, its text for renderers without script, and a note
    saying where it is laid out. Without the vendored module there is no DOT, only the text."""
    if not available():
        return {"svg": "", "text": view.text, "note": f"{INSTALL_HINT} {MISSING}"}
    return {"svg": "", "dot": view.source, "text": view.text,
            "note": f"{IN_BROWSER} {WITHOUT_SCRIPT}"}


def graph_html(view) -> Optional[str]:
    """``fn.graph()``'s ``text/html`` where no ``dot`` program exists: the graph as text,
    replaced where scripts run by its drawing, laid out by the browser and fitted to the column
    (``static/layout.js``). None when the vendored module is missing (the caller shows text)."""
    from .page import standalone_fragment

    if not available():
        return None
    source, note, _ = view.in_browser()
    text = view.text
    static = (f'<div class="mlclab-fit-note" style="font-size:12px;opacity:0.8">'
              f"{html.escape(f'{note} {IN_BROWSER} {WITHOUT_SCRIPT}'.strip())}</div>"
              f"<pre>{html.escape(text)}</pre>")
    state = {"dot": source, "note": note, "where": IN_BROWSER, "text": text,
             "graphviz_wasm": graphviz_module()}
    return standalone_fragment(state, static, entry="layout.js")
