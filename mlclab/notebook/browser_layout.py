"""Graph layout in the browser, where no Graphviz ``dot`` program is installed.

Where ``dot`` exists (``viz.dot.dot_available``) nothing here runs: the kernel lays every graph
out and sends SVG. Where it does not, the kernel sends the DOT source instead (a view model's
``geometry.dot``, with the graph as text for renderers without script) and the page lays it out
with Graphviz compiled to WebAssembly (``static/layout.js``). That module, the npm package
``@hpcc-js/wasm-graphviz`` (one ES module, the wasm inlined), is built into the package at
install time (``js/vendor_graphviz.py``: ``static/vendor/graphviz.js`` beside its licence and
Graphviz's notice) and embedded only in displays that need it, once per output: a saved page,
a twin and a column picture (``notebook.picture``) carry it beside their state as plain text
(``page.graphviz_element``); a live viewer finds it on its page and asks its kernel for it
(its ``graphviz_wasm`` trait) only where the page has none. Nothing is fetched, so saved files
still open offline.

A source checkout installed without npm has no vendored module: the displays then show the
graph as text and say what is missing (:data:`MISSING`), they do not fail.
"""
from __future__ import annotations

import functools
from typing import Mapping

from ..viz.dot import INSTALL_HINT
from .bundle import STATIC

VENDOR = STATIC / "vendor"
MODULE = VENDOR / "graphviz.js"

IN_BROWSER = ("Graphviz's `dot` program is not installed where this ran, so this graph is laid "
              "out in your browser by Graphviz compiled to WebAssembly and fitted there as with "
              "`dot`: folded further rather than drawn with text under 9 px (slower for big "
              "graphs; installing Graphviz makes it fast again).")
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
    ladder = view.ladder()             # the DOT unpainted: the page paints the overlays
    out = {"svg": "", "dot": ladder[0]["dot"], "text": view.text,
           "note": f"{IN_BROWSER} {WITHOUT_SCRIPT}"}
    if len(ladder) > 1:         # the folded drawings a column picture may need (picture_html)
        out["ladder"] = ladder[1:]
    return out
