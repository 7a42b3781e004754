"""Transformer models from Hugging Face transformers, built from tiny configs with random
weights (nothing downloaded): GPT-2 imports, with its DynamicCache output flattened to
tensors, and a cached decoding step runs (issue 21); BERT takes mlclab's own pipeline, not
TVM's unscheduled fallback."""
import numpy as np
import pytest

import torch
import mlclab  # noqa: E402

mlclab.import_torchvision()        # transformers imports torchvision when it is installed
import transformers  # noqa: E402


@pytest.fixture(scope="module")
def gpt2():
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=100,
                                     n_positions=32, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    return transformers.GPT2Model(config).eval()


def test_gpt2_imports_with_its_cache_as_outputs(gpt2):
    ids = np.array([[1, 2, 3, 4]])
    fn = mlclab.from_torch(gpt2, torch.from_numpy(ids))
    hidden, *cache = fn(ids)
    with torch.no_grad():
        want = gpt2(torch.from_numpy(ids))
    np.testing.assert_allclose(hidden, want.last_hidden_state.numpy(), rtol=1e-4, atol=1e-4)
    # the cache flattens as transformers registers it: every layer's keys, then the values
    layers = want.past_key_values.layers
    keys_values = [layer.keys for layer in layers] + [layer.values for layer in layers]
    assert len(cache) == len(keys_values) == 4
    for got, expected in zip(cache, keys_values):
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-4)
    assert fn.program.optimized
    # The PyTorch reference's output flattens as export flattened it: the cache too.
    report = mlclab.validate(fn, ids)
    assert report.ok and len(report.outputs) == 5


class DecodeStep(torch.nn.Module):
    """One cached decoding step: the new token's ids and the past keys and values as
    tensors (what a compiled function takes), the cache rebuilt inside."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, k0, v0, k1, v1):
        cache = transformers.DynamicCache([(k0, v0), (k1, v1)], config=self.model.config)
        out = self.model(ids, cache=cache)
        return out.last_hidden_state


def test_a_cached_gpt2_decoding_step_matches_pytorch(gpt2):
    rng = np.random.default_rng(0)
    past = [rng.standard_normal((1, 2, 4, 32)).astype(np.float32) for _ in range(4)]
    ids = np.array([[7]])
    step = DecodeStep(gpt2)
    fn = mlclab.from_torch(step, torch.from_numpy(ids), *map(torch.from_numpy, past))
    with torch.no_grad():
        want = step(torch.from_numpy(ids), *map(torch.from_numpy, past))
    np.testing.assert_allclose(fn(ids, *past), want.numpy(), rtol=1e-4, atol=1e-4)


def test_bert_takes_mlclabs_own_pipeline():
    # Rebuilding the imported function once made TVM's FuseTransposeMatmul fail on BERT, and
    # the whole build fell back to TVM's unscheduled pipeline, 30x slower, without a word.
    config = transformers.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                     intermediate_size=128, vocab_size=100,
                                     max_position_embeddings=32)
    torch.manual_seed(0)
    bert = transformers.BertModel(config).eval()
    ids = np.array([[1, 5, 7, 2]])
    fn = mlclab.from_torch(bert, torch.from_numpy(ids))
    assert fn.program.optimized
    with torch.no_grad():
        want = bert(torch.from_numpy(ids)).last_hidden_state.numpy()
    np.testing.assert_allclose(fn(ids)[0], want, rtol=1e-4, atol=1e-4)
