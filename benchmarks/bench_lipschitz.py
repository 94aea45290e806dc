"""Benchmark: the LW weighting step, vectorised, against the authors' leave-one-out double loop.

The authors' R code (2020 paper, appendix) computes |sum_j f_j - sum_{j != i} f_j| for every draw s
and record i, re-summing all n records each time: O(S n^2). ppmlib uses the identity that the
difference is |f_i|: O(S n). Run: ``.venv/bin/python benchmarks/bench_lipschitz.py [S] [n]``.
"""
import sys
import time
from pathlib import Path

import numpy as np

import ppmlib
from _results import record
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the oracles live with the tests
from oracles.literal import literal_lw_weights  # the authors' R steps 1-4, line by line  # noqa: E402


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(S=1000, n=1000):
    rng = np.random.default_rng(0)
    y = rng.poisson(100, n)
    lam = rng.normal(100, 0.3, S)[:, None]
    from scipy.special import gammaln
    log_lik = y * np.log(lam) - lam - gammaln(y + 1.0)
    fast, w_fast = best_of(lambda: ppmlib.lw_weights(log_lik), 20)
    slow, w_slow = best_of(lambda: literal_lw_weights(log_lik), 1)
    np.testing.assert_allclose(w_fast, w_slow, atol=1e-9)  # same weights, up to summation rounding
    print(f"LW step, S = {S}, n = {n}")
    print(f"  authors' double loop (Python transcription): {slow:9.3f} s")
    print(f"  ppmlib.lw_weights (vectorised):              {fast * 1e3:9.3f} ms")
    print(f"  speed-up: {slow / fast:,.0f}x (target >= 1000x)")
    record("lipschitz", title="The LW step: ppmlib.lw_weights against the authors' leave-one-out double loop",
           rows=[{"S": S, "n": n, "authors' loop (s)": round(slow, 3), "ppmlib.lw_weights (ms)": round(fast * 1e3, 3),
                  "speed-up": round(slow / fast), "target": ">= 1000x"}])


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
