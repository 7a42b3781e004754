"""Composite notebook displays: the validation widget, and how a composite display (ipywidgets
boxes of tabs, texts and graph viewers) is shown with its ``text/html`` twin, as a viewer is
(``viewer.TwinDisplay``): an export keeps a picture whether or not it stores widget state."""
from __future__ import annotations

import uuid
from html import escape

import anywidget
import ipywidgets as W
import traitlets

from .bundle import bundle
from .page import twin_fragment
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


class TwinGuard(anywidget.AnyWidget):
    """Draws nothing: put in a composite widget, it hides that display's twin where the widget
    draws (``static/guard.js`` calls ``twin.js``'s ``hideTwin``, as a graph viewer does), so a
    display whose tabs hold no viewer, or whose viewer is in a tab not shown, is one picture."""

    _esm = bundle(entry="guard.js")
    uid = traitlets.Unicode("").tag(sync=True)
    live = traitlets.Bool(True).tag(sync=True)

    def __init__(self, **kwargs):
        kwargs.setdefault("uid", uuid.uuid4().hex)
        super().__init__(**kwargs)
        self.layout = W.Layout(display="none")


def show_twinned(widget, static_html: str, plain: str, display_id: bool = False):
    """Display ``widget`` as two outputs: ``static_html`` as its ``text/html`` twin (nbconvert
    shows the widget instead of a ``text/html`` in the same output once widget state is stored,
    and offline that widget cannot draw), then the widget with a :class:`TwinGuard` that hides
    the twin live. Returns the twin's display handle with ``display_id`` (to replace it when
    the display is complete: :func:`twin_data`), else None."""
    from IPython.display import display

    guard = TwinGuard()
    widget.children = (guard, *widget.children)
    handle = display(twin_data(guard.uid, static_html), raw=True, display_id=display_id)
    data, metadata = widget_bundle(widget, "")
    del data["text/html"]
    data["text/plain"] = plain
    display(data, metadata=metadata, raw=True)
    return handle


def twin_data(uid: str, static_html: str) -> dict:
    """The twin output of :func:`show_twinned` (``uid``: its guard's)."""
    return {"text/html": twin_fragment(uid, static_html)}


def guard_uid(widget) -> str:
    """The uid of the :class:`TwinGuard` :func:`show_twinned` put in ``widget``."""
    return next(c.uid for c in widget.children if isinstance(c, TwinGuard))


def validation_widget(report, draw=None):
    """The report's HTML above the graph of the validated function, with every checked binding
    marked (green within tolerance, red the divergent ones) and the first divergence selected.
    ``draw(view)`` reuses drawings made for other viewers (see ``graphs.function_viewer``)."""
    return _validation(report, draw)[0]


def _validation(report, draw=None):
    """The validation widget and its graph viewer (None when there is none)."""
    import graphviz

    from .graphs import function_viewer

    html = W.HTML(report_html(report))
    fn = report.fn
    if fn is None or not report.bindings:
        return W.VBox([html]), None
    marks = {b.name: {"status": "ok" if b.ok else "diverged",
                      "text": ("ok" if b.ok else "differs from numpy")
                      + f", max abs err {b.comparison.max_abs_err:.3g}"}
             for b in report.bindings}
    bad = report.first_divergence
    try:
        viewer = function_viewer(fn, annotations=marks, highlight_bindings=[bad] if bad else [],
                                 draw=draw)
    except graphviz.ExecutableNotFound:
        missing = "<i>graph unavailable: Graphviz's <code>dot</code> is not installed</i>"
        return W.VBox([html, W.HTML(missing)]), None
    except Exception as err:  # noqa: BLE001 - the report stands alone; say why the graph is missing
        why = W.HTML('<div style="color:#d1242f">graph unavailable: '
                     f"{escape(type(err).__name__)}: {escape(str(err))}</div>")
        return W.VBox([html, why]), None
    if bad:
        first = [nid for nid in viewer.highlight if nid in viewer.nodes]
        if first:
            viewer.selected_node = first[0]
    return W.VBox([html, viewer]), viewer


def show_validation(report) -> None:
    """``ValidationReport._ipython_display_``: the report and its marked graph as two outputs,
    the twin holding the report's HTML and the same viewer, interactive without a kernel
    (``page.fragment``), then the widget."""
    from .page import fragment

    widget, viewer = _validation(report)
    static = report_html(report)
    if viewer is not None:
        static += fragment(viewer)
    show_twinned(widget, static, repr(report))
