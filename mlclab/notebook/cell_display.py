"""What a ``%%tinynn`` cell shows: one compact display with a tab per view; and what a
compiled function shows when it is a cell's last expression (``fn`` alone, or
``mlclab.from_torch(model, x)``): the same tabs for that one function.

Live: an ipywidgets ``Tab`` per function (a toggle picks the function when the cell defines
several), whose graph tabs are :class:`GraphViewer` widgets. Static (nbconvert, nbviewer,
GitHub): the same views as ``<details>`` sections, graphs as inline SVG, no script.
"""
from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import ipywidgets as W

from ..inspect.texts import text_styles
from ..viz.registry import view_kind, view_kinds
from .picture import picture_html, with_module
from .report_html import badge, report_html
from .widgets import guard_uid, show_twinned, twin_data, widget_bundle

_PRE = ("margin:0;padding:6px 8px;max-height:480px;overflow:auto;"
        "font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.35")


@dataclass(frozen=True)
class Tab:
    """What one ``--show`` keyword shows: a graph view, a text style, the pipeline or a check."""

    kind: str        # "graph", "text", "pipeline" or "validate"
    name: str        # the registered view or style it shows
    title: str


def show_tabs() -> dict:
    """``--show`` keyword -> Tab: the registered graph views and text styles that have a
    keyword, then the pipeline and the validation. Read at each call, so a view or style
    registered later is a choice at once."""
    tabs = {}
    for kind, entries in (("graph", view_kinds()), ("text", text_styles())):
        for entry in entries:
            if entry.show and entry.show not in tabs:
                tabs[entry.show] = Tab(kind, entry.name, entry.title)
    tabs.setdefault("pipeline", Tab("pipeline", "pipeline", "pipeline"))
    tabs.setdefault("validate", Tab("validate", "validate", "validate"))
    return tabs


def show_choices() -> tuple:
    return tuple(show_tabs())


def _tab(show: str) -> Tab:
    tabs = show_tabs()
    if show not in tabs:
        raise ValueError(f"show: unknown view {show!r}; choose from {', '.join(tabs)}")
    return tabs[show]


def pre(text: str) -> str:
    return f'<pre class="mlclab-text" style="{_PRE}">{html.escape(text)}</pre>'


def _failure(view: str, err: Exception) -> str:
    # A view that fails to draw must not take the others (or the bound functions) with it; the
    # student still sees what went wrong, in place.
    return (f'<div class="mlclab-view-error" style="color:#d1242f">the {html.escape(view)} view '
            f"failed: {html.escape(type(err).__name__)}: {html.escape(str(err))}</div>")


def _pipeline_html(obj) -> str:
    if hasattr(obj, "_repr_html_"):
        return obj._repr_html_()
    return pre(str(obj))


@dataclass
class FunctionViews:
    """The chosen views of one compiled function, each computed once."""

    fn: Any
    show: Sequence[str]
    report: Any = None                 # a ValidationReport when the cell validated
    seed: Optional[int] = None         # for the inputs of a validate view computed here
    pictures: bool = False             # a static view is a picture the browser lays out
    _cache: dict = field(default_factory=dict)

    def _get(self, key: str, make: Callable[[], Any]):
        if key not in self._cache:
            try:
                self._cache[key] = (True, make())
            except Exception as err:  # noqa: BLE001 - isolated per view, shown in its place
                self._cache[key] = (False, err)
        return self._cache[key]

    def text(self, style: str):
        return self._get(f"text:{style}", lambda: self.fn.text(style))

    def pipeline(self):
        return self._get("pipeline", self.fn.pipeline)

    def validation(self):
        if self.report is None:
            from mlclab.api.validation import validate

            return self._get("validate", lambda: validate(self.fn, seed=self.seed))
        return True, self.report

    def draw(self, view: str) -> dict:
        """One graph view's payload, drawn once and shared by this function's viewers."""
        from .graphs import view_payload

        # Where no dot exists, with the fold ladder its static form's picture walks.
        ok, payload = self._get(f"graph:{view}", lambda: view_payload(self.fn, view, ladder=True))
        if not ok:
            raise payload
        return payload

    def viewer(self, view: str):
        """The graph viewer opened on the registered graph view ``view``."""
        from .graphs import function_viewer

        return self._get(f"viewer:{view}",
                         lambda: function_viewer(self.fn, view=view, draw=self.draw))

    # ----------------------------------------------------------------- live widgets
    def widget(self, show: str):
        tab = _tab(show)
        view = tab.name
        if tab.kind == "graph":
            ok, viewer = self.viewer(view)
            return viewer if ok else W.HTML(_failure(show, viewer))
        if tab.kind == "text":
            ok, text = self.text(view)
            return W.HTML(pre(text) if ok else _failure(show, text))
        if view == "pipeline":
            ok, obj = self.pipeline()
            if not ok:
                return W.HTML(_failure(view, obj))
            return obj if isinstance(obj, W.Widget) else W.HTML(_pipeline_html(obj))
        if view == "validate":
            from .widgets import validation_widget

            ok, report = self.validation()
            if not ok:
                return W.HTML(_failure(view, report))
            return validation_widget(report, draw=self.draw)
        raise AssertionError(f"a tab of kind {tab.kind!r} has no widget")

    def tabs(self) -> W.Tab:
        tab = W.Tab(children=[self.widget(v) for v in self.show])
        tab.titles = tuple(_tab(v).title for v in self.show)
        tab.add_class("mlclab-tabs")
        return tab

    # ----------------------------------------------------------------- static HTML
    def static_view(self, show: str) -> str:
        tab = _tab(show)
        view = tab.name
        if tab.kind == "graph":
            ok, viewer = self.viewer(view)
            if not ok:
                return _failure(show, viewer)
            # Without `dot` the browser lays the graph out (the text stays for no script);
            # the output carries the WebAssembly Graphviz once (with_module).
            picture = picture_html(viewer.current, module=False)
            self.pictures |= picture is not None
            return picture or viewer.static_html()
        if tab.kind == "text":
            ok, text = self.text(view)
            return pre(text) if ok else _failure(show, text)
        if view == "pipeline":
            ok, obj = self.pipeline()
            return _pipeline_html(obj) if ok else _failure(view, obj)
        if view == "validate":
            ok, report = self.validation()
            return report_html(report) if ok else _failure(view, report)
        raise AssertionError(f"a tab of kind {tab.kind!r} has no static view")

    def static_html(self) -> str:
        return self.static_html_of(self.show)

    def static_html_of(self, shows: Sequence[str]) -> str:
        parts = []
        for i, view in enumerate(shows):
            parts.append(f'<details{" open" if i == 0 else ""} class="mlclab-static-view">'
                         f"<summary><b>{html.escape(_tab(view).title)}</b></summary>"
                         f'<div style="overflow:auto;max-height:640px">{self.static_view(view)}'
                         "</div></details>")
        return "".join(parts)


class CellDisplay:
    """The display of one ``%%tinynn`` cell (or of any mlclab Program)."""

    def __init__(self, program: Mapping[str, Any], show: Sequence[str],
                 reports: Optional[Mapping[str, Any]] = None, target: Optional[str] = None,
                 seed: Optional[int] = None):
        for view in show:
            _tab(view)                 # an unknown view fails here, not inside a tab
        self.functions = {name: FunctionViews(fn, list(show), (reports or {}).get(name), seed)
                          for name, fn in program.items()}
        self.target = target
        self.fast_math = bool(getattr(program, "fast_math", False))

    def header_html(self) -> str:
        names = ", ".join(f"<code>{html.escape(n)}</code>" for n in self.functions)
        where = f" for <code>{html.escape(str(self.target))}</code>" if self.target else ""
        if self.fast_math:       # results may differ from numpy's: said where the student looks
            where += " with <b>fast-math</b>"
        badges = ""
        for name, fv in self.functions.items():
            if fv.report is not None:
                badges += f" {badge(fv.report.ok)} <code>{html.escape(name)}</code> vs numpy"
        return ('<div class="mlclab-cell-header" '
                'style="font-family:var(--jp-ui-font-family,sans-serif);font-size:12px;'
                f'margin:2px 0 4px">tinynn: compiled {names}{where}{badges}</div>')

    def widget(self) -> W.Widget:
        header = W.HTML(self.header_html())
        tabs = [fv.tabs() for fv in self.functions.values()]
        if len(tabs) == 1:
            return W.VBox([header, tabs[0]])
        picker = W.ToggleButtons(options=list(self.functions), description="function")
        stack = W.Stack(children=tabs, selected_index=0)
        W.jslink((picker, "index"), (stack, "selected_index"))
        return W.VBox([header, picker, stack])

    def static_html(self) -> str:
        parts = [self.header_html()]
        for name, fv in self.functions.items():
            if len(self.functions) > 1:
                parts.append(f"<h4 style=\"margin:6px 0 2px\">{html.escape(name)}</h4>")
            parts.append(fv.static_html())
        return _carrying(self.functions.values(),
                         f'<div class="mlclab-cell">{"".join(parts)}</div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        return widget_bundle(self.widget(), self.static_html())

    def _ipython_display_(self):
        """Two outputs, as a viewer's display: the static views as ``text/html`` (its graphs
        laid out by the browser where no ``dot`` exists), which an export shows whether or not
        it stores widget state, then the widget, which hides that twin where it draws
        (``widgets.show_twinned``)."""
        show_twinned(self.widget(), self.static_html(),
                     "<tinynn cell: its views are in the output above>")


def _carrying(views, html_text: str) -> str:
    """``html_text`` with one WebAssembly Graphviz for its pictures, if any of ``views`` (the
    :class:`FunctionViews` it shows) drew one."""
    return with_module(html_text) if any(v.pictures for v in views) else html_text


# ---------------------------------------------------------------------- one compiled function
def function_tabs() -> list:
    """The tabs of a function's own display: every registered graph view and text style (read
    at each call, as the cell's choices are), then the validation. The build's stages are left
    out (the pipeline, and views of a step such as "fused"): ``fn.pipeline()`` shows them,
    and ``--show fused`` asks for one."""
    return [show for show, tab in show_tabs().items() if tab.kind != "pipeline"
            and not (tab.kind == "graph" and view_kind(tab.name).after is not None)]


class FunctionDisplay:
    """One compiled function (DSL or imported) as a cell shows it: a header with its signature
    and a validation badge, then a tab per view. ``seed`` fixes the validate view's random
    inputs, so the display is the same on every run."""

    def __init__(self, fn, show: Optional[Sequence[str]] = None, seed: Optional[int] = 0):
        show = function_tabs() if show is None else list(show)
        for view in show:
            _tab(view)                 # an unknown view fails here, not inside a tab
        self.fn = fn
        self.views = FunctionViews(fn, show, seed=seed)

    def header_html(self, progress: Optional[str] = None) -> str:
        """The signature, target and validation badge; ``progress`` instead of the badge while
        the validation runs (nothing is validated then)."""
        fn = self.fn
        verdict = ""
        if progress is not None:
            verdict = (f' <span class="mlclab-progress" style="opacity:0.8">· '
                       f"{html.escape(progress)}</span>")
        elif "validate" in self.views.show:
            ok, report = self.views.validation()
            if ok:
                verdict = (f" {badge(report.ok)} vs {html.escape(fn.reference_name)} "
                           f"(max abs err {report.max_abs_err:.3g})")
        return (f'<div class="mlclab-function-header" style="font-family:var(--jp-ui-font-family,'
                f'sans-serif);font-size:12px;margin:2px 0 4px">{html.escape(repr(fn))} · '
                f"<code>{html.escape(str(fn.target))}</code>{verdict}</div>")

    def show_in_steps(self) -> None:
        """Display this function the way a student waits least: the header and the first
        graph at once, then a progress line in the header while the validation and the other
        tabs are made (a ResNet-18's validation against PyTorch took 14.5 s with nothing on
        screen), then the badge. The output is finally replaced by the same widget with its
        complete static twin, so a saved or exported notebook has the verdict too."""
        show = self.views.show
        header = W.HTML(self.header_html(progress="drawing…"))
        first = self.views.widget(show[0])
        waiting = [W.HTML(f'<div style="padding:6px;opacity:0.7">{html.escape(_tab(v).title)}: '
                          f"being prepared…</div>") for v in show[1:]]
        tab = W.Tab(children=[first, *waiting])
        tab.titles = tuple(_tab(v).title for v in show)
        tab.add_class("mlclab-tabs")
        box = W.VBox([header, tab])
        pending = _carrying([self.views], f'<div class="mlclab-function">'
                            f'{self.header_html(progress="not finished")}'
                            f"{self.views.static_html_of(show[:1])}</div>")
        # Two outputs (widgets.show_twinned): the twin, replaced at the end by the complete
        # static display so that an export has every tab and the verdict, then the widget.
        handle = show_twinned(box, pending, repr(self.fn), display_id=True)
        if "validate" in show:
            with _ticking(header, lambda secs: self.header_html(progress=(
                    f"validating against {self.fn.reference_name}… {secs} s"))):
                self.views.validation()
        children = [first]
        for i, view in enumerate(show[1:], start=1):
            header.value = self.header_html(progress=f"preparing the {_tab(view).title} tab "
                                                     f"({i} of {len(show) - 1})…")
            children.append(self.views.widget(view))
        tab.children = children
        header.value = self.header_html()
        handle.update(twin_data(guard_uid(box), self.static_html()), raw=True)

    def widget(self) -> W.Widget:
        return W.VBox([W.HTML(self.header_html()), self.views.tabs()])

    def static_html(self) -> str:
        return _carrying([self.views], f'<div class="mlclab-function">{self.header_html()}'
                                       f"{self.views.static_html()}</div>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        data, metadata = widget_bundle(self.widget(), self.static_html())
        data["text/plain"] = repr(self.fn)
        return data, metadata


def draws_html() -> bool:
    """Whether whoever asks for a MIME bundle will draw its HTML. Terminal IPython asks too,
    then prints only the text: building the tabs there would validate the function (seconds
    for a ResNet) for nothing. A Jupyter kernel's front end draws it, and so does any caller
    outside IPython (plain Python never asks)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is None or getattr(shell, "kernel", None) is not None


class _ticking:
    """While the block runs, ``widget.value`` is refreshed each second with ``text(seconds)``
    (from a thread: the block holds the kernel, but comm messages go out from any thread)."""

    def __init__(self, widget, text: Callable[[int], str]):
        import threading

        self.widget, self.text = widget, text
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        seconds = 0
        while not self.stop.wait(1.0):
            seconds += 1
            self.widget.value = self.text(seconds)

    def __enter__(self):
        self.widget.value = self.text(0)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        return False


def show_function(fn) -> None:
    """``CompiledFunction._ipython_display_``: in a notebook, :meth:`FunctionDisplay.show_in_steps`;
    in terminal IPython the one-line repr, with nothing computed."""
    from IPython.display import display

    if not draws_html():
        display({"text/plain": repr(fn)}, raw=True)
        return
    FunctionDisplay(fn).show_in_steps()


def function_display(fn):
    """``CompiledFunction._repr_mimebundle_``: the :class:`FunctionDisplay` of ``fn``; its
    one-line ``repr`` alone in terminal IPython."""
    if not draws_html():
        return {"text/plain": repr(fn)}, {}
    return FunctionDisplay(fn)._repr_mimebundle_()
