"""Several threads, limits and huge values: compiling and calling from threads works, and
nothing a student types hangs.

Each case runs in a fresh interpreter with a timeout: a hang shows up as a timeout and a
crash as a negative return code, instead of taking the test run down.
"""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    # TVM's BlockBuilder keeps the builder in use on a class-level stack shared by threads:
    # unserialised, 3-15 of these 24 compiles failed with "TVM rejected this expression:
    # AssertionError". A tiny switch interval makes the threads interleave as often as they can.
    "compiling in four threads": """
        import sys, threading
        sys.setswitchinterval(1e-6)
        import numpy as np, mlclab

        def source(i):
            return (f"def g(a: Tensor[('n', {i + 2}), f32]):\\n    return sum(a * {i}.0, axis=1)\\n"
                    f"def f(a: Tensor[('n', {i + 2}), f32], b: Tensor[({i + 2}, 3), f32]):\\n"
                    f"    y = relu(a @ b) + {i}.5\\n    z = softmax(y, axis=1)\\n    w = g(a)\\n"
                    f"    if sum(a) > 3.0:\\n        q = z * 2.0\\n"
                    f"    else:\\n        q = z - 1.0\\n"
                    f"    return exp(q) * 2.0, w\\n")

        results = {}
        def work(k):
            for i in range(6 * k, 6 * k + 6):
                f = mlclab.compile(source(i))["f"]
                a, b = np.ones((2, i + 2), "f4"), np.full((i + 2, 3), 0.5, "f4")
                results[i] = all(np.allclose(x, y, rtol=1e-5) for x, y in
                                 zip(f(a, b), f.reference(a, b)))
        in_threads(work, 4)
        assert len(results) == 24 and all(results.values()), results
        print("ok")
    """,
    # torch.export keeps process-wide state: unserialised, two imports at once failed with
    # "does model(*example_args) run in PyTorch?" about a model that runs.
    "from_torch in three threads": """
        import sys, threading
        sys.setswitchinterval(1e-6)
        import numpy as np, torch, mlclab

        class Scaled(torch.nn.Module):
            def __init__(self, k):
                super().__init__()
                self.linear, self.k = torch.nn.Linear(8, 4), k
            def forward(self, x):
                return torch.relu(self.linear(x)) * self.k

        results = {}
        def work(k):
            model = Scaled(k)
            f = mlclab.from_torch(model, torch.randn(2, 8))
            x = np.random.default_rng(k).standard_normal((2, 8), dtype="f4")
            with torch.no_grad():
                results[k] = np.allclose(f(x), model(torch.from_numpy(x)).numpy(), atol=1e-5)
        in_threads(work, 3)
        assert results == {0: True, 1: True, 2: True}, results
        print("ok")
    """,
    # Each thread calling a parallel kernel gets TVM worker threads of its own; under a memory
    # cap they cannot all start. That is the student's limit, said as one: a MemoryError
    # naming it, and the process finishes.
    "eight threads calling one function under a memory cap": """
        import resource, threading
        import numpy as np, mlclab
        f = mlclab.compile('def f(a: Tensor[("n", 64), f32], b: Tensor[(64, 32), f32]):\\n'
                           '    return relu(a @ b) + 1.0')["f"]
        b = np.random.default_rng(0).standard_normal((64, 32), dtype="f4")
        ready, go = threading.Barrier(9), threading.Event()
        errors, wrong = [], []
        def work(k):
            rng = np.random.default_rng(k)
            cases = []
            for i in range(20):   # the expected values computed before the cap
                a = rng.standard_normal((int(rng.integers(1, 3000)), 64), dtype="f4")
                a = (a, np.asfortranarray(a), a[::-1])[i % 3]
                cases.append((a, np.maximum(a @ b, 0) + 1))
            ready.wait()
            go.wait()
            for i, (a, expected) in enumerate(cases):
                try:
                    out = f(a, b)
                except Exception as exc:
                    errors.append(exc)
                    continue
                if not (np.abs(out - expected) <= 1e-3).all():
                    wrong.append(i)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads: t.start()
        ready.wait()
        size = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1])
        cap = size * 1024 + 60 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        go.set()
        for t in threads: t.join()
        assert not wrong, wrong
        for exc in errors:
            assert type(exc) is MemoryError, repr(exc)
            assert "calling f" in str(exc) and "limit" in str(exc), str(exc)
        print("ok", len(errors))
    """,
    # numpy's take(mode="wrap") subtracts the axis size in a loop: 2**62 never returned.
    "take with an index of 2**62 in the reference and validate": """
        import numpy as np, mlclab
        f = mlclab.compile("def f(x: Tensor[(3, 4), f32], i: Tensor[(3,), i64]):\\n"
                           "    return take(x, i, axis=1), take(x, i)")["f"]
        x = np.arange(12, dtype="f4").reshape(3, 4)
        i = np.array([2**62, -1, 2**63 - 1])
        by_axis, flat = f.reference(x, i)
        assert np.array_equal(by_axis, x[:, [0, 3, 3]]) and np.array_equal(flat, [4, 11, 7])
        assert mlclab.validate(f, x, i).ok
        print("ok")
    """,
}


# Defined in each case's interpreter: ``work(k)`` run in ``count`` threads at once, every
# exception any of them raised failing the case.
IN_THREADS = """
import threading

def in_threads(work, count):
    errors = []
    def guarded(k):
        try:
            work(k)
        except Exception as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert not errors, errors
"""


@pytest.mark.parametrize("name", list(CASES))
def test_finishes_without_error(name):
    proc = subprocess.run([sys.executable, "-c", IN_THREADS + textwrap.dedent(CASES[name])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert proc.stdout.startswith("ok"), proc.stdout


def test_profile_repeat_is_bounded():
    import mlclab

    f = mlclab.compile("def f(a: Tensor[(4,), f32]):\n    return a + 1.0")["f"]
    with pytest.raises(ValueError, match=r"repeat must be an int from 1 to 1000.*10{9}"):
        f.profile(repeat=10**9)
    with pytest.raises(ValueError, match="repeat"):
        f.profile(repeat=0)


# ------------------------------------------------------------ the thread count (issue 29)
from mlclab import threadpool as thread_choice  # noqa: E402


def cgroup_tree(tmp_path, files: dict):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize("files,proc,quota", [
    ({"cpu.max": "max 100000\n"}, "0::/\n", None),
    ({"cpu.max": "150000 100000\n"}, "0::/\n", 1.5),
    # the tightest of the process's cgroup and its parents
    ({"cpu.max": "400000 100000", "kube/pod/cpu.max": "max 100000",
      "kube/cpu.max": "50000 100000"}, "0::/kube/pod\n", 0.5),
    # a container sees its own cgroup at the mount although /proc names the host's path
    ({"cpu.max": "200000 100000"}, "0::/host/path/not/here\n", 2.0),
    ({"cpu,cpuacct/cpu.cfs_quota_us": "-1", "cpu,cpuacct/cpu.cfs_period_us": "100000"},
     "4:cpu,cpuacct:/\n", None),
    ({"cpu,cpuacct/docker/cpu.cfs_quota_us": "250000",
      "cpu,cpuacct/docker/cpu.cfs_period_us": "100000"}, "4:cpu,cpuacct:/docker\n", 2.5),
    ({"cpu.max": "garbage"}, "0::/\n", None),
    ({}, "", None),
])
def test_the_cgroup_quota_is_read_from_v1_and_v2(tmp_path, files, proc, quota):
    assert thread_choice.cgroup_quota(cgroup_tree(tmp_path, files), proc) == quota


@pytest.mark.parametrize("env,affinity,quota,count,why", [
    ({}, 4, None, 4, "4 CPUs in this process's affinity"),
    ({}, 4, 1.5, 2, "quota is 1.5 CPUs"),
    ({}, 2, 8.0, 2, "quota, 8 CPUs, allows them"),
    ({}, 8, 0.2, 1, "quota is 0.2 CPUs"),
    ({"MLCLAB_NUM_THREADS": "3"}, 1, 0.5, 3, "MLCLAB_NUM_THREADS=3"),
    ({"TVM_NUM_THREADS": "5"}, 2, None, 5, "TVM_NUM_THREADS=5 was set before mlclab"),
    # mlclab's own TVM_NUM_THREADS, inherited by a child process, is chosen again
    ({"TVM_NUM_THREADS": "2", "_MLCLAB_SET_TVM_NUM_THREADS": "2"}, 1, None, 1, "1 CPU "),
])
def test_the_count_is_the_tightest_limit_unless_overridden(env, affinity, quota, count, why):
    choice = thread_choice.choose(env, affinity, quota)
    assert choice.count == count and why in choice.reason, choice
    assert why in str(choice)


def test_a_bad_override_is_said_and_ignored():
    with pytest.warns(UserWarning, match=r"MLCLAB_NUM_THREADS='two' is not a thread count"):
        choice = thread_choice.choose({"MLCLAB_NUM_THREADS": "two"}, 2, None)
    assert choice.count == 2


def test_the_pool_stays_inside_the_affinity_it_was_given():
    # Under `taskset -c 0` TVM's pool pinned the calling thread to every core: the process was
    # allowed {0, 1} after its first parallel call. Two threads asked for on one CPU, so a
    # worker exists to be pinned.
    code = textwrap.dedent("""
        import os
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
        import numpy as np, mlclab
        f = mlclab.compile('def f(a: Tensor[(256, 256), f32]):\\n    return a @ a')["f"]
        a = np.ones((256, 256), "f4")
        assert np.allclose(f(a), 256.0)
        seen = {t: os.sched_getaffinity(int(t)) for t in os.listdir("/proc/self/task")}
        print(len(cpus), cpus[0], len(seen), sorted(set().union(*seen.values())))
        print(mlclab.threads())
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, MLCLAB_NUM_THREADS="2")
    env.pop("TVM_BIND_THREADS", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, second = proc.stdout.splitlines()
    available, cpu, thread_count, allowed = first.split(" ", 3)
    assert allowed == f"[{cpu}]", proc.stdout
    assert int(thread_count) >= 2, "TVM's worker thread was never started"
    assert second.startswith("2 threads: MLCLAB_NUM_THREADS=2") and "not pinned" in second


def test_a_quota_free_process_under_taskset_runs_one_thread():
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "import mlclab; c = mlclab.threads(); print(c.count, os.environ['TVM_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MLCLAB_NUM_THREADS", "TVM_NUM_THREADS")}
    env["PYTHONPATH"] = ROOT
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    quota = thread_choice.cgroup_quota()
    assert proc.stdout.split() == ["1", "1"] or (quota is not None and quota < 1), proc.stdout


@pytest.mark.parametrize("count, extent, even", [(2, 24, True), (2, 9, True), (2, 7, False),
                                                  (64, 24, False), (64, 256, True),
                                                  (3, 10, False)])
def test_a_parallel_loop_is_balanced_over_mlclab_s_threads_not_the_host_s_cores(
        monkeypatch, count, extent, even):
    # a container with a quota of 2 CPUs on a 64-core host runs 2 threads: 24 column blocks
    # keep both busy, which the host's 64 cores would have called unbalanced
    from mlclab.backend.schedules.tir_util import balanced

    monkeypatch.setattr(thread_choice, "_CHOSEN",
                        thread_choice.ThreadChoice(count, "test", 64, None, False))
    assert balanced(extent) is even


def test_graders_run_on_whole_cpus_of_the_quota(monkeypatch):
    from mlclab.course import grading

    monkeypatch.setattr(thread_choice, "affinity_count", lambda: 8)
    monkeypatch.setattr(thread_choice, "cgroup_quota", lambda: 2.5)
    assert grading.cpu_quota() == 2
    monkeypatch.setattr(thread_choice, "cgroup_quota", lambda: 0.5)
    assert grading.cpu_quota() == 1
    monkeypatch.setattr(thread_choice, "cgroup_quota", lambda: None)
    assert grading.cpu_quota() == 8
