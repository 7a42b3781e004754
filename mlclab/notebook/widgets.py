"""Composite notebook displays: the validation widget and the helper that gives every widget
display a static HTML twin (for nbconvert, nbviewer and GitHub, which have no kernel)."""
from __future__ import annotations

from html import escape

import ipywidgets as W

from .report_html import report_html


def widget_bundle(widget, static_html: str):
    """``widget``'s MIME bundle plus ``text/html``: live front ends draw the widget, static
    renderers the HTML."""
    bundle = widget._repr_mimebundle_()
    # ipywidgets answers with the data dict alone, anywidget with (data, metadata).
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
    data = dict(data)
    data["text/html"] = static_html
    return data, metadata


def validation_widget(report, draw=None):
    """The report's HTML above the graph of the validated function, with every checked binding
    marked (green within tolerance, red the divergent ones) and the first divergence selected.
    ``draw(view)`` reuses drawings made for other viewers (see ``graphs.function_viewer``)."""
    import graphviz

    from .graphs import function_viewer

    html = W.HTML(report_html(report))
    fn = report.fn
    if fn is None or not report.bindings:
        return W.VBox([html])
    marks = {b.name: {"status": "ok" if b.ok else "diverged",
                      "text": ("ok" if b.ok else "differs from numpy")
                      + f", max abs err {b.comparison.max_abs_err:.3g}"}
             for b in report.bindings}
    bad = report.first_divergence
    try:
        viewer = function_viewer(fn, annotations=marks, highlight_bindings=[bad] if bad else [],
                                 draw=draw)
    except graphviz.ExecutableNotFound:
        return W.VBox([html, W.HTML("<i>graph unavailable: Graphviz's <code>dot</code> is not installed</i>")])
    except Exception as err:  # noqa: BLE001 - the report stands on its own; say why the graph is missing
        return W.VBox([html, W.HTML(f'<div style="color:#d1242f">graph unavailable: '
                                    f"{escape(type(err).__name__)}: {escape(str(err))}</div>")])
    if bad:
        first = [nid for nid in viewer.highlight if nid in viewer.nodes]
        if first:
            viewer.selected_node = first[0]
    return W.VBox([html, viewer])
