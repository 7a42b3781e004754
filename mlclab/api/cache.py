"""The compile cache: an LRU of compiled programs keyed by a hash of the exact source text.

The key is the text, not where it came from: re-running an unchanged ``%%tinynn`` cell (a new
cell number, so a new filename) is a hit, and the program comes back under the new name (see
``Program.renamed``). Only trailing blanks and trailing blank lines are dropped before
hashing -- they can change nothing -- and lines are split on ``\\n`` alone: splitting on every
character Python's ``splitlines`` knows (form feed, U+2028, ...) made different programs share
a key, and the second got the first's code.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping

# Bumped when what a cached program holds changes shape.
CACHE_VERSION = 2


def normalize(source: str) -> str:
    """``source`` without trailing spaces/tabs on each line and without trailing blank lines.
    Leading blank lines stay: they number the lines that errors and views point at."""
    lines = [line.rstrip(" \t\r") for line in source.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _target_key(target) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, Mapping):
        return repr(sorted(target.items()))
    return str(target)


def key(source: str, target, fast_math: bool = False) -> str:
    """The cache key of ``source`` compiled for ``target`` (with ``fast_math`` or strict)."""
    math = "\0fast_math" if fast_math else ""
    text = f"{CACHE_VERSION}\0{_target_key(target)}{math}\0{normalize(source)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Cache:
    """Least recently used first out. An evicted program holds no reference cycle (see
    ``Program``), so its native code is freed as soon as the last user lets go of it."""

    def __init__(self, size: int = 64):
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.hits = self.misses = 0
        self.lock = threading.Lock()

    def get(self, k):
        with self.lock:
            prog = self.entries.get(k)
            if prog is None:
                self.misses += 1
                return None
            self.entries.move_to_end(k)
            self.hits += 1
            return prog

    def put(self, k, prog) -> None:
        with self.lock:
            self.entries[k] = prog
            self.entries.move_to_end(k)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.hits = self.misses = 0

    def info(self) -> dict:
        return {"hits": self.hits, "misses": self.misses, "size": len(self.entries)}


CACHE = Cache()


def clear_cache() -> None:
    """Forget every compiled program (the next compile builds afresh)."""
    CACHE.clear()


def cache_info() -> dict:
    """``{"hits", "misses", "size"}`` of the compile cache."""
    return CACHE.info()
