"""What a graded run carries out of the student's process: each answer as data, never as code.

Runs inside the sandboxed kernel, after the submission's last cell (mlclab.course.runner appends
the call). Nothing here decides a grade: a submission that tampers with this module only changes
the data it hands in, and mlclab.course.checker judges that data in a clean process.

    DSL function   -> its source text and name (the checker compiles it again)
    a judged value -> JSON (sets as {"__set__": [...]})
    a schedule     -> its trace as JSON (the checker replays it on its own naive matmul)
    anything else  -> "outputs": the answer's values on the graded run's inputs (drawn from a salt
                      chosen at grading time), as .npy bytes in base64; and, for the structure
                      checks, the exercise's ``evidence`` text (an IRModule's script, the error
                      a frontend raises: IR objects cannot be serialised in this TVM,
                      tvm.ir.save_json and pickle crash, see TVM-NOTES)
"""
from __future__ import annotations

import base64
import io
import json
from typing import Any

import numpy as np

from .spec import FAILED, GRADED_EXTRAS, NOT_RUN, UNCHANGED, Exercise, Unanswered
from .traces import trace_json

MAX_EVIDENCE = 1 << 20

CACHE_MARK = "[mlclab compile cache] "


def report_cache() -> None:
    """One line for the grading log: what the class's shared compile cache served this run
    (printed by the kernel, copied to the log by the sandbox; it decides nothing)."""
    from ..api.cache import cache_info
    shared = cache_info()["shared"]
    if shared is None:
        print(f"{CACHE_MARK}no shared class folder")
    else:
        print(f"{CACHE_MARK}{shared['hits']} program(s) read from the class's shared folder, "
              f"{shared['misses']} not in it")


def write(keys: list, salt: int, path: str, namespace: dict) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(answers(keys, salt, namespace), out)


def answers(keys: list, salt: int, namespace: dict) -> dict:
    from .catalog import EXERCISES
    found = {}
    for key in keys:
        exercise = EXERCISES.get(key)
        if exercise is None:
            found[key] = {"status": NOT_RUN, "message": f"no exercise {key} in this mlclab"}
        elif exercise.answer not in namespace:
            found[key] = {"status": NOT_RUN, "message": f"`{exercise.answer}` is not defined: the "
                                                        "notebook never ran its exercise cell"}
        else:
            found[key] = _export(exercise, namespace[exercise.answer], namespace, salt)
    return found


def _export(exercise: Exercise, answer: Any, namespace: dict, salt: int) -> dict:
    if answer is None:
        return {"status": UNCHANGED, "message": f"`{exercise.answer}` is still None"}
    kind = exercise.submitted_as
    try:
        if kind == "dsl" and isinstance(getattr(answer, "source", None), str):
            return {"kind": "dsl", "source": answer.source, "name": str(answer.name)}
        if kind == "value":
            return {"kind": "value", "value": _jsonable(answer)}
        if kind == "schedule":
            return _schedule(answer)
        return _outputs(exercise, answer, namespace, salt)
    except Unanswered as missing:
        return {"status": missing.status, "message": str(missing)}
    except Exception as exc:   # the student's object failing is a result for the checker to report
        text = str(exc).strip().splitlines()
        first = text[0][:300] if text else ""
        return {"status": FAILED,
                "message": f"your `{exercise.answer}` raised {type(exc).__name__}: {first}"}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted(_jsonable(v) for v in value)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise Unanswered(f"a graded answer must be plain data (numbers, strings, sets, lists, dicts); "
                     f"this one holds a {type(value).__name__}", FAILED)


def _schedule(schedule: Any) -> dict:
    from tvm.s_tir import Schedule
    from .catalog.performance import naive_module
    if not callable(schedule):
        raise Unanswered(f"`my_schedule` should be a function taking a Schedule, not "
                         f"{type(schedule).__name__}", FAILED)
    sch = Schedule(naive_module())
    schedule(sch)
    return {"kind": "schedule", "trace": trace_json(sch.trace)}


def _outputs(exercise: Exercise, answer: Any, namespace: dict, salt: int) -> dict:
    from .checking import cases, trial_seed
    extras = exercise.graded_extras(np.random.default_rng(trial_seed(exercise, 7, salt))) \
        if exercise.graded_extras else {}
    if exercise.adapt is not None:
        callables = exercise.adapt(answer, {**namespace, GRADED_EXTRAS: extras})
    elif callable(answer):
        callables = {f"your `{exercise.answer}`": answer}
    else:
        raise Unanswered(f"`{exercise.answer}` should be a function, "
                         f"not {type(answer).__name__}", FAILED)
    recorded = {}
    drawn = cases(exercise, salt)
    for label, call in callables.items():
        call = call[0] if isinstance(call, tuple) else call
        outputs = []
        for args, _, _ in drawn:
            try:
                with np.errstate(all="ignore"):
                    got = call(*[np.array(a, copy=True) for a in args])
                outputs.append(encode(got))
            except Exception as exc:
                text = str(exc).strip().splitlines()
                outputs.append(f"{type(exc).__name__}: {text[0][:300] if text else ''}")
        recorded[label] = outputs
    found = {"kind": "outputs", "outputs": recorded}
    if exercise.structure:
        found["evidence"] = str(exercise.evidence(answer))[:MAX_EVIDENCE]
    return found


def encode(value: Any) -> Any:
    """An answer's value as JSON: arrays as .npy bytes (read back with allow_pickle=False)."""
    if isinstance(value, (tuple, list)):
        return {"__tuple__": [encode(v) for v in value]}
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return {"__npy__": base64.b64encode(buffer.getvalue()).decode("ascii")}


def decode(value: Any) -> Any:
    if (isinstance(value, dict) and set(value) == {"__tuple__"}
            and isinstance(value["__tuple__"], list)):
        return tuple(decode(v) for v in value["__tuple__"])
    if isinstance(value, dict) and set(value) == {"__npy__"} and isinstance(value["__npy__"], str):
        return np.load(io.BytesIO(base64.b64decode(value["__npy__"])), allow_pickle=False)
    if isinstance(value, str):
        return value
    raise ValueError(f"not a recorded value: {type(value).__name__}")
