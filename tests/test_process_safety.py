"""Inputs that crash bare TVM (a misaligned numpy array segfaults its kernels) must leave a
student's kernel alive.

Each case runs in a fresh interpreter: a segfault or SIGFPE there shows up as a negative
return code instead of taking the test run down with it.
"""
import subprocess
import sys
import textwrap

import pytest

CASES = {
    "misaligned and strided inputs": """
        import numpy as np, mlclab
        f = mlclab.compile("def f(a: Tensor[(4096,), f32], b: Tensor[(4096,), f32]):\\n"
                           "    return a + b")["f"]
        raw = np.arange(4096 * 2 + 16, dtype="f4")
        for off in range(1, 16):
            a = raw[off:off + 4096]
            b = raw[::2][:4096]
            assert np.array_equal(f(a, b), a + b)
        print("ok")
    """,
    "misaligned inputs read in place by every kind of scheduled kernel": """
        import numpy as np, mlclab
        prog = mlclab.compile(
            "def chain(a: Tensor[(4099,), f32], b: Tensor[(4099,), f32]):\\n"
            "    return relu(a * b + a)\\n"
            "def mm(x: Tensor[(64, 784), f32], w: Tensor[(128, 784), f32],\\n"
            "       b: Tensor[(128,), f32]):\\n"
            "    return relu(linear(x, w, b))\\n"
            "def t(x: Tensor[(96, 64), f32]):\\n    return transpose(x)\\n"
            "def sq(x: Tensor[(128, 128), f64]):\\n    return x @ x\\n")
        raw = np.random.default_rng(0).standard_normal(200_000, dtype="f4")
        raw64 = np.random.default_rng(1).standard_normal(40_000)
        for off in (1, 2, 3, 4, 5, 8, 12):  # 4..48 bytes past a 64-byte boundary
            base = raw[(-raw.ctypes.data % 64) // 4 + off:]
            a, b = base[:4099], base[5000:9099]
            assert np.allclose(prog["chain"](a, b), np.maximum(a * b + a, 0), atol=1e-6)
            x, w, bias = (base[:64 * 784].reshape(64, 784),
                          base[60_000:60_000 + 128 * 784].reshape(128, 784), base[:128])
            assert np.allclose(prog["mm"](x, w, bias), np.maximum(x @ w.T + bias, 0), atol=1e-3)
            m = base[:96 * 64].reshape(96, 64)
            assert np.array_equal(prog["t"](m), m.T)
            y = raw64[(-raw64.ctypes.data % 64) // 8 + off % 8:][:128 * 128].reshape(128, 128)
            assert np.allclose(prog["sq"](y), y @ y)
        print("ok")
    """,
    "integer division by zero elements": """
        import numpy as np, mlclab
        f = mlclab.compile("def f(a: Tensor[(64,), i32], b: Tensor[(64,), i32]):\\n"
                           "    return a // b, a % b")["f"]
        a = np.arange(-32, 32, dtype="i4"); b = np.zeros(64, "i4")
        q, r = f(a, b)
        assert not q.any() and not r.any()
        q, r = f(np.full(64, np.iinfo("i4").min, "i4"), np.full(64, -1, "i4"))
        print("ok")
    """,
    "integer division by a zero literal": """
        import numpy as np, mlclab
        f = mlclab.compile("def f(a: Tensor[(8,), i64]):\\n    return a // 0 + a % 0")["f"]
        assert not f(np.arange(8)).any()
        print("ok")
    """,
    "recursion is refused before it can overflow the stack": """
        import mlclab
        try:
            mlclab.compile("def f(a: Tensor[(2,), f32]):\\n    return f(a)")
        except mlclab.DSLError as e:
            assert "recursion" in str(e)
            print("ok")
    """,
    "copy, deepcopy and pickle of compiled functions": """
        import copy, pickle, mlclab
        prog = mlclab.compile("def f(a: Tensor[(2,), f32]):\\n    return exp(a)")
        f = prog["f"]
        assert copy.copy(f) is f and copy.deepcopy(f) is f and copy.deepcopy(prog) is prog
        assert copy.deepcopy({"model": f})["model"] is f
        for obj in (f, prog):
            try:
                pickle.dumps(obj)
            except TypeError as e:
                assert "cannot be pickled" in str(e)
        print("ok")
    """,
    "a non-scalar if condition is refused": """
        import mlclab
        try:
            mlclab.compile("def f(a: Tensor[(2,), f32]):\\n    if a > 0.0:\\n        return a\\n"
                           "    return -a")
        except mlclab.DSLError as e:
            assert "bool scalar" in str(e)
            print("ok")
    """,
    "printing every view of a module with tensor constants": """
        import mlclab
        f = mlclab.compile("def f(a: Tensor[(2, 2), f32]):\\n    return a @ a + 1.0")["f"]
        for style in ("relax", "relay", "let", "tir"):
            assert f.text(style)
        print("ok")
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_process_survives(name):
    run(CASES[name])


def run(code: str):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip().endswith("ok")


# Every object mlclab hands out that holds IR (TVM's serializer segfaults on any of it).
IR_HOLDERS = {
    "fn.mod": "f.mod",
    "fn.relax_function": "f.relax_function",
    "fn.bindings": "f.bindings",
    "a binding's var": "next(iter(f.bindings))",
    "fn.pipeline()": "f.pipeline()",
    "one pipeline step": "f.pipeline()[3]",
    "a pipeline diff": "f.pipeline().diff(3)",
    "a validation report": "mlclab.validate(f, seed=0)",
    "a dict holding all of them": "{'mod': f.mod, 'b': f.bindings, 'p': f.pipeline(), 'f': f}",
    # compiled code: TVM's binary serializer refused it with an InternalError
    "fn.executable": "f.executable",
    "the executable's machine code": "f.executable.mod",
    "the virtual machine": "f.program.vm",
}


@pytest.mark.parametrize("name", sorted(IR_HOLDERS))
def test_copy_and_pickle_of_objects_holding_ir(name):
    """A copy is a real copy (IR nodes are immutable and shared), pickling a clear TypeError."""
    run(f"""
        import copy, pickle, mlclab
        f = mlclab.compile("def f(a: Tensor[(2, 2), f32]):\\n    b = exp(a)\\n"
                           "    return b @ a + 1.0")["f"]
        obj = {IR_HOLDERS[name]}
        copied = copy.deepcopy(obj)
        assert type(copied) is type(obj)
        copy.copy(obj)
        assert copy.deepcopy([obj, obj])[0] is not None
        try:
            pickle.dumps(obj)
        except TypeError as e:
            assert "pickle" in str(e), e
        else:
            raise AssertionError("pickled")
        print("ok")
    """)


def test_copied_ir_is_the_same_ir():
    run("""
        import copy, mlclab
        f = mlclab.compile("def f(a: Tensor[(2,), f32]):\\n    return exp(a)")["f"]
        assert copy.deepcopy(f.mod).same_as(f.mod)
        copied = copy.deepcopy(dict(f.bindings))
        assert [v.name for v in copied] == [v.name for v in f.bindings]
        assert list(copied.values()) == list(f.bindings.values())
        print("ok")
    """)


def test_copied_compiled_code_runs_and_a_runtime_tensor_pickles_through_numpy():
    run("""
        import copy, pickle, numpy as np, tvm, mlclab
        f = mlclab.compile("def f(a: Tensor[(2,), f32]):\\n    return exp(a)")["f"]
        vm = tvm.relax.VirtualMachine(copy.deepcopy(f.executable), tvm.cpu())
        a = np.array([0.0, 1.0], "f4")
        assert np.allclose(vm["f"](tvm.runtime.tensor(a)).numpy(), np.exp(a))
        # (TVM's own pickling of a tensor gave one that segfaults when read)
        t = pickle.loads(pickle.dumps(tvm.runtime.tensor(a)))
        assert np.array_equal(t.numpy(), a) and np.array_equal(copy.deepcopy(t).numpy(), a)
        print("ok")
    """)
