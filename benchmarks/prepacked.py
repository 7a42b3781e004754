"""Transformers with their matmul weights packed at build time (``mlclab.PackWeights``)
against the same build without that pass, side by side in one process (issue 21).

    TVM_NUM_THREADS=1 python benchmarks/prepacked.py [--models bert-base,gpt2] [--rounds N]

For each model of the zoo (``zoo.MODELS``: random weights, batch 1) both builds are timed
interleaved with PyTorch eager at the same thread count; printed per model: the medians,
the packed build's time as a ratio of the unpacked one, the share of a call the matmul
kernels take in each (``fn.profile()``), and the megabytes of constants each built module
holds (the packed build must not keep the weight in both layouts).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

DEFAULT = ["bert-base", "distilbert", "vit-b16", "gpt2", "mobilevit-xs"]
MATMUL_RULES = ("register_tile_prepacked", "register_tile_packed", "register_tile_padded",
                "register_tile")


def _constant_mb(fn) -> float:
    """Megabytes of the tensors in the built executable's constant pool (counted as 4-byte
    elements), read from its statistics: what a call keeps in memory."""
    import math
    import re

    pool = str(fn.program.executable.stats()).split("Constant pool", 1)[1].split("Globals")[0]
    shapes = re.findall(r"(?<!shapetuple)\[(\d+(?:, \d+)*)\]", pool)
    return sum(math.prod(int(d) for d in s.split(", ")) for s in shapes) * 4 / 2**20


def _matmul_ms(fn, arrays) -> tuple[float, float]:
    """(ms of the register-tiled reductions in one profiled call, ms of the whole call)."""
    prof = fn.profile(*arrays, repeat=3)   # one entry per kernel call
    matmul = sum(k.seconds for k in prof.kernels if k.rule in MATMUL_RULES)
    return matmul * 1e3, prof.total_seconds * 1e3


def _build(model, inputs, packed: bool):
    import mlclab
    from mlclab.backend import pack_weights

    original = pack_weights.pack_weights
    if not packed:  # the pass as an identity: the pipeline is otherwise the same
        import tvm
        pack_weights.pack_weights = lambda lanes: tvm.transform.module_pass(
            lambda mod, ctx: mod, opt_level=0, name="mlclab.PackWeights")
    try:
        started = time.perf_counter()
        fn = mlclab.from_torch(model, *inputs)
        return fn, time.perf_counter() - started
    finally:
        pack_weights.pack_weights = original


def measure(name: str, rounds: int) -> str:
    import numpy as np
    import torch

    from mlclab import tvm_setup
    from timing import interleave
    from zoo import MODELS

    threads = int(os.environ.get("TVM_NUM_THREADS", "1"))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, inputs = MODELS[name].build()
    model.eval()
    tvm_setup.tvm()
    arrays = [x.numpy().copy() for x in inputs]
    before, before_s = _build(model, inputs, packed=False)
    after, after_s = _build(model, inputs, packed=True)
    with torch.inference_mode():
        want = model(*inputs).numpy()
        errors = [float(np.abs(f(*arrays) - want).max() / max(np.abs(want).max(), 1e-30))
                  for f in (before, after)]
        (t_before, t_after, t_eager), _ = interleave(
            [lambda: before(*arrays), lambda: after(*arrays), lambda: model(*inputs)],
            rounds=rounds, warmup=2)
    mm_before, call_before = _matmul_ms(before, arrays)
    mm_after, call_after = _matmul_ms(after, arrays)
    return (f"| {name} | {threads} | {t_before:.1f} | {t_after:.1f} | {t_after / t_before:.2f}x "
            f"| {t_after / t_eager:.2f}x | {mm_before:.1f} of {call_before:.1f} "
            f"| {mm_after:.1f} of {call_after:.1f} | {_constant_mb(before):.0f} / "
            f"{_constant_mb(after):.0f} | {before_s:.0f} / {after_s:.0f} "
            f"| {max(errors):.1e} | {os.getloadavg()[0]:.1f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help=f"comma-separated zoo names (default "
                        f"{','.join(DEFAULT)})")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        print(f"skipped: {exc.name} is not installed (pip install 'mlclab[zoo]')")
        return 0
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.rounds} interleaved "
          f"rounds, medians in ms; matmul = the register-tiled kernels' share of a profiled call")
    print("| model | threads | unpacked | packed | packed / unpacked | packed / eager "
          "| matmul ms unpacked | matmul ms packed | constants MB (unpacked / packed) "
          "| build s | max rel. error | load |")
    print("| --- " * 12 + "|", flush=True)
    for name in (args.models.split(",") if args.models else DEFAULT):
        print(measure(name, args.rounds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
