"""A column picture laid out in the browser, where no Graphviz ``dot`` program exists: what
``fn.graph()`` shows in a notebook, and the static form of a ``%%tinynn`` graph tab.

With ``dot`` the kernel lays a picture out, measures it (``mlclab.viz.fit``) and folds it
further when it could only fit its column with text under 9 px (``GraphView.picture``).
Without ``dot`` the kernel cannot measure a layout it does not make, so it sends the DOT of
every rung of that fold ladder (``GraphView.ladder``; DOT is small) and the page
(``static/layout.js`` ``renderPicture``) lays out the first, measures it in its real column
and walks down the ladder by the same rule (``fit.choose`` / ``fit.js`` ``chooseRung``). The
graph as text stays inside for renderers without script.
"""
from __future__ import annotations

import html
from typing import Mapping, Optional

from ..viz.overlays import styles
from .browser_layout import IN_BROWSER, WITHOUT_SCRIPT, available, graphviz_module
from .page import graphviz_element, standalone_fragment


def graph_html(view) -> Optional[str]:
    """``fn.graph()``'s ``text/html`` where no ``dot`` program exists (``view`` a
    ``viz.views.GraphView``): the graph as text, replaced where scripts run by its drawing,
    fitted to the column and folded further when needed. None when the vendored module is
    missing (the caller shows text)."""
    if not available():
        return None
    return _picture(view.ladder(), view.text)


def picture_html(vm: Mapping, module: bool = True) -> Optional[str]:
    """View model ``vm``'s drawing as a column picture (as :func:`graph_html`; its ``geometry``
    holds ``dot`` and the further-folded ``ladder``), or None when ``dot`` drew it. Without
    ``module`` the picture does not carry the WebAssembly Graphviz: the output holding it
    carries one copy for all its pictures (:func:`with_module`)."""
    g = (vm or {}).get("geometry") or {}
    if not g.get("dot") or not available():
        return None
    first = {"dot": g["dot"], "note": "", "nodes": len(vm.get("nodes") or {}),
             "overlays": vm.get("overlays") or {}}
    return _picture([first, *g.get("ladder", ())], g.get("text", ""), module)


def with_module(html_text: str) -> str:
    """``html_text`` (an output made of pictures without their module) with one copy of the
    WebAssembly Graphviz for all of them."""
    return html_text + graphviz_element(graphviz_module())


def _picture(ladder: list, text: str, module: bool = True) -> str:
    note = ladder[0]["note"]
    static = (f'<div class="mlclab-fit-note" style="font-size:12px;opacity:0.8">'
              f"{html.escape(f'{note} {IN_BROWSER} {WITHOUT_SCRIPT}'.strip())}</div>"
              f"<pre>{html.escape(text)}</pre>")
    state = {"ladder": ladder, "where": IN_BROWSER, "text": text, "styles": styles(),
             "graphviz_wasm": graphviz_module() if module else ""}
    return standalone_fragment(state, static, entry="layout.js")
