"""Timing that survives a busy machine: repeat until the spread settles, and say "faster",
"slower" or "within noise" from the measurement itself, never from what a lesson expects.

A lesson's text can then explain the result either way; the verdict it prints is computed here.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

NOISE_FLOOR = 0.05     # two medians closer than this are "within noise" even on a quiet machine


@dataclass
class Timing:
    """Seconds per call over ``len(times)`` calls; ``spread`` is the interquartile range over the median."""

    times: list

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
        if len(times) >= min_repeats and (Timing(times).spread < settled or time.perf_counter() > deadline):
            break
    return Timing(times)


def verdict(new: Timing, old: Timing) -> str:
    """"faster", "slower" or "within noise": ``new`` against ``old``, allowing both spreads."""
    noise = max(NOISE_FLOOR, new.spread, old.spread)
    ratio = old.median_ms / new.median_ms
    if ratio > 1 + noise:
        return "faster"
    if ratio < 1 / (1 + noise):
        return "slower"
    return "within noise"


def claim(new_name: str, new: Timing, old_name: str, old: Timing) -> str:
    """One sentence a lesson can print: the verdict with the numbers it rests on."""
    word = verdict(new, old)
    ratio = old.median_ms / new.median_ms
    if word == "within noise":
        return (f"{new_name} and {old_name} are within noise of each other here "
                f"({new} vs {old}: a {ratio:.2f}x ratio is inside the spread).")
    factor = ratio if word == "faster" else 1 / ratio
    return f"{new_name} is {factor:.2f}x {word} than {old_name} here ({new} vs {old})."
