"""``mlclab.from_torch`` builds in the disk cache (issue 29): a restarted kernel importing the
same model compiles nothing; the key is the imported module -- its IR and its weights' bytes --
with the target, the options and the versions, so other weights, another ``fast_math`` or a
damaged or foreign-version entry are misses, built again, never a wrong result.

Every kernel is a fresh interpreter (a restart is a new process).
"""
import json
import os
import subprocess
import sys

import pytest

from test_disk_cache import COUNT_BUILDS, DAMAGES, copy_of, damage, libraries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# For each run in argv[1] ({"folder", "seed", "fast_math"}): imports a small conv net whose
# weights come from ``seed``, checks the answer against PyTorch, validates (the traced build),
# and prints how many builds ran and what the disk cache saw.
KERNEL = COUNT_BUILDS + """
import torch
seen = []
for run in json.loads(sys.argv[1]):
    mlclab.cache_dir(run["folder"], shared="off")
    mlclab.clear_cache()
    level = cache.LEVELS.user
    level.hits = level.misses = level.writes = level.bad = 0
    builds.clear()
    torch.manual_seed(run["seed"])
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 10))
    x = torch.randn(2, 3, 8, 8)
    fn = mlclab.from_torch(model, x, fast_math=run["fast_math"])
    with torch.no_grad():
        want = model(x).numpy()
    got = fn(x.numpy())
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5), ("wrong result", abs(got - want).max())
    assert mlclab.validate(fn, x.numpy()).ok
    seen.append({"builds": len(builds), "from_disk": fn.program.built.from_disk,
                 "disk": mlclab.cache_info()["disk"], "steps": len(fn.pipeline().steps)})
print(json.dumps(seen))
"""


def kernels(runs):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    runs = [{"folder": str(folder), "seed": seed, "fast_math": fast} for folder, seed, fast in runs]
    proc = subprocess.run([sys.executable, "-c", KERNEL, json.dumps(runs)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A folder one kernel filled with the model's build and its traced build."""
    folder = tmp_path_factory.mktemp("torch-warm")
    (first,) = kernels([(folder, 0, False)])
    assert first["builds"] == 2 and not first["from_disk"]          # model + traced build
    assert first["disk"]["writes"] == 2 and first["disk"]["entries"] == 2
    return folder


def test_a_restarted_kernel_importing_the_model_compiles_nothing(warmed, tmp_path):
    (again,) = kernels([(copy_of(warmed, tmp_path), 0, False)])
    assert again["builds"] == 0 and again["from_disk"]
    assert again["disk"]["hits"] == 2 and again["disk"]["misses"] == 0
    assert again["steps"] > 0          # the views record the passes again on first use


def test_other_weights_or_options_are_other_entries(warmed, tmp_path):
    folder = copy_of(warmed, tmp_path)
    other_weights, fast = kernels([(folder, 1, False), (folder, 0, True)])
    for seen in (other_weights, fast):
        assert seen["builds"] == 2 and not seen["from_disk"]
        assert seen["disk"]["hits"] == 0 and seen["disk"]["writes"] == 2
    assert len(libraries(folder)) == 6


@pytest.mark.parametrize("how", ["flipped bytes", "truncated", "meta of another TVM"])
def test_a_damaged_or_foreign_entry_is_a_miss_and_is_rebuilt(warmed, tmp_path, how):
    assert how in DAMAGES
    folder = copy_of(warmed, tmp_path)
    damage(folder, how)
    damaged, again = kernels([(folder, 0, False), (folder, 0, False)])
    assert damaged["builds"] == 2 and not damaged["from_disk"]
    assert damaged["disk"]["bad_entries"] == 2 and damaged["disk"]["hits"] == 0
    assert again["builds"] == 0 and again["disk"]["hits"] == 2


def test_the_key_is_the_ir_and_the_weights_bytes():
    import numpy as np
    import torch

    import mlclab  # noqa: F401  (TVM without torch's import hook first)
    from mlclab.api import cache
    from mlclab.frontend.pytorch import import_module

    def text(seed, bump=0.0):
        torch.manual_seed(seed)
        model = torch.nn.Linear(4, 3).eval()
        with torch.no_grad():
            model.weight[0, 0] += bump
        return cache.module_text(import_module(model, (torch.ones(2, 4),)).mod)

    same, again = text(0), text(0)
    assert same == again
    assert text(0, bump=np.float32(1e-6).item()) != same      # one weight's last bits
    assert text(1) != same


def test_a_model_with_more_weights_than_stored_is_built_and_said_in_cache_info(tmp_path):
    code = """
import sys
import numpy as np, torch, mlclab
from mlclab.api import torch_build
torch_build.MAX_STORED_WEIGHTS = 1000          # bytes: the Linear(64, 8) below has 2,080
mlclab.cache_dir(sys.argv[1], shared="off")
model = torch.nn.Linear(64, 8)
x = torch.randn(2, 64)
fn = mlclab.from_torch(model, x)
with torch.no_grad():
    assert np.allclose(fn(x.numpy()), model(x).numpy(), rtol=1e-4, atol=1e-5)
info = mlclab.cache_info()
assert info["disk"]["writes"] == 0 and info["disk"]["entries"] == 0, info["disk"]
assert info["not_stored"]["models"] == 1, info["not_stored"]
assert "MB of weights" in info["not_stored"]["reason"], info["not_stored"]
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
