"""What ``validate`` found: each output and each intermediate binding compared, with the
inputs, the seed and the timings; displayed by the notebook layer (``mlclab.api.displays``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from . import displays
from .comparison import Comparison


@dataclass
class OutputCheck:
    index: int
    actual: np.ndarray
    expected: np.ndarray
    comparison: Comparison

    @property
    def ok(self) -> bool:
        return self.comparison.ok


@dataclass
class BindingCheck:
    name: str                     # the IR binding name (the key of ``fn.trace``)
    dsl_name: Optional[str]
    line: Optional[int]
    source_line: str
    comparison: Comparison
    module: Optional[str] = None  # an imported model's layer: its PyTorch module path

    @property
    def ok(self) -> bool:
        return self.comparison.ok


@dataclass
class ValidationReport:
    """What :func:`validate` found. Displays as a widget with a static HTML fallback."""

    function: str
    inputs: list[tuple[str, np.ndarray]]
    outputs: list[OutputCheck]
    bindings: list[BindingCheck]
    reference_name: str
    compiled_time_s: Optional[float]
    reference_time_s: Optional[float]
    seed: Optional[int] = None              # set when the inputs were drawn at random
    sizes: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fn: Any = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """Every output within tolerance of the reference and every binding of numpy's."""
        return all(o.ok for o in self.outputs) and self.first_divergence is None

    @property
    def max_abs_err(self) -> float:
        return max((o.comparison.max_abs_err for o in self.outputs), default=0.0)

    @property
    def max_rel_err(self) -> float:
        return max((o.comparison.max_rel_err for o in self.outputs), default=0.0)

    @property
    def first_divergence(self) -> Optional[str]:
        """The IR name of the first binding whose TVM value differs from numpy's, or None."""
        bad = self.first_divergent_binding
        return bad.name if bad else None

    @property
    def first_divergent_binding(self) -> Optional[BindingCheck]:
        return next((b for b in self.bindings if not b.ok), None)

    def __repr__(self) -> str:
        return (f"<ValidationReport {self.function}: {'pass' if self.ok else 'FAIL'}, "
                f"max_abs_err={self.max_abs_err:.3g}, max_rel_err={self.max_rel_err:.3g}, "
                f"first_divergence={self.first_divergence!r}>")

    def __bool__(self) -> bool:
        return self.ok

    # ----------------------------------------------------------------- displays
    # The notebook layer provides them (registered by the facade, see mlclab.api.displays).
    def _repr_html_(self) -> str:
        return displays.lookup("validation_html")(self)

    def widget(self):
        """The interactive display: the report above the graph, the divergent node marked."""
        return displays.lookup("validation_widget")(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return displays.lookup("widget_bundle")(self.widget(), self._repr_html_())

    def _ipython_display_(self):
        """IPython (a cell's last expression): the widget and its ``text/html`` twin, two
        outputs, so an export shows the report whether or not it stores widget state."""
        displays.lookup("show_validation")(self)
