"""A language model's decode step imports through from_torch (issue 32): the static KV cache
updated the usual ways (``index_copy_``, ``cache[:, :, pos] = k``, ``torch.where``), the last
position read with a negative index, and greedy tokens equal to PyTorch's."""
import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import mlclab
from mlclab.frontend.pytorch import InputMutationWarning, UnsupportedModel

LAYERS, HEADS, WIDTH, MAX_LEN, VOCAB = 2, 4, 32, 16, 61


class Block(nn.Module):
    def __init__(self, update: str):
        super().__init__()
        self.update = update
        self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        self.fc, self.out = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x, k_cache, v_cache, pos):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(d, dim=2))
        if self.update == "index_copy_":
            k_cache.index_copy_(2, pos, k)
            v_cache.index_copy_(2, pos, v)
        elif self.update == "setitem":
            k_cache[:, :, pos] = k
            v_cache[:, :, pos] = v
        else:                      # where: the one-hot rows of the new positions
            hit = (torch.arange(MAX_LEN)[:, None] == pos[None, :]).float()
            written = hit.sum(1).bool()[None, None, :, None]
            k_cache = torch.where(written, hit @ k, k_cache)
            v_cache = torch.where(written, hit @ v, v_cache)
        scores = q @ k_cache.transpose(-2, -1) / math.sqrt(d // HEADS)
        visible = torch.arange(MAX_LEN)[None, :] <= pos[:, None]
        att = scores.masked_fill(~visible, float("-inf")).softmax(-1)
        x = x + self.proj((att @ v_cache).transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh")), k_cache, v_cache


class DecodeStep(nn.Module):
    """One token in, its logits and the caches with its keys and values written at ``pos``."""

    def __init__(self, update: str):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, WIDTH), nn.Embedding(MAX_LEN, WIDTH)
        self.blocks = nn.ModuleList(Block(update) for _ in range(LAYERS))
        self.ln_f, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, ids, pos, k_cache, v_cache):
        x = self.wte(ids) + self.wpe(pos)
        ks, vs = [], []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, k_cache[i], v_cache[i], pos)
            ks.append(k)
            vs.append(v)
        return self.head(self.ln_f(x))[:, -1, :], torch.stack(ks), torch.stack(vs)


def empty_cache():
    return torch.zeros(LAYERS, 1, HEADS, MAX_LEN, WIDTH // HEADS)


def greedy(step, first: int, steps: int) -> list:
    k, v, tokens = empty_cache(), empty_cache(), [first]
    for pos in range(steps):
        logits, k, v = step(torch.tensor([[tokens[-1]]]), torch.tensor([pos]), k, v)
        tokens.append(int(np.argmax(np.asarray(logits))))
        k, v = torch.as_tensor(np.asarray(k)), torch.as_tensor(np.asarray(v))
    return tokens


@pytest.mark.parametrize("update", ["index_copy_", "setitem", "where"])
def test_a_static_cache_decode_step_gives_pytorchs_greedy_tokens(update):
    torch.manual_seed(0)
    model = DecodeStep(update).eval()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = mlclab.from_torch(model, torch.tensor([[1]]), torch.tensor([0]), empty_cache(),
                               empty_cache())
    # In place on an input: said, since the compiled function returns the new cache instead
    mutated = [w for w in caught if issubclass(w.category, InputMutationWarning)]
    assert bool(mutated) == (update != "where"), [str(w.message) for w in caught]
    if mutated:
        assert "k_cache" in str(mutated[0].message) and mutated[0].filename == __file__
    with torch.no_grad():
        want = greedy(lambda *a: model(*(t.clone() for t in a)), 5, MAX_LEN)
    assert greedy(fn, 5, MAX_LEN) == want
    assert len(set(want)) > 3, "the test needs tokens that change"


class Put(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x, i, j, v):
        x = x.clone()
        exec(self.body)       # the test's own literal statements, one per case
        return x


@pytest.mark.parametrize("body,v_shape", [
    ("x[:, i] = v", (4, 3, 5)),                    # leading whole dim, trailing whole dim
    ("x[:, :, i] = v", (4, 4, 3)),                  # index tensors last
    ("x[i, :, j] = v", (3, 4)),                     # separated: the indexed shape goes first
    ("x[:, i, j] = v", (4, 3)),                     # adjacent in the middle
    ("x[i] = v", (5,)),                             # broadcast values
    ("x.index_put_((torch.arange(4)[:, None], i), v, accumulate=True)", (4, 3, 5)),
    ("x.index_copy_(1, i, v)", (4, 3, 5)),
])
def test_index_put_with_whole_dimensions_matches_pytorch(body, v_shape):
    x = torch.randn(4, 4, 5)
    i, j = torch.tensor([3, 0, 2]), torch.tensor([1, 4, 0])
    v = torch.randn(*v_shape)
    model = Put(body)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputMutationWarning)
        fn = mlclab.from_torch(model, x, i, j, v)
    np.testing.assert_allclose(fn(x.numpy(), i.numpy(), j.numpy(), v.numpy()),
                               model(x, i, j, v).numpy(), rtol=1e-6, atol=1e-6)


class Last(nn.Module):
    def forward(self, x):
        return x[:, -1, :] * 2 + x.select(1, -3)


def test_a_negative_index_counts_from_the_end():
    x = torch.randn(2, 3, 4)
    fn = mlclab.from_torch(Last(), x)
    np.testing.assert_array_equal(fn(x.numpy()), Last()(x).numpy())


class BufferCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 3))

    def forward(self, x, pos):
        self.cache.index_copy_(0, pos, x)
        return self.cache * 1


def test_a_cache_kept_in_a_buffer_is_refused_with_what_to_do():
    with pytest.raises(UnsupportedModel, match="buffer 'cache' in place.*pass that tensor"):
        mlclab.from_torch(BufferCache(), torch.ones(1, 3), torch.tensor([1]))


def test_a_refused_translation_leaves_tvm_quiet():
    script = textwrap.dedent("""
        import gc, torch, mlclab
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x) * 2
        def refuse(node, importer):
            raise RuntimeError("no thanks")
        try:
            mlclab.from_torch(M(), torch.ones(2, 3), convert_map={"relu.default": refuse})
        except ValueError as exc:
            print("refused:", exc)
        gc.collect()
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert "refused: TVM could not translate PyTorch operator aten.relu" in run.stdout, run
    assert "BlockBuilder" not in run.stderr, run.stderr
