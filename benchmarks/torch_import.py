"""What importing a PyTorch model costs as the model gets deeper (issue 12).

    python benchmarks/torch_import.py [--quick]

For a stack of Linear+Tanh layers and a stack of transformer encoder layers at 1x, 10x and
100x a lesson-sized depth, this times each stage of ``mlclab.from_torch`` on its own:
torch.export plus TVM's translation (``import``), mlclab's compile, ``fn.text("relax")``,
``fn.graph().svg()`` and one call. It prints a table and the growth of each stage per 10x
step; a step costing more than 30x is flagged as worse than linear. The stages run in this
process (a fresh one per model): a model that cannot be imported is reported, not fatal.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

STAGES = ["import", "compile", "text relax", "graph svg", "call"]
GROWTH_FLAG = 30
NOISE_FLOOR = 0.1      # seconds: below this, growth is timer noise


def model(shape: str, depth: int):
    import torch

    torch.manual_seed(0)
    if shape == "linear+tanh":
        layers = []
        for _ in range(depth):
            layers += [torch.nn.Linear(32, 32), torch.nn.Tanh()]
        return torch.nn.Sequential(*layers), torch.randn(8, 32)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                             dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False), \
        torch.randn(2, 8, 32)


def child(shape: str, depth: int) -> None:
    import mlclab
    from mlclab.api.build import Built
    from mlclab.frontend.pytorch import import_module

    net, x = model(shape, depth)
    times = {}
    start = time.perf_counter()
    imported = import_module(net, (x,))
    times["import"] = time.perf_counter() - start
    start = time.perf_counter()
    Built(imported.mod, {}, "llvm", None)
    times["compile"] = time.perf_counter() - start
    fn = mlclab.from_torch(net, x)
    start = time.perf_counter()
    fn.text("relax")
    times["text relax"] = time.perf_counter() - start
    start = time.perf_counter()
    fn.graph().svg()
    times["graph svg"] = time.perf_counter() - start
    arr = x.numpy()
    fn(arr)
    start = time.perf_counter()
    fn(arr)
    times["call"] = time.perf_counter() - start
    print(" ".join(f"{times[s]:.4f}" for s in STAGES), len(list(fn.bindings)), flush=True)


def measure(shape: str, depth: int, timeout: float):
    code = f"import sys; sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r}); " \
           f"import torch_import; torch_import.child({shape!r}, {depth})"
    try:
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f">{timeout:.0f}s"
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return None, (lines[-1] if lines else f"exit {out.returncode}")[:80]
    *values, bindings = out.stdout.split()
    return dict(zip(STAGES, map(float, values))), int(bindings)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1x and 10x only")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args(argv)
    plans = {"linear+tanh": [4, 40, 400], "transformer layers": [1, 10, 100]}
    print("from_torch, stage by stage (seconds); bindings = Relax bindings of the model")
    print(f"{'model':<20}{'depth':>6}{'bindings':>10}" + "".join(f"{s:>12}" for s in STAGES))
    flagged = []
    for shape, depths in plans.items():
        if args.quick:
            depths = depths[:2]
        rows = []
        for depth in depths:
            times, info = measure(shape, depth, args.timeout)
            if times is None:
                print(f"{shape:<20}{depth:>6}  failed: {info}")
                rows.append(None)
                continue
            rows.append(times)
            print(f"{shape:<20}{depth:>6}{info:>10}"
                  + "".join(f"{times[s]:>12.3f}" for s in STAGES))
        for (small, big), (d0, d1) in zip(zip(rows, rows[1:]), zip(depths, depths[1:])):
            if small is None or big is None:
                continue
            parts = []
            for s in STAGES:
                if big[s] < NOISE_FLOOR:
                    parts.append(f"{s} (under {NOISE_FLOOR} s)")
                    continue
                ratio = big[s] / max(small[s], 1e-9)
                mark = " FLAG" if ratio > GROWTH_FLAG else ""
                if mark:
                    flagged.append(f"{shape} {s} {d0}->{d1}")
                parts.append(f"{s} {ratio:.1f}x{mark}")
            print(f"  growth {d0}->{d1}: " + ", ".join(parts))
    print("worse than linear: " + (", ".join(flagged) if flagged else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
