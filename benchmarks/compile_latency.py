"""Compile latency: the seed program compiled afresh, a cache hit, and `import mlclab`.

    python benchmarks/compile_latency.py [--runs N]

Targets on a 2-core machine: compile median <= 150 ms, cache hit <= 10 ms,
`import mlclab` <= 1.5 s.
"""
import argparse
import statistics
import subprocess
import sys
import time

SEED = """
def seed_{i}(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32], c: Tensor[(2, 4), f32]):
    d = a @ b
    e = d + c
    return e
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()

    imports = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", "import time; t = time.perf_counter(); "
                              "import mlclab; print(time.perf_counter() - t)"],
                             capture_output=True, text=True, check=True)
        imports.append(float(out.stdout))

    import mlclab

    mlclab.compile(SEED.format(i="warmup"))     # TVM's own import and first-use costs
    fresh, hits = [], []
    for i in range(args.runs):
        src = SEED.format(i=i)                 # a new name: a new source, a cache miss
        t = time.perf_counter()
        mlclab.compile(src)
        fresh.append(time.perf_counter() - t)
        t = time.perf_counter()
        mlclab.compile(src)
        hits.append(time.perf_counter() - t)

    rows = [("compile seed program (fresh source)", statistics.median(fresh), 0.150),
            ("compile again (cache hit)", statistics.median(hits), 0.010),
            ("import mlclab (fresh process)", statistics.median(imports), 1.5)]
    print(f"{'what':40s} {'median':>12s} {'target':>10s}")
    for name, value, target in rows:
        mark = "ok" if value <= target else "OVER"
        print(f"{name:40s} {value * 1000:10.2f}ms {target * 1000:8.0f}ms  {mark}")


if __name__ == "__main__":
    main()
