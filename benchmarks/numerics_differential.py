"""The long run of the numerics differential tester: many random programs, compiled strict,
against numpy bit for bit (tests/test_numerics_differential.py, ``-m slow``).

    python benchmarks/numerics_differential.py [--programs 5000]

A failure prints Hypothesis's smallest failing program; add it to that file's ``FOUND`` list.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=5000, help="random programs to try")
    args = parser.parse_args(argv)
    env = {**os.environ, "MLCLAB_DIFFERENTIAL_PROGRAMS": str(args.programs)}
    test = ROOT / "tests" / "test_numerics_differential.py"
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-m", "slow", "-p",
                            "no:cacheprovider", str(test)], cwd=ROOT, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
