"""mlclab.course.metaschedule: MetaSchedule's tuner in a child process under limits, its result
cached on disk. One real tuning of a small matmul (module-scoped, ~15 s) serves most tests; the
limits are tested on real children (a hang, a native crash, too little memory)."""
import json
import os
import resource
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import mlclab  # (first: TVM's thread pool sized for this process)
import tvm
from tvm import te

from mlclab.backend.targets import resolve_target
from mlclab.course import metaschedule
from mlclab.course.metaschedule import TuningError

SMALL = dict(trials=12, per_round=6, population=32)


def matmul(n=64):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([A, B, C])})


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ms-cache")
    return metaschedule.tune(matmul(), cache_dir=folder, **SMALL), folder


def test_the_search_measured_every_trial_in_its_rounds(tuned):
    result, folder = tuned
    assert not result.cached and result.path.parent == folder and result.path.exists()
    assert len(result.trials) == SMALL["trials"]
    assert sorted(result.rounds) == [1, 2]                  # 12 trials in rounds of 6
    assert all(len(times) == 6 for times in result.rounds.values())
    assert result.best.ms == min(t.ms for t in result.measured) > 0
    # the design space came from MetaSchedule's rules, and its cost model was XGBoost
    assert "MultiLevelTiling" in result.rules and "ParallelizeVectorizeUnroll" in result.rules
    acted = {(a["rule"], a["block"]): a["schedules"] for a in result.acted}
    assert set(acted) == {("MultiLevelTiling", "C"), ("ParallelizeVectorizeUnroll", "root")}
    assert acted["MultiLevelTiling", "C"] == len(result.design_spaces)
    assert result.mutators and abs(sum(result.mutators.values()) - 1) < 1e-6
    assert result.design_spaces and "sample_perfect_tile" in result.design_spaces[0]
    assert result.cost_model.startswith("xgb: MetaSchedule's XGBModel")
    assert result.settings["trials"] == 12 and result.settings["population"] == 32
    assert result.defaults == {"population": 512, "warmup": 100}    # MetaSchedule's, read


def test_the_tuned_kernel_equals_numpy(tuned):
    result, _ = tuned
    sch = result.schedule(matmul())
    assert any(inst.kind.name == "SamplePerfectTile" for inst in sch.trace.insts)
    lib = tvm.compile(sch.mod, target=resolve_target("llvm"))
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((64, 64), dtype="float32") for _ in range(2))
    a, b = tvm.runtime.tensor(a_np), tvm.runtime.tensor(b_np)
    c = tvm.runtime.empty((64, 64), "float32", tvm.cpu())
    lib["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-5, atol=1e-4)


def test_a_rerun_reads_the_cache_and_replays_the_same_trace(tuned, monkeypatch):
    result, folder = tuned
    monkeypatch.setattr(metaschedule, "run_child", _must_not_run)
    again = metaschedule.tune(matmul(), cache_dir=folder, **SMALL)
    assert again.cached and again.path == result.path
    assert again.trials == result.trials
    assert str(again.schedule(matmul()).trace) == str(result.schedule(matmul()).trace)


def test_other_settings_or_another_module_are_another_entry(tuned, monkeypatch):
    result, folder = tuned
    calls = []
    monkeypatch.setattr(metaschedule, "run_child", _replay(result, calls))
    metaschedule.tune(matmul(), cache_dir=folder, **{**SMALL, "trials": 6})
    metaschedule.tune(matmul(32), cache_dir=folder, **SMALL)
    assert len(calls) == 2



def test_a_class_folder_serves_the_tuning_and_keeps_its_bad_entries(tuned, tmp_path,
                                                                    monkeypatch):
    """With no cache_dir, the disk cache's levels: the class's shared folder (an instructor's
    warm-cache run) is read first and never written or cleaned; the student's folder stores."""
    result, _ = tuned
    shared = tmp_path / "shared" / metaschedule.CACHE_NAME
    shared.mkdir(parents=True)
    (shared / result.path.name).write_text(result.path.read_text(), encoding="utf-8")
    user = tmp_path / "user" / metaschedule.CACHE_NAME
    try:
        mlclab.cache_dir(tmp_path / "user", shared=tmp_path / "shared")
        monkeypatch.setattr(metaschedule, "run_child", _must_not_run)
        served = metaschedule.tune(matmul(), **SMALL)
        assert served.cached and served.path == shared / result.path.name
        (shared / result.path.name).write_text("{", encoding="utf-8")      # damaged
        calls = []
        monkeypatch.setattr(metaschedule, "run_child", _replay(result, calls))
        fresh = metaschedule.tune(matmul(), **SMALL)
        assert len(calls) == 1 and fresh.path == user / result.path.name
        assert (shared / result.path.name).read_text(encoding="utf-8") == "{"
        assert metaschedule.tune(matmul(), **SMALL).cached and len(calls) == 1
        mlclab.cache_dir("off", shared="off")        # no disk cache: tuned, nothing stored
        assert metaschedule.tune(matmul(), **SMALL).path is None and len(calls) == 2
    finally:
        mlclab.cache_dir("off", shared="off")


def _must_not_run(*args, **kwargs):
    raise AssertionError("the tuner ran although the cache held the result")


def _replay(result, calls, delay=0.0):
    """A stand-in for the child: the fixture's result, as the child's JSON."""
    entry = json.loads(result.path.read_text())

    def run(request, time_limit_s, memory_mb, argv=None):
        calls.append(request)
        time.sleep(delay)
        return entry["result"]
    return run


CORRUPTIONS = {
    "not JSON": lambda entry, text: text[: len(text) // 2],
    "binary garbage": lambda entry, text: "\x00\xff" * 40,
    "another key": lambda entry, text: json.dumps({**entry, "key": "0" * 64}),
    "another format": lambda entry, text: json.dumps({**entry, "format": 999}),
    "no trials measured": lambda entry, text: json.dumps(
        {**entry, "result": {**entry["result"], "trials": [
            {**t, "ms": None} for t in entry["result"]["trials"]]}}),
    "a trace that does not replay": lambda entry, text: json.dumps(
        {**entry, "result": {**entry["result"], "trials": [
            {**t, "trace": '[[["GetSBlock", [], ["nowhere", "main"], ["b0"]]], {}]'}
            for t in entry["result"]["trials"]]}}),
    "a field missing": lambda entry, text: json.dumps(
        {**entry, "result": {k: v for k, v in entry["result"].items() if k != "rules"}}),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupt_entry_is_a_miss_and_is_tuned_again(tuned, tmp_path, monkeypatch, corruption):
    result, _ = tuned
    text = result.path.read_text()
    entry = json.loads(text)
    path = tmp_path / result.path.name
    path.write_text(CORRUPTIONS[corruption](entry, text), encoding="utf-8",
                    errors="surrogateescape")
    assert metaschedule.load(path, entry["key"], matmul()) is None
    assert not path.exists(), "a bad entry is removed"
    # tune() finds it bad, tunes again and writes a whole entry
    path.write_text(CORRUPTIONS[corruption](entry, text), encoding="utf-8",
                    errors="surrogateescape")
    calls = []
    monkeypatch.setattr(metaschedule, "run_child", _replay(result, calls))
    again = metaschedule.tune(matmul(), cache_dir=tmp_path, **SMALL)
    assert len(calls) == 1 and not again.cached
    assert json.loads(path.read_text()) == entry


def test_a_cache_folder_that_cannot_be_made_tunes_with_a_warning(tuned, tmp_path, monkeypatch):
    result, _ = tuned
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    calls = []
    monkeypatch.setattr(metaschedule, "run_child", _replay(result, calls))
    with pytest.warns(UserWarning, match="cannot be cached"):
        again = metaschedule.tune(matmul(), cache_dir=blocker / "cache", **SMALL)
    assert len(calls) == 1 and again.path is None and again.best == result.best


def test_a_result_the_kernel_cannot_replay_is_a_message(tuned, tmp_path, monkeypatch):
    result, _ = tuned
    entry = json.loads(result.path.read_text())["result"]
    broken = {**entry, "trials": [{**t, "trace": '[[["Nonsense", [], [], []]], {}]'}
                                  for t in entry["trials"]]}
    monkeypatch.setattr(metaschedule, "run_child", lambda *a, **k: broken)
    with pytest.raises(TuningError, match="cannot use"):
        metaschedule.tune(matmul(), cache_dir=tmp_path, **SMALL)
    assert not list(tmp_path.glob("metaschedule-*.json"))


def test_two_kernels_tuning_one_key_tune_it_once(tuned, tmp_path, monkeypatch):
    result, _ = tuned
    calls = []
    monkeypatch.setattr(metaschedule, "run_child", _replay(result, calls, delay=1.0))
    found = []
    workers = [threading.Thread(target=lambda: found.append(
        metaschedule.tune(matmul(), cache_dir=tmp_path, **SMALL))) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(calls) == 1
    assert sorted(r.cached for r in found) == [False, True]


# ------------------------------------------------------------------------------ the limits
def test_the_time_limit_stops_the_child_and_everything_it_started(tmp_path):
    marker = tmp_path / "grandchild-still-running"
    grandchild = f"import time; time.sleep(3); open({str(marker)!r}, 'w').close()"
    hang = ("import subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
            "print('tuning...', flush=True)\n"
            "time.sleep(60)\n")
    started = time.monotonic()
    with pytest.raises(TuningError) as err:
        metaschedule.run_child({}, 1.0, 4096, argv=[sys.executable, "-c", hang])
    assert time.monotonic() - started < 10
    assert "stopped at its time limit of 1 s" in str(err.value)
    assert "tuning..." in str(err.value)              # its last output is quoted
    time.sleep(3.5)
    assert not marker.exists(), "the child's own child outlived the time limit"


def test_a_real_tuning_past_its_time_limit_is_a_message_and_caches_nothing(tmp_path):
    with pytest.raises(TuningError, match="time limit of 0.5 s") as err:
        metaschedule.tune(matmul(), cache_dir=tmp_path, time_limit_s=0.5, **SMALL)
    assert hasattr(err.value, "_render_traceback_"), "shown in a notebook as its message alone"
    assert not list(tmp_path.glob("metaschedule-*.json"))


def test_a_native_crash_in_the_child_is_a_message():
    crash = "import ctypes; print('about to crash', flush=True); ctypes.string_at(0)"
    with pytest.raises(TuningError) as err:
        metaschedule.run_child({}, 60.0, 4096, argv=[sys.executable, "-c", crash])
    message = str(err.value)
    assert "killed by SIGSEGV (a crash in native code)" in message and "about to crash" in message


def test_a_child_without_a_result_file_is_a_message():
    with pytest.raises(TuningError, match="without a readable result"):
        metaschedule.run_child({}, 60.0, 4096, argv=[sys.executable, "-c", "pass"])


def test_the_memory_limit_holds_in_the_child(tmp_path):
    with pytest.raises(TuningError) as err:
        metaschedule.tune(matmul(), cache_dir=tmp_path, memory_mb=200, **SMALL)
    message = str(err.value)
    assert "ran out of memory at its limit of 200 MB" in message
    assert not list(tmp_path.glob("metaschedule-*.json"))


def test_the_memory_limit_never_raises_one_the_process_already_has():
    """Inside a graded run's sandbox the kernel is already limited: the child only lowers it."""
    three_gb = 3 << 30
    probe = ("import resource\n"
             "from mlclab.course.metaschedule_search import _limit_memory\n"
             "_limit_memory(4096)\n"
             "print(resource.getrlimit(resource.RLIMIT_AS))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MALLOC_ARENA_MAX": "2"},
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (three_gb, three_gb)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str((three_gb, three_gb))


# ------------------------------------------------------------------------------ bad arguments
@pytest.mark.parametrize("name, value", [
    ("trials", 0), ("per_round", -1), ("population", 2.5), ("memory_mb", True),
    ("time_limit_s", 0), ("time_limit_s", "60"), ("seed", None), ("cost_model", "gbm")])
def test_a_bad_argument_is_named(tmp_path, name, value):
    with pytest.raises(ValueError, match=name):
        metaschedule.tune(matmul(), cache_dir=tmp_path, **{name: value})


def test_a_module_that_is_not_one_prim_func_is_refused(tmp_path):
    with pytest.raises(TypeError, match="mod must be"):
        metaschedule.tune("C = A @ B", cache_dir=tmp_path)
    two = tvm.IRModule({"f": matmul()["main"], "g": matmul(32)["main"]})
    with pytest.raises(ValueError, match="exactly one PrimFunc"):
        metaschedule.tune(two, cache_dir=tmp_path)


def test_without_xgboost_the_default_cost_model_says_how_to_install_it(tmp_path, monkeypatch):
    real = metaschedule.importlib.util.find_spec
    monkeypatch.setattr(metaschedule.importlib.util, "find_spec",
                        lambda name, *a: None if name == "xgboost" else real(name, *a))
    monkeypatch.setattr(metaschedule, "run_child", _must_not_run)
    with pytest.raises(TuningError, match=r"pip install 'mlclab\[lessons\]'"):
        metaschedule.tune(matmul(), cache_dir=tmp_path)
