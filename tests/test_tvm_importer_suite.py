"""Apache TVM's own importer tests, run through ``mlclab.from_torch``.

TVM's tests/python/relax/test_frontend_from_exported_program.py checks TVM's importer on 397
(PyTorch module, example inputs) cases; ``tests/tvm_importer/cases.py`` vendors them (see its
README). Here each case is imported with ``mlclab.from_torch(module, *example)`` and called on
the example and on fresh inputs of the same shapes and dtypes; the outputs must match the
module's own. Every case runs in a crash-isolated worker process (``tests/tvm_importer/
runner.py``): a segfault fails that case, a hang times out.

What each case may do:
* pass -- or, where PyTorch itself refuses the example inputs (18 cases: TVM's test only reads
  the IR), refuse them too with a clear error, never compute an answer for them;
* refuse with a clear ``ValueError``/``TypeError`` naming the operator -- only if it is in
  ``tests/tvm_importer/expected_refusals.txt``, a list that can only shrink: a listed case
  that passes fails here until it is removed from the list;
* never give a wrong result, an unclear error (TVM's internals, no operator named), a crash or
  a hang.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.tvm_importer import runner

CASES_FILE = Path(runner.__file__).with_name("cases.py")
REFUSALS = runner.read_refusals()


def _case_ids() -> list:
    from tests.tvm_importer.worker import _load_cases
    return list(_load_cases())


CASE_IDS = _case_ids()


@pytest.fixture(scope="module")
def results(request):
    """Every selected case's outcome, run in two worker processes at the first test."""
    selected = [item.callspec.params["case_id"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_tvm_importer_case"]
    return runner.run_cases(selected, workers=2)


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_tvm_importer_case(case_id, results):
    result = results[case_id]
    outcome, error = result["outcome"], result.get("error", "")
    where = f"{result.get('phase', '')}: {error}" if error else ""
    if outcome == "pass":
        assert case_id not in REFUSALS, (
            f"{case_id} passes now: remove it from tests/tvm_importer/expected_refusals.txt")
    elif outcome == "both refuse":
        pass                # PyTorch refuses the example, and mlclab says so clearly
    elif outcome == "refusal":
        assert case_id in REFUSALS, (
            f"{case_id} is refused but not in expected_refusals.txt ({where}); make it pass, or "
            f"if TVM cannot express it, list it with its reason")
    else:
        pytest.fail(f"{case_id}: {outcome}: {where}  (reproduce: PYTHONPATH=. python -m "
                    f"tests.tvm_importer.worker --case '{case_id}')", pytrace=False)


def test_the_refusals_list_names_only_real_cases():
    unknown = sorted(set(REFUSALS) - set(CASE_IDS))
    assert not unknown, f"expected_refusals.txt lists cases that do not exist: {unknown}"
    assert all(REFUSALS.values()), "every listed refusal needs its one-line reason"


def test_the_vendored_cases_are_all_of_tvms_and_need_no_tvm():
    """397 cases from TVM's 171 test functions, with no trace of TVM's test utilities."""
    tree = ast.parse(CASES_FILE.read_text())
    imported = {(a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    assert "tvm" not in imported
    tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert len(tests) == 171
    assert len(CASE_IDS) == len(set(CASE_IDS)) == 397


# --------------------------------------------------------------------------- the harness itself
_HARNESS_CASES = '''
import os, signal, time
import torch

class Segfaults(torch.nn.Module):
    def forward(self, x):
        os.kill(os.getpid(), signal.SIGSEGV)

class Hangs(torch.nn.Module):
    def forward(self, x):
        time.sleep(600)

class DiffersWhenExported(torch.nn.Module):   # torch.export sees x * 3, PyTorch gives x * 2
    def forward(self, x):
        return x * 3 if torch.compiler.is_exporting() else x * 2

class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2

class RefusedOnlyByPyTorch(torch.nn.Module):  # PyTorch raises; the exported graph computes
    def forward(self, x):
        if not torch.compiler.is_exporting():
            raise RuntimeError("refused in eager mode")
        return x * 2

class NotOnFloats(torch.nn.Module):           # TVM's own case: PyTorch and TVM both refuse
    def forward(self, x):
        return torch.bitwise_not(x)

def all_cases():
    x = (torch.arange(4.0),)
    return [("segfaults", Segfaults(), x, None), ("hangs", Hangs(), x, None),
            ("wrong", DiffersWhenExported(), x, None), ("doubles", Doubles(), x, None),
            ("computes", RefusedOnlyByPyTorch(), x, None), ("refused", NotOnFloats(), x, None)]
'''


def test_a_crash_or_hang_fails_its_case_only_and_a_wrong_result_is_caught(tmp_path, monkeypatch):
    (tmp_path / "harness_cases.py").write_text(_HARNESS_CASES)
    monkeypatch.setenv("MLCLAB_TVM_CASES", "harness_cases")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    # One worker, in this order: the hang must be killed and a new worker start for the crash.
    got = runner.run_cases(["wrong", "doubles", "computes", "refused", "hangs", "segfaults"],
                           workers=1, timeout=15)
    assert {c: r["outcome"] for c, r in got.items()} == {
        "segfaults": "crash", "hangs": "hang", "wrong": "wrong", "doubles": "pass",
        "computes": "wrong", "refused": "both refuse"}
    assert "SIGSEGV" in got["segfaults"]["error"]
    assert "mlclab computes an answer where PyTorch refuses" in got["computes"]["error"]
    refused = got["refused"]["error"]
    assert "bitwise_not" in refused and "Check failed" not in refused


@pytest.mark.parametrize("exc, outcome", [
    (ValueError("from_torch(): aten.foo (in module 'block') is not supported"), "refusal"),
    (ValueError("<string>, line 1: TVM could not compile this program: Check failed: x"),
     "unclear"),
    (ValueError("something went wrong"), "unclear"),         # names no operator
    (RuntimeError("aten.foo failed"), "unclear"),             # not a refusal's type
])
def test_only_a_clear_error_naming_the_operator_counts_as_a_refusal(exc, outcome):
    from tests.tvm_importer.worker import classify_error
    assert classify_error(exc, "import")["outcome"] == outcome
