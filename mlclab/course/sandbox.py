"""Untrusted code in a box: a submission's notebook run where it cannot reach the grade.

Each run gets its own folder (HOME, IPYTHONDIR, Jupyter's dirs, TMPDIR, the working folder), an
environment with nothing of the grader's in it (no autograder path, no tests, one thread:
MLCLAB_NUM_THREADS=1), its own session, and limits: CPU seconds and address space (rlimits set by
the runner before the kernel starts, so the kernel inherits them), a per-cell timeout (nbclient's,
the one nbgrader uses) and a total wall-clock limit enforced from outside.

When the grader is root (see :func:`isolation`), the run also gets new mount, PID and network
namespaces (every mount read-only but its own folder, the grader's processes invisible, and all
it started killed with the namespace), then drops to an unprivileged uid per parallel slot, or,
where the interpreter cannot be started by another uid, to root without any capability.

    python -m mlclab.course.sandbox ANSWERS.json SALT CELL_S CPU_S MEMORY_MB NOTEBOOK KEY...

is the inside: it runs NOTEBOOK with nbclient, then, in the same kernel, mlclab.course.export
writes the answers for KEY... to ANSWERS.json. Nothing here decides a grade.
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

UID_BASE = 64000           # slot n runs its submissions as uid UID_BASE + n, its checks as +1000
ANSWERS = "answers.json"
KERNEL_DIED = 3            # the runner's exit code when the kernel died mid-notebook

# Inside fresh mount, PID and network namespaces (run as root, before dropping privileges): every
# mount read-only but the box, a private /dev/shm, loopback only. When the namespace's first
# process ends, the kernel kills every process left in it.
_ENTER = r"""set -e
box=$1; shift
mount --make-rprivate /
mount --bind "$box" "$box"
if [ -n "${MLCLAB_SHARED_CACHE_DIR:-}" ]; then     # the class's compile cache: read-only, or no run
  mount --bind "$MLCLAB_SHARED_CACHE_DIR" "$MLCLAB_SHARED_CACHE_DIR"
  mount -o remount,bind,ro "$MLCLAB_SHARED_CACHE_DIR"
fi
for mp in $(awk '{print $2}' /proc/self/mounts | sort -u); do
  case "$mp" in "$box"|"$box"/*|/proc|/proc/*|/sys|/sys/*|/dev|/dev/pts|/dev/mqueue) continue;; esac
  mount -o remount,bind,ro "$mp" 2>/dev/null || true
done
if [ -d /dev/shm ]; then mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm; fi
if command -v ip >/dev/null; then ip link set lo up; fi
exec "$@"
"""


@dataclass
class Limits:
    cell_s: float = 300.0
    total_s: float = 900.0
    cpu_s: int = 1200
    memory_mb: int = 4096


@dataclass
class Run:
    returncode: Optional[int]
    stopped: str                     # "" or why the grader stopped it (the total time limit)
    seconds: float


def isolation() -> str:
    """How boxes are isolated here: "uid" (namespaces, then an unprivileged uid per slot),
    "nocaps" (namespaces, then root with every capability dropped: the interpreter is not
    reachable by another uid, e.g. under /root), or "none" (not root, or no unshare: the
    submission runs as the grader's user; use otter's Docker grading for isolation)."""
    global _ISOLATION
    with _ISOLATION_LOCK:
        if _ISOLATION is None:
            _ISOLATION = _probe_isolation()
    return _ISOLATION


def _probe_isolation() -> str:
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if is_root and shutil.which("unshare") and shutil.which("setpriv"):
        probe = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--", "true"],
                               capture_output=True, check=False)
        if probe.returncode == 0:
            # The kernel is a child of the runner: the interpreter must start twice over as that
            # uid.
            nested = ("import subprocess, sys\n"
                      "subprocess.run([sys.executable, '-c', 'import mlclab'], check=True)")
            root = Path("/")
            env = clean_env({"home": root, "ipython": root, "jupyter": root, "tmp": root})
            reach = subprocess.run([*_drop(UID_BASE + 999), sys.executable, "-c", nested],
                                   capture_output=True, check=False, cwd="/",
                                   env={"PYTHONPATH": env.get("PYTHONPATH", "")})
            return "uid" if reach.returncode == 0 else "nocaps"
    return "none"


_ISOLATION: Optional[str] = None
_ISOLATION_LOCK = threading.Lock()


def isolated_uid(slot: int, offset: int = 0) -> Optional[int]:
    """The uid slot ``slot`` runs as, or None when boxes keep the grader's uid."""
    return UID_BASE + offset + slot if isolation() == "uid" else None


def _drop(uid: Optional[int]) -> list:
    if uid is not None:
        return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--no-new-privs", "--"]
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]


def make_box(box: Path, uid: Optional[int], shared_cache: Optional[Path] = None) -> dict:
    """Fresh folders for one run, owned by ``uid``; returns the environment to run in, which
    reads the class's compile cache ``shared_cache`` (mounted read-only: only where boxes are
    isolated, see ``shared_cache_refused``)."""
    if box.exists():
        shutil.rmtree(box)
    dirs = {name: box / name for name in ("home", "ipython", "jupyter", "tmp", "work", "out")}
    for path in dirs.values():
        path.mkdir(parents=True)
    if uid is not None:
        for path in [box, *dirs.values()]:
            os.chown(path, uid, uid)
    os.chmod(box, 0o700)
    env = clean_env(dirs)
    if shared_cache is not None:
        env["MLCLAB_SHARED_CACHE_DIR"] = str(shared_cache)
    return env


def shared_cache_refused(shared_cache: Path) -> Optional[str]:
    """Why graded runs may not read the class's compile cache ``shared_cache``, or None. A
    submission that could write it would change what the next submissions run: only a box in
    its own mount namespace, where the folder is mounted read-only, may see it."""
    if isolation() == "none":
        return ("graded runs are not isolated here (grade as root on Linux with unshare), so a "
                "submission could write the class's compile cache")
    if not Path(shared_cache).is_dir():
        return f"the shared compile cache {shared_cache} is not a folder"
    return None


def clean_env(dirs: dict) -> dict:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
           "HOME": str(dirs["home"]), "IPYTHONDIR": str(dirs["ipython"]),
           "JUPYTER_CONFIG_DIR": str(dirs["jupyter"]),
           "JUPYTER_DATA_DIR": str(dirs["jupyter"] / "data"),
           "JUPYTER_RUNTIME_DIR": str(dirs["jupyter"] / "runtime"),
           "TMPDIR": str(dirs["tmp"]), "MPLCONFIGDIR": str(dirs["tmp"]),
           "XDG_CACHE_HOME": str(dirs["home"] / ".cache"), "LANG": "C.UTF-8",
           "PYTHONNOUSERSITE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "MALLOC_ARENA_MAX": "2",    # glibc's per-thread arenas would eat the address-space limit
           "MLCLAB_NUM_THREADS": "1", "TVM_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # The package itself, where it is not installed in the interpreter's site-packages (a checkout).
    root = Path(__file__).resolve().parents[2]          # the folder holding mlclab/
    if "site-packages" not in root.parts:
        env["PYTHONPATH"] = str(root)
    return env


def launch(argv: list, box: Path, env: dict, uid: Optional[int], log: Path, total_s: float,
           cwd: Optional[Path] = None) -> tuple[Run, bytes]:
    """Run ``argv`` in ``box`` (as ``uid``, in its own namespaces where :func:`isolation` allows);
    stdout is returned, stderr goes to ``log``. Everything it started is killed when it ends or
    at ``total_s``."""
    start = time.monotonic()
    if isolation() != "none":
        argv = ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--net", "--kill-child",
                "--", "sh", "-c", _ENTER, "sh", str(box), *_drop(uid), *argv]
    with open(log, "ab") as err:
        proc = subprocess.Popen(argv, cwd=cwd or box / "work", env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        stopped = ""
        try:
            out, _ = proc.communicate(timeout=total_s)
        except subprocess.TimeoutExpired:
            stopped = f"stopped at the total time limit of {total_s:g} s"
            _kill_session(proc.pid)
            out, _ = proc.communicate()
    _kill_session(proc.pid)
    return Run(proc.returncode, stopped, time.monotonic() - start), out


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def read_own_file(path: Path, uid: Optional[int], limit: int) -> Optional[bytes]:
    """A file the box wrote, read without following a link it planted or reading past ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        foreign = uid is not None and st.st_uid != uid
        if not stat.S_ISREG(st.st_mode) or foreign or st.st_size > limit:
            return None
        return f.read(limit + 1)[:limit]


# ----------------------------------------------------------------------------- inside the box
def set_limits(cpu_s: int, memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (512 << 20, 512 << 20))
    if os.getuid() != 0:     # per uid: a fork bomb stops at this many processes of its own slot
        resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))


def execute(notebook: Path, answers: Path, salt: int, keys: list, cell_s: float) -> int:
    """Run every cell (an error is the student's, the next cell still runs; a cell over ``cell_s``
    is interrupted), then export the answers from the same kernel."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_code_cell

    from .export import CACHE_MARK

    nb = nbformat.read(notebook, as_version=4)
    export = new_code_cell("import mlclab.course.export as __mlclab_export\n"
                           f"__mlclab_export.write({keys!r}, {salt}, {str(answers)!r}, globals())\n"
                           "__mlclab_export.report_cache()")
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells.append(export)
    client = NotebookClient(nb, kernel_name="python3", timeout=cell_s, allow_errors=True,
                            interrupt_on_timeout=True,
                            resources={"metadata": {"path": os.getcwd()}})
    with client.setup_kernel():
        for number, cell in enumerate([*code, export]):
            if cell is export:
                label = "the export of the answers"
            else:
                label = f"cell {number + 1} of {len(code)}"
            print(f"[sandbox] running {label}", file=sys.stderr, flush=True)
            started = time.monotonic()
            try:
                client.execute_cell(cell, nb.cells.index(cell))
            except CellTimeoutError:
                pass
            except DeadKernelError:
                print(f"[sandbox] the kernel died in {label} (a memory or CPU limit?)",
                      file=sys.stderr, flush=True)
                return KERNEL_DIED
            if time.monotonic() - started >= cell_s:
                print(f"[sandbox] {label} ran past the per-cell limit of {cell_s:g} s: interrupted",
                      file=sys.stderr, flush=True)
            for out in cell.get("outputs", []):
                if cell is export and out.get("output_type") == "stream":
                    for line in str(out.get("text", "")).splitlines():
                        if line.startswith(CACHE_MARK):
                            print(f"[sandbox] compile cache: {line[len(CACHE_MARK):][:300]}",
                                  file=sys.stderr, flush=True)
                if out.get("output_type") == "error":
                    print(f"[sandbox] {label}: {out.get('ename')}: {str(out.get('evalue'))[:300]}",
                          file=sys.stderr, flush=True)
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    answers, salt, cell_s, cpu_s, memory_mb, notebook, *keys = argv
    set_limits(int(cpu_s), int(memory_mb))
    return execute(Path(notebook), Path(answers), int(salt), keys, float(cell_s))


if __name__ == "__main__":
    sys.exit(main())
