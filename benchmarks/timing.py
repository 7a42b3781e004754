"""Interleaved timing: mlclab and numpy measured side by side in the same run.

This machine is shared and noisy (one reading of the same kernel was 15x off), so a ratio is
only meaningful when both sides see the same conditions: each round times one call of
each, alternating which goes first, and the ratio is taken between the two medians.
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
        return (f"{self.name:<34} {self.mlclab_ms:>10.3f} {self.numpy_ms:>10.3f} "
                f"{self.ratio:>8.2f}x  {goal:<8} {self.verdict}")


HEADER = f"{'workload':<34} {'mlclab ms':>10} {'numpy ms':>10} {'ratio':>9}  goal"


def compare(name, mlclab_call, numpy_call, *, goal=None, rounds=41, warmup=3,
            min_seconds=0.0) -> Comparison:
    """Median wall time of ``mlclab_call()`` and ``numpy_call()``, interleaved.

    ``rounds`` is raised until the measurement took at least ``min_seconds``, so tiny
    kernels get enough samples.
    """
    for _ in range(warmup):
        mlclab_call()
        numpy_call()
    ours, theirs = [], []
    clock = time.perf_counter
    started = clock()
    k = 0
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection landing inside one side's timing is noise, not cost
    try:
        while k < rounds or clock() - started < min_seconds:
            pair = ((mlclab_call, ours), (numpy_call, theirs))
            for call, sink in (pair if k % 2 == 0 else pair[::-1]):
                t0 = clock()
                call()
                sink.append(clock() - t0)
            k += 1
    finally:
        if gc_was_enabled:
            gc.enable()
    return Comparison(name, statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3,
                      k, goal)
