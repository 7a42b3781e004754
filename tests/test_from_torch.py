"""mlclab.from_torch: PyTorch modules through mlclab's pipeline, used like DSL functions and
validated against PyTorch (issue 12)."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlclab

import torch


class MLP(torch.nn.Module):
    """Lesson 5's network: 8x8 digits -> 10 classes."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 32)
        self.act = torch.nn.ReLU()
        self.drop = torch.nn.Dropout(0.5)      # identity in eval mode, the mode mlclab compiles
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = MLP()
    return model, mlclab.from_torch(model, torch.randn(4, 64))


@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    model = mlclab.import_torchvision().models.resnet18(weights=None)
    return model, mlclab.from_torch(model, torch.randn(1, 3, 224, 224))


def torch_out(model, x):
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def test_mlp_matches_pytorch_with_numpy_and_torch_inputs(mlp):
    model, fn = mlp
    assert isinstance(fn, mlclab.CompiledFunction) and fn.name == "MLP"
    assert fn.signature() == "MLP(x: Tensor[(4, 64), f32]) -> Tensor[(4, 10), f32]"
    x = np.random.default_rng(1).standard_normal((4, 64), dtype=np.float32)
    expected = torch_out(model, x)
    np.testing.assert_allclose(fn(x), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fn(torch.from_numpy(x)), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fn.reference(x), expected, rtol=0, atol=0)


def test_export_uses_eval_mode_and_gives_the_model_its_mode_back():
    model = MLP().train()
    fn = mlclab.from_torch(model, torch.randn(4, 64))
    assert model.training and model.drop.training           # untouched
    x = np.ones((4, 64), np.float32)
    # (dropout in training mode would have zeroed half the hidden units)
    np.testing.assert_allclose(fn(x), torch_out(MLP.eval(model), x), rtol=1e-5, atol=1e-5)


def test_validate_compares_with_pytorch_layer_by_layer(mlp):
    _, fn = mlp
    report = mlclab.validate(fn, seed=0)
    assert report.ok, report
    assert report.reference_name.startswith("PyTorch MLP")
    assert report.bindings, "each ATen node's value is compared"
    lines = {b.source_line.strip() for b in report.bindings}
    assert any(line.startswith("fc1: Linear(in_features=64") for line in lines)


def test_bindings_know_their_module_path_and_operator(mlp):
    _, fn = mlp
    infos = list(fn.bindings.values())
    assert {i.module for i in infos} >= {"", "fc1", "act", "fc2"}
    relu = [i for i in infos if i.module == "act"]
    assert relu and relu[-1].origin == "aten.relu"
    assert fn.source.splitlines()[relu[-1].span.lineno - 1].strip() == "act: ReLU()"
    assert all(i.span.lineno >= 1 for i in infos)


def test_resnet18_matches_pytorch_and_agrees_on_top1(resnet):
    model, fn = resnet
    rng = np.random.default_rng(2)
    for _ in range(2):
        x = rng.standard_normal((1, 3, 224, 224), dtype=np.float32)
        got, want = fn(x), torch_out(model, x)
        assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())
        assert got.argmax() == want.argmax()
    paths = {i.module for i in fn.bindings.values()}
    assert {"conv1", "layer1.0.conv1", "layer4.1.bn2", "fc"} <= paths
    unmapped = [v for b in fn.relax_function.body.blocks for v in [x.var for x in b.bindings]
                if v not in fn.bindings]
    assert not unmapped


def test_resnet18_validates_and_every_view_renders(resnet):
    _, fn = resnet
    report = mlclab.validate(fn, seed=0)
    assert report.ok, report
    assert fn.text("relax").count("R.nn.conv2d(") == 20
    assert len(fn.graph(collapse=None).graph.find(op="nn.conv2d")) == 20
    assert "conv2d" in fn.text("tir")
    assert fn.pipeline()["FuseOps"].mod is not None


def test_transformer_encoder_layer_matches_pytorch():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                             dropout=0.0, batch_first=True, activation="gelu")
    fn = mlclab.from_torch(layer, torch.randn(2, 8, 32))
    report = mlclab.validate(fn, seed=1)
    assert report.ok, report
    assert any(i.module.startswith("self_attn") for i in fn.bindings.values())


def test_dynamic_batch_is_a_symbolic_size_named_batch():
    torch.manual_seed(0)
    model = MLP()
    fn = mlclab.from_torch(model, torch.randn(4, 64), dynamic_batch=True)
    assert fn.signature() == "MLP(x: Tensor[(batch, 64), f32]) -> Tensor[(batch, 10), f32]"
    for n in (3, 7):
        x = np.random.default_rng(n).standard_normal((n, 64), dtype=np.float32)
        np.testing.assert_allclose(fn(x), torch_out(model, x), rtol=1e-5, atol=1e-5)
    assert mlclab.validate(fn, seed=2).ok


def test_dynamic_batch_of_a_sequence_model():
    # A linear layer over (batch, 5, 8) reshapes to (batch * 5, 8), which TVM prints as
    # "batch * T.int64(5)": the memory guard must read that size, not refuse the model.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    fn = mlclab.from_torch(model, torch.randn(2, 5, 8), dynamic_batch=True)
    assert fn.signature() == \
        "Sequential(input: Tensor[(batch, 5, 8), f32]) -> Tensor[(batch, 5, 4), f32]"
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 5, 8), dtype=np.float32)
        np.testing.assert_allclose(fn(x), torch_out(model, x), rtol=1e-5, atol=1e-5)


def test_params_as_inputs_take_the_weights_after_the_inputs():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    fn = mlclab.from_torch(model, torch.randn(2, 8), params_as_inputs=True)
    assert [p.name for p in fn.params] == ["input", "p_0_weight", "p_0_bias", "p_2_weight",
                                           "p_2_bias"]
    weights = [p.detach().numpy() for p in model.parameters()]
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(fn(x, *weights), torch_out(model, x), rtol=1e-5, atol=1e-6)
    halved = [w / 2 for w in weights]
    np.testing.assert_allclose(fn(x, *halved), fn.reference(x, *halved), rtol=1e-5, atol=1e-6)
    assert mlclab.validate(fn, seed=0).ok           # random weights, PyTorch given the same


class Tagger(torch.nn.Module):
    """Integer inputs and two outputs."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, ids):
        h = self.emb(ids)
        return self.head(h).softmax(-1), h.mean(1)


def test_integer_inputs_and_tuple_outputs():
    torch.manual_seed(0)
    model = Tagger()
    fn = mlclab.from_torch(model, torch.tensor([[1, 2, 3]]))
    ids = np.array([[9, 0, 4]])
    got = fn(ids)
    with torch.no_grad():
        want = model.eval()(torch.from_numpy(ids))
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    report = mlclab.validate(fn, seed=0)
    assert report.ok and report.inputs[0][1].max() < 10     # drawn inside the table


@pytest.mark.parametrize("bad", [10, -1, 2**40])
def test_an_index_outside_the_embedding_is_refused_not_read(bad):
    # TVM's take reads out of bounds (the process dies); PyTorch refuses the index.
    fn = mlclab.from_torch(Tagger(), torch.tensor([[1, 2, 3]]))
    fn(np.array([[1, 2, 3]]))          # the calls after a first one take the thin call: checked too
    with pytest.raises(IndexError, match=r"argument ids holds index .* outside 0\.\.9 for "
                                         r"aten.embedding in emb \(emb: Embedding\(10, 4\)\)"):
        fn(np.array([[1, bad, 3]]))
    with pytest.raises(ValueError, match="outside 0..9"):
        fn.reference(np.array([[1, bad, 3]]))


class NotOnFloats(torch.nn.Module):
    def forward(self, x):
        return torch.bitwise_not(x)


def test_an_example_pytorch_itself_refuses_is_refused_in_pytorch_s_words():
    # torch.export accepts bitwise_not on floats (its meta kernel checks no dtype); TVM's
    # build then fails with a C++ check. The student's mistake is the example: say PyTorch's.
    with pytest.raises(ValueError) as info:
        mlclab.from_torch(NotOnFloats(), torch.randn(3))
    message = str(info.value)
    assert "fails in PyTorch itself on these example inputs" in message
    assert "\"bitwise_not_cpu\" not implemented for 'Float'" in message
    assert "Check failed" not in message and "T." not in message
    fn = mlclab.from_torch(NotOnFloats(), torch.tensor([0, 5, -2], dtype=torch.int32))
    np.testing.assert_array_equal(fn(np.array([1, 2, 3], np.int32)), [-2, -3, -4])


def test_a_computed_index_is_refused_in_the_graph_never_read_out_of_bounds():
    code = textwrap.dedent("""
        import numpy as np, torch, mlclab
        class Shifted(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(10, 4)
            def forward(self, ids):
                return self.emb(ids * 1000)
        fn = mlclab.from_torch(Shifted(), torch.tensor([[0, 0, 0]]))
        print(fn(np.array([[0, 0, 0]])).shape)
        try:
            fn(np.array([[1, 2, 3]]))
        except IndexError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    shape, message = out.stdout.strip().splitlines()
    assert shape == "(1, 3, 4)"
    assert message == ("calling Shifted: aten.embedding in emb (emb: Embedding(10, 4)): an index "
                       "of dimension 0 is outside 0..9 (PyTorch refuses it too)")


# ----------------------------------------------------------------------------- errors
def test_bad_arguments_name_the_parameter():
    with pytest.raises(TypeError, match="module must be a torch.nn.Module, got function"):
        mlclab.from_torch(lambda x: x, torch.ones(1))
    with pytest.raises(TypeError, match="pass example inputs"):
        mlclab.from_torch(MLP())
    with pytest.raises(TypeError, match=r"example_args\[1\] must be a torch.Tensor or a numpy "
                                        r"array, got list"):
        mlclab.from_torch(MLP(), torch.ones(4, 64), [1, 2])
    with pytest.raises(TypeError, match="dynamic_batch must be True or False"):
        mlclab.from_torch(MLP(), torch.ones(4, 64), dynamic_batch=1)
    with pytest.raises(ValueError, match="target"):
        mlclab.from_torch(MLP(), torch.ones(4, 64), target="cuda")


def test_wrong_call_arguments_get_mlclabs_messages(mlp):
    _, fn = mlp
    with pytest.raises(TypeError, match="must be a float32 array"):
        fn(np.ones((4, 64)))
    with pytest.raises(ValueError, match=r"must have shape \(4, 64\)"):
        fn(np.ones((3, 64), np.float32))
    with pytest.raises(TypeError, match="takes 1 argument"):
        fn(np.ones((4, 64), np.float32), np.ones((4, 64), np.float32))


class Gamma(torch.nn.Module):
    def forward(self, x):
        return torch.lgamma(x)


def test_an_operator_tvm_cannot_translate_is_named_with_its_module_path():
    model = torch.nn.Sequential()
    model.add_module("proj", torch.nn.Linear(4, 4))
    model.add_module("gamma", Gamma())
    with pytest.raises(ValueError) as err:
        mlclab.from_torch(model, torch.randn(2, 4))
    message = str(err.value)
    assert "aten.lgamma" in message and "gamma (gamma: Gamma())" in message
    assert "Traceback" not in message


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


def test_data_dependent_control_flow_is_a_clear_error_at_its_line(capfd):
    with pytest.raises(ValueError, match=r"torch.export could not capture Branchy: Python control "
                                         r"flow on a tensor's value at forward, line \d+: "
                                         r"`if x.sum\(\) > 0:` .*use torch.where"):
        mlclab.from_torch(Branchy(), torch.randn(2, 4))
    out, err = capfd.readouterr()
    assert "def forward" not in out + err          # torch's graph dump stays out of the cell


def test_a_model_that_fails_on_its_example_inputs_says_so():
    # torch.export fails first; PyTorch's own run says what is wrong with the example.
    with pytest.raises(ValueError, match=r"forward fails in PyTorch itself on these example "
                                         r"inputs \(RuntimeError: mat1 and mat2 shapes cannot be "
                                         r"multiplied \(2x3 and 4x2\)\)"):
        mlclab.from_torch(torch.nn.Linear(4, 2), torch.randn(2, 3))


def test_imported_functions_copy_as_themselves_and_refuse_pickling():
    code = textwrap.dedent("""
        import copy, pickle, torch, mlclab
        fn = mlclab.from_torch(torch.nn.Linear(3, 2), torch.ones(1, 3))
        assert copy.copy(fn) is fn and copy.deepcopy(fn) is fn
        for obj in (fn, fn.program, fn.bindings):
            try:
                pickle.dumps(obj)
            except TypeError as exc:
                print(type(obj).__name__, "refused:",
                      "from_torch" in str(exc) or "bindings" in repr(obj))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("refused: True") == 3, out.stdout


def test_a_divergent_layer_is_named_by_its_module_path(mlp, monkeypatch):
    _, fn = mlp
    honest = type(fn).trace

    def off_after_relu(self, *args):
        values = honest(self, *args)
        relu = next(i.name for i in self.bindings.values() if i.origin == "aten.relu")
        values[relu] = values[relu] + 1.0
        return values

    monkeypatch.setattr(type(fn), "trace", off_after_relu)
    report = mlclab.validate(fn, seed=0)
    bad = report.first_divergent_binding
    assert bad is not None and bad.module == "act" and bad.source_line.strip() == "act: ReLU()"
    assert not report.ok


class Block(torch.nn.Module):
    """A residual block: the two blocks of a stack compile to the same fused kernels."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.relu = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(16)

    def forward(self, x):
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + x)


def test_each_call_of_a_shared_kernel_is_profiled_as_its_own_layer():
    torch.manual_seed(0)
    fn = mlclab.from_torch(torch.nn.Sequential(Block(), Block()), torch.randn(1, 16, 32, 32))
    prof = fn.profile(repeat=1)
    module_at = {i.span.lineno: i.module for i in fn.bindings.values()}
    convs = [k for k in prof.kernels if "conv2d" in k.name]            # in the order they ran
    assert len({k.name for k in convs}) == 2 and len(convs) == 4
    named = [sorted(module_at[line] for line in k.lines if module_at.get(line, "").endswith(
        ("conv1", "conv2"))) for k in convs]
    assert named == [["0.conv1"], ["0.conv2"], ["1.conv1"], ["1.conv2"]]
    # the batch norms were folded into the convolutions, under the convolutions' names
    assert not [k for k in prof.kernels if "batch_norm" in k.name]


def test_a_0d_numpy_example_compiles_for_shape_0d():
    """np.ascontiguousarray makes a 0-d array 1-d; the example's shape () must survive."""
    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    example = np.array(3.0, dtype=np.float32)
    fn = mlclab.from_torch(Double(), example)
    assert fn.typed.params[0].type.shape == () and fn.typed.ret_type.shape == ()
    out = fn(example)
    assert out.shape == () and out == np.float32(6.0)
