"""A model's matmul weights are packed into column panels once, at compile time
(``mlclab.PackWeights``), and the register tile reads the panels directly: no copy of the
weight per call, and the built code keeps only the packed layout (issue 21)."""
import numpy as np
import pytest

import torch
import mlclab  # noqa: E402
from mlclab.backend.pack_weights import pack_panels, padded_columns, panel_width  # noqa: E402
from mlclab.backend.schedules import vector_lanes  # noqa: E402


def _lanes():
    from mlclab.backend.targets import resolve_target

    return vector_lanes(resolve_target("llvm"))


def _linear(k, n, bias=True, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(k, n, bias=bias).eval()


def _kernels(fn):
    """(name, PrimFunc) of the built code, and the shapes of the Relax constants it holds."""
    from tvm import relax, tirx
    from tvm.ir.expr import Constant

    final = fn.build_record.final
    kernels, constants = {}, []
    for gv, func in final.functions_items():
        if isinstance(func, tirx.PrimFunc):
            kernels[gv.name_hint] = func
        elif isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, lambda node: constants.append(
                tuple(node.value.shape)) if isinstance(node, Constant)
                and hasattr(node.value, "shape") else None)
    return kernels, constants


def _executable_tensors(fn):
    """The shapes of the tensors in the built executable's constant pool (what a call keeps
    in memory), read from its statistics: ``[6, 64, 16]`` beside ``shapetuple[4, 96]``."""
    import re

    pool = str(fn.program.executable.stats()).split("Constant pool", 1)[1].split("Globals")[0]
    return {tuple(int(d) for d in m.split(", "))
            for m in re.findall(r"(?<!shapetuple)\[(\d+(?:, \d+)*)\]", pool)}


def _decisions(fn):
    return {name: rule for name, (rule, _declined) in fn.build_record.schedule_decisions().items()}


def _blocks(func):
    from mlclab.backend.schedules.tir_util import blocks_of

    return [b.name_hint for b in blocks_of(func)]


def test_panels_are_the_weight_rows_cut_into_vectors():
    w = np.arange(6 * 4, dtype=np.float32).reshape(6, 4)        # (N, K)
    panels = pack_panels(w, 2)
    assert panels.shape == (3, 4, 2)
    # panel p, row k holds the columns p*2 .. p*2+1 of B = w.T at row k
    for p in range(3):
        np.testing.assert_array_equal(panels[p], w.T[:, 2 * p:2 * p + 2])
    assert panel_width(768, 16) == 16 and panel_width(120, 16) == 8
    assert panel_width(40, 4) == 4 and panel_width(97, 16) is None and panel_width(6, 16) is None
    assert padded_columns(768, 16) == (16, 768) and padded_columns(97, 16) is None
    assert padded_columns(50257, 16) == (16, 50304) and padded_columns(50257, 8) == (8, 50272)
    panels = pack_panels(w, 4, columns=8)
    assert panels.shape == (2, 4, 4) and not panels[1, :, 2:].any()
    np.testing.assert_array_equal(panels[1, :, :2], w.T[:, 4:6])


@pytest.mark.parametrize("rows,k,n", [
    (1, 64, 48),       # one token (a decoding step): one row, the columns in three panels
    (197, 96, 144),    # ViT's 197 tokens, a prime no tile divides; 9 vectors of columns
    (5, 33, 120),      # odd K; 120 columns are half-vector panels on AVX-512
    (128, 256, 512),   # a transformer's shape, tiles dividing everything
    (6, 2048, 64),     # a deep reduction, run in blocks of K (K_BLOCK), rows not a tile's
])
def test_a_packed_linear_matches_numpy(rows, k, n):
    layer = _linear(k, n)
    x = np.random.default_rng(1).standard_normal((1, rows, k)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x))
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(fn(x), x @ w.T + b, rtol=1e-4, atol=1e-4)
    assert "register_tile_prepacked" in _decisions(fn).values()
    assert fn.program.optimized


def test_a_symbolic_batch_runs_on_the_same_packed_weight():
    layer = _linear(64, 96)
    x = np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x), dynamic_batch=True)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    for batch in (1, 3, 6):   # rows: one, fewer than a tile, a tile and a half
        xb = np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)
        np.testing.assert_allclose(fn(xb), xb @ w.T + b, rtol=1e-4, atol=1e-4)
    assert "register_tile_prepacked" in _decisions(fn).values()


def test_the_weight_is_packed_once_at_build_time_not_in_the_kernel():
    n, k = 256, 128
    layer = torch.nn.Sequential(_linear(k, n), torch.nn.ReLU()).eval()
    x = torch.randn(1, 32, k)
    fn = mlclab.from_torch(layer, x)
    kernels, constants = _kernels(fn)
    decisions = _decisions(fn)
    packed = [name for name, rule in decisions.items() if rule == "register_tile_prepacked"]
    assert len(packed) == 1
    func = kernels[packed[0]]
    width = panel_width(n, _lanes())
    # the kernel reads the panels as a parameter and copies nothing into a packed buffer
    shapes = [tuple(int(d) for d in p.ty.shape) for p in func.params]
    assert (n // width, k, width) in shapes
    assert not [b for b in _blocks(func) if b.endswith("_global") or "pack" in b and
                b not in ("packed_matmul_init", "packed_matmul_update")]
    # the built code holds the packed constant and not the weight in either layout
    assert (n // width, k, width) in constants
    assert (n, k) not in constants and (k, n) not in constants
    pool = _executable_tensors(fn)
    assert (n // width, k, width) in pool and (n,) in pool      # the panels and the bias
    assert (n, k) not in pool and (k, n) not in pool
    np.testing.assert_allclose(fn(x.numpy()), layer(x).detach().numpy(), rtol=1e-4, atol=1e-4)


def test_a_weight_read_twice_is_packed_once_and_its_lookup_reads_the_panels():
    class Tied(torch.nn.Module):
        """GPT-2's language-model head reads the token embedding: one weight, two uses."""

        def __init__(self):
            super().__init__()
            self.wte = torch.nn.Embedding(64, 64)
            self.head = _linear(64, 64, bias=False)
            self.head.weight = self.wte.weight

        def forward(self, ids):
            x = self.wte(ids)
            return self.head(x) + self.head(torch.relu(x))    # two matmuls, one weight

    model = Tied().eval()
    ids = torch.tensor([[1, 5, 9, 63]])
    fn = mlclab.from_torch(model, ids)
    np.testing.assert_allclose(fn(ids.numpy()), model(ids).detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    width = panel_width(64, _lanes())
    pool = _executable_tensors(fn)
    # the panels once for both matmuls and the embedding's lookup (packed_take): the weight
    # itself is not kept (lesson 13's tied head: 154 MB less)
    assert (64 // width, 64, width) in pool and (64, 64) not in pool
    assert "packed_take" in fn.text("tir")
    # one packed copy in the executable's constant pool (the module text shows the one
    # constant at each of its two readers)
    pool_text = str(fn.program.executable.stats()).split("Constant pool", 1)[1]
    assert pool_text.count(f"[{64 // width}, 64, {width}]") - \
        pool_text.count(f"shapetuple[{64 // width}, 64, {width}]") == 1
    # both matmuls read the panels: no kernel copies the weight into panels per call
    matmuls = {name: rule for name, rule in _decisions(fn).items() if "matmul" in name}
    assert matmuls and set(matmuls.values()) == {"register_tile_prepacked"}, matmuls


def test_columns_with_no_power_of_two_divisor_keep_the_general_rule():
    layer = _linear(32, 97)  # a prime: no panel width divides it
    x = np.random.default_rng(3).standard_normal((1, 16, 32)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x))
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(fn(x), x @ w.T + b, rtol=1e-4, atol=1e-4)
    assert "register_tile_prepacked" not in _decisions(fn).values()
    assert fn.program.optimized


@pytest.mark.parametrize("rows,n", [(1, 1001), (7, 50257 // 37)])
def test_columns_no_panel_divides_are_padded_to_whole_panels_and_cropped(rows, n):
    # A language model's head: GPT-2's 50,257 words have no power-of-two divisor
    layer = _linear(64, n, bias=False)
    x = np.random.default_rng(4).standard_normal((1, rows, 64)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x))
    np.testing.assert_allclose(fn(x), x @ layer.weight.detach().numpy().T, rtol=1e-4,
                               atol=1e-4)
    assert "register_tile_prepacked" in _decisions(fn).values()
    _kernels_, constants = _kernels(fn)
    lanes = _lanes()
    padded = [c for c in constants if len(c) == 3 and c[1:] == (64, lanes)]
    assert padded and padded[0][0] * lanes >= n and padded[0][0] * lanes - n < 4 * lanes
    assert (n, 64) not in constants


def test_columns_only_a_narrow_panel_divides_are_padded_to_full_vectors():
    # MobileViT's 120 and 360 columns divide into panels of 8 only: half an AVX-512 vector
    assert padded_columns(120, 16) == (16, 128)
    assert padded_columns(360, 16) == (16, 384)
    assert padded_columns(1000, 16) == (16, 1024)       # its classifier, one row
    assert padded_columns(24, 16) == (8, 24)            # 64 would be 40 more columns
    assert padded_columns(120, 8) == (8, 120)           # already a whole vector (AVX2)


@pytest.mark.parametrize("batch,rows,k,n", [(4, 64, 120, 360), (1, 37, 33, 120), (1, 1, 40, 1000)])
def test_a_matmul_with_narrow_panels_padded_matches_numpy(batch, rows, k, n):
    layer = _linear(k, n)
    x = np.random.default_rng(5).standard_normal((batch, rows, k)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x))
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(fn(x), x @ w.T + b, rtol=1e-4, atol=1e-4)
    assert "register_tile_prepacked" in _decisions(fn).values()
    width, columns = padded_columns(n, _lanes())
    _kernels_, constants = _kernels(fn)
    assert (columns // width, k, width) in constants and (n, k) not in constants


def test_a_vector_times_a_constant_matrix_is_left_as_it_is():
    from tvm import relax
    from tvm.relax import op as R

    from mlclab.backend.pack_weights import pack_weights

    bb = relax.BlockBuilder()
    v = relax.Var("v", relax.TensorType((32,), "float32"))
    with bb.function("main", [v]):
        with bb.dataflow():
            out = bb.emit_output(R.matmul(v, relax.const(np.ones((32, 48), np.float32))))
        bb.emit_func_output(out)
    mod = bb.get()
    assert pack_weights(16)(mod).same_as(mod)


def test_a_weight_broadcast_over_the_batch_axes_is_packed_once():
    # A linear layer on a transposed 4-D input (as in MobileViT's patches) is exported as a
    # batched matmul by the weight expanded over the batch axes: (4, 16, 40) @ (4, 40, 48).
    class OnPatches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = _linear(40, 48)

        def forward(self, x):
            return self.proj(x.transpose(1, 2))

    model = OnPatches().eval()
    x = torch.randn(1, 16, 4, 40)
    fn = mlclab.from_torch(model, x)
    assert "broadcast_to" in fn.mod.script()
    np.testing.assert_allclose(fn(x.numpy()), model(x).detach().numpy(), rtol=1e-4, atol=1e-4)
    assert "register_tile_prepacked" in _decisions(fn).values()
    pool = _executable_tensors(fn)
    assert (48, 40) not in pool and (40, 48) not in pool and (4, 40, 48) not in pool


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("mode", ["clip", "wrap", "fast"])
def test_packed_take_reads_the_rows_of_the_packed_weight(mode, transposed):
    import tvm
    from tvm import te

    from mlclab.backend.pack_weights import pack_panels, packed_take

    rng = np.random.default_rng(0)
    c = rng.standard_normal((40, 24)).astype(np.float32)      # the constant taken from
    weight_nk = c.T if transposed else c                       # the matmul's (N, K) weight
    width, columns = 8, 48                                     # padded: 6 panels for N = 40
    if transposed:
        columns = 32                                           # N = 24: 4 panels
    panels = pack_panels(np.ascontiguousarray(weight_nk), width, columns)
    ids = np.array([[0, 39, 7], [5, 39, 1]], np.int32)
    want = c[ids]
    if mode != "fast":                     # out of range: clipped or wrapped as TVM's take
        ids[0, 2] = 45 if mode == "clip" else -3
        want[0, 2] = c[39] if mode == "clip" else c[37]
    i = te.placeholder(ids.shape, "int32", name="ids")
    p = te.placeholder(panels.shape, "float32", name="panels")
    out = packed_take(i, p, c.shape, transposed, mode)
    f = tvm.compile(te.create_prim_func([i, p, out]), target="llvm")
    got = tvm.runtime.empty(want.shape, "float32")
    f(tvm.runtime.tensor(ids), tvm.runtime.tensor(panels), got)
    np.testing.assert_array_equal(got.numpy(), want)


def _packed_kernel_is_parallel(fn) -> bool:
    kernels, _ = _kernels(fn)
    packed = [name for name, rule in _decisions(fn).items() if rule == "register_tile_prepacked"]
    assert len(packed) == 1, _decisions(fn)
    return "T.parallel" in kernels[packed[0]].script()


@pytest.mark.parametrize("rows,k,n,parallel", [
    (1, 768, 768, True),       # a decoding step's projection: 2.25 MiB of weight streamed
    (1, 768, 3072, True),      # its MLP: 9 MiB
    (1, 512, 512, True),       # exactly PARALLEL_MIN_STREAM_BYTES (1 MiB)
    (1, 256, 512, False),      # 0.5 MiB, 131 K multiply-adds: one thread
    (3, 64, 48, False),        # 12 KB
    (64, 256, 512, True),      # 8.4 M multiply-adds: parallel for its arithmetic
])
def test_a_matmul_runs_in_parallel_by_its_work_or_the_weight_it_streams(rows, k, n, parallel):
    """One row does a multiply-add per weight element it loads: its time is the weight's
    bytes, which two cores stream faster than one (``PARALLEL_MIN_STREAM_BYTES``)."""
    from mlclab.backend.schedules.tir_util import PARALLEL_MIN_STREAM_BYTES

    assert PARALLEL_MIN_STREAM_BYTES == 1 << 20
    layer = _linear(k, n)
    x = np.random.default_rng(5).standard_normal((1, rows, k)).astype(np.float32)
    fn = mlclab.from_torch(layer, torch.from_numpy(x))
    assert _packed_kernel_is_parallel(fn) == parallel
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(fn(x), x @ w.T + b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_decoding_steps_matmuls_match_pytorch_on_one_and_two_threads(threads):
    """A decoding step's shapes (one row, each matmul parallel by the weight it streams), on
    one and on two threads (a subprocess each: TVM's pool is sized once per process): every result
    equals PyTorch's, call after call."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent('''
        import numpy as np, torch, mlclab
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(768, 2304), torch.nn.GELU(),
                                    torch.nn.Linear(2304, 768),
                                    torch.nn.Linear(768, 8192, bias=False)).eval()
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 1, 768)).astype("float32")
        fn = mlclab.from_torch(model, torch.from_numpy(x))
        assert "T.parallel" in fn.text("tir")
        for _ in range(20):
            x = rng.standard_normal((1, 1, 768)).astype("float32")
            with torch.no_grad():
                want = model(torch.from_numpy(x)).numpy()
            np.testing.assert_allclose(fn(x), want, rtol=1e-4, atol=1e-4)
        print("ok", mlclab.threads().count)
    ''')
    env = {**os.environ, "MLCLAB_NUM_THREADS": threads}
    env.pop("TVM_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["ok", threads]
