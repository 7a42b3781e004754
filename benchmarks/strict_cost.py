"""What strict math costs: each workload compiled strict (the default) and with
``fast_math=True``, the two timed interleaved in one process, the ratio printed.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE TVM_NUM_THREADS=1 \\
        python benchmarks/strict_cost.py [--models resnet18d,bert-2,...] [--rounds N]

Workloads: the DSL kernels of benchmarks/kernels.py, a few element-wise programs where the
strict lowering is the whole kernel (``a * b + c`` loses its fused multiply-add, float ``%``
is a libm ``fmod`` per element), and the zoo models named (benchmarks/zoo.py; default a
convolution net, a transformer encoder and a depthwise net). ``strict/fast`` above 1 is
what strict costs; the load average is printed beside, since the machine is shared.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import mlclab  # noqa: E402
from kernels import PROGRAM  # noqa: E402
from timing import interleave  # noqa: E402

ELEMENTWISE = '''
def fma(a: Tensor[(1024, 1024), f32], b: Tensor[(1024, 1024), f32], c: Tensor[(1024, 1024), f32]):
    return a * b + c

def compare_select(a: Tensor[(1024, 1024), f32], b: Tensor[(1024, 1024), f32]):
    return where(a < b, a, b * 0.5)

def int_add(a: Tensor[(1024, 1024), i32], b: Tensor[(1024, 1024), i32]):
    return a + b * 3

def float_mod(a: Tensor[(1024, 1024), f32], b: Tensor[(1024, 1024), f32]):
    return a % b
'''

DEFAULT_MODELS = "squeezenet,mobilenet-v2,bert-2"


def _inputs(fn, rng):
    out = []
    for p in fn.program.typed.functions[fn.name].params:
        shape = tuple(int(d) for d in p.type.shape)
        if p.type.dtype.startswith("int"):
            out.append(rng.integers(-1000, 1000, shape).astype(p.type.dtype))
        else:
            out.append(rng.standard_normal(shape).astype(p.type.dtype) + 3.0)
    return out


def dsl_rows(rounds: int) -> list:
    rng = np.random.default_rng(0)
    rows = []
    for source in (PROGRAM, ELEMENTWISE):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strict, fast = mlclab.compile(source), mlclab.compile(source, fast_math=True)
        for name in strict:
            args = _inputs(strict[name], rng)
            s, f = strict[name], fast[name]
            (ms_s, ms_f), _ = interleave([lambda: s(*args), lambda: f(*args)], rounds=rounds)
            rows.append((name, ms_s, ms_f))
    return rows


def model_rows(names: list, rounds: int) -> list:
    import torch

    from zoo import MODELS

    torch.set_num_threads(1)
    rows = []
    for name in names:
        torch.manual_seed(0)
        model, inputs = MODELS[name].build()
        model.eval()
        arrays = [x.numpy().copy() for x in inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = mlclab.from_torch(model, *inputs)
            f = mlclab.from_torch(model, *inputs, fast_math=True)
        (ms_s, ms_f), _ = interleave([lambda: s(*arrays), lambda: f(*arrays)], rounds=rounds,
                                     warmup=2)
        rows.append((name, ms_s, ms_f))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS,
                        help=f"zoo models, comma separated (default {DEFAULT_MODELS}; '' none)")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds")
    parser.add_argument("--no-kernels", action="store_true", help="only the zoo models")
    args = parser.parse_args(argv)
    print(f"threads: TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS', 'unset')}, "
          f"load at start {os.getloadavg()[0]:.2f}")
    print(f"{'workload':<24} {'strict ms':>10} {'fast ms':>10} {'strict/fast':>12}")
    rows = [] if args.no_kernels else dsl_rows(args.rounds)
    if args.models:
        rows += model_rows(args.models.split(","), max(5, args.rounds // 2))
    for name, s, f in rows:
        print(f"{name:<24} {s:>10.3f} {f:>10.3f} {s / f:>12.3f}")
    print(f"load at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
