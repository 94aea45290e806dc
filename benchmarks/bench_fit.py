"""Benchmark: one warm ``ppmlib.fit("poisson")`` at n = 1000 (4 chains x 1000 draws) per backend.

"Warm" means the compiled model is already cached; the first call of each backend, which may
compile, is run once and not timed. Backends without an installation are reported as skipped.
Run: ``.venv/bin/python benchmarks/bench_fit.py``.
"""
import os
import time

import ppmlib
from ppmlib import stan


def time_backend(name, y, repeat=3):
    os.environ["PPMLIB_BACKEND"] = name
    ppmlib.fit("poisson", y, seed=1)  # warm-up: compile or load from cache
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        fit = ppmlib.fit("poisson", y, seed=seed)
        _ = fit.log_lik
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    y = ppmlib.simulate.poisson(1000, 100, seed=1)
    available = {"cmdstanpy": stan.cmdstan_available(), "pystan": stan.pystan_available()}
    for name, ok in available.items():
        if not ok:
            print(f"{name:10s} skipped: not installed here")
            continue
        print(f"{name:10s} warm fit('poisson', n=1000, 4 x 1000 draws) incl. log_lik: {time_backend(name, y):.2f} s")


if __name__ == "__main__":
    main()
