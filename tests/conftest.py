import os

import pytest

# The suite compiles thousands of programs: none goes to the user's disk cache, and no test
# depends on what an earlier run left there. tests/test_disk_cache.py turns it on in folders
# of its own. (Kernels and subprocesses the tests start inherit this.)
os.environ["MLCLAB_CACHE_DIR"] = "off"
os.environ.pop("MLCLAB_SHARED_CACHE_DIR", None)

from needs import need

def pytest_configure(config):
    config.addinivalue_line("markers", "needs(present, what): a part the suite needs; when it "
                            "is missing the test fails saying what -- it never skips")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs"):
        need(*mark.args)


@pytest.fixture(scope="session")
def ipython_shell():
    """IPython's one global test shell: started by the first test module that asks, shared after
    (``start_ipython`` returns None on a second call)."""
    from IPython.testing import globalipapp

    return globalipapp.start_ipython() or globalipapp.get_ipython()


@pytest.fixture(scope="session")
def encoder_stack():
    """``encoder_stack(n)``: a small PyTorch encoder of ``n`` layers (modules ``layers.K`` and
    inside them ``self_attn``, ``linear1``...), imported once per ``n`` for the session."""
    made = {}

    def make(num_layers: int):
        if num_layers not in made:
            import torch
            import mlclab

            torch.manual_seed(0)
            layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=2, dim_feedforward=64,
                                                     dropout=0.0, batch_first=True)
            model = torch.nn.TransformerEncoder(layer, num_layers=num_layers,
                                                enable_nested_tensor=False).eval()
            made[num_layers] = mlclab.from_torch(model, torch.randn(1, 8, 32))
        return made[num_layers]
    return make
