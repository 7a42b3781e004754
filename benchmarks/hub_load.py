"""A class on one machine, load-tested: a real JupyterHub and simulated students (issue 29).

    python benchmarks/hub_load.py                  # 4, 8 and 16 students, lesson 01
    python benchmarks/hub_load.py --quick          # 2 students, 5 cells: the smoke run
    python benchmarks/hub_load.py --students 1 --lesson 09 --json out.json
    python benchmarks/hub_load.py --shared-cache   # a class cache warmed once, read by all
    python benchmarks/hub_load.py --install-proxy  # only install the proxy (dev.sh does)

What runs, all on 127.0.0.1 and all started and stopped by this script:

* JupyterHub (``jupyterhub`` from pip, the ``hub`` extra) with its proxy,
  configurable-http-proxy from npm: ``benchmarks/hub/package.json`` and its lock file copied to
  ``build/hub-proxy/`` and installed there with ``npm ci`` (``--install-proxy``; never committed).
* SharedPasswordAuthenticator (a wrong password is refused: the run checks it) and
  SimpleLocalProcessSpawner: every student's server is a ``jupyterhub-singleuser`` process of
  this interpreter with its own home, into which the lessons are copied (as nbgitpuller would).
* An instructor service token adds the roster; then each student, in its own thread, does what
  hubtraf and mobu do: logs in through the Hub REST API (``POST /hub/api/users/NAME/tokens``
  with its password), starts its server (``POST .../server``, polled until ready), opens the
  lesson as JupyterLab does (``POST /user/NAME/api/sessions``), connects to the kernel's
  websocket through the proxy and runs the lesson's code cells in order, timing each from the
  ``execute_request`` to the kernel going idle. Then it shuts its kernel and server down.

A failure is a login, spawn or kernel start that did not succeed, a cell that raised where the
lesson does not expect it (tag ``raises-exception``), or a time limit hit. Memory is sampled
every second over the hub's whole process tree (hub, proxy, servers, kernels): the peak of the
summed PSS (shared pages split between processes: what the class really holds) and of the summed
RSS, and each student's own peak (its server plus kernel: PSS, RSS, and the sum of the two
processes' own high-water marks, VmHWM, which no sampling can miss: an upper bound of what a
pod of its own would peak at). CPU: the core-seconds the class used,
and those the rest of the machine used meanwhile (a shared machine: the figures are noisy, and
the load is printed beside them).

Every loop is bounded (``--spawn-timeout``, ``--cell-timeout``); the hub is stopped at the end,
and any process of its tree still alive is killed, by id.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
import psutil
import requests
import websocket
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROXY_SPEC = HERE / "hub"                    # package.json + package-lock.json
PROXY_DIR = ROOT / "build" / "hub-proxy"     # where npm ci installs it (gitignored)
PROXY_BIN = PROXY_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
LESSONS = ROOT / "lessons"
LOOPBACK = "127.0.0.1"


# ------------------------------------------------------------------------------ the proxy
def install_proxy() -> Path:
    """configurable-http-proxy as the lock file pins it, in build/hub-proxy/ (idempotent)."""
    PROXY_DIR.mkdir(parents=True, exist_ok=True)
    stale = False
    for name in ("package.json", "package-lock.json"):
        source, target = PROXY_SPEC / name, PROXY_DIR / name
        if not target.exists() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
            stale = True
    if stale or not PROXY_BIN.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("hub_load: npm is needed to install configurable-http-proxy "
                             "(sudo apt-get install npm; ./dev.sh setup does it)")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=PROXY_DIR, check=True)
    return PROXY_BIN


# ------------------------------------------------------------------------------ the hub
def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


HUB_CONFIG = """\
c = get_config()  # noqa
c.JupyterHub.ip = {loopback!r}
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = {loopback!r}
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://{loopback}:{api_port}"
c.JupyterHub.db_url = "sqlite:///{work}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{work}/cookie_secret"
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = {password!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{work}/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.args = {server_args!r}
c.Spawner.start_timeout = {spawn_timeout}
c.Spawner.http_timeout = {spawn_timeout}
c.Spawner.environment = {environment!r}
c.JupyterHub.concurrent_spawn_limit = 0
c.JupyterHub.services = [{{"name": "instructor", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "instructor", "scopes": ["admin:users", "admin:servers"],
                            "services": ["instructor"]}}]
"""


class Hub:
    """JupyterHub with its proxy on loopback ports, in a scratch directory; stopped on exit."""

    def __init__(self, work: Path, spawn_timeout: int, environment: dict[str, str]):
        self.work = work
        self.port = free_port()
        self.url = f"http://{LOOPBACK}:{self.port}"
        self.password = secrets.token_urlsafe(12)
        self.token = secrets.token_hex(32)
        self.spawn_timeout = spawn_timeout
        self.environment = environment
        self.process: subprocess.Popen | None = None
        self.seen: dict[int, psutil.Process] = {}   # every process of the tree ever sampled
        self.leftovers: list[int] = []                # those still alive after the hub stopped

    def __enter__(self) -> "Hub":
        config = self.work / "jupyterhub_config.py"
        singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
        config.write_text(HUB_CONFIG.format(
            loopback=LOOPBACK, port=self.port, hub_port=free_port(), api_port=free_port(),
            proxy=str(install_proxy()), work=self.work, password=self.password,
            singleuser=str(singleuser), spawn_timeout=self.spawn_timeout,
            environment=self.environment, token=self.token,
            # Jupyter Server refuses to run as root without it (CI runs as root)
            server_args=["--allow-root"] if os.geteuid() == 0 else []))
        self.log = open(self.work / "jupyterhub.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.work,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self.wait_until_up(timeout=120)
        except BaseException:   # a failed start, or a stop (SIGTERM) while starting
            self.__exit__(None, None, None)
            raise
        return self

    def wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterHub exited ({self.process.returncode}):\n"
                                   + self.log_tail())
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=5).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"JupyterHub did not answer within {timeout} s:\n" + self.log_tail())

    def log_tail(self, chars: int = 3000) -> str:
        self.log.flush()
        return (self.work / "jupyterhub.log").read_text(errors="replace")[-chars:]

    def tree(self) -> list[psutil.Process]:
        """The hub and every process under it (proxy, servers, kernels), remembered by id."""
        try:
            hub = psutil.Process(self.process.pid)
            procs = [hub, *hub.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        for p in procs:
            self.seen.setdefault(p.pid, p)
        return procs

    def admin(self, method: str, path: str, **kwargs) -> requests.Response:
        return requests.request(method, f"{self.url}/hub/api{path}", timeout=60,
                                headers={"Authorization": f"token {self.token}"}, **kwargs)

    def __exit__(self, *exc) -> None:
        if self.process is None:
            return
        self.tree()
        # SIGTERM: the hub stops every server it spawned (cleanup_servers) and its proxy.
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        leftovers = [p for p in self.seen.values() if p.is_running()]
        for p in leftovers:          # only processes this hub started, each by its id
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(leftovers, timeout=30)
        self.leftovers = [p.pid for p in leftovers]
        self.log.close()


# ------------------------------------------------------------------------------ a student
@dataclass
class Cell:
    index: int
    seconds: float
    status: str          # ok, error (expected), failed, timeout


@dataclass
class Student:
    name: str
    login_s: float | None = None
    spawn_s: float | None = None
    kernel_s: float | None = None
    lesson_s: float | None = None
    cells: list[Cell] = field(default_factory=list)
    failure: str | None = None       # the first thing that went wrong, said plainly


def lesson_cells(lesson: Path, limit: int | None) -> list[tuple[str, bool]]:
    """The lesson's code cells as (source, whether the lesson expects it to raise)."""
    cells = [c for c in nbformat.read(lesson, as_version=4).cells if c.cell_type == "code"]
    cells = cells[:limit] if limit else cells
    return [(c.source, "raises-exception" in c.metadata.get("tags", [])) for c in cells]


class KernelChannel:
    """One kernel's websocket (the JSON protocol JupyterLab speaks), through the proxy."""

    def __init__(self, url: str, token: str, timeout: float):
        self.ws = websocket.create_connection(
            url, header=[f"Authorization: token {token}"], timeout=timeout)
        self.session = Session(key=b"", username="student")

    def send(self, msg_type: str, content: dict) -> str:
        msg = self.session.msg(msg_type, content)
        msg["channel"] = "shell"
        self.ws.send(json.dumps(msg, default=json_default))
        return msg["header"]["msg_id"]

    def wait(self, msg_id: str, deadline: float, want_idle: bool = True) -> dict:
        """Messages until the reply to msg_id (and the kernel idle after it); the reply."""
        reply, idle = None, not want_idle
        while reply is None or not idle:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.ws.settimeout(left)
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["channel"] == "shell":
                reply = msg
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        return reply

    def close(self) -> None:
        self.ws.close()


def run_student(hub: Hub, student: Student, lesson: Path, cells: list[tuple[str, bool]],
                args) -> None:
    """Log in, start the server, open the lesson, run its cells, shut down; record each step."""
    api = f"{hub.url}/hub/api"
    start = time.monotonic()
    try:
        r = requests.post(f"{api}/users/{student.name}/tokens", timeout=120,
                          json={"auth": {"username": student.name, "password": hub.password},
                                "note": "hub_load student", "expires_in": 3600})
        r.raise_for_status()
        auth = {"Authorization": f"token {r.json()['token']}"}
        student.login_s = time.monotonic() - start

        start = time.monotonic()
        r = requests.post(f"{api}/users/{student.name}/server", headers=auth, timeout=120)
        if r.status_code not in (201, 202):
            raise RuntimeError(f"spawn refused: {r.status_code} {r.text[:200]}")
        deadline = start + args.spawn_timeout
        while True:
            server = requests.get(f"{api}/users/{student.name}", headers=auth,
                                  timeout=60).json().get("servers", {}).get("")
            if server and server.get("ready"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"server not ready after {args.spawn_timeout} s")
            if not server or server.get("stopped"):
                raise RuntimeError("server stopped while starting")
            time.sleep(0.5)
        student.spawn_s = time.monotonic() - start
        base = f"{hub.url}{server['url']}"

        start = time.monotonic()
        r = requests.post(f"{base}api/sessions", headers=auth, timeout=120, json={
            "path": f"lessons/{lesson.name}", "name": lesson.name, "type": "notebook",
            "kernel": {"name": "python3"}})
        r.raise_for_status()
        session_id, kernel_id = r.json()["id"], r.json()["kernel"]["id"]
        ws_url = base.replace("http://", "ws://", 1) + f"api/kernels/{kernel_id}/channels"
        channel = KernelChannel(ws_url, auth["Authorization"].split()[1], args.cell_timeout)
        try:
            deadline = start + args.spawn_timeout
            while True:   # the kernel may not listen yet: ask again, as JupyterLab does
                try:
                    channel.wait(channel.send("kernel_info_request", {}),
                                 min(deadline, time.monotonic() + 5), want_idle=False)
                    break
                except TimeoutError:
                    if time.monotonic() > deadline:
                        raise TimeoutError("kernel did not answer kernel_info") from None
            student.kernel_s = time.monotonic() - start

            lesson_start = time.monotonic()
            for index, (source, expected_error) in enumerate(cells):
                sent = time.monotonic()
                msg_id = channel.send("execute_request", {
                    "code": source, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
                try:
                    reply = channel.wait(msg_id, sent + args.cell_timeout)
                except TimeoutError:
                    student.cells.append(Cell(index, time.monotonic() - sent, "timeout"))
                    raise TimeoutError(f"cell {index} ran over {args.cell_timeout} s") from None
                seconds = time.monotonic() - sent
                content = reply["content"]
                if content["status"] == "ok":
                    student.cells.append(Cell(index, seconds, "ok"))
                elif expected_error:
                    student.cells.append(Cell(index, seconds, "error"))
                else:
                    student.cells.append(Cell(index, seconds, "failed"))
                    raise RuntimeError(f"cell {index}: {content.get('ename')}: "
                                       f"{str(content.get('evalue'))[:200]}")
                if args.think:
                    time.sleep(args.think)
            student.lesson_s = time.monotonic() - lesson_start
        finally:
            channel.close()
            requests.delete(f"{base}api/sessions/{session_id}", headers=auth, timeout=60)
    except Exception as error:   # one student's failure is a result, not the end of the run
        student.failure = f"{type(error).__name__}: {error}"
    finally:
        try:
            requests.delete(f"{api}/users/{student.name}/server", timeout=120,
                            headers={"Authorization": f"token {hub.token}"})
        except requests.RequestException:
            pass   # the hub stops every server at exit anyway


# ------------------------------------------------------------------------------ sampling
def mem_available() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_rss(pid: int) -> int:
    """A process's high-water resident set (VmHWM): its true peak, not one sample's."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def busy_jiffies() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    idle = values[3] + values[4]
    return (sum(values) - idle) / hz, sum(values) / hz


class Sampler(threading.Thread):
    """Every `period` s: the summed PSS and RSS of the hub's tree, each student's, the load."""

    def __init__(self, hub: Hub, floor: int, period: float = 1.0):
        super().__init__(daemon=True)
        self.hub, self.floor, self.period = hub, floor, period
        self.out_of_memory = False
        self.stop = threading.Event()
        self.peak_pss = self.peak_rss = self.peak_infra_pss = 0
        self.student_peak: dict[str, int] = {}       # PSS: its share of the machine
        self.student_peak_rss: dict[str, int] = {}   # RSS: what its pod's cgroup is charged
        self.hwm: dict[int, tuple[str, int]] = {}     # each student process's VmHWM, by id
        self.cpu: dict[int, float] = {}          # core-seconds per process id, last seen
        self.max_load = 0.0
        self.min_available = mem_available()

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.period)

    def sample(self) -> None:
        pss = rss = infra = 0
        per_student: dict[str, int] = {}
        per_student_rss: dict[str, int] = {}
        owner: dict[int, str] = {}
        for p in self.hub.tree():
            try:
                with p.oneshot():
                    info = p.memory_full_info()
                    times = p.cpu_times()
                    parent = p.ppid()
                    user = None
                    if "jupyterhub-singleuser" in " ".join(p.cmdline()):
                        user = p.environ().get("JUPYTERHUB_USER")
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            self.cpu[p.pid] = times.user + times.system
            pss, rss = pss + info.pss, rss + info.rss
            user = user or owner.get(parent)   # a kernel belongs to its server's student
            if user:
                owner[p.pid] = user
                self.hwm[p.pid] = (user, max(peak_rss(p.pid), self.hwm.get(p.pid, ("", 0))[1]))
                per_student[user] = per_student.get(user, 0) + info.pss
                per_student_rss[user] = per_student_rss.get(user, 0) + info.rss
            else:
                infra += info.pss
        self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
        self.peak_infra_pss = max(self.peak_infra_pss, infra)
        for user, value in per_student.items():
            self.student_peak[user] = max(self.student_peak.get(user, 0), value)
        for user, value in per_student_rss.items():
            self.student_peak_rss[user] = max(self.student_peak_rss.get(user, 0), value)
        self.max_load = max(self.max_load, os.getloadavg()[0])
        self.min_available = min(self.min_available, mem_available())
        if self.min_available < self.floor and not self.out_of_memory:
            # The machine is shared: stop the class before it crowds anyone out.
            self.out_of_memory = True
            self.hub.process.send_signal(signal.SIGTERM)


# ------------------------------------------------------------------------------ one run
def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_class(count: int, lesson: Path, args) -> dict:
    """`count` students through one lesson on a fresh hub; the figures of that run."""
    work = Path(tempfile.mkdtemp(prefix=f"mlclab-hub-{count}-"))
    cells = lesson_cells(lesson, args.cells)
    names = [f"student{i:02d}" for i in range(1, count + 1)]
    for name in names:   # each home holds the course, as nbgitpuller would put it
        shutil.copytree(LESSONS, work / "home" / name / "lessons")
    environment = {"PYTHONPATH": str(ROOT)}
    if args.threads:
        environment["MLCLAB_NUM_THREADS"] = str(args.threads)
    if args.shared_cache:
        environment["MLCLAB_SHARED_CACHE_DIR"] = str(args.shared_cache)
    load_before = os.getloadavg()
    available_before = mem_available()
    busy0, total0 = busy_jiffies()
    wall0 = time.monotonic()
    with Hub(work, args.spawn_timeout, environment) as hub:
        r = requests.post(f"{hub.url}/hub/api/users/{names[0]}/tokens", timeout=60,
                          json={"auth": {"username": names[0], "password": "wrong" * 3}})
        wrong_password_refused = r.status_code == 403
        r = hub.admin("POST", "/users", json={"usernames": names})
        r.raise_for_status()
        sampler = Sampler(hub, floor=int(args.min_free_gb * 2**30))
        sampler.start()
        students = [Student(name) for name in names]
        threads = [threading.Thread(target=run_student, args=(hub, s, lesson, cells, args),
                                    daemon=True) for s in students]
        for t in threads:
            t.start()
            if args.stagger:
                time.sleep(args.stagger)
        for t in threads:
            t.join(timeout=args.spawn_timeout * 2 + args.cell_timeout * len(cells) + 120)
        hung = [s.name for s, t in zip(students, threads) if t.is_alive()]
        sampler.stop.set()
        sampler.join(timeout=30)
        hub_cpu = sum(sampler.cpu.values())
    busy1, total1 = busy_jiffies()
    wall = time.monotonic() - wall0
    leftovers = hub.leftovers
    shutil.rmtree(work, ignore_errors=True)

    latencies = [c.seconds for s in students for c in s.cells]
    failures = [f"{s.name}: {s.failure}" for s in students if s.failure]
    failures += [f"{name}: still running at the time limit" for name in hung]
    if sampler.out_of_memory:
        failures.append(f"stopped: less than {args.min_free_gb} GB of the machine left free")
    peaks = sorted(sampler.student_peak.values())
    peaks_rss = sorted(sampler.student_peak_rss.values())
    hwm: dict[str, int] = {}
    for user, value in sampler.hwm.values():
        hwm[user] = hwm.get(user, 0) + value
    peaks_hwm = sorted(hwm.values())
    mb = 2 ** 20
    return {
        "students": count, "lesson": lesson.name, "cells": len(cells),
        "threads": args.threads, "think_s": args.think,
        "shared_cache": bool(args.shared_cache),
        "failures": failures, "failed_students": len({f.split(':')[0] for f in failures}),
        "wrong_password_refused": wrong_password_refused,
        "login_p50_s": percentile([s.login_s for s in students if s.login_s], 0.5),
        "spawn_p50_s": percentile([s.spawn_s for s in students if s.spawn_s], 0.5),
        "spawn_max_s": max([s.spawn_s for s in students if s.spawn_s], default=None),
        "kernel_p50_s": percentile([s.kernel_s for s in students if s.kernel_s], 0.5),
        "cells_run": len(latencies),
        "cell_p50_s": percentile(latencies, 0.5), "cell_p95_s": percentile(latencies, 0.95),
        "lesson_p50_s": percentile([s.lesson_s for s in students if s.lesson_s], 0.5),
        "lesson_max_s": max([s.lesson_s for s in students if s.lesson_s], default=None),
        "peak_pss_mb": sampler.peak_pss / mb, "peak_rss_mb": sampler.peak_rss / mb,
        "hub_proxy_pss_mb": sampler.peak_infra_pss / mb,
        "student_peak_pss_mb": {
            "median": statistics.median(peaks) / mb if peaks else None,
            "max": peaks[-1] / mb if peaks else None},
        "student_peak_rss_mb": {
            "median": statistics.median(peaks_rss) / mb if peaks_rss else None,
            "max": peaks_rss[-1] / mb if peaks_rss else None},
        # server's and kernel's own high-water marks added: an upper bound of the pod's peak
        "student_hwm_mb": {
            "median": statistics.median(peaks_hwm) / mb if peaks_hwm else None,
            "max": peaks_hwm[-1] / mb if peaks_hwm else None},
        "machine_memory_drop_mb": (available_before - sampler.min_available) / mb,
        "class_cpu_s": hub_cpu, "others_cpu_s": max(0.0, (busy1 - busy0) - hub_cpu),
        "machine_cpu_s": total1 - total0, "wall_s": wall,
        "load_before": load_before[0], "load_max": sampler.max_load,
        "leftover_processes": leftovers,
        "student_detail": [asdict(s) for s in students],
    }


def fmt(value, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def print_table(runs: list[dict]) -> None:
    print(f"{'students':>8} {'failed':>6} {'spawn p50':>9} {'kernel p50':>10} {'cell p50':>8} "
          f"{'cell p95':>8} {'lesson p50':>10} {'peak PSS':>9} {'student PSS':>11} "
          f"{'student RSS':>11} {'RSS HWM':>11} {'class CPU':>9} {'others CPU':>10} "
          f"{'load':>10}")
    for r in runs:
        pss, rss, hwm = (r["student_peak_pss_mb"], r["student_peak_rss_mb"],
                         r["student_hwm_mb"])
        print(f"{r['students']:>8} {r['failed_students']:>6} {fmt(r['spawn_p50_s']):>8}s "
              f"{fmt(r['kernel_p50_s']):>9}s {fmt(r['cell_p50_s'], '.2f'):>7}s "
              f"{fmt(r['cell_p95_s'], '.2f'):>7}s {fmt(r['lesson_p50_s']):>9}s "
              f"{fmt(r['peak_pss_mb'], ',.0f'):>6} MB {fmt(pss['median'], ',.0f'):>4}/"
              f"{fmt(pss['max'], ',.0f'):>4} MB {fmt(rss['median'], ',.0f'):>4}/"
              f"{fmt(rss['max'], ',.0f'):>4} MB {fmt(hwm['median'], ',.0f'):>4}/"
              f"{fmt(hwm['max'], ',.0f'):>4} MB {fmt(r['class_cpu_s'], '.0f'):>7} s "
              f"{fmt(r['others_cpu_s'], '.0f'):>8} s "
              f"{r['load_before']:>4.1f}->{r['load_max']:<4.1f}")
    for r in runs:
        for failure in r["failures"]:
            print(f"  {r['students']} students: {failure}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, nargs="+", default=[4, 8, 16],
                    help="class sizes, one hub run each (default: 4 8 16)")
    ap.add_argument("--lesson", default="01", help="lesson number or file name (default: 01)")
    ap.add_argument("--cells", type=int, default=None,
                    help="run only the lesson's first N code cells (default: all)")
    ap.add_argument("--think", type=float, default=0.0,
                    help="seconds a student pauses between cells (default: 0, a stampede)")
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="seconds between two students' logins (default: 0, all at once)")
    ap.add_argument("--threads", type=int, default=1,
                    help="MLCLAB_NUM_THREADS for every kernel (default: 1; 0 leaves it unset)")
    ap.add_argument("--spawn-timeout", type=int, default=600,
                    help="seconds for a server, or a kernel, to come up (default: 600)")
    ap.add_argument("--cell-timeout", type=int, default=600,
                    help="seconds one cell may run (default: 600)")
    ap.add_argument("--min-free-gb", type=float, default=4.0,
                    help="GB the machine keeps free: a class that would not leave it is "
                    "refused, and a run that eats into it is stopped (a shared machine)")
    ap.add_argument("--expect-mb", type=float, default=700,
                    help="memory a student is expected to need, to refuse a class too big")
    ap.add_argument("--shared-cache", action="store_true",
                    help="warm a class compile cache with the lesson once (python -m "
                    "mlclab.course warm-cache) and give every kernel it read-only "
                    "(MLCLAB_SHARED_CACHE_DIR), as deploy/ does; default: each student's "
                    "own cache starts empty")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 2 students, the lesson's first 5 cells")
    ap.add_argument("--install-proxy", action="store_true",
                    help="only install configurable-http-proxy into build/hub-proxy/")
    args = ap.parse_args(argv)
    # A SIGTERM (a timeout, a CI stop) unwinds like Ctrl-C, so the hub and its tree are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    if args.install_proxy:
        print(f"configurable-http-proxy: {install_proxy()}")
        return 0
    if args.quick:
        args.students, args.cells = [2], 5
    matches = sorted(LESSONS.glob(f"{args.lesson}*.ipynb")) or sorted(LESSONS.glob(args.lesson))
    if len(matches) != 1:
        ap.error(f"--lesson {args.lesson!r} names {len(matches)} lessons in {LESSONS}")
    lesson = matches[0]

    print(f"mlclab hub load test -- {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    print(f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GB; "
          f"lesson {lesson.name}, MLCLAB_NUM_THREADS={args.threads or 'unset'}, "
          f"think {args.think} s; load before {os.getloadavg()[0]:.2f}")
    if args.shared_cache:
        args.shared_cache = Path(tempfile.mkdtemp(prefix="mlclab-class-cache-"))
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "mlclab.course", "warm-cache", str(lesson),
                        "--to", str(args.shared_cache)], check=True, timeout=1800,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL)
        entries = len(list(args.shared_cache.glob("??/*/meta.json")))
        print(f"class cache warmed once: {entries} entries in {time.monotonic() - start:.0f} s "
              f"({args.shared_cache}, read-only to the students' kernels)")
    runs = []
    for count in args.students:
        # Bounded memory: refuse a class that cannot fit at --expect-mb a student; the sampler
        # also stops a run whose free memory falls under --min-free-gb.
        need = count * args.expect_mb * 2**20 + args.min_free_gb * 2**30
        if mem_available() < need:
            print(f"{count} students: skipped, {mem_available() / 2**30:.1f} GB free and "
                  f"{need / 2**30:.1f} GB wanted (--min-free-gb)")
            continue
        print(f"{count} students ...", flush=True)
        runs.append(run_class(count, lesson, args))
        if args.json:
            args.json.write_text(json.dumps(runs, indent=1))
    if args.shared_cache:
        shutil.rmtree(args.shared_cache, ignore_errors=True)
    print_table(runs)
    print("cell: execute_request to the kernel idle again; peak PSS: the hub's whole tree "
          "summed; student PSS/RSS: its server and kernel, peak (median/max of the students; "
          "RSS is what a pod's cgroup is charged, HWM each process's own high-water mark "
          "added up); CPU in core-seconds during the run, the "
          "class's and everything else's on the machine; MB are MiB")
    return 0 if runs and all(not r["failures"] and not r["leftover_processes"]
                             for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
