"""Run TVM's importer cases through ``mlclab.from_torch`` and classify each one.

A worker is a long-lived process: it imports torch, mlclab and the cases once, then answers
one JSON line per case id it reads on stdin (``runner.py`` drives it and survives its crashes).
To look at one case by hand, with everything TVM prints:

    PYTHONPATH=. python -m tests.tvm_importer.worker --case 'test_selu:0'
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import signal
import sys
import traceback

import numpy as np

#: Signs that TVM's internals reached the student's message.
_LEAKS = re.compile(r"Check failed|Traceback|InternalError|tvm\.|\.cc:|\bffi\b|<string>, line")
#: Signs that a message names what it refuses: the operator, the module, or forward's output.
_NAMES_OPERATOR = re.compile(r"aten\.|torch\.|operator|\bmodule\b|\bforward\b")
#: Operators whose outputs are random or uninitialised: only shapes and dtypes can be compared.
_NONDETERMINISTIC = re.compile(r"rand|empty|exponential|bernoulli|normal|uniform|dropout")


def classify_error(exc: BaseException, phase: str) -> dict:
    """``refusal`` for a clear ValueError/TypeError naming the operator, else ``unclear``."""
    message = str(exc).strip()
    first = message.splitlines()[0] if message else ""
    clear = (type(exc) in (ValueError, TypeError)
             or type(exc).__name__ in ("UnsupportedModel", "IndexOutOfRange")) \
        and not _LEAKS.search(message) and _NAMES_OPERATOR.search(message)
    return {"outcome": "refusal" if clear else "unclear", "phase": phase,
            "error": f"{type(exc).__name__}: {first[:300]}"}


def _clone(args):
    import torch
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _outputs(value) -> list:
    """Every output as a numpy array (None kept), whatever nesting PyTorch or mlclab used."""
    import torch
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _outputs(v)]
    if value is None:
        return [None]
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.layout != torch.strided:
            value = value.to_dense()
        if value.dtype == torch.bfloat16:
            value = value.float()
        return [value.numpy()]
    return [np.asarray(value)]


def _torch_run(module, args):
    import torch
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            return _outputs(module(*_clone(args)))
    finally:
        module.train(was_training)


def compare(expected: list, got: list, shapes_only: bool):
    """None if ``got`` matches ``expected``, else what differs."""
    if len(expected) != len(got):
        return f"{len(got)} outputs, PyTorch gives {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is None or g is None:
            if e is not g:
                return f"output {i}: {g!r:.60} where PyTorch gives {e!r:.60}"
            continue
        g = np.asarray(g)
        if e.shape != g.shape:
            return f"output {i}: shape {g.shape}, PyTorch {e.shape}"
        if shapes_only:
            continue
        if e.dtype.kind in "biu" and g.dtype.kind in "biu":
            ok = np.array_equal(e, g)
        else:
            tol = 1e-2 if e.dtype == np.float16 or g.dtype == np.float16 else 1e-4
            ok = np.allclose(e.astype(np.float64), g.astype(np.float64), rtol=tol, atol=tol,
                             equal_nan=True)
        if not ok:
            diff = np.abs(e.astype(np.float64) - g.astype(np.float64))
            return (f"output {i} ({e.dtype}{list(e.shape)}): max |diff| {np.nanmax(diff):.3g}; "
                    f"got {g.ravel()[:4]} PyTorch {e.ravel()[:4]}")
    return None


def fresh_inputs(example, seed: int):
    """New inputs of the example's shapes and dtypes: floats normal, integers in the example's
    own range (so indices stay valid), booleans random; sparse and non-tensor ones unchanged."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    out = []
    for a in example:
        if not isinstance(a, torch.Tensor) or a.layout != torch.strided or a.numel() == 0:
            out.append(a)
        elif a.dtype == torch.bool:
            out.append(torch.randint(0, 2, a.shape, generator=gen).bool())
        elif a.dtype.is_floating_point:
            out.append(torch.randn(a.shape, generator=gen).to(a.dtype))
        elif a.dtype.is_complex:
            out.append(a.clone())
        else:
            lo, hi = int(a.min()), int(a.max())
            out.append(torch.randint(lo, hi + 1, a.shape, generator=gen, dtype=a.dtype))
    return tuple(out)


def _duplicate_writes(source: str, example) -> bool:
    """``index_put_(..., accumulate=False)`` with a repeated index: PyTorch leaves which value
    lands undefined (TVM's test feeds 128 random indices into 64 slots)."""
    import torch
    return "accumulate=False" in source and any(
        isinstance(a, torch.Tensor) and a.dtype in (torch.int32, torch.int64) and a.numel() > 1
        and torch.unique(a).numel() < a.numel() for a in example)


def _random_outputs(module, example) -> bool:
    try:
        source = inspect.getsource(type(module))
    except (OSError, TypeError):
        source = ""
    return bool(_NONDETERMINISTIC.search(source)) or _duplicate_writes(source, example) or any(
        compare(a, b, False)
        for a, b in [(_torch_run(module, example), _torch_run(module, example))])


def _both_refuse(module, example, torch_error: Exception) -> dict:
    """PyTorch refuses the example (TVM's test only reads the IR, never runs it): mlclab must
    refuse it too, clearly, at import or at the call -- never compute an answer for it."""
    import mlclab
    said = f"PyTorch refuses the example: {type(torch_error).__name__}: {torch_error}"[:300]
    try:
        fn = mlclab.from_torch(module, *_clone(example))
        fn(*_clone(example))
    except Exception as exc:                       # noqa: BLE001 - classifying is the job
        result = classify_error(exc, "import or call on the example PyTorch refuses")
        if result["outcome"] == "refusal":
            return {"outcome": "both refuse", "error": f"{result['error']}  ({said})"[:600]}
        return result
    return {"outcome": "wrong", "phase": "call on the example PyTorch refuses",
            "error": f"mlclab computes an answer where {said}"}


def run_case(module, example) -> dict:
    """The case's outcome: pass, both refuse (PyTorch refuses the example and mlclab clearly
    does too), refusal, unclear, wrong."""
    import mlclab
    try:
        expected = _torch_run(module, example)
    except Exception as exc:                       # noqa: BLE001 - PyTorch's refusal
        return _both_refuse(module, example, exc)
    shapes_only = _random_outputs(module, example)
    try:
        fn = mlclab.from_torch(module, *_clone(example))
    except Exception as exc:                       # noqa: BLE001 - classifying is the job
        return classify_error(exc, "import")
    checked = ["example"]
    for label, args in (("example", example), ("fresh inputs", fresh_inputs(example, 1))):
        if label != "example":
            try:
                expected = _torch_run(module, args)
            except Exception:                      # noqa: BLE001 - PyTorch refuses: skip these
                continue
            checked.append(label)
        try:
            got = _outputs(fn(*_clone(args)))
        except Exception as exc:                   # noqa: BLE001
            return classify_error(exc, f"call on {label}")
        wrong = compare(expected, got, shapes_only)
        if wrong:
            return {"outcome": "wrong", "phase": f"call on {label}", "error": wrong}
    return {"outcome": "pass", "checked": checked, "shapes_only": shapes_only}


def _load_cases() -> dict:
    """``{case_id: (module, example)}`` from ``tests.tvm_importer.cases`` (or the module named
    by ``MLCLAB_TVM_CASES``, which the harness's own tests use for cases that crash or hang)."""
    import importlib

    import mlclab
    mlclab.import_torchvision()
    cases = importlib.import_module(os.environ.get("MLCLAB_TVM_CASES", "tests.tvm_importer.cases"))
    return {case_id: (module, example) for case_id, module, example, _ in cases.all_cases()}


def serve() -> None:
    """Answer case ids on stdin with JSON lines on the real stdout (TVM's prints go to stderr)."""
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import warnings
    warnings.simplefilter("ignore")
    table = _load_cases()
    import tvm  # noqa: F401 - loaded before the handlers are reset, so its own stay reset
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        # A crash kills the worker at once (the runner names the signal) instead of spending
        # a minute symbolising a stack trace nobody reads.
        signal.signal(sig, signal.SIG_DFL)
    reply.write(json.dumps({"ready": len(table)}) + "\n")
    reply.flush()
    for line in sys.stdin:
        case_id = line.strip()
        try:
            result = run_case(*table[case_id])
        except BaseException as exc:               # noqa: BLE001 - e.g. an error in our harness
            result = {"outcome": "unclear", "phase": "harness",
                      "error": f"{type(exc).__name__}: {exc}"[:300],
                      "trace": traceback.format_exc()[-2000:]}
        result["id"] = case_id
        reply.write(json.dumps(result) + "\n")
        reply.flush()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="run this one case id and print its outcome")
    ns = parser.parse_args(argv)
    if ns.case is None:
        serve()
        return 0
    table = _load_cases()
    print(json.dumps(run_case(*table[ns.case]), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
