"""Timing that survives a busy machine: repeat until the spread settles, and say "faster",
"slower" or "within noise" from the measurement itself, never from what a lesson expects.

A lesson's text can then explain the result either way; the verdict it prints is computed here.

Two things measured one after the other see different stretches of machine load: lesson 01
said "7.18x faster" in one run and "1.68x slower" in another. So :func:`claim`, given two
:func:`measure` results, measures them again as *interleaved pairs* (A B, B A, A B, ...: both
sides of a pair see the same moment), takes the median of the per-pair ratios and a
distribution-free 95% interval around it (order statistics), and calls a side faster only when
the whole interval clears the margin. The margin is the noise floor on a quiet machine and
grows with how busy it is while measuring (runnable threads per CPU, from ``/proc/stat``): on
a machine with 2.5 runnable threads per CPU, the threads of a parallel kernel wait for each
other behind other processes and a sequential one does not, so a difference smaller than that
is not called. A busy machine can then turn a verdict into "within noise", never into the
opposite one (tests/test_timing.py holds it to that under an artificial CPU hog).
"""
from __future__ import annotations

import math
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..runtime import give_back_memory

NOISE_FLOOR = 0.05     # two medians closer than this are "within noise" even on a quiet machine
MIN_PAIRS, MAX_PAIRS = 9, 200
PAIR_BUDGET_S = 1.5    # a claim's interleaved pairs stop here (after MIN_PAIRS)
Z95 = 1.96


@dataclass
class Timing:
    """Seconds per call over ``len(times)`` calls; ``spread`` is the interquartile range over
    the median."""

    times: list
    # what was timed, so that claim() can time it again interleaved with the other side
    call: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def median_ms(self) -> float:
        return 1e3 * statistics.median(self.times)

    @property
    def spread(self) -> float:
        q = statistics.quantiles(self.times, n=4) if len(self.times) >= 2 else [self.times[0]] * 3
        return (q[2] - q[0]) / statistics.median(self.times)

    def __str__(self) -> str:
        return f"{self.median_ms:.3g} ms ±{100 * self.spread / 2:.0f}% ({len(self.times)} runs)"


def measure(call: Callable[[], Any], min_repeats: int = 7, max_repeats: int = 60,
            budget_s: float = 1.0, settled: float = 0.10) -> Timing:
    """Call until the interquartile spread is under ``settled`` (after ``min_repeats``), or the
    budget or ``max_repeats`` runs out; the spread then says how far to trust the median."""
    call()                                         # warm-up: first-touch pages, caches, threads
    times: list = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_repeats:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        if len(times) < min_repeats:
            continue
        if Timing(times).spread < settled or time.perf_counter() > deadline:
            break
    give_back_memory()     # what the timed calls' temporaries left in the heap
    return Timing(times, call)


def verdict(new: Timing, old: Timing) -> str:
    """"faster", "slower" or "within noise": ``new`` against ``old``, allowing both spreads."""
    noise = max(NOISE_FLOOR, new.spread, old.spread)
    ratio = old.median_ms / new.median_ms
    if ratio > 1 + noise:
        return "faster"
    if ratio < 1 / (1 + noise):
        return "slower"
    return "within noise"


def runnable_per_cpu() -> float | None:
    """Threads ready to run on this machine per CPU, now (``procs_running`` in ``/proc/stat``
    counts the caller too); None where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running"):
                    return int(line.split()[1]) / (os.cpu_count() or 1)
    except (OSError, ValueError):
        pass
    return None


@dataclass
class Comparison:
    """``new`` against ``old`` timed in interleaved pairs; ``ratios`` are old/new per pair."""

    new: Timing
    old: Timing
    ratios: list
    busy: float | None          # mean runnable threads per CPU while the pairs ran

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def interval(self) -> tuple:
        """A distribution-free 95% interval of the median ratio: order statistics k and
        n - k + 1 of the sorted ratios (the sign test's binomial bound)."""
        ordered, n = sorted(self.ratios), len(self.ratios)
        k = max(0, math.floor((n - Z95 * math.sqrt(n)) / 2) - 1)
        return ordered[k], ordered[n - 1 - k]

    @property
    def margin(self) -> float:
        """How far the interval must be from 1.0x: the noise floor, or the machine's business."""
        return max(1 + NOISE_FLOOR, self.busy or 0.0)

    @property
    def verdict(self) -> str:
        low, high = self.interval
        if low > self.margin:
            return "faster"
        if high < 1 / self.margin:
            return "slower"
        return "within noise"


def compare(new: Callable[[], Any], old: Callable[[], Any], min_pairs: int = MIN_PAIRS,
            max_pairs: int = MAX_PAIRS, budget_s: float = PAIR_BUDGET_S) -> Comparison:
    """Time ``new`` and ``old`` in interleaved pairs (the order alternating, so neither side
    always runs on the other's warm caches) until the budget or ``max_pairs`` runs out, or the
    interval of the ratio is inside +-5% after ``min_pairs``."""
    new(), old()                                   # warm-up
    times = {"new": [], "old": []}
    busy = []
    deadline = time.perf_counter() + budget_s
    for i in range(max_pairs):
        load = runnable_per_cpu()
        if load is not None:
            busy.append(load)
        order = (("new", new), ("old", old)) if i % 2 == 0 else (("old", old), ("new", new))
        for name, call in order:
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
        if i + 1 >= min_pairs:
            result = Comparison(Timing(times["new"], new), Timing(times["old"], old),
                                [o / n for o, n in zip(times["old"], times["new"])],
                                statistics.mean(busy) if busy else None)
            low, high = result.interval
            if time.perf_counter() > deadline or high / low < 1 + NOISE_FLOOR:
                break
    give_back_memory()
    return result


def claim(new_name: str, new: Timing, old_name: str, old: Timing) -> str:
    """One sentence a lesson can print: the verdict with the numbers it rests on.

    Timings from :func:`measure` are timed again in interleaved pairs (:func:`compare`) and
    the verdict comes from the pairs; timings made otherwise are compared by their medians
    and spreads (:func:`verdict`)."""
    if new.call is None or old.call is None:
        return _claim_from_medians(new_name, new, old_name, old)
    # as many pairs as the budget affords, at least 5 (the interval is then min..max)
    affordable = PAIR_BUDGET_S / max(1e-9, sum(statistics.median(t.times) for t in (new, old)))
    pairs = compare(new.call, old.call, min_pairs=max(5, min(MIN_PAIRS, int(affordable))))
    word, ratio = pairs.verdict, pairs.ratio
    low, high = pairs.interval
    busy = "" if pairs.busy is None else f"; {pairs.busy:.1f} runnable threads per CPU"
    basis = (f"{new} vs {old}; {len(pairs.ratios)} interleaved pairs: ratio {ratio:.2f}x, "
             f"95% interval {low:.2f}-{high:.2f}x{busy}")
    if word == "within noise":
        why = ("the machine is busy, and a difference under " f"{pairs.margin:.1f}x is not called"
               if pairs.margin > 1 + NOISE_FLOOR else "the interval reaches within 5% of 1x")
        return (f"{new_name} and {old_name} are within noise of each other here ({basis}: "
                f"{why}).")
    factor = ratio if word == "faster" else 1 / ratio
    return f"{new_name} is {factor:.2f}x {word} than {old_name} here ({basis})."


def _claim_from_medians(new_name: str, new: Timing, old_name: str, old: Timing) -> str:
    word = verdict(new, old)
    ratio = old.median_ms / new.median_ms
    if word == "within noise":
        return (f"{new_name} and {old_name} are within noise of each other here "
                f"({new} vs {old}: a {ratio:.2f}x ratio is inside the spread).")
    factor = ratio if word == "faster" else 1 / ratio
    return f"{new_name} is {factor:.2f}x {word} than {old_name} here ({new} vs {old})."
