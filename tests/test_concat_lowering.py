"""Concatenation lowered as one copy block per input (mlclab.backend.concat, issue 21's compile
time): exactly the inputs' values, no per-element choice left for LLVM, and TVM's own lowering
where the shapes are not known."""
import numpy as np
import pytest

import mlclab
from mlclab.backend.schedules.tir_util import blocks_of

import torch
import tvm


class Cat(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, *xs):
        return torch.cat(xs, self.dim)


def _inputs(shapes):
    rng = np.random.default_rng(0)
    return [torch.from_numpy(rng.standard_normal(s).astype("float32")) for s in shapes]


def _concat_kernels(fn) -> list:
    """The PrimFuncs legalization made for the model's concatenations."""
    mod = fn.build_record["LegalizeOps"].mod
    return [f for gv, f in mod.functions_items()
            if isinstance(f, tvm.tirx.PrimFunc) and gv.name_hint.startswith("concatenate")]


def _blocks(func) -> list:
    return [block.name_hint for block in blocks_of(func)]


@pytest.mark.parametrize("dim, shapes", [
    (1, [(1, 32, 7, 7), (1, 16, 7, 7), (1, 8, 7, 7), (1, 24, 7, 7)]),   # DenseNet's channels
    (-1, [(2, 3, 5), (2, 3, 1), (2, 3, 4)]),                            # the last axis
])
def test_one_copy_block_per_input_and_exactly_the_inputs(dim, shapes):
    xs = _inputs(shapes)
    fn = mlclab.from_torch(Cat(dim).eval(), *xs)
    np.testing.assert_array_equal(fn(*[x.numpy() for x in xs]), torch.cat(xs, dim).numpy())
    (kernel,) = _concat_kernels(fn)
    assert _blocks(kernel) == [f"T_concat_{i}" for i in range(len(shapes))]
    assert "if_then_else" not in kernel.script()


def test_a_symbolic_batch_keeps_tvm_s_lowering_and_its_values():
    xs = _inputs([(2, 4, 3), (2, 5, 3)])
    fn = mlclab.from_torch(Cat(1).eval(), *xs, dynamic_batch=True)
    more = _inputs([(3, 4, 3), (3, 5, 3)])
    np.testing.assert_array_equal(fn(*[x.numpy() for x in more]), torch.cat(more, 1).numpy())
    assert not any(_blocks(k) == ["T_concat_0", "T_concat_1"] for k in _concat_kernels(fn))
