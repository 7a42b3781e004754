"""The graded check: a submission's answers, as data (mlclab.course.export), judged in a clean
process that imports mlclab and the references from the installed package and runs none of the
submission's Python.

    python -m mlclab.course.checker ANSWERS.json SALT CPU_S MEMORY_MB KEY [KEY ...]

prints ``MLCLAB-RESULTS {key: result}`` as its last line.

A record cannot claim its own verdict: "passed" is only ever said here. A DSL answer is compiled
again from its text; a schedule's trace is replayed on this process's own naive matmul; recorded
outputs are compared with references computed here (and the structure checks read the evidence
text the export made of the answer, e.g. an IRModule's script: nothing of it is parsed or run
here).
"""
from __future__ import annotations

import json
import sys
from typing import Any

from .result import Result
from .spec import FAILED, NOT_RUN, UNCHANGED, Exercise

MAX_ANSWERS_BYTES = 64 << 20
_REPORTABLE = (FAILED, NOT_RUN, UNCHANGED)     # what the student's process may say about itself


def check_answers(answers: Any, keys: list, salt: int) -> dict:
    """{key: Result} for each graded key; a key missing from ``answers`` is "not run"."""
    from .catalog import EXERCISES
    results = {}
    for key in keys:
        exercise = EXERCISES[key]
        record = answers.get(key) if isinstance(answers, dict) else None
        try:
            results[key] = judge(exercise, record, salt)
        except Exception as exc:   # whatever the record holds, the grade is a result, not a crash
            text = str(exc).strip().splitlines()
            first = text[0][:300] if text else ""
            results[key] = Result(exercise, FAILED, f"the graded answer cannot be checked: "
                                                    f"{type(exc).__name__}: {first}")
    return results


def judge(exercise: Exercise, record: Any, salt: int) -> Result:
    from .checking import check_outputs, run_check
    if not isinstance(record, dict):
        return Result(exercise, NOT_RUN, "the graded run handed in no answer (did the notebook "
                                         "stop before the exercise, or run out of time?)")
    if "kind" not in record:
        status = record.get("status")
        if status not in _REPORTABLE:
            return Result(exercise, FAILED, "the graded run's record names its own verdict "
                                            f"({str(status)[:40]!r}) instead of an answer: "
                                            "only the checker gives a verdict")
        return Result(exercise, status, str(record.get("message", ""))[:2000] or "no answer")
    kind = record["kind"]
    if kind != exercise.submitted_as and not (kind == "outputs" and exercise.submitted_as == "dsl"):
        return Result(exercise, FAILED, f"the graded run handed in a {kind!r} answer where this "
                                        f"exercise takes {exercise.submitted_as!r}")
    if kind == "dsl":
        answer = _compiled(exercise, record)
        if isinstance(answer, Result):
            return answer
        return run_check(exercise, answer, {}, salt)
    if kind == "value":
        return run_check(exercise, _unjson(record["value"]), {}, salt)
    if kind == "schedule":
        return _schedule(exercise, str(record["trace"]), salt)
    if kind == "outputs":
        from .checking import trial_seed
        from .export import decode
        import numpy as np
        extras = exercise.graded_extras(np.random.default_rng(trial_seed(exercise, 7, salt))) \
            if exercise.graded_extras else {}
        recorded = {str(label): [decode(v) for v in values]
                    for label, values in dict(record["outputs"]).items()}
        evidence = record.get("evidence")
        return check_outputs(exercise, recorded, salt, extras,
                             evidence if isinstance(evidence, str) else None)
    return Result(exercise, FAILED, f"the graded run handed in an unknown kind of answer: {kind!r}")


def _compiled(exercise: Exercise, record: dict):
    from ..api import compile as compile_program
    source, name = str(record["source"]), str(record["name"])
    try:
        return compile_program(source, filename=f"<your {exercise.answer}>")[name]
    except Exception as exc:
        text = str(exc).strip()
        return Result(exercise, FAILED, f"your `{exercise.answer}` does not compile here: "
                                        f"{text[:1500]}")


def _unjson(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"__set__"}:
        return {_unjson(v) for v in value["__set__"]}
    if isinstance(value, dict):
        return {k: _unjson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unjson(v) for v in value]
    return value


def _schedule(exercise: Exercise, trace_json: str, salt: int) -> Result:
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import Trace
    from .catalog.performance import naive_module, reference_trace
    from .checking import run_check
    from .traces import trace_from_json
    if trace_json == reference_trace():
        return Result(exercise, FAILED, "this is the package's own reference schedule, step for "
                                        "step: a graded answer is a schedule you wrote")
    trace = trace_from_json(trace_json)
    probe = Schedule(naive_module())
    Trace.apply_json_to_schedule(trace, probe)
    if not probe.trace.insts:
        return Result(exercise, UNCHANGED, "`my_schedule` applies no schedule step: the matmul is "
                                           "still the naive loop nest")

    def replay(sch):
        Trace.apply_json_to_schedule(trace, sch)

    return run_check(exercise, replay, {}, salt)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path, salt, cpu_s, memory_mb, keys = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), argv[4:]
    from .sandbox import set_limits
    set_limits(cpu_s, memory_mb)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_ANSWERS_BYTES + 1)
        answers = json.loads(raw) if len(raw) <= MAX_ANSWERS_BYTES else None
    except (OSError, ValueError):
        answers = None
    results = check_answers(answers, keys, salt)
    record = {key: result.to_json() for key, result in results.items()}
    print("MLCLAB-RESULTS " + json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
