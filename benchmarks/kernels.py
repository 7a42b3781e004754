"""mlclab against numpy on the workloads of issue 6, through the public call path.

    python benchmarks/kernels.py [--json FILE] [--quick]

Every mlclab figure is a call of a compiled ``mlclab.compile`` function on numpy arrays
(argument checks, marshalling, the VM call, the result as a numpy array), timed
interleaved with the numpy expression a student would write for the same program.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import mlclab  # noqa: E402
from mlclab.runtime import aligned_copy  # noqa: E402
from timing import HEADER, compare  # noqa: E402

PROGRAM = '''
def fused(a: Tensor[(2048, 2048), f32], b: Tensor[(2048, 2048), f32], c: Tensor[(2048, 2048), f32]):
    return relu(a * b + c)

def matmul_relu(a: Tensor[(512, 512), f32], b: Tensor[(512, 512), f32]):
    return relu(a @ b)

def mlp(x: Tensor[(64, 784), f32], w1: Tensor[(128, 784), f32], b1: Tensor[(128,), f32],
        w2: Tensor[(10, 128), f32], b2: Tensor[(10,), f32]):
    h = relu(linear(x, w1, b1))
    return linear(h, w2, b2)

def conv_block(x: Tensor[(1, 16, 64, 64), f32], w: Tensor[(32, 16, 3, 3), f32], b: Tensor[(32,), f32]):
    y = relu(conv2d(x, w, bias=b, padding=(1, 1)))
    return max_pool2d(y, (2, 2))
'''


def conv_block_numpy(x, w, b):
    """conv2d (3x3, padding 1) + bias + relu + 2x2 max-pool, the numpy way: an im2col
    window view contracted by BLAS."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(xp, (3, 3), axis=(2, 3))           # n, c, h, w, kh, kw
    y = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))        # n, h, w, o
    y = np.maximum(y.transpose(0, 3, 1, 2) + b[None, :, None, None], 0)
    n, o, h, wd = y.shape
    return y.reshape(n, o, h // 2, 2, wd // 2, 2).max(axis=(3, 5))


def misaligned(array):
    """A copy of ``array`` whose data is 16 bytes past a 64-byte boundary -- where numpy
    puts most large arrays -- so the call must stage it."""
    raw = aligned_copy(np.zeros(array.size + 16, array.dtype))
    out = raw[4:4 + array.size].reshape(array.shape)
    out[...] = array
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 7 if args.quick else 41

    rng = np.random.default_rng(0)
    prog = mlclab.compile(PROGRAM)

    def data(*shape):
        return aligned_copy(rng.standard_normal(shape, dtype=np.float32))

    results = []
    a, b, c = data(2048, 2048), data(2048, 2048), data(2048, 2048)
    f = prog["fused"]
    np.testing.assert_allclose(f(a, b, c), np.maximum(a * b + c, 0), rtol=1e-5, atol=1e-5)
    results.append(compare("fused relu(a*b+c) 2048^2", lambda: f(a, b, c),
                           lambda: np.maximum(a * b + c, 0), goal=0.5, rounds=rounds))
    ma, mb, mc = misaligned(a), misaligned(b), misaligned(c)
    results.append(compare("  same, misaligned inputs (staged)", lambda: f(ma, mb, mc),
                           lambda: np.maximum(ma * mb + mc, 0), rounds=rounds))
    del a, b, c, ma, mb, mc

    a, b = data(512, 512), data(512, 512)
    g = prog["matmul_relu"]
    np.testing.assert_allclose(g(a, b), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    results.append(compare("matmul+relu 512x512", lambda: g(a, b),
                           lambda: np.maximum(a @ b, 0), goal=2.0, rounds=rounds))

    x, w1, b1, w2, b2 = data(64, 784), data(128, 784), data(128), data(10, 128), data(10)
    h = prog["mlp"]
    want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(h(x, w1, b1, w2, b2), want, rtol=1e-4, atol=1e-4)
    results.append(compare("MLP 64x784-128-10", lambda: h(x, w1, b1, w2, b2),
                           lambda: np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, goal=1.5,
                           rounds=rounds * 4, min_seconds=0 if args.quick else 1.0))

    x, w, bias = data(1, 16, 64, 64), data(32, 16, 3, 3), data(32)
    k = prog["conv_block"]
    np.testing.assert_allclose(k(x, w, bias), conv_block_numpy(x, w, bias), rtol=1e-4, atol=1e-4)
    results.append(compare("conv3x3+bias+relu+maxpool 16->32 64^2", lambda: k(x, w, bias),
                           lambda: conv_block_numpy(x, w, bias), rounds=rounds))

    print(HEADER)
    for r in results:
        print(r.row())
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"name": r.name.strip(), "mlclab_ms": r.mlclab_ms, "numpy_ms": r.numpy_ms,
              "ratio": r.ratio, "goal": r.goal, "rounds": r.rounds} for r in results],
            indent=2))
    return 0 if all(r.verdict != "MISSED" for r in results) else 1


if __name__ == "__main__":
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    # TVM's workers spin for a while after each parallel kernel, and OpenBLAS's do the same
    # after each BLAS call: interleaved on 2 cores, each pool's spinning starves the other
    # (measured: the MLP 0.4 ms -> 8 ms, numpy's 0.2 ms -> 30-50 ms).  With TVM's spinning
    # off, only mlclab pays for waking its workers -- the conservative choice here.
    os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "0")
    sys.exit(main())
