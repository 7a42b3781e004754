"""What one exercise is: the student's answer, a hidden reference, and what to say when they differ.

The reference lives here, in the package, as data the notebook never displays: a DSL program (text
parsed by mlclab's own frontend, evaluated with numpy) or a numpy function. A student who opens the
installed package can read it; the notebook, its outputs and the check's messages never show it.
"""
from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..frontend.parser import parse_program
from ..lang.typed import Assign, Function, If, TypedProgram
from ..reference import evaluate

# A check's verdicts. Only "passed" scores; the others say what to do next.
PASSED, FAILED, NOT_RUN, UNCHANGED = "passed", "failed", "not run", "unchanged"
GRADED_EXTRAS = "__mlclab_graded_extras__"
SUBMIT_KINDS = ("dsl", "value", "schedule", "outputs")   # see Exercise.submit


class Note(str):
    """What a structure check returns when the answer passes but there is something to say (how
    fast it was): added to the PASSED message."""


class Unanswered(Exception):
    """The student's answer is missing or cannot be used yet; the message says what to do."""

    def __init__(self, message: str, status: str = NOT_RUN):
        super().__init__(message)
        self.status = status


@dataclass
class Misconception:
    """A known wrong idea, as the wrong function it leads to: an answer that matches it is named."""

    wrong: Callable[..., Any]
    concept: str


@dataclass
class Probe:
    """Inputs chosen to expose one mistake random inputs rarely hit (overflow, one branch)."""

    inputs: Callable[[np.random.Generator], list]
    concept: str


#: Every exercise made, by key: the catalog's once it is imported.
_MADE: dict = {}


def exercise_by_key(key: str) -> "Exercise":
    """The exercise ``key`` names (a pickled exercise is read back through this)."""
    if key not in _MADE:
        # The catalog's modules make their exercises when imported (by name: the catalog
        # imports this module, which does not import it back).
        importlib.import_module("mlclab.course.catalog")
    return _MADE[key]


@dataclass
class Exercise:
    """One self-checking exercise. ``reference`` is DSL text (function ``entry``) or a numpy
    callable whose parameters ``signature`` declares in the DSL's type-hint syntax."""

    key: str
    title: str
    answer: str                                   # the global name the student's cell defines
    reference: Any
    entry: str = ""                               # the DSL reference's function name
    signature: str = ""                           # "x: Tensor[('n',), f32]" for a numpy reference
    adapt: Optional[Callable[[Any, dict], dict]] = None   # answer -> {label: numpy callable}
    ranges: dict = field(default_factory=dict)    # parameter -> (low, high) to draw from
    misconceptions: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    # answer -> problem text or None, checked once the values pass
    structure: list = field(default_factory=list)
    # For "outputs": what the structure checks read instead of the answer, as text computed from
    # it (an IRModule's script, the error a frontend raises): a graded run carries this text out
    # of the student's process, and the checks read the same text live and graded.
    evidence: Optional[Callable[[Any], str]] = None
    judge: Optional[Callable[[Any, dict], Optional[str]]] = None   # answers that are not functions
    hints: list = field(default_factory=list)
    stub_fingerprints: frozenset = frozenset()
    trials: int = 4
    # How a graded run carries the answer out of the student's process (mlclab.course.export):
    # "dsl" (its source text), "value" (JSON), "schedule" (the trace), "outputs" (the answer's
    # values on the grader's inputs, and ``evidence`` for the structure checks). Empty:
    # "value" for a judge, "dsl" otherwise.
    submit: str = ""
    time_limit_s: float = 60.0                    # a live check stops the student's code after this
    # For "outputs": extra random data the grader draws (a model's weights) and the reference
    # it implies; the answer's adapter finds the extras under GRADED_EXTRAS in its namespace.
    graded_extras: Optional[Callable[[np.random.Generator], dict]] = None
    graded_reference: Optional[Callable[[dict], Callable]] = None
    rtol: Optional[float] = None
    atol: Optional[float] = None
    _program: Optional[TypedProgram] = field(default=None, repr=False)

    def __post_init__(self):
        if self.submitted_as not in SUBMIT_KINDS:
            raise ValueError(f"exercise {self.key}: submit={self.submit!r} is not one of "
                             f"{', '.join(SUBMIT_KINDS)}")
        if self.submitted_as == "outputs" and self.structure and self.evidence is None:
            raise ValueError(f"exercise {self.key}: an \"outputs\" exercise with structure checks "
                             "needs `evidence` (what a graded run carries out for them to read)")
        _MADE.setdefault(self.key, self)     # (a test's stand-in never replaces the catalog's)

    def __reduce__(self):
        # An exercise is code (its reference, adapters, checks): a copy or a pickle (a result
        # handed to a grader) is the exercise of the same key where it is read.
        return exercise_by_key, (self.key,)

    @property
    def submitted_as(self) -> str:
        return self.submit or ("value" if self.judge is not None else "dsl")

    # ------------------------------------------------------------- the hidden reference
    @property
    def program(self) -> TypedProgram:
        if self._program is None:
            if not self.signature:
                self._program = parse_program(self.reference, f"<exercise {self.key}>")
            else:
                # The signature alone, as a DSL function, gives the typed parameters.
                first = self.signature.split(":")[0].strip()
                self._program = parse_program(
                    f"def {self.answer}({self.signature}):\n    return {first}\n")
        return self._program

    @property
    def function(self) -> Function:
        return self.program.functions[self.answer if self.signature else self.entry]

    @property
    def params(self) -> list:
        return list(self.function.params)

    def expected(self, args: list):
        if not isinstance(self.reference, str):
            with np.errstate(all="ignore"):
                return self.reference(*[np.array(a, copy=True) for a in args])
        return evaluate(self.program, self.function.name, [np.array(a, copy=True) for a in args])

    def reference_values(self, args: list) -> list:
        """Every value the DSL reference computes on ``args`` (empty for a numpy reference)."""
        if not isinstance(self.reference, str):
            return []
        seen: list = []
        evaluate(self.program, self.function.name, [np.array(a, copy=True) for a in args],
                 lambda expr, value: seen.append(value))
        return seen


def fingerprint(source: str) -> str:
    """A starter cell's identity, blind to blank lines and trailing spaces."""
    lines = [line.rstrip() for line in source.strip().splitlines() if line.strip()]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def assignments(function: Function) -> list[Assign]:
    """The student's named values in program order (inside ``if`` branches too)."""
    found: list[Assign] = []

    def walk(stmts):
        for stmt in stmts:
            if isinstance(stmt, Assign):
                found.append(stmt)
            elif isinstance(stmt, If):
                walk(stmt.then_body)
                walk(stmt.else_body)

    walk(function.body)
    return found
