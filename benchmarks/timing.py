"""Interleaved timing: mlclab, numpy (and PyTorch) measured side by side in the same run.

This machine is shared and noisy (one reading of the same kernel was 15x off), so a ratio is
only meaningful when every side sees the same conditions: each round times one call of
each, rotating which goes first, and ratios are taken between the medians.  (farm-bench
times whole processes; these figures are single calls inside one, so they are timed here.)
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass


@dataclass
class Comparison:
    name: str
    mlclab_ms: float
    numpy_ms: float
    rounds: int
    goal: float | None = None  # the largest acceptable mlclab/numpy ratio, if any
    torch_ms: float | None = None  # PyTorch eager on the same work, when it was measured

    @property
    def ratio(self) -> float:
        return self.mlclab_ms / self.numpy_ms

    @property
    def verdict(self) -> str:
        if self.goal is None:
            return ""
        return "ok" if self.ratio <= self.goal else "MISSED"

    def row(self) -> str:
        goal = f"<= {self.goal:g}x" if self.goal is not None else ""
        if self.torch_ms is None:
            torch = f"{'-':>10} {'-':>9}"
        else:
            torch = f"{self.torch_ms:>10.3f} {self.mlclab_ms / self.torch_ms:>8.2f}x"
        return (f"{self.name:<34} {self.mlclab_ms:>10.3f} {self.numpy_ms:>10.3f} {torch} "
                f"{self.ratio:>8.2f}x  {goal:<8} {self.verdict}")


HEADER = (f"{'workload':<34} {'mlclab ms':>10} {'numpy ms':>10} {'torch ms':>10} "
          f"{'vs torch':>9} {'vs numpy':>9}  goal")


# Idle before a runtime's turn, so that the previous runtime's workers have stopped
# spinning (ONNX Runtime's spin ~30 ms after a run, OpenBLAS's ~100 ms after a BLAS call).
SETTLE_S = 0.15


def interleave(calls, *, rounds=41, warmup=3, min_seconds=0.0, runs=1,
               settle=0.0, turn_s=0.0) -> tuple[list, int]:
    """The median wall time in ms of each of ``calls``, timed one call each per round with
    the order rotating round by round (two calls: AB, BA, AB, ...), and the rounds run.
    ``rounds`` is raised until the measurement took at least ``min_seconds``.

    With ``runs`` > 1 each turn calls its side ``runs`` times in a row and times all but
    the first. Runtimes with a thread pool keep their workers spinning after a call (ONNX
    Runtime's ~30 ms after a run, OpenBLAS's ~100 ms after a BLAS call, measured here:
    docs/performance.md, section 4), so the call that follows another runtime's shares a
    core with that runtime's spinning worker -- which a program running one model never
    does. The first call of a turn absorbs that, and the other side's data in the caches.
    A spin longer than a call (ONNX Runtime's 30 ms against a 4 ms model) outlasts it:
    ``settle`` seconds of sleep before each turn let every pool go idle first.

    A turn also lasts at least ``turn_s`` seconds (more calls, all but the first timed). On
    this VM a 2-thread call right after an idle stretch of 20 ms or more ran at about its
    1-thread time for the next few milliseconds (SqueezeNet 2.7 ms against 1.8 ms in a
    stream: docs/performance.md, section 8), and turns of three short calls after 0.15 s
    idle kept the machine 92 % idle: each runtime is timed once it runs steadily."""
    for _ in range(warmup):
        for call in calls:
            call()
    samples = [[] for _ in calls]
    order = list(range(len(calls)))
    clock = time.perf_counter
    started = clock()
    k = 0
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection landing inside one side's timing is noise, not cost
    try:
        while k < rounds or clock() - started < min_seconds:
            turn = order if k % 2 == 0 else order[::-1]
            if len(calls) > 2:  # rotate too, so no call always follows the same one
                shift = (k // 2) % len(calls)
                turn = turn[shift:] + turn[:shift]
            for i in turn:
                if settle:
                    time.sleep(settle)
                run, turn_started = 0, clock()
                while run < runs or clock() - turn_started < turn_s:
                    t0 = clock()
                    calls[i]()
                    if run or runs == 1:
                        samples[i].append(clock() - t0)
                    run += 1
            k += 1
    finally:
        if gc_was_enabled:
            gc.enable()
    return [statistics.median(s) * 1e3 for s in samples], k


def compare(name, mlclab_call, numpy_call, *, torch_call=None, goal=None, rounds=41,
            warmup=3, min_seconds=0.0, runs=1) -> Comparison:
    """Median wall time of ``mlclab_call()``, ``numpy_call()`` (and ``torch_call()``),
    interleaved (see ``interleave``)."""
    calls = [mlclab_call, numpy_call] + ([torch_call] if torch_call else [])
    medians, k = interleave(calls, rounds=rounds, warmup=warmup, min_seconds=min_seconds,
                            runs=runs)
    return Comparison(name, medians[0], medians[1], k, goal,
                      medians[2] if torch_call else None)
