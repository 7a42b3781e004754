"""``runtime.give_back_memory`` (issue 29): after a build, a validate, a profile or a timing, the
kernel returns what TVM's pooled allocator and glibc's heap hold unused. Calls running at the
same time in another thread, and results already returned, are untouched (run in a fresh
interpreter: a freed buffer still in use would crash it)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import threading
import numpy as np, mlclab
from mlclab.runtime import give_back_memory

f = mlclab.compile('''
def f(a: Tensor[(512, 512), f32], b: Tensor[(512, 512), f32]):
    return relu(a @ b + 1.0), a * 2.0
''')["f"]
rng = np.random.default_rng(0)
a, b = rng.standard_normal((512, 512), dtype="f4"), rng.standard_normal((512, 512), dtype="f4")
want = np.maximum(a @ b + 1.0, 0)
kept = f(a, b)                       # a result returned before any give-back
stop, errors = threading.Event(), []

def calls():
    while not stop.is_set():
        got, doubled = f(a, b)
        if not (np.allclose(got, want, rtol=1e-4, atol=1e-3) and np.array_equal(doubled, a * 2)):
            errors.append("wrong result")

worker = threading.Thread(target=calls)
worker.start()
for _ in range(300):
    give_back_memory()
stop.set()
worker.join()
assert not errors, errors
assert np.allclose(kept[0], want, rtol=1e-4, atol=1e-3) and np.array_equal(kept[1], a * 2)
assert mlclab.validate(f, a, b).ok
print("ok")
"""


def test_giving_memory_back_leaves_running_calls_and_returned_results_alone():
    env = dict(os.environ, PYTHONPATH=ROOT, MLCLAB_CACHE_DIR="off")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), (
        f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}")
