"""The two sides of a comparison (``mlclab.compare``, ``notebook/compare.py``), each read once.

A side is a compiled function (its ``view`` graph), a step of a build
(``fn.pipeline().step("FuseOps")``) or ``(fn, "FuseOps")`` / ``(fn, "input")``. Reading one
parses its graph, carries its value identities through the build's passes and prints its texts
(the slow part: about 0.2 s at ResNet-50 size, 0.8 s at BERT-base); every folding of the side
is then drawn from what was read (:meth:`Side.draw`), so a new fold state only lays out.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional

from .graphs import draw_view
from .sources import step_source, view_source


class Side(NamedTuple):
    """One side of a comparison, read once (parsed, its identities carried, its texts printed):
    its ``whole`` graph, ``texts`` and overlay ``layers``, which any folding is drawn from
    (:meth:`draw`); ``key``, the same object for two sides of one build; ``title`` and the DSL
    ``source`` its nodes point into."""
    whole: Any
    texts: Mapping
    layers: Mapping
    key: Any
    title: str
    source: str

    def draw(self, full: bool = False, open_modules=None, folded=()) -> dict:
        """The side's view model folded so (``open_modules`` None: the first look's); a pure
        function of the fold, safe from a background thread."""
        return draw_view(self.whole, self.texts, self.layers, full=full,
                         open_modules=open_modules, folded=folded)


def side_of(x: Any, view: str = "dataflow", pipelined: bool = False,
            pipes: Optional[dict] = None) -> Side:
    """One side (see the module docstring). ``pipelined``: a plain function stands for its
    build's input; ``pipes`` (a dict) shares one ``fn.pipeline()`` between the sides of one
    function, so its input is parsed and its value identities carried once."""
    from ..inspect.pipeline import Step

    pipes = {} if pipes is None else pipes

    def pipeline_of(fn):
        if id(fn) not in pipes:
            pipes[id(fn)] = (fn, fn.pipeline())       # fn kept: its id is not reused
        return pipes[id(fn)][1]

    if isinstance(x, Step):
        return Side(*step_source(x.pipeline, x.index), x.pipeline.record,
                    f"after {x.index + 1} · {x.name}", _source(x.pipeline.subject))
    if isinstance(x, tuple):
        if len(x) != 2 or not isinstance(x[1], (str, type(None))):
            raise TypeError("compare: a side given as a tuple is (fn, pass name), e.g. "
                            f"(fn, 'FuseOps') or (fn, 'input'); got {x!r}")
        fn, name = x
        if not callable(getattr(fn, "pipeline", None)):
            raise TypeError(f"compare: (fn, pass): fn must be a compiled function, got "
                            f"{type(fn).__name__}")
        pipe = pipeline_of(fn)
        if name in (None, "input"):
            return Side(*step_source(pipe, -1), pipe.record, f"{pipe.name} · input",
                        _source(pipe.subject))
        return side_of(pipe.step(name), view, pipes=pipes)
    if callable(getattr(x, "pipeline", None)) and callable(getattr(x, "graph", None)):
        if pipelined:
            pipe = pipeline_of(x)
            return Side(*step_source(pipe, -1), pipe.record, f"{pipe.name} · input", _source(x))
        drawn, texts = view_source(x, view)
        return Side(drawn.graph, texts, {}, getattr(x, "build_record", None) or x,
                    f"{getattr(x, 'name', 'function')} · {view}", _source(x))
    raise TypeError(f"compare: a side is a compiled function, a pipeline step "
                    f"(fn.pipeline().step('FuseOps')) or (fn, 'FuseOps'); got {type(x).__name__}")


def _source(x) -> str:
    """The DSL source a side's nodes point into ("" for an imported model)."""
    source = getattr(x, "source", "")
    return source if isinstance(source, str) else ""


def is_step(x) -> bool:
    """Whether ``x`` is a side given as a step of a build."""
    from ..inspect.pipeline import Step

    return isinstance(x, (Step, tuple))
