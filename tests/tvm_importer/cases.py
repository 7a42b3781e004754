"""The (module, example inputs) cases of TVM's importer test file, collected by running its
test functions with ``verify_model`` replaced by a recorder (their expected Relax modules are
built but not compared: mlclab compares with PyTorch instead).

Run as a script, it imports every case through ``mlclab.from_torch`` and prints one JSON line
per case: what to put in ``expected_refusals.txt`` (``python tests/tvm_importer/cases.py``).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "tvm_frontend_from_exported_program.py"
REFUSALS = HERE / "expected_refusals.txt"


# Cases whose PyTorch result is not a value to compare with.
NOTHING_TO_COMPARE = {
    "test_empty#0": "torch.empty: uninitialised memory",
    "test_empty_without_dtype#0": "torch.empty: uninitialised memory",
    "test_empty_like#0": "torch.empty_like: uninitialised memory",
    "test_exponential#0": "exponential_: random samples",
}


@dataclass
class Case:
    id: str
    model: Any
    example_args: tuple


def collect() -> list[Case]:
    """Every case, in file order; ids are ``test_name[params]#n``."""
    import mlclab

    mlclab.import_torchvision()        # the suite imports torchvision
    spec = importlib.util.spec_from_file_location("tvm_importer_suite", VENDORED)
    suite = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = suite     # TVMScript reads each Expected class's source through it
    with _quiet():
        spec.loader.exec_module(suite)
    cases: list[Case] = []
    current: list = []

    def record(torch_model, example_args, *_, **__):
        current.append((torch_model, tuple(example_args)))

    suite.verify_model = record
    suite.verify_model_numerically = record
    for name, test in list(vars(suite).items()):
        if not name.startswith("test_") or not callable(test):
            continue
        for label, params in _parameter_sets(test):
            current.clear()
            try:
                with _quiet():
                    test(**params)
            except Exception:       # a test that needs what this TVM lacks: no cases from it
                pass
            for n, (model, args) in enumerate(current):
                cases.append(Case(f"{name}{label}#{n}", model, args))
    return cases


def _parameter_sets(test):
    marks = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return [("", {})]
    axes = []
    for mark in marks:
        names = [n.strip() for n in (mark.args[0].split(",") if isinstance(mark.args[0], str)
                                     else mark.args[0])]
        values = []
        for value in mark.args[1]:
            value = getattr(value, "values", value)          # pytest.param(...)
            values.append(dict(zip(names, value if len(names) > 1 else [value])))
        axes.append(values)
    sets = []
    for combo in itertools.product(*axes):
        params = {k: v for d in combo for k, v in d.items()}
        label = "[" + "-".join(_short(v) for v in params.values()) + "]"
        sets.append((label, params))
    return sets


def _short(value) -> str:
    text = getattr(value, "__name__", None) or repr(value)
    return text[:40].replace(" ", "")


@contextlib.contextmanager
def _quiet():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def refusals() -> set[str]:
    lines = REFUSALS.read_text(encoding="utf-8").splitlines() if REFUSALS.exists() else []
    return {ln.split("  #")[0].strip() for ln in lines if ln.strip() and not ln.startswith("#")}


def run(case: Case, seed: int = 0) -> str:
    """"ok", "refused: <message>" (a ValueError/TypeError), "skip: <why>" (PyTorch itself
    refuses the example), or "FAILED: <what>" for a wrong result or an unclear error."""
    import numpy as np
    import torch

    import mlclab

    if case.id in NOTHING_TO_COMPARE:
        return f"skip: {NOTHING_TO_COMPARE[case.id]}"
    tensors = [a for a in case.example_args]
    if not all(isinstance(a, torch.Tensor) for a in tensors):
        return "skip: example arguments that are not tensors"
    try:
        with torch.no_grad():    # on copies: some cases write into their input (hardswish_)
            want = case.model.eval()(*[t.clone() for t in tensors])
            again = case.model.eval()(*[t.clone() for t in tensors])
    except Exception as exc:
        return f"skip: PyTorch refuses the example ({type(exc).__name__})"
    if not all(torch.equal(a, b) for a, b in zip(_flat(want), _flat(again))):
        return "skip: PyTorch's result is random (dropout forced into training mode)"
    try:
        fn = mlclab.from_torch(case.model, *[t.clone() for t in tensors])
        got = fn(*[t.clone().numpy() for t in tensors])
    except (ValueError, TypeError) as exc:
        return f"refused: {str(exc).splitlines()[0][:200]}"
    except Exception as exc:
        return f"FAILED: {type(exc).__name__}: {str(exc)[:200]}"
    flat_want = [w.detach().numpy() for w in _flat(want)]
    flat_got = list(got) if isinstance(got, tuple) else [got]
    if len(flat_got) != len(flat_want):
        return f"FAILED: {len(flat_got)} outputs, PyTorch has {len(flat_want)}"
    for g, w in zip(flat_got, flat_want):
        if np.shape(g) != w.shape or not np.allclose(np.asarray(g, dtype=np.float64),
                                                     w.astype(np.float64), rtol=1e-4,
                                                     atol=1e-4, equal_nan=True):
            return f"FAILED: wrong result on the example (shape {np.shape(g)} vs {w.shape})"
    try:
        report = mlclab.validate(fn, seed=seed)
    except (ValueError, TypeError, IndexError) as exc:
        return f"ok (random inputs refused: {str(exc).splitlines()[0][:120]})"
    except Exception as exc:
        return f"FAILED: validate: {type(exc).__name__}: {str(exc)[:200]}"
    return "ok" if report.ok else "FAILED: wrong result on random inputs"


def _flat(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _flat(item)]
    if isinstance(out, dict):
        return [t for item in out.values() for t in _flat(item)]
    if isinstance(out, (bool, int, float)):         # x.item(): mlclab returns a 0-d array
        return [torch.tensor(out)]
    return []


if __name__ == "__main__":
    only = set(sys.argv[1:])
    for case in collect():
        if only and case.id not in only:
            continue
        print(json.dumps([case.id, run(case)]), flush=True)
