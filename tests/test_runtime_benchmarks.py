"""The benchmark harness itself (benchmarks/timing.py): interleaving and the verdicts.
No timings are asserted here; the figures live in benchmarks/."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from timing import Comparison, compare  # noqa: E402


def test_compare_alternates_which_side_goes_first():
    order = []
    result = compare("x", lambda: order.append("m"), lambda: order.append("n"), rounds=4, warmup=0)
    assert order == ["m", "n", "n", "m", "m", "n", "n", "m"]
    assert result.rounds == 4 and result.mlclab_ms >= 0 and result.numpy_ms >= 0


def test_verdict_compares_the_ratio_of_medians_with_the_goal():
    assert Comparison("a", 1.0, 2.0, 5, goal=0.5).verdict == "ok"
    assert Comparison("a", 1.1, 2.0, 5, goal=0.5).verdict == "MISSED"
    assert Comparison("a", 3.0, 2.0, 5).verdict == ""
    assert "1.50x" in Comparison("a", 3.0, 2.0, 5).row()


def test_zoo_summary_names_who_meets_the_onnx_runtime_goal_and_who_misses_it():
    import zoo

    results = [
        {"model": "fast", "threads": 1, "load": 1.0, "ms": {"mlclab": 1.0, "onnxruntime": 2.0}},
        {"model": "fast", "threads": 2, "load": 1.0, "ms": {"mlclab": 1.0, "onnxruntime": 1.0}},
        {"model": "slow", "threads": 1, "load": 2.5, "ms": {"mlclab": 1.0, "onnxruntime": 2.0}},
        {"model": "slow", "threads": 2, "load": 3.0, "ms": {"mlclab": 3.0, "onnxruntime": 2.0}},
        {"model": "no-ort", "threads": 1, "load": 1.0, "ms": {"mlclab": 1.0}},
        {"model": "broken", "threads": 1, "error": "import fails"},
    ]
    met, missed = zoo.ort_summary(results).splitlines()
    assert met.endswith(": fast")
    assert missed == "above it: slow 1.50x at 2 threads (load 3.0)"
