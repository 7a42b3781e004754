"""How many threads TVM's pool runs, chosen from what this process may really use.

In a container ``os.cpu_count()`` is the host's count: a kernel limited to one CPU by a cgroup
quota or by ``taskset`` that runs two threads makes them take turns (a 512x512 matmul at load 5
took 3.6-3.9 ms on 2 threads against 1.2 ms on 1). So the count is the smallest of the CPUs
this process may run on (``os.sched_getaffinity``) and the cgroup's CPU quota (v2 ``cpu.max``,
v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``, the tightest of the process's cgroup and its
ancestors), unless ``MLCLAB_NUM_THREADS`` (or a ``TVM_NUM_THREADS`` set before mlclab) says.

TVM's pool also pins its workers to cores, and pinning the calling thread widens the process's
affinity: under ``taskset -c 0`` a process was allowed {0, 1} after its first parallel call.
``TVM_BIND_THREADS=0`` turns the pinning off (the scheduler places the threads, within the
affinity the process was given). Both variables are set before TVM's pool starts: at
``import mlclab`` and in ``tvm_setup.tvm()``. :func:`threads` says what was chosen and why.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

ENV = "MLCLAB_NUM_THREADS"
CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class ThreadChoice:
    """What TVM's pool runs: ``count`` threads, because ``reason``."""

    count: int
    reason: str
    affinity: int              # CPUs this process may run on
    quota: float | None        # CPUs' worth of time the cgroup allows, None if unlimited
    bind_threads: bool         # whether TVM pins its workers to cores

    def __str__(self) -> str:
        pinned = "pinned to cores" if self.bind_threads else "not pinned (affinity kept)"
        return f"{self.count} thread{'s' * (self.count != 1)}: {self.reason}; workers {pinned}"


def cgroup_quota(root: Path = CGROUP_ROOT, proc_cgroup: str | None = None) -> float | None:
    """The CPU quota of this process's cgroup in CPUs (``1.5`` = 150 ms per 100 ms), the
    tightest along its path up to the root; None where none is set or nothing can be read."""
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            proc_cgroup = ""
    quotas = []
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":                                   # v2: "0::/path"
            quotas += [_v2_quota(d / "cpu.max") for d in _up_from(root, path)]
        elif "cpu" in controllers.split(","):                   # v1: "4:cpu,cpuacct:/path"
            for mount in (root / controllers, root / "cpu", root / "cpu,cpuacct"):
                if mount.is_dir():
                    quotas += [_v1_quota(d) for d in _up_from(mount, path)]
                    break
    quotas = [q for q in quotas if q is not None]
    return min(quotas) if quotas else None


def _up_from(mount: Path, path: str) -> list:
    """The cgroup directory of ``path`` under ``mount`` and each parent up to ``mount``. In a
    container the path may be the host's, not visible here: then the mount itself is it."""
    parts = [p for p in path.strip("/").split("/") if p and p != ".."]
    dirs = [mount.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if d.is_dir()] or [mount]


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _v2_quota(path: Path) -> float | None:
    text = _read(path)
    if not text:
        return None
    fields = text.split()
    try:
        if fields[0] == "max":
            return None
        quota = int(fields[0])
        period = int(fields[1]) if len(fields) > 1 else 100_000
    except (ValueError, IndexError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _v1_quota(directory: Path) -> float | None:
    try:
        quota = int(_read(directory / "cpu.cfs_quota_us") or "-1")
        period = int(_read(directory / "cpu.cfs_period_us") or "0")
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def affinity_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):       # not on Linux
        return os.cpu_count() or 1


def _override(name: str, environ) -> int | None:
    text = environ.get(name)
    if text is None or not text.strip():
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        warnings.warn(f"{name}={text!r} is not a thread count (a whole number >= 1); "
                      f"ignored", stacklevel=3)
        return None
    return value


def choose(environ=None, affinity: int | None = None,
           quota: float | None | str = "read") -> ThreadChoice:
    """The thread count for this process (see the module docstring); ``environ``, ``affinity``
    and ``quota`` are read from the process unless given."""
    environ = os.environ if environ is None else environ
    affinity = affinity_count() if affinity is None else affinity
    quota = cgroup_quota() if quota == "read" else quota
    bind = environ.get("TVM_BIND_THREADS", "0") == "1"
    mine = _override(ENV, environ)
    if mine is not None:
        return ThreadChoice(mine, f"{ENV}={mine}", affinity, quota, bind)
    # A TVM_NUM_THREADS mlclab did not set (its own is remembered in the environment, which a
    # child process inherits with it) is the user's choice.
    theirs = environ.get("TVM_NUM_THREADS")
    if theirs and environ.get("_MLCLAB_SET_TVM_NUM_THREADS") != theirs:
        count = _override("TVM_NUM_THREADS", environ)
        if count is not None:
            return ThreadChoice(count, f"TVM_NUM_THREADS={count} was set before mlclab",
                                affinity, quota, bind)
    count, reason = affinity, f"{affinity} CPU{'s' * (affinity != 1)} in this process's affinity"
    if quota is not None and math.ceil(quota) < count:
        count = max(1, math.ceil(quota))
        reason = (f"the cgroup's CPU quota is {quota:g} CPUs "
                  f"(affinity allows {affinity})")
    elif quota is not None:
        reason += f" (the cgroup's quota, {quota:g} CPUs, allows them)"
    else:
        reason += " (no cgroup CPU quota)"
    return ThreadChoice(count, reason, affinity, quota, bind)


def configure(environ=None) -> ThreadChoice:
    """Set TVM's variables for the chosen count (before TVM's pool starts) and return it."""
    environ = os.environ if environ is None else environ
    choice = choose(environ)
    environ.setdefault("TVM_BIND_THREADS", "0")
    environ["TVM_NUM_THREADS"] = str(choice.count)
    # remembered so that a later choice tells mlclab's own setting from the user's
    environ["_MLCLAB_SET_TVM_NUM_THREADS"] = str(choice.count)
    return choice


_CHOSEN: ThreadChoice | None = None


def configure_once() -> ThreadChoice:
    """:func:`configure`, the first time only: TVM's pool reads the variables once."""
    global _CHOSEN
    if _CHOSEN is None:
        _CHOSEN = configure()
    return _CHOSEN


def threads() -> ThreadChoice:
    """How many threads TVM's pool runs and why (``print(mlclab.threads())``)."""
    return configure_once()
