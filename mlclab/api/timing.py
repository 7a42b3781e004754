"""A quick time per call for the validation report: the order of magnitude, not a benchmark."""
from __future__ import annotations

import time
from typing import Any, Callable


def time_per_call(call: Callable[[], Any], budget_s: float = 0.05) -> float:
    """Seconds per call: grow the batch until it takes ``budget_s``, best of three batches.

    Small on purpose: it runs inside a notebook cell. It gives the order of magnitude a
    student compares (microseconds vs milliseconds), not a benchmark.
    """
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= budget_s or n >= 1 << 16:
            break
        # Aim at the budget from what this batch took, growing at most tenfold per step.
        n = min(n * 10, max(n * 2, int(n * budget_s / max(elapsed, 1e-9)) + 1))
    best = elapsed / n
    for _ in range(2):
        start = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - start) / n)
    return best
