"""A kernel's memory (issue 29): TVM is imported without torch (TVM-FFI would import it, 200-500
MB, in every kernel), and every torch path still works when torch comes after TVM.

Each case runs in a fresh interpreter: what is imported, and in which order, is the point.
"""
import os
import subprocess
import sys
import textwrap


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: issue 29's budget for a kernel that compiles, runs and validates a DSL program
DSL_KERNEL_BUDGET_MB = 300


def run(code: str, env=None, timeout=300) -> str:
    environ = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=environ)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout


PEAK = """
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
"""

DSL_KERNEL = PEAK + """
import sys
import numpy as np, mlclab
f = mlclab.compile("def f(a: Tensor[(4, 8), f32], b: Tensor[(8, 3), f32]):\\n"
                   "    return relu(a @ b) + 1.0")["f"]
a, b = np.ones((4, 8), "f4"), np.ones((8, 3), "f4")
assert np.allclose(f(a, b), 9.0)
assert mlclab.validate(f, a, b).ok
print("torch" in sys.modules, round(peak_mb()))
"""


def test_a_dsl_kernel_never_loads_torch_and_stays_in_budget():
    import torch  # noqa: F401 - the point is a machine where torch is installed
    loaded, peak = run(DSL_KERNEL).split()
    assert loaded == "False"
    assert float(peak) <= DSL_KERNEL_BUDGET_MB, f"peak RSS {peak} MB"


def test_a_lessons_own_import_tvm_after_mlclab_is_torch_free_too():
    import torch  # noqa: F401
    out = run("""
        import sys, mlclab
        import tvm
        from tvm import relax
        import tvm_ffi
        print("torch" in sys.modules, type(sys.meta_path[0]).__name__)
    """)
    loaded, first_finder = out.split()
    assert loaded == "False"
    assert first_finder != "_TorchFreeTVM", "the import hook stays after TVM is imported"


def test_the_old_behaviour_on_request():
    import torch  # noqa: F401
    out = run("import sys, mlclab, tvm; print('torch' in sys.modules)",
              env={"MLCLAB_TVM_IMPORTS_TORCH": "1"})
    assert out.split() == ["True"]


def test_every_torch_path_works_when_torch_comes_after_tvm():
    import torch  # noqa: F401
    run("""
        import sys
        import numpy as np, mlclab, tvm
        from tvm import relax
        assert "torch" not in sys.modules
        import torch

        # a compiled DSL function called with torch tensors
        f = mlclab.compile("def f(a: Tensor[(2, 3), f32]):\\n    return a * 2.0")["f"]
        x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        assert np.array_equal(f(x), x.numpy() * 2)

        # from_torch: import, call with numpy and torch, validate
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
        g = mlclab.from_torch(model, torch.randn(2, 8))
        x = torch.randn(2, 8)
        with torch.no_grad():
            want = model(x).numpy()
        assert np.allclose(g(x.numpy()), want, atol=1e-5)
        assert np.allclose(g(x), want, atol=1e-5)
        assert mlclab.validate(g, x.numpy()).ok

        # TVM's own importers (lesson 05) and a torch tensor handed to the VM as it is
        from tvm.relax.frontend.torch import from_exported_program, from_fx
        mod = from_exported_program(torch.export.export(model, (x,)))
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        out = vm["main"](tvm.runtime.tensor(x.numpy()))[0]     # the exported outputs' tuple
        assert np.allclose(out.numpy(), want, atol=1e-5)
        graph = torch.fx.symbolic_trace(model)
        mod = from_fx(graph, [((2, 8), "float32")])
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        assert np.allclose(vm["main"](x).numpy(), want, atol=1e-5)

        # DLPack both ways
        t = tvm.runtime.from_dlpack(x)
        assert np.array_equal(t.numpy(), x.numpy())
        back = torch.from_dlpack(tvm.runtime.tensor(x.numpy()))
        assert torch.equal(back, x)
        print("ok")
    """)
