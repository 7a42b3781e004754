"""Moving arrays between numpy and the TVM virtual machine, safely.

The VM's kernels assume 64-byte-aligned buffers; a raw numpy array handed over can crash the
process (TVM-NOTES §8), so every argument goes through ``Marshaller.to_tvm``.
"""
from __future__ import annotations

import numpy as np


class Marshaller:
    def __init__(self, param_dtypes: list):
        self.param_dtypes = list(param_dtypes)

    def to_tvm(self, arrays: list) -> list:
        import tvm

        # np.ascontiguousarray would turn a 0-d array into a 1-d one
        return [tvm.runtime.tensor(np.array(a, order="C", copy=not a.flags.c_contiguous))
                for a in arrays]

    def to_numpy(self, result):
        if hasattr(result, "numpy"):
            return result.numpy()
        return tuple(self.to_numpy(r) for r in result)
