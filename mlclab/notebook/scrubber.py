"""The pass scrubber: a slider over the build pipeline's passes, one view model per pass.

A scrubber is a list of view models over the same value ids (``mlclab.viz.view_model``): the
input, then every pass of the build record, each drawn with what that pass did marked
(``added``, ``removed`` as ghosts, ``merged``, ``rewritten``, ``grouped``:
``inspect.pipeline.Diff``) and the same marks as its ``diff`` overlay layer, so a folded
namespace says what changed inside.

The layout stays put (``mlclab.viz.stable_layout``): the passes are laid out together, every
node matched across them by value id, so a node keeps its place from pass to pass, as
SpiderMonkey's iongraph keeps its blocks (each view's ``geometry.frame`` names the shared
layout; the front end, ``static/scrubber.js``, keeps the zoom and lines the drawings up on their
common nodes). The passes are prepared once (graphs, diffs); each layout is made the first time
a pass of its run is shown, then reused, and each pass is drawn once per folding.

The front end skips passes that changed nothing (a toggle), finds a pass by name, steps with the
arrow keys and shows a legend of the marks. The ``text/html`` twin and ``save()`` carry every
pass, so an exported notebook or a saved file scrubs without a kernel.

    from mlclab.notebook.scrubber import pass_scrubber
    pass_scrubber(fn)           # fn: a compiled function
"""
from __future__ import annotations

from typing import Optional

import traitlets

from ..viz.overview import overview
from ..viz.stable_layout import lay_out, new_run, node_keys
from ..viz.views import GraphView
from ..inspect.pipeline import diff_layer
from .graphs import draw_view
from .sources import TEXT_STYLES, marked_graph, step_source
from .viewer import PENDING, GraphViewer, clean_view, svg_of

INPUT = "0 · input"


def step_names(pipe, changed_only: bool = True) -> list:
    """``[(view name, step index)]``: the input (-1), then each pass (that changed something)."""
    out = [(INPUT, -1)]
    for step in pipe.steps:
        if step.changed or not changed_only:
            out.append((f"{step.index + 1} · {step.name}", step.index))
    return out


def step_view(pipe, index: int, **fold) -> dict:
    """The view model of the program after step ``index`` (-1: the input), its changes marked
    (laid out alone); ``fold``: ``draw_view``'s ``full``, ``folded``, ``open_modules``."""
    return draw_view(*step_source(pipe, index), **fold)


class _Folding:
    """The steps as drawn with one folding: their shown graphs, split into runs as far as
    they have been read, and each run's stable layout once made."""

    def __init__(self):
        self.shown: list = []          # step -> its graph as drawn (folded)
        self.runs: list = []           # [[step, ...], ...], the last one maybe still open
        self.seen: set = set()         # node keys of the last run
        self.layouts: dict = {}        # run index -> StableLayout


class ScrubSteps:
    """The scrubber's data, made as the student gets to it: each step's marked graph and texts,
    and per folding the runs of steps that share a layout and their layouts. The first look
    reads only the steps of the input's run."""

    def __init__(self, pipe):
        self.pipe = pipe
        self.steps = step_names(pipe, changed_only=False)
        self._graphs: dict = {}
        self._texts: dict = {}
        self._foldings: dict = {}      # folding -> _Folding
        self.stable = True             # False once Graphviz could not pin a drawing

    def graph(self, k: int):
        if k not in self._graphs:
            self._graphs[k] = marked_graph(self.pipe, self.steps[k][1])
        return self._graphs[k]

    def texts(self, k: int) -> dict:
        if k not in self._texts:
            from ..inspect.text import render_text

            index = self.steps[k][1]
            if index < 0:
                subject = self.pipe._subject(self.pipe.input)
                self._texts[k] = {s: render_text(subject, s) for s in TEXT_STYLES}
            else:
                step = self.pipe.steps[index]
                self._texts[k] = {s: step.render_text(s) for s in TEXT_STYLES}
        return self._texts[k]

    def passes(self) -> list:
        """What the front end lists: view name, pass name, whether it changed the program, its
        time in the build, and what it changed that no value's mark shows (``form``)."""
        return [{"view": view, "name": "input" if index < 0 else self.pipe.steps[index].name,
                 "changed": index < 0 or bool(self.pipe.steps[index].changed),
                 "seconds": 0.0 if index < 0 else self.pipe.steps[index].seconds,
                 # what no mark on a value shows (kernels, weights, form): the front end's
                 # one-line summary of the pass says it where no value changed
                 "form": "" if index < 0 else self.pipe.steps[index].form_change()}
                for view, index in self.steps]

    def _run_of(self, k: int, f: _Folding, fold: dict) -> int:
        """The run holding step ``k``, read on until that run is complete."""
        while True:
            done = len(f.shown) == len(self.steps)
            run = next((r for r in range(len(f.runs)) if k in f.runs[r]), None)
            if run is not None and (run < len(f.runs) - 1 or done):
                return run
            i = len(f.shown)
            g = self.graph(i)
            f.shown.append(g if fold["full"] else overview(g, open_modules=fold["open_modules"],
                                                   folded=fold["folded"]))
            keys = set(node_keys(f.shown[i]).values())
            if new_run(keys, f.seen):
                f.runs.append([])
                f.seen = set()
            f.runs[-1].append(i)
            f.seen |= keys

    def view(self, k: int, full: bool = False, folded=(), open_modules=None) -> dict:
        """The view model of step ``k``, drawn at its place in the stable layout."""
        key = (full, tuple(folded), None if open_modules is None else tuple(open_modules))
        fold = {"full": full, "folded": tuple(folded), "open_modules": open_modules}
        f = self._foldings.setdefault(key, _Folding())
        run = self._run_of(k, f, fold)
        graph = self.graph(k)
        index = self.steps[k][1]
        layers = {} if index < 0 else {"diff": diff_layer(graph, self.pipe.steps[index].name)}

        def pinned(drawing) -> str:
            import graphviz

            try:
                if run not in f.layouts:
                    f.layouts[run] = lay_out([f.shown[m] for m in f.runs[run]])
                return f.layouts[run].svg(drawing)
            except (graphviz.ExecutableNotFound, graphviz.CalledProcessError, ValueError):
                self.stable = False    # said in the scrubber's legend ("laid out pass by pass")
                return svg_of(GraphView(drawing))

        vm = draw_view(graph, self.texts(k), layers, full=full, folded=folded,
                       open_modules=open_modules, draw=pinned)
        if run in f.layouts and self.stable:
            vm["geometry"]["frame"] = f.layouts[run].frame
            if run > 0 and f.runs[run][0] == k:
                # The front end says so at this step: the picture is redrawn here.
                vm["geometry"]["new_layout"] = True
        return vm


class PassScrubber(GraphViewer):
    """A :class:`GraphViewer` whose views are the passes of one build, in order (``scrub``),
    with ``passes``: per view, the pass's name, whether it changed the program, its marks."""

    passes = traitlets.List().tag(sync=True)
    # The slider and the arrow keys skip passes that changed nothing (the front end's toggle).
    skip_unchanged = traitlets.Bool(True).tag(sync=True)
    # Laid out together (False: Graphviz could not pin the drawings; each is laid out alone).
    stable = traitlets.Bool(True).tag(sync=True)
    page_state = ("passes", "stable", "skip_unchanged")

    @traitlets.observe("unfolded")
    def _on_unfolded(self, change):
        # "draw all" on one pass draws every pass whole (and "fold all" every one folded): they
        # share one layout. The pass shown is drawn now, the others when shown.
        if self._loader is None:
            return
        if change["new"] and set(change["new"]) != set(self.views):
            self.unfolded = list(self.views)
            return
        self.views = {name: v if name == self.view else dict(PENDING)
                      for name, v in self.views.items()}
        self._load(self.view)

    def draw_all(self) -> None:
        """Draw every pass now (a page or an export carries them all), sent to the front end
        at once (one ``views`` change, not one per pass)."""
        pending = [name for name, v in self.views.items() if (v or {}).get("pending")]
        if self._loader is None or not pending:
            return
        drawn = {}
        for name in pending:
            try:
                drawn[name] = clean_view(self._loader(name))
            except Exception as err:  # noqa: BLE001 - shown in the canvas, as GraphViewer does
                drawn[name] = {"error": f"{type(err).__name__}: {err}", "nodes": {}}
        self.views = {**self.views, **drawn}

    def _twin(self) -> str:
        self.draw_all()
        return super()._twin()

    def _plain(self) -> str:
        return (f"<PassScrubber {self.view}: {len(self.views)} steps; "
                "its picture is in the output above>")


def pass_scrubber(fn, changed_only: bool = True, full: Optional[bool] = None) -> PassScrubber:
    """A viewer of ``fn``'s build pipeline with a pass slider. Every pass is a step;
    ``changed_only`` starts with the passes that changed nothing skipped (the front end's
    toggle shows them). ``full``: draw the whole graph at every pass (default: folded as
    ``fn.graph()`` folds a big one)."""
    if not callable(getattr(fn, "pipeline", None)):
        raise TypeError(f"pass_scrubber(): fn must be a compiled function (from mlclab.compile, "
                        f"@mlclab.function or mlclab.from_torch), got {type(fn).__name__}")
    for flag, value in (("changed_only", changed_only), ("full", full)):
        if not isinstance(value, bool) and not (flag == "full" and value is None):
            raise TypeError(f"pass_scrubber(): {flag} must be True or False, got {value!r}")
    steps = ScrubSteps(fn.pipeline())
    index = {name: k for k, (name, _) in enumerate(steps.steps)}

    def load(name: str, full: bool = False) -> dict:
        vm = steps.view(index[name], full=full or full_all or bool(viewer.unfolded),
                        folded=viewer.folded, open_modules=viewer.open_modules or None)
        viewer.stable = steps.stable
        return vm

    full_all = bool(full)
    viewer = None
    first = steps.view(0, full=full_all)
    views = {name: first if k == 0 else PENDING for k, (name, _) in enumerate(steps.steps)}
    viewer = PassScrubber(views,
                          loader=load, scrub=True, passes=steps.passes(), stable=steps.stable,
                          skip_unchanged=bool(changed_only), source=getattr(fn, "source", "") or "")
    return viewer
