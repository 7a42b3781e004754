"""Apache TVM's own importer tests, run through ``mlclab.from_torch`` (issue 23).

tests/tvm_importer/ vendors TVM's test_frontend_from_exported_program.py (source commit and
licence in its header); ``cases.collect()`` runs its test functions with ``verify_model``
recording each (module, example inputs). Each case is imported by mlclab and compared with
PyTorch on the example and on ``validate``'s random inputs.

``expected_refusals.txt`` lists the cases mlclab refuses with a clear ValueError (what TVM
cannot express); ``known_failures.txt`` the ones that still fail otherwise. Both can only
shrink: a listed case that starts working fails its test until it is removed from the list.
The default run takes every ``SAMPLE``-th case and every listed one; ``-m slow`` runs all.
"""
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent / "tvm_importer"
sys.path.insert(0, str(HERE))
import cases  # noqa: E402

SAMPLE = 8
IDS = (HERE / "case_ids.txt").read_text(encoding="utf-8").split("\n")
IDS = [i for i in IDS if i]
REFUSED = cases.refusals()
FAILING = {ln.split("  #")[0].strip() for ln in
           (HERE / "known_failures.txt").read_text(encoding="utf-8").splitlines()
           if ln.strip() and not ln.startswith("#")}


def _param(n, case_id):
    listed = case_id in REFUSED or case_id in FAILING
    marks = [] if listed or n % SAMPLE == 0 else [pytest.mark.slow]
    return pytest.param(case_id, marks=marks, id=case_id)


@pytest.fixture(scope="module")
def suite():
    return {case.id: case for case in cases.collect()}


def test_the_case_list_is_the_suites(suite):
    assert list(suite) == IDS, "regenerate tests/tvm_importer/case_ids.txt (see cases.py)"
    assert REFUSED <= set(IDS) and FAILING <= set(IDS)


@pytest.mark.parametrize("case_id", [_param(n, i) for n, i in enumerate(IDS)])
def test_tvm_importer_case(suite, case_id):
    outcome = cases.run(suite[case_id])
    if case_id in REFUSED:
        assert outcome.startswith("refused: "), \
            f"{outcome}: remove {case_id} from expected_refusals.txt"
    elif case_id in FAILING:
        assert outcome.startswith("FAILED"), f"{outcome}: remove {case_id} from known_failures.txt"
    else:
        assert outcome.startswith(("ok", "skip: ")), outcome
