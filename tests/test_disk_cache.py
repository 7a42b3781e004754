"""The compile cache on disk (issue 29): a restarted kernel compiles nothing it compiled before;
a corrupted, truncated or foreign entry is a miss, never a crash or a wrong result; writers
racing on one program leave one whole entry; a shared class folder is read, never written;
the folder stays under its bound, least recently used first out.

Whatever can crash (loading a library someone damaged) runs in a fresh interpreter.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mlclab
from mlclab.api import cache, disk_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = ("def f(a: Tensor[(16, 8), f32], b: Tensor[(8, 4), f32]):\n"
           "    return softmax(relu(a @ b) + 1.0, axis=1)\n")

# For each (cache folder, shared folder) in argv[2]: compiles the program argv[1] with a cold
# memory cache, checks the answer against numpy, validates (a traced build), and prints what
# was built (build_executable calls) and what the disk cache saw. One interpreter serves many
# folders: starting TVM is most of a kernel's cost.
# What every kernel script starts with: ``builds`` counts the compiles (build_executable calls).
COUNT_BUILDS = """
import json, sys
import numpy as np, mlclab
from mlclab.api import build, cache
builds = []
real = build.build_executable
def counted(*args, **kwargs):
    builds.append(1)
    return real(*args, **kwargs)
build.build_executable = counted
"""
KERNEL = COUNT_BUILDS + """
seen = []
for folder, shared in json.loads(sys.argv[2]):
    mlclab.cache_dir(folder, shared=shared or "off")
    mlclab.clear_cache()
    for level in (cache.LEVELS.user, cache.LEVELS.shared):
        if level is not None:
            level.hits = level.misses = level.writes = level.bad = 0
    builds.clear()
    program = mlclab.compile(sys.argv[1])
    f = program["f"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 8), dtype="f4"), rng.standard_normal((8, 4), dtype="f4")
    assert np.allclose(f(a, b), f.reference(a, b), atol=1e-5), "wrong result"   # numpy's
    assert mlclab.validate(f, a, b).ok
    info = mlclab.cache_info()
    seen.append({"builds": len(builds), "from_disk": program.built.from_disk,
                 "disk": info["disk"], "shared": info["shared"]})
print(json.dumps(seen))
"""


def kernels(runs, source=PROGRAM):
    """KERNEL over ``runs``, ``[(folder, shared folder or None), ...]``, in one interpreter."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    runs = [[str(folder), None if shared is None else str(shared)] for folder, shared in runs]
    proc = subprocess.run([sys.executable, "-c", KERNEL, source, json.dumps(runs)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def kernel(cache_dir, shared=None, source=PROGRAM):
    return kernels([(cache_dir, shared)], source)[0]


def libraries(folder):
    return sorted(Path(folder).glob(f"??/*/{disk_cache.LIBRARY}"))


def tree(folder):
    """Every path under ``folder`` with its size and modification time."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in Path(folder).rglob("*")}


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A folder one kernel filled: the program and its traced build."""
    folder = tmp_path_factory.mktemp("warm")
    first, again = kernels([(folder, None), (folder, None)])
    assert again["builds"] == 0 and again["from_disk"]       # what a restarted kernel does
    assert again["disk"]["hits"] == 2 and again["disk"]["misses"] == 0
    assert first["builds"] == 2 and not first["from_disk"]          # program + traced build
    assert first["disk"]["writes"] == 2 and first["disk"]["entries"] == 2
    return folder


def copy_of(folder, tmp_path):
    import shutil

    target = tmp_path / "copy"
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(folder, target)
    return target


def test_a_restarted_kernel_compiles_nothing_it_compiled_before(warmed, tmp_path):
    again = kernel(copy_of(warmed, tmp_path))
    assert again["builds"] == 0 and again["from_disk"]
    assert again["disk"]["hits"] == 2 and again["disk"]["misses"] == 0


def test_a_loaded_program_shows_the_same_pipeline_text_and_profile(warmed, tmp_path):
    # The build record is not stored (IR cannot be saved): it is recorded again on first use.
    code = """
import sys
import numpy as np, mlclab
loaded = mlclab.compile(sys.argv[1])
assert loaded.built.from_disk and loaded.optimized
built = mlclab.compile(sys.argv[1], force=True)
assert not built.built.from_disk
f, g = loaded["f"], built["f"]
assert [s.name for s in f.pipeline().steps] == [s.name for s in g.pipeline().steps]
assert f.text("tir") == g.text("tir") and f.text("relax") == g.text("relax")
assert [k.name for k in f.profile().kernels] == [k.name for k in g.profile().kernels]
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=ROOT, MLCLAB_CACHE_DIR=str(copy_of(warmed, tmp_path)))
    proc = subprocess.run([sys.executable, "-c", code, PROGRAM], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


DAMAGES = ["flipped bytes", "truncated", "empty", "meta garbage", "meta of another key",
           "meta of another TVM", "library missing", "random bytes after an ELF header"]


def damage(folder, how):
    for lib in libraries(folder):
        meta_path = lib.parent / disk_cache.META
        data = lib.read_bytes()
        meta = json.loads(meta_path.read_text())
        if how == "flipped bytes":        # same size: only the hash can tell
            middle = len(data) // 2
            lib.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64])
                            + data[middle + 64:])
        elif how == "truncated":
            lib.write_bytes(data[:len(data) // 3])
        elif how == "empty":
            lib.write_bytes(b"")
        elif how == "meta garbage":
            meta_path.write_text("{not json")
        elif how == "meta of another key":
            meta["key"] = "0" * 64
            meta_path.write_text(json.dumps(meta))
        elif how == "meta of another TVM":
            meta["versions"]["tvm"] = "0.1.0"
            meta_path.write_text(json.dumps(meta))
        elif how == "library missing":
            lib.unlink()
        else:
            lib.write_bytes(b"\x7fELF" + os.urandom(len(data) - 4))


def test_a_damaged_entry_is_a_miss_and_is_rebuilt(warmed, tmp_path):
    folders = []
    for i, how in enumerate(DAMAGES):
        folders.append(copy_of(warmed, tmp_path / str(i)))
        damage(folders[-1], how)
    # each folder twice: damaged (asserting numpy's results), then as the rebuild left it
    seen = kernels([(f, None) for f in folders] + [(f, None) for f in folders])
    for how, damaged, again in zip(DAMAGES, seen, seen[len(DAMAGES):]):
        assert damaged["builds"] == 2 and not damaged["from_disk"], how
        assert damaged["disk"]["bad_entries"] == 2 and damaged["disk"]["hits"] == 0, how
        assert again["builds"] == 0 and again["disk"]["hits"] == 2, how


def test_another_version_of_mlclab_or_tvm_uses_other_keys(monkeypatch):
    before = cache.key(PROGRAM, "llvm")
    monkeypatch.setattr(cache, "_versions", lambda: (("mlclab", "other"), ("tvm", "0.27.0")))
    assert cache.key(PROGRAM, "llvm") != before
    monkeypatch.undo()
    assert cache.key(PROGRAM, "llvm") == before
    assert cache.key(PROGRAM, "llvm", {"fast_math": True}) != before
    assert cache.key(PROGRAM, "llvm", {"fast_math": True}) != \
        cache.key(PROGRAM, "llvm", {"fast_math": False})
    with pytest.raises(TypeError, match="options must be a mapping"):
        cache.key(PROGRAM, "llvm", ["fast_math"])


def test_writers_racing_on_one_program_leave_one_whole_entry(tmp_path):
    # Four kernels compile the same program at the same moment into one empty folder.
    start = time.time() + 4
    racer = KERNEL.replace("seen = []\n", "import time\n"
                           f"time.sleep(max(0.0, {start} - time.time()))\nseen = []\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    runs = json.dumps([[str(tmp_path), None]])
    procs = [subprocess.Popen([sys.executable, "-c", racer, PROGRAM, runs],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err[-3000:]
        assert json.loads(out.splitlines()[-1])[0]["disk"]["last_error"] is None
    assert len(libraries(tmp_path)) == 2
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".")]
    assert not leftovers, leftovers
    assert kernel(tmp_path)["builds"] == 0


def test_the_shared_class_folder_is_read_first_and_never_written(warmed, tmp_path):
    shared = copy_of(warmed, tmp_path)
    before = tree(shared)
    user = tmp_path / "user"
    seen, = kernels([(user, shared)])
    assert seen["builds"] == 0 and seen["shared"]["hits"] == 2 and seen["shared"]["read_only"]
    assert not libraries(user)                   # nothing copied into the student's own
    # a program the class folder lacks goes to the student's folder, not the shared one
    other, = kernels([(user, shared)], source=PROGRAM.replace("1.0", "2.0"))
    assert other["builds"] == 2 and other["disk"]["writes"] == 2
    assert tree(shared) == before
    # a damaged shared entry is a miss, left in place (it is not the student's to remove)
    damage(shared, "truncated")
    damaged = tree(shared)
    seen, = kernels([(tmp_path / "user2", shared)])
    assert seen["builds"] == 2 and seen["shared"]["bad_entries"] == 2
    assert tree(shared) == damaged and set(damaged) == set(before)


class FakeExecutable:
    """What DiskCache.save needs of an executable: ``export_library`` writing ``size`` bytes."""

    def __init__(self, size):
        self.size = size

    def export_library(self, path):
        Path(path).write_bytes(os.urandom(self.size))


def test_the_folder_keeps_to_its_bound_least_recently_used_first_out(tmp_path, monkeypatch):
    folder = disk_cache.DiskCache(tmp_path, max_bytes=35_000)
    loaded = []
    monkeypatch.setattr(disk_cache, "_load_library", lambda path: loaded.append(path) or path)
    versions = {"tvm": "x"}
    for i, name in enumerate("abc"):
        assert folder.save(name * 64, versions, FakeExecutable(10_000))
        os.utime(folder._entry(name * 64) / disk_cache.META, (1000 + i, 1000 + i))
    assert folder.load("a" * 64, versions) is not None     # "a" is now the most recent
    killed = tmp_path / "dd" / ".dddd-left-by-a-killed-writer"
    fresh = tmp_path / "dd" / ".dddd-being-written-now"
    killed.mkdir(parents=True)
    fresh.mkdir()
    os.utime(killed, (1000, 1000))
    folder.save("d" * 64, versions, FakeExecutable(10_000))
    assert not killed.exists() and fresh.exists()
    kept = {entry.name[0] for _, entry, _ in folder.entries()}
    assert kept == {"a", "c", "d"}, kept
    assert folder.info()["bytes"] <= 35_000
    assert folder.load("b" * 64, versions) is None


def test_the_cache_can_be_moved_and_turned_off(tmp_path):
    try:
        info = mlclab.cache_dir(tmp_path / "moved", max_mb=50)
        assert info["disk"]["path"] == str(tmp_path / "moved")
        assert info["disk"]["max_bytes"] == 50 * 2**20
        mlclab.clear_cache()
        f = mlclab.compile(PROGRAM.replace("1.0", "3.0"))["f"]
        assert len(libraries(tmp_path / "moved")) == 1
        mlclab.clear_cache(disk=True)
        assert not libraries(tmp_path / "moved")
        assert mlclab.cache_dir("off")["disk"] is None
        mlclab.clear_cache()
        mlclab.compile(PROGRAM.replace("1.0", "4.0"))
        assert not libraries(tmp_path / "moved")
        assert f(np.ones((16, 8), "f4"), np.ones((8, 4), "f4")).shape == (16, 4)
        with pytest.raises(ValueError, match="max_mb"):
            mlclab.cache_dir(max_mb=-1)
    finally:
        mlclab.cache_dir("off")


def test_a_folder_that_cannot_be_written_is_said_once_and_compiling_works(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    try:
        mlclab.cache_dir(blocker / "cache")
        mlclab.clear_cache()
        with pytest.warns(UserWarning, match="compile cache: could not save"):
            f = mlclab.compile(PROGRAM.replace("1.0", "5.0"))["f"]
        assert mlclab.cache_info()["disk"]["last_error"]
        assert f(np.zeros((16, 8), "f4"), np.zeros((8, 4), "f4")).shape == (16, 4)
    finally:
        mlclab.cache_dir("off")


def test_warm_cache_fills_a_class_folder_the_students_read(tmp_path):
    import nbformat

    lesson = tmp_path / "lesson.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import numpy as np, mlclab\n"
        f"f = mlclab.compile({PROGRAM.replace('1.0', '6.0')!r})['f']\n"
        "a, b = np.ones((16, 8), 'f4'), np.ones((8, 4), 'f4')\n"
        "assert mlclab.validate(f, a, b).ok")]
    nbformat.write(nb, lesson)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "mlclab.course", "warm-cache", str(lesson),
                           "--to", str(tmp_path / "class")], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "lesson.ipynb: 2 compiled program(s)" in proc.stdout, proc.stdout
    assert f"MLCLAB_SHARED_CACHE_DIR={tmp_path / 'class'}" in proc.stdout
    seen, = kernels([(tmp_path / "student", tmp_path / "class")],
                    source=PROGRAM.replace("1.0", "6.0"))
    assert seen["builds"] == 0 and seen["shared"]["hits"] == 2
    missing = subprocess.run([sys.executable, "-m", "mlclab.course", "warm-cache",
                              str(tmp_path / "nope.ipynb"), "--to", str(tmp_path)],
                             capture_output=True, text=True, timeout=120, env=env)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_students_own_operator_keeps_the_kernel_off_the_disk_cache(tmp_path):
    # Its code lives in this kernel only, and ops.generation() counts this process's
    # registrations: another kernel's different entry of the same name could share a key.
    from mlclab import ops
    from tvm.relax import op as R

    try:
        mlclab.cache_dir(tmp_path)
        mlclab.clear_cache()
        ops.register(ops.Op(
            name="twice_test", params=[ops.tensor("x")], rule=ops.same_as_input(),
            relax=lambda a: R.add(a.x, a.x), numpy=lambda a: a.x + a.x, doc="2x",
            category="elementwise", example=ops.Example("twice_test(x)", x=((4,), "f32"))))
        f = mlclab.compile("def f(x: Tensor[(4,), f32]):\n    return twice_test(x)\n")["f"]
        np.testing.assert_array_equal(f(np.ones(4, "f4")), 2.0)
        assert not libraries(tmp_path) and mlclab.cache_info()["disk"]["misses"] == 0
        del ops.OPS["twice_test"]
        mlclab.compile(PROGRAM.replace("1.0", "7.0"))
        assert len(libraries(tmp_path)) == 1                # built-ins only again: stored
    finally:
        ops.OPS.pop("twice_test", None)
        mlclab.cache_dir("off")


def test_records_are_read_from_the_class_folder_first_and_written_to_the_users(tmp_path):
    """A lesson's measured trials (lesson 10) live in the disk cache's levels, as compiled
    programs do: what the instructor's run stored, a student's kernel reads."""
    shared, user = tmp_path / "shared", tmp_path / "user"
    try:
        mlclab.cache_dir(shared)                     # the instructor's warm-up run
        stored = cache.Records("lesson-10").save("trials", {"ms": [1.5, 0.5]})
        assert stored.parent == shared / "lesson-10"
        mlclab.cache_dir(user, shared=shared)        # a student's kernel
        records = cache.Records("lesson-10")
        assert records.load("trials") == ({"ms": [1.5, 0.5]}, stored)
        assert records.load("other trials") is None
        mine = records.save("other trials", {"ms": [2.0]})
        assert mine.parent == user / "lesson-10" and not (shared / "lesson-10" / mine.name).exists()
        assert records.load("other trials") == ({"ms": [2.0]}, mine)
        # a damaged record or one holding another key is a miss, never an error
        mine.write_text('{"key": "other trials", "rec', encoding="utf-8")
        assert records.load("other trials") is None
        mine.write_text(json.dumps({"key": "someone else's", "record": 1}), encoding="utf-8")
        assert records.load("other trials") is None
        assert not [p for p in (user / "lesson-10").iterdir() if p.suffix == ".tmp"]
        # the user's level off: nothing is stored, the class folder is still read
        mlclab.cache_dir("off")
        assert records.save("more", {}) is None and records.load("trials") is not None
    finally:
        mlclab.cache_dir("off", shared="off")


@pytest.mark.parametrize("name", ["", "ab", "../up", "a/b", ".hidden", 7])
def test_a_records_folder_name_is_a_plain_name(name):
    with pytest.raises(ValueError, match="name must be a plain folder name"):
        cache.Records(name)
