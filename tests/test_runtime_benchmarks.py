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


def test_runs_time_all_but_the_first_call_of_each_turn(monkeypatch):
    import timing

    now = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])
    calls = {"m": 0, "n": 0}

    def side(name):
        def call():
            calls[name] += 1
            # the first call of a turn of three (after the other side's) takes 100 s, the rest 1
            now[0] += 100.0 if calls[name] % 3 == 1 else 1.0
        return call

    medians, k = timing.interleave([side("m"), side("n")], rounds=4, warmup=0, runs=3)
    assert k == 4 and calls == {"m": 12, "n": 12}
    assert medians == [1e3, 1e3]       # ms: the slow first calls were not timed


def test_a_turn_lasts_at_least_turn_s_and_its_later_calls_are_timed(monkeypatch):
    import timing

    now = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(timing.time, "sleep", lambda seconds: None)
    calls = {"m": 0, "n": 0}

    def side(name, seconds):
        def call():
            calls[name] += 1
            now[0] += seconds
        return call

    # m's calls take 10 ms, so a 50 ms turn holds five of them; n's take 60 ms: the turn's
    # three calls already last longer, so n keeps its three
    medians, k = timing.interleave([side("m", 0.010), side("n", 0.060)], rounds=2, warmup=0,
                                   runs=3, settle=0.15, turn_s=0.05)
    assert k == 2 and calls == {"m": 10, "n": 6}
    assert [round(m) for m in medians] == [10, 60]


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


def test_zoo_kernels_sorts_both_runtimes_names_into_the_same_kinds():
    import zoo_kernels

    assert zoo_kernels.kind("fused_conv2d_NCHWc8_add6_relu4") == "conv"
    assert zoo_kernels.kind("Conv /layer1/layer1.0/act1/Relu_output_0_nchwc") == "conv"
    assert zoo_kernels.kind("max_pool2d") == zoo_kernels.kind("MaxPool /maxpool") == "pool"
    assert zoo_kernels.kind("GlobalAveragePool /pool") == "pool"
    assert zoo_kernels.kind("fused_packed_matmul_add") == zoo_kernels.kind("Gemm /fc") == "matmul"
    assert zoo_kernels.kind("te_layout_transform") == zoo_kernels.kind("ReorderOutput x") \
        == "layout"
    assert zoo_kernels.kind("mean") == "other"
    assert zoo_kernels.by_kind([("conv2d_a", 2.0), ("Conv b", 3.0), ("mean", 1.0)]) == \
        {"conv": 5.0, "other": 1.0}


def test_zoo_kernels_takes_each_kernels_fastest_round_after_the_first_ones():
    import pytest
    import zoo_kernels

    slow_start = [[("a", 9.0), ("b", 9.0)]] * zoo_kernels.SKIPPED
    runs = slow_start + [[("a", 3e-6), ("b", 5e-6)], [("a", 1e-6), ("b", 7e-6)]]
    assert zoo_kernels.fastest(runs) == [("a", pytest.approx(1.0)), ("b", pytest.approx(5.0))]
    with pytest.raises(RuntimeError, match="changed"):
        zoo_kernels.fastest(slow_start + [[("a", 1.0)], [("b", 1.0)]])


def test_zoo_kernels_report_pairs_convolutions_only_when_the_counts_match():
    import zoo_kernels

    result = {"model": "m", "threads": 1, "load": 0.5,
              "mlclab": [("fused_conv2d_a", 110.0), ("max_pool2d", 20.0),
                         ("fused_conv2d_b", 90.0)],
              "onnxruntime": [("Conv /a", 100.0), ("MaxPool /p", 10.0), ("Conv /b", 100.0)]}
    text = zoo_kernels.report(result)
    assert "mlclab's kernels 220 us, ONNX Runtime's operators 210 us (1.048x)" in text
    rows = [line.split() for line in text.splitlines()]
    assert ["conv", "200", "200", "+0", "us"] in rows and ["pool", "20", "10", "+10", "us"] in rows
    assert "     110      100     +10  fused_conv2d_a" in text
    assert "      90      100     -10  fused_conv2d_b" in text
    result["onnxruntime"] = result["onnxruntime"][:2]
    assert "(2 convolution kernels against 1 Conv operators: not paired)" in \
        zoo_kernels.report(result)


def test_zoo_kernels_turns_last_their_time_and_time_all_but_their_first_call():
    import time

    import zoo_kernels

    start = time.perf_counter()
    calls = list(zoo_kernels.turn(0.02))
    assert time.perf_counter() - start >= 0.02
    assert calls == list(range(len(calls))) and len(calls) >= 2
    assert list(zoo_kernels.turn(0.0)) == [0, 1]   # one untimed call and one timed, at least


def test_zoo_kernels_turns_start_after_the_zoos_idle(monkeypatch):
    """Each runtime's turn starts after ``zoo.SETTLE_S`` idle (the other runtime's workers
    stop spinning), then makes at least two calls and lasts at least ``seconds``."""
    import time

    import zoo
    import zoo_kernels

    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    assert list(zoo_kernels.turn(seconds=0.0)) == [0, 1]
    assert slept == [zoo.SETTLE_S] and zoo.SETTLE_S > 0
