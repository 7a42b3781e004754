"""Timing verdicts that do not flip with load (issue 29): claim() times both sides again in
interleaved pairs and calls a side faster only when the 95% interval of the ratio clears a
margin that grows with how busy the machine is. A busy machine may turn a verdict into "within
noise", never into the opposite one."""
import contextlib
import os
import subprocess
import sys

import pytest

from mlclab.course import timing
from mlclab.course.timing import Comparison, Timing, claim, compare, measure


def pairs(ratios, busy=None):
    return Comparison(Timing([1.0]), Timing([1.0]), list(ratios), busy)


def test_the_interval_is_the_sign_tests_order_statistics():
    ratios = [1.0 + i / 100 for i in range(20)]          # 1.00 .. 1.19
    low, high = pairs(ratios).interval
    assert (low, high) == (ratios[4], ratios[15])        # k = 5 of 20 (1-based)
    assert pairs(ratios[:9]).interval == (ratios[0], ratios[8])   # few pairs: min..max


@pytest.mark.parametrize("ratios,busy,word", [
    ([2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02, 1.98, 2.01], None, "faster"),
    ([0.5, 0.52, 0.48, 0.5, 0.51, 0.49, 0.5, 0.5, 0.5], 0.5, "slower"),
    # one wild pair does not move a median's interval much; the rest straddles 1x
    ([1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 9.0, 1.0, 1.0], None, "within noise"),
    # a 2x difference on a machine with 2.5 runnable threads per CPU is not called
    ([2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02, 1.98, 2.01], 2.5, "within noise"),
    ([0.2, 0.21, 0.19, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2], 2.5, "slower"),
    # the interval must clear the margin, not just the median
    ([1.1, 1.2, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], None, "faster"),
    ([1.01, 1.2, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], None, "within noise"),
])
def test_verdicts_come_from_the_interval_and_the_margin(ratios, busy, word):
    assert pairs(ratios, busy).verdict == word


def work(n):
    def run():
        total = 0
        for i in range(n):
            total += i * i
        return total
    return run


HOGS = 4


@contextlib.contextmanager
def cpu_hog(count=HOGS):
    """``count`` processes spinning on a CPU each, as four busy kernels would; entered only
    once every one of them says it spins (a fixed sleep was too short on a loaded machine,
    where starting Python takes seconds)."""
    spin = "import sys; print('spinning', flush=True)\nwhile True: pass"
    procs = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
             for _ in range(count)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "spinning", "a CPU hog did not start"
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_busy_machine_never_reverses_a_verdict():
    n = 20_000                                           # about a millisecond a call
    cases = {"6x the work": (work(6 * n), work(n)), "the same work": (work(n), work(n)),
             "a sixth of the work": (work(n), work(6 * n))}
    idle = {name: compare(*calls) for name, calls in cases.items()}
    with cpu_hog():
        loaded = {name: compare(*calls) for name, calls in cases.items()}
    said = {name: (idle[name].verdict, loaded[name].verdict, round(idle[name].busy or 0, 1),
                   round(loaded[name].busy or 0, 1)) for name in cases}
    # The opposite of the truth, idle or loaded.  (Not "loaded says what idle said or within
    # noise": on a machine other work makes busy, idle may say "within noise" and the loaded
    # run "slower" for 6x the work -- the right direction, not a reversal.)
    wrong = {"6x the work": {"faster"}, "the same work": {"faster", "slower"},
             "a sixth of the work": {"slower"}}
    for name in cases:
        assert idle[name].verdict not in wrong[name], said
        assert loaded[name].verdict not in wrong[name], said
        if idle[name].verdict != "within noise":           # and never against idle's verdict
            assert loaded[name].verdict in (idle[name].verdict, "within noise"), said
    if (idle["6x the work"].busy or 0) < 3:               # a quiet enough machine calls it
        assert idle["6x the work"].verdict == "slower", said
    # The busy reading counts the hogs: every sample saw at least them and this process
    # runnable.  (Compared with the idle reading instead, this failed when other work on a
    # shared machine ended while the hogs ran.)
    for name in cases:
        assert loaded[name].busy >= (HOGS + 1) / (os.cpu_count() or 1), said


def test_claim_times_measured_calls_again_in_pairs():
    fast, slow = measure(work(5_000), budget_s=0.2), measure(work(30_000), budget_s=0.2)
    assert fast.call is not None
    said = claim("fast", fast, "slow", slow)
    assert "interleaved pairs" in said and "95% interval" in said, said
    assert said.startswith(("fast is", "fast and slow are within noise")), said
    assert " slower than" not in said, said
    # Timings made by hand (no call to repeat) are compared by medians and spreads
    assert claim("a", Timing([1.0, 1.0, 1.0]), "b", Timing([2.0, 2.0, 2.0])).startswith(
        "a is 2.00x faster than b here")


def test_the_busy_reading_is_runnable_threads_per_cpu():
    busy = timing.runnable_per_cpu()
    assert busy is not None and busy >= 1 / (os.cpu_count() or 1)
