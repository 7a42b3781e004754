"""MetaSchedule's own tuner on one TensorIR function, for a lesson: TVM's search run in a child
process (``course.metaschedule_search``) under a time and a memory limit, its result cached in
the disk cache's folders (a class's shared folder read first, then the user's).

What runs is stock MetaSchedule (``ms.tune.tune_tasks``): the design space its schedule rules
generate for this CPU (``post-order-apply``), its evolutionary search with its mutators, its
XGBoost cost model and its task scheduler. Three things are set for a notebook's budget: the
builder and runner work in the child itself (``PyBuilder`` / ``PyRunner`` calling MetaSchedule's
own ``default_build`` and ``default_run_evaluator``) instead of pools of worker processes that
each import TVM (223 s against 53 s for 16 trials here); the cost model starts learning after
the first round instead of after 100 trials; and the search keeps a smaller population (128
candidates per generation instead of 512: 15 s of CPU for 32 trials here instead of 41).

Why a child process: a tuner compiles and runs hundreds of generated programs, in C++ that can
crash (apache-tvm-ffi 0.1.15 segfaulted serializing IR, docs/lessons.md) or hang; in a child,
that costs the lesson a message, not its kernel. The kernel never touches MetaSchedule or IR
serialization itself: the module goes out as TVMScript text and the result comes back as JSON
(each trial's trace in ``traces.trace_json``'s form), replayed here on a fresh schedule.

The cache entry is one JSON file named by a key of everything the result depends on: the
module's text, the search's settings, mlclab's code, TVM's, tvm_ffi's and XGBoost's versions,
and this CPU (``api.cache.versions``). A bad entry (unreadable, another key, a trace that does
not replay) is a miss and is tuned again; entries are written whole (a temporary file renamed),
and a lock file keeps two kernels from tuning the same key at once: the second waits and reads
the first one's result.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..api.cache import record_folders
from ..api.disk_cache import write_whole
from .metaschedule_search import OUT_OF_MEMORY

FORMAT = 1                 # bumped when an entry's layout changes
TRIALS, PER_ROUND, POPULATION = 32, 8, 128
TIME_LIMIT_S, MEMORY_MB = 300.0, 4096
COST_MODELS = ("xgb", "random")
CACHE_NAME = "metaschedule"    # its folder in the disk cache (api.cache.record_folders)


class TuningError(RuntimeError):
    """The tuner did not produce a result: stopped at a limit, crashed, or failed."""


@dataclass(frozen=True)
class Trial:
    """One measured candidate: the search round it was chosen in (1 = the first), its time in
    milliseconds (None when it failed to build or run, with ``error`` saying why) and its trace
    as ``traces.trace_json`` text."""

    round: int
    ms: Optional[float]
    trace: str
    error: Optional[str] = None


@dataclass
class Tuned:
    """What a tuning measured, and how it was set up; ``schedule(mod)`` replays the best."""

    trials: list
    rules: list                # the schedule rules MetaSchedule has for this target
    acted: list                # {"rule", "block", "schedules"}: those that changed a block
    postprocs: list
    mutators: dict             # the evolutionary search's mutators and their probabilities
    design_spaces: list        # each design space's trace, as text
    cost_model: str
    settings: dict             # trials, per_round, population, seed, threads, target
    defaults: dict             # MetaSchedule's own population and cost-model warm-up
    seconds: float             # the tuning's wall time, in the child
    load: list                 # the load average when it ended
    when: str
    path: Optional[Path] = field(default=None, compare=False)
    cached: bool = field(default=False, compare=False)

    @property
    def measured(self) -> list:
        return [t for t in self.trials if t.ms is not None]

    @property
    def best(self) -> Trial:
        return min(self.measured, key=lambda t: t.ms)

    @property
    def rounds(self) -> dict:
        """Round number -> the times measured in it (ms)."""
        found: dict = {}
        for trial in self.measured:
            found.setdefault(trial.round, []).append(trial.ms)
        return found

    def schedule(self, mod, trial: Optional[Trial] = None):
        """A ``tvm.s_tir.Schedule`` of ``mod`` with ``trial``'s trace (the best) replayed."""
        from tvm.s_tir import Schedule, Trace

        from .traces import trace_from_json
        sch = Schedule(_as_module(mod))
        Trace.apply_json_to_schedule(trace_from_json((trial or self.best).trace), sch)
        return sch


# ------------------------------------------------------------------------------ the kernel's side
def tune(mod, *, cache_dir=None, trials: int = TRIALS, per_round: int = PER_ROUND,
         population: int = POPULATION, cost_model: str = "xgb", seed: int = 0,
         time_limit_s: float = TIME_LIMIT_S, memory_mb: int = MEMORY_MB) -> Tuned:
    """Tune ``mod`` (a PrimFunc, or an IRModule of one PrimFunc) with MetaSchedule for this CPU:
    ``trials`` measured candidates in rounds of ``per_round``. Read from the cache when it was
    tuned before with the same settings, code and versions; else tuned in a child process
    stopped after ``time_limit_s`` seconds or at ``memory_mb`` of address space, and cached.
    The cache is ``cache_dir`` if given, else the disk cache's ``metaschedule`` folders
    (``api.cache.record_folders``: a class's shared folder read first, then the user's).
    Raises ``TuningError`` (a message, not a traceback, in a notebook) when no result came."""
    from ..api.errors import compact

    mod = _as_module(mod)
    _check(trials=trials, per_round=per_round, population=population, cost_model=cost_model,
           seed=seed, time_limit_s=time_limit_s, memory_mb=memory_mb)
    if cost_model == "xgb" and importlib.util.find_spec("xgboost") is None:
        raise compact(TuningError(
            "MetaSchedule's XGBoost cost model needs the xgboost package, which is not "
            "installed: pip install 'mlclab[lessons]' (or xgboost-cpu), or pass "
            "cost_model=\"random\" to rank candidates at random."))
    from ..threadpool import threads
    settings = {"trials": trials, "per_round": per_round, "population": population,
                "cost_model": cost_model, "seed": seed, "threads": threads().count}
    settings["target"] = str(tuning_target(settings["threads"]))
    request = {"module": mod.script(), "settings": settings}
    key = cache_key(request)
    name = f"metaschedule-{key[:16]}.json"
    if cache_dir is None:
        shared, folder = record_folders(CACHE_NAME)
        found = shared and load(shared / name, key, mod, remove_bad=False)
        if found:
            return found
        if folder is None:                       # the user turned the disk cache off
            return _tune_now(mod, request, time_limit_s, memory_mb)[0]
    else:
        folder = Path(cache_dir).expanduser()
    path = folder / name
    found = load(path, key, mod)
    if found is not None:
        return found
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = _lock(folder / f".{path.stem}.lock")
    except OSError as err:
        warnings.warn(f"MetaSchedule's result cannot be cached in {folder} ({err}); tuning "
                      f"without a cache", stacklevel=2)
        return _tune_now(mod, request, time_limit_s, memory_mb)[0]
    with lock:
        found = load(path, key, mod)          # another kernel may have tuned it meanwhile
        if found is not None:
            return found
        tuned, result = _tune_now(mod, request, time_limit_s, memory_mb)
        try:
            write_whole(path, json.dumps({"format": FORMAT, "key": key, "result": result}))
            tuned.path = path
        except OSError as err:
            warnings.warn(f"MetaSchedule's result could not be cached in {folder} ({err}); "
                          f"a re-run tunes again", stacklevel=2)
        return tuned


def _tune_now(mod, request: dict, time_limit_s: float, memory_mb: int) -> tuple:
    """The child's result, as a ``Tuned`` whose best trace replays on ``mod``, and as JSON."""
    from ..api.errors import compact
    try:
        result = run_child(request, time_limit_s, memory_mb)
    except TuningError as err:
        raise compact(err) from None
    try:
        tuned = _from_json(result)
        tuned.schedule(mod)
    except Exception as err:  # noqa: BLE001 -- anything wrong with what the child wrote
        raise compact(TuningError(f"MetaSchedule's tuner returned a result this mlclab cannot "
                                  f"use ({type(err).__name__}: {err})")) from None
    return tuned, result


def tuning_target(threads: int):
    """This CPU's LLVM target (its vector units: the rules pick AVX-512 tiles where it has
    them), with the cores MetaSchedule may parallelize over."""
    import tvm

    from ..backend.targets import resolve_target
    spec = {k: v for k, v in dict(resolve_target("llvm").export()).items()
            if k in ("kind", "mcpu", "mtriple", "mattr")}
    return tvm.target.Target({**spec, "num-cores": int(threads)})


def cache_key(request: dict) -> str:
    """The module's text, the settings, and what the result depends on besides them."""
    from importlib import metadata

    from ..api.cache import versions
    depends = dict(versions())
    for name in ("apache-tvm-ffi", "xgboost-cpu", "xgboost"):
        try:
            depends[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            depends[name] = None
    text = json.dumps({"format": FORMAT, "request": request, "depends": depends},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(path: Path, key: str, mod, remove_bad: bool = True) -> Optional[Tuned]:
    """The entry at ``path`` if it is whole, has ``key`` and its best trace replays on ``mod``;
    else None, and a bad entry is removed (``remove_bad``: not from a shared folder)."""
    if not path.exists():
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry.get("format") != FORMAT or entry.get("key") != key:
            raise ValueError("another format or key")
        tuned = _from_json(entry["result"])
        tuned.schedule(mod)
    except Exception:          # anything wrong with it: tune again  # noqa: BLE001
        if remove_bad:
            with contextlib.suppress(OSError):
                path.unlink()
        return None
    tuned.path, tuned.cached = path, True
    return tuned


def _from_json(result: dict) -> Tuned:
    trials = [Trial(round=int(t["round"]), ms=None if t["ms"] is None else float(t["ms"]),
                    trace=str(t["trace"]), error=t.get("error")) for t in result["trials"]]
    if not any(t.ms is not None and t.ms > 0 for t in trials):
        raise ValueError("no trial was measured")
    acted = [{"rule": str(a["rule"]), "block": str(a["block"]), "schedules": int(a["schedules"])}
             for a in result["acted"]]
    return Tuned(trials=trials, rules=[str(r) for r in result["rules"]], acted=acted,
                 postprocs=[str(p) for p in result["postprocs"]],
                 mutators={str(k): float(v) for k, v in result["mutators"].items()},
                 design_spaces=[str(s) for s in result["design_spaces"]],
                 cost_model=str(result["cost_model"]), settings=dict(result["settings"]),
                 defaults={str(k): int(v) for k, v in result["defaults"].items()},
                 seconds=float(result["seconds"]), load=[float(x) for x in result["load"]],
                 when=str(result["when"]))


def _lock(lock_path: Path):
    """``lock_path`` open and locked; closing it (``with``) or the holder's death unlocks."""
    import fcntl
    lock = open(lock_path, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
    except OSError:
        lock.close()
        raise
    return lock


def _as_module(mod):
    import tvm
    from tvm import tirx
    if isinstance(mod, tirx.PrimFunc):
        mod = tvm.IRModule({"main": mod})
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"mod must be a tvm.tirx.PrimFunc or an IRModule holding one, got "
                        f"{type(mod).__name__}")
    funcs = list(mod.functions.values())
    if len(funcs) != 1 or not isinstance(funcs[0], tirx.PrimFunc):
        raise ValueError(f"mod must hold exactly one PrimFunc to tune, it holds "
                         f"{[gv.name_hint for gv in mod.functions]}")
    return mod


def _check(**values) -> None:
    for name in ("trials", "per_round", "population", "memory_mb"):
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    if isinstance(values["seed"], bool) or not isinstance(values["seed"], int):
        raise ValueError(f"seed must be a whole number, got {values['seed']!r}")
    limit = values["time_limit_s"]
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
        raise ValueError(f"time_limit_s must be a number of seconds above 0, got {limit!r}")
    if values["cost_model"] not in COST_MODELS:
        raise ValueError(f"cost_model must be one of {COST_MODELS}, got "
                         f"{values['cost_model']!r}")


def run_child(request: dict, time_limit_s: float, memory_mb: int,
              argv: Optional[list] = None) -> dict:
    """Run the tuner's child process on ``request`` and return its result; ``argv`` replaces the
    child's command (the tests give it one that crashes or hangs)."""
    with tempfile.TemporaryDirectory(prefix="mlclab-metaschedule-") as work:
        work_dir = Path(work)
        (work_dir / "request.json").write_text(json.dumps(request), encoding="utf-8")
        out = work_dir / "result.json"
        argv = argv or [sys.executable, "-m", "mlclab.course.metaschedule_search",
                        str(work_dir / "request.json"), str(out), str(int(memory_mb))]
        env = {**os.environ, "MALLOC_ARENA_MAX": "2"}       # glibc's arenas vs the memory limit
        root = Path(__file__).resolve().parents[2]          # the folder holding mlclab/
        if "site-packages" not in root.parts:               # a checkout: the same mlclab
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root),
                                                              os.environ.get("PYTHONPATH")]))
        log = work_dir / "child.log"
        with open(log, "wb") as output:
            child = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                     stdout=output, stderr=subprocess.STDOUT,
                                     start_new_session=True)
            try:
                code = child.wait(timeout=time_limit_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)     # it, and anything it started
                child.wait()
        tail = _tail(log)
        if code is None:
            raise TuningError(f"MetaSchedule's tuner was stopped at its time limit of "
                              f"{time_limit_s:g} s (pass a larger time_limit_s, or fewer "
                              f"trials).{tail}")
        if code == OUT_OF_MEMORY:
            raise TuningError(f"MetaSchedule's tuner ran out of memory at its limit of "
                              f"{memory_mb} MB (pass a larger memory_mb).{tail}")
        if code != 0:
            raise TuningError(f"MetaSchedule's tuner {_how_it_ended(code)} before it returned "
                              f"a result (memory limit {memory_mb} MB).{tail}")
        try:
            return json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise TuningError(f"MetaSchedule's tuner ended without a readable result "
                              f"({type(err).__name__}).{tail}") from None


def _how_it_ended(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        why = {"SIGSEGV": "a crash in native code", "SIGABRT": "a native abort",
               "SIGKILL": "killed from outside"}.get(name)
        return f"was killed by {name}" + (f" ({why})" if why else "")
    return f"failed with exit code {code}"


def _tail(log: Path, lines: int = 8) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    kept = text.splitlines()[-lines:]
    return ("\nIts last lines of output:\n  " + "\n  ".join(kept)) if kept else ""
