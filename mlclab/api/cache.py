"""The compile cache, two levels: in memory, an LRU of compiled programs; on disk, their
executables (``api.disk_cache``), read from a shared class folder first, then the user's own.

The key is the text, the target, the compile options (one mapping, so any option is keyed) and
what the code was compiled by: the versions of mlclab's code and TVM, and this CPU. It is the
text, not where it came from: re-running an unchanged ``%%tinynn`` cell (a new
cell number, so a new filename) is a hit, and the program comes back under the new name (see
``Program.renamed``). Only trailing blanks and trailing blank lines are dropped before
hashing -- they can change nothing -- and lines are split on ``\\n`` alone: splitting on every
character Python's ``splitlines`` knows (form feed, U+2028, ...) made different programs share
a key, and the second got the first's code.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from . import disk_cache

# Bumped when what a cached program holds changes shape.
CACHE_VERSION = 3


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


def _options_key(options) -> str:
    if not options:
        return "{}"
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of compile options, got "
                        f"{type(options).__name__}")
    return json.dumps({str(k): repr(v) for k, v in options.items()}, sort_keys=True)


def key(source: str, target, options: Mapping | None = None, table: int = 0) -> str:
    """The key of ``source`` compiled for ``target`` with ``options`` (``{"fast_math": True}``)
    by this mlclab, this TVM, on this CPU. ``table``: the operator table's
    ``ops.generation()``, so an operator registered (or fixed and registered again) since is
    compiled with, not the program built before it."""
    text = "\0".join([str(CACHE_VERSION), json.dumps(versions(), sort_keys=True),
                      _target_key(target), _options_key(options), str(table),
                      normalize(source)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def module_constants(mod) -> list:
    """Every constant of ``mod``'s Relax functions as a numpy array (a zero-copy view where
    DLPack can give one), in the order a walk of the functions, by name, meets them; each
    function's name before its own."""
    import numpy as np
    from tvm import relax
    from tvm.relax.expr_functor import PyExprVisitor, visitor

    found: list = []

    @visitor
    class Constants(PyExprVisitor):
        def visit_generic_const_(self, const) -> None:
            try:   # zero-copy: a model's weights are hundreds of MB
                value = np.from_dlpack(const.value)
            except (TypeError, ValueError, BufferError, RuntimeError):
                value = const.value.numpy()      # a dtype DLPack cannot give numpy
            found.append((str(const.value.dtype), value))

    walker = Constants()
    for gv, func in sorted(mod.functions_items(), key=lambda item: item[0].name_hint):
        if isinstance(func, relax.Function):
            found.append(gv.name_hint)
            walker.visit_expr(func)
    return found


def module_text(mod, constants=None) -> str:
    """An imported model's Relax module as the text its key is made from: the TVMScript, in
    which a constant is only ``metadata["ir.GenericConst"][i]``, then the dtype, shape and
    SHA-256 of every constant's bytes (``module_constants``). Two modules with the same text
    compute the same thing: weights are in it by content, and what a ``convert_map`` or
    torch.export made is in the IR itself."""
    import numpy as np

    lines = [mod.script()]
    for item in module_constants(mod) if constants is None else constants:
        if isinstance(item, str):
            lines.append(f"function {item}")
            continue
        dtype, value = item
        value = np.ascontiguousarray(value)
        lines.append(f"{dtype} {value.shape} "
                     f"{hashlib.sha256(value.reshape(-1).view(np.uint8)).hexdigest()}")
    return "\n".join(lines)


@functools.cache
def _versions() -> tuple:
    import tvm

    package = Path(__file__).resolve().parent.parent
    code = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):       # any change to mlclab's code is a new key
        code.update(str(path.relative_to(package)).encode())
        code.update(path.read_bytes())
    return (("mlclab", code.hexdigest()[:16]), ("tvm", tvm.__version__),
            ("format", str(disk_cache.FORMAT)), ("cpu", _cpu()))


def versions() -> dict:
    """What compiled code depends on besides the program: mlclab's code, TVM, the entry format,
    this CPU (an entry from a machine with other vector units could not run here)."""
    return dict(_versions())


def _cpu() -> str:
    """The machine, CPU model and feature flags: LLVM compiles for the host CPU."""
    described = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            seen = set()
            for line in f:
                name = line.split(":", 1)[0].strip()
                if name in ("model name", "flags", "Features", "CPU part") and name not in seen:
                    seen.add(name)
                    described += "|" + line.strip()
    except OSError:
        described += "|" + platform.processor()
    return hashlib.sha256(described.encode()).hexdigest()[:16]


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

# ------------------------------------------------------------------------------ on disk
CACHE_DIR_ENV = "MLCLAB_CACHE_DIR"
SHARED_DIR_ENV = "MLCLAB_SHARED_CACHE_DIR"
OFF = "off"


def default_dir() -> Path:
    """The user's cache folder: ``$XDG_CACHE_HOME/mlclab``, else ``~/.cache/mlclab``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlclab"


class Levels:
    """The disk levels: the shared class folder (read-only, read first) and the user's own."""

    def __init__(self):
        self.lock = threading.Lock()
        self.configured = False
        self.user: disk_cache.DiskCache | None = None
        self.shared: disk_cache.DiskCache | None = None

    def configure(self, path=None, shared=None, max_bytes=None, from_env=False) -> None:
        with self.lock:
            if from_env:
                if self.configured:
                    return
                path = os.environ.get(CACHE_DIR_ENV) or default_dir()
                shared = os.environ.get(SHARED_DIR_ENV) or None
            limit = max_bytes or (self.user.max_bytes if self.user else
                                  disk_cache.DEFAULT_MAX_BYTES)
            self.user = (None if path is None or str(path).lower() == OFF
                         else disk_cache.DiskCache(path, max_bytes=limit))
            self.shared = (None if shared is None or str(shared).lower() == OFF
                           else disk_cache.DiskCache(shared, read_only=True))
            self.configured = True

    def ready(self) -> "Levels":
        self.configure(from_env=True)
        return self

    def load(self, k: str):
        """The executable stored under ``k`` at either level, or None."""
        self.ready()
        for level in (self.shared, self.user):
            if level is not None:
                executable = level.load(k, versions())
                if executable is not None:
                    return executable
        return None

    def save(self, k: str, executable) -> None:
        """Stored in the user's folder, now: linking the library takes a few tenths of a
        second, but TVM's export runs LLVM, which must not run beside another build (a
        background writer crashed the process, "double free or corruption")."""
        self.ready()
        if self.user is not None:
            self.user.save(k, versions(), executable)


LEVELS = Levels()

def record_folders(name: str) -> tuple:
    """``name``'s folder in each disk level, for records that are not compiled programs (a
    lesson's measured trials, a tuner's result): ``(shared, user)``, None where a level is
    off. As for compiled programs, the shared one is read first and never written, so a class
    folder an instructor warmed (``python -m mlclab.course warm-cache``) serves them too."""
    if (not isinstance(name, str) or not name or name != Path(name).name
            or name.startswith(".") or len(name) == 2):      # 2: the compiled entries' folders
        raise ValueError(f"record_folders(): name must be a plain folder name, got {name!r}")
    LEVELS.ready()
    return (LEVELS.shared.path / name if LEVELS.shared else None,
            LEVELS.user.path / name if LEVELS.user else None)


class Records:
    """JSON records kept under ``name`` in the disk levels (``record_folders``), one file per
    key: ``load`` reads the shared folder, then the user's; ``save`` writes the user's, whole.
    A record that cannot be read, or holds another key, is a miss."""

    def __init__(self, name: str):
        record_folders(name)                                  # checks the name
        self.name = name

    @staticmethod
    def _file(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()[:16] + ".json"

    def load(self, key: str):
        """``(record, path)`` for ``key``, or None."""
        for folder in record_folders(self.name):
            if folder is None:
                continue
            path = folder / self._file(key)
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(entry, dict) and entry.get("key") == key and "record" in entry:
                return entry["record"], path
        return None

    def save(self, key: str, record) -> Path | None:
        """Where ``record`` was stored under ``key``; None when the user's disk level is off."""
        folder = record_folders(self.name)[1]
        if folder is None:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self._file(key)
        disk_cache.write_whole(path, json.dumps({"key": key, "record": record}))
        return path


#: Imported models built but not stored, and why (the last reason): ``cache_info()``.
NOT_STORED = {"models": 0, "reason": None}


class Stored:
    """One program's place in the disk cache: what ``Built`` loads from and saves to. A traced
    build (``child("trace f")``) has a place of its own under a key derived from this one."""

    def __init__(self, k: str):
        self.key = k

    def load(self):
        return LEVELS.load(self.key)

    def save(self, executable) -> None:
        LEVELS.save(self.key, executable)

    def child(self, what: str) -> "Stored":
        return Stored(hashlib.sha256(f"{self.key}\0{what}".encode()).hexdigest())


def cache_dir(path=None, *, shared=None, max_mb: float | None = None) -> dict:
    """Move the disk cache to ``path`` (``"off"`` turns it off), read a shared class folder
    ``shared`` before it, bound it to ``max_mb``; with no argument, change nothing. Returns
    ``cache_info()``. ``MLCLAB_CACHE_DIR`` / ``MLCLAB_SHARED_CACHE_DIR`` set the same at start."""
    if max_mb is not None and (not isinstance(max_mb, (int, float)) or max_mb <= 0):
        raise ValueError(f"cache_dir(): max_mb must be a positive number of megabytes, got "
                         f"{max_mb!r}")
    LEVELS.ready()
    if path is not None or shared is not None or max_mb is not None:
        current_user = LEVELS.user.path if LEVELS.user else OFF
        current_shared = LEVELS.shared.path if LEVELS.shared else None
        LEVELS.configure(current_user if path is None else path,
                         current_shared if shared is None else shared,
                         None if max_mb is None else int(max_mb * 2**20))
    return cache_info()


def clear_cache(disk: bool = False) -> None:
    """Forget every compiled program in memory (the next compile loads it from disk or builds
    it); ``disk=True`` also empties the user's disk folder (never the shared one)."""
    CACHE.clear()
    if disk:
        LEVELS.ready()
        if LEVELS.user is not None:
            LEVELS.user.clear()


def cache_info() -> dict:
    """Each level of the compile cache: ``memory`` (``hits``, ``misses``, ``size``), ``disk``
    and ``shared`` (``path``, ``entries``, ``bytes``, ``hits``, ``misses``, ``writes``,
    ``bad_entries``, ``last_error``; None when off), and ``not_stored``: imported models built
    but kept off the disk (how many, and the last reason). The memory level's counts stay at
    the top level too."""
    LEVELS.ready()
    info = CACHE.info()
    info["memory"] = CACHE.info()
    info["disk"] = LEVELS.user.info() if LEVELS.user else None
    info["shared"] = LEVELS.shared.info() if LEVELS.shared else None
    info["not_stored"] = dict(NOT_STORED)
    return info
