"""Running one exercise's check: the student's answer against the hidden reference, on random
inputs drawn from the exercise's type hints (symbolic sizes included), then the probes and the
structural checks. Every outcome is a :class:`Result`; nothing the student wrote can make the
check itself raise.
"""
from __future__ import annotations

import re
import zlib
from typing import Any, Callable, Optional

import numpy as np

from ..api.comparison import compare
from ..api.drawn_inputs import random_inputs
from ..lang import dims
from ..lang.source import line_at
from ..reference import evaluate
from .result import Result
from .spec import FAILED, PASSED, UNCHANGED, Exercise, Note, Unanswered, assignments, fingerprint


def run_check(exercise: Exercise, answer: Any, namespace: dict, salt: int = 0) -> Result:
    """``salt`` draws other inputs than a live check's: a graded run's are not known in advance."""
    try:
        return _check(exercise, answer, namespace, salt)
    except Unanswered as missing:
        return Result(exercise, missing.status, str(missing))
    except Exception as exc:  # an answer the exercise cannot use: say so, never crash Run All
        told = tvm_refusal(exc) or f"{type(exc).__name__}: {_first_line(exc)}"
        return Result(exercise, FAILED, f"the check cannot use your `{exercise.answer}` "
                                        f"({type(answer).__name__}): {told}")


def _check(exercise: Exercise, answer: Any, namespace: dict, salt: int) -> Result:
    if answer is None:
        raise Unanswered(f"`{exercise.answer}` is still None: write your answer in the exercise "
                         "cell and run it.", UNCHANGED)
    source = source_of(answer)
    if source is not None and fingerprint(source) in exercise.stub_fingerprints:
        raise Unanswered(f"`{exercise.answer}` is still the starter code: change the exercise "
                         "cell, run it, then run this check again.", UNCHANGED)
    if exercise.judge is not None:
        problem = exercise.judge(answer, namespace)
        return Result(exercise, FAILED if problem else PASSED, problem or "right.")
    problem = signature_problem(exercise, answer)
    if problem:
        return Result(exercise, FAILED, problem)
    if exercise.adapt:
        callables = exercise.adapt(answer, namespace)
    else:
        callables = {f"your `{exercise.answer}`": answer}
    for label, call in callables.items():
        call, reference = call if isinstance(call, tuple) else (call, None)
        problem = _values_problem(exercise, label, call, reference, answer, salt)
        if problem:
            return Result(exercise, FAILED, problem)
    notes = []
    subject = exercise.evidence(answer) if exercise.evidence is not None else answer
    for check in exercise.structure:
        problem = check(subject)
        if isinstance(problem, Note):
            notes.append(problem)
        elif problem:
            return Result(exercise, FAILED, problem)
    return Result(exercise, PASSED, " ".join([_right(exercise), *notes]))


def _right(exercise: Exercise) -> str:
    count = len(exercise.probes)
    chosen = f" and {count} chosen one{'s' if count > 1 else ''}" if count else ""
    return f"right on {exercise.trials} random inputs{chosen}."


def check_outputs(exercise: Exercise, recorded: dict, salt: int, extras: dict,
                  evidence: Optional[str] = None) -> Result:
    """A graded "outputs" answer: the values the student's process computed on :func:`cases`
    (``recorded``: label -> one output or error text per case) against the reference here; then
    the structure checks on ``evidence`` (the text the exercise's ``evidence`` made of the answer
    in the student's process, as the live check reads it)."""
    reference = exercise.graded_reference(extras) if exercise.graded_reference else None
    try:
        for label, outputs in recorded.items():
            replay = iter(outputs)

            def call(*args, _replay=replay):
                got = next(_replay, None)
                if isinstance(got, str):
                    raise _Recorded(got)
                if got is None:
                    raise _Recorded("no value was recorded for these inputs")
                return got

            problem = _values_problem(exercise, label, call, reference, None, salt)
            if problem:
                return Result(exercise, FAILED, problem)
    except Exception as exc:   # a malformed record is the submission's problem, never a crash
        return Result(exercise, FAILED,
                      f"the graded run's values cannot be read: {_first_line(exc)}")
    if not recorded:
        return Result(exercise, FAILED, "the graded run recorded no values")
    if exercise.structure and not isinstance(evidence, str):
        return Result(exercise, FAILED, "the graded run handed in nothing for the structure checks "
                                        "to read")
    notes = []
    for check in exercise.structure:
        try:
            problem = check(evidence)
        except Exception as exc:
            problem = f"the structure check cannot read your answer: {_first_line(exc)}"
        if isinstance(problem, Note):
            notes.append(problem)
        elif problem:
            return Result(exercise, FAILED, problem)
    return Result(exercise, PASSED, " ".join([_right(exercise), *notes]))


class _Recorded(Exception):
    """An error the student's code raised in the graded run, replayed as the check's message."""

    def __str__(self) -> str:
        return self.args[0]


def cases(exercise: Exercise, salt: int = 0) -> list:
    """The inputs a check runs the answer on: (args, sizes, concept or None), random draws from the
    exercise's type hints, then its probes. The same exercise and salt always draw the same."""
    drawn = []
    for trial in range(exercise.trials):
        args, sizes = random_inputs(exercise.params, trial_seed(exercise, trial, salt),
                                    ranges=exercise.ranges)
        drawn.append((args, sizes, None))
    rng = np.random.default_rng(trial_seed(exercise, 99, salt))
    return drawn + [(probe.inputs(rng), {}, probe.concept) for probe in exercise.probes]


def source_of(answer: Any) -> Optional[str]:
    """The text the student wrote for ``answer``, where it has one (a DSL function or a Python
    function or class defined in a cell)."""
    text = getattr(answer, "source", None)
    if isinstance(text, str):
        return text
    import inspect
    if inspect.isfunction(answer) or inspect.isclass(answer):
        try:
            return inspect.getsource(answer)
        except (OSError, TypeError):
            return None
    return None


def signature_problem(exercise: Exercise, answer: Any) -> Optional[str]:
    """For a DSL answer: its parameters against the exercise's type hints (count, dtype, shape)."""
    typed = getattr(answer, "typed", None)
    if typed is None or exercise.adapt is not None:
        return None
    mine, want = list(typed.params), exercise.params
    if len(mine) != len(want):
        return (f"`{exercise.answer}` takes {len(mine)} parameter(s); the exercise passes "
                f"{len(want)}: {', '.join(f'{p.name}: {p.type}' for p in want)}.")
    for p, q in zip(mine, want):
        if not _type_fits(p.type, q.type):
            return (f"parameter `{p.name}` is declared {p.type}; the exercise passes {q.type} "
                    f"(a name like \"n\" stands for any size).")
    return None


def _type_fits(mine, want) -> bool:
    """A declared parameter type against the exercise's: the same dtype and rank; a size the
    exercise fixes (8) is the same number, a size it names ("n") is named in the answer too."""
    if str(mine.dtype) != str(want.dtype) or len(mine.shape) != len(want.shape):
        return False
    return all(a == b if isinstance(b, int) else not isinstance(a, int)
               for a, b in zip(mine.shape, want.shape))


def trial_seed(exercise: Exercise, trial: int, salt: int = 0) -> int:
    """Inputs are random but reproducible: the same exercise and trial always draw the same."""
    return (zlib.crc32(exercise.key.encode()) + 7919 * trial + 104729 * salt) % 2**32


def _values_problem(exercise: Exercise, label: str, call: Callable, reference: Optional[Callable],
                    answer: Any, salt: int = 0) -> Optional[str]:
    names = [p.name for p in exercise.params]
    for args, sizes, concept in cases(exercise, salt):
        where = _describe_inputs(names, args, sizes)
        try:
            with np.errstate(all="ignore"):
                got = call(*[np.array(a, copy=True) for a in args])
        except Unanswered:
            raise
        except Exception as exc:  # the student's code failing is a result, not a crash of the check
            if isinstance(exc, _Recorded):           # "Type: message", as the sandbox saw it
                kind, _, text = str(exc).partition(": ")
                return f"{label} raised {kind} on {where}: {text}"
            refusal = tvm_refusal(exc)
            if refusal:
                return f"{label} failed on {where}: {refusal}"
            return f"{label} raised {type(exc).__name__} on {where}: {_first_line(exc)}"
        expected = exercise.expected(args) if reference is None else reference(*args)
        problem = _compare(got, expected, exercise)
        if problem is None:
            continue
        if concept is not None:
            return f"{label} is wrong on {where}: {concept}"
        for wrong in exercise.misconceptions:
            with np.errstate(all="ignore"):
                mistaken = wrong.wrong(*[np.array(a, copy=True) for a in args])
            if _compare(got, mistaken, exercise) is None:
                return f"{label} is wrong on {where}: {wrong.concept}"
        binding = first_wrong_binding(exercise, answer, args)
        return f"{label} is wrong on {where}: {problem}{binding}"
    return None


def _compare(got, expected, exercise: Exercise) -> Optional[str]:
    got_list = list(got) if isinstance(got, (tuple, list)) else [got]
    exp_list = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    if len(got_list) != len(exp_list):
        return f"it returns {len(got_list)} value(s) where {len(exp_list)} are expected"
    for g, e in zip(got_list, exp_list):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return f"the result has shape {g.shape} where {e.shape} is expected"
        wider_float = g.dtype.kind == e.dtype.kind == "f" and g.dtype.itemsize >= e.dtype.itemsize
        if g.dtype != e.dtype and not wider_float:
            return f"the result has dtype {g.dtype} where {e.dtype} is expected"
        if e.dtype.kind == "f" and not np.isfinite(g).all() and np.isfinite(e).all():
            return "the result holds inf or NaN where every expected value is finite"
        c = compare(g, e, exercise.rtol, exercise.atol)
        if not c.ok:
            flat = int(np.argmax(c.tolerance_ratio)) if c.tolerance_ratio is not None else 0
            index = np.unravel_index(flat, e.shape) if e.shape else ()
            at = tuple(int(i) for i in index)
            return (f"{c.mismatches} of {c.size} values are off (at index {at}: "
                    f"{_number(g[index])} where {_number(e[index])} was expected)")
    return None


def first_wrong_binding(exercise: Exercise, answer: Any, args: list) -> str:
    """For a DSL answer checked against a DSL reference: the first of the student's named values
    that the reference never computes (same shape, within tolerance), with its line."""
    program = getattr(getattr(answer, "program", None), "typed", None)
    name = getattr(answer, "name", None)
    if program is None or name not in getattr(program, "functions", {}):
        return ""
    truth = exercise.reference_values(args)
    if not truth:
        return ""
    stmts = assignments(program.functions[name])
    by_expr = {id(s.value): s for s in stmts}
    values: dict[int, Any] = {}

    def record(expr, value):
        if id(expr) in by_expr:
            values[id(expr)] = value

    try:
        evaluate(program, name, [np.array(a, copy=True) for a in args], record)
    except Exception:  # the compiled side already ran; numpy's evaluation is only a diagnosis
        return ""
    for stmt in stmts:
        value = values.get(id(stmt.value))
        if value is None or isinstance(value, (tuple, list)):
            continue
        value = np.asarray(value)
        if not any(np.shape(t) == value.shape and compare(value, t, exercise.rtol, exercise.atol).ok
                   for t in truth if not isinstance(t, (tuple, list))):
            line = ""
            if hasattr(answer, "source"):
                line = line_at(answer.source, stmt.span.lineno).strip()
            return (f". The first of your values that a correct solution never computes: "
                    f"`{stmt.targets[0]}` (line {stmt.span.lineno}: `{line}`)")
    return ""


def _describe_inputs(names: list, args: list, sizes: dict) -> str:
    shapes = ", ".join(f"{n} {dims.format_shape(np.shape(a))}" for n, a in zip(names, args))
    if not sizes:
        return f"inputs {shapes}"
    return f"inputs {shapes} (sizes {', '.join(f'{k}={v}' for k, v in sizes.items())})"


# TVM's own checks speak C++ ("Check failed: input_shape[i] == reg (8 vs. 9) :
# ErrorContext(fn=f, loc=param[0], param=x, annotation=R.Tensor((4, 9), ...)) match_cast error"):
# a student is told in a sentence what was refused instead.
_TVM_CHECK = re.compile(r"Check failed|ErrorContext\(|kMaxFloat16|TVMError")
_ARGUMENT = re.compile(r"ErrorContext\(fn=[^,]*, loc=[^,]*, param=(?P<param>[^,]*), "
                       r"annotation=(?P<annotation>.*?)\)\s")


def tvm_refusal(exc: BaseException) -> Optional[str]:
    """For one of TVM's internal checks, a sentence saying what it refused (None for any
    other exception, which the student reads as its type and first line)."""
    text = str(exc)
    if not _TVM_CHECK.search(text):
        return None
    argument = _ARGUMENT.search(text)
    if argument:
        return (f"TVM refused the argument `{argument['param']}`: it is declared "
                f"{argument['annotation']}, and the value passed has another shape, rank or "
                f"dtype.")
    return ("TVM stopped at one of its internal checks (the program is one it cannot run as "
            "written, not a wrong value): look at the shapes and dtypes your code declares.")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _number(value) -> str:
    return f"{float(value):.6g}" if np.ndim(value) == 0 else repr(value)
