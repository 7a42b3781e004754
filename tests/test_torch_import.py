"""What the importer does with models beyond plain layers (issue 23): control flow, outputs
mlclab cannot hold, example inputs it cannot call with, TVM's wrong translations fixed through
mlclab's converter table, a student's own converters, compile failures named by operator and
module, dynamic batch from a batch of 1, weights owned by the compiled function, odd names."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torch
import mlclab  # noqa: E402
from tvm import relax  # noqa: E402


class Lambda(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)


def matches_pytorch(model, *inputs, **options):
    fn = mlclab.from_torch(model, *[torch.from_numpy(a) for a in inputs], **options)
    with torch.no_grad():
        want = model.eval()(*[torch.from_numpy(a) for a in inputs])
    np.testing.assert_allclose(fn(*inputs), want.numpy(), rtol=1e-5, atol=1e-5)
    return fn


# ----------------------------------------------------------------- control flow and outputs
def test_torch_cond_keeps_both_branches():
    model = Lambda(lambda x: torch.cond(x.sum() > 0, lambda x: x.cos(), lambda x: x.sin(), (x,)))
    fn = mlclab.from_torch(model, torch.ones(3))
    for x in (np.ones(3, np.float32), -np.ones(3, np.float32)):
        np.testing.assert_allclose(fn(x), model(torch.from_numpy(x)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("forward,example,message", [
    (lambda x, m: torch.masked_select(x, m), (torch.randn(4), torch.tensor([1, 0, 1, 1]).bool()),
     "shape that depends on the input values"),
    (lambda x: (x + 1, None), (torch.randn(4),), "a None or a Python number among the outputs"),
])
def test_outputs_mlclab_cannot_hold_are_a_clear_error(forward, example, message):
    with pytest.raises(ValueError, match=message):
        mlclab.from_torch(Lambda(forward), *example)


@pytest.mark.parametrize("example,message", [
    (torch.randn(4).bfloat16(), "torch.bfloat16, which numpy cannot hold"),
    (torch.eye(3).to_sparse(), "sparse tensor"),
])
def test_example_inputs_the_function_could_not_be_called_with_are_refused_at_import(example,
                                                                                   message):
    with pytest.raises(ValueError, match=message):
        mlclab.from_torch(Lambda(lambda x: x * 2), example)


def test_a_sparse_buffer_is_refused_clearly_not_a_crash():
    # torch's decompositions abort the process on a sparse CSR buffer; TVM skips them.
    code = textwrap.dedent("""
        import torch, mlclab
        class Csr(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", torch.eye(3).to_sparse_csr())
            def forward(self, x):
                return x @ self.b.to_dense()
        try:
            mlclab.from_torch(Csr(), torch.randn(2, 3))
        except ValueError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "aten.to_dense" in out.stdout and "no translation" in out.stdout


# ----------------------------------------------------------------- mlclab's converter table
def test_selu_and_elu_keep_their_scales():
    x = np.array([-1.0, -0.5, 0.5, 1.0], np.float32)
    fn = matches_pytorch(Lambda(torch.nn.functional.selu), x)
    np.testing.assert_allclose(fn(x), [-1.1113, -0.6918, 0.5254, 1.0507], atol=1e-4)
    matches_pytorch(Lambda(lambda x: torch.nn.functional.elu(x, alpha=0.5)), x)


@pytest.mark.parametrize("op", [lambda i, x: i + 0.5 + x, lambda i, x: i * 0.5 + x,
                                lambda i, x: i - 0.5 + x, lambda i, x: 0.5 - i + x],
                         ids=["add", "mul", "sub", "rsub"])
def test_an_integer_tensor_meeting_a_float_scalar_is_promoted_as_pytorch_does(op):
    """TVM kept the integer dtype and truncated 0.5 to 0 (torchvision's roi_align decomposition
    does arange(n) + 0.5: it came out 0.55 off)."""
    x = np.zeros(4, np.float32)
    matches_pytorch(Lambda(lambda x: op(torch.arange(4), x)), x)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_reads_pytorchs_grid_layout(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1, 1, (1, 3, 6, 2)).astype(np.float32)
    matches_pytorch(Lambda(lambda x, g: torch.nn.functional.grid_sample(
        x, g, mode=mode, align_corners=False)), x, grid)


def test_squeeze_keeps_a_dynamic_batch():
    fn = mlclab.from_torch(Lambda(lambda x: x.squeeze()), torch.randn(3, 1, 4, 1),
                           dynamic_batch=True)
    for batch in (3, 5):
        assert fn(np.ones((batch, 1, 4, 1), np.float32)).shape == (batch, 4)


def test_adding_two_bool_tensors_is_their_or():
    a = np.array([1.0, -1.0, -1.0], np.float32)
    b = np.array([1.0, 1.0, -1.0], np.float32)
    fn = mlclab.from_torch(Lambda(lambda a, b: (a > 0) + (b > 0)), torch.randn(3), torch.randn(3))
    assert fn(a, b).tolist() == [True, True, False]


# ----------------------------------------------------------------- a student's converters
class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Lambda(torch.nn.functional.hardtanh)

    def forward(self, x):
        return self.act(x) * 2


def test_a_students_converter_is_used_and_its_bindings_know_their_module():
    def clip_to_half(node, importer):       # deliberately not hardtanh: proves ours ran
        x = importer.env[node.args[0]]
        return importer.block_builder.emit(relax.op.clip(x, -0.5, 0.5))

    fn = mlclab.from_torch(Scaled(), torch.randn(4),
                           convert_map={"hardtanh.default": clip_to_half})
    assert fn(np.array([-2, -0.25, 0.25, 2], np.float32)).tolist() == [-1, -0.5, 0.5, 1]
    clipped = [info for info in fn.bindings.values() if info.origin == "aten.hardtanh"]
    assert clipped and all(info.module == "act" for info in clipped)


def test_a_convert_map_that_is_not_a_table_is_refused():
    with pytest.raises(TypeError, match="convert_map must be a dict"):
        mlclab.from_torch(Scaled(), torch.randn(4), convert_map=[1])
    with pytest.raises(TypeError, match="convert_map maps ATen operator names"):
        mlclab.from_torch(Scaled(), torch.randn(4), convert_map={"relu.default": 3})


def test_an_operator_tvm_cannot_compile_is_named_with_its_module(capfd):
    def raw_subtract(node, importer):        # TVM's kernel refuses bool arithmetic
        env = importer.env
        return importer.block_builder.emit(relax.op.subtract(env[node.args[0]],
                                                             env[node.args[1]]))

    class Masks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.merge = Lambda(lambda a, b: (a > 0) + (b > 0))

        def forward(self, a, b):
            return self.merge(a, b)

    with pytest.raises(ValueError) as caught:
        mlclab.from_torch(Masks(), torch.randn(3), torch.randn(3),
                          convert_map={"add.Tensor": raw_subtract})
    message = str(caught.value)
    assert message.startswith("TVM could not compile PyTorch operator aten.add in merge "
                              "(merge: Lambda())"), message
    assert "line 1" not in message
    assert "block_builder" not in capfd.readouterr().err


# ----------------------------------------------------------------- batch, weights, names
def test_dynamic_batch_from_a_batch_of_one():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    fn = mlclab.from_torch(model, torch.randn(1, 3), dynamic_batch=True)
    assert fn.signature() == "Sequential(input: Tensor[(batch, 3), f32]) -> Tensor[(batch, 2), f32]"
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
        np.testing.assert_allclose(fn(x), fn.reference(x), rtol=1e-5, atol=1e-6)


def test_a_batch_the_model_fixes_is_explained():
    model = Lambda(lambda x: x.reshape(2, -1))
    with pytest.raises(ValueError, match="could not keep dimension 0 .* symbolic"):
        mlclab.from_torch(model, torch.randn(2, 3), dynamic_batch=True)


def test_the_compiled_function_owns_its_weights():
    code = textwrap.dedent("""
        import numpy as np, torch, mlclab
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                                    torch.nn.Flatten(), torch.nn.Linear(64, 2))
        x = torch.randn(1, 3, 6, 6)
        fn = mlclab.from_torch(model, x)
        before = fn(x.numpy())
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)                      # what optimizer.step() does, in place
        print(np.array_equal(before, fn(x.numpy())))
        model[3].weight.data.resize_(1)           # frees the memory TVM would have read
        print(np.array_equal(before, fn(x.numpy())))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]


@pytest.mark.parametrize("name", ["a\nb", "a\0b", "a\ud800b"])
def test_a_module_name_export_cannot_write_is_a_clear_error(name):
    model = torch.nn.Sequential()
    model.add_module(name, torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="cannot capture a submodule named"):
        mlclab.from_torch(model, torch.randn(1, 2))


def test_odd_but_printable_names_and_a_raising_extra_repr_import():
    class Loud(torch.nn.Linear):
        def extra_repr(self):
            raise RuntimeError("boom")

    model = torch.nn.Sequential()
    model.add_module("it's", Loud(2, 2))
    fn = mlclab.from_torch(model, torch.randn(1, 2))
    assert fn.source.splitlines()[1] == "    it's: Loud(...)"
    x = np.ones((1, 2), np.float32)
    np.testing.assert_allclose(fn(x), fn.reference(x), rtol=1e-6)
    assert "# line 2: it's: Loud(...)" in fn.text("relax")


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_a_zero_dimensional_example():
    fn = mlclab.from_torch(Double(), torch.tensor(3.0))
    assert fn.signature() == "Double(x: Tensor[(), f32]) -> Tensor[(), f32]"
    assert fn(np.float32(3.0)) == 6.0 and fn(3.0) == 6.0


# ----------------------------------------------------------------- the adapter's guards
def test_an_imported_model_is_a_signature_not_an_empty_program():
    fn = mlclab.from_torch(Double(), torch.randn(2, 3), dynamic_batch=True)
    assert not hasattr(fn.typed, "body")
    assert [p.name for p in fn.typed.params] == ["x"]


def test_the_memory_need_counts_what_a_call_makes_not_the_weights():
    # a 16 MiB table, held by the process already: a call asks for its rows only
    fn = mlclab.from_torch(torch.nn.Embedding(2**16, 64), torch.zeros(2, 3, dtype=torch.int64),
                           dynamic_batch=True)
    assert 3 * 64 * 4 <= fn.size_need({"batch": 1}, {}) < 2**16


def test_a_dynamic_batch_is_checked_against_available_memory():
    model = torch.nn.Linear(4, 2**16)
    fn = mlclab.from_torch(model, torch.randn(2, 4), dynamic_batch=True)
    assert fn.size_need({"batch": 1}, {}) >= 2**16 * 4           # a row of the result
    x = np.zeros((10**6, 4), np.float32)                        # -> a (10**6, 65536) f32 result
    with pytest.raises(MemoryError, match=r"these sizes need about .* GiB for one operator"):
        fn(x)
