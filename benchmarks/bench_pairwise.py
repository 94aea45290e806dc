"""Benchmark: the pairwise identification-risk score (risk-efficient weights) at n = 10^2 .. 10^4.

Scaled (ppmlib.mechanism.pairwise.pairwise_scores: per pattern, values sorted, prefix sums) against
the literal loops of the authors' R code (tests/oracles/literal.py, O(n^3 m), run
only at the smallest n). Writes benchmarks/results/bench_pairwise.csv with the machine, date, load
and command. Run: ``.venv/bin/python benchmarks/bench_pairwise.py``.
"""
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the oracles live with the tests
from oracles.literal import literal_pairwise_scores  # noqa: E402
from ppmlib.mechanism.pairwise import pairwise_scores

OUT = Path(__file__).resolve().parent / "results" / "bench_pairwise.csv"


def data(n: int, m: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.lognormal(10, 1, n)
    return y, y * np.exp(rng.normal(0, 0.2, (m, n))), rng.integers(0, 12, n)


def main(m: int = 20):
    rows = []
    for n in (100, 1_000, 10_000):
        y, z, keys = data(n, m)
        start = time.perf_counter()
        fast = pairwise_scores(y, z, 0.1, keys)
        seconds = time.perf_counter() - start
        literal = float("nan")
        if n <= 100:
            start = time.perf_counter()
            slow = literal_pairwise_scores(y, z, 0.1, keys)
            literal = time.perf_counter() - start
            assert np.abs(fast - slow).max() < 1e-12
        rows.append((n, m, seconds, literal))
        print(f"n = {n:>6}, m = {m}: scaled {seconds:.3f} s; literal {literal:.1f} s")
    load = os.getloadavg()
    header = (f"# machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores; "
              f"date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; load: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"command: python {' '.join(sys.argv)}\n")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(header + "n,m,scaled_seconds,literal_seconds\n" + "".join(f"{n},{m},{s:.4f},{l:.2f}\n" for n, m, s, l in rows))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
